/* listener.h — shardcheckd's own plaintext TCP listener in front of gRPC core.
 *
 * gRPC core 1.51 stops its listener for good after one failed accept4 (EMFILE) and has no
 * connection cap. So for plaintext the daemon accepts connections itself on the libuv loop:
 *   - at most `max_conns` connections at a time (open accepted sockets, counted by fd + inode),
 *     and at most `max_per_peer` from one IP address; beyond that a new connection is closed at
 *     once (the client sees UNAVAILABLE);
 *   - on EMFILE/ENFILE a reserved descriptor is released to accept and close the waiting
 *     connection, so the listener keeps accepting once descriptors are free again;
 *   - a connection must send the whole HTTP/2 client preface and the header of its first frame
 *     within `handshake_ms`, else it is closed without ever reaching gRPC (a client trickling the
 *     preface byte by byte holds no slot for longer; SO_RCVLOWAT keeps the loop from waking for
 *     each byte); what is not the HTTP/2 preface is closed at once;
 * then the socket is handed to gRPC core (grpc_server_add_channel_from_fd), where the server's
 * channel args (idle, age, keepalive, stream limits) apply. Loop thread only. */
#ifndef SRV_LISTENER_H
#define SRV_LISTENER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

typedef struct listener listener;
/* Called on the loop thread with a connected socket the callee now owns. */
typedef void (*listener_handoff_fn)(int fd, void *arg);

typedef struct {
  uint64_t max_conns;
  uint64_t max_per_peer; /* 0 = no per-address cap (behind a front, every connection is the front's) */
  uint64_t handshake_ms;
} listener_limits;

typedef struct {
  uint64_t open, accepted, refused_cap, refused_peer, refused_fds, handshake_timeouts, bad_preface;
} listener_stats;

/* Binds and listens on "HOST:PORT" (port 0 picks one; *port gets it). NULL with a malloc'd *err. */
listener *listener_start(uv_loop_t *loop, const char *hostport, const listener_limits *lim, listener_handoff_fn fn,
                         void *arg, int *port, char **err);
/* Stops accepting and closes connections still waiting for their first bytes; frees itself once
 * its handles are closed. */
void listener_close(listener *l);
void listener_get_stats(listener *l, listener_stats *out);
/* "ipv4:1.2.3.4:5678" of a connection handed off as `fd` (gRPC calls it "fd:N"), or NULL. */
const char *listener_peer(listener *l, int fd);

/* Splits "HOST:PORT" / "[v6]:PORT" (port 0..65535). 0, or -1 if malformed. */
int net_split_hostport(const char *s, char *host, size_t n, int *port);
/* true for 127.0.0.0/8, ::1, "localhost" and unix: addresses. */
bool net_is_loopback(const char *hostport);

#endif
