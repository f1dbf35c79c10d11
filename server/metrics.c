/* metrics.c — Prometheus text over a tiny libuv HTTP server (see metrics.h). */
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listener.h"

typedef struct conn {
  uv_tcp_t tcp;
  uv_timer_t idle; /* closes a connection that sent no full request in time */
  int handles;     /* tcp + idle still to close */
  uv_write_t wr;
  struct metrics_http *m;
  char req[4096];
  size_t len;
  char *resp;
  int responded;
  struct conn *prev, *next;
} conn;

struct metrics_http {
  uv_tcp_t server;
  metrics_render_fn fn;
  void *arg;
  conn *conns;
  uint64_t nconns, max_conns, idle_ms;
  int pending_closes; /* server + connections being closed */
  int closing;
  void (*done)(void *);
  void *done_arg;
};

static void maybe_done(metrics_http *m) {
  if (m->closing && m->pending_closes == 0 && !m->conns) {
    void (*done)(void *) = m->done;
    void *arg = m->done_arg;
    free(m);
    if (done)
      done(arg);
  }
}

static void on_conn_closed(uv_handle_t *h) {
  conn *c = h->data;
  if (--c->handles > 0)
    return;
  metrics_http *m = c->m;
  m->nconns--;
  if (c->prev)
    c->prev->next = c->next;
  else
    m->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  free(c->resp);
  free(c);
  m->pending_closes--;
  maybe_done(m);
}

static void conn_close(conn *c) {
  if (uv_is_closing((uv_handle_t *)&c->tcp))
    return;
  c->m->pending_closes++;
  uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
  uv_close((uv_handle_t *)&c->idle, on_conn_closed);
}

static void on_idle(uv_timer_t *t) { conn_close(t->data); }

static void on_written(uv_write_t *w, int status) {
  (void)status;
  conn_close(w->data);
}

static void respond(conn *c, int code, const char *reason, const char *ctype, const char *body) {
  size_t blen = strlen(body);
  size_t n = blen + 256;
  c->resp = malloc(n);
  if (!c->resp) {
    conn_close(c);
    return;
  }
  int k = snprintf(c->resp, n,
                   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", code,
                   reason, ctype, blen);
  memcpy(c->resp + k, body, blen);
  uv_buf_t b = uv_buf_init(c->resp, (unsigned)(k + blen));
  c->responded = 1;
  c->wr.data = c;
  uv_read_stop((uv_stream_t *)&c->tcp);
  if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_written))
    conn_close(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  conn *c = h->data;
  *buf = uv_buf_init(c->req + c->len, (unsigned)(sizeof c->req - 1 - c->len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  conn *c = s->data;
  if (nread < 0) {
    conn_close(c);
    return;
  }
  c->len += (size_t)nread;
  c->req[c->len] = '\0';
  if (c->responded)
    return;
  if (!strstr(c->req, "\r\n\r\n") && !strstr(c->req, "\n\n")) {
    if (c->len >= sizeof c->req - 1)
      respond(c, 431, "Request Header Fields Too Large", "text/plain", "request too large\n");
    return;
  }
  if (strncmp(c->req, "GET /metrics ", 13) == 0 || strncmp(c->req, "GET /metrics?", 13) == 0) {
    char *page = c->m->fn(c->m->arg);
    if (page)
      respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", page);
    else
      respond(c, 500, "Internal Server Error", "text/plain", "out of memory\n");
    free(page);
  } else if (strncmp(c->req, "GET ", 4) == 0) {
    respond(c, 404, "Not Found", "text/plain", "shardcheckd serves only /metrics\n");
  } else {
    respond(c, 405, "Method Not Allowed", "text/plain", "GET only\n");
  }
}

/* Connections not being closed. */
static uint64_t open_conns(const metrics_http *m) {
  uint64_t n = 0;
  for (const conn *c = m->conns; c; c = c->next)
    n += !uv_is_closing((const uv_handle_t *)&c->tcp);
  return n;
}

/* Closes the oldest connection (the list is newest first) that has not sent a request, other than keep. */
static void evict_oldest_idle(metrics_http *m, conn *keep) {
  conn *oldest = NULL;
  for (conn *c = m->conns; c; c = c->next)
    if (c != keep && !c->responded && !uv_is_closing((uv_handle_t *)&c->tcp))
      oldest = c;
  if (oldest) {
    conn_close(oldest);
  }
}

static void on_connection(uv_stream_t *server, int status) {
  metrics_http *m = server->data;
  if (status < 0 || m->closing)
    return;
  conn *c = calloc(1, sizeof *c);
  if (!c)
    return;
  c->m = m;
  c->handles = 2;
  uv_tcp_init(server->loop, &c->tcp);
  c->tcp.data = c;
  uv_timer_init(server->loop, &c->idle);
  c->idle.data = c;
  m->nconns++;
  c->next = m->conns;
  if (m->conns)
    m->conns->prev = c;
  m->conns = c;
  /* Over the cap the oldest connection still waiting for its request makes room: idle
   * connections cannot keep a scrape out (a scraper sends its request at once). */
  if (open_conns(m) > m->max_conns)
    evict_oldest_idle(m, c);
  if (uv_accept(server, (uv_stream_t *)&c->tcp) || open_conns(m) > m->max_conns ||
      uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read))
    conn_close(c);
  else
    uv_timer_start(&c->idle, on_idle, m->idle_ms, 0);
}

metrics_http *metrics_http_start(uv_loop_t *loop, const char *listen, uint64_t max_conns, uint64_t idle_ms,
                                 metrics_render_fn fn, void *arg, int *port, char *err, size_t n) {
  char host[256];
  int p;
  struct sockaddr_storage ss;
  if (net_split_hostport(listen, host, sizeof host, &p)) {
    snprintf(err, n, "metrics_listen: expected HOST:PORT, got \"%s\"", listen);
    return NULL;
  }
  if (strcmp(host, "localhost") == 0)
    snprintf(host, sizeof host, "127.0.0.1");
  if (uv_ip4_addr(host, p, (struct sockaddr_in *)&ss) && uv_ip6_addr(host, p, (struct sockaddr_in6 *)&ss)) {
    snprintf(err, n, "metrics_listen: \"%s\" is not an IP address", host);
    return NULL;
  }
  metrics_http *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, n, "out of memory");
    return NULL;
  }
  m->fn = fn;
  m->arg = arg;
  m->max_conns = max_conns;
  m->idle_ms = idle_ms;
  uv_tcp_init(loop, &m->server);
  m->server.data = m;
  int rc = uv_tcp_bind(&m->server, (struct sockaddr *)&ss, 0);
  if (!rc)
    rc = uv_listen((uv_stream_t *)&m->server, 64, on_connection);
  if (rc) {
    snprintf(err, n, "metrics_listen %s: %s", listen, uv_strerror(rc));
    metrics_http_close(m, NULL, NULL);
    return NULL;
  }
  struct sockaddr_storage bound;
  int len = sizeof bound;
  uv_tcp_getsockname(&m->server, (struct sockaddr *)&bound, &len);
  *port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                            : ((struct sockaddr_in *)&bound)->sin_port);
  return m;
}

static void on_server_closed(uv_handle_t *h) {
  metrics_http *m = h->data;
  m->pending_closes--;
  maybe_done(m);
}

void metrics_http_close(metrics_http *m, void (*done)(void *), void *arg) {
  m->closing = 1;
  m->done = done;
  m->done_arg = arg;
  for (conn *c = m->conns; c; c = c->next)
    conn_close(c);
  m->pending_closes++;
  uv_close((uv_handle_t *)&m->server, on_server_closed);
}
