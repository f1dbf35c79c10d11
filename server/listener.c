/* listener.c — the plaintext listener: accept, cap, first-bytes timeout, hand off (see listener.h). */
#define _GNU_SOURCE /* accept4 */
#include "listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "log.h"

#define ACCEPTS_PER_WAKEUP 64
#define SWEEP_MS 1000
/* What a connection must send before gRPC sees it: the client preface and a frame header (its SETTINGS). */
static const char PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define PREFACE_LEN 24
#define FIRST_BYTES (PREFACE_LEN + 9)

/* A connection we accepted: waiting for its first bytes (pending), then owned by gRPC. */
typedef struct {
  ino_t ino; /* 0 = slot unused */
  char peer[64];
  char ip[48]; /* the per-address count it is in */
} conn_slot;

typedef struct pending {
  uv_poll_t poll;
  uv_timer_t timer;
  listener *l;
  int fd;
  bool handoff;
  int closing;
  struct pending *prev, *next;
} pending;

struct listener {
  uv_loop_t *loop;
  int fd, reserve_fd;
  uv_poll_t poll;
  uv_timer_t sweep;
  uv_timer_t resume; /* accepting paused: out of descriptors and no reserve left */
  listener_limits lim;
  listener_handoff_fn fn;
  void *arg;
  conn_slot *slots;
  size_t nslots;
  uint64_t open;
  int64_t last_sweep_ms;
  listener_stats st;
  pending *pendings;
  budget *per_peer; /* connections per IP address (a budget of slots); NULL = no cap */
  int refs; /* after close: handles + pending connections not yet released */
  bool closed;
};

static void listener_unref(listener *l);

int net_split_hostport(const char *s, char *host, size_t n, int *port) {
  const char *colon = strrchr(s, ':');
  if (!colon)
    return -1;
  const char *h = s;
  size_t hl = (size_t)(colon - s);
  if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
    h++;
    hl -= 2;
  }
  if (hl >= n)
    return -1;
  memcpy(host, h, hl);
  host[hl] = '\0';
  char *end;
  long p = strtol(colon + 1, &end, 10);
  if (*end || end == colon + 1 || p < 0 || p > 65535)
    return -1;
  *port = (int)p;
  return 0;
}

bool net_is_loopback(const char *hostport) {
  if (strncmp(hostport, "unix:", 5) == 0 || strncmp(hostport, "unix-abstract:", 14) == 0)
    return true;
  char host[256];
  int port;
  if (net_split_hostport(hostport, host, sizeof host, &port))
    return false;
  struct in_addr a4;
  struct in6_addr a6;
  if (strcmp(host, "localhost") == 0)
    return true;
  if (inet_pton(AF_INET, host, &a4) == 1)
    return (ntohl(a4.s_addr) >> 24) == 127;
  return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

static int64_t now_ms(const listener *l) { return (int64_t)uv_now(l->loop); }

static conn_slot *slot_of(listener *l, int fd, bool grow) {
  if ((size_t)fd >= l->nslots) {
    if (!grow)
      return NULL;
    size_t n = l->nslots ? l->nslots : 256;
    while (n <= (size_t)fd)
      n *= 2;
    conn_slot *s = realloc(l->slots, n * sizeof *s);
    if (!s)
      return NULL;
    memset(s + l->nslots, 0, (n - l->nslots) * sizeof *s);
    l->slots = s;
    l->nslots = n;
  }
  return &l->slots[fd];
}

/* The address of a peer as text; *port gets its port. */
static void peer_ip(const struct sockaddr_storage *ss, char ip[INET6_ADDRSTRLEN], int *port) {
  snprintf(ip, INET6_ADDRSTRLEN, "?");
  *port = 0;
  if (ss->ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, ip, INET6_ADDRSTRLEN);
    *port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
  } else if (ss->ss_family == AF_INET) {
    inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, ip, INET6_ADDRSTRLEN);
    *port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
  }
}

static void untrack(listener *l, int fd) {
  conn_slot *s = slot_of(l, fd, false);
  if (s && s->ino) {
    s->ino = 0;
    l->open--;
    if (l->per_peer)
      budget_release(l->per_peer, s->ip, 1);
  }
}

/* Counts the connection fd (already charged to its address's count). */
static void track(listener *l, int fd, const struct sockaddr_storage *ss) {
  struct stat st;
  conn_slot *s = slot_of(l, fd, true);
  char ip[INET6_ADDRSTRLEN];
  int port;
  peer_ip(ss, ip, &port);
  if (!s || fstat(fd, &st) != 0) {
    if (l->per_peer)
      budget_release(l->per_peer, ip, 1);
    return;
  }
  if (s->ino) /* gRPC closed the connection this descriptor was, and the sweep has not seen it yet */
    untrack(l, fd);
  l->open++;
  s->ino = st.st_ino;
  snprintf(s->ip, sizeof s->ip, "%s", ip);
  snprintf(s->peer, sizeof s->peer, "%s:%s:%d", ss->ss_family == AF_INET6 ? "ipv6" : "ipv4", ip, port);
}

/* Connections gRPC closed: their descriptor is gone or now names another file. */
static void sweep(listener *l) {
  l->last_sweep_ms = now_ms(l);
  for (size_t fd = 0; fd < l->nslots; fd++) {
    if (!l->slots[fd].ino)
      continue;
    struct stat st;
    if (fstat((int)fd, &st) != 0 || st.st_ino != l->slots[fd].ino)
      untrack(l, (int)fd);
  }
}

static void on_sweep(uv_timer_t *t) { sweep(t->data); }

static void on_pending_closed(uv_handle_t *h) {
  pending *p = h->data;
  if (--p->closing > 0)
    return;
  listener *l = p->l;
  if (p->prev)
    p->prev->next = p->next;
  else
    l->pendings = p->next;
  if (p->next)
    p->next->prev = p->prev;
  if (p->handoff && !l->closed) {
    l->fn(p->fd, l->arg); /* the poll handle is gone, so libuv no longer watches the fd */
  } else {
    untrack(l, p->fd);
    close(p->fd);
  }
  free(p);
  if (l->closed)
    listener_unref(l);
}

static void pending_end(pending *p, bool handoff) {
  if (p->closing)
    return;
  p->handoff = handoff;
  p->closing = 2;
  uv_close((uv_handle_t *)&p->poll, on_pending_closed);
  uv_close((uv_handle_t *)&p->timer, on_pending_closed);
}

/* Readable: SO_RCVLOWAT makes that FIRST_BYTES bytes, or the end of the connection. Hands the
 * connection to gRPC if it starts with the HTTP/2 client preface; closes it otherwise. */
static void on_first_bytes(uv_poll_t *h, int status, int events) {
  (void)events;
  pending *p = h->data;
  char buf[FIRST_BYTES];
  ssize_t n = status == 0 ? recv(p->fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT) : -1;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return; /* woken early: wait for the rest */
  bool ok = n == FIRST_BYTES && memcmp(buf, PREFACE, PREFACE_LEN) == 0;
  if (n == FIRST_BYTES && !ok)
    p->l->st.bad_preface++;
  int one = 1;
  if (ok) /* gRPC must see every byte as it arrives */
    setsockopt(p->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
  pending_end(p, ok);
}

static void on_handshake_timeout(uv_timer_t *t) {
  pending *p = t->data;
  p->l->st.handshake_timeouts++;
  pending_end(p, false);
}

static void on_listen_readable(uv_poll_t *h, int status, int events);

static void on_resume(uv_timer_t *t) {
  listener *l = t->data;
  if (l->reserve_fd < 0)
    l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  uv_poll_start(&l->poll, UV_READABLE, on_listen_readable);
}

/* The process is out of descriptors: accept with the reserved one and close at once, so the
 * client is refused instead of left waiting in the backlog. Without a reserve, pause for a moment
 * rather than spin on a listener that stays readable. Returns false when paused. */
static bool refuse_without_fds(listener *l) {
  l->st.refused_fds++;
  if (l->reserve_fd >= 0) {
    close(l->reserve_fd);
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0)
      close(fd);
    l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return true;
  }
  uv_poll_stop(&l->poll);
  uv_timer_start(&l->resume, on_resume, 100, 0);
  return false;
}

/* Counts a new connection against its address's cap; false when the address is at the cap. */
static bool charge_peer(listener *l, const struct sockaddr_storage *ss) {
  char ip[INET6_ADDRSTRLEN];
  int port;
  peer_ip(ss, ip, &port);
  if (budget_charge(l->per_peer, ip, 1) == BUDGET_OK)
    return true;
  if (now_ms(l) - l->last_sweep_ms < 50)
    return false;
  sweep(l); /* connections of this address gRPC closed may not be counted off yet */
  return budget_charge(l->per_peer, ip, 1) == BUDGET_OK;
}

static void accept_one(listener *l, int fd, const struct sockaddr_storage *ss) {
  if (l->open >= l->lim.max_conns && now_ms(l) - l->last_sweep_ms >= 50)
    sweep(l);
  if (l->open >= l->lim.max_conns) {
    l->st.refused_cap++;
    close(fd);
    return;
  }
  if (l->per_peer && !charge_peer(l, ss)) {
    l->st.refused_peer++;
    close(fd);
    return;
  }
  int lowat = FIRST_BYTES; /* wake up once the preface is complete, not per byte */
  setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat);
  track(l, fd, ss);
  pending *p = calloc(1, sizeof *p);
  if (!p || uv_poll_init(l->loop, &p->poll, fd) != 0) {
    free(p);
    untrack(l, fd);
    close(fd);
    return;
  }
  l->st.accepted++;
  p->next = l->pendings;
  if (l->pendings)
    l->pendings->prev = p;
  l->pendings = p;
  p->l = l;
  p->fd = fd;
  p->poll.data = p;
  uv_timer_init(l->loop, &p->timer);
  p->timer.data = p;
  uv_poll_start(&p->poll, UV_READABLE | UV_DISCONNECT, on_first_bytes);
  uv_timer_start(&p->timer, on_handshake_timeout, l->lim.handshake_ms, 0);
}

static void on_listen_readable(uv_poll_t *h, int status, int events) {
  (void)events;
  listener *l = h->data;
  if (status < 0) {
    log_msg(LOG_ERROR, "listener: poll error %s", uv_strerror(status));
    return;
  }
  for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      accept_one(l, fd, &ss);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED)
      continue;
    if (errno == EMFILE || errno == ENFILE) {
      if (refuse_without_fds(l))
        continue;
      return;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      log_msg(LOG_WARN, "listener: accept4: %s", strerror(errno));
    return;
  }
}

listener *listener_start(uv_loop_t *loop, const char *hostport, const listener_limits *lim, listener_handoff_fn fn,
                         void *arg, int *port, char **err) {
  char host[256], buf[512];
  int p;
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  if (net_split_hostport(hostport, host, sizeof host, &p)) {
    snprintf(buf, sizeof buf, "listen: expected HOST:PORT, got \"%s\"", hostport);
    *err = strdup(buf);
    return NULL;
  }
  if (strcmp(host, "localhost") == 0 || host[0] == '\0')
    snprintf(host, sizeof host, "%s", host[0] ? "127.0.0.1" : "0.0.0.0");
  if (uv_ip4_addr(host, p, (struct sockaddr_in *)&ss) && uv_ip6_addr(host, p, (struct sockaddr_in6 *)&ss)) {
    snprintf(buf, sizeof buf, "listen: \"%s\" is not an IP address", host);
    *err = strdup(buf);
    return NULL;
  }
  listener *l = calloc(1, sizeof *l);
  if (!l) {
    *err = strdup("out of memory");
    return NULL;
  }
  l->loop = loop;
  l->lim = *lim;
  l->fn = fn;
  l->arg = arg;
  l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  socklen_t alen = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  if (l->fd < 0 || setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(l->fd, (struct sockaddr *)&ss, alen) != 0 || listen(l->fd, 1024) != 0) {
    snprintf(buf, sizeof buf, "cannot listen on %s: %s", hostport, strerror(errno));
    *err = strdup(buf);
    if (l->fd >= 0)
      close(l->fd);
    free(l);
    return NULL;
  }
  struct sockaddr_storage bound;
  socklen_t blen = sizeof bound;
  getsockname(l->fd, (struct sockaddr *)&bound, &blen);
  *port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                            : ((struct sockaddr_in *)&bound)->sin_port);
  l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (lim->max_per_peer && (l->per_peer = budget_new()) != NULL)
    budget_set_limits(l->per_peer, UINT64_MAX, lim->max_per_peer);
  uv_poll_init(loop, &l->poll, l->fd);
  l->poll.data = l;
  uv_poll_start(&l->poll, UV_READABLE, on_listen_readable);
  uv_timer_init(loop, &l->sweep);
  l->sweep.data = l;
  uv_timer_start(&l->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
  uv_timer_init(loop, &l->resume);
  l->resume.data = l;
  return l;
}

static void listener_unref(listener *l) {
  if (--l->refs > 0)
    return;
  close(l->fd);
  if (l->reserve_fd >= 0)
    close(l->reserve_fd);
  free(l->slots);
  budget_free(l->per_peer);
  free(l);
}

static void on_listener_handle_closed(uv_handle_t *h) { listener_unref(h->data); }

void listener_close(listener *l) {
  if (!l || l->closed)
    return;
  l->closed = true;
  l->refs = 3;
  /* Connections still waiting for their first bytes are closed (on_pending_closed sees l->closed). */
  for (pending *p = l->pendings; p; p = p->next) {
    l->refs++;
    if (!p->closing)
      pending_end(p, false);
  }
  uv_close((uv_handle_t *)&l->poll, on_listener_handle_closed);
  uv_close((uv_handle_t *)&l->sweep, on_listener_handle_closed);
  uv_close((uv_handle_t *)&l->resume, on_listener_handle_closed);
}

void listener_get_stats(listener *l, listener_stats *out) {
  *out = l->st;
  out->open = l->open;
}

const char *listener_peer(listener *l, int fd) {
  conn_slot *s = l && fd >= 0 ? slot_of(l, fd, false) : NULL;
  return s && s->ino ? s->peer : NULL;
}
