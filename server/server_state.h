/* server_state.h — the daemon's call and server records, grouped by the thread that owns them;
 * shared by the files of the gRPC glue (server.c, calls.c, metrics_text.c). Not a public interface:
 * main.c and the tests use server.h.
 *
 * Threads (see server.h): the loop thread owns everything here unless a group says otherwise; the CQ
 * thread touches only `srv_io` handles gRPC makes thread-safe and the `srv_handoff` group; a pool
 * thread running a check reads only its call's `job` and `cancel_flag`. */
#ifndef SRV_SERVER_STATE_H
#define SRV_SERVER_STATE_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "auth.h"
#include "budget.h"
#include "cache.h"
#include "cache_redis.h"
#include "handlers.h"
#include "listener.h"
#include "reflection.h"
#include "server.h"

/* --- method table ------------------------------------------------------------------------------ */

typedef enum { MK_UNARY, MK_CHECK, MK_CHECK_STREAM, MK_WATCH, MK_REFLECT, MK_GENERIC } method_kind;
typedef enum {
  M_CHECK,
  M_CHECK_STREAM,
  M_LIST_RULES,
  M_EXPLAIN,
  M_CAPS,
  M_PROPAGATE,
  M_HEALTH_CHECK,
  M_HEALTH_WATCH,
  M_REFL_V1,
  M_REFL_V1ALPHA,
  M_GENERIC,
  M__COUNT
} method_id;

typedef struct {
  const char *path;
  const char *name; /* in logs and metrics */
  method_kind kind;
  bool payload;     /* GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER */
} method;

/* Constant tables (any thread). */
extern const method srv_methods[M__COUNT];
#define NSTATUS 17
extern const char *const srv_status_names[NSTATUS];
/* Histogram buckets (seconds) for Check/CheckStream latency. */
#define NBUCKETS 14
extern const double srv_hist_bounds[NBUCKETS];

/* --- events and calls -------------------------------------------------------------------------- */

typedef enum { EV_REQUEST, EV_CALL, EV_CLOSE, EV_SHUTDOWN, EV_CQ_EXIT } ev_kind;

/* A completion-queue tag. The CQ thread sets `ok` and links it into the hand-off FIFO; from then on
 * the loop thread owns it. */
typedef struct ev {
  ev_kind kind;
  int ok;
  struct ev *next; /* FIFO link (guarded by srv_handoff.mu while queued) */
} ev;

typedef enum { ST_REQ, ST_RECV, ST_WORK, ST_SEND, ST_IDLE, ST_FINISH, ST_DONE } call_state;

/* One call. Made by whoever arms the request (the loop before srv_start, then the CQ thread); from its
 * first event on the loop thread owns it, except that while work_pending a pool thread uses `job`,
 * `req_slice` and (Check) `recv_bb`, and reads `cancel_flag`. */
typedef struct call {
  ev ev;       /* main batch tag (EV_REQUEST until accepted, then EV_CALL); first member */
  ev close_ev; /* RECV_CLOSE_ON_SERVER tag */
  srv *s;
  method_id mid;
  call_state state;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_call_details details; /* unregistered methods */
  grpc_metadata_array md;
  grpc_byte_buffer *recv_bb;
  grpc_byte_buffer *send_bb;
  int close_cancelled;
  atomic_int cancel_flag; /* written by the loop thread, polled by the analysis on a pool thread */
  bool main_pending, close_pending, work_pending;
  bool md_sent, counted, finished;
  int64_t accepted_ns;
  int64_t last_msg_ns;  /* streams: when the last message arrived */
  uint64_t bytes_in;
  uint64_t mem_charged; /* bytes charged to the memory budget (see budget.h) */
  int64_t send_ns;      /* when the pending send (ST_SEND, ST_FINISH) started */
  int64_t missing_ns;   /* no request message: when that was seen (ST_IDLE until cancelled or answered) */
  const char *missing_msg; /* the INVALID_ARGUMENT details if the call was not cancelled */
  char conn[64];        /* the connection (gRPC's peer string): its share of the budget */
  bool big;             /* a module over small_request_bytes: runs in the big lane */
  struct call *lane_next; /* waiting for a big-lane worker */
  char timeout_msg[160]; /* set when the server cut the stream (its DEADLINE_EXCEEDED details) */
  /* CheckStream */
  Shardcheck__V1__CheckChunk *first;
  uint8_t *mod;
  size_t mod_len, mod_cap;
  uint64_t chunks;
  /* Check */
  grpc_slice req_slice;
  check_job job;
  uv_work_t work;
  /* Health.Watch */
  int watch_service_status; /* SERVING/NOT_SERVING/SERVICE_UNKNOWN as last sent */
  bool watch_counted;       /* counted in srv_state.watches */
  char *watch_service;
  struct call *live_prev, *live_next;
} call;

/* --- the server, by owner ------------------------------------------------------------------------ */

/* Settings from the configuration. Written by srv_new (before srv_start) and by srv_reload (the
 * reloadable ones), both on the loop thread; read only on the loop thread: a check gets a copy of
 * `lim` in its job. max_message_bytes, workers and prearm are fixed at srv_new. */
typedef struct {
  check_limits lim;
  uint64_t max_message_bytes, workers, prearm;
  uint64_t max_inflight, grace_ms;
  uint64_t stream_msg_timeout_ms, stream_max_ms, send_timeout_ms, watch_max_ms;
  uint64_t small_request_bytes; /* modules over this run in the big lane */
} srv_settings;

/* gRPC and libuv objects, made by srv_new on the loop thread and destroyed by srv_teardown (server
 * and cq earlier, by the drain). The CQ thread uses server, cq and reg through gRPC's thread-safe
 * calls; uv handles are the loop's. */
typedef struct {
  uv_loop_t *loop;
  grpc_server *server;
  grpc_completion_queue *cq;
  void *reg[M__COUNT];
  uv_thread_t cq_thread;
  bool cq_thread_started;
  uv_async_t async;
  uv_timer_t grace;
  uv_timer_t sweep; /* stream timeouts, listener health */
  listener *lst;    /* plaintext: our own listener (see listener.h); NULL with TLS */
  grpc_server_credentials *fd_creds;
  ev shutdown_ev, cq_exit_ev;
  int closing_handles;
  void (*done)(void *);
  void *done_arg;
} srv_io;

/* What the CQ thread hands the loop thread: events in a FIFO under `mu` (then uv_async_send), and
 * `stopping` (atomic), which tells the CQ thread to stop re-arming call requests. */
typedef struct {
  pthread_mutex_t mu; /* guards head and tail */
  ev *head, *tail;
  atomic_int stopping;
} srv_handoff;

/* Services with their own locking, shared with the pool threads: `cache` (and through it `redis`).
 * `tokens` and `refl` are used on the loop thread only; srv_reload swaps `tokens` there. */
typedef struct {
  auth_tokens *tokens; /* NULL: no token auth */
  srv_cache *cache;
  redis_tier *redis;   /* shared cache tier; NULL = none */
  refl_index *refl;
} srv_services;

/* Loop thread only: the calls, admission, the big lane, memory and drain state. */
typedef struct {
  int64_t started_ns;
  bool draining, cq_closing, cq_shutdown_called, grace_over, listener_broken;
  uint64_t inflight, work_count, live_count;
  call *live;
  budget *mem;         /* the memory budget, total and per connection */
  budget *watches;     /* Health.Watch calls per connection */
  uint64_t trim_debt;  /* large buffers freed since the last malloc_trim */
  uint64_t calls_since_trim;
  int64_t last_trim_ns;
  bool trim_pending;
  uv_work_t trim_work;
  /* The big lane: checks of modules over small_request_bytes run on at most workers - 1 threads, so
   * one is always free for small checks; the rest wait here (FIFO). */
  uint64_t big_running;
  call *lane_head, *lane_tail;
  /* per-call warnings: at most WARNINGS_PER_INTERVAL logged per interval, the rest summed up */
  int64_t warn_interval_ns;
  uint64_t warns_logged, warns_suppressed[NSTATUS];
  listener_stats lst_final; /* the listener's figures when it closed */
} srv_state;

/* Loop thread only: the counters srv_metrics_text renders (metrics_text.c; it runs on the loop). */
typedef struct {
  uint64_t calls_total[M__COUNT][NSTATUS];
  uint64_t bytes_total[M__COUNT];
  uint64_t hist[NBUCKETS + 1];
  double hist_sum;
  uint64_t hist_count;
  uint64_t rejected_busy, rejected_memory, rejected_memory_conn, stream_timeouts, send_timeouts, unauthenticated;
  uint64_t analysis_regrown; /* analyses run again with a larger arena charge */
  uint64_t rejected_watch, watch_expired;
} srv_counters;

struct srv {
  srv_settings set;
  srv_io io;
  srv_handoff handoff;
  srv_services svc;
  srv_state st;
  srv_counters m;
};

/* Health: SERVING unless draining or the listener broke (loop thread). */
bool srv_serving(const srv *s);

/* --- shared by server.c (threads, life cycle, sweep) and calls.c (one call's life); loop thread -- */

/* Large buffers (LARGE_BYTES and up: small ones are reused as they are) freed add up to this
 * before malloc_trim returns the pages (on a pool thread). */
#define TRIM_AFTER_BYTES (32ull << 20)
#define LARGE_BYTES (1u << 20)

/* How long a call without a request message waits for its close (a reset) before it is answered
 * INVALID_ARGUMENT (no_request_message in calls.c, on_sweep in server.c). */
#define MISSING_WAIT_MS 200

/* Frees a call and releases what it holds (budget, in-flight slot, the live list). */
void srv_call_free(call *c);

/* Gives memory back after large requests: analysis arenas and buffers go to malloc's free lists,
 * which keep the pages unless trimmed. */
void srv_maybe_trim(srv *s);

/* Once per interval: one line counting the per-call warnings the rate limit held back. */
void srv_log_suppressed_warnings(srv *s, int64_t now);

/* Sends the final status (with an optional last message); logs the request once. */
void srv_finish(call *c, grpc_status_code code, const char *detail, uint8_t *resp, size_t len);

/* A Health.Watch sent its status (or the status changed): send again, end it, or wait. */
void srv_watch_after_send(call *c);

/* One completion-queue event, handed over by the CQ thread (on_async). */
void srv_on_event(srv *s, ev *e);

/* The completion queue is drained: joins the CQ thread, releases what is left, closes the handles. */
void srv_finish_shutdown(srv *s);

#endif
