/* log.c — JSON-lines logging (see log.h). */
#include "log.h"

#include <grpc/support/log.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_level = LOG_INFO;
static atomic_bool g_text = false;

int log_set_format(const char *name) {
  if (!strcmp(name, "json")) atomic_store(&g_text, false);
  else if (!strcmp(name, "text")) atomic_store(&g_text, true);
  else if (!strcmp(name, "auto")) atomic_store(&g_text, isatty(STDERR_FILENO) == 1);
  else return -1;
  return 0;
}

/* ` key=value` per field; strings with spaces or quotes are JSON-quoted. */
static void put_text_fields(FILE *f, json_t *fields) {
  const char *key;
  json_t *v;
  json_object_foreach(fields, key, v) {
    if (json_is_string(v) && !strpbrk(json_string_value(v), " \"=") && *json_string_value(v)) {
      fprintf(f, " %s=%s", key, json_string_value(v));
      continue;
    }
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
    fprintf(f, " %s=%s", key, t ? t : "?");
    free(t);
  }
}

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(log_level level) { atomic_store(&g_level, (int)level); }
log_level log_get_level(void) { return (log_level)atomic_load(&g_level); }
bool log_enabled(log_level level) { return (int)level >= atomic_load(&g_level); }
const char *log_level_name(log_level level) { return level_names[level]; }

int log_level_parse(const char *s, log_level *out) {
  for (int i = 0; i < 4; i++) {
    if (strcmp(s, level_names[i]) == 0) {
      *out = (log_level)i;
      return 0;
    }
  }
  if (strcmp(s, "warning") == 0) {
    *out = LOG_WARN;
    return 0;
  }
  return -1;
}

static void timestamp(char *buf, size_t n) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + k, n - k, ".%03ldZ", ts.tv_nsec / 1000000L);
}

void log_json(log_level level, const char *msg, json_t *fields) {
  if (!log_enabled(level)) {
    json_decref(fields);
    return;
  }
  char ts[40];
  timestamp(ts, sizeof ts);
  if (atomic_load(&g_text)) {
    flockfile(stderr);
    fprintf(stderr, "%s %-5s %s", ts, level_names[level], msg ? msg : "");
    if (fields) put_text_fields(stderr, fields);
    fputc('\n', stderr);
    fflush(stderr);
    funlockfile(stderr);
    json_decref(fields);
    return;
  }
  json_t *o = json_object();
  json_object_set_new(o, "ts", json_string(ts));
  json_object_set_new(o, "level", json_string(level_names[level]));
  json_object_set_new(o, "msg", json_string(msg ? msg : ""));
  if (fields) {
    json_object_update(o, fields);
    json_decref(fields);
  }
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  json_decref(o);
  if (!line)
    return;
  flockfile(stderr);
  fputs(line, stderr);
  fputc('\n', stderr);
  fflush(stderr);
  funlockfile(stderr);
  free(line);
}

void log_msg(log_level level, const char *fmt, ...) {
  if (!log_enabled(level))
    return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  log_json(level, buf, NULL);
}

static atomic_ulong grpc_accept_failures;

unsigned long log_grpc_accept_failures(void) { return atomic_load(&grpc_accept_failures); }

static void grpc_log_sink(gpr_log_func_args *args) {
  if (args->message && strstr(args->message, "accept4"))
    atomic_fetch_add(&grpc_accept_failures, 1);
  log_level lvl = args->severity == GPR_LOG_SEVERITY_ERROR  ? LOG_WARN
                  : args->severity == GPR_LOG_SEVERITY_INFO ? LOG_INFO
                                                            : LOG_DEBUG;
  if (!log_enabled(lvl))
    return;
  json_t *f = json_object();
  json_object_set_new(f, "source", json_string("grpc"));
  json_object_set_new(f, "file", json_string(args->file ? args->file : ""));
  json_object_set_new(f, "line", json_integer(args->line));
  log_json(lvl, args->message, f);
}

void log_capture_grpc(void) { gpr_set_log_function(grpc_log_sink); }
