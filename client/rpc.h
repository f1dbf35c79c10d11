/* rpc.h — the shardcheck client library: shardcheckd's API over gRPC core, for the CLI and others.
 *
 * Calls are synchronous. A call answered UNAVAILABLE before any of its bytes were sent (no
 * connection: a daemon restarting, a connection refused at its cap, a proxy without a ready
 * backend) is tried again after 0.1, 0.3 and 0.9 s (each + up to 50 % jitter) within timeout_ms, as
 * the Python package does; a CheckStream that sent a chunk is not. Every function returns 0 on success, a gRPC status code (> 0) when the
 * server (or the transport) answered with an error, or -1 for a local error (I/O, out of memory);
 * on failure *err gets a malloc'd message such as "127.0.0.1:50051: UNAVAILABLE: failed to connect".
 * Findings in a module are not errors: they are in the report (and in the summary counts).
 *
 * No gRPC or protobuf types appear here, so callers need only this header and lib/shardcheck.h. */
#ifndef SC_RPC_H
#define SC_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shardcheck.h"

typedef enum { SC_RPC_REPORT_JSON = 0, SC_RPC_REPORT_TEXT, SC_RPC_REPORT_SARIF, SC_RPC_REPORT_HTML } sc_rpc_report_format;

typedef struct {
  int timeout_ms;          /* deadline per call; 0 = none */
  const char *tls_ca;      /* PEM file of the CA to trust: TLS; NULL = plaintext */
  const char *tls_cert;    /* with tls_ca: client certificate chain (PEM) for mTLS; NULL = none */
  const char *tls_key;     /* its private key (PEM); given with tls_cert */
  const char *token;       /* bearer token sent as `authorization: Bearer ...` on every call; NULL = none */
  size_t stream_threshold; /* modules larger than this go through CheckStream; 0 = 1 MiB */
  size_t chunk_bytes;      /* CheckStream chunk size; 0 = 1 MiB */
} sc_rpc_config;

typedef struct sc_rpc_client sc_rpc_client;

/* The gRPC service config (JSON) of every channel sc_rpc_connect opens: calls to shardcheckd and to
 * its health service are retried on UNAVAILABLE — a replica that died or is draining, a proxy's
 * 502 — up to 5 attempts with exponential backoff (checks are idempotent); calls are spread
 * round_robin over every address the target resolves to (`dns:///shardcheckd-headless.NS.svc:50051`,
 * `ipv4:HOST:PORT,HOST:PORT`: a connection per replica; one address behaves as before). Other gRPC-core clients
 * of a fleet (tests/integration/loadgen.c) pass the same text as GRPC_ARG_SERVICE_CONFIG. */
extern const char sc_rpc_service_config[];

/* The daemon's default port, used when an address names none ("localhost"). */
#define SC_RPC_DEFAULT_PORT "50051"

/* Creates a channel to "HOST:PORT" (no I/O yet: a down server shows up as UNAVAILABLE on the
 * first call; sc_rpc_wait_ready connects now). "HOST" alone means port 50051; an "http://" prefix is
 * dropped, "https://" needs cfg->tls_ca. cfg may be NULL. */
sc_rpc_client *sc_rpc_connect(const char *server, const sc_rpc_config *cfg, char **err);
void sc_rpc_close(sc_rpc_client *c);
/* Connects now and waits until the channel is ready, at most timeout_ms: 0, or -1 with "cannot reach
 * shardcheckd at HOST:PORT (...)" in *err when the connection is refused or does not come up in time
 * (one clear failure before many inputs are sent to a server that is not there). */
int sc_rpc_wait_ready(sc_rpc_client *c, int timeout_ms, char **err);

typedef struct {
  sc_rpc_report_format format; /* what `report` holds */
  bool pretty;                 /* JSON: indented (the CLI prints a single report indented) */
  bool color;                  /* TEXT: ANSI colours */
} sc_rpc_render;

typedef struct {
  char *report; /* malloc'd, NUL-terminated, exactly what local mode renders */
  size_t errors, warnings, notes, diagnostics;
  bool cache_hit;      /* answered from the daemon's result cache */
  bool streamed;       /* sent through CheckStream */
  uint64_t server_us;  /* accept -> response ready, on the server */
  uint64_t analysis_us;
  char sha256[65];
} sc_rpc_check_result;

/* Checks `len` bytes with the options local mode would use (input_format, input_name, rules,
 * min_severity, split_input_file, mesh, platform, max_depth, max_ops; `cancel` is ignored). */
int sc_rpc_check(sc_rpc_client *c, const char *buf, size_t len, const sc_options *opt, const sc_rpc_render *render,
                 sc_rpc_check_result *out, char **err);
void sc_rpc_check_result_free(sc_rpc_check_result *r);

typedef struct {
  sc_severity severity;
  uint32_t line, col;
  char *message; /* malloc'd */
} sc_rpc_propagate_message;

typedef struct {
  char *text; /* malloc'd: what local `shardcheck propagate` prints on stdout */
  sc_rpc_propagate_message *messages; /* malloc'd array of nmessages: what it prints on stderr */
  size_t nmessages;
} sc_rpc_propagate_result;

/* Propagate: the module as Shardy's passes leave it, computed by the daemon with `opt` (every field
 * but hash_seed, cancel, max_depth and max_ops, which are the daemon's); `name` names the module in
 * failures. A module that does not parse is INVALID_ARGUMENT (3) with the library's message. */
int sc_rpc_propagate(sc_rpc_client *c, const char *buf, size_t len, const char *name, const sc_propagate_options *opt,
                     sc_rpc_propagate_result *out, char **err);
void sc_rpc_propagate_result_free(sc_rpc_propagate_result *r);

typedef struct {
  char *name, *family, *code, *summary;
  sc_severity severity;
} sc_rpc_rule;

/* The daemon's rules in registry order: *rules is a malloc'd array of *n entries. */
int sc_rpc_rules(sc_rpc_client *c, sc_rpc_rule **rules, size_t *n, char **err);
void sc_rpc_rules_free(sc_rpc_rule *rules, size_t n);

/* The explanation page of `code` (what `shardcheck explain CODE` prints); NOT_FOUND (5) if unknown. */
int sc_rpc_explain(sc_rpc_client *c, const char *code, char **text, char **err);

/* grpc.health.v1 Check of `service` ("" = the server): *status 1 SERVING, 2 NOT_SERVING;
 * an unknown service is NOT_FOUND (5). */
int sc_rpc_health(sc_rpc_client *c, const char *service, int *status, char **err);

/* GetCapabilities as a malloc'd JSON object (version, rules_version, formats, limits, workers). */
int sc_rpc_capabilities_json(sc_rpc_client *c, char **json, char **err);

/* One-shot: connect, check the file at `path` (as JSON, indented like local mode), close. */
int sc_rpc_check_file(const char *server, const char *path, const sc_options *opt, char **report_json, char **err);

/* "SERVING", "NOT_SERVING", ... for sc_rpc_health's status. */
const char *sc_rpc_health_name(int status);
/* "OK", "CANCELLED", ... for a gRPC status code. */
const char *sc_rpc_status_name(int code);

/* Reads all of `path` ("-" = stdin) into a malloc'd buffer of *len bytes (for the CLI's inputs); NULL
 * with *error set to a static message (strerror, "read error", "out of memory") when it cannot. */
char *sc_rpc_read_input(const char *path, size_t *len, const char **error);

#endif
