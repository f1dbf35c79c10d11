/* export.c — checks of what a jax.export container records against the target (SC0701). */
#include <string.h>

#include "model/model.h"
#include "rules/rules.h"

/* JAX's platform names for a target platform: gpu is "cuda" or "rocm". */
static bool platform_matches(sc_platform p, sc_span name) {
  switch (p) {
  case SC_PLATFORM_TPU: return sc_span_eq(name, "tpu");
  case SC_PLATFORM_GPU: return sc_span_eq(name, "cuda") || sc_span_eq(name, "rocm") || sc_span_eq(name, "gpu");
  case SC_PLATFORM_CPU: return sc_span_eq(name, "cpu");
  default: return true;
  }
}

void sc_check_export_platform(sc_ctx *ctx);
void sc_check_export_platform(sc_ctx *ctx) {
  const sc_export_info *x = ctx->module->exported;
  if (!x || !ctx->model || !ctx->model->platform || !x->nplatforms) return;
  for (uint32_t i = 0; i < x->nplatforms; i++)
    if (platform_matches(ctx->model->platform, x->platforms[i])) return;
  const char *list = "";
  for (uint32_t i = 0; i < x->nplatforms; i++)
    list = sc_arena_printf(ctx->arena, "%s%s%.*s", list, i ? ", " : "", SC_SPAN_ARG(x->platforms[i]));
  const sc_op *mod = ctx->module->module;
  sc_diag *d = sc_emit(ctx, mod,
                       "function '%.*s' was exported for platforms (%s) and is checked for %s: The current platform %s "
                       "is not among the platforms required by the module: [%s]",
                       SC_SPAN_ARG(x->function_name), list, sc_platform_name(ctx->model->platform),
                       sc_platform_name(ctx->model->platform), list);
  sc_diag_context(ctx, d, "exported_platforms", list);
  sc_diag_fix(ctx, d, "Export for every platform the artifact will run on",
              sc_arena_printf(ctx->arena, "exported = jax.export.export(jax.jit(f), platforms=(%s'%s'))(*args)",
                              "'tpu', ", ctx->model->platform == SC_PLATFORM_GPU ? "cuda" : sc_platform_name(ctx->model->platform)));
}
