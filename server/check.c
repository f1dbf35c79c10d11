/* check.c — the Check handler: runs on a libuv pool thread, one arena per request.
 *
 * decode -> validate (INVALID_ARGUMENT naming the field) -> cache key -> cache hit? -> sc_check ->
 * render in the requested format -> cache -> encode CheckResponse. Findings are never gRPC errors;
 * only undecodable/invalid requests, limits and cancellation are. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "handlers.h"
#include "shardcheck.h"
#include "util/arena.h"

/* The request's mesh as the library's sc_target_mesh (names and ids borrowed from the request). */
int target_mesh_from_request(sc_arena *a, const Shardcheck__V1__TargetMesh *m, sc_target_mesh *out) {
  out->naxes = m->n_axes;
  out->axes = ar_calloc(a, m->n_axes ? m->n_axes : 1, sizeof *out->axes);
  if (!out->axes)
    return -1;
  for (size_t i = 0; i < m->n_axes; i++) {
    out->axes[i].name = m->axes[i]->name;
    out->axes[i].size = m->axes[i]->size;
    out->axes[i].type = (sc_axis_type)m->axes[i]->type;
  }
  out->device_ids = m->n_device_ids ? m->device_ids : NULL;
  out->ndevice_ids = m->n_device_ids;
  out->platform = (sc_platform)m->platform;
  out->device_kind = m->device_kind && m->device_kind[0] ? m->device_kind : NULL;
  return 0;
}

/* The request's thresholds (zero fields and no message: the library's defaults). check_validate has
 * refused values out of range. */
static sc_cost_thresholds thresholds_from_request(const Shardcheck__V1__CheckOptions *o) {
  sc_cost_thresholds t;
  memset(&t, 0, sizeof t); /* hashed whole into the cache key */
  const Shardcheck__V1__CostThresholds *w = o ? o->thresholds : NULL;
  if (w) {
    t.replicated_fraction = w->replicated_fraction;
    t.replicated_min_bytes = w->replicated_min_bytes;
    t.padding_fraction = w->padding_fraction;
    t.padding_min_bytes = w->padding_min_bytes;
    t.max_implicit_collective_bytes = w->max_implicit_collective_bytes;
  }
  return t;
}

/* 0 (the default) or a fraction in (0, 1]; NaN is neither. */
static bool fraction_ok(double v) { return v == 0 || (v > 0 && v <= 1); }

static int validate_thresholds(const Shardcheck__V1__CostThresholds *t, rpc_reply *r) {
  const char *bad = !fraction_ok(t->replicated_fraction) ? "replicated_fraction"
                    : !fraction_ok(t->padding_fraction) ? "padding_fraction"
                                                       : NULL;
  if (bad) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "options.thresholds.%s: expected 0 (the default) or a number in (0, 1]",
                    bad);
    return -1;
  }
  bad = t->replicated_min_bytes < 0 ? "replicated_min_bytes"
        : t->padding_min_bytes < 0 ? "padding_min_bytes"
        : t->max_implicit_collective_bytes < 0 ? "max_implicit_collective_bytes"
                                               : NULL;
  if (bad) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "options.thresholds.%s: expected bytes >= 0 (0 = the default)", bad);
    return -1;
  }
  return 0;
}

int check_validate(const Shardcheck__V1__CheckRequest *req, rpc_reply *r) {
  if ((unsigned)req->format > SHARDCHECK__V1__INPUT_FORMAT__INPUT_FORMAT_EXPORTED) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "format: unknown input format %d", (int)req->format);
    return -1;
  }
  const Shardcheck__V1__CheckOptions *o = req->options;
  if (o) {
    if ((unsigned)o->min_severity > SHARDCHECK__V1__SEVERITY__SEVERITY_ERROR) {
      rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "options.min_severity: unknown severity %d", (int)o->min_severity);
      return -1;
    }
    if ((unsigned)o->platform > SHARDCHECK__V1__PLATFORM__PLATFORM_CPU) {
      rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "options.platform: unknown platform %d", (int)o->platform);
      return -1;
    }
    if ((unsigned)o->report_format > SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_HTML) {
      rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "options.report_format: unknown report format %d",
                      (int)o->report_format);
      return -1;
    }
    if (o->thresholds && validate_thresholds(o->thresholds, r) != 0) return -1;
  }
  const Shardcheck__V1__TargetMesh *m = req->mesh;
  if (!m)
    return 0;
  /* The library's validator, the same local mode runs on --mesh: one set of rules, one wording. */
  sc_arena *a = sc_arena_new(0);
  if (!a) {
    rpc_reply_error(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    return -1;
  }
  sc_target_mesh mesh = {0};
  int rc = target_mesh_from_request(a, m, &mesh);
  const char *error = NULL;
  if (rc)
    rpc_reply_error(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  else if (sc_mesh_validate(a, &mesh, &error)) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "%s", error);
    rc = -1;
  }
  sc_arena_free(a);
  return rc;
}

/* --- cache key: length-prefixed fields, so no two requests share an encoding --- */

static void kput(EVP_MD_CTX *h, const void *p, size_t n) {
  uint64_t len = n;
  EVP_DigestUpdate(h, &len, sizeof len);
  if (n)
    EVP_DigestUpdate(h, p, n);
}
static void kput_s(EVP_MD_CTX *h, const char *s) { kput(h, s, strlen(s)); }
static void kput_u(EVP_MD_CTX *h, uint64_t v) { EVP_DigestUpdate(h, &v, sizeof v); }

/* The module enters the key as its SHA-256 (`module_sha256`), the digest the report carries too: the
 * module is hashed once per request. */
static int cache_key(const Shardcheck__V1__CheckRequest *req, const uint8_t module_sha256[32], const char *rules,
                     uint32_t depth, uint32_t ops, uint8_t key[32]) {
  EVP_MD_CTX *h = EVP_MD_CTX_new();
  if (!h || !EVP_DigestInit_ex(h, EVP_sha256(), NULL)) {
    EVP_MD_CTX_free(h);
    return -1;
  }
  const Shardcheck__V1__CheckOptions *o = req->options;
  kput_s(h, "shardcheck.cache.v1");
  kput_s(h, SC_VERSION);
  kput_s(h, sc_rules_version());
  kput(h, module_sha256, 32);
  kput_u(h, (uint64_t)req->format);
  kput_s(h, req->file_name);
  kput_s(h, rules);
  kput_u(h, o ? (uint64_t)o->min_severity : 0);
  kput_u(h, o ? (uint64_t)o->split_input_file : 0);
  kput_u(h, o ? (uint64_t)o->platform : 0);
  kput_u(h, o ? (uint64_t)o->report_format : 0);
  kput_u(h, o ? (uint64_t)o->pretty : 0);
  kput_u(h, o ? (uint64_t)o->color : 0);
  kput_u(h, depth);
  kput_u(h, ops);
  kput_u(h, o && o->device_memory_bytes > 0 ? (uint64_t)o->device_memory_bytes : 0);
  kput_u(h, o ? (uint64_t)o->no_propagate : 0);
  sc_cost_thresholds t = thresholds_from_request(o);
  kput(h, &t, sizeof t); /* zero-initialized first: no padding bytes differ */
  const Shardcheck__V1__TargetMesh *m = req->mesh;
  kput_u(h, m ? 1 + m->n_axes : 0);
  for (size_t i = 0; m && i < m->n_axes; i++) {
    kput_s(h, m->axes[i]->name);
    kput_u(h, (uint64_t)m->axes[i]->size);
    kput_u(h, (uint64_t)m->axes[i]->type);
  }
  if (m) {
    kput(h, m->device_ids, m->n_device_ids * sizeof *m->device_ids);
    kput_u(h, (uint64_t)m->platform);
    kput_s(h, m->device_kind);
  }
  unsigned int n = 0;
  int ok = EVP_DigestFinal_ex(h, key, &n);
  EVP_MD_CTX_free(h);
  return ok && n == 32 ? 0 : -1;
}

/* gRPC core keeps deadlines in whole milliseconds: a zero deadline reaches the server with up to
 * 2 ms left, enough for a cached answer to go out as OK. Less than this much left counts as passed. */
#define DEADLINE_SLACK_MS 2

bool job_expired(gpr_timespec deadline) {
  if (gpr_time_cmp(deadline, gpr_inf_future(deadline.clock_type)) == 0)
    return false;
  gpr_timespec slack = gpr_time_from_millis(DEADLINE_SLACK_MS, GPR_TIMESPAN);
  return gpr_time_cmp(gpr_time_add(gpr_now(deadline.clock_type), slack), deadline) >= 0;
}

void job_cancelled_reply(check_job *j, const char *where) {
  if (job_expired(j->deadline))
    rpc_reply_error(&j->reply, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline exceeded %s", where);
  else
    rpc_reply_error(&j->reply, GRPC_STATUS_CANCELLED, "cancelled by the client %s", where);
}

/* Testing knob: a cancellable wait before the analysis, so tests can hold calls in flight. */
bool job_debug_delay(check_job *j) {
  for (uint64_t waited = 0; waited < j->lim.debug_delay_ms; waited++) {
    if (atomic_load(j->cancel))
      return false;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return !atomic_load(j->cancel);
}

static void encode_response(check_job *j, const cache_value *v, Shardcheck__V1__ReportFormat fmt) {
  Shardcheck__V1__Summary sum = SHARDCHECK__V1__SUMMARY__INIT;
  sum.errors = v->errors;
  sum.warnings = v->warnings;
  sum.notes = v->notes;
  sum.diagnostics = v->diagnostics;
  Shardcheck__V1__Timing t = SHARDCHECK__V1__TIMING__INIT;
  int64_t now = now_ns();
  t.analysis_us = j->analysis_us;
  t.total_us = (uint64_t)(now - j->accepted_ns) / 1000;
  t.queue_us = t.total_us > j->analysis_us ? t.total_us - j->analysis_us : 0;
  Shardcheck__V1__CheckResponse out = SHARDCHECK__V1__CHECK_RESPONSE__INIT;
  out.report = v->report;
  out.report_format = fmt;
  out.summary = &sum;
  out.cache_hit = j->cache_hit;
  out.timing = &t;
  out.sha256 = (char *)v->sha256;
  out.module_bytes = v->module_bytes;
  out.rules_version = (char *)sc_rules_version();
  j->errors = v->errors;
  j->warnings = v->warnings;
  j->notes = v->notes;
  rpc_reply_pack(&j->reply, &out.base);
}

/* Joins the repeated `rules` globs into the library's comma-separated form. */
static char *join_rules(const Shardcheck__V1__CheckOptions *o) {
  size_t n = 1;
  for (size_t i = 0; o && i < o->n_rules; i++)
    n += strlen(o->rules[i]) + 1;
  char *s = malloc(n);
  if (!s)
    return NULL;
  s[0] = '\0';
  size_t k = 0;
  for (size_t i = 0; o && i < o->n_rules; i++) {
    if (!o->rules[i][0])
      continue;
    k += (size_t)sprintf(s + k, "%s%s", k ? "," : "", o->rules[i]);
  }
  return s;
}

static void analyze(check_job *j, const Shardcheck__V1__CheckRequest *req, const uint8_t *mod, size_t len) {
  const Shardcheck__V1__CheckOptions *o = req->options;
  uint32_t depth = o && o->max_depth && o->max_depth < j->lim.max_depth ? o->max_depth : j->lim.max_depth;
  uint32_t ops = o && o->max_ops && o->max_ops < j->lim.max_ops ? o->max_ops : j->lim.max_ops;
  Shardcheck__V1__ReportFormat fmt = o ? o->report_format : SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_JSON;
  char *rules = join_rules(o);
  uint8_t key[32];
  bool keyed = false;
  cache_value cv = {0};
  if (!rules) {
    rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  uint8_t digest[32];
  char digest_hex[65] = "";
  unsigned int dn = 0;
  if (EVP_Digest(mod, len, digest, &dn, EVP_sha256(), NULL) && dn == 32) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) digest_hex[2 * i] = hex[digest[i] >> 4], digest_hex[2 * i + 1] = hex[digest[i] & 15];
    digest_hex[64] = '\0';
  }
  if (j->cache && digest_hex[0] && cache_key(req, digest, rules, depth, ops, key) == 0) {
    keyed = true;
    if (cache_get(j->cache, key, &cv)) {
      j->cache_hit = true;
      if (job_expired(j->deadline)) /* a cached answer is no excuse to answer past the deadline */
        rpc_reply_error(&j->reply, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline exceeded before the answer was sent");
      else
        encode_response(j, &cv, fmt);
      cache_value_clear(&cv);
      free(rules);
      return;
    }
  }
  if (!job_debug_delay(j)) {
    job_cancelled_reply(j, "before the analysis started");
    free(rules);
    return;
  }
  int64_t t0 = now_ns();
  uint64_t arena_limit = j->arena_limit && j->arena_limit < j->lim.max_arena_bytes ? j->arena_limit
                                                                                   : j->lim.max_arena_bytes;
  j->arena_short = false;
  sc_arena *arena = sc_arena_new(arena_limit);
  if (!arena) {
    rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory creating the analysis arena");
    free(rules);
    return;
  }
  sc_target_mesh mesh = {0};
  const Shardcheck__V1__TargetMesh *m = req->mesh;
  bool mesh_ok = !m || target_mesh_from_request(arena, m, &mesh) == 0;
  sc_options opt = {0};
  opt.input_format = (sc_format)req->format;
  opt.input_name = req->file_name[0] ? req->file_name : NULL;
  opt.rules = rules[0] ? rules : NULL;
  opt.min_severity = o ? (sc_severity)o->min_severity : SC_SEV_NOTE;
  opt.split_input_file = o && o->split_input_file;
  opt.mesh = m ? &mesh : NULL;
  opt.platform = o ? (sc_platform)o->platform : SC_PLATFORM_UNSPECIFIED;
  opt.max_depth = depth;
  opt.max_ops = ops;
  opt.device_memory_bytes = o && o->device_memory_bytes > 0 ? o->device_memory_bytes : 0;
  opt.no_propagate = o && o->no_propagate;
  opt.thresholds = thresholds_from_request(o);
  opt.cancel = j->cancel;
  opt.input_sha256 = digest_hex[0] ? digest_hex : NULL;
  if (getrandom(&opt.hash_seed, sizeof opt.hash_seed, GRND_NONBLOCK) != (ssize_t)sizeof opt.hash_seed)
    opt.hash_seed = 0; /* the library then keys its tables with addresses */
  sc_report *rep = NULL;
  sc_status st = !mesh_ok ? SC_ERR_LIMIT : sc_check(arena, (const char *)mod, len, &opt, &rep);
  const char *failure = rep && rep->failure ? rep->failure : "";
  if (st == SC_OK && rep->propagation_limited && mesh_ok && arena_limit < j->lim.max_arena_bytes) {
    /* propagation needed more than this arena: run again in a larger one (regrow_arena), as for a limit */
    st = SC_ERR_LIMIT;
    failure = "propagation needs a larger arena";
  }
  switch (st) {
  case SC_OK: {
    char *text = fmt == SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_TEXT    ? sc_report_text(rep, o && o->color)
                 : fmt == SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_SARIF ? sc_report_sarif(rep)
                 : fmt == SHARDCHECK__V1__REPORT_FORMAT__REPORT_FORMAT_HTML  ? sc_report_html(rep)
                                                                            : sc_report_json(rep, o && o->pretty);
    if (!text) {
      rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory rendering the report");
      break;
    }
    j->analysis_us = (uint64_t)(now_ns() - t0) / 1000;
    cv.report = text;
    cv.report_len = strlen(text);
    cv.errors = (uint32_t)rep->errors;
    cv.warnings = (uint32_t)rep->warnings;
    cv.notes = (uint32_t)rep->notes;
    cv.diagnostics = (uint32_t)rep->ndiags;
    memcpy(cv.sha256, rep->sha256, sizeof cv.sha256);
    cv.sha256[64] = '\0';
    cv.module_bytes = len;
    if (keyed)
      cache_put(j->cache, key, &cv);
    encode_response(j, &cv, fmt);
    free(text);
    break;
  }
  case SC_ERR_CANCELLED:
    job_cancelled_reply(j, "during the analysis");
    break;
  case SC_ERR_LIMIT:
    j->arena_short = mesh_ok && arena_limit < j->lim.max_arena_bytes;
    rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "analysis limit exceeded (max_arena_bytes=%llu)%s%s",
                    (unsigned long long)j->lim.max_arena_bytes, failure[0] ? ": " : "", failure);
    break;
  case SC_ERR_INVALID:
    rpc_reply_error(&j->reply, GRPC_STATUS_INVALID_ARGUMENT, "options: %s", failure[0] ? failure : "invalid options");
    break;
  }
  j->arena_bytes = sc_arena_used(arena);
  sc_arena_free(arena);
  free(rules);
}

void check_run(check_job *j) {
  rpc_reply_clear(&j->reply);
  if (atomic_load(j->cancel)) {
    job_cancelled_reply(j, "while queued");
    return;
  }
  if (job_expired(j->deadline)) {
    rpc_reply_error(&j->reply, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline exceeded while queued");
    return;
  }
  if (j->propagate) {
    propagate_run(j);
    return;
  }
  if (j->hdr) {
    if (check_validate(j->hdr, &j->reply) == 0)
      analyze(j, j->hdr, j->module, j->module_len);
    return;
  }
  Shardcheck__V1__CheckRequest *req = shardcheck__v1__check_request__unpack(NULL, j->req_len, j->req_bytes);
  if (!req) {
    rpc_reply_error(&j->reply, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode shardcheck.v1.CheckRequest (%zu bytes)",
                    j->req_len);
    return;
  }
  if (req->module.len > j->lim.max_module_bytes)
    rpc_reply_error(&j->reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "module: %zu bytes, over the limit max_module_bytes=%llu",
                    req->module.len, (unsigned long long)j->lim.max_module_bytes);
  else if (check_validate(req, &j->reply) == 0)
    analyze(j, req, req->module.len ? req->module.data : (const uint8_t *)"", req->module.len);
  shardcheck__v1__check_request__free_unpacked(req, NULL);
}
