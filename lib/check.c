/* check.c — sc_check(): detect the format, split chunks, parse, build the sharding model, run the
 * rules, and assemble the report. Also the mesh spec parser. */
#include <ctype.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"
#include "front/front.h"
#include "ir/ir.h"
#include "model/model.h"
#include "propagate/engine.h"
#include "rules/rules.h"
#include "shardcheck.h"

int sc_platform_parse(const char *s, sc_platform *out) {
  if (!strcmp(s, "tpu")) *out = SC_PLATFORM_TPU;
  else if (!strcmp(s, "gpu") || !strcmp(s, "cuda") || !strcmp(s, "rocm")) *out = SC_PLATFORM_GPU;
  else if (!strcmp(s, "cpu")) *out = SC_PLATFORM_CPU;
  else if (!strcmp(s, "") || !strcmp(s, "unspecified")) *out = SC_PLATFORM_UNSPECIFIED;
  else return -1;
  return 0;
}

int sc_format_parse(const char *s, sc_format *out) {
  if (!strcmp(s, "auto")) *out = SC_FMT_AUTO;
  else if (!strcmp(s, "stablehlo") || !strcmp(s, "mlir")) *out = SC_FMT_STABLEHLO;
  else if (!strcmp(s, "hlo")) *out = SC_FMT_HLO;
  else if (!strcmp(s, "bytecode") || !strcmp(s, "mlirbc")) *out = SC_FMT_BYTECODE;
  else if (!strcmp(s, "exported")) *out = SC_FMT_EXPORTED;
  else return -1;
  return 0;
}

static bool parse_i64(const char **pp, int64_t *out) {
  const char *p = *pp;
  if (!isdigit((unsigned char)*p)) return false;
  int64_t v = 0;
  while (isdigit((unsigned char)*p)) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*p++ - '0');
  }
  *pp = p;
  *out = v;
  return true;
}

/* "data=2,model=4:explicit[;devices=0,1,...][;platform=tpu][;device_kind=TPU v5 lite]" */
int sc_mesh_parse(sc_arena *a, const char *spec, sc_target_mesh *out, const char **error) {
  memset(out, 0, sizeof *out);
  SC_VEC(sc_mesh_axis) axes = {0};
  SC_VEC(int64_t) devs = {0};
  const char *p = spec;
  while (*p && *p != ';') {
    const char *name = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_')) p++;
    if (p == name) {
      *error = ar_printf(a, "mesh spec: expected an axis name at '%s' (format: name=size[:auto|explicit|manual],...)", p);
      return -1;
    }
    sc_mesh_axis ax = {ar_strndup(a, name, (size_t)(p - name)), 0, SC_AXIS_AUTO};
    if (*p != '=') {
      *error = ar_printf(a, "mesh spec: expected '=' after axis '%s'", ax.name);
      return -1;
    }
    p++;
    if (!parse_i64(&p, &ax.size)) {
      *error = ar_printf(a, "mesh spec: axis '%s' needs a positive integer size", ax.name);
      return -1;
    }
    if (*p == ':') {
      p++;
      const char *t = p;
      while (isalpha((unsigned char)*p)) p++;
      size_t n = (size_t)(p - t);
      if (n == 4 && !strncmp(t, "auto", 4)) ax.type = SC_AXIS_AUTO;
      else if (n == 8 && !strncmp(t, "explicit", 8)) ax.type = SC_AXIS_EXPLICIT;
      else if (n == 6 && !strncmp(t, "manual", 6)) ax.type = SC_AXIS_MANUAL;
      else {
        *error = ar_printf(a, "mesh spec: axis '%s' has unknown type '%.*s' (auto, explicit or manual)", ax.name,
                                 (int)n, t);
        return -1;
      }
    }
    SC_PUSH(a, axes, ax);
    if (*p == ',') p++;
    else if (*p && *p != ';') {
      *error = ar_printf(a, "mesh spec: unexpected '%c' after axis '%s'", *p, ax.name);
      return -1;
    }
  }
  while (*p == ';') {
    p++;
    if (!strncmp(p, "devices=", 8)) {
      p += 8;
      while (*p && *p != ';') {
        int64_t d;
        if (!parse_i64(&p, &d)) {
          *error = ar_strdup(a, "mesh spec: devices= needs comma-separated device ids");
          return -1;
        }
        SC_PUSH(a, devs, d);
        if (*p == ',') p++;
      }
    } else if (!strncmp(p, "platform=", 9)) {
      p += 9;
      const char *e = strchr(p, ';');
      char *name = ar_strndup(a, p, e ? (size_t)(e - p) : strlen(p));
      if (sc_platform_parse(name, &out->platform)) {
        *error = ar_printf(a, "mesh spec: unknown platform '%s' (tpu, gpu or cpu)", name);
        return -1;
      }
      p += strlen(name);
    } else if (!strncmp(p, "device_kind=", 12)) {
      p += 12;
      const char *e = strchr(p, ';');
      out->device_kind = ar_strndup(a, p, e ? (size_t)(e - p) : strlen(p));
      /* a kind outside the table (a CPU, a new chip) leaves the device memory unknown (docs/cost.md) */
      p += strlen(out->device_kind);
    } else {
      *error = ar_printf(a, "mesh spec: unknown section '%s' (devices=..., platform=... or device_kind=...)", p);
      return -1;
    }
  }
  out->axes = axes.v;
  out->naxes = axes.n;
  out->device_ids = devs.v;
  out->ndevice_ids = devs.n;
  return sc_mesh_validate(a, out, error);
}

void sc_sha256_hex(const char *buf, size_t len, char out[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL)) n = 0;
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < n && i < 32; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  out[2 * (n < 32 ? n : 32)] = '\0';
}

static bool is_sha256_hex(const char *s) {
  if (!s) return false;
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return s[64] == '\0';
}

static int diag_cmp(const void *x, const void *y) {
  const sc_diag *a = x, *b = y;
  if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
  int c = strcmp(a->code, b->code);
  if (c) return c;
  return strcmp(a->message, b->message);
}

static void fill_mesh(sc_arena *a, sc_report *r, const md_model *model, const sc_options *opt) {
  const md_mesh *mesh = model ? model->effective : NULL;
  r->platform = opt->platform ? opt->platform : opt->mesh ? opt->mesh->platform : SC_PLATFORM_UNSPECIFIED;
  if (opt->mesh) {
    r->mesh_source = "request";
    r->mesh_axes = opt->mesh->axes;
    r->mesh_naxes = opt->mesh->naxes;
    int64_t n = 1;
    for (size_t i = 0; i < opt->mesh->naxes; i++) n *= opt->mesh->axes[i].size;
    r->mesh_devices = n;
    return;
  }
  if (!mesh) {
    r->mesh_source = "none";
    r->mesh_devices = model && model->num_partitions > 0 ? model->num_partitions : 1;
    return;
  }
  r->mesh_source = "module";
  r->mesh_devices = mesh->devices;
  if (mesh->synthesized) return; /* GSPMD module: num_partitions devices, no named axes */
  r->mesh_axes = ar_calloc(a, mesh->naxes ? mesh->naxes : 1, sizeof *r->mesh_axes);
  for (uint32_t i = 0; i < mesh->naxes; i++) {
    r->mesh_axes[i].name = ir_span_dup(a, mesh->axes[i].name);
    r->mesh_axes[i].size = mesh->axes[i].size;
    r->mesh_axes[i].type = mesh->axes[i].type;
  }
  r->mesh_naxes = mesh->naxes;
  r->mesh_devices = mesh->devices;
}

/* State shared between sc_check() and its body; lives in memory (its address is taken), so it is
 * valid after the arena's failure longjmp. */
typedef struct {
  sc_arena *arena;
  const char *buf;
  size_t len;
  const sc_options *opt;
  sc_report *report;
  sc_status status; /* check_body's, when it returned */
} check_run;

static sc_status check_body(check_run *run);

/* Runs fn(user) within half of what the request's byte and step limits leave. Returns 0, or 1 when it
 * ran past them (what it allocated stays in the arena). Cancellation still ends the whole check. */
static int within_half_limits(check_run *run, void (*fn)(void *user), void *user) {
  sc_arena *a = run->arena;
  size_t byte_limit = ar_limit(a), used = sc_arena_used(a);
  unsigned long long step_limit = ar_step_limit(a), steps = ar_steps(a);
  if (byte_limit) ar_set_limit(a, used < byte_limit ? used + (byte_limit - used) / 2 : byte_limit);
  if (step_limit) sc_arena_set_step_limit(a, steps < step_limit ? steps + (step_limit - steps) / 2 : step_limit);
  jmp_buf *outer = ar_failure_jump(a); /* check_guarded's */
  jmp_buf env;
  ar_set_failure_jump(a, &env);
  int why = setjmp(env);
  if (!why) fn(user);
  ar_set_failure_jump(a, outer);
  ar_set_limit(a, byte_limit);
  sc_arena_set_step_limit(a, step_limit);
  if (why == AR_CANCELLED && outer) longjmp(*outer, AR_CANCELLED);
  return why ? 1 : 0;
}

typedef struct {
  sc_arena *arena;
  const ir_module *m;
  ru_ctx *ctx;
  prop_engine *engine;
} propagation_job;

static void run_propagation(void *user) {
  propagation_job *j = user;
  /* the pipeline's propagation; size-one axes stay as written (they place nothing, and the report
   * shows the user's shardings) */
  prop_engine_options eo = {.strategy = PROP_USER_PRIORITY, .through_calls = true, .apply_constraints = true,
                            .split_constants = true, .manual_axes_cleanup = true};
  j->engine = prop_engine_run(j->arena, j->m, j->ctx->model, &eo);
}

/* Propagation as Shardy's pipeline runs it (user priorities, through calls), within half of what the
 * request's byte and step limits leave: past that, SC0004 says so and the rules read the written
 * shardings (NULL). */
static const prop_engine *propagate_for_rules(check_run *run, ru_ctx *ctx, const ir_module *m, uint32_t at) {
  propagation_job job = {run->arena, m, ctx, NULL};
  if (within_half_limits(run, run_propagation, &job)) {
    run->report->propagation_limited = true;
    ctx->rule = ru_rule_by_name("propagation-limit");
    ru_emit_at(ctx, at, NULL, "sharding propagation stopped at half of the request's limits (%s); the rules read "
               "the shardings written in the module", ar_limit(run->arena) ? "memory" : "work");
    ctx->rule = NULL;
    return NULL;
  }
  return job.engine;
}

typedef struct {
  sc_arena *arena;
  const ir_module *m;
  ru_ctx *ctx;
  cost_analysis *cost;
} collectives_job;

static void run_collectives(void *user) {
  collectives_job *j = user;
  cost_collectives(j->arena, j->m, j->ctx->model, j->ctx->propagation, j->ctx->lines, j->cost);
}

/* The module's cost and its collectives (the reshard pass over the propagated shardings: the report
 * carries the first module's, the communication rules read every module's) within half of what the
 * limits leave, else left uncomputed (null). */
static cost_analysis *cost_for_rules(check_run *run, ru_ctx *ctx, const ir_module *m) {
  cost_analysis *cost = cost_compute(run->arena, m, ctx->model, ctx->propagation, run->opt);
  collectives_job job = {run->arena, m, ctx, cost};
  if (ctx->propagation && within_half_limits(run, run_collectives, &job)) {
    run->report->propagation_limited = true; /* a caller with a larger arena gets them */
    cost->report.collectives = NULL;
    cost->collective_reshards = NULL;
    cost->report.ncollectives = 0;
  }
  return cost;
}

static void run_check_body(void *arg) {
  check_run *run = arg;
  run->status = check_body(run);
}

static sc_status check_guarded(check_run *run) {
  /* Long loops poll the cancel flag through the arena's work meter (see ar_step). */
  int why = ar_guarded(run->arena, run->opt->cancel, run_check_body, run);
  if (!why) return run->status;
  if (run->report)
    run->report->failure = why == AR_CANCELLED ? "cancelled" : "the request needs more memory or work than its limit allows";
  return why == AR_CANCELLED ? SC_ERR_CANCELLED : SC_ERR_LIMIT;
}

sc_status sc_check(sc_arena *arena, const char *buf, size_t len, const sc_options *options, sc_report **out) {
  static const sc_options defaults;
  check_run run = {arena, buf, len, options ? options : &defaults, NULL, SC_OK};
  sc_status status = check_guarded(&run);
  *out = run.report;
  return status;
}

/* Filters, folds, sorts and counts the diagnostics into the report. */
static void finish_diagnostics(ru_ctx *ctx, const ru_rule_selection *sel, sc_report *r) {
  const sc_options *opt = ctx->options;
  /* Keep selected rules' diagnostics at or above the severity floor; syntax is never dropped. */
  bool *keep = ar_alloc(ctx->arena, (ctx->diags.n ? ctx->diags.n : 1) * sizeof *keep);
  for (size_t i = 0; i < ctx->diags.n; i++) {
    const sc_diag *d = &ctx->diags.v[i];
    const sc_rule *rule = ru_rule_by_code(d->code);
    bool engine = rule && ru_rule_is_engine(rule);
    keep[i] = (engine || d->severity >= opt->min_severity) && (!rule || engine || sel->enabled[rule - ru_rule_table]);
  }
  /* One mistake, one diagnostic: consequences fold into their root diagnostic. */
  ru_diags_fold(ctx, keep);
  size_t kept = 0;
  for (size_t i = 0; i < ctx->diags.n; i++)
    if (keep[i]) ctx->diags.v[kept++] = ctx->diags.v[i];
  if (kept > 1) qsort(ctx->diags.v, kept, sizeof *ctx->diags.v, diag_cmp);
  r->diags = ctx->diags.v;
  r->ndiags = kept;
  for (size_t i = 0; i < kept; i++) {
    switch (r->diags[i].severity) {
    case SC_SEV_ERROR: r->errors++; break;
    case SC_SEV_WARNING: r->warnings++; break;
    default: r->notes++; break;
    }
  }
}

static sc_status check_body(check_run *run) {
  sc_arena *arena = run->arena;
  const char *buf = run->buf;
  size_t len = run->len;
  const sc_options *opt = run->opt;
  sc_report *r = ar_alloc(arena, sizeof *r);
  run->report = r;
  r->input_name = opt->input_name ? opt->input_name : "<stdin>";
  r->buf = buf;
  r->bytes = len;
  r->format = opt->input_format != SC_FMT_AUTO ? opt->input_format : fe_detect_format(buf, len);
  r->has_lines = r->format != SC_FMT_BYTECODE && r->format != SC_FMT_EXPORTED;
  if (is_sha256_hex(opt->input_sha256)) memcpy(r->sha256, opt->input_sha256, 65); /* hashed once, by the caller */
  else if (!opt->sha256_by_caller) sc_sha256_hex(buf, len, r->sha256);
  r->mesh_source = "none";
  r->cost.device_memory_bytes = -1;
  ar_set_hash_seed(arena, opt->hash_seed);

  sc_status status = SC_OK;
  ru_rule_selection sel;
  const char *error = NULL;
  if (ru_rule_select(arena, opt->rules, &sel, &error)) {
    r->failure = error;
    return SC_ERR_INVALID;
  }
  if (opt->mesh && sc_mesh_validate(arena, opt->mesh, &error)) {
    r->failure = error;
    return SC_ERR_INVALID;
  }
  if (len > UINT32_MAX - 1) {
    r->failure = "inputs larger than 4 GiB are not supported";
    return SC_ERR_INVALID;
  }

  /* Binary formats have no lines: diagnostics carry op paths and Python locations instead. */
  ir_linemap lines = r->has_lines ? ir_linemap_build(arena, buf, len) : (ir_linemap){NULL, 0, NULL, 0, 0};
  ru_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.arena = arena;
  ctx.options = opt;
  ctx.lines = r->has_lines ? &lines : NULL;
  ctx.buf = buf;
  ctx.len = len;

  fe_chunk *chunks;
  size_t nchunks = fe_split_chunks(arena, buf, len, opt->split_input_file && r->has_lines, &chunks);
  md_model *first_model = NULL;
  for (size_t i = 0; i < nchunks; i++) {
    if (opt->cancel && *opt->cancel) {
      status = SC_ERR_CANCELLED;
      break;
    }
    fe_parse_input in = {arena, buf, len, chunks[i].begin, chunks[i].end, &lines,
                         opt->max_depth ? opt->max_depth : SC_DEFAULT_MAX_DEPTH,
                         opt->max_ops ? opt->max_ops : SC_DEFAULT_MAX_OPS, opt->cancel};
    fe_parse_error perr;
    memset(&perr, 0, sizeof perr);
    ir_module *m = fe_parse_format(r->format, &in, &perr);
    if (!m) {
      if (perr.cancelled) {
        status = SC_ERR_CANCELLED;
        break;
      }
      if (opt->split_input_file && fe_chunk_is_blank(buf, chunks[i])) continue; /* as mlir-opt: an empty module */
      ctx.rule = ru_rule_by_name(perr.limit ? "input-limit" : "syntax");
      ru_emit_at(&ctx, perr.failed ? perr.offset : chunks[i].begin, NULL, "%s",
                   perr.message ? perr.message : "the module could not be parsed");
      ctx.rule = NULL;
      continue;
    }
    if (m->reader_note) {
      ctx.rule = ru_rule_by_name("producer-version");
      ru_emit_at(&ctx, chunks[i].begin, NULL, "%s", m->reader_note);
      ctx.rule = NULL;
    }
    ir_module_finalize(arena, m); /* whichever front end ran: rules compare op->kind, never names */
    r->functions += m->nfuncs;
    r->ops += m->nops;
    ctx.module = m;
    ctx.model = md_model_build(arena, m, opt);
    if (!first_model) first_model = ctx.model;
    if (!opt->no_propagate) ctx.propagation = propagate_for_rules(run, &ctx, m, chunks[i].begin);
    ctx.cost = cost_for_rules(run, &ctx, m); /* the report carries the first module's */
    if (!r->cost.computed) r->cost = ctx.cost->report; /* the first module's */
    size_t first_diag = ctx.diags.n;
    ru_rules_run(&ctx, &sel);
    if (!r->has_lines && ctx.diags.n > first_diag)
      ir_locate_without_lines(arena, m, ctx.diags.v + first_diag, ctx.diags.n - first_diag);
    if (opt->cancel && *opt->cancel) {
      status = SC_ERR_CANCELLED;
      break;
    }
  }
  fill_mesh(arena, r, first_model, opt);
  finish_diagnostics(&ctx, &sel, r);
  if (status == SC_ERR_CANCELLED) r->failure = "cancelled";
  return status;
}
