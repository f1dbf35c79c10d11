/* config.c — one table drives the JSON file keys, the flags and --help (see config.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "listener.h"
#include "shardcheck.h"

typedef enum { OPT_STR, OPT_U64, OPT_SIZE, OPT_LEVEL, OPT_BOOL } opt_kind;

typedef struct {
  const char *flag;  /* "--listen" */
  const char *key;   /* JSON path in the config file, "limits.max_ops"; NULL = flag only */
  opt_kind kind;
  size_t off;
  bool restart;      /* a reload cannot apply it */
  const char *help;
} opt;

#define F(field) offsetof(srv_config, field)
static const opt opts[] = {
    {"--config", NULL, OPT_STR, F(config_path), true, "JSON config file (config/shardcheckd.json)"},
    {"--listen", "listen", OPT_STR, F(listen), true, "HOST:PORT to serve gRPC on; port 0 picks a free one"},
    {"--port-file", "port_file", OPT_STR, F(port_file), true, "write the bound gRPC port to this file"},
    {"--workers", "workers", OPT_U64, F(workers), true, "analysis worker threads (libuv thread pool)"},
    {"--max-inflight", "max_inflight", OPT_U64, F(max_inflight), false,
     "checks accepted and not yet answered; beyond: RESOURCE_EXHAUSTED"},
    {"--max-message-bytes", "limits.max_message_bytes", OPT_SIZE, F(max_message_bytes), true,
     "largest gRPC message (a Check request)"},
    {"--max-module-bytes", "limits.max_module_bytes", OPT_SIZE, F(max_module_bytes), false,
     "largest module accepted through CheckStream"},
    {"--max-arena-bytes", "limits.max_arena_bytes", OPT_SIZE, F(max_arena_bytes), false,
     "analysis memory per request"},
    {"--max-depth", "limits.max_depth", OPT_U64, F(max_depth), false, "nesting depth limit"},
    {"--max-ops", "limits.max_ops", OPT_U64, F(max_ops), false, "op count limit"},
    {"--cache-bytes", "cache_bytes", OPT_SIZE, F(cache_bytes), false, "result cache size; 0 disables it"},
    {"--redis", "redis.url", OPT_STR, F(redis_url), true,
     "shared result cache: redis://[:password@]host[:port][/db] or unix:/path; empty = off"},
    {"--redis-ttl-s", "redis.ttl_s", OPT_U64, F(redis_ttl_s), true, "expiry of reports stored in Redis; 0 = none"},
    {"--redis-timeout-ms", "redis.timeout_ms", OPT_U64, F(redis_timeout_ms), true, "Redis connect and command timeout"},
    {"--redis-breaker-s", "redis.breaker_s", OPT_U64, F(redis_breaker_s), true,
     "after a Redis failure, use the local cache only for this long"},
    {"--redis-max-value-bytes", "redis.max_value_bytes", OPT_SIZE, F(redis_max_value_bytes), true,
     "larger reports are not stored in Redis"},
    {"--grace-ms", "grace_ms", OPT_U64, F(grace_ms), false, "SIGTERM drain period before calls are cancelled"},
    {"--log-level", "log_level", OPT_LEVEL, F(log_level), false, "debug|info|warn|error"},
    {"--log-format", "log_format", OPT_STR, F(log_format), false,
     "auto|json|text: one JSON object per line, or readable lines; auto = text on a terminal, else JSON"},
    {"--metrics-listen", "metrics_listen", OPT_STR, F(metrics_listen), true,
     "HOST:PORT for Prometheus text at /metrics; empty = off"},
    {"--metrics-port-file", "metrics_port_file", OPT_STR, F(metrics_port_file), true,
     "write the bound metrics port to this file"},
    {"--tls-cert", "tls.cert", OPT_STR, F(tls_cert), true, "server certificate chain (PEM)"},
    {"--tls-key", "tls.key", OPT_STR, F(tls_key), true, "server private key (PEM)"},
    {"--tls-client-ca", "tls.client_ca", OPT_STR, F(tls_client_ca), true,
     "require client certificates signed by this CA (PEM)"},
    {"--prearm", "prearm", OPT_U64, F(prearm), true, "call requests kept armed per method"},
    {"--debug-delay-ms", "debug_delay_ms", OPT_U64, F(debug_delay_ms), false,
     "testing only: every check first waits this long (cancellable)"},
    {"--stream-message-timeout-ms", "limits.stream_message_timeout_ms", OPT_U64, F(stream_message_timeout_ms), false,
     "CheckStream: longest wait for the next message; beyond: DEADLINE_EXCEEDED"},
    {"--stream-max-ms", "limits.stream_max_ms", OPT_U64, F(stream_max_ms), false,
     "CheckStream: longest time from the first message to the last"},
    {"--memory-budget-bytes", "limits.memory_budget_bytes", OPT_SIZE, F(memory_budget_bytes), false,
     "buffered requests + analyses + answers being sent, all calls; beyond: RESOURCE_EXHAUSTED"},
    {"--connection-memory-bytes", "limits.connection_memory_bytes", OPT_SIZE, F(connection_memory_bytes), false,
     "most of the memory budget one connection may hold; 0 = a quarter of the budget"},
    {"--send-timeout-ms", "limits.send_timeout_ms", OPT_U64, F(send_timeout_ms), false,
     "an answer the client does not read within this is cancelled (its memory released)"},
    {"--small-request-bytes", "limits.small_request_bytes", OPT_SIZE, F(small_request_bytes), false,
     "checks of modules larger than this use at most workers-1 workers, so small ones never wait behind them"},
    {"--watch-per-connection", "limits.watch_per_connection", OPT_U64, F(watch_per_connection), false,
     "Health.Watch calls open at once on one connection; beyond: RESOURCE_EXHAUSTED"},
    {"--watch-max-ms", "limits.watch_max_ms", OPT_U64, F(watch_max_ms), false,
     "a Health.Watch ends (status OK) after this, so an idle watcher does not hold its connection for ever"},
    {"--max-connections", "connections.max", OPT_U64, F(max_connections), true,
     "concurrent connections; beyond: refused (also capped by the open-file limit)"},
    {"--max-connections-per-peer", "connections.max_per_peer", OPT_U64, F(max_connections_per_peer), true,
     "concurrent connections from one IP address; beyond: refused; 0 = no cap (behind a front)"},
    {"--handshake-timeout-ms", "connections.handshake_timeout_ms", OPT_U64, F(handshake_timeout_ms), true,
     "a new connection must start talking within this"},
    {"--connection-idle-ms", "connections.idle_ms", OPT_U64, F(connection_idle_ms), true,
     "close connections without calls after this; 0 = never"},
    {"--connection-max-age-ms", "connections.max_age_ms", OPT_U64, F(connection_max_age_ms), true,
     "close connections (gracefully) after this; 0 = never"},
    {"--keepalive-ms", "connections.keepalive_ms", OPT_U64, F(keepalive_ms), true,
     "ping idle connections this often; 0 = never"},
    {"--max-streams-per-connection", "connections.max_streams", OPT_U64, F(max_streams_per_connection), true,
     "concurrent calls per connection (HTTP/2 MAX_CONCURRENT_STREAMS)"},
    {"--metrics-max-connections", "metrics.max_connections", OPT_U64, F(metrics_max_connections), true,
     "concurrent metrics connections; beyond: closed at once"},
    {"--metrics-idle-ms", "metrics.idle_ms", OPT_U64, F(metrics_idle_ms), true,
     "close a metrics connection that sent no full request within this"},
    {"--token-file", "auth.token_file", OPT_STR, F(token_file), false,
     "bearer tokens, one per line (re-read on SIGHUP); calls without one: UNAUTHENTICATED"},
    {"--insecure-listen", "insecure_listen", OPT_BOOL, F(insecure_listen), true,
     "allow a plaintext listener without tokens on a non-loopback address"},
};
#undef F
#define NOPTS (sizeof opts / sizeof opts[0])

static char *xstrdup(const char *s) {
  char *d = strdup(s ? s : "");
  if (!d)
    abort();
  return d;
}

static char *fmt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_err(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return xstrdup(buf);
}

static void defaults(srv_config *c) {
  memset(c, 0, sizeof *c);
  c->config_path = xstrdup("");
  c->listen = xstrdup("127.0.0.1:50051");
  c->port_file = xstrdup("");
  c->metrics_listen = xstrdup("");
  c->metrics_port_file = xstrdup("");
  c->tls_cert = xstrdup("");
  c->tls_key = xstrdup("");
  c->tls_client_ca = xstrdup("");
  c->workers = 4;
  c->max_inflight = 256;
  c->max_message_bytes = 4u << 20;
  c->max_module_bytes = 256u << 20;
  c->max_arena_bytes = 2048ull << 20;
  c->max_depth = SC_DEFAULT_MAX_DEPTH;
  c->max_ops = SC_DEFAULT_MAX_OPS;
  c->cache_bytes = 64u << 20;
  c->redis_url = xstrdup("");
  c->redis_ttl_s = 86400;
  c->redis_timeout_ms = 10;
  c->redis_breaker_s = 5;
  c->redis_max_value_bytes = 4u << 20;
  c->grace_ms = 10000;
  c->prearm = 16;
  c->debug_delay_ms = 0;
  c->log_level = LOG_INFO;
  c->log_format = xstrdup("auto");
  c->stream_message_timeout_ms = 30000;
  c->stream_max_ms = 300000;
  c->memory_budget_bytes = 2048ull << 20;
  c->connection_memory_bytes = 0;
  c->send_timeout_ms = 30000;
  c->watch_per_connection = 4;
  c->small_request_bytes = 1u << 20;
  c->watch_max_ms = 300000;
  c->max_connections = 1000;
  c->max_connections_per_peer = 100;
  c->handshake_timeout_ms = 10000;
  c->connection_idle_ms = 300000;
  c->connection_max_age_ms = 3600000;
  c->keepalive_ms = 60000;
  c->max_streams_per_connection = 256;
  c->metrics_max_connections = 16;
  c->metrics_idle_ms = 10000;
  c->token_file = xstrdup("");
  c->insecure_listen = false;
}

void config_free(srv_config *c) {
  for (size_t i = 0; i < NOPTS; i++)
    if (opts[i].kind == OPT_STR) {
      char **p = (char **)((char *)c + opts[i].off);
      free(*p);
      *p = NULL;
    }
}

/* "123", "64KiB", "4MiB", "2GiB" (also K/M/G, KB/MB/GB as powers of 1024). */
static int parse_size(const char *s, uint64_t *out, bool allow_suffix) {
  if (!*s || *s == '-')
    return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s)
    return -1;
  uint64_t mul = 1;
  if (*end && allow_suffix) {
    switch (*end) {
    case 'K': case 'k': mul = 1ull << 10; break;
    case 'M': case 'm': mul = 1ull << 20; break;
    case 'G': case 'g': mul = 1ull << 30; break;
    default: return -1;
    }
    end++;
    if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0 || strcmp(end, "b") == 0)
      end += strlen(end);
  }
  if (*end)
    return -1;
  if (mul > 1 && v > UINT64_MAX / mul)
    return -1;
  *out = v * mul;
  return 0;
}

/* Stores a textual value into the option's field. */
static int set_text(srv_config *c, const opt *o, const char *v, const char *where, char **err) {
  void *field = (char *)c + o->off;
  switch (o->kind) {
  case OPT_STR:
    free(*(char **)field);
    *(char **)field = xstrdup(v);
    return 0;
  case OPT_U64:
  case OPT_SIZE:
    if (parse_size(v, field, o->kind == OPT_SIZE) == 0)
      return 0;
    *err = fmt_err("%s: invalid %s \"%s\"", where, o->kind == OPT_SIZE ? "size" : "number", v);
    return -1;
  case OPT_LEVEL:
    if (log_level_parse(v, field) == 0)
      return 0;
    *err = fmt_err("%s: invalid log level \"%s\" (debug|info|warn|error)", where, v);
    return -1;
  case OPT_BOOL:
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
      *(bool *)field = v[0] == 't';
      return 0;
    }
    *err = fmt_err("%s: expected true or false, got \"%s\"", where, v);
    return -1;
  }
  return -1;
}

static int set_json(srv_config *c, const opt *o, json_t *v, const char *path, char **err) {
  char where[160];
  snprintf(where, sizeof where, "%s: %s", c->config_path, path);
  if (json_is_string(v))
    return set_text(c, o, json_string_value(v), where, err);
  if (json_is_boolean(v) && o->kind == OPT_BOOL) {
    *(bool *)((char *)c + o->off) = json_is_true(v);
    return 0;
  }
  if (json_is_integer(v) && (o->kind == OPT_U64 || o->kind == OPT_SIZE)) {
    if (json_integer_value(v) < 0) {
      *err = fmt_err("%s: must not be negative", where);
      return -1;
    }
    *(uint64_t *)((char *)c + o->off) = (uint64_t)json_integer_value(v);
    return 0;
  }
  if (json_is_null(v))
    return 0;
  *err = fmt_err("%s: expected %s", where,
                 o->kind == OPT_BOOL                           ? "true or false"
                 : o->kind == OPT_STR || o->kind == OPT_LEVEL ? "a string"
                                                              : "an integer");
  return -1;
}

/* Walks the file's object; every leaf must be a known key. */
static int apply_object(srv_config *c, json_t *obj, const char *prefix, char **err) {
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    char path[128];
    snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k);
    if (json_is_object(v)) {
      if (apply_object(c, v, path, err))
        return -1;
      continue;
    }
    const opt *o = NULL;
    for (size_t i = 0; i < NOPTS; i++)
      if (opts[i].key && strcmp(opts[i].key, path) == 0)
        o = &opts[i];
    if (!o) {
      if (path[0] == '_' || strstr(path, "._"))
        continue; /* "_comment" keys are allowed */
      *err = fmt_err("%s: unknown setting \"%s\"", c->config_path, path);
      return -1;
    }
    if (set_json(c, o, v, path, err))
      return -1;
  }
  return 0;
}

static const opt *find_flag(const char *arg, const char **inline_value) {
  *inline_value = NULL;
  const char *eq = strchr(arg, '=');
  size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
  for (size_t i = 0; i < NOPTS; i++)
    if (strlen(opts[i].flag) == n && strncmp(opts[i].flag, arg, n) == 0) {
      if (eq)
        *inline_value = eq + 1;
      return &opts[i];
    }
  return NULL;
}

void config_usage(FILE *f) {
  fprintf(f, "usage: shardcheckd [--listen HOST:PORT] [--config FILE] [--workers N] [options]\n\n"
             "The shardcheck gRPC daemon (shardcheck.v1.ShardCheck, grpc.health.v1.Health, reflection).\n"
             "Flags override the config file; SIGHUP reloads it; SIGTERM/SIGINT drain and exit 0.\n\n");
  srv_config d;
  defaults(&d);
  for (size_t i = 0; i < NOPTS; i++) {
    fprintf(f, "  %-22s %s", opts[i].flag, opts[i].help);
    const void *v = (const char *)&d + opts[i].off;
    switch (opts[i].kind) { /* the default, where there is one */
    case OPT_STR:
      if (**(char *const *)v) fprintf(f, " (default %s)", *(char *const *)v);
      break;
    case OPT_U64:
    case OPT_SIZE: fprintf(f, " (default %" PRIu64 ")", *(const uint64_t *)v); break;
    case OPT_LEVEL: fprintf(f, " (default %s)", log_level_name(*(const log_level *)v)); break;
    case OPT_BOOL: break;
    }
    if (opts[i].key)
      fprintf(f, "  [config: %s]", opts[i].key);
    fputc('\n', f);
  }
  config_free(&d);
  fprintf(f, "  %-22s %s\n  %-22s %s\n", "--version", "print the version", "--help", "this text");
}

int config_build(int argc, char **argv, srv_config *out, char **err) {
  *err = NULL;
  srv_config c;
  defaults(&c);
  /* Pass 1: find --config (and --help/--version) so the file applies before the other flags. */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      config_usage(stdout);
      config_free(&c);
      return 1;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("shardcheckd %s (rules %s)\n", SC_VERSION, sc_rules_version());
      config_free(&c);
      return 1;
    }
    const char *iv;
    const opt *o = find_flag(argv[i], &iv);
    if (o && o->off == offsetof(srv_config, config_path)) {
      const char *v = iv ? iv : (i + 1 < argc ? argv[++i] : NULL);
      if (!v) {
        *err = fmt_err("--config needs a value");
        goto fail;
      }
      free(c.config_path);
      c.config_path = xstrdup(v);
    }
  }
  if (c.config_path[0]) {
    json_error_t je;
    json_t *root = json_load_file(c.config_path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
      *err = fmt_err("%s:%d:%d: %s", c.config_path, je.line, je.column, je.text);
      goto fail;
    }
    int rc = json_is_object(root) ? apply_object(&c, root, "", err) : -1;
    if (rc && !*err)
      *err = fmt_err("%s: the config must be a JSON object", c.config_path);
    json_decref(root);
    if (rc)
      goto fail;
  }
  /* Pass 2: flags. */
  for (int i = 1; i < argc; i++) {
    const char *iv;
    const opt *o = find_flag(argv[i], &iv);
    if (!o) {
      *err = fmt_err("unknown option \"%s\" (see --help)", argv[i]);
      goto fail;
    }
    const char *v = iv ? iv : o->kind == OPT_BOOL ? "true" : (i + 1 < argc ? argv[++i] : NULL);
    if (!v) {
      *err = fmt_err("%s needs a value", o->flag);
      goto fail;
    }
    if (o->off == offsetof(srv_config, config_path))
      continue;
    if (set_text(&c, o, v, o->flag, err))
      goto fail;
  }
  if (c.workers < 1 || c.workers > 1024) {
    *err = fmt_err("workers must be 1..1024 (got %llu)", (unsigned long long)c.workers);
    goto fail;
  }
  if (c.max_inflight < 1) {
    *err = fmt_err("max_inflight must be at least 1");
    goto fail;
  }
  if (c.max_message_bytes < 1024 || c.max_message_bytes > (uint64_t)INT32_MAX) {
    *err = fmt_err("limits.max_message_bytes must be 1KiB..2GiB");
    goto fail;
  }
  if (c.max_depth > UINT32_MAX || c.max_ops > UINT32_MAX || c.max_depth < 1 || c.max_ops < 1) {
    *err = fmt_err("limits.max_depth and limits.max_ops must be 1..4294967295");
    goto fail;
  }
  if (c.prearm < 1 || c.prearm > 4096) {
    *err = fmt_err("prearm must be 1..4096");
    goto fail;
  }
  if (c.max_connections < 1 || c.max_streams_per_connection < 1 || c.metrics_max_connections < 1) {
    *err = fmt_err("connections.max, connections.max_streams and metrics.max_connections must be at least 1");
    goto fail;
  }
  if (c.stream_message_timeout_ms < 1 || c.stream_max_ms < 1 || c.handshake_timeout_ms < 1 || c.metrics_idle_ms < 1 ||
      c.send_timeout_ms < 1 || c.watch_max_ms < 1 || c.watch_per_connection < 1) {
    *err = fmt_err("timeouts (stream_message_timeout_ms, stream_max_ms, send_timeout_ms, watch_max_ms, "
                   "handshake_timeout_ms, metrics.idle_ms) and watch_per_connection must be at least 1");
    goto fail;
  }
  if (strncmp(c.listen, "unix:", 5) && (c.listen[0] == '[' ? !strstr(c.listen, "]:") : !strchr(c.listen, ':'))) {
    *err = fmt_err("listen %s has no port: give HOST:PORT (127.0.0.1:50051; port 0 picks a free one)", c.listen);
    goto fail;
  }
  if (!net_is_loopback(c.listen) && !c.tls_cert[0] && !c.token_file[0] && !c.insecure_listen) {
    *err = fmt_err("listen %s is not a loopback address and neither TLS (tls.cert) nor tokens (auth.token_file) are "
                   "configured; allow plaintext anyway with --insecure-listen (insecure_listen: true)",
                   c.listen);
    goto fail;
  }
  if (!c.tls_cert[0] != !c.tls_key[0]) {
    *err = fmt_err("tls.cert and tls.key must be given together");
    goto fail;
  }
  if (c.redis_url[0] && (c.redis_timeout_ms < 1 || c.redis_timeout_ms > 60000)) {
    *err = fmt_err("redis.timeout_ms must be 1..60000");
    goto fail;
  }
  *out = c;
  return 0;
fail:
  config_free(&c);
  return -1;
}

static size_t opt_size(opt_kind k) {
  switch (k) {
  case OPT_STR: return sizeof(char *);
  case OPT_LEVEL: return sizeof(log_level);
  case OPT_BOOL: return sizeof(bool);
  default: return sizeof(uint64_t);
  }
}

void config_keep_restart_settings(srv_config *next, srv_config *running) {
  for (size_t i = 0; i < NOPTS; i++) {
    if (!opts[i].restart || !opts[i].key)
      continue;
    unsigned char tmp[sizeof(uint64_t)], *a = (unsigned char *)next + opts[i].off,
                                          *b = (unsigned char *)running + opts[i].off;
    size_t n = opt_size(opts[i].kind);
    memcpy(tmp, a, n);
    memcpy(a, b, n);
    memcpy(b, tmp, n);
  }
}

char *config_diff(const srv_config *a, const srv_config *b, bool restart_only) {
  char buf[1024] = "";
  size_t n = 0;
  for (size_t i = 0; i < NOPTS; i++) {
    if (opts[i].restart != restart_only || !opts[i].key)
      continue;
    const void *fa = (const char *)a + opts[i].off, *fb = (const char *)b + opts[i].off;
    bool differ;
    if (opts[i].kind == OPT_STR)
      differ = strcmp(*(char *const *)fa, *(char *const *)fb) != 0;
    else if (opts[i].kind == OPT_LEVEL)
      differ = *(const log_level *)fa != *(const log_level *)fb;
    else if (opts[i].kind == OPT_BOOL)
      differ = *(const bool *)fa != *(const bool *)fb;
    else
      differ = *(const uint64_t *)fa != *(const uint64_t *)fb;
    if (differ && n + strlen(opts[i].key) + 3 < sizeof buf)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "", opts[i].key);
  }
  return n ? xstrdup(buf) : NULL;
}
