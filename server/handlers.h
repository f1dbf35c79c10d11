/* handlers.h — the RPC handlers as pure functions: request bytes in, reply bytes + status out.
 *
 * Nothing here touches gRPC calls or the event loop (server.c does), so the handlers run on
 * whichever thread the server picks: Check on the libuv thread pool, the cheap ones inline. */
#ifndef SRV_HANDLERS_H
#define SRV_HANDLERS_H

#include <grpc/status.h>
#include <grpc/support/time.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "shardcheck.h"
#include "shardcheck/v1/shardcheck.pb-c.h"

typedef struct {
  grpc_status_code code;
  char *message;    /* malloc'd status details, or NULL */
  uint8_t *resp;    /* malloc'd serialized response message (code OK only), may be NULL if len 0 */
  size_t resp_len;
} rpc_reply;

void rpc_reply_clear(rpc_reply *r);
/* Sets code + printf message (and drops any response). */
void rpc_reply_error(rpc_reply *r, grpc_status_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Packs a protobuf-c message into r->resp with code OK. */
void rpc_reply_pack(rpc_reply *r, const ProtobufCMessage *msg);

/* Limits a check runs under: a snapshot of the configuration when the call was accepted. */
typedef struct {
  uint64_t max_module_bytes, max_arena_bytes;
  uint32_t max_depth, max_ops;
  uint64_t debug_delay_ms;
} check_limits;

typedef struct {
  /* Input: a serialized CheckRequest (Check), or a header plus the module (CheckStream). */
  const uint8_t *req_bytes;
  size_t req_len;
  const Shardcheck__V1__CheckRequest *hdr;
  const uint8_t *module;
  size_t module_len;
  check_limits lim;
  bool propagate;             /* req_bytes is a PropagateRequest (Propagate), run by propagate_run */
  srv_cache *cache;           /* NULL: no caching (Check only) */
  const atomic_int *cancel; /* set (by the loop thread) when the client cancelled or the deadline passed */
  gpr_timespec deadline;
  int64_t accepted_ns;        /* monotonic time the call was accepted */
  uint64_t arena_limit;       /* the analysis arena's limit: what the call was charged for it
                                 (at most lim.max_arena_bytes); 0 = lim.max_arena_bytes */
  /* Output. */
  rpc_reply reply;
  bool cache_hit;
  uint32_t errors, warnings, notes;
  uint64_t analysis_us;
  uint64_t arena_bytes; /* what the analysis arena held at its end (memory to give back) */
  bool arena_short;     /* the analysis needed more than arena_limit (< max_arena_bytes): the
                           caller may charge more and run it again */
} check_job;

/* Runs one check: decode, validate, cache lookup, sc_check, render, encode. Thread-safe. */
void check_run(check_job *j);

/* Runs one Propagate (j->req_bytes a PropagateRequest): decode, validate, sc_propagate, encode.
 * Thread-safe; server/propagate.c. */
void propagate_run(check_job *j);
/* check.c's pieces propagate.c shares: the request's mesh as the library's (borrowing its strings), the
 * deadline test and the CANCELLED/DEADLINE_EXCEEDED reply, the testing delay. */
int target_mesh_from_request(sc_arena *a, const Shardcheck__V1__TargetMesh *m, sc_target_mesh *out);
bool job_expired(gpr_timespec deadline);
void job_cancelled_reply(check_job *j, const char *where);
bool job_debug_delay(check_job *j);

/* Validates a CheckRequest's header fields (everything but the module): 0, or -1 with the reply set
 * to INVALID_ARGUMENT naming the field. */
int check_validate(const Shardcheck__V1__CheckRequest *req, rpc_reply *r);

void rpc_list_rules(const uint8_t *req, size_t len, rpc_reply *r);
void rpc_explain(const uint8_t *req, size_t len, rpc_reply *r);

typedef struct {
  check_limits lim;
  uint64_t max_message_bytes;
  uint32_t max_inflight, workers;
} caps_info;
void rpc_capabilities(const uint8_t *req, size_t len, const caps_info *info, rpc_reply *r);

/* grpc.health.v1: the status of `service` ("" and "shardcheck.v1.ShardCheck" are known).
 * Returns 1 SERVING, 2 NOT_SERVING, 3 SERVICE_UNKNOWN. */
int health_status(const char *service, bool serving);
/* Health.Check: NOT_FOUND for unknown services. */
void rpc_health_check(const uint8_t *req, size_t len, bool serving, rpc_reply *r);
/* Encodes a HealthCheckResponse with `status` into r. */
void health_encode(int status, rpc_reply *r);

int64_t now_ns(void); /* CLOCK_MONOTONIC */

#endif
