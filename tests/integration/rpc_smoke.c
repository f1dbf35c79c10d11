/* rpc_smoke.c — the C client library (client/rpc.h) against a running shardcheckd.
 *
 *   rpc_smoke HOST:PORT FILE...
 *
 * For every FILE: the report through Check and through CheckStream (forced with a tiny threshold
 * and chunk size) must equal local mode's report (sc_check + the same emitter, in this process),
 * in JSON and text. Then ListRules vs the rule table, Explain vs sc_explain_text, Health, an
 * unknown code, GetCapabilities, and an unreachable server. Exit 0 when everything matched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../helpers.h" /* test_read_file */
#include "rpc.h"
#include "shardcheck.h"

static int failures;

#define EXPECT(cond, ...)                                                                                              \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      failures++;                                                                                                      \
      fprintf(stderr, "rpc_smoke: FAIL %s:%d: ", __FILE__, __LINE__);                                                  \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

static char *local_report(const char *buf, size_t len, const sc_options *opt, sc_rpc_report_format fmt) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = NULL;
  char *out = NULL;
  if (a && sc_check(a, buf, len, opt, &r) == SC_OK)
    out = fmt == SC_RPC_REPORT_TEXT ? sc_report_text(r, false) : sc_report_json(r, true);
  sc_arena_free(a);
  return out;
}

static void check_file(const char *server, const char *path) {
  size_t len;
  char *buf = test_read_file(path, &len);
  EXPECT(buf, "cannot read %s", path);
  if (!buf)
    return;
  sc_options opt = {0};
  opt.input_name = path;
  for (int streamed = 0; streamed < 2; streamed++) {
    sc_rpc_config cfg = {0};
    cfg.timeout_ms = 60000;
    if (streamed) { /* many small chunks */
      cfg.stream_threshold = 1;
      cfg.chunk_bytes = len / 7 + 1;
    }
    char *err = NULL;
    sc_rpc_client *c = sc_rpc_connect(server, &cfg, &err);
    EXPECT(c, "connect: %s", err);
    for (int f = 0; c && f < 2; f++) {
      sc_rpc_report_format fmt = f ? SC_RPC_REPORT_TEXT : SC_RPC_REPORT_JSON;
      sc_rpc_render render = {fmt, true, false};
      sc_rpc_check_result res;
      int rc = sc_rpc_check(c, buf, len, &opt, &render, &res, &err);
      char *want = local_report(buf, len, &opt, fmt);
      if (!want) {
        EXPECT(rc != 0, "%s: local mode failed but the server answered", path);
      } else {
        EXPECT(rc == 0, "%s: %s", path, err ? err : "?");
        EXPECT(rc != 0 || strcmp(res.report, want) == 0, "%s (%s, %s): report differs from local mode", path,
               f ? "text" : "json", streamed ? "CheckStream" : "Check");
        /* stream_threshold 1: a module of one byte still goes unary */
        EXPECT(rc != 0 || res.streamed == (streamed == 1 && len > 1), "%s: streamed flag", path);
      }
      if (rc == 0)
        sc_rpc_check_result_free(&res);
      free(want);
      free(err);
      err = NULL;
    }
    sc_rpc_close(c);
  }
  /* The one-shot helper the CLI can use. */
  char *json = NULL, *err = NULL;
  int rc = sc_rpc_check_file(server, path, NULL, &json, &err);
  char *want = local_report(buf, len, &opt, SC_RPC_REPORT_JSON);
  EXPECT(!want || (rc == 0 && strcmp(json, want) == 0), "%s: sc_rpc_check_file differs (%s)", path, err ? err : "");
  free(want);
  free(json);
  free(err);
  free(buf);
}

static void check_api(const char *server) {
  char *err = NULL;
  sc_rpc_config cfg = {0};
  cfg.timeout_ms = 30000;
  sc_rpc_client *c = sc_rpc_connect(server, &cfg, &err);
  EXPECT(c, "connect: %s", err);
  if (!c)
    return;
  int st;
  EXPECT(sc_rpc_health(c, "", &st, &err) == 0 && st == 1, "health: %d %s", st, err ? err : "");
  EXPECT(sc_rpc_health(c, "nope", &st, &err) == 5, "health of an unknown service should be NOT_FOUND");
  free(err);
  err = NULL;
  sc_rpc_rule *rules;
  size_t n;
  EXPECT(sc_rpc_rules(c, &rules, &n, &err) == 0, "rules: %s", err ? err : "");
  EXPECT(n == sc_rule_count(), "rules: %zu from the server, %zu locally", n, sc_rule_count());
  for (size_t i = 0; i < n && i < sc_rule_count(); i++) {
    const char *name, *family, *code, *summary;
    sc_severity sev;
    sc_rule_info(i, &name, &family, &code, &sev, &summary);
    EXPECT(!strcmp(rules[i].name, name) && !strcmp(rules[i].code, code) && !strcmp(rules[i].family, family) &&
               !strcmp(rules[i].summary, summary) && rules[i].severity == sev,
           "rule %zu differs", i);
    char *text = NULL;
    EXPECT(sc_rpc_explain(c, code, &text, &err) == 0, "explain %s: %s", code, err ? err : "");
    char *want = sc_explain_text(code);
    EXPECT(text && want && !strcmp(text, want), "explain %s differs from local mode", code);
    free(text);
    free(want);
  }
  sc_rpc_rules_free(rules, n);
  char *text = NULL;
  EXPECT(sc_rpc_explain(c, "SC9999", &text, &err) == 5 && err && strstr(err, "NOT_FOUND"), "unknown code: %s",
         err ? err : "");
  free(err);
  err = NULL;
  char *caps = NULL;
  EXPECT(sc_rpc_capabilities_json(c, &caps, &err) == 0 && caps && strstr(caps, "\"rules_version\": \"") &&
             strstr(caps, sc_rules_version()),
         "capabilities: %s", err ? err : caps);
  free(caps);
  sc_rpc_close(c);
  /* Nothing listens on port 1 of 127.0.0.1. */
  c = sc_rpc_connect("127.0.0.1:1", NULL, &err);
  EXPECT(c && sc_rpc_health(c, "", &st, &err) == 14 && strstr(err, "UNAVAILABLE"), "unreachable server: %s",
         err ? err : "");
  free(err);
  sc_rpc_close(c);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: rpc_smoke HOST:PORT FILE...\n");
    return 2;
  }
  check_api(argv[1]);
  for (int i = 2; i < argc; i++)
    check_file(argv[1], argv[i]);
  printf("rpc_smoke: %d files, %d failures\n", argc - 2, failures);
  return failures ? 1 : 0;
}
