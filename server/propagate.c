/* propagate.c — the Propagate handler: runs on a libuv pool thread like Check (calls.c queues both),
 * one arena per request under the same limits, cancel flag and deadline.
 *
 * decode -> validate options and mesh (INVALID_ARGUMENT naming the field) -> sc_propagate -> encode
 * PropagateResponse. A module that does not parse is INVALID_ARGUMENT with the library's message. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "handlers.h"
#include "shardcheck.h"

/* The request's options as the library's (mesh and strings borrowed from the request); 0, or -1 with
 * the reply set to INVALID_ARGUMENT naming the field. */
static int options_from_request(sc_arena *arena, const Shardcheck__V1__PropagateRequest *req, sc_propagate_options *o,
                                sc_target_mesh *mesh, rpc_reply *r) {
  memset(o, 0, sizeof *o);
  if ((unsigned)req->format > SHARDCHECK__V1__INPUT_FORMAT__INPUT_FORMAT_EXPORTED) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "format: unknown input format %d", (int)req->format);
    return -1;
  }
  if (req->strategy[0] && sc_propagate_strategy_parse(req->strategy, &o->strategy)) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT,
                    "strategy: unknown strategy \"%.64s\" (pipeline, basic, aggressive, op-priority, "
                    "user-priority or none)",
                    req->strategy);
    return -1;
  }
  if (req->annotate_rules) /* as the CLI's --annotate-rules: the rules alone */
    o->strategy = SC_PROPAGATE_NONE;
  if (req->mesh) {
    const char *error = NULL;
    if (target_mesh_from_request(arena, req->mesh, mesh)) {
      rpc_reply_error(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
      return -1;
    }
    if (sc_mesh_validate(arena, mesh, &error)) {
      rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "%s", error);
      return -1;
    }
    o->mesh = mesh;
  }
  o->input_format = (sc_format)req->format;
  o->annotate_rules = req->annotate_rules;
  o->conservative = req->conservative;
  o->keep_sharding_rules = req->keep_sharding_rules;
  o->dedup_functions_fully = req->dedup_functions_fully;
  o->keep_redundant_reshards = req->keep_redundant_reshards;
  o->insert_reshards_partial = req->insert_reshards_partial;
  o->split_input_file = req->split_input_file;
  o->json = req->json;
  o->insert_reshards = req->insert_reshards;
  o->reshards_to_collectives = req->reshards_to_collectives;
  o->propagate_to_func_results = req->propagate_to_func_results;
  return 0;
}

static void encode_response(check_job *j, const sc_propagate_result *res) {
  size_t n = res->nmessages;
  Shardcheck__V1__PropagateMessage *msgs = calloc(n ? n : 1, sizeof *msgs);
  Shardcheck__V1__PropagateMessage **ptrs = calloc(n ? n : 1, sizeof *ptrs);
  if (!msgs || !ptrs) {
    rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory encoding %zu messages", n);
  } else {
    for (size_t i = 0; i < n; i++) {
      shardcheck__v1__propagate_message__init(&msgs[i]);
      msgs[i].severity = (Shardcheck__V1__Severity)res->messages[i].severity;
      msgs[i].line = res->messages[i].line;
      msgs[i].column = res->messages[i].col;
      msgs[i].message = (char *)res->messages[i].message;
      ptrs[i] = &msgs[i];
    }
    Shardcheck__V1__PropagateResponse out = SHARDCHECK__V1__PROPAGATE_RESPONSE__INIT;
    out.text = (char *)res->text;
    out.n_messages = n;
    out.messages = ptrs;
    rpc_reply_pack(&j->reply, &out.base);
  }
  free(msgs);
  free(ptrs);
}

static void analyze(check_job *j, const Shardcheck__V1__PropagateRequest *req) {
  if (!job_debug_delay(j)) {
    job_cancelled_reply(j, "before the analysis started");
    return;
  }
  int64_t t0 = now_ns();
  uint64_t arena_limit =
      j->arena_limit && j->arena_limit < j->lim.max_arena_bytes ? j->arena_limit : j->lim.max_arena_bytes;
  j->arena_short = false;
  sc_arena *arena = sc_arena_new(arena_limit);
  if (!arena) {
    rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory creating the analysis arena");
    return;
  }
  sc_target_mesh mesh = {0};
  sc_propagate_options opt;
  if (options_from_request(arena, req, &opt, &mesh, &j->reply) == 0) {
    opt.max_depth = j->lim.max_depth;
    opt.max_ops = j->lim.max_ops;
    opt.cancel = j->cancel;
    if (getrandom(&opt.hash_seed, sizeof opt.hash_seed, GRND_NONBLOCK) != (ssize_t)sizeof opt.hash_seed)
      opt.hash_seed = 0; /* the library then keys its tables with addresses */
    sc_propagate_result res = {0};
    const char *mod = req->module.len ? (const char *)req->module.data : "";
    sc_status st = sc_propagate(arena, mod, req->module.len, &opt, &res);
    const char *failure = res.failure ? res.failure : "";
    switch (st) {
    case SC_OK:
      j->analysis_us = (uint64_t)(now_ns() - t0) / 1000;
      encode_response(j, &res);
      break;
    case SC_ERR_CANCELLED:
      job_cancelled_reply(j, "during the analysis");
      break;
    case SC_ERR_LIMIT:
      j->arena_short = arena_limit < j->lim.max_arena_bytes; /* calls.c may run it again in a larger arena */
      rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "analysis limit exceeded (max_arena_bytes=%llu)%s%s",
                      (unsigned long long)j->lim.max_arena_bytes, failure[0] ? ": " : "", failure);
      break;
    case SC_ERR_INVALID:
      rpc_reply_error(&j->reply, GRPC_STATUS_INVALID_ARGUMENT, "%s: %s", req->file_name[0] ? req->file_name : "<stdin>",
                      failure[0] ? failure : "invalid options");
      break;
    }
  }
  j->arena_bytes = sc_arena_used(arena);
  sc_arena_free(arena);
}

void propagate_run(check_job *j) {
  Shardcheck__V1__PropagateRequest *req = shardcheck__v1__propagate_request__unpack(NULL, j->req_len, j->req_bytes);
  if (!req) {
    rpc_reply_error(&j->reply, GRPC_STATUS_INVALID_ARGUMENT,
                    "cannot decode shardcheck.v1.PropagateRequest (%zu bytes)", j->req_len);
    return;
  }
  if (req->module.len > j->lim.max_module_bytes)
    rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "module: %zu bytes, over the limit max_module_bytes=%llu",
                    req->module.len, (unsigned long long)j->lim.max_module_bytes);
  else
    analyze(j, req);
  shardcheck__v1__propagate_request__free_unpacked(req, NULL);
}
