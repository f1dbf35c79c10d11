/* handlers.c — ListRules, Explain, GetCapabilities, Health (cheap: run on the loop thread). */
#include "handlers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grpc/health/v1/health.pb-c.h"
#include "shardcheck.h"

int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void rpc_reply_clear(rpc_reply *r) {
  free(r->message);
  free(r->resp);
  memset(r, 0, sizeof *r);
}

void rpc_reply_error(rpc_reply *r, grpc_status_code code, const char *fmt, ...) {
  rpc_reply_clear(r);
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  r->code = code;
  r->message = strdup(buf);
}

void rpc_reply_pack(rpc_reply *r, const ProtobufCMessage *msg) {
  rpc_reply_clear(r);
  size_t n = protobuf_c_message_get_packed_size(msg);
  r->resp = malloc(n ? n : 1);
  if (!r->resp) {
    rpc_reply_error(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory encoding a %zu-byte response", n);
    return;
  }
  r->resp_len = protobuf_c_message_pack(msg, r->resp);
  r->code = GRPC_STATUS_OK;
}

void rpc_list_rules(const uint8_t *req, size_t len, rpc_reply *r) {
  Shardcheck__V1__ListRulesRequest *in = shardcheck__v1__list_rules_request__unpack(NULL, len, req);
  if (!in) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode shardcheck.v1.ListRulesRequest");
    return;
  }
  shardcheck__v1__list_rules_request__free_unpacked(in, NULL);
  size_t n = sc_rule_count();
  Shardcheck__V1__Rule *rules = calloc(n ? n : 1, sizeof *rules);
  Shardcheck__V1__Rule **ptrs = calloc(n ? n : 1, sizeof *ptrs);
  if (!rules || !ptrs) {
    free(rules);
    free(ptrs);
    rpc_reply_error(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const char *name, *family, *code, *summary;
    sc_severity sev;
    sc_rule_info(i, &name, &family, &code, &sev, &summary);
    shardcheck__v1__rule__init(&rules[i]);
    rules[i].name = (char *)(name ? name : "");
    rules[i].family = (char *)(family ? family : "");
    rules[i].code = (char *)(code ? code : "");
    rules[i].severity = (Shardcheck__V1__Severity)sev;
    rules[i].summary = (char *)(summary ? summary : "");
    ptrs[i] = &rules[i];
  }
  Shardcheck__V1__ListRulesResponse out = SHARDCHECK__V1__LIST_RULES_RESPONSE__INIT;
  out.n_rules = n;
  out.rules = ptrs;
  out.rules_version = (char *)sc_rules_version();
  rpc_reply_pack(r, &out.base);
  free(rules);
  free(ptrs);
}

void rpc_explain(const uint8_t *req, size_t len, rpc_reply *r) {
  Shardcheck__V1__ExplainRequest *in = shardcheck__v1__explain_request__unpack(NULL, len, req);
  if (!in) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode shardcheck.v1.ExplainRequest");
    return;
  }
  /* The page is what `shardcheck explain` prints; the structured fields come from the catalog
   * entry when the argument is a code (the library may also accept other spellings). */
  char *text = in->code[0] ? sc_explain_text(in->code) : NULL;
  const sc_catalog_entry *e = text ? sc_catalog_find(in->code) : NULL;
  if (!in->code[0])
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "code: empty (expected a diagnostic code such as SC0301)");
  else if (!text)
    rpc_reply_error(r, GRPC_STATUS_NOT_FOUND, "code: unknown diagnostic code \"%.64s\"", in->code);
  else {
    Shardcheck__V1__ExplainResponse out = SHARDCHECK__V1__EXPLAIN_RESPONSE__INIT;
#define S(x) (char *)((x) ? (x) : "")
    out.code = e ? S(e->code) : in->code;
    if (e) {
      out.title = S(e->title);
      out.explanation = S(e->explanation);
      out.bad_example = S(e->bad_example);
      out.good_example = S(e->good_example);
      out.bad_mesh = S(e->bad_mesh);
    }
    out.text = text;
#undef S
    rpc_reply_pack(r, &out.base);
  }
  free(text);
  shardcheck__v1__explain_request__free_unpacked(in, NULL);
}

void rpc_capabilities(const uint8_t *req, size_t len, const caps_info *info, rpc_reply *r) {
  Shardcheck__V1__GetCapabilitiesRequest *in = shardcheck__v1__get_capabilities_request__unpack(NULL, len, req);
  if (!in) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode shardcheck.v1.GetCapabilitiesRequest");
    return;
  }
  shardcheck__v1__get_capabilities_request__free_unpacked(in, NULL);
  static Shardcheck__V1__InputFormat formats[] = {SHARDCHECK__V1__INPUT_FORMAT__INPUT_FORMAT_AUTO,
                                                  SHARDCHECK__V1__INPUT_FORMAT__INPUT_FORMAT_STABLEHLO,
                                                  SHARDCHECK__V1__INPUT_FORMAT__INPUT_FORMAT_HLO,
                                                  SHARDCHECK__V1__INPUT_FORMAT__INPUT_FORMAT_BYTECODE,
                                                  SHARDCHECK__V1__INPUT_FORMAT__INPUT_FORMAT_EXPORTED};
  static Shardcheck__V1__ReportFormat reports[] = {SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_JSON,
                                                   SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_TEXT,
                                                   SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_SARIF,
                                                   SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_HTML};
  Shardcheck__V1__Limits lim = SHARDCHECK__V1__LIMITS__INIT;
  lim.max_message_bytes = info->max_message_bytes;
  lim.max_module_bytes = info->lim.max_module_bytes;
  lim.max_arena_bytes = info->lim.max_arena_bytes;
  lim.max_inflight = info->max_inflight;
  lim.max_depth = info->lim.max_depth;
  lim.max_ops = info->lim.max_ops;
  Shardcheck__V1__Capabilities out = SHARDCHECK__V1__CAPABILITIES__INIT;
  out.version = (char *)SC_VERSION;
  out.report_schema = (char *)SC_REPORT_SCHEMA;
  out.rules_version = (char *)sc_rules_version();
  out.n_input_formats = sizeof formats / sizeof formats[0];
  out.input_formats = formats;
  out.n_report_formats = sizeof reports / sizeof reports[0];
  out.report_formats = reports;
  out.limits = &lim;
  out.workers = info->workers;
  out.rule_count = (uint32_t)sc_rule_count();
  rpc_reply_pack(r, &out.base);
}

int health_status(const char *service, bool serving) {
  if (service[0] && strcmp(service, "shardcheck.v1.ShardCheck") != 0)
    return GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN;
  return serving ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
                 : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
}

void health_encode(int status, rpc_reply *r) {
  Grpc__Health__V1__HealthCheckResponse out = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
  out.status = (Grpc__Health__V1__HealthCheckResponse__ServingStatus)status;
  rpc_reply_pack(r, &out.base);
}

void rpc_health_check(const uint8_t *req, size_t len, bool serving, rpc_reply *r) {
  Grpc__Health__V1__HealthCheckRequest *in = grpc__health__v1__health_check_request__unpack(NULL, len, req);
  if (!in) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode grpc.health.v1.HealthCheckRequest");
    return;
  }
  int st = health_status(in->service, serving);
  if (st == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN)
    rpc_reply_error(r, GRPC_STATUS_NOT_FOUND, "service: unknown service \"%.128s\"", in->service);
  else
    health_encode(st, r);
  grpc__health__v1__health_check_request__free_unpacked(in, NULL);
}
