/* remote.c — the CLI's commands through shardcheckd (see remote.h), on top of rpc.h. */
#include "remote.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

#define EXIT_FINDINGS 1
#define EXIT_TROUBLE 2

static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

void remote_config_from_env(sc_rpc_config *cfg) {
  const char *timeout = getenv("SHARDCHECK_TIMEOUT_MS");
  memset(cfg, 0, sizeof *cfg);
  cfg->tls_ca = env("SHARDCHECK_TLS_CA");
  cfg->tls_cert = env("SHARDCHECK_TLS_CERT");
  cfg->tls_key = env("SHARDCHECK_TLS_KEY");
  cfg->token = env("SHARDCHECK_TOKEN");
  cfg->timeout_ms = timeout ? atoi(timeout) : 0;
}

int remote_connect_timeout_ms(void) {
  const char *v = env("SHARDCHECK_CONNECT_TIMEOUT_MS");
  int ms = v ? atoi(v) : 0;
  return ms > 0 ? ms : 5000;
}

sc_rpc_client *remote_connect_or_complain(const char *server) {
  char *err = NULL;
  sc_rpc_config cfg;
  remote_config_from_env(&cfg);
  sc_rpc_client *c = sc_rpc_connect(server, &cfg, &err);
  if (c && sc_rpc_wait_ready(c, remote_connect_timeout_ms(), &err) != 0) {
    sc_rpc_close(c);
    c = NULL;
  }
  if (!c) {
    fprintf(stderr, "shardcheck: %s\n", err ? err : "cannot connect");
    free(err);
  }
  return c;
}

int remote_rules(const char *server, bool json) {
  sc_rpc_client *c = remote_connect_or_complain(server);
  if (!c)
    return EXIT_TROUBLE;
  sc_rpc_rule *rules;
  size_t n;
  char *err = NULL;
  int rc = sc_rpc_rules(c, &rules, &n, &err);
  sc_rpc_close(c);
  if (rc) {
    fprintf(stderr, "shardcheck: %s\n", err ? err : "ListRules failed");
    free(err);
    return EXIT_TROUBLE;
  }
  json_t *arr = json ? json_array() : NULL;
  for (size_t i = 0; i < n; i++) {
    const sc_rpc_rule *r = &rules[i];
    if (json)
      json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s}", "code", r->code, "name", r->name, "family",
                                           r->family, "severity", sc_severity_name(r->severity), "summary", r->summary));
    else
      printf("%-7s %-34s %-10s %-8s %s\n", r->code, r->name, r->family, sc_severity_name(r->severity), r->summary);
  }
  if (json) {
    char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s)
      puts(s);
    free(s);
    json_decref(arr);
  }
  sc_rpc_rules_free(rules, n);
  return 0;
}

int remote_explain(const char *server, char **codes, int ncodes) {
  if (ncodes < 1) {
    fprintf(stderr, "shardcheck: explain needs a CODE (see `shardcheck rules`)\n");
    return EXIT_TROUBLE;
  }
  sc_rpc_client *c = remote_connect_or_complain(server);
  if (!c)
    return EXIT_TROUBLE;
  int rc = 0;
  for (int i = 0; i < ncodes; i++) {
    char *text = NULL, *err = NULL;
    int st = sc_rpc_explain(c, codes[i], &text, &err);
    if (st == 5) /* NOT_FOUND */
      fprintf(stderr, "shardcheck: unknown code '%s' (see `shardcheck rules`)\n", codes[i]);
    else if (st)
      fprintf(stderr, "shardcheck: %s\n", err ? err : "Explain failed");
    if (st) {
      free(err);
      rc = EXIT_TROUBLE;
      continue;
    }
    fputs(text, stdout);
    if (i + 1 < ncodes)
      fputc('\n', stdout);
    free(text);
  }
  sc_rpc_close(c);
  return rc;
}

int remote_health(const char *server, const char *service) {
  sc_rpc_client *c = remote_connect_or_complain(server);
  if (!c)
    return EXIT_TROUBLE;
  int status = 0;
  char *err = NULL;
  int rc = sc_rpc_health(c, service ? service : "", &status, &err);
  sc_rpc_close(c);
  if (rc) {
    fprintf(stderr, "shardcheck: %s\n", err ? err : "health check failed");
    free(err);
    return EXIT_TROUBLE;
  }
  printf("%s\n", sc_rpc_health_name(status));
  return status == 1 ? 0 : EXIT_FINDINGS;
}

int remote_capabilities(const char *server) {
  sc_rpc_client *c = remote_connect_or_complain(server);
  if (!c)
    return EXIT_TROUBLE;
  char *json = NULL, *err = NULL;
  int rc = sc_rpc_capabilities_json(c, &json, &err);
  sc_rpc_close(c);
  if (rc) {
    fprintf(stderr, "shardcheck: %s\n", err ? err : "GetCapabilities failed");
    free(err);
    return EXIT_TROUBLE;
  }
  puts(json);
  free(json);
  return 0;
}

const char *remote_take_server(int *argc, char **argv) {
  const char *server = NULL;
  int out = 0;
  for (int i = 0; i < *argc; i++) {
    if (strcmp(argv[i], "--server") == 0 && i + 1 < *argc) {
      server = argv[++i];
      continue;
    }
    if (strncmp(argv[i], "--server=", 9) == 0) {
      server = argv[i] + 9;
      continue;
    }
    argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = NULL;
  return server;
}
