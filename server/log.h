/* log.h — JSON-lines logging for shardcheckd.
 *
 * Every line on stderr (or the log file) is one JSON object: {"ts":..., "level":..., "msg":..., ...}.
 * Safe to call from any thread: a line is formatted first and written with one locked fputs. */
#ifndef SRV_LOG_H
#define SRV_LOG_H

#include <jansson.h>
#include <stdbool.h>

typedef enum { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

void log_set_level(log_level level);
log_level log_get_level(void);
bool log_enabled(log_level level);
int log_level_parse(const char *s, log_level *out); /* 0 or -1 */
const char *log_level_name(log_level level);

/* "json" (one object per line), "text" (`TS LEVEL MSG key=value ...`) or "auto" (text when stderr is a
 * terminal, else JSON). Returns 0, or -1 for another name. */
int log_set_format(const char *name);

/* Writes {"ts","level","msg"} plus the members of `fields`, which is stolen (may be NULL). */
void log_json(log_level level, const char *msg, json_t *fields);
/* printf-style message without extra fields. */
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Routes gRPC core's own log lines (gpr_log) through log_json. */
void log_capture_grpc(void);
/* How many "accept4" failures gRPC core logged (its listener stops after one; see listener.h). */
unsigned long log_grpc_accept_failures(void);

#endif
