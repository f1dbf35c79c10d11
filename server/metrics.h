/* metrics.h — a minimal HTTP/1.1 endpoint on the libuv loop serving Prometheus text at /metrics.
 * One request per connection; the loop thread renders the page through the callback. */
#ifndef SRV_METRICS_H
#define SRV_METRICS_H

#include <stdint.h>
#include <uv.h>

typedef char *(*metrics_render_fn)(void *arg); /* malloc'd page */
typedef struct metrics_http metrics_http;

/* Listens on "HOST:PORT" (port 0 picks one; *port gets it). At most max_conns connections at a
 * time: a new one closes the oldest that has not sent its request yet (so idle connections cannot
 * keep a scrape out), else it is closed at once; a connection without a full request after idle_ms
 * is closed.
 * NULL with a message in err (size n). */
metrics_http *metrics_http_start(uv_loop_t *loop, const char *listen, uint64_t max_conns, uint64_t idle_ms,
                                 metrics_render_fn fn, void *arg, int *port, char *err, size_t n);
/* Closes the listener and open connections; `done` runs once everything is closed. */
void metrics_http_close(metrics_http *m, void (*done)(void *), void *arg);

#endif
