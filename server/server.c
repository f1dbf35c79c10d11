/* server.c — gRPC core server, completion-queue thread, libuv loop and worker pool (see server.h);
 * the records it works on, grouped by owner thread, are in server_state.h; one call's life (below)
 * in calls.c; the metrics page in metrics_text.c. This file: the method table, the CQ thread and the
 * hand-off to the loop, the server's life cycle (srv_new .. srv_free), settings and the sweep timer.
 *
 * Call life cycle (all transitions on the loop thread):
 *   ST_REQ ── new call ──► accept: start RECV_CLOSE_ON_SERVER, then by method kind
 *     unary (cheap)   handler inline ─────────────────────────────► finish
 *     Check           bound check ─► ST_WORK (pool) ─► after_work ─► finish
 *     CheckStream     ST_RECV ⟲ (append chunks) ─► ST_WORK ─► finish
 *     Health.Watch    ST_SEND ─► ST_IDLE ⟲ (status changes) ─► finish when draining
 *     Reflection      ST_RECV ─► ST_SEND ─► ST_RECV ... ─► finish when the client half-closes
 *   finish: SEND_INITIAL_METADATA? + SEND_MESSAGE? + SEND_STATUS ─► ST_FINISH ─► ST_DONE
 * A call is freed when it is ST_DONE with no batch and no work outstanding. */
#include "server.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "grpc/health/v1/health.pb-c.h"
#include "log.h"
#include "server_state.h"

#include "shardcheck.h"

/* --- method table ------------------------------------------------------------------------------ */

const method srv_methods[M__COUNT] = {
    [M_CHECK] = {"/shardcheck.v1.ShardCheck/Check", "Check", MK_CHECK, true},
    [M_CHECK_STREAM] = {"/shardcheck.v1.ShardCheck/CheckStream", "CheckStream", MK_CHECK_STREAM, false},
    [M_LIST_RULES] = {"/shardcheck.v1.ShardCheck/ListRules", "ListRules", MK_UNARY, true},
    [M_EXPLAIN] = {"/shardcheck.v1.ShardCheck/Explain", "Explain", MK_UNARY, true},
    [M_CAPS] = {"/shardcheck.v1.ShardCheck/GetCapabilities", "GetCapabilities", MK_UNARY, true},
    [M_PROPAGATE] = {"/shardcheck.v1.ShardCheck/Propagate", "Propagate", MK_CHECK, true},
    [M_HEALTH_CHECK] = {"/grpc.health.v1.Health/Check", "Health.Check", MK_UNARY, true},
    [M_HEALTH_WATCH] = {"/grpc.health.v1.Health/Watch", "Health.Watch", MK_WATCH, true},
    [M_REFL_V1] = {"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "ServerReflectionInfo.v1", MK_REFLECT,
                   false},
    [M_REFL_V1ALPHA] = {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                        "ServerReflectionInfo.v1alpha", MK_REFLECT, false},
    [M_GENERIC] = {NULL, "unknown", MK_GENERIC, false},
};

const char *const srv_status_names[NSTATUS] = {
    "OK",        "CANCELLED",          "UNKNOWN",   "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED",  "INTERNAL",  "UNAVAILABLE",      "DATA_LOSS",         "UNAUTHENTICATED"};

const double srv_hist_bounds[NBUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

static void request_call(srv *s, method_id mid);

/* --- completion-queue thread ------------------------------------------------------------------- */

static void fifo_push(srv *s, ev *e) {
  e->next = NULL;
  pthread_mutex_lock(&s->handoff.mu);
  if (s->handoff.tail)
    s->handoff.tail->next = e;
  else
    s->handoff.head = e;
  s->handoff.tail = e;
  pthread_mutex_unlock(&s->handoff.mu);
  uv_async_send(&s->io.async);
}

static void cq_thread_main(void *arg) {
  srv *s = arg;
  for (;;) {
    grpc_event e = grpc_completion_queue_next(s->io.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (e.type == GRPC_QUEUE_SHUTDOWN)
      break;
    if (e.type != GRPC_OP_COMPLETE)
      continue;
    ev *v = e.tag;
    v->ok = e.success;
    /* A new call: keep a request armed for its method before handing it over. Only the CQ thread
     * and (before start) the loop read `kind` while it is EV_REQUEST. */
    if (v->kind == EV_REQUEST && e.success && !atomic_load(&s->handoff.stopping))
      request_call(s, ((call *)v)->mid);
    fifo_push(s, v);
  }
  fifo_push(s, &s->io.cq_exit_ev);
}

static void on_async(uv_async_t *a) {
  srv *s = a->data;
  pthread_mutex_lock(&s->handoff.mu);
  ev *e = s->handoff.head;
  s->handoff.head = s->handoff.tail = NULL;
  pthread_mutex_unlock(&s->handoff.mu);
  while (e) { /* uv_async_send coalesces: drain everything */
    ev *next = e->next;
    srv_on_event(s, e);
    e = next;
  }
}

/* Arms one call request (thread-safe: called from the loop before start and from the CQ thread). */
static void request_call(srv *s, method_id mid) {
  call *c = calloc(1, sizeof *c);
  if (!c) {
    log_msg(LOG_ERROR, "out of memory arming a call request");
    return;
  }
  c->ev.kind = EV_REQUEST;
  c->close_ev.kind = EV_CLOSE;
  c->s = s;
  c->mid = mid;
  c->state = ST_REQ;
  grpc_metadata_array_init(&c->md);
  grpc_call_error err;
  if (mid == M_GENERIC) {
    grpc_call_details_init(&c->details);
    err = grpc_server_request_call(s->io.server, &c->call, &c->details, &c->md, s->io.cq, s->io.cq, &c->ev);
  } else {
    err = grpc_server_request_registered_call(s->io.server, s->io.reg[mid], &c->call, &c->deadline, &c->md,
                                              srv_methods[mid].payload ? &c->recv_bb : NULL, s->io.cq, s->io.cq, &c->ev);
  }
  if (err != GRPC_CALL_OK) {
    if (!atomic_load(&s->handoff.stopping))
      log_msg(LOG_ERROR, "grpc_server_request_call(%s) failed: %d", srv_methods[mid].name, (int)err);
    grpc_metadata_array_destroy(&c->md);
    if (mid == M_GENERIC)
      grpc_call_details_destroy(&c->details);
    free(c);
  }
}

/* --- life cycle --------------------------------------------------------------------------------- */

static char *read_file(const char *path, char **err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    char buf[512];
    snprintf(buf, sizeof buf, "cannot read %s", path);
    *err = strdup(buf);
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  for (size_t k; b && (k = fread(b + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (n + 1 == cap) {
      char *nb = realloc(b, cap *= 2);
      if (!nb) {
        free(b);
        b = NULL;
      } else
        b = nb;
    }
  }
  fclose(f);
  if (b)
    b[n] = '\0';
  else
    *err = strdup("out of memory");
  return b;
}

static grpc_server_credentials *server_creds(const srv_config *cfg, char **err) {
  if (!cfg->tls_cert[0])
    return grpc_insecure_server_credentials_create();
  char *cert = read_file(cfg->tls_cert, err);
  char *key = cert ? read_file(cfg->tls_key, err) : NULL;
  char *ca = key && cfg->tls_client_ca[0] ? read_file(cfg->tls_client_ca, err) : NULL;
  grpc_server_credentials *creds = NULL;
  if (cert && key && (!cfg->tls_client_ca[0] || ca)) {
    grpc_ssl_pem_key_cert_pair pair = {key, cert};
    creds = grpc_ssl_server_credentials_create_ex(
        ca, &pair, 1, ca ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
        NULL);
    if (!creds)
      *err = strdup("cannot create TLS credentials (check tls.cert / tls.key)");
  }
  free(cert);
  free(key);
  free(ca);
  return creds;
}

/* Every 100 ms on the loop: streams waiting too long for a message (or open too long) are ended
 * with DEADLINE_EXCEEDED; a broken gRPC listener turns health NOT_SERVING. */
#define SWEEP_MS 100

/* An answer the client does not read (a zero HTTP/2 window) would hold its memory for as long as the
 * connection lives: after send_timeout_ms the call is cancelled and gRPC drops what it buffered. */
static void cancel_unread_answers(srv *s, int64_t now) {
  for (call *c = s->st.live; c; c = c->live_next) {
    if ((c->state != ST_SEND && c->state != ST_FINISH) || !c->main_pending || !c->call || c->send_ns == 0 ||
        (uint64_t)(now - c->send_ns) <= s->set.send_timeout_ms * 1000000)
      continue;
    s->m.send_timeouts++;
    c->send_ns = 0; /* once */
    grpc_call_cancel_with_status(c->call, GRPC_STATUS_DEADLINE_EXCEEDED, "the answer was not read within send_timeout_ms",
                                 NULL);
  }
}

/* A Health.Watch keeps its connection from ever being idle: after watch_max_ms it ends (OK), and a
 * real watcher watches again. */
static void end_old_watches(srv *s, int64_t now) {
  for (call *c = s->st.live; c; c = c->live_next)
    if (c->mid == M_HEALTH_WATCH && c->state == ST_IDLE && !c->finished &&
        (uint64_t)(now - c->accepted_ns) > s->set.watch_max_ms * 1000000) {
      s->m.watch_expired++;
      srv_finish(c, GRPC_STATUS_OK, "Health.Watch lifetime over (watch_max_ms): watch again", NULL, 0);
    }
}

/* Calls without a request message that were not cancelled within MISSING_WAIT_MS: INVALID_ARGUMENT. */
static void answer_missing_requests(srv *s, int64_t now) {
  for (call *c = s->st.live; c; c = c->live_next)
    if (c->missing_ns && c->state == ST_IDLE && !c->finished &&
        now - c->missing_ns > (int64_t)MISSING_WAIT_MS * 1000000)
      srv_finish(c, GRPC_STATUS_INVALID_ARGUMENT, c->missing_msg, NULL, 0);
}

static void on_sweep(uv_timer_t *t) {
  srv *s = t->data;
  int64_t now = now_ns();
  for (call *c = s->st.live; c; c = c->live_next) {
    if (c->state != ST_RECV || c->finished || c->timeout_msg[0] || !c->call)
      continue;
    if ((uint64_t)(now - c->last_msg_ns) > s->set.stream_msg_timeout_ms * 1000000)
      snprintf(c->timeout_msg, sizeof c->timeout_msg, "no message for %llu ms (stream_message_timeout_ms=%llu)",
               (unsigned long long)((now - c->last_msg_ns) / 1000000), (unsigned long long)s->set.stream_msg_timeout_ms);
    else if (c->mid == M_CHECK_STREAM && (uint64_t)(now - c->accepted_ns) > s->set.stream_max_ms * 1000000)
      snprintf(c->timeout_msg, sizeof c->timeout_msg, "stream open longer than stream_max_ms=%llu",
               (unsigned long long)s->set.stream_max_ms);
    else
      continue;
    s->m.stream_timeouts++;
    /* Sends the status now; the pending receive then completes and on_main_done logs it. */
    grpc_call_cancel_with_status(c->call, GRPC_STATUS_DEADLINE_EXCEEDED, c->timeout_msg, NULL);
  }
  cancel_unread_answers(s, now);
  end_old_watches(s, now);
  answer_missing_requests(s, now);
  srv_log_suppressed_warnings(s, now);
  /* After a burst, once nothing is in flight: many small buffers add up too. At most once a second. */
  if (s->st.inflight == 0 && s->st.work_count == 0 && s->st.calls_since_trim > 0 && now - s->st.last_trim_ns > 1000000000) {
    s->st.trim_debt = TRIM_AFTER_BYTES;
    srv_maybe_trim(s);
  }
  if (!s->st.listener_broken && !s->io.lst && log_grpc_accept_failures() > 0) {
    s->st.listener_broken = true; /* gRPC core 1.51 does not accept again after a failed accept4 */
    log_msg(LOG_ERROR, "the gRPC listener stopped accepting connections: health is NOT_SERVING; restart the daemon");
    for (call *c = s->st.live; c; c = c->live_next)
      if (c->mid == M_HEALTH_WATCH && c->state == ST_IDLE)
        srv_watch_after_send(c);
  }
}

static void on_connection(int fd, void *arg) {
  srv *s = arg;
  if (s->st.draining) {
    close(fd);
    return;
  }
  grpc_server_add_channel_from_fd(s->io.server, fd, s->io.fd_creds);
}

/* Loads auth.token_file; on failure keeps the tokens in use (reload) and returns -1 with *err. */
static int load_tokens(srv *s, const srv_config *cfg, char **err) {
  auth_tokens *t = NULL;
  if (cfg->token_file[0] && !(t = auth_tokens_load(cfg->token_file, err)))
    return -1;
  auth_tokens_free(s->svc.tokens);
  s->svc.tokens = t;
  return 0;
}

static void apply_settings(srv *s, const srv_config *cfg) {
  s->set.lim.max_module_bytes = cfg->max_module_bytes;
  s->set.lim.max_arena_bytes = cfg->max_arena_bytes;
  s->set.lim.max_depth = (uint32_t)cfg->max_depth;
  s->set.lim.max_ops = (uint32_t)cfg->max_ops;
  s->set.lim.debug_delay_ms = cfg->debug_delay_ms;
  s->set.max_inflight = cfg->max_inflight;
  s->set.grace_ms = cfg->grace_ms;
  s->set.stream_msg_timeout_ms = cfg->stream_message_timeout_ms;
  s->set.stream_max_ms = cfg->stream_max_ms;
  s->set.send_timeout_ms = cfg->send_timeout_ms;
  s->set.watch_max_ms = cfg->watch_max_ms;
  s->set.small_request_bytes = cfg->small_request_bytes;
  budget_set_limits(s->st.watches, UINT64_MAX, cfg->watch_per_connection);
  budget_set_limits(s->st.mem, cfg->memory_budget_bytes, cfg->connection_memory_bytes);
  if (s->svc.cache)
    cache_set_limit(s->svc.cache, cfg->cache_bytes);
}

static int clamp_int(uint64_t v) { return v > INT_MAX ? INT_MAX : (int)v; }

static void int_arg(grpc_channel_args *ca, const char *key, int v) {
  grpc_arg *a = &ca->args[ca->num_args++];
  memset(a, 0, sizeof *a);
  a->type = GRPC_ARG_INTEGER;
  a->key = (char *)key;
  a->value.integer = v;
}

/* Message limits, per-connection stream limit and connection life time (args has room for 12). */
static void channel_args(const srv_config *cfg, grpc_channel_args *ca) {
  int_arg(ca, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, (int)cfg->max_message_bytes);
  int_arg(ca, GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, -1); /* reports may be larger than requests */
  int_arg(ca, GRPC_ARG_MAX_CONCURRENT_STREAMS, clamp_int(cfg->max_streams_per_connection));
  int_arg(ca, GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, clamp_int(cfg->handshake_timeout_ms));
  if (cfg->connection_idle_ms)
    int_arg(ca, GRPC_ARG_MAX_CONNECTION_IDLE_MS, clamp_int(cfg->connection_idle_ms));
  if (cfg->connection_max_age_ms) {
    int_arg(ca, GRPC_ARG_MAX_CONNECTION_AGE_MS, clamp_int(cfg->connection_max_age_ms));
    int_arg(ca, GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, clamp_int(cfg->grace_ms));
  }
  if (cfg->keepalive_ms) {
    int_arg(ca, GRPC_ARG_KEEPALIVE_TIME_MS, clamp_int(cfg->keepalive_ms));
    int_arg(ca, GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
    /* Clients may ping as often as we do, not more (more is a ping flood: GOAWAY). */
    int_arg(ca, GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, clamp_int(cfg->keepalive_ms / 2));
  }
}

/* connections.max, but never more than the open-file limit leaves after the daemon's own needs. */
static uint64_t connection_cap(const srv_config *cfg) {
  struct rlimit rl;
  uint64_t reserve = 64 + 2 * cfg->workers + cfg->metrics_max_connections;
  uint64_t cap = cfg->max_connections;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    cap = rl.rlim_cur > reserve + 1 ? (cap < rl.rlim_cur - reserve ? cap : rl.rlim_cur - reserve) : 1;
  return cap;
}

/* Releases what srv_new made: the one teardown of both srv_new's failure path and srv_free. The
 * gRPC server and completion queue are still here only when the server never started (finish_srv
 * destroys them after the drain), so they are destroyed directly. uv handles are closed by
 * finish_srv; a failed srv_new never opened them. */
static void srv_teardown(srv *s) {
  if (s->io.server)
    grpc_server_destroy(s->io.server);
  if (s->io.cq) {
    grpc_completion_queue_shutdown(s->io.cq);
    while (grpc_completion_queue_next(s->io.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
      ;
    grpc_completion_queue_destroy(s->io.cq);
  }
  if (s->io.fd_creds)
    grpc_server_credentials_release(s->io.fd_creds);
  auth_tokens_free(s->svc.tokens);
  cache_free(s->svc.cache);
  redis_tier_free(s->svc.redis);
  refl_index_free(s->svc.refl);
  budget_free(s->st.mem);
  budget_free(s->st.watches);
  pthread_mutex_destroy(&s->handoff.mu);
  free(s);
}

srv *srv_new(uv_loop_t *loop, const srv_config *cfg, int *port, char **err) {
  *err = NULL;
  srv *s = calloc(1, sizeof *s);
  if (!s) {
    *err = strdup("out of memory");
    return NULL;
  }
  pthread_mutex_init(&s->handoff.mu, NULL); /* first: srv_teardown destroys it */
  s->io.loop = loop;
  s->set.max_message_bytes = cfg->max_message_bytes;
  s->set.workers = cfg->workers;
  s->set.prearm = cfg->prearm;
  s->io.shutdown_ev.kind = EV_SHUTDOWN;
  s->io.cq_exit_ev.kind = EV_CQ_EXIT;
  s->svc.cache = cache_new(cfg->cache_bytes);
  s->svc.refl = refl_index_new(sc_descriptor_set, sc_descriptor_set_len);
  s->st.mem = budget_new();
  s->st.watches = budget_new();
  if (!s->svc.cache || !s->svc.refl || !s->st.mem || !s->st.watches) {
    *err = strdup(s->svc.cache ? "cannot index the embedded descriptor set" : "out of memory");
    goto fail;
  }
  if (cfg->redis_url[0]) {
    redis_tier_config rc = {cfg->redis_url, cfg->redis_ttl_s, cfg->redis_timeout_ms, cfg->redis_breaker_s,
                            cfg->redis_max_value_bytes};
    if (!(s->svc.redis = redis_tier_new(&rc, err)))
      goto fail;
    cache_set_shared(s->svc.cache, s->svc.redis);
  }
  apply_settings(s, cfg);
  if (load_tokens(s, cfg, err))
    goto fail;
  grpc_arg args[12];
  grpc_channel_args ca = {0, args};
  channel_args(cfg, &ca);
  s->io.server = grpc_server_create(&ca, NULL);
  s->io.cq = grpc_completion_queue_create_for_next(NULL);
  grpc_server_register_completion_queue(s->io.server, s->io.cq, NULL);
  for (int m = 0; m < M__COUNT; m++)
    if (srv_methods[m].path) {
      s->io.reg[m] = grpc_server_register_method(
          s->io.server, srv_methods[m].path, NULL,
          srv_methods[m].payload ? GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER : GRPC_SRM_PAYLOAD_NONE, 0);
      if (!s->io.reg[m]) {
        *err = strdup("grpc_server_register_method failed");
        goto fail;
      }
    }
  if (cfg->tls_cert[0] || strncmp(cfg->listen, "unix", 4) == 0) { /* gRPC core's listener (see listener.h) */
    grpc_server_credentials *creds = server_creds(cfg, err);
    if (!creds)
      goto fail;
    *port = grpc_server_add_http2_port(s->io.server, cfg->listen, creds);
    grpc_server_credentials_release(creds);
    if (*port <= 0) {
      char buf[300];
      snprintf(buf, sizeof buf, "cannot listen on %s", cfg->listen);
      *err = strdup(buf);
      goto fail;
    }
  } else {
    listener_limits ll = {connection_cap(cfg), cfg->max_connections_per_peer, cfg->handshake_timeout_ms};
    s->io.fd_creds = grpc_insecure_server_credentials_create();
    if (!(s->io.lst = listener_start(loop, cfg->listen, &ll, on_connection, s, port, err)))
      goto fail;
    log_msg(LOG_INFO, "accepting at most %llu connections", (unsigned long long)ll.max_conns);
  }
  uv_async_init(loop, &s->io.async, on_async);
  s->io.async.data = s;
  uv_timer_init(loop, &s->io.grace);
  s->io.grace.data = s;
  uv_timer_init(loop, &s->io.sweep);
  s->io.sweep.data = s;
  uv_timer_start(&s->io.sweep, on_sweep, SWEEP_MS, SWEEP_MS);
  s->st.started_ns = now_ns();
  return s;
fail:
  srv_teardown(s);
  return NULL;
}

void srv_start(srv *s) {
  grpc_server_start(s->io.server);
  for (int m = 0; m < M__COUNT; m++)
    for (uint64_t i = 0; i < s->set.prearm; i++)
      request_call(s, (method_id)m);
  uv_thread_create(&s->io.cq_thread, cq_thread_main, s);
  s->io.cq_thread_started = true;
}

static void on_grace(uv_timer_t *t) {
  srv *s = t->data;
  log_msg(LOG_WARN, "grace period of %llu ms over: cancelling %llu remaining calls", (unsigned long long)s->set.grace_ms,
          (unsigned long long)s->st.live_count);
  s->st.grace_over = true; /* the cancelled calls are logged as the drain's doing */
  grpc_server_cancel_all_calls(s->io.server);
}

void srv_drain(srv *s, void (*done)(void *), void *arg) {
  if (s->st.draining) {
    log_msg(LOG_WARN, "second stop signal: cancelling %llu calls now", (unsigned long long)s->st.live_count);
    grpc_server_cancel_all_calls(s->io.server);
    return;
  }
  s->io.done = done;
  s->io.done_arg = arg;
  s->st.draining = true;
  atomic_store(&s->handoff.stopping, 1);
  json_t *f = json_object();
  json_object_set_new(f, "inflight", json_integer((json_int_t)s->st.inflight));
  json_object_set_new(f, "grace_ms", json_integer((json_int_t)s->set.grace_ms));
  log_json(LOG_INFO, "draining: NOT_SERVING, no new calls", f);
  if (s->io.lst) {
    listener_get_stats(s->io.lst, &s->st.lst_final);
    listener_close(s->io.lst);
    s->io.lst = NULL;
  }
  grpc_server_shutdown_and_notify(s->io.server, s->io.cq, &s->io.shutdown_ev);
  /* Then watchers hear NOT_SERVING (so whoever sees it also sees new calls refused), and their
   * streams end. */
  for (call *c = s->st.live; c; c = c->live_next)
    if (c->mid == M_HEALTH_WATCH && c->state == ST_IDLE)
      srv_watch_after_send(c);
  uv_timer_start(&s->io.grace, on_grace, s->set.grace_ms, 0);
}

static void on_handle_closed(uv_handle_t *h) {
  srv *s = h->data;
  if (--s->io.closing_handles == 0 && s->io.done)
    s->io.done(s->io.done_arg);
}

void srv_finish_shutdown(srv *s) {
  uv_thread_join(&s->io.cq_thread);
  s->io.cq_thread_started = false;
  if (s->st.live_count)
    log_msg(LOG_WARN, "%llu calls still open at exit: releasing", (unsigned long long)s->st.live_count);
  while (s->st.live) {
    call *c = s->st.live;
    c->state = ST_DONE;
    srv_call_free(c);
  }
  grpc_server_destroy(s->io.server);
  s->io.server = NULL;
  grpc_completion_queue_destroy(s->io.cq);
  s->io.cq = NULL;
  s->io.closing_handles = 3;
  uv_close((uv_handle_t *)&s->io.async, on_handle_closed);
  uv_close((uv_handle_t *)&s->io.grace, on_handle_closed);
  uv_close((uv_handle_t *)&s->io.sweep, on_handle_closed);
}

void srv_free(srv *s) {
  if (s)
    srv_teardown(s);
}

void srv_reload(srv *s, const srv_config *cfg) {
  apply_settings(s, cfg);
  char *err = NULL;
  if (load_tokens(s, cfg, &err)) {
    json_t *f = json_object();
    json_object_set_new(f, "error", json_string(err ? err : "?"));
    log_json(LOG_ERROR, "token reload failed; keeping the tokens in use", f);
    free(err);
  } else if (s->svc.tokens) {
    log_msg(LOG_INFO, "%zu bearer tokens loaded", auth_tokens_count(s->svc.tokens));
  }
}
