/* rpc.c — synchronous client calls to shardcheckd over gRPC core (see rpc.h).
 *
 * One channel and one pluck completion queue per client. A unary call is one batch; CheckStream is
 * SEND_INITIAL_METADATA, one SEND_MESSAGE batch per chunk, SEND_CLOSE_FROM_CLIENT, then a batch
 * receiving the response and the status (so an early error status, e.g. a size limit, is still read
 * after a failed send). */
#include "rpc.h"
#include "rpc_fleet.h"

#include <errno.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "shardcheck/v1/shardcheck.pb-c.h"

#define DEFAULT_STREAM_THRESHOLD (1u << 20)
#define DEFAULT_CHUNK (1u << 20)
#define SVC "/shardcheck.v1.ShardCheck/"

struct sc_rpc_client {
  char *target;
  gpr_timespec deadline; /* of the operation in progress (all its attempts) */
  grpc_channel *channel;
  grpc_completion_queue *cq;
  sc_rpc_config cfg;
  grpc_metadata auth_md; /* authorization: Bearer <token> */
  size_t nmd;            /* 1 when a token is set */
  uint64_t server_max_msg; /* from GetCapabilities; 0 = unknown */
  bool limits_fetched;
};

static const char *const status_names[] = {
    "OK",          "CANCELLED",         "UNKNOWN",            "INVALID_ARGUMENT",    "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",         "DATA_LOSS",         "UNAUTHENTICATED"};

const char *sc_rpc_status_name(int code) {
  return code >= 0 && code < (int)(sizeof status_names / sizeof status_names[0]) ? status_names[code] : "UNKNOWN";
}

const char *sc_rpc_health_name(int status) {
  static const char *const names[] = {"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"};
  return status >= 0 && status < 4 ? names[status] : "UNKNOWN";
}

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(char **err, const char *fmt, ...) {
  if (!err)
    return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  free(*err);
  *err = strdup(buf);
}

/* Reads the rest of f; NULL with *error set ("read error", "out of memory") when it cannot. */
static char *read_stream(FILE *f, size_t *len, const char **error) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *g = realloc(buf, cap * 2);
    if (!g) {
      free(buf);
      buf = NULL;
    } else {
      buf = g;
      cap *= 2;
    }
  }
  if (!buf || ferror(f)) {
    *error = buf ? "read error" : "out of memory";
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

char *sc_rpc_read_input(const char *path, size_t *len, const char **error) {
  bool std_in = strcmp(path, "-") == 0;
  FILE *f = std_in ? stdin : fopen(path, "rb");
  if (!f) {
    *error = strerror(errno);
    return NULL;
  }
  char *buf = read_stream(f, len, error);
  if (!std_in)
    fclose(f);
  return buf;
}

/* The file at `path` (no stdin), with "PATH: why" in *err when it cannot be read. */
static char *read_file(const char *path, size_t *len, char **err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    set_err(err, "%s: %s", path, strerror(errno));
    return NULL;
  }
  const char *why = NULL;
  char *buf = read_stream(f, len, &why);
  fclose(f);
  if (!buf)
    set_err(err, "%s: %s", path, why);
  return buf;
}

const char sc_rpc_service_config[] =
    "{\"methodConfig\":[{\"name\":[{\"service\":\"shardcheck.v1.ShardCheck\"},{\"service\":\"grpc.health.v1.Health\"}],"
    "\"retryPolicy\":{\"maxAttempts\":5,\"initialBackoff\":\"0.05s\",\"maxBackoff\":\"1s\",\"backoffMultiplier\":2,"
    "\"retryableStatusCodes\":[\"UNAVAILABLE\"]}}],"
    "\"loadBalancingConfig\":[{\"round_robin\":{}}]}";

size_t sc_rpc_fleet_args(grpc_arg out[2]) {
  memset(out, 0, 2 * sizeof *out);
  out[0].type = GRPC_ARG_STRING;
  out[0].key = (char *)GRPC_ARG_SERVICE_CONFIG;
  out[0].value.string = (char *)sc_rpc_service_config;
  out[1].type = GRPC_ARG_INTEGER;
  out[1].key = (char *)GRPC_ARG_ENABLE_RETRIES;
  out[1].value.integer = 1;
  return 2;
}

bool sc_rpc_call_cut(int status, const char *details) {
  return status == GRPC_STATUS_UNAVAILABLE || (status == GRPC_STATUS_INTERNAL && details && strstr(details, "RST_STREAM"));
}

/* A PEM file as a NUL-terminated string (what grpc_ssl_*_create want), NULL with *err set. */
static char *read_pem(const char *path, char **err) {
  size_t n;
  char *pem = read_file(path, &n, err);
  char *z = pem ? realloc(pem, n + 1) : NULL;
  if (!z) {
    free(pem);
    if (err && !*err)
      set_err(err, "out of memory");
    return NULL;
  }
  z[n] = '\0';
  return z;
}

/* The gRPC target for what a user typed: "localhost" -> "localhost:50051" (the daemon's default port),
 * "http://host:port/" -> "host:port"; gRPC targets ("dns:///...", "ipv4:...", "unix:...") as given.
 * NULL with *err for "https://" without TLS configured (it would be sent in plaintext). */
static char *normalize_target(const char *server, const sc_rpc_config *cfg, char **err) {
  const char *p = server;
  if (!strncmp(p, "http://", 7)) p += 7;
  else if (!strncmp(p, "https://", 8)) {
    if (!cfg || !cfg->tls_ca) {
      set_err(err, "%s: https:// needs TLS: set SHARDCHECK_TLS_CA to the CA that signed the daemon's certificate", server);
      return NULL;
    }
    p += 8;
  }
  size_t n = strlen(p);
  while (n && p[n - 1] == '/') n--;
  const char *colon = memchr(p, ':', n), *bracket = n && p[0] == '[' ? memchr(p, ']', n) : NULL;
  bool has_port = bracket ? bracket + 1 < p + n && bracket[1] == ':' : colon != NULL;
  char *t = malloc(n + sizeof ":" SC_RPC_DEFAULT_PORT);
  if (!t) return NULL;
  snprintf(t, n + sizeof ":" SC_RPC_DEFAULT_PORT, "%.*s%s", (int)n, p, has_port ? "" : ":" SC_RPC_DEFAULT_PORT);
  return t;
}

sc_rpc_client *sc_rpc_connect(const char *server, const sc_rpc_config *cfg, char **err) {
  if (!server || !*server) {
    set_err(err, "no server address (HOST:PORT)");
    return NULL;
  }
  sc_rpc_client *c = calloc(1, sizeof *c);
  if (c && !(c->target = normalize_target(server, cfg, err)) && err && *err) {
    free(c);
    return NULL;
  }
  if (!c || !c->target) {
    free(c);
    set_err(err, "out of memory");
    return NULL;
  }
  if (cfg)
    c->cfg = *cfg;
  if (!c->cfg.stream_threshold)
    c->cfg.stream_threshold = DEFAULT_STREAM_THRESHOLD;
  if (!c->cfg.chunk_bytes)
    c->cfg.chunk_bytes = DEFAULT_CHUNK;
  if (!c->cfg.tls_cert != !c->cfg.tls_key || (c->cfg.tls_cert && !c->cfg.tls_ca)) {
    set_err(err, "a client certificate needs its key and a CA (SHARDCHECK_TLS_CERT, _KEY, _CA)");
    free(c->target);
    free(c);
    return NULL;
  }
  grpc_init();
  grpc_channel_credentials *creds = NULL;
  if (c->cfg.tls_ca) {
    char *ca = read_pem(c->cfg.tls_ca, err);
    char *cert = ca && c->cfg.tls_cert ? read_pem(c->cfg.tls_cert, err) : NULL;
    char *key = cert ? read_pem(c->cfg.tls_key, err) : NULL;
    grpc_ssl_pem_key_cert_pair pair = {key, cert};
    if (ca && (!c->cfg.tls_cert || key))
      creds = grpc_ssl_credentials_create(ca, key ? &pair : NULL, NULL, NULL);
    free(ca);
    free(cert);
    free(key);
    if (!creds && err && *err) {
      grpc_shutdown_blocking();
      free(c->target);
      free(c);
      return NULL;
    }
  } else {
    creds = grpc_insecure_credentials_create();
  }
  if (c->cfg.token) {
    size_t tl = strlen(c->cfg.token);
    char *v = malloc(tl + 8);
    if (v) {
      memcpy(v, "Bearer ", 7);
      memcpy(v + 7, c->cfg.token, tl + 1);
      c->auth_md.key = grpc_slice_from_static_string("authorization");
      c->auth_md.value = grpc_slice_from_copied_string(v);
      c->nmd = 1;
      free(v);
    }
  }
  grpc_arg args[6];
  memset(args, 0, sizeof args);
  args[0].type = GRPC_ARG_INTEGER;
  args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  args[0].value.integer = -1;
  args[1].type = GRPC_ARG_INTEGER;
  args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
  args[1].value.integer = -1;
  /* A failed connection attempt is tried again after 100 ms (gRPC's default is 1 s), so the
   * retries below (RETRY_DELAYS_MS) find the connection back. */
  args[2].type = GRPC_ARG_INTEGER;
  args[2].key = (char *)GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS;
  args[2].value.integer = 100;
  args[3].type = GRPC_ARG_INTEGER;
  args[3].key = (char *)GRPC_ARG_MIN_RECONNECT_BACKOFF_MS;
  args[3].value.integer = 100;
  grpc_channel_args ca = {4 + sc_rpc_fleet_args(args + 4), args};
  c->channel = creds ? grpc_channel_create(c->target, creds, &ca) : NULL;
  if (creds)
    grpc_channel_credentials_release(creds);
  if (!c->channel) {
    set_err(err, "%s: cannot create a channel", server);
    grpc_shutdown_blocking();
    free(c->target);
    free(c);
    return NULL;
  }
  c->cq = grpc_completion_queue_create_for_pluck(NULL);
  return c;
}

/* A failed connection is tried again for about three seconds before the daemon counts as unreachable: a
 * daemon at its connection cap closes new connections until a slot frees, and a loaded machine's pending
 * loopback connect can read as failed (gRPC core 1.51, see RETRY_DELAYS_MS). gRPC keeps the channel in
 * TRANSIENT_FAILURE while it reconnects in the background, so the state is looked at every
 * FAILURE_POLL_MS, for three fifths of the connect timeout (3 s by default; a slow daemon, e.g. under
 * valgrind, is given more with SHARDCHECK_CONNECT_TIMEOUT_MS). Nothing listening fails then, with one line. */
#define FAILURE_POLL_MS 250

int sc_rpc_wait_ready(sc_rpc_client *c, int timeout_ms, char **err) {
  gpr_timespec deadline =
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_ms > 0 ? timeout_ms : 1, GPR_TIMESPAN));
  grpc_connectivity_state st = grpc_channel_check_connectivity_state(c->channel, 1);
  bool tried = false; /* a failure counts once a connection attempt was made */
  int failures = 0, max_failures = (timeout_ms > 0 ? timeout_ms : 1) * 3 / 5 / FAILURE_POLL_MS;
  while (st != GRPC_CHANNEL_READY) {
    bool failing = st == GRPC_CHANNEL_TRANSIENT_FAILURE && tried;
    if (st == GRPC_CHANNEL_SHUTDOWN || (failing && ++failures > max_failures)) {
      set_err(err, "cannot reach shardcheckd at %s (UNAVAILABLE: the connection%s failed; is the daemon running and "
                   "listening there?)",
              c->target, c->cfg.tls_ca ? " or its TLS handshake" : "");
      return -1;
    }
    if (st == GRPC_CHANNEL_CONNECTING || st == GRPC_CHANNEL_TRANSIENT_FAILURE) tried = true;
    gpr_timespec until = deadline;
    if (failing) {
      gpr_timespec poll = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(FAILURE_POLL_MS, GPR_TIMESPAN));
      if (gpr_time_cmp(poll, deadline) < 0) until = poll;
    }
    grpc_channel_watch_connectivity_state(c->channel, st, until, c->cq, c);
    grpc_event ev = grpc_completion_queue_pluck(c->cq, c, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    bool timed_out = ev.type != GRPC_OP_COMPLETE || !ev.success;
    if (timed_out && gpr_time_cmp(gpr_now(GPR_CLOCK_MONOTONIC), deadline) >= 0) {
      set_err(err, "cannot reach shardcheckd at %s (no connection within %d ms; SHARDCHECK_CONNECT_TIMEOUT_MS)",
              c->target, timeout_ms);
      return -1;
    }
    st = grpc_channel_check_connectivity_state(c->channel, 1);
  }
  return 0;
}

void sc_rpc_close(sc_rpc_client *c) {
  if (!c)
    return;
  grpc_channel_destroy(c->channel);
  grpc_completion_queue_shutdown(c->cq);
  while (grpc_completion_queue_pluck(c->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
    ;
  grpc_completion_queue_destroy(c->cq);
  if (c->nmd)
    grpc_slice_unref(c->auth_md.value);
  free(c->target);
  free(c);
  grpc_shutdown_blocking();
}

/* Starts an operation: its deadline (timeout_ms from now) covers all its attempts. */
static void begin_op(sc_rpc_client *c) {
  c->deadline = c->cfg.timeout_ms <= 0
                    ? gpr_inf_future(GPR_CLOCK_MONOTONIC)
                    : gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(c->cfg.timeout_ms, GPR_TIMESPAN));
}

/* Retries of a call answered UNAVAILABLE before any of its bytes reached the server: no
 * connection (a daemon restarting or draining, a proxy with no ready backend, or gRPC core 1.51's
 * client taking a connect(2) still in progress for a failure — it reads errno after calls that
 * change it, so a loaded machine sees "UNKNOWN: ipv4:HOST:PORT: No such file or directory").
 * Delays as in the Python package (client/python/shardcheck/_remote.py): 1 + 3 attempts, each
 * delay with up to 50 % jitter, all within the operation's deadline. */
static const int RETRY_DELAYS_MS[] = {100, 300, 900};
#define RETRIES ((int)(sizeof RETRY_DELAYS_MS / sizeof RETRY_DELAYS_MS[0]))

/* Sleeps before retry number `attempt` (0-based) unless that would pass the deadline (false). */
static bool retry_pause(sc_rpc_client *c, int attempt) {
  if (attempt >= RETRIES)
    return false;
  int ms = RETRY_DELAYS_MS[attempt];
  ms += (int)((unsigned)rand() % (unsigned)(ms / 2 + 1));
  gpr_timespec wake = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
  if (gpr_time_cmp(wake, c->deadline) >= 0)
    return false;
  gpr_sleep_until(wake);
  return true;
}

/* SEND_INITIAL_METADATA with the bearer token, if any. */
static void set_initial_metadata(const sc_rpc_client *c, grpc_op *op) {
  op->op = GRPC_OP_SEND_INITIAL_METADATA;
  op->data.send_initial_metadata.count = c->nmd;
  op->data.send_initial_metadata.metadata = c->nmd ? (grpc_metadata *)&c->auth_md : NULL;
}

static grpc_call *new_call(sc_rpc_client *c, const char *method) {
  grpc_slice m = grpc_slice_from_static_string(method);
  grpc_call *call =
      grpc_channel_create_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, m, NULL, c->deadline, NULL);
  grpc_slice_unref(m);
  return call;
}

static bool run_batch(sc_rpc_client *c, grpc_call *call, const grpc_op *ops, size_t n) {
  int tag;
  if (grpc_call_start_batch(call, ops, n, &tag, NULL) != GRPC_CALL_OK)
    return false;
  grpc_event e = grpc_completion_queue_pluck(c->cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  return e.type == GRPC_OP_COMPLETE && e.success;
}

static grpc_byte_buffer *bb_from(const uint8_t *p, size_t n) {
  grpc_slice s = grpc_slice_from_copied_buffer((const char *)p, n);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

/* Receives the response message and status; returns 0 or the status code (with *err set). */
typedef struct {
  grpc_metadata_array initial, trailing;
  grpc_byte_buffer *resp;
  grpc_status_code status;
  grpc_slice details;
  const char *error_string;
} recv_state;

static int finish_recv(sc_rpc_client *c, recv_state *rs, grpc_slice *out, char **err) {
  int rc = rs->status;
  if (rc == GRPC_STATUS_OK) {
    grpc_byte_buffer_reader rd;
    if (rs->resp && grpc_byte_buffer_reader_init(&rd, rs->resp)) {
      *out = grpc_byte_buffer_reader_readall(&rd);
      grpc_byte_buffer_reader_destroy(&rd);
    } else {
      *out = grpc_empty_slice();
      if (rs->resp) {
        rc = GRPC_STATUS_INTERNAL;
        set_err(err, "%s: cannot read the response", c->target);
      }
    }
  } else {
    char *d = grpc_slice_to_c_string(rs->details);
    set_err(err, "%s: %s: %s", c->target, sc_rpc_status_name(rc), d);
    gpr_free(d);
  }
  grpc_metadata_array_destroy(&rs->initial);
  grpc_metadata_array_destroy(&rs->trailing);
  if (rs->resp)
    grpc_byte_buffer_destroy(rs->resp);
  grpc_slice_unref(rs->details);
  gpr_free((void *)rs->error_string);
  return rc;
}

static void recv_ops(recv_state *rs, grpc_op *ops) {
  memset(rs, 0, sizeof *rs);
  grpc_metadata_array_init(&rs->initial);
  grpc_metadata_array_init(&rs->trailing);
  rs->details = grpc_empty_slice();
  ops[0].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[0].data.recv_initial_metadata.recv_initial_metadata = &rs->initial;
  ops[1].op = GRPC_OP_RECV_MESSAGE;
  ops[1].data.recv_message.recv_message = &rs->resp;
  ops[2].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[2].data.recv_status_on_client.trailing_metadata = &rs->trailing;
  ops[2].data.recv_status_on_client.status = &rs->status;
  ops[2].data.recv_status_on_client.status_details = &rs->details;
  ops[2].data.recv_status_on_client.error_string = &rs->error_string;
}

/* One attempt of a unary call: request bytes in, response slice out (unref it). */
static int unary_once(sc_rpc_client *c, const char *method, const uint8_t *req, size_t len, grpc_slice *out,
                      char **err) {
  grpc_call *call = new_call(c, method);
  if (!call) {
    set_err(err, "%s: cannot create a call", c->target);
    return -1;
  }
  grpc_byte_buffer *bb = bb_from(req, len);
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  recv_state rs;
  set_initial_metadata(c, &ops[0]);
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = bb;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  recv_ops(&rs, ops + 3);
  bool ok = run_batch(c, call, ops, 6);
  grpc_slice got;
  int rc = finish_recv(c, &rs, &got, err);
  if (rc == GRPC_STATUS_OK && !ok) {
    grpc_slice_unref(got);
    set_err(err, "%s: the call failed", c->target);
    rc = GRPC_STATUS_UNKNOWN;
  } else if (rc == GRPC_STATUS_OK) {
    *out = got;
  }
  grpc_byte_buffer_destroy(bb);
  grpc_call_unref(call);
  return rc;
}

/* A unary call, retried when the way to the server cut it (sc_rpc_call_cut: a unary request is sent
 * whole or not at all, and every method of the service is idempotent). */
static int unary(sc_rpc_client *c, const char *method, const uint8_t *req, size_t len, grpc_slice *out, char **err) {
  begin_op(c);
  int rc;
  for (int attempt = 0;; attempt++) {
    rc = unary_once(c, method, req, len, out, err);
    if (!sc_rpc_call_cut(rc, err ? *err : NULL) || !retry_pause(c, attempt))
      return rc;
  }
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *len) {
  *len = protobuf_c_message_get_packed_size(m);
  uint8_t *p = malloc(*len ? *len : 1);
  if (p)
    protobuf_c_message_pack(m, p);
  return p;
}

/* Decodes a response (and unrefs it) as a message of type d; NULL with *err set if it does not decode. */
static ProtobufCMessage *decode(sc_rpc_client *c, const ProtobufCMessageDescriptor *d, grpc_slice resp, char **err) {
  ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(resp), GRPC_SLICE_START_PTR(resp));
  grpc_slice_unref(resp);
  if (!m)
    set_err(err, "%s: cannot decode %s", c->target, d->name);
  return m;
}

/* One unary call with a message: req (NULL: the empty request) in, the response decoded as d out (free it
 * with protobuf_c_message_free_unpacked). Returns 0, or the status code / -1 with *err set. */
static int call(sc_rpc_client *c, const char *method, const ProtobufCMessage *req, const ProtobufCMessageDescriptor *d,
                ProtobufCMessage **resp, char **err) {
  *resp = NULL;
  size_t plen = 0;
  uint8_t *p = NULL;
  if (req && !(p = pack(req, &plen))) {
    set_err(err, "out of memory");
    return -1;
  }
  grpc_slice got;
  int rc = unary(c, method, p ? p : (const uint8_t *)"", plen, &got, err);
  free(p);
  if (rc)
    return rc;
  *resp = decode(c, d, got, err);
  return *resp ? 0 : -1;
}

/* --- Check ------------------------------------------------------------------------------------ */

typedef struct {
  Shardcheck__V1__CheckRequest req;
  Shardcheck__V1__CheckOptions opts;
  Shardcheck__V1__CostThresholds thresholds;
  Shardcheck__V1__TargetMesh mesh;
  Shardcheck__V1__MeshAxis *axes;
  Shardcheck__V1__MeshAxis **axisp;
  char *rules[1];
} req_build;

static int build_mesh(req_build *b, const sc_target_mesh *m, Shardcheck__V1__TargetMesh **out);

static int build_request(req_build *b, const sc_options *opt, const sc_rpc_render *render) {
  memset(b, 0, sizeof *b);
  shardcheck__v1__check_request__init(&b->req);
  shardcheck__v1__check_options__init(&b->opts);
  b->req.options = &b->opts;
  if (render) {
    b->opts.report_format = (Shardcheck__V1__ReportFormat)render->format;
    b->opts.pretty = render->pretty;
    b->opts.color = render->color;
  }
  if (!opt)
    return 0;
  b->req.format = (Shardcheck__V1__InputFormat)opt->input_format;
  b->req.file_name = (char *)(opt->input_name ? opt->input_name : "");
  if (opt->rules && *opt->rules) {
    b->rules[0] = (char *)opt->rules;
    b->opts.rules = b->rules;
    b->opts.n_rules = 1;
  }
  b->opts.min_severity = (Shardcheck__V1__Severity)opt->min_severity;
  b->opts.split_input_file = opt->split_input_file;
  b->opts.platform = (Shardcheck__V1__Platform)opt->platform;
  b->opts.max_depth = opt->max_depth;
  b->opts.max_ops = opt->max_ops;
  b->opts.device_memory_bytes = opt->device_memory_bytes;
  b->opts.no_propagate = opt->no_propagate;
  const sc_cost_thresholds *t = &opt->thresholds;
  if (t->replicated_fraction != 0 || t->replicated_min_bytes || t->padding_fraction != 0 || t->padding_min_bytes ||
      t->max_implicit_collective_bytes) {
    shardcheck__v1__cost_thresholds__init(&b->thresholds);
    b->thresholds.replicated_fraction = t->replicated_fraction;
    b->thresholds.replicated_min_bytes = t->replicated_min_bytes;
    b->thresholds.padding_fraction = t->padding_fraction;
    b->thresholds.padding_min_bytes = t->padding_min_bytes;
    b->thresholds.max_implicit_collective_bytes = t->max_implicit_collective_bytes;
    b->opts.thresholds = &b->thresholds;
  }
  return build_mesh(b, opt->mesh, &b->req.mesh);
}

/* The library's mesh as the request's, in b (borrowing m's strings and ids); *out = NULL for no mesh. */
static int build_mesh(req_build *b, const sc_target_mesh *m, Shardcheck__V1__TargetMesh **out) {
  *out = NULL;
  if (m) {
    shardcheck__v1__target_mesh__init(&b->mesh);
    b->axes = calloc(m->naxes ? m->naxes : 1, sizeof *b->axes);
    b->axisp = calloc(m->naxes ? m->naxes : 1, sizeof *b->axisp);
    if (!b->axes || !b->axisp)
      return -1;
    for (size_t i = 0; i < m->naxes; i++) {
      shardcheck__v1__mesh_axis__init(&b->axes[i]);
      b->axes[i].name = (char *)m->axes[i].name;
      b->axes[i].size = m->axes[i].size;
      b->axes[i].type = (Shardcheck__V1__AxisType)m->axes[i].type;
      b->axisp[i] = &b->axes[i];
    }
    b->mesh.n_axes = m->naxes;
    b->mesh.axes = b->axisp;
    b->mesh.n_device_ids = m->device_ids ? m->ndevice_ids : 0;
    b->mesh.device_ids = m->device_ids;
    b->mesh.platform = (Shardcheck__V1__Platform)m->platform;
    b->mesh.device_kind = (char *)(m->device_kind ? m->device_kind : "");
    *out = &b->mesh;
  }
  return 0;
}

static void free_request(req_build *b) {
  free(b->axes);
  free(b->axisp);
}

/* One attempt of CheckStream; *sent tells whether a chunk left this client (then it is not retried). */
static int check_stream_once(sc_rpc_client *c, req_build *b, const char *buf, size_t len, grpc_slice *out, bool *sent,
                             char **err) {
  *sent = false;
  grpc_call *call = new_call(c, SVC "CheckStream");
  if (!call) {
    set_err(err, "%s: cannot create a call", c->target);
    return -1;
  }
  grpc_op op;
  memset(&op, 0, sizeof op);
  set_initial_metadata(c, &op);
  bool ok = run_batch(c, call, &op, 1);
  size_t chunk = c->cfg.chunk_bytes;
  for (size_t off = 0, i = 0; ok && (off < len || i == 0); i++) {
    Shardcheck__V1__CheckChunk ch = SHARDCHECK__V1__CHECK_CHUNK__INIT;
    size_t n = len - off < chunk ? len - off : chunk;
    if (i == 0)
      ch.header = &b->req; /* its module is empty */
    ch.data.data = (uint8_t *)buf + off;
    ch.data.len = n;
    size_t plen;
    uint8_t *p = pack(&ch.base, &plen);
    if (!p) {
      set_err(err, "out of memory");
      grpc_call_cancel(call, NULL);
      ok = false;
      break;
    }
    grpc_byte_buffer *bb = bb_from(p, plen);
    free(p);
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = bb;
    ok = run_batch(c, call, &op, 1);
    *sent |= ok;
    grpc_byte_buffer_destroy(bb);
    off += n;
  }
  if (ok) {
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    run_batch(c, call, &op, 1);
  }
  grpc_op ops[3];
  memset(ops, 0, sizeof ops);
  recv_state rs;
  recv_ops(&rs, ops);
  run_batch(c, call, ops, 3); /* the status arrives even when the batch "fails" */
  int rc = finish_recv(c, &rs, out, err);
  grpc_call_unref(call);
  return rc;
}

/* CheckStream, retried on UNAVAILABLE while no chunk has been sent. */
static int check_stream(sc_rpc_client *c, req_build *b, const char *buf, size_t len, grpc_slice *out, char **err) {
  begin_op(c);
  int rc;
  bool sent;
  for (int attempt = 0;; attempt++) {
    rc = check_stream_once(c, b, buf, len, out, &sent, err);
    if (rc != GRPC_STATUS_UNAVAILABLE || sent || !retry_pause(c, attempt))
      return rc;
  }
}

/* The server's message limit decides between Check and CheckStream and the chunk size; asked once
 * per client (a failure leaves the defaults). */
static void fetch_limits(sc_rpc_client *c) {
  if (c->limits_fetched)
    return;
  c->limits_fetched = true;
  ProtobufCMessage *m;
  if (call(c, SVC "GetCapabilities", NULL, &shardcheck__v1__capabilities__descriptor, &m, NULL) != 0)
    return;
  Shardcheck__V1__Capabilities *r = (Shardcheck__V1__Capabilities *)m;
  if (r->limits && r->limits->max_message_bytes >= 4096) {
    c->server_max_msg = r->limits->max_message_bytes;
    /* Leave room for the header fields (file name, mesh, options) and framing. */
    size_t room = (size_t)(c->server_max_msg - c->server_max_msg / 8);
    if (c->cfg.stream_threshold > room)
      c->cfg.stream_threshold = room;
    if (c->cfg.chunk_bytes > room / 2)
      c->cfg.chunk_bytes = room / 2;
  }
  shardcheck__v1__capabilities__free_unpacked(r, NULL);
}

int sc_rpc_check(sc_rpc_client *c, const char *buf, size_t len, const sc_options *opt, const sc_rpc_render *render,
                 sc_rpc_check_result *out, char **err) {
  memset(out, 0, sizeof *out);
  if (len > 4096)
    fetch_limits(c);
  req_build b;
  if (build_request(&b, opt, render)) {
    free_request(&b);
    set_err(err, "out of memory");
    return -1;
  }
  const ProtobufCMessageDescriptor *d = &shardcheck__v1__check_response__descriptor;
  ProtobufCMessage *m = NULL;
  int rc;
  if (len > c->cfg.stream_threshold) {
    out->streamed = true;
    grpc_slice resp;
    rc = check_stream(c, &b, buf, len, &resp, err);
    if (rc == 0 && !(m = decode(c, d, resp, err)))
      rc = -1;
  } else {
    b.req.module.data = (uint8_t *)buf;
    b.req.module.len = len;
    rc = call(c, SVC "Check", &b.req.base, d, &m, err);
  }
  free_request(&b);
  if (rc != 0)
    return rc;
  Shardcheck__V1__CheckResponse *r = (Shardcheck__V1__CheckResponse *)m;
  out->report = strdup(r->report);
  if (r->summary) {
    out->errors = r->summary->errors;
    out->warnings = r->summary->warnings;
    out->notes = r->summary->notes;
    out->diagnostics = r->summary->diagnostics;
  }
  out->cache_hit = r->cache_hit;
  if (r->timing) {
    out->server_us = r->timing->total_us;
    out->analysis_us = r->timing->analysis_us;
  }
  snprintf(out->sha256, sizeof out->sha256, "%s", r->sha256);
  shardcheck__v1__check_response__free_unpacked(r, NULL);
  if (!out->report) {
    set_err(err, "out of memory");
    return -1;
  }
  return 0;
}

void sc_rpc_check_result_free(sc_rpc_check_result *r) {
  free(r->report);
  r->report = NULL;
}

int sc_rpc_check_file(const char *server, const char *path, const sc_options *opt, char **report_json, char **err) {
  *report_json = NULL;
  size_t len;
  char *buf = read_file(path, &len, err);
  if (!buf)
    return -1;
  sc_rpc_client *c = sc_rpc_connect(server, NULL, err);
  if (!c) {
    free(buf);
    return -1;
  }
  sc_options o = opt ? *opt : (sc_options){0};
  if (!o.input_name)
    o.input_name = path;
  sc_rpc_render render = {SC_RPC_REPORT_JSON, true, false};
  sc_rpc_check_result res;
  int rc = sc_rpc_check(c, buf, len, &o, &render, &res, err);
  if (rc == 0)
    *report_json = res.report;
  sc_rpc_close(c);
  free(buf);
  return rc;
}

/* --- ListRules, Explain, Health, GetCapabilities --------------------------------------------- */

/* --- Propagate -------------------------------------------------------------------------------- */

static void copy_propagate_result(const Shardcheck__V1__PropagateResponse *r, sc_rpc_propagate_result *out) {
  out->text = strdup(r->text);
  out->messages = calloc(r->n_messages ? r->n_messages : 1, sizeof *out->messages);
  if (!out->text || !out->messages)
    return;
  for (size_t i = 0; i < r->n_messages; i++) {
    sc_rpc_propagate_message *m = &out->messages[i];
    m->severity = (sc_severity)r->messages[i]->severity;
    m->line = r->messages[i]->line;
    m->col = r->messages[i]->column;
    if (!(m->message = strdup(r->messages[i]->message)))
      return;
    out->nmessages = i + 1;
  }
}

int sc_rpc_propagate(sc_rpc_client *c, const char *buf, size_t len, const char *name, const sc_propagate_options *opt,
                     sc_rpc_propagate_result *out, char **err) {
  memset(out, 0, sizeof *out);
  req_build b;
  memset(&b, 0, sizeof b);
  Shardcheck__V1__PropagateRequest req = SHARDCHECK__V1__PROPAGATE_REQUEST__INIT;
  req.module.data = (uint8_t *)buf;
  req.module.len = len;
  req.file_name = (char *)(name ? name : "");
  req.format = (Shardcheck__V1__InputFormat)opt->input_format;
  req.strategy = (char *)sc_propagate_strategy_name(opt->strategy);
  req.conservative = opt->conservative;
  req.keep_sharding_rules = opt->keep_sharding_rules;
  req.split_input_file = opt->split_input_file;
  req.json = opt->json;
  req.annotate_rules = opt->annotate_rules;
  req.insert_reshards = opt->insert_reshards;
  req.reshards_to_collectives = opt->reshards_to_collectives;
  req.dedup_functions_fully = opt->dedup_functions_fully;
  req.keep_redundant_reshards = opt->keep_redundant_reshards;
  req.insert_reshards_partial = opt->insert_reshards_partial;
  req.propagate_to_func_results = opt->propagate_to_func_results;
  if (build_mesh(&b, opt->mesh, &req.mesh)) {
    free_request(&b);
    set_err(err, "out of memory");
    return -1;
  }
  ProtobufCMessage *m;
  int rc = call(c, SVC "Propagate", &req.base, &shardcheck__v1__propagate_response__descriptor, &m, err);
  free_request(&b);
  if (rc)
    return rc;
  Shardcheck__V1__PropagateResponse *r = (Shardcheck__V1__PropagateResponse *)m;
  copy_propagate_result(r, out);
  bool complete = out->text && out->messages && out->nmessages == r->n_messages;
  shardcheck__v1__propagate_response__free_unpacked(r, NULL);
  if (!complete) {
    sc_rpc_propagate_result_free(out);
    set_err(err, "out of memory");
    return -1;
  }
  return 0;
}

void sc_rpc_propagate_result_free(sc_rpc_propagate_result *r) {
  for (size_t i = 0; i < r->nmessages; i++)
    free(r->messages[i].message);
  free(r->messages);
  free(r->text);
  memset(r, 0, sizeof *r);
}

int sc_rpc_rules(sc_rpc_client *c, sc_rpc_rule **rules, size_t *n, char **err) {
  *rules = NULL;
  *n = 0;
  ProtobufCMessage *m;
  int rc = call(c, SVC "ListRules", NULL, &shardcheck__v1__list_rules_response__descriptor, &m, err);
  if (rc)
    return rc;
  Shardcheck__V1__ListRulesResponse *r = (Shardcheck__V1__ListRulesResponse *)m;
  sc_rpc_rule *out = calloc(r->n_rules ? r->n_rules : 1, sizeof *out);
  bool oom = !out;
  for (size_t i = 0; out && i < r->n_rules; i++) {
    out[i].name = strdup(r->rules[i]->name);
    out[i].family = strdup(r->rules[i]->family);
    out[i].code = strdup(r->rules[i]->code);
    out[i].summary = strdup(r->rules[i]->summary);
    out[i].severity = (sc_severity)r->rules[i]->severity;
    oom |= !out[i].name || !out[i].family || !out[i].code || !out[i].summary;
  }
  size_t count = r->n_rules;
  shardcheck__v1__list_rules_response__free_unpacked(r, NULL);
  if (oom) {
    sc_rpc_rules_free(out, out ? count : 0);
    set_err(err, "out of memory");
    return -1;
  }
  *rules = out;
  *n = count;
  return 0;
}

void sc_rpc_rules_free(sc_rpc_rule *rules, size_t n) {
  for (size_t i = 0; rules && i < n; i++) {
    free(rules[i].name);
    free(rules[i].family);
    free(rules[i].code);
    free(rules[i].summary);
  }
  free(rules);
}

int sc_rpc_explain(sc_rpc_client *c, const char *code, char **text, char **err) {
  *text = NULL;
  Shardcheck__V1__ExplainRequest req = SHARDCHECK__V1__EXPLAIN_REQUEST__INIT;
  req.code = (char *)code;
  ProtobufCMessage *m;
  int rc = call(c, SVC "Explain", &req.base, &shardcheck__v1__explain_response__descriptor, &m, err);
  if (rc)
    return rc;
  Shardcheck__V1__ExplainResponse *r = (Shardcheck__V1__ExplainResponse *)m;
  *text = strdup(r->text);
  shardcheck__v1__explain_response__free_unpacked(r, NULL);
  if (!*text) {
    set_err(err, "out of memory");
    return -1;
  }
  return 0;
}

int sc_rpc_health(sc_rpc_client *c, const char *service, int *status, char **err) {
  *status = 0;
  Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  req.service = (char *)(service ? service : "");
  ProtobufCMessage *m;
  int rc = call(c, "/grpc.health.v1.Health/Check", &req.base, &grpc__health__v1__health_check_response__descriptor, &m,
                err);
  if (rc)
    return rc;
  Grpc__Health__V1__HealthCheckResponse *r = (Grpc__Health__V1__HealthCheckResponse *)m;
  *status = (int)r->status;
  grpc__health__v1__health_check_response__free_unpacked(r, NULL);
  return 0;
}

static const char *enum_name(const ProtobufCEnumDescriptor *d, int v) {
  const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(d, v);
  return ev ? ev->name : "?";
}

int sc_rpc_capabilities_json(sc_rpc_client *c, char **json, char **err) {
  *json = NULL;
  ProtobufCMessage *m;
  int rc = call(c, SVC "GetCapabilities", NULL, &shardcheck__v1__capabilities__descriptor, &m, err);
  if (rc)
    return rc;
  Shardcheck__V1__Capabilities *r = (Shardcheck__V1__Capabilities *)m;
  json_t *o = json_object();
  json_object_set_new(o, "server", json_string(c->target));
  json_object_set_new(o, "version", json_string(r->version));
  json_object_set_new(o, "report_schema", json_string(r->report_schema));
  json_object_set_new(o, "rules_version", json_string(r->rules_version));
  json_object_set_new(o, "rule_count", json_integer(r->rule_count));
  json_object_set_new(o, "workers", json_integer(r->workers));
  json_t *inf = json_array(), *rf = json_array();
  for (size_t i = 0; i < r->n_input_formats; i++)
    json_array_append_new(inf, json_string(enum_name(&shardcheck__v1__input_format__descriptor, r->input_formats[i])));
  for (size_t i = 0; i < r->n_report_formats; i++)
    json_array_append_new(rf, json_string(enum_name(&shardcheck__v1__report_format__descriptor, r->report_formats[i])));
  json_object_set_new(o, "input_formats", inf);
  json_object_set_new(o, "report_formats", rf);
  if (r->limits) {
    json_t *l = json_object();
    json_object_set_new(l, "max_message_bytes", json_integer((json_int_t)r->limits->max_message_bytes));
    json_object_set_new(l, "max_module_bytes", json_integer((json_int_t)r->limits->max_module_bytes));
    json_object_set_new(l, "max_arena_bytes", json_integer((json_int_t)r->limits->max_arena_bytes));
    json_object_set_new(l, "max_inflight", json_integer(r->limits->max_inflight));
    json_object_set_new(l, "max_depth", json_integer(r->limits->max_depth));
    json_object_set_new(l, "max_ops", json_integer(r->limits->max_ops));
    json_object_set_new(o, "limits", l);
  }
  shardcheck__v1__capabilities__free_unpacked(r, NULL);
  *json = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (!*json) {
    set_err(err, "out of memory");
    return -1;
  }
  return 0;
}
