/* test_server_parts.c — the daemon's pieces without gRPC: the result cache, the config builder,
 * reflection on the embedded descriptor set, request validation, the Check handler and the memory
 * budget. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "budget.h"
#include "cache.h"
#include "config.h"
#include "listener.h"
#include "google/protobuf/descriptor.pb-c.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "handlers.h"
#include "reflection.h"
#include "shardcheck.h"

static cache_value val(const char *report, uint32_t errors) {
  cache_value v = {0};
  v.report = (char *)report;
  v.report_len = strlen(report);
  v.errors = errors;
  return v;
}

static void key(uint8_t k[32], int i) {
  memset(k, 0, 32);
  memcpy(k, &i, sizeof i);
  k[31] = (uint8_t)i;
}

Test(cache, hit_miss_and_copy) {
  srv_cache *c = cache_new(1 << 20);
  uint8_t k1[32], k2[32];
  key(k1, 1);
  key(k2, 2);
  cache_value v = val("{\"report\":1}", 3), out;
  cache_put(c, k1, &v);
  cr_assert(cache_get(c, k1, &out));
  cr_assert_str_eq(out.report, "{\"report\":1}");
  cr_assert_eq(out.errors, 3);
  cr_assert_neq(out.report, v.report, "the caller gets its own copy");
  cache_value_clear(&out);
  cr_assert_not(cache_get(c, k2, &out));
  cache_stats st;
  cache_get_stats(c, &st);
  cr_assert_eq(st.hits, 1);
  cr_assert_eq(st.misses, 1);
  cr_assert_eq(st.entries, 1);
  cache_free(c);
}

Test(cache, lru_bounded_by_bytes) {
  char big[1000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  cache_value v = val(big, 0), out;
  srv_cache *c = cache_new(3 * (sizeof big + 200)); /* room for about three entries */
  uint8_t k[32];
  for (int i = 0; i < 3; i++) {
    key(k, i);
    cache_put(c, k, &v);
  }
  key(k, 0); /* touch 0: 1 is now the least recently used */
  cr_assert(cache_get(c, k, &out));
  cache_value_clear(&out);
  key(k, 3);
  cache_put(c, k, &v);
  cache_stats st;
  cache_get_stats(c, &st);
  cr_assert_leq(st.bytes, st.limit);
  cr_assert_geq(st.evictions, 1);
  key(k, 1);
  cr_assert_not(cache_get(c, k, &out), "the least recently used entry was evicted");
  key(k, 0);
  cr_assert(cache_get(c, k, &out), "the recently used entry survived");
  cache_value_clear(&out);
  cache_set_limit(c, 0);
  cache_get_stats(c, &st);
  cr_assert_eq(st.entries, 0);
  cr_assert_eq(st.bytes, 0);
  key(k, 5);
  cache_put(c, k, &v);
  cr_assert_not(cache_get(c, k, &out), "a zero limit disables the cache");
  cache_free(c);
}

Test(cache, many_entries_rehash) {
  srv_cache *c = cache_new(64 << 20);
  cache_value v = val("r", 0), out;
  uint8_t k[32];
  for (int i = 0; i < 5000; i++) {
    key(k, i);
    cache_put(c, k, &v);
  }
  for (int i = 0; i < 5000; i += 97) {
    key(k, i);
    cr_assert(cache_get(c, k, &out), "entry %d", i);
    cache_value_clear(&out);
  }
  cache_free(c);
}

static int build(const char *json, const char *const *flags, int nflags, srv_config *cfg, char **err) {
  char path[] = "/tmp/sc-config-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs(json, f);
  fclose(f);
  char *argv[16] = {"shardcheckd", "--config", path};
  int argc = 3;
  for (int i = 0; i < nflags; i++)
    argv[argc++] = (char *)flags[i];
  int rc = config_build(argc, argv, cfg, err);
  remove(path);
  return rc;
}

Test(config, file_then_flags) {
  srv_config c;
  char *err = NULL;
  const char *flags[] = {"--workers", "3", "--max-inflight=9"};
  int rc = build("{\"workers\": 8, \"max_inflight\": 5, \"limits\": {\"max_message_bytes\": \"2MiB\", \"max_ops\": 77},"
                 " \"cache_bytes\": \"1GiB\", \"log_level\": \"debug\", \"_comment\": \"x\"}",
                 flags, 3, &c, &err);
  cr_assert_eq(rc, 0, "%s", err ? err : "");
  cr_assert_eq(c.workers, 3, "flags override the file");
  cr_assert_eq(c.max_inflight, 9);
  cr_assert_eq(c.max_message_bytes, 2u << 20);
  cr_assert_eq(c.max_ops, 77);
  cr_assert_eq(c.cache_bytes, 1ull << 30);
  cr_assert_eq(c.log_level, LOG_DEBUG);
  cr_assert_str_eq(c.listen, "127.0.0.1:50051", "loopback by default");
  srv_config d;
  cr_assert_eq(build("{\"workers\": 3, \"max_inflight\": 9, \"limits\": {\"max_message_bytes\": \"2MiB\"}}", NULL, 0,
                     &d, &err),
               0);
  char *diff = config_diff(&c, &d, false);
  cr_assert(diff && strstr(diff, "limits.max_ops") && strstr(diff, "cache_bytes") && !strstr(diff, "workers"),
            "diff: %s", diff ? diff : "(none)");
  free(diff);
  config_free(&c);
  config_free(&d);
}

Test(config, errors_name_the_setting) {
  srv_config c;
  char *err = NULL;
  cr_assert_eq(build("{\"limits\": {\"max_opz\": 1}}", NULL, 0, &c, &err), -1);
  cr_assert(err && strstr(err, "limits.max_opz"), "%s", err);
  free(err);
  err = NULL;
  cr_assert_eq(build("{\"cache_bytes\": \"12 parsecs\"}", NULL, 0, &c, &err), -1);
  cr_assert(err && strstr(err, "cache_bytes"), "%s", err);
  free(err);
  err = NULL;
  cr_assert_eq(build("{\"log_level\": \"loud\"}", NULL, 0, &c, &err), -1);
  free(err);
  err = NULL;
  cr_assert_eq(build("[1]", NULL, 0, &c, &err), -1);
  free(err);
  err = NULL;
  const char *flags[] = {"--tls-cert", "a.pem"};
  cr_assert_eq(build("{}", flags, 2, &c, &err), -1, "a certificate without a key");
  free(err);
}

/* Off loopback, plaintext without tokens needs an explicit --insecure-listen; nothing is bound here. */
Test(config, plaintext_off_loopback_needs_consent) {
  srv_config c;
  char *err = NULL;
  const char *open_flags[] = {"--listen", "0.0.0.0:50051"};
  cr_assert_eq(build("{}", open_flags, 2, &c, &err), -1);
  cr_assert(err && strstr(err, "--insecure-listen"), "%s", err ? err : "");
  free(err);
  err = NULL;
  const char *consent[] = {"--listen", "0.0.0.0:50051", "--insecure-listen"};
  cr_assert_eq(build("{}", consent, 3, &c, &err), 0, "%s", err ? err : "");
  cr_assert(c.insecure_listen);
  config_free(&c);
  cr_assert_eq(build("{\"listen\": \"[::]:1\", \"insecure_listen\": true}", NULL, 0, &c, &err), 0, "%s", err ? err : "");
  config_free(&c);
  const char *tokens[] = {"--listen", "10.0.0.1:1", "--token-file", "/nonexistent"};
  cr_assert_eq(build("{}", tokens, 4, &c, &err), 0, "tokens count as protection: %s", err ? err : "");
  config_free(&c);
  cr_assert_eq(build("{\"insecure_listen\": 1}", NULL, 0, &c, &err), -1, "a bool is true or false");
  free(err);
  cr_assert(net_is_loopback("127.0.0.1:1") && net_is_loopback("127.9.9.9:0") && net_is_loopback("[::1]:5") &&
            net_is_loopback("localhost:1") && net_is_loopback("unix:/tmp/s"));
  cr_assert(!net_is_loopback("0.0.0.0:1") && !net_is_loopback("[::]:1") && !net_is_loopback("128.0.0.1:1") &&
            !net_is_loopback("example.com:1") && !net_is_loopback("nonsense"));
}

Test(config, reload_keeps_restart_only_settings) {
  srv_config running, next;
  char *err = NULL;
  const char *a[] = {"--workers", "3", "--max-inflight", "5", "--max-connections", "7", "--listen", "127.0.0.1:1"};
  const char *b[] = {"--workers", "4", "--max-inflight", "6", "--max-connections", "8", "--listen", "127.0.0.1:2"};
  cr_assert_eq(build("{}", a, 8, &running, &err), 0);
  cr_assert_eq(build("{}", b, 8, &next, &err), 0);
  config_keep_restart_settings(&next, &running);
  cr_assert_eq(next.workers, 3);
  cr_assert_eq(next.max_connections, 7);
  cr_assert_str_eq(next.listen, "127.0.0.1:1");
  cr_assert_eq(next.max_inflight, 6, "reloadable settings take the new value");
  cr_assert_str_eq(running.listen, "127.0.0.1:2", "swapped: the old config frees the unused value");
  config_free(&running);
  config_free(&next);
}

Test(auth, tokens_hashed_and_compared) {
  char path[] = "/tmp/sc-tokens-XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  const char *text = "# comment\n\n  alpha \nbeta\r\n";
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  char *err = NULL;
  auth_tokens *t = auth_tokens_load(path, &err);
  cr_assert(t, "%s", err ? err : "");
  cr_assert_eq(auth_tokens_count(t), 2);
  cr_assert(auth_check_value(t, "Bearer alpha", 12));
  cr_assert(auth_check_value(t, "bearer beta", 11), "the scheme is case-insensitive");
  cr_assert(!auth_check_value(t, "Bearer alph", 11));
  cr_assert(!auth_check_value(t, "Bearer alphaa", 13));
  cr_assert(!auth_check_value(t, "Bearer  alpha", 13));
  cr_assert(!auth_check_value(t, "Basic alpha", 11));
  cr_assert(!auth_check_value(t, "alpha", 5));
  cr_assert(!auth_check_value(t, "Bearer ", 7));
  auth_tokens_free(t);
  FILE *f = fopen(path, "w");
  fputs("# only comments\n", f);
  fclose(f);
  cr_assert_null(auth_tokens_load(path, &err), "a file without tokens is an error");
  cr_assert(err && strstr(err, "no tokens"), "%s", err);
  free(err);
  err = NULL;
  unlink(path);
  cr_assert_null(auth_tokens_load(path, &err));
  free(err);
}

Test(reflection, embedded_descriptor_set) {
  refl_index *ix = refl_index_new(sc_descriptor_set, sc_descriptor_set_len);
  cr_assert(ix);
  cr_assert_eq(refl_service_count(ix), 4);
  const char *symbols[] = {"shardcheck.v1.ShardCheck", "shardcheck.v1.ShardCheck.CheckStream", "shardcheck.v1.MeshAxis",
                           "shardcheck.v1.CheckRequest.mesh", "shardcheck.v1.AXIS_TYPE_MANUAL",
                           "grpc.health.v1.HealthCheckResponse.ServingStatus"};
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    Grpc__Reflection__V1alpha__ServerReflectionRequest req = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__INIT;
    req.message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL;
    req.file_containing_symbol = (char *)symbols[i];
    uint8_t buf[512];
    size_t n = protobuf_c_message_pack(&req.base, buf);
    rpc_reply r = {0};
    refl_handle(ix, buf, n, &r);
    cr_assert_eq(r.code, GRPC_STATUS_OK);
    Grpc__Reflection__V1alpha__ServerReflectionResponse *resp =
        grpc__reflection__v1alpha__server_reflection_response__unpack(NULL, r.resp_len, r.resp);
    cr_assert(resp);
    cr_assert_eq(resp->message_response_case,
                 GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE,
                 "symbol %s", symbols[i]);
    Google__Protobuf__FileDescriptorProto *fd = google__protobuf__file_descriptor_proto__unpack(
        NULL, resp->file_descriptor_response->file_descriptor_proto[0].len,
        resp->file_descriptor_response->file_descriptor_proto[0].data);
    cr_assert(fd);
    cr_assert(strstr(fd->name, strncmp(symbols[i], "grpc", 4) ? "shardcheck.proto" : "health.proto"), "%s", fd->name);
    google__protobuf__file_descriptor_proto__free_unpacked(fd, NULL);
    grpc__reflection__v1alpha__server_reflection_response__free_unpacked(resp, NULL);
    rpc_reply_clear(&r);
  }
  rpc_reply r = {0};
  refl_handle(ix, (const uint8_t *)"\x1a\xff", 2, &r);
  cr_assert_eq(r.code, GRPC_STATUS_INVALID_ARGUMENT);
  rpc_reply_clear(&r);
  refl_index_free(ix);
}

static const char *MODULE = "module @m attributes {mhlo.num_partitions = 1 : i32} {\n"
                            "  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                            "    %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>\n"
                            "    return %0 : tensor<8xf32>\n"
                            "  }\n"
                            "}\n";

static check_job job_for(Shardcheck__V1__CheckRequest *req, uint8_t **buf, atomic_int *cancel) {
  size_t n = protobuf_c_message_get_packed_size(&req->base);
  *buf = malloc(n + 1);
  protobuf_c_message_pack(&req->base, *buf);
  check_job j;
  memset(&j, 0, sizeof j);
  j.req_bytes = *buf;
  j.req_len = n;
  j.lim = (check_limits){1 << 20, 256 << 20, 256, 1000000, 0};
  j.cancel = cancel;
  j.deadline = gpr_inf_future(GPR_CLOCK_MONOTONIC);
  j.accepted_ns = now_ns();
  return j;
}

Test(check, report_equals_local_and_caches) {
  Shardcheck__V1__CheckRequest req = SHARDCHECK__V1__CHECK_REQUEST__INIT;
  req.module.data = (uint8_t *)MODULE;
  req.module.len = strlen(MODULE);
  req.file_name = "m.mlir";
  uint8_t *buf;
  atomic_int cancel = 0;
  srv_cache *cache = cache_new(1 << 20);
  check_job j = job_for(&req, &buf, &cancel);
  j.cache = cache;
  check_run(&j);
  cr_assert_eq(j.reply.code, GRPC_STATUS_OK, "%s", j.reply.message ? j.reply.message : "");
  Shardcheck__V1__CheckResponse *resp = shardcheck__v1__check_response__unpack(NULL, j.reply.resp_len, j.reply.resp);
  cr_assert(resp);
  sc_arena *a = sc_arena_new(0);
  sc_options opt = {0};
  opt.input_name = "m.mlir";
  sc_report *rep;
  cr_assert_eq(sc_check(a, MODULE, strlen(MODULE), &opt, &rep), SC_OK);
  char *want = sc_report_json(rep, false);
  cr_assert_str_eq(resp->report, want, "the daemon's report is local mode's report");
  cr_assert_not(resp->cache_hit);
  cr_assert_str_eq(resp->sha256, rep->sha256);
  free(want);
  sc_arena_free(a);
  shardcheck__v1__check_response__free_unpacked(resp, NULL);
  rpc_reply_clear(&j.reply);
  check_run(&j);
  resp = shardcheck__v1__check_response__unpack(NULL, j.reply.resp_len, j.reply.resp);
  cr_assert(resp && resp->cache_hit, "the same request again is a cache hit");
  shardcheck__v1__check_response__free_unpacked(resp, NULL);
  rpc_reply_clear(&j.reply);
  cache_free(cache);
  free(buf);
}

Test(check, statuses) {
  Shardcheck__V1__CheckRequest req = SHARDCHECK__V1__CHECK_REQUEST__INIT;
  req.module.data = (uint8_t *)MODULE;
  req.module.len = strlen(MODULE);
  uint8_t *buf;
  atomic_int cancel = 1;
  check_job j = job_for(&req, &buf, &cancel);
  check_run(&j);
  cr_assert_eq(j.reply.code, GRPC_STATUS_CANCELLED, "a cancelled call does not run");
  rpc_reply_clear(&j.reply);
  cancel = 0;
  j.deadline = gpr_time_sub(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(1, GPR_TIMESPAN));
  check_run(&j);
  cr_assert_eq(j.reply.code, GRPC_STATUS_DEADLINE_EXCEEDED);
  rpc_reply_clear(&j.reply);
  j.deadline = gpr_inf_future(GPR_CLOCK_MONOTONIC);
  j.lim.max_module_bytes = 10;
  check_run(&j);
  cr_assert_eq(j.reply.code, GRPC_STATUS_RESOURCE_EXHAUSTED);
  cr_assert(strstr(j.reply.message, "max_module_bytes=10"), "%s", j.reply.message);
  rpc_reply_clear(&j.reply);
  j.req_bytes = (const uint8_t *)"\x12\xff\x01\x78";
  j.req_len = 4;
  check_run(&j);
  cr_assert_eq(j.reply.code, GRPC_STATUS_INVALID_ARGUMENT);
  rpc_reply_clear(&j.reply);
  free(buf);
}

Test(check, mesh_validation_names_the_field) {
  Shardcheck__V1__CheckRequest req = SHARDCHECK__V1__CHECK_REQUEST__INIT;
  Shardcheck__V1__TargetMesh mesh = SHARDCHECK__V1__TARGET_MESH__INIT;
  Shardcheck__V1__MeshAxis ax[2] = {SHARDCHECK__V1__MESH_AXIS__INIT, SHARDCHECK__V1__MESH_AXIS__INIT};
  Shardcheck__V1__MeshAxis *axp[2] = {&ax[0], &ax[1]};
  int64_t ids[4] = {0, 1, 2, 2};
  req.mesh = &mesh;
  rpc_reply r = {0};
  cr_assert_eq(check_validate(&req, &r), -1);
  cr_assert(strstr(r.message, "mesh.axes"));
  rpc_reply_clear(&r);
  mesh.axes = axp;
  mesh.n_axes = 2;
  ax[0].name = "x";
  ax[0].size = 2;
  ax[1].name = "y";
  ax[1].size = 2;
  cr_assert_eq(check_validate(&req, &r), 0);
  ax[1].size = -3;
  cr_assert_eq(check_validate(&req, &r), -1);
  cr_assert(strstr(r.message, "mesh.axes[1].size"), "%s", r.message);
  rpc_reply_clear(&r);
  ax[1].size = 2;
  mesh.device_ids = ids;
  mesh.n_device_ids = 4;
  cr_assert_eq(check_validate(&req, &r), -1);
  cr_assert(strstr(r.message, "mesh.device_ids[3]") && strstr(r.message, "duplicate"), "%s", r.message);
  rpc_reply_clear(&r);
  ids[3] = 3;
  cr_assert_eq(check_validate(&req, &r), 0);
}

Test(budget, total_and_connection_share) {
  budget *b = budget_new();
  cr_assert_not_null(b);
  budget_set_limits(b, 1000, 0); /* a quarter per connection */
  cr_assert_eq(budget_per_connection(b), 250);
  cr_assert_eq(budget_charge(b, "fd:7", 200), BUDGET_OK);
  cr_assert_eq(budget_charge(b, "fd:7", 51), BUDGET_CONNECTION_FULL, "past the connection's share");
  cr_assert_eq(budget_charge(b, "fd:7", 50), BUDGET_OK, "up to the share");
  cr_assert_eq(budget_charge(b, "fd:8", 250), BUDGET_OK);
  cr_assert_eq(budget_charge(b, "fd:9", 250), BUDGET_OK);
  cr_assert_eq(budget_charge(b, "fd:10", 251), BUDGET_FULL, "the total is checked first");
  cr_assert_eq(budget_charge(b, "fd:10", 249), BUDGET_OK);
  cr_assert_eq(budget_charge(b, "fd:11", 2), BUDGET_FULL, "past the total");
  cr_assert_eq(budget_used(b), 999);
  budget_release(b, "fd:7", 250);
  cr_assert_eq(budget_connection_used(b, "fd:7"), 0);
  cr_assert_eq(budget_charge(b, "fd:11", 2), BUDGET_OK, "released bytes are free again");
  budget_force(b, "fd:8", 500); /* an answer already rendered: charged whatever the limits */
  cr_assert_eq(budget_used(b), 1251);
  budget_release(b, "fd:8", 750);
  budget_release(b, "fd:9", 250);
  budget_release(b, "fd:10", 249);
  budget_release(b, "fd:11", 2);
  cr_assert_eq(budget_used(b), 0);
  cr_assert_eq(budget_charge(b, "fd:12", 1001), BUDGET_FULL, "more than the whole budget");
  budget_free(b);
}

Test(budget, explicit_share_capped_by_total) {
  budget *b = budget_new();
  budget_set_limits(b, 1000, 400);
  cr_assert_eq(budget_per_connection(b), 400);
  budget_set_limits(b, 1000, 5000);
  cr_assert_eq(budget_per_connection(b), 1000);
  budget_free(b);
}
