/* export.c — checks of what a jax.export container records against the target: its platforms (SC0701),
 * its device count (SC0702) and its stored in/out shardings (SC0703). */
#include <inttypes.h>
#include <string.h>

#include "model/model.h"
#include "rules/fixes.h"
#include "rules/rules.h"

/* JAX's platform names for a target platform: gpu is "cuda" or "rocm". */
static bool platform_matches(sc_platform p, ir_span name) {
  switch (p) {
  case SC_PLATFORM_TPU: return ir_span_eq(name, "tpu");
  case SC_PLATFORM_GPU: return ir_span_eq(name, "cuda") || ir_span_eq(name, "rocm") || ir_span_eq(name, "gpu");
  case SC_PLATFORM_CPU: return ir_span_eq(name, "cpu");
  default: return true;
  }
}

void ru_check_export_platform(ru_ctx *ctx);
void ru_check_export_platform(ru_ctx *ctx) {
  const ir_export_info *x = ctx->module->exported;
  if (!x || !ctx->model || !ctx->model->platform || !x->nplatforms) return;
  for (uint32_t i = 0; i < x->nplatforms; i++)
    if (platform_matches(ctx->model->platform, x->platforms[i])) return;
  ar_str list_s = SC_ASTR_INIT(ctx->arena);
  for (uint32_t i = 0; i < x->nplatforms; i++) ar_str_printf(&list_s, "%s%.*s", i ? ", " : "", SC_SPAN_ARG(x->platforms[i]));
  const char *list = ar_str_str(&list_s);
  const ir_op *mod = ctx->module->module;
  sc_diag *d = ru_emit(ctx, mod,
                       "function '%.*s' was exported for platforms (%s) and is checked for %s: The current platform %s "
                       "is not among the platforms required by the module: [%s]",
                       SC_SPAN_ARG(x->function_name), list, sc_platform_name(ctx->model->platform),
                       sc_platform_name(ctx->model->platform), list);
  ru_diag_context(ctx, d, "exported_platforms", list);
  ru_diag_fix(ctx, d, "Export for every platform the artifact will run on",
              ar_printf(ctx->arena, "exported = jax.export.export(jax.jit(f), platforms=(%s'%s'))(*args)",
                              "'tpu', ", ctx->model->platform == SC_PLATFORM_GPU ? "cuda" : sc_platform_name(ctx->model->platform)));
}

/* ---- export-nr-devices (SC0702) ------------------------------------------------------------------- */

/* The fix both device checks share: the target mesh to export again under (the rest is prose in the note). */
static void reexport_fix(ru_ctx *ctx, sc_diag *d) {
  const md_mesh *target = ctx->model->target;
  sc_fix *f = ru_diag_fix(ctx, d, "Export again for the target's device count (or run the artifact on the devices it was exported for)",
                          ar_printf(ctx->arena, "mesh = %s", ru_py_make_mesh(ctx->arena, target)));
  f->note = ar_printf(ctx->arena,
                            "then jax.export.export(jax.jit(f, in_shardings=NamedSharding(mesh, ...), out_shardings=...))(*args), "
                            "so the artifact records %" PRId64 " devices and shardings over them",
                            target->devices);
}

/* JAX (export/_export.py, call_exported): an artifact exported for nr_devices != 1 devices runs only
 * in a context with exactly that many; one exported for 1 device runs anywhere. */
static bool nr_devices_mismatch(const ru_ctx *ctx) {
  const ir_export_info *x = ctx->module->exported;
  return x && ctx->model && ctx->model->target && x->nr_devices > 1 &&
         (int64_t)x->nr_devices != ctx->model->target->devices;
}

void ru_check_export_nr_devices(ru_ctx *ctx);
void ru_check_export_nr_devices(ru_ctx *ctx) {
  if (!nr_devices_mismatch(ctx)) return;
  const ir_export_info *x = ctx->module->exported;
  int64_t n = ctx->model->target->devices;
  sc_diag *d = ru_emit(ctx, ctx->module->module,
                       "Function %.*s was exported for %u devices and is called in a context with %" PRId64
                       " devices, which is not allowed.",
                       SC_SPAN_ARG(x->function_name), x->nr_devices, n);
  ru_diag_context(ctx, d, "exported_nr_devices", ar_printf(ctx->arena, "%u", x->nr_devices));
  ru_diag_context(ctx, d, "num_devices", ar_printf(ctx->arena, "%" PRId64, n));
  /* The module inside was lowered for the same devices: its mesh-target finding is this one. */
  ru_diag_claims(ctx, d, "SC0107", SC_SITE_ANY);
  reexport_fix(ctx, d);
}

/* ---- export-sharding-devices (SC0703) ------------------------------------------------------------- */

/* HloSharding::Validate's device checks for one stored sharding against `n` devices (no shapes: the
 * container's avals are not read, so each leaf is validated against an unshaped value). */
static const char *validate_devices(sc_arena *a, const md_sharding *s, int64_t n) {
  md_shape unshaped = {.kind = SC_SHAPE_OTHER};
  if (s->kind != SC_SHARDING_TUPLE) return md_gspmd_validate(a, s, &unshaped, n, true);
  for (uint32_t i = 0; i < s->nelements; i++) {
    const char *e = md_gspmd_validate(a, s->elements[i], &unshaped, n, true);
    if (e) return ar_printf(a, "%s (tuple element %u)", e, i);
  }
  return NULL;
}

static void check_stored_sharding(ru_ctx *ctx, const char *side, uint32_t i, const ir_export_sharding *es) {
  if (es->kind != 1 && !es->unreadable) return; /* unspecified: JAX stores no sharding for this value */
  const ir_export_info *x = ctx->module->exported;
  const char *err = NULL;
  const char *text = es->unreadable ? NULL : md_gspmd_proto_to_text(ctx->arena, es->proto, es->proto_len);
  md_sharding *s = text ? md_parse_gspmd_sharding(ctx->arena, ir_span_of(text, (uint32_t)strlen(text)), 0, &err) : NULL;
  if (!s) {
    sc_diag *d = ru_emit(ctx, ctx->module->module,
                         "%s[%u] of function '%.*s' is not a readable xla.OpSharding (%u bytes): the container is "
                         "damaged, or holds a form this checker does not decode (a V3 named sharding)",
                         side, i, SC_SPAN_ARG(x->function_name), es->proto_len);
    ru_diag_context(ctx, d, "sharding", ar_printf(ctx->arena, "%s[%u]", side, i));
    return;
  }
  if (!ctx->model || !ctx->model->target) return;
  int64_t n = ctx->model->target->devices;
  const char *e = validate_devices(ctx->arena, s, n);
  if (!e) return;
  sc_diag *d = ru_emit(ctx, ctx->module->module,
                       "%s[%u] of function '%.*s' is stored as %s and the target mesh has %" PRId64 " devices: %s", side, i,
                       SC_SPAN_ARG(x->function_name), text, n, e);
  ru_diag_context(ctx, d, "sharding", text);
  ru_diag_context(ctx, d, "num_devices", ar_printf(ctx->arena, "%" PRId64, n));
  /* The stored shardings are those of the recorded device count: one mistake when that differs. */
  if (nr_devices_mismatch(ctx)) ru_diag_caused_by(ctx, d, "SC0702", SC_SITE_ANY);
  reexport_fix(ctx, d);
}

/* A container may hold as many shardings as its size allows: stop when the request is cancelled. */
static bool cancelled(const ru_ctx *ctx) { return ctx->options && ctx->options->cancel && *ctx->options->cancel; }

void ru_check_export_sharding_devices(ru_ctx *ctx);
void ru_check_export_sharding_devices(ru_ctx *ctx) {
  const ir_export_info *x = ctx->module->exported;
  if (!x) return;
  for (uint32_t i = 0; i < x->nin_shardings; i++) {
    if (cancelled(ctx)) return;
    check_stored_sharding(ctx, "in_shardings", i, &x->in_shardings[i]);
  }
  for (uint32_t i = 0; i < x->nout_shardings; i++) {
    if (cancelled(ctx)) return;
    check_stored_sharding(ctx, "out_shardings", i, &x->out_shardings[i]);
  }
}
