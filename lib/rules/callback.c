/* callback.c — the `callback` family (SC04xx): host callbacks (pure_callback, io_callback,
 * debug.callback) checked against the manual context they sit in, their sharding and the platform.
 *
 * JAX decides a callback's sharding in _callback_op_sharding (jax/_src/callback.py): inside a fully
 * manual shard_map it is per-device (`@empty_mesh` / `{manual}`), at top level it is single-device
 * (`@maximal_mesh_k` / `{maximal device=k}`); everything else raises. The IR shows those shardings,
 * so each JAX error has a module-level analog. Messages carry JAX's text verbatim. */
#include <inttypes.h>
#include <string.h>

#include "rules/fixes.h"
#include "rules/rule_util.h"

#define OP_RULE(name, family, code, sev, summary, kinds, ccs, within, fn) void fn(ru_ctx *ctx, const ir_op *op);
#include "rules/callback.def"
#undef OP_RULE

typedef enum { CB_NONE = 0, CB_CUSTOM_CALL, CB_HOST_TRANSFER } cb_kind;

typedef struct {
  cb_kind kind;
  bool partitioned;
  sc_platform platform; /* the platform the target is for (send/recv: TPU) */
  bool legacy;
} cb_info;

static cb_info callback_info(const ir_op *op) {
  cb_info ci;
  memset(&ci, 0, sizeof ci);
  ir_span t = ir_op_custom_call_target(op);
  if (t.n) {
    if (op->cc == SC_CC_HOST_CALLBACK_CPU) ci.platform = SC_PLATFORM_CPU;
    else if (op->cc == SC_CC_HOST_CALLBACK_GPU) ci.platform = SC_PLATFORM_GPU;
    else return ci;
    ci.kind = CB_CUSTOM_CALL;
    ci.partitioned = ru_find(t, "_partitioned_") != NULL;
    ci.legacy = ir_span_starts(t, "xla_python_");
    return ci;
  }
  if (op->kind != SC_OP_SEND && op->kind != SC_OP_RECV && op->kind != SC_OP_MHLO_SEND && op->kind != SC_OP_MHLO_RECV)
    return ci;
  const ir_attr *h = ir_op_attr(op, "is_host_transfer");
  if (!h || !ir_span_eq(ir_span_trim(h->value), "true")) return ci;
  ci.kind = CB_HOST_TRANSFER;
  ci.platform = SC_PLATFORM_TPU;
  return ci;
}

static const char *cb_label(sc_arena *a, const ir_op *op, const cb_info *ci) {
  if (ci->kind == CB_HOST_TRANSFER)
    return ar_printf(a, "host transfer `" SC_SPAN_FMT "` (TPU host callback)", SC_SPAN_ARG(ir_op_name(op)));
  ir_span t = ir_op_custom_call_target(op);
  return ar_printf(a, "host callback `" SC_SPAN_FMT "`", SC_SPAN_ARG(t));
}

/* ---- The callback's own sharding ---- */

typedef enum {
  SH_NONE = 0,   /* no sharding attribute */
  SH_PER_DEVICE, /* per-device: <@empty_mesh, [{}...]> / {manual} / replicated token entries */
  SH_MAXIMAL,    /* single device: <@maximal_mesh_k, []> / {maximal device=k} */
  SH_SPREAD,     /* spans devices: named over axes, tiled, replicated over a multi-device mesh */
} sh_class;

typedef struct {
  sh_class cls;
  int64_t device;          /* SH_MAXIMAL */
  const md_sharding *what; /* the offending entry */
  const ir_attr *attr;
} cb_sharding;

static sh_class classify_one(const md_sharding *s, int64_t *device) {
  if (!s) return SH_NONE;
  switch (s->kind) {
  case SC_SHARDING_MAXIMAL:
    *device = s->maximal_device;
    return SH_MAXIMAL;
  case SC_SHARDING_MANUAL: return SH_PER_DEVICE;
  case SC_SHARDING_REPLICATED: return SH_PER_DEVICE;
  case SC_SHARDING_NAMED:
    if (s->mesh && s->mesh->maximal && s->mesh->ndevice_ids == 1) {
      *device = s->mesh->device_ids[0];
      return SH_MAXIMAL;
    }
    if (s->mesh && s->mesh->naxes == 0) return SH_PER_DEVICE;
    if (!s->mesh) return SH_PER_DEVICE;
    if (s->mesh->devices <= 1) return SH_PER_DEVICE;
    for (uint32_t d = 0; d < s->rank; d++)
      if (s->dims[d].naxes) return SH_SPREAD;
    return SH_PER_DEVICE;
  case SC_SHARDING_TILED: return SH_SPREAD;
  default: return SH_PER_DEVICE;
  }
}

/* The most telling class over all entries: spread > maximal > per-device (enum order). */
static cb_sharding callback_sharding(ru_ctx *ctx, const ir_op *op) {
  cb_sharding r;
  memset(&r, 0, sizeof r);
  r.attr = ru_sharding_attr(op);
  if (!r.attr || !ctx->model) return r;
  uint32_t n = op->nresults ? op->nresults : 1;
  r.cls = SH_PER_DEVICE;
  bool any = false;
  for (uint32_t i = 0; i < n; i++) {
    const md_sharding *s = md_model_result_sharding(ctx->model, op, i);
    if (!s) continue;
    if (s->kind == SC_SHARDING_TUPLE) {
      for (uint32_t k = 0; k < s->nelements; k++) {
        int64_t dev = -1;
        sh_class c = classify_one(s->elements[k], &dev);
        any = true;
        if (c > r.cls) {
          r.cls = c;
          r.device = dev;
          r.what = s->elements[k];
        }
      }
      continue;
    }
    int64_t dev = -1;
    sh_class c = classify_one(s, &dev);
    any = true;
    if (c > r.cls) {
      r.cls = c;
      r.device = dev;
      r.what = s;
    }
  }
  if (!any) r.cls = SH_PER_DEVICE; /* present but unreadable: sharding-syntax reports it */
  return r;
}

static const char *sharding_text(sc_arena *a, const cb_sharding *cs) {
  if (!cs->attr) return "(none)";
  return ir_span_dup(a, cs->attr->value);
}

static bool has_token(const ir_op *op) {
  for (uint32_t i = 0; i < ir_op_noperand_types(op); i++)
    if (ru_find(ir_op_operand_types(op)[i], "token")) return true;
  for (uint32_t i = 0; i < op->noperands; i++)
    if (op->operands[i] && ru_find(ir_value_type(op->operands[i]), "token")) return true;
  return false;
}

static uint32_t value_results(const ir_op *op) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < op->nresults; i++) {
    ir_span t = i < ir_op_nresult_types(op) ? ir_op_result_types(op)[i] : ir_value_type(ir_op_result(op, i));
    if (ru_find(t, "token")) continue;
    if (ir_span_eq(ir_span_trim(t), "()")) continue;
    n++;
  }
  return n;
}

typedef void (*cb_visit)(ru_ctx *ctx, const ir_op *op, const cb_info *ci);
/* The host transfer this one continues: a TPU host callback is a chain of send/recv ops threaded by
 * one token (sends of the operands, then recvs of the results); NULL for the first of the chain. */
static const ir_op *previous_transfer(const ir_op *op) {
  for (uint32_t i = 0; i < op->noperands; i++) {
    const ir_value *v = op->operands[i];
    if (v && ir_value_def(v) && ir_value_def(v) != op && callback_info(ir_value_def(v)).kind == CB_HOST_TRANSFER) return ir_value_def(v);
  }
  return NULL;
}

/* Visits `op` if it is a callback (the rows subscribe to host callback custom calls and send/recv).
 * One callback, one diagnostic: what a rule reports on a host transfer that continues a send/recv
 * chain follows from the same report on the chain's previous op (folded into the first one, the
 * others its related sites). */
static void visit_callback(ru_ctx *ctx, const ir_op *op, cb_visit fn) {
  cb_info ci = callback_info(op);
  if (ci.kind == CB_NONE) return;
  size_t first = ctx->diags.n;
  fn(ctx, op, &ci);
  const ir_op *prev = ci.kind == CB_HOST_TRANSFER && ctx->diags.n > first ? previous_transfer(op) : NULL;
  for (size_t k = first; prev && k < ctx->diags.n; k++)
    ru_diag_caused_by(ctx, &ctx->diags.v[k], ctx->diags.v[k].code, prev->pos.offset);
}

static const char *fn_snippet_for(const cb_info *ci) {
  return ci->kind == CB_HOST_TRANSFER ? "jax.pure_callback / jax.experimental.io_callback" : "the callback";
}

/* ---- SC0401 callback-sharding-in-manual ---- */

static void sharding_in_manual(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  ru_where w = ru_locate(ctx, op);
  if (!w.in_manual || !w.fully_manual) return;
  cb_sharding cs = callback_sharding(ctx, op);
  if (cs.cls != SH_MAXIMAL && cs.cls != SH_SPREAD) return;
  sc_arena *a = ctx->arena;
  sc_diag *d = ru_emit(ctx, op,
                       "callbacks do not support specifying sharding inside spmd computations: %s sits in a fully "
                       "manual shard_map (manual over %s) but carries the explicit sharding %s instead of the "
                       "per-device one (%s).",
                       cb_label(a, op, ci),
                       w.mc->nmanual_axes ? ru_axis_set(a, w.mc->manual_axes, w.mc->nmanual_axes) : "every axis",
                       sharding_text(a, &cs),
                       cs.attr && ir_span_eq(cs.attr->name, "sdy.sharding") ? "`<@empty_mesh, [...]>` or none"
                                                                             : "`{manual}`");
  ru_context(ctx, d, &w);
  ru_diag_context(ctx, d, "callback_sharding", sharding_text(a, &cs));
  ru_diag_fix(ctx, d, "Drop the sharding= argument of the callback inside shard_map (manual mode already runs it "
                      "once per device)",
              cs.cls == SH_MAXIMAL
                  ? "# before (inside shard_map)\n"
                    "jax.pure_callback(fn, result_shape, x, sharding=SingleDeviceSharding(jax.devices()[0]))\n"
                    "# after\n"
                    "jax.pure_callback(fn, result_shape, x)"
                  : "# before (inside shard_map)\n"
                    "jax.pure_callback(fn, result_shape, x, sharding=NamedSharding(mesh, P('data')))\n"
                    "# after\n"
                    "jax.pure_callback(fn, result_shape, x)");
  sc_fix *f = ru_diag_fix(ctx, d,
                          cs.attr && ir_span_eq(cs.attr->name, "sdy.sharding")
                              ? "Remove the callback's sdy.sharding attribute (inside the manual computation it runs "
                                "per device)"
                              : "Make the callback's sharding per-device ({manual}), what JAX emits without sharding=",
                          NULL);
  if (!ru_edit_set_manual(ctx, f, op)) f->title = ar_printf(a, "%s (edit by hand)", f->title);
  ru_diag_fix(ctx, d, "Or move the callback out of the shard_map, where a SingleDeviceSharding is allowed", NULL);
}

void ru_check_callback_sharding_in_manual(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, sharding_in_manual); }

/* ---- SC0402 callback-partial-manual ---- */

static void partial_manual(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  ru_where w = ru_locate(ctx, op);
  if (!w.partial) return;
  sc_arena *a = ctx->arena;
  ar_str autos_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < w.nfree; i++) ar_str_printf(&autos_s, "%s" SC_SPAN_FMT, i ? ", " : "", SC_SPAN_ARG(w.free[i]->name));
  const char *autos = ar_str_str(&autos_s);
  sc_diag *d = ru_emit(ctx, op,
                       "callbacks are only supported in spmd computations when all mesh axes are partitioned manually "
                       "(no partial automatic sharding). %s sits in a shard_map that is manual over %s only; %s%s%s "
                       "of mesh %s stay%s automatic.",
                       cb_label(a, op, ci),
                       w.mc->nmanual_axes ? ru_axis_set(a, w.mc->manual_axes, w.mc->nmanual_axes) : "some axes",
                       w.nfree ? "axes {" : "other axes", autos, w.nfree ? "}" : "", ru_kc_mesh_str(a, w.mesh),
                       w.nfree == 1 ? "s" : "");
  ru_context(ctx, d, &w);
  const ir_op *mop = w.mc->manual_op;
  if (mop && mop->kind == SC_OP_SDY_MANUAL_COMPUTATION) {
    const ir_attr *ia = ir_op_attr(mop, "in_shardings"), *oa = ir_op_attr(mop, "out_shardings");
    const char **ins = ar_calloc(a, mop->noperands + 1, sizeof *ins);
    const char **outs = ar_calloc(a, mop->nresults + 1, sizeof *outs);
    for (uint32_t i = 0; i < mop->noperands; i++)
      ins[i] = ia ? ru_pspec(a, ru_sdy_list_entry(a, ia->value, i), &w, NULL) : NULL;
    for (uint32_t i = 0; i < mop->nresults; i++)
      outs[i] = oa ? ru_pspec(a, ru_sdy_list_entry(a, oa->value, i), &w, NULL) : NULL;
    ru_diag_fix(ctx, d,
                ar_printf(a, "Make the enclosing shard_map manual over every mesh axis: axis_names=%s",
                                ru_py_axis_names(a, w.mesh)),
                ru_shard_map_snippet(a, w.mesh, "f", ins, mop->noperands, outs, mop->nresults,
                                        ru_py_axis_names(a, w.mesh),
                                        ar_printf(a, "# f is the function passed to the shard_map at line %u",
                                                        ir_op_line(ctx->lines, mop))));
  } else {
    ru_diag_fix(ctx, d,
                ar_printf(a, "Pass axis_names=%s (every mesh axis) to the enclosing shard_map",
                                ru_py_axis_names(a, w.mesh)),
                NULL);
  }
  ru_diag_fix(ctx, d, "Or use jax.debug.callback, which wraps itself in a nested shard_map over the automatic axes",
              "jax.debug.callback(fn, x)");
  ru_diag_fix(ctx, d, ar_printf(a, "Or hoist %s out of the shard_map to the jitted function's top level",
                                      fn_snippet_for(ci)),
              NULL);
}

void ru_check_callback_partial_manual(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, partial_manual); }

/* ---- SC0403 callback-not-single-device ---- */

static void not_single_device(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  if (ci->partitioned) return;
  ru_where w = ru_locate(ctx, op);
  if (w.in_manual) return;
  cb_sharding cs = callback_sharding(ctx, op);
  bool bad = cs.cls == SH_SPREAD;
  /* {manual}/{replicated}/empty-mesh at top level on a multi-device mesh also runs on every device. */
  if (cs.cls == SH_PER_DEVICE && cs.attr && w.devices > 1) {
    const md_sharding *s = cs.what ? cs.what : (ctx->model ? md_model_result_sharding(ctx->model, op, 0) : NULL);
    if (s && (s->kind == SC_SHARDING_MANUAL || s->kind == SC_SHARDING_REPLICATED)) bad = true;
  }
  if (!bad) return;
  sc_arena *a = ctx->arena;
  /* the module's devices; a module that names none (no mesh, no num_partitions) spreads the callback
   * over the devices its sharding names: its own mesh (`mesh[...]`) or its tile assignment */
  const md_sharding *own = w.devices > 1 ? NULL : cs.what;
  const char *span;
  if (own && own->mesh && own->mesh->devices > 1)
    span = ar_printf(a, "the %" PRId64 " devices of its mesh %s", own->mesh->devices, ru_kc_mesh_str(a, own->mesh));
  else if (own && own->tiles->ntile_devices > 1)
    span = ar_printf(a, "the %" PRIu64 " devices of its tile assignment", own->tiles->ntile_devices);
  else
    span = ar_printf(a, "the %" PRId64 " devices of mesh %s", w.devices, ru_kc_mesh_str(a, w.mesh));
  sc_diag *d = ru_emit(ctx, op,
                       "pure_callback only supports SingleDeviceSharding, but got NamedSharding: %s at the top level "
                       "of the jitted function has the sharding %s, which spans %s; a callback outside shard_map "
                       "runs once, on one device.",
                       cb_label(a, op, ci), sharding_text(a, &cs), span);
  ru_context(ctx, d, &w);
  ru_diag_context(ctx, d, "callback_sharding", sharding_text(a, &cs));
  ru_diag_fix(ctx, d, "Pass a SingleDeviceSharding (or no sharding=: JAX then uses device 0)",
              "jax.pure_callback(fn, result_shape, x, sharding=jax.sharding.SingleDeviceSharding(jax.devices()[0]))");
  sc_fix *f = ru_diag_fix(ctx, d, "Run the callback on device 0 (a maximal sharding, what JAX emits by default)", NULL);
  if (!ru_edit_set_maximal(ctx, f, op, 0)) f->title = ar_printf(a, "%s (edit by hand)", f->title);
  ru_diag_fix(ctx, d, "For a per-shard callback, call it inside jax.shard_map over every mesh axis instead", NULL);
}

void ru_check_callback_not_single_device(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, not_single_device); }

/* ---- SC0404 callback-device-not-in-assignment ---- */

static void device_not_in_assignment(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  ru_where w = ru_locate(ctx, op);
  cb_sharding cs = callback_sharding(ctx, op);
  if (cs.cls != SH_MAXIMAL) return;
  int64_t n = w.devices;
  if (cs.device >= 0 && cs.device < n) return;
  sc_arena *a = ctx->arena;
  const char *da = n <= 16 ? "" : NULL;
  if (da) {
    da = "";
    for (int64_t i = 0; i < n; i++) da = ar_printf(a, "%s%s%" PRId64, da, i ? ", " : "", i);
  } else
    da = ar_printf(a, "0..%" PRId64, n - 1);
  sc_diag *d = ru_emit(ctx, op,
                       "Sharding provided to pure_callback specifies a device %" PRId64
                       " that is not in the device assignment (%s): %s is pinned to device index %" PRId64
                       " but mesh %s has %" PRId64 " device%s.",
                       cs.device, da, cb_label(a, op, ci), cs.device, ru_kc_mesh_str(a, w.mesh), n, n == 1 ? "" : "s");
  ru_context(ctx, d, &w);
  ru_diag_context(ctx, d, "callback_sharding", sharding_text(a, &cs));
  ru_diag_fix(ctx, d, "Pick a device of the jitted computation's own device assignment",
              "jax.pure_callback(fn, result_shape, x, sharding=jax.sharding.SingleDeviceSharding(jax.devices()[0]))");
  sc_fix *f = ru_diag_fix(ctx, d, "Run the callback on device 0", NULL);
  if (!ru_edit_set_maximal(ctx, f, op, 0)) f->title = ar_printf(a, "%s (edit by hand)", f->title);
  /* The same bad device, as the mesh and sharding families see it, is this mistake: the maximal mesh's
   * SC0106 (Shardy) and the op's tile-assignment SC0211 (GSPMD) fold into this diagnostic. */
  ir_span mname = cs.what ? cs.what->mesh_name : ir_span_of(NULL, 0);
  for (uint32_t i = 0; mname.n && ctx->model && i < ctx->model->nmeshes; i++) {
    const md_mesh *mm = &ctx->model->meshes[i];
    if (!mm->maximal || !mm->op || mm->name.n != mname.n || memcmp(mm->name.p, mname.p, mname.n) != 0) continue;
    ru_diag_claims(ctx, d, "SC0106", mm->op->pos.offset);
  }
  ru_diag_claims(ctx, d, "SC0211", op->pos.offset);
}

void ru_check_callback_device_not_in_assignment(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, device_not_in_assignment); }

/* ---- SC0405 callback-partitioned-tpu / SC0406 callback-partitioned-results ---- */

static void partitioned_tpu(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  if (!ci->partitioned || !ctx->model || ctx->model->platform != SC_PLATFORM_TPU) return;
  sc_arena *a = ctx->arena;
  sc_diag *d = ru_emit(ctx, op,
                       "Partitioned callback not implemented on tpu backend. %s is a partitioned callback "
                       "(debug.callback(..., partitioned=True)); TPU callbacks lower to host send/recv.",
                       cb_label(a, op, ci));
  ru_where w = ru_locate(ctx, op);
  ru_context(ctx, d, &w);
  ru_diag_fix(ctx, d, "Drop partitioned=True for TPU (the callback then runs once, on device 0), or call it inside "
                      "jax.shard_map over every axis to run it per shard",
              "jax.debug.callback(fn, x)  # without partitioned=True");
}

void ru_check_callback_partitioned_tpu(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, partitioned_tpu); }

static void partitioned_results(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  if (!ci->partitioned || value_results(op) == 0) return;
  sc_arena *a = ctx->arena;
  sc_diag *d = ru_emit(ctx, op,
                       "Partitioned callback not supported with return values. %s returns %u value%s besides tokens.",
                       cb_label(a, op, ci), value_results(op), value_results(op) == 1 ? "" : "s");
  ru_where w = ru_locate(ctx, op);
  ru_context(ctx, d, &w);
  /* per shard over the mesh's axes: each device calls back with its block */
  const char *snippet = NULL;
  if (w.mesh && w.mesh->naxes && !w.mesh->synthesized) {
    ar_str axes_s = SC_ASTR_INIT(a);
    for (uint32_t k = 0; k < w.mesh->naxes; k++) ar_str_printf(&axes_s, "%s'%.*s'", k ? ", " : "", SC_SPAN_ARG(w.mesh->axes[k].name));
    const char *axes = ar_str_str(&axes_s);
    const char *spec = w.mesh->naxes == 1 ? ar_printf(a, "P(%s)", axes) : ar_printf(a, "P((%s),)", axes);
    snippet = ar_printf(a,
                              "mesh = %s\n"
                              "per_shard = jax.shard_map(lambda x: jax.pure_callback(fn, jax.ShapeDtypeStruct(x.shape, x.dtype), x),\n"
                              "                          mesh=mesh, in_specs=%s, out_specs=%s)",
                              ru_py_make_mesh(a, w.mesh), spec, spec);
  }
  ru_diag_fix(ctx, d, "Use jax.pure_callback inside jax.shard_map for a per-shard callback that returns values", snippet);
}

void ru_check_callback_partitioned_results(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, partitioned_results); }

/* ---- SC0407 callback-ordered-multi-device ---- */

static void ordered_multi_device(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  if (ci->partitioned || ci->kind != CB_CUSTOM_CALL || !has_token(op)) return;
  ru_where w = ru_locate(ctx, op);
  if (w.in_manual || w.devices <= 1) return;
  if (ru_sharding_attr(op)) return;
  sc_arena *a = ctx->arena;
  sc_diag *d = ru_emit(ctx, op,
                       "The following ordered effects are not supported for more than 1 device: [OrderedDebug]. %s is "
                       "threaded through a token (ordered) and has no sharding, but the module runs on %" PRId64
                       " devices (mesh %s).",
                       cb_label(a, op, ci), w.devices, ru_kc_mesh_str(a, w.mesh));
  ru_context(ctx, d, &w);
  ru_diag_fix(ctx, d, "Use an unordered debug callback, or jax.experimental.io_callback(..., ordered=True), whose "
                      "ordered effect is shardable (it runs on device 0)",
              "jax.debug.print(\"{}\", x)  # ordered=False\n"
              "jax.experimental.io_callback(fn, result_shape, x, ordered=True)");
  sc_fix *f = ru_diag_fix(ctx, d, "Pin the ordered callback to device 0 (a maximal sharding, as ordered io_callback "
                                  "lowers)",
                          NULL);
  if (!ru_edit_set_maximal(ctx, f, op, 0)) f->title = ar_printf(a, "%s (edit by hand)", f->title);
}

void ru_check_callback_ordered_multi_device(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, ordered_multi_device); }

/* ---- SC0408 callback-wrong-platform ---- */

static void wrong_platform(ru_ctx *ctx, const ir_op *op, const cb_info *ci) {
  sc_platform p = ctx->model ? ctx->model->platform : SC_PLATFORM_UNSPECIFIED;
  if (p == SC_PLATFORM_UNSPECIFIED || ci->kind != CB_CUSTOM_CALL || ci->platform == p) return;
  if (ci->partitioned && p == SC_PLATFORM_TPU) return; /* callback-partitioned-tpu */
  sc_arena *a = ctx->arena;
  sc_diag *d = ru_emit(ctx, op,
                       "%s is the %s lowering of a JAX host callback, but the module is checked for %s: %s has no "
                       "handler for it.",
                       cb_label(a, op, ci), sc_platform_name(ci->platform), sc_platform_name(p),
                       p == SC_PLATFORM_TPU ? "TPU (whose callbacks lower to host send/recv)" : sc_platform_name(p));
  ru_where w = ru_locate(ctx, op);
  ru_context(ctx, d, &w);
  ru_diag_fix(ctx, d,
              ar_printf(a, "Lower the module for the platform it runs on (%s)", sc_platform_name(p)),
              ru_py_arg_structs(ctx)
                  ? ar_printf(a, "lowered = jax.jit(%s).trace(%s).lower(lowering_platforms=('%s',))",
                                    ru_py_fn_name(ctx), ru_py_arg_structs(ctx),
                                    p == SC_PLATFORM_GPU ? "cuda" : sc_platform_name(p))
                  : NULL);
}

void ru_check_callback_wrong_platform(ru_ctx *ctx, const ir_op *op) { visit_callback(ctx, op, wrong_platform); }

/* ---- SC0409 callback-multi-platform ---- */

/* The `_platform_index` argument of a module lowered for several platforms (jax.export(platforms=[...])
 * passes the platform as a global constant and branches on it with stablehlo.case), or NULL. */
static const ir_value *platform_index_arg(const ir_module *m) {
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    const ir_block *b = ru_body(m->funcs[f]);
    for (uint32_t i = 0; b && i < b->nargs; i++) {
      const ir_attr *g = ir_attrs_find(ir_value_attrs(b->args[i]), "jax.global_constant");
      if (g && ir_span_eq(ir_span_trim(g->value), "\"_platform_index\"")) return b->args[i];
    }
  }
  return NULL;
}

/* Found once per run (the rule's state): the `_platform_index` argument and the first callback's site. */
typedef struct {
  const ir_value *platform_index;
  uint32_t root;
} multi_platform_state;

void ru_check_callback_multi_platform(ru_ctx *ctx, const ir_op *op) {
  void **slot = ru_rule_state(ctx);
  multi_platform_state *st = slot ? *slot : NULL;
  if (!st) {
    st = ar_calloc(ctx->arena, 1, sizeof *st);
    st->platform_index = platform_index_arg(ctx->module);
    st->root = SC_SITE_ANY;
    if (slot) *slot = st;
  }
  const ir_value *pi = st->platform_index;
  if (!pi) return;
  cb_info ci = callback_info(op);
  if (ci.kind == CB_NONE) return;
  sc_diag *d = ru_emit(ctx, op,
                       "multi-platform lowering for python_callback: %s is in a module lowered for several "
                       "platforms (its function takes the `_platform_index` argument %.*s); JAX cannot lower a "
                       "host callback for more than one platform, and each platform needs its own callback target.",
                       cb_label(ctx->arena, op, &ci), SC_SPAN_ARG(pi->name));
  ru_where w = ru_locate(ctx, op);
  ru_context(ctx, d, &w);
  /* one module, one mistake: the other callbacks (one per platform branch) are related sites */
  if (st->root != SC_SITE_ANY) ru_diag_caused_by(ctx, d, "SC0409", st->root);
  else st->root = op->pos.offset;
  const char *args = ru_py_arg_structs(ctx);
  ru_diag_fix(ctx, d, "Export the function for one platform per artifact",
              args ? ar_printf(ctx->arena, "exported = jax.export.export(jax.jit(%s), platforms=('%s',))(%s)",
                                     ru_py_fn_name(ctx), ci.platform == SC_PLATFORM_GPU ? "cuda" : sc_platform_name(ci.platform),
                                     args)
                   : NULL);
}
