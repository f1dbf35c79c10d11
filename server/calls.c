/* calls.c — the life of one call of shardcheckd (see server.c for the states): accepting, the memory
 * budget and admission, Check on the worker pool and its big lane, CheckStream's chunks, Health.Watch,
 * unary handlers, sending answers and the final status, and each request's log line and counters.
 * Everything here runs on the loop thread; a pool thread runs only work_cb (check_run on the call's
 * job), and the CQ thread only hands events over (on_event). */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/support/alloc.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "log.h"
#include "server_state.h"

/* --- call helpers ------------------------------------------------------------------------------ */

static void mem_release(call *c);

void srv_call_free(call *c) {
  srv *s = c->s;
  s->st.calls_since_trim++;
  mem_release(c);
  if (c->watch_counted)
    budget_release(s->st.watches, c->conn, 1);
  if (c->live_prev || c->live_next || s->st.live == c) {
    if (c->live_prev)
      c->live_prev->live_next = c->live_next;
    else
      s->st.live = c->live_next;
    if (c->live_next)
      c->live_next->live_prev = c->live_prev;
    s->st.live_count--;
  }
  if (c->counted) {
    s->st.inflight--;
    c->counted = false;
  }
  if (c->call)
    grpc_call_unref(c->call);
  if (c->recv_bb)
    grpc_byte_buffer_destroy(c->recv_bb);
  if (c->send_bb)
    grpc_byte_buffer_destroy(c->send_bb);
  grpc_metadata_array_destroy(&c->md);
  if (c->mid == M_GENERIC)
    grpc_call_details_destroy(&c->details);
  if (c->first)
    shardcheck__v1__check_chunk__free_unpacked(c->first, NULL);
  grpc_slice_unref(c->req_slice);
  rpc_reply_clear(&c->job.reply);
  free(c->mod);
  free(c->watch_service);
  free(c);
}

static void maybe_free(call *c) {
  if (c->state == ST_DONE && !c->main_pending && !c->close_pending && !c->work_pending)
    srv_call_free(c);
}

/* Health: SERVING unless draining or the listener broke (see on_sweep). */
bool srv_serving(const srv *s) { return !s->st.draining && !s->st.listener_broken; }

/* --- memory budget ------------------------------------------------------------------------------ */

/* What an analysis is charged before it runs: a multiple of the module size (ASTs and tables are a
 * few times the text for most modules), at most the arena limit. The charge is also the arena's
 * limit, so the analysis cannot use more than it was charged: one that needs more (dense modules
 * take ~12x) is charged ARENA_REGROW_FACTOR times more and run again, up to max_arena_bytes. */
#define ARENA_ESTIMATE_FACTOR 4
#define ARENA_REGROW_FACTOR 4

static uint64_t arena_estimate(const srv *s, uint64_t module_bytes) {
  uint64_t e = module_bytes * ARENA_ESTIMATE_FACTOR + (1u << 20);
  return e < s->set.lim.max_arena_bytes ? e : s->set.lim.max_arena_bytes;
}

/* Charges n bytes to the budget (total and the call's connection), or answers RESOURCE_EXHAUSTED at
 * once (false). */
static bool mem_charge(call *c, uint64_t n, const char *what) {
  srv *s = c->s;
  budget_result r = budget_charge(s->st.mem, c->conn, n);
  if (r != BUDGET_OK) {
    char msg[300];
    if (r == BUDGET_CONNECTION_FULL) {
      s->m.rejected_memory_conn++;
      snprintf(msg, sizeof msg,
               "connection memory share exhausted: %s needs %llu bytes, %llu held by this connection of "
               "connection_memory_bytes=%llu",
               what, (unsigned long long)n, (unsigned long long)budget_connection_used(s->st.mem, c->conn),
               (unsigned long long)budget_per_connection(s->st.mem));
    } else {
      s->m.rejected_memory++;
      snprintf(msg, sizeof msg,
               "server memory budget exhausted: %s needs %llu bytes, %llu in use of memory_budget_bytes=%llu", what,
               (unsigned long long)n, (unsigned long long)budget_used(s->st.mem), (unsigned long long)budget_total(s->st.mem));
    }
    srv_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg, NULL, 0);
    return false;
  }
  c->mem_charged += n;
  return true;
}

static void trim_cb(uv_work_t *w) {
  (void)w;
  malloc_trim(0); /* every malloc arena, also those of the pool threads */
}

static void maybe_shutdown_cq(srv *s);

static void after_trim_cb(uv_work_t *w, int status) {
  (void)status;
  srv *s = w->data;
  s->st.trim_pending = false;
  s->st.work_count--;
  maybe_shutdown_cq(s);
}

/* Gives memory back after large requests: analysis arenas and buffers go to malloc's free lists,
 * which keep the pages unless trimmed. */
void srv_maybe_trim(srv *s) {
  if (s->st.trim_debt < TRIM_AFTER_BYTES || s->st.trim_pending || s->st.cq_closing)
    return;
  s->st.trim_debt = 0;
  s->st.calls_since_trim = 0;
  s->st.last_trim_ns = now_ns();
  s->st.trim_work.data = s;
  if (uv_queue_work(s->io.loop, &s->st.trim_work, trim_cb, after_trim_cb) == 0) {
    s->st.trim_pending = true;
    s->st.work_count++;
  }
}

static void note_freed(srv *s, uint64_t n) {
  if (n >= LARGE_BYTES)
    s->st.trim_debt += n;
}

static void mem_release(call *c) {
  srv *s = c->s;
  budget_release(s->st.mem, c->conn, c->mem_charged);
  c->mem_charged = 0;
  srv_maybe_trim(s);
}

/* The call is answered: what it buffered (the request, the module) is freed and its charge released;
 * the answer being sent (resp_len bytes) is charged until the call ends (send_timeout_ms bounds that). */
static void release_inputs(call *c, size_t resp_len) {
  srv *s = c->s;
  if (c->work_pending)
    return; /* the analysis still reads them */
  note_freed(s, c->mod_cap + c->bytes_in);
  free(c->mod);
  c->mod = NULL;
  c->mod_cap = c->mod_len = 0;
  if (c->recv_bb) {
    grpc_byte_buffer_destroy(c->recv_bb);
    c->recv_bb = NULL;
  }
  grpc_slice_unref(c->req_slice);
  c->req_slice = grpc_empty_slice();
  mem_release(c);
  if (resp_len) {
    budget_force(s->st.mem, c->conn, resp_len);
    c->mem_charged = resp_len;
  }
}

/* Starts a batch unless the completion queue is closing; false = not started. */
static bool start_batch(call *c, const grpc_op *ops, size_t n, ev *tag) {
  if (c->s->st.cq_closing)
    return false;
  grpc_call_error err = grpc_call_start_batch(c->call, ops, n, tag, NULL);
  if (err != GRPC_CALL_OK) {
    log_msg(LOG_ERROR, "grpc_call_start_batch(%s) failed: %d", srv_methods[c->mid].name, (int)err);
    return false;
  }
  return true;
}

static double ms_since(int64_t t0) { return (double)(now_ns() - t0) / 1e6; }

/* Per-call warnings are rate-limited (a flood of reset or refused calls must not become a flood of
 * log lines): WARNINGS_PER_INTERVAL per WARN_INTERVAL_MS, then one summary line per interval
 * (log_suppressed_warnings, from on_sweep) counts the rest by status. */
#define WARNINGS_PER_INTERVAL 100
#define WARN_INTERVAL_MS 10000

static bool warning_allowed(srv *s, grpc_status_code code) {
  if (s->st.warns_logged < WARNINGS_PER_INTERVAL) {
    s->st.warns_logged++;
    return true;
  }
  s->st.warns_suppressed[code < NSTATUS ? code : GRPC_STATUS_UNKNOWN]++;
  return false;
}

void srv_log_suppressed_warnings(srv *s, int64_t now) {
  if (now - s->st.warn_interval_ns < (int64_t)WARN_INTERVAL_MS * 1000000)
    return;
  s->st.warn_interval_ns = now;
  s->st.warns_logged = 0;
  json_t *by = json_object();
  uint64_t total = 0;
  for (int k = 0; k < NSTATUS; k++)
    if (s->st.warns_suppressed[k]) {
      json_object_set_new(by, srv_status_names[k], json_integer((json_int_t)s->st.warns_suppressed[k]));
      total += s->st.warns_suppressed[k];
      s->st.warns_suppressed[k] = 0;
    }
  if (!total) {
    json_decref(by);
    return;
  }
  json_t *f = json_object();
  json_object_set_new(f, "suppressed", json_integer((json_int_t)total));
  json_object_set_new(f, "by_status", by);
  json_object_set_new(f, "interval_ms", json_integer(WARN_INTERVAL_MS));
  json_object_set_new(f, "logged", json_integer(WARNINGS_PER_INTERVAL));
  log_json(LOG_WARN, "request warnings suppressed", f);
}

static void log_request(call *c, grpc_status_code code, const char *detail) {
  srv *s = c->s;
  s->m.calls_total[c->mid][code < NSTATUS ? code : GRPC_STATUS_UNKNOWN]++;
  s->m.bytes_total[c->mid] += c->bytes_in;
  double ms = ms_since(c->accepted_ns);
  if (c->mid == M_CHECK || c->mid == M_CHECK_STREAM) {
    size_t b = 0;
    while (b < NBUCKETS && ms / 1000.0 > srv_hist_bounds[b])
      b++;
    s->m.hist[b]++;
    s->m.hist_sum += ms / 1000.0;
    s->m.hist_count++;
  }
  log_level lvl = code == GRPC_STATUS_OK ? LOG_INFO : code == GRPC_STATUS_INTERNAL ? LOG_ERROR : LOG_WARN;
  if (!log_enabled(lvl) || (lvl == LOG_WARN && !warning_allowed(s, code)))
    return;
  json_t *f = json_object();
  json_object_set_new(f, "method", json_string(srv_methods[c->mid].name));
  if (c->mid == M_GENERIC) {
    char *path = grpc_slice_to_c_string(c->details.method);
    json_object_set_new(f, "path", json_string(path));
    gpr_free(path);
  }
  char *peer = c->call ? grpc_call_get_peer(c->call) : NULL;
  if (peer) { /* connections from our listener are "fd:N" to gRPC */
    const char *real = strncmp(peer, "fd:", 3) == 0 ? listener_peer(s->io.lst, atoi(peer + 3)) : NULL;
    json_object_set_new(f, "peer", json_string(real ? real : peer));
    gpr_free(peer);
  }
  json_object_set_new(f, "bytes", json_integer((json_int_t)c->bytes_in));
  json_object_set_new(f, "status", json_string(srv_status_names[code < NSTATUS ? code : GRPC_STATUS_UNKNOWN]));
  json_object_set_new(f, "ms", json_real((double)(int64_t)(ms * 1000) / 1000.0));
  if (c->mid == M_CHECK || c->mid == M_CHECK_STREAM) {
    json_object_set_new(f, "cache_hit", json_boolean(c->job.cache_hit));
    if (code == GRPC_STATUS_OK) {
      json_object_set_new(f, "errors", json_integer(c->job.errors));
      json_object_set_new(f, "warnings", json_integer(c->job.warnings));
      json_object_set_new(f, "analysis_ms", json_real((double)c->job.analysis_us / 1000.0));
    }
    if (c->mid == M_CHECK_STREAM)
      json_object_set_new(f, "chunks", json_integer((json_int_t)c->chunks));
  }
  if (detail && *detail)
    json_object_set_new(f, "detail", json_string(detail));
  if (c->close_cancelled)
    json_object_set_new(f, s->st.grace_over ? "drain_cancelled" : "client_cancelled", json_true());
  log_json(lvl, "request", f);
}

/* Starts the call's main batch and moves to `st` (to ST_DONE if the batch cannot start). */
static void start_main(call *c, call_state st, const grpc_op *ops, size_t n) {
  c->state = st;
  if (st == ST_SEND || st == ST_FINISH)
    c->send_ns = now_ns(); /* send_timeout_ms counts from here */
  c->main_pending = start_batch(c, ops, n, &c->ev);
  if (!c->main_pending)
    c->state = ST_DONE;
}

/* Appends SEND_INITIAL_METADATA to ops[*n] unless the call sent it already. */
static void add_metadata_op(call *c, grpc_op *ops, size_t *n) {
  if (c->md_sent)
    return;
  ops[(*n)++].op = GRPC_OP_SEND_INITIAL_METADATA;
  c->md_sent = true;
}

/* Appends SEND_MESSAGE of resp (taken over; c->send_bb holds it until the next message). */
static void add_message_op(call *c, grpc_op *ops, size_t *n, uint8_t *resp, size_t len) {
  if (c->send_bb)
    grpc_byte_buffer_destroy(c->send_bb);
  grpc_slice sl = len ? grpc_slice_new(resp, len, free) : grpc_empty_slice();
  if (!len)
    free(resp);
  c->send_bb = grpc_raw_byte_buffer_create(&sl, 1);
  grpc_slice_unref(sl);
  ops[*n].op = GRPC_OP_SEND_MESSAGE;
  ops[*n].data.send_message.send_message = c->send_bb;
  (*n)++;
}

/* Sends the final status (with an optional last message); logs the request once. */
void srv_finish(call *c, grpc_status_code code, const char *detail, uint8_t *resp, size_t len) {
  if (!c->finished) {
    c->finished = true;
    log_request(c, code, detail);
  }
  if (c->counted) {
    c->s->st.inflight--;
    c->counted = false;
  }
  if (c->close_cancelled || !c->call) { /* the call is over: nothing to send */
    free(resp);
    release_inputs(c, 0);
    c->state = ST_DONE;
    return;
  }
  release_inputs(c, resp && code == GRPC_STATUS_OK ? len : 0);
  grpc_op ops[3];
  size_t n = 0;
  memset(ops, 0, sizeof ops);
  add_metadata_op(c, ops, &n);
  if (resp && code == GRPC_STATUS_OK)
    add_message_op(c, ops, &n, resp, len);
  else
    free(resp);
  grpc_slice details = grpc_slice_from_copied_string(detail ? detail : "");
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = code;
  ops[n].data.send_status_from_server.status_details = &details;
  n++;
  start_main(c, ST_FINISH, ops, n);
  grpc_slice_unref(details); /* copied by start_batch */
}

/* How a call the client ended is counted: DEADLINE_EXCEEDED once its deadline passed, else CANCELLED. */
static grpc_status_code ended_code(const call *c) {
  gpr_timespec now = gpr_now(GPR_CLOCK_MONOTONIC);
  return gpr_time_cmp(gpr_convert_clock_type(c->deadline, GPR_CLOCK_MONOTONIC), now) <= 0 ? GRPC_STATUS_DEADLINE_EXCEEDED
                                                                                           : GRPC_STATUS_CANCELLED;
}

/* No request message arrived: the client half-closed without one (INVALID_ARGUMENT, `msg`) or reset
 * the stream / let its deadline pass (then it is counted as such). A reset shows up as the call's
 * close, which may come just after: wait for it up to MISSING_WAIT_MS (on_close, on_sweep). */
static void no_request_message(call *c, const char *msg) {
  if (ended_code(c) == GRPC_STATUS_DEADLINE_EXCEEDED) {
    srv_finish(c, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline exceeded before the request arrived", NULL, 0);
    return;
  }
  c->missing_ns = now_ns();
  c->missing_msg = msg;
  c->state = ST_IDLE;
}

static void finish_reply(call *c, rpc_reply *r) {
  uint8_t *resp = r->resp;
  r->resp = NULL;
  srv_finish(c, r->code, r->message, resp, r->resp_len);
  rpc_reply_clear(r);
}

/* Sends one message of a stream (Watch, Reflection) and moves to ST_SEND. */
static void send_message(call *c, uint8_t *resp, size_t len) {
  grpc_op ops[2];
  size_t n = 0;
  memset(ops, 0, sizeof ops);
  add_metadata_op(c, ops, &n);
  add_message_op(c, ops, &n, resp, len);
  start_main(c, ST_SEND, ops, n);
}

static void start_recv(call *c) {
  if (c->recv_bb) {
    grpc_byte_buffer_destroy(c->recv_bb);
    c->recv_bb = NULL;
  }
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_MESSAGE;
  op.data.recv_message.recv_message = &c->recv_bb;
  c->last_msg_ns = now_ns(); /* stream_message_timeout_ms counts from here */
  start_main(c, ST_RECV, &op, 1);
}

/* Copies a received message into one contiguous slice (no copy for a single uncompressed slice). */
static grpc_slice bb_slice(grpc_byte_buffer *bb) {
  grpc_byte_buffer_reader rd;
  if (!bb || !grpc_byte_buffer_reader_init(&rd, bb))
    return grpc_empty_slice();
  grpc_slice sl = grpc_byte_buffer_reader_readall(&rd);
  grpc_byte_buffer_reader_destroy(&rd);
  return sl;
}

/* --- Check (thread pool) ----------------------------------------------------------------------- */

static void work_cb(uv_work_t *w) {
  call *c = w->data;
  if (c->mid != M_CHECK_STREAM) {
    if (c->recv_bb) { /* the first run: one contiguous copy, then the received buffer goes */
      c->req_slice = bb_slice(c->recv_bb);
      grpc_byte_buffer_destroy(c->recv_bb);
      c->recv_bb = NULL;
    }
    c->job.req_bytes = GRPC_SLICE_START_PTR(c->req_slice);
    c->job.req_len = GRPC_SLICE_LENGTH(c->req_slice);
  }
  check_run(&c->job);
}

static void maybe_shutdown_cq(srv *s) {
  if (s->st.cq_closing && s->st.work_count == 0 && !s->st.cq_shutdown_called) {
    s->st.cq_shutdown_called = true;
    grpc_completion_queue_shutdown(s->io.cq);
  }
}

static void queue_check(call *c);
static void start_waiting_big(srv *s);

/* The analysis needed more than its charge: charge ARENA_REGROW_FACTOR times more (up to
 * max_arena_bytes) and run it again. False when it cannot (then the call is answered). */
static bool regrow_arena(call *c) {
  srv *s = c->s;
  if (!c->job.arena_short || atomic_load(&c->cancel_flag) || s->st.draining)
    return false;
  uint64_t cur = c->job.arena_limit, max = s->set.lim.max_arena_bytes;
  uint64_t next = cur > max / ARENA_REGROW_FACTOR ? max : cur * ARENA_REGROW_FACTOR;
  if (!mem_charge(c, next - cur, "the analysis (a larger arena)"))
    return true; /* answered RESOURCE_EXHAUSTED */
  s->m.analysis_regrown++;
  c->job.arena_limit = next;
  queue_check(c);
  return true;
}

static void after_work_cb(uv_work_t *w, int status) {
  call *c = w->data;
  srv *s = c->s;
  s->st.work_count--;
  c->work_pending = false;
  s->st.big_running -= c->big;
  note_freed(s, c->job.arena_bytes);
  if (status == 0 && regrow_arena(c)) {
    start_waiting_big(s);
    maybe_free(c);
    return;
  }
  if (status == UV_ECANCELED || (s->st.grace_over && c->job.reply.code == GRPC_STATUS_CANCELLED))
    rpc_reply_error(&c->job.reply, s->st.grace_over ? GRPC_STATUS_CANCELLED : ended_code(c), "%s %s",
                    s->st.grace_over ? "cancelled by the drain (grace_ms ended)" : "cancelled by the client",
                    status == UV_ECANCELED ? "while queued" : "during the check");
  else if (c->job.reply.code == GRPC_STATUS_CANCELLED)
    c->job.reply.code = ended_code(c); /* a deadline that passed cancels the analysis too */
  finish_reply(c, &c->job.reply);
  start_waiting_big(s);
  maybe_shutdown_cq(s);
  maybe_free(c);
}

static bool big_lane_full(const srv *s) {
  uint64_t lanes = s->set.workers > 1 ? s->set.workers - 1 : 1;
  return s->st.big_running >= lanes;
}

/* Starts waiting big checks while the big lane has room. */
static void start_waiting_big(srv *s) {
  while (s->st.lane_head && !big_lane_full(s)) {
    call *c = s->st.lane_head;
    s->st.lane_head = c->lane_next;
    if (!s->st.lane_head)
      s->st.lane_tail = NULL;
    c->lane_next = NULL;
    queue_check(c);
  }
}

/* Takes a waiting call out of the big lane's queue (cancelled); false if it was not waiting. */
static bool leave_big_lane(call *c) {
  srv *s = c->s;
  for (call **pp = &s->st.lane_head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->lane_next)
    if (*pp == c) {
      *pp = c->lane_next;
      if (s->st.lane_tail == c)
        s->st.lane_tail = prev;
      c->lane_next = NULL;
      return true;
    }
  return false;
}

static void queue_check(call *c) {
  srv *s = c->s;
  uint64_t module_bytes = c->mid == M_CHECK_STREAM ? c->mod_len : c->bytes_in;
  c->big = module_bytes > s->set.small_request_bytes;
  if (c->big && big_lane_full(s)) {
    c->state = ST_WORK; /* waiting: no work pending yet */
    if (s->st.lane_tail)
      s->st.lane_tail->lane_next = c;
    else
      s->st.lane_head = c;
    s->st.lane_tail = c;
    return;
  }
  s->st.big_running += c->big;
  c->job.lim = s->set.lim;
  c->job.cache = s->svc.cache;
  c->job.propagate = c->mid == M_PROPAGATE;
  c->job.cancel = &c->cancel_flag;
  c->job.deadline = c->deadline;
  c->job.accepted_ns = c->accepted_ns;
  c->work.data = c;
  c->state = ST_WORK;
  if (uv_queue_work(s->io.loop, &c->work, work_cb, after_work_cb) != 0) {
    s->st.big_running -= c->big;
    srv_finish(c, GRPC_STATUS_INTERNAL, "cannot queue work", NULL, 0);
    return;
  }
  c->work_pending = true;
  s->st.work_count++;
}

/* Admission: accepted checks not yet answered are bounded; past the bound, answer at once. */
static bool admit(call *c) {
  srv *s = c->s;
  /* A call already past its deadline gets DEADLINE_EXCEEDED, busy or not: the client stopped waiting,
   * and "busy" would send it retrying for an answer it can no longer take. */
  gpr_timespec now = gpr_now(GPR_CLOCK_MONOTONIC);
  if (gpr_time_cmp(gpr_convert_clock_type(c->deadline, GPR_CLOCK_MONOTONIC), now) <= 0) {
    srv_finish(c, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline exceeded before the check was admitted", NULL, 0);
    return false;
  }
  if (s->st.inflight >= s->set.max_inflight) {
    s->m.rejected_busy++;
    char msg[160];
    snprintf(msg, sizeof msg, "server busy: %llu checks in flight, the limit is max_inflight=%llu",
             (unsigned long long)s->st.inflight, (unsigned long long)s->set.max_inflight);
    srv_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg, NULL, 0);
    return false;
  }
  s->st.inflight++;
  c->counted = true;
  return true;
}

/* --- CheckStream -------------------------------------------------------------------------------- */

/* The module buffer's first size: a stream holding a few bytes is charged a few KiB, not 1 MiB. */
#define STREAM_FIRST_BUFFER 4096

static void stream_chunk(call *c) {
  srv *s = c->s;
  if (!c->recv_bb) { /* half-close: the module is complete */
    if (!c->first) {
      no_request_message(c, "CheckStream: no chunks (the first must carry the header)");
      return;
    }
    c->job.hdr = c->first->header;
    c->job.module = c->mod ? c->mod : (const uint8_t *)"";
    c->job.module_len = c->mod_len;
    /* Only now does the stream count against max_inflight: idle streams hold no analysis slot. */
    c->job.arena_limit = arena_estimate(s, c->mod_len);
    if (admit(c) && mem_charge(c, c->job.arena_limit, "the analysis"))
      queue_check(c);
    return;
  }
  grpc_slice sl = bb_slice(c->recv_bb);
  size_t n = GRPC_SLICE_LENGTH(sl);
  c->bytes_in += n;
  c->chunks++;
  Shardcheck__V1__CheckChunk *ch = shardcheck__v1__check_chunk__unpack(NULL, n, GRPC_SLICE_START_PTR(sl));
  grpc_slice_unref(sl);
  char msg[200];
  if (!ch) {
    snprintf(msg, sizeof msg, "cannot decode shardcheck.v1.CheckChunk #%llu", (unsigned long long)c->chunks);
    srv_finish(c, GRPC_STATUS_INVALID_ARGUMENT, msg, NULL, 0);
    return;
  }
  if (!c->first) {
    if (!ch->header) {
      shardcheck__v1__check_chunk__free_unpacked(ch, NULL);
      srv_finish(c, GRPC_STATUS_INVALID_ARGUMENT, "header: the first CheckChunk must carry the header", NULL, 0);
      return;
    }
    if (ch->header->module.len) {
      shardcheck__v1__check_chunk__free_unpacked(ch, NULL);
      srv_finish(c, GRPC_STATUS_INVALID_ARGUMENT, "header.module: must be empty in CheckStream (send the module in data)",
             NULL, 0);
      return;
    }
    rpc_reply r = {0};
    if (check_validate(ch->header, &r)) {
      shardcheck__v1__check_chunk__free_unpacked(ch, NULL);
      finish_reply(c, &r);
      return;
    }
  }
  size_t add = ch->data.len;
  if (add > s->set.lim.max_module_bytes || c->mod_len > s->set.lim.max_module_bytes - add) {
    snprintf(msg, sizeof msg, "module: more than %llu bytes, over the limit max_module_bytes=%llu",
             (unsigned long long)s->set.lim.max_module_bytes, (unsigned long long)s->set.lim.max_module_bytes);
    shardcheck__v1__check_chunk__free_unpacked(ch, NULL);
    srv_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg, NULL, 0);
    return;
  }
  if (c->mod_len + add > c->mod_cap) {
    /* Grows by half (charged as allocated): what is charged is at most 1.5x what was received. */
    size_t need = c->mod_len + add, nc = c->mod_cap ? c->mod_cap : STREAM_FIRST_BUFFER;
    while (nc < need)
      nc += nc / 2;
    if (nc > s->set.lim.max_module_bytes) /* >= mod_len + add, checked above */
      nc = s->set.lim.max_module_bytes;
    if (!mem_charge(c, nc - c->mod_cap, "buffering the module")) {
      shardcheck__v1__check_chunk__free_unpacked(ch, NULL);
      return;
    }
    uint8_t *m = realloc(c->mod, nc);
    if (!m) {
      shardcheck__v1__check_chunk__free_unpacked(ch, NULL);
      srv_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory buffering the module", NULL, 0);
      return;
    }
    c->mod = m;
    c->mod_cap = nc;
  }
  if (add)
    memcpy(c->mod + c->mod_len, ch->data.data, add);
  c->mod_len += add;
  if (!c->first) {
    c->first = ch; /* keeps the header; its data is no longer needed */
    free(ch->data.data);
    ch->data.data = NULL;
    ch->data.len = 0;
  } else {
    shardcheck__v1__check_chunk__free_unpacked(ch, NULL);
  }
  start_recv(c);
}

/* --- Health.Watch ------------------------------------------------------------------------------- */

static void watch_send_status(call *c) {
  rpc_reply r = {0};
  c->watch_service_status = health_status(c->watch_service, srv_serving(c->s));
  health_encode(c->watch_service_status, &r);
  uint8_t *resp = r.resp;
  r.resp = NULL;
  send_message(c, resp, r.resp_len);
  rpc_reply_clear(&r);
}

void srv_watch_after_send(call *c) {
  srv *s = c->s;
  if (health_status(c->watch_service, srv_serving(s)) != c->watch_service_status)
    watch_send_status(c);
  else if (s->st.draining)
    srv_finish(c, GRPC_STATUS_UNAVAILABLE, "server is shutting down", NULL, 0);
  else
    c->state = ST_IDLE; /* until the status changes or the client goes away */
}

static void watch_start(call *c) {
  srv *s = c->s;
  if (budget_charge(s->st.watches, c->conn, 1) != BUDGET_OK) {
    s->m.rejected_watch++;
    char msg[160];
    snprintf(msg, sizeof msg, "too many Health.Watch calls on this connection (watch_per_connection=%llu)",
             (unsigned long long)budget_per_connection(s->st.watches));
    srv_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg, NULL, 0);
    return;
  }
  c->watch_counted = true;
  grpc_slice sl = bb_slice(c->recv_bb);
  c->bytes_in = GRPC_SLICE_LENGTH(sl);
  Grpc__Health__V1__HealthCheckRequest *in =
      grpc__health__v1__health_check_request__unpack(NULL, GRPC_SLICE_LENGTH(sl), GRPC_SLICE_START_PTR(sl));
  grpc_slice_unref(sl);
  if (!c->recv_bb || !in) {
    if (in)
      grpc__health__v1__health_check_request__free_unpacked(in, NULL);
    srv_finish(c, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode grpc.health.v1.HealthCheckRequest", NULL, 0);
    return;
  }
  c->watch_service = strdup(in->service);
  grpc__health__v1__health_check_request__free_unpacked(in, NULL);
  if (!c->watch_service) {
    srv_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
    return;
  }
  watch_send_status(c);
}

/* --- dispatch ----------------------------------------------------------------------------------- */

static void run_unary(call *c) {
  srv *s = c->s;
  rpc_reply r = {0};
  if (!c->recv_bb) {
    no_request_message(c, "missing request message");
    return;
  }
  grpc_slice sl = bb_slice(c->recv_bb);
  const uint8_t *p = GRPC_SLICE_START_PTR(sl);
  size_t n = GRPC_SLICE_LENGTH(sl);
  c->bytes_in = n;
  switch (c->mid) {
  case M_LIST_RULES:
    rpc_list_rules(p, n, &r);
    break;
  case M_EXPLAIN:
    rpc_explain(p, n, &r);
    break;
  case M_CAPS: {
    caps_info info = {s->set.lim, s->set.max_message_bytes, (uint32_t)s->set.max_inflight, (uint32_t)s->set.workers};
    rpc_capabilities(p, n, &info, &r);
    break;
  }
  case M_HEALTH_CHECK:
    rpc_health_check(p, n, srv_serving(s), &r);
    break;
  default:
    rpc_reply_error(&r, GRPC_STATUS_INTERNAL, "no handler");
  }
  grpc_slice_unref(sl);
  finish_reply(c, &r);
}

static void accept_call(call *c) {
  srv *s = c->s;
  c->ev.kind = EV_CALL;
  c->accepted_ns = now_ns();
  c->req_slice = grpc_empty_slice();
  c->live_next = s->st.live;
  if (s->st.live)
    s->st.live->live_prev = c;
  s->st.live = c;
  s->st.live_count++;
  if (c->mid == M_GENERIC)
    c->deadline = c->details.deadline;
  char *peer = grpc_call_get_peer(c->call); /* "fd:N" from our listener: unique while the connection lives */
  snprintf(c->conn, sizeof c->conn, "%s", peer ? peer : "?");
  gpr_free(peer);
  /* Watch for the end of the call (client cancel, deadline) from the start. */
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &c->close_cancelled;
  c->close_pending = start_batch(c, &op, 1, &c->close_ev);
  if (!c->close_pending) { /* shutting down */
    c->state = ST_DONE;
    return;
  }
  if (s->svc.tokens && srv_methods[c->mid].kind != MK_WATCH && c->mid != M_HEALTH_CHECK && !auth_check(s->svc.tokens, &c->md)) {
    s->m.unauthenticated++; /* health stays open for probes; everything else needs a token */
    srv_finish(c, GRPC_STATUS_UNAUTHENTICATED, "missing or invalid bearer token (metadata authorization: Bearer ...)",
           NULL, 0);
    return;
  }
  switch (srv_methods[c->mid].kind) {
  case MK_GENERIC: {
    char *path = grpc_slice_to_c_string(c->details.method);
    char msg[300];
    snprintf(msg, sizeof msg, "unknown method %.250s", path);
    gpr_free(path);
    srv_finish(c, GRPC_STATUS_UNIMPLEMENTED, msg, NULL, 0);
    break;
  }
  case MK_UNARY:
    run_unary(c);
    break;
  case MK_CHECK:
    c->bytes_in = c->recv_bb ? grpc_byte_buffer_length(c->recv_bb) : 0;
    if (!c->recv_bb)
      no_request_message(c, "missing request message");
    else {
      /* Charged: the received message, its decoded copy and the analysis arena. */
      c->job.arena_limit = arena_estimate(s, c->bytes_in);
      if (admit(c) && mem_charge(c, 2 * c->bytes_in + c->job.arena_limit,
                                   c->mid == M_PROPAGATE ? "this Propagate" : "this Check"))
        queue_check(c);
    }
    break;
  case MK_CHECK_STREAM:
    start_recv(c);
    break;
  case MK_WATCH:
    watch_start(c);
    break;
  case MK_REFLECT:
    start_recv(c);
    break;
  }
}

static void on_main_done(call *c, int ok) {
  srv *s = c->s;
  switch (c->state) {
  case ST_RECV:
    if (c->timeout_msg[0] && !c->finished) { /* on_sweep cut the stream */
      srv_finish(c, GRPC_STATUS_DEADLINE_EXCEEDED, c->timeout_msg, NULL, 0);
      break;
    }
    if (!ok) { /* the call broke (cancelled, connection lost) */
      if (!c->finished)
        srv_finish(c, s->st.grace_over ? GRPC_STATUS_CANCELLED : ended_code(c),
               s->st.grace_over ? "cancelled by the drain (grace_ms ended) while receiving" : "call ended while receiving",
               NULL, 0);
      else
        c->state = ST_DONE;
      break;
    }
    if (c->mid == M_CHECK_STREAM) {
      stream_chunk(c);
    } else if (!c->recv_bb) { /* reflection: the client half-closed */
      srv_finish(c, GRPC_STATUS_OK, NULL, NULL, 0);
    } else {
      grpc_slice sl = bb_slice(c->recv_bb);
      c->bytes_in += GRPC_SLICE_LENGTH(sl);
      rpc_reply r = {0};
      refl_handle(s->svc.refl, GRPC_SLICE_START_PTR(sl), GRPC_SLICE_LENGTH(sl), &r);
      grpc_slice_unref(sl);
      if (r.code != GRPC_STATUS_OK) {
        finish_reply(c, &r);
      } else {
        uint8_t *resp = r.resp;
        r.resp = NULL;
        send_message(c, resp, r.resp_len);
        rpc_reply_clear(&r);
      }
    }
    break;
  case ST_SEND:
    if (!ok) {
      if (!c->finished)
        srv_finish(c, ended_code(c), "call ended while sending", NULL, 0);
      else
        c->state = ST_DONE;
    } else if (c->mid == M_HEALTH_WATCH) {
      srv_watch_after_send(c);
    } else {
      start_recv(c);
    }
    break;
  case ST_FINISH:
    c->state = ST_DONE;
    break;
  default:
    log_msg(LOG_ERROR, "unexpected completion in state %d (%s)", (int)c->state, srv_methods[c->mid].name);
    break;
  }
}

static void on_close(call *c) {
  if (c->close_cancelled) {
    atomic_store(&c->cancel_flag, 1); /* the analysis polls it */
    if (c->state == ST_WORK && !c->work_pending && leave_big_lane(c))
      srv_finish(c, ended_code(c), "cancelled while waiting for a worker", NULL, 0);
    if (c->work_pending)
      uv_cancel((uv_req_t *)&c->work); /* fails harmlessly once the work started */
    if (c->state == ST_IDLE) {
      if (!c->finished)
        srv_finish(c, ended_code(c), "client went away", NULL, 0);
      c->state = ST_DONE;
    }
  }
}

void srv_on_event(srv *s, ev *e) {
  switch (e->kind) {
  case EV_REQUEST: {
    call *c = (call *)e;
    if (!e->ok || s->st.cq_closing) { /* a request cancelled by the shutdown */
      c->state = ST_DONE;
      srv_call_free(c);
      return;
    }
    accept_call(c);
    maybe_free(c);
    return;
  }
  case EV_CALL: {
    call *c = (call *)e;
    c->main_pending = false;
    on_main_done(c, e->ok);
    maybe_free(c);
    return;
  }
  case EV_CLOSE: {
    call *c = (call *)((char *)e - offsetof(call, close_ev));
    c->close_pending = false;
    on_close(c);
    maybe_free(c);
    return;
  }
  case EV_SHUTDOWN:
    log_msg(LOG_INFO, "all calls finished; stopping");
    s->st.cq_closing = true;
    uv_timer_stop(&s->io.grace);
    maybe_shutdown_cq(s);
    return;
  case EV_CQ_EXIT:
    srv_finish_shutdown(s);
    return;
  }
}
