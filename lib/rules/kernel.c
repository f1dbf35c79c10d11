/* kernel.c — the `kernel` family (SC03xx): Pallas/Mosaic TPU, Triton and Mosaic GPU kernel
 * calls checked against the mesh and the manual context they sit in.
 *
 * JAX raises these errors while lowering (jax/_src/tpu_custom_call.py, pallas/pallas_call.py,
 * experimental/mosaic/gpu/core.py); a module JAX produced cannot contain them for the mesh it was
 * lowered for, but it does when it is deployed on another mesh (a 1-device module on 8 chips), comes
 * from another producer, or was edited. Messages carry JAX's text verbatim where one exists. */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "rules/fixes.h"
#include "util/hashset.h"
#include "rules/rule_util.h"

#define OP_RULE(name, family, code, sev, summary, kinds, ccs, within, fn) void fn(ru_ctx *ctx, const ir_op *op);
#include "rules/kernel.def"
#undef OP_RULE

#define MOSAIC_MSG "Mosaic kernels cannot be automatically partitioned. Please wrap the call in a shard_map."

typedef enum { K_NONE = 0, K_MOSAIC_TPU, K_TRITON, K_MOSAIC_GPU } kernel_kind;

static kernel_kind kernel_kind_of(const ir_op *op) {
  switch (op->cc) {
  case SC_CC_MOSAIC_TPU: return K_MOSAIC_TPU;
  case SC_CC_TRITON: return K_TRITON;
  case SC_CC_MOSAIC_GPU: return K_MOSAIC_GPU;
  default: return K_NONE;
  }
}

static const char *kind_label(kernel_kind k) {
  switch (k) {
  case K_MOSAIC_TPU: return "Mosaic TPU kernel";
  case K_TRITON: return "Triton (Pallas GPU) kernel";
  case K_MOSAIC_GPU: return "Mosaic GPU kernel";
  default: return "kernel";
  }
}

/* Mosaic GPU kernels that talk to other devices (NVSHMEM/collective metadata). */
static bool mosaic_gpu_communicates(const ir_op *op) {
  ir_span bc = ru_backend_config(op);
  if (!bc.n) return false;
  ir_span v = ru_dict_get(bc, "use_custom_barrier");
  if (v.n && ir_span_eq(v, "true")) return true;
  v = ru_dict_get(bc, "uses_xla_collective_metadata");
  if (v.n && ir_span_eq(v, "true")) return true;
  return ru_dict_get(bc, "xla_replica_ids").n > 0;
}

/* ---- Operand/result shardings over non-manual axes ---- */

typedef struct {
  bool result;
  uint32_t index;
  ir_span axis;        /* empty for a GSPMD tile assignment without axis names */
  sc_axis_type type;
  const md_sharding *sharding;
} sharded_use;

typedef SC_VEC(sharded_use) sharded_vec;

static const md_sharding *parse_attr_sharding(sc_arena *a, const ir_attr *at) {
  const char *err = NULL;
  if (ir_span_eq(at->name, "sdy.sharding")) return md_parse_sdy_sharding(a, NULL, at->value, at->offset, &err);
  ir_span v = ir_span_trim(at->value);
  if (v.n >= 2 && v.p[0] == '"') {
    ir_span in = {v.p + 1, v.n - 2};
    const md_sharding *s = md_parse_gspmd_sharding(a, in, at->offset, &err);
    if (s) return s;
  }
  return md_parse_gspmd_sharding(a, v, at->offset, &err);
}

/* True if a GSPMD tile assignment actually splits a data dimension. */
static bool tiled_splits(const md_sharding *s) {
  uint32_t data = s->tiles->ntile_dims;
  if (s->tiles->last_tile_dim_replicate && data) data--;
  data = data >= s->tiles->nlast_tile_dims ? data - s->tiles->nlast_tile_dims : 0;
  for (uint32_t i = 0; i < data; i++)
    if (s->tiles->tile_dims[i] > 1) return true;
  return false;
}

static void collect(ru_ctx *ctx, const ru_where *w, const md_sharding *s, bool result, uint32_t index,
                    sharded_vec *out) {
  if (!s) return;
  if (s->kind == SC_SHARDING_NAMED) {
    for (uint32_t d = 0; d < s->rank; d++)
      for (uint32_t k = 0; k < s->dims[d].naxes; k++) {
        ir_span name = s->dims[d].axes[k].name;
        const md_axis *ax = ru_mesh_axis(w->mesh, name);
        if (!ax || ax->size <= 1 || ru_axis_manual(w, name)) continue;
        sharded_use u = {result, index, name, ax->type, s};
        SC_PUSH(ctx->arena, *out, u);
      }
  } else if (s->kind == SC_SHARDING_TILED && !w->in_manual && tiled_splits(s) && w->nfree) {
    /* Unnamed tile assignment: explicit only if every free axis is explicit. */
    bool all_explicit = true;
    for (uint32_t i = 0; i < w->nfree; i++) all_explicit = all_explicit && w->free[i]->type == SC_AXIS_EXPLICIT;
    sharded_use u = {result, index, ir_span_of(NULL, 0), all_explicit ? SC_AXIS_EXPLICIT : SC_AXIS_AUTO, s};
    SC_PUSH(ctx->arena, *out, u);
  } else if (s->kind == SC_SHARDING_TUPLE && s->nelements) {
    collect(ctx, w, s->elements[0], result, index, out);
  }
}

/* Shardings the kernel's results get from their users: constraints and function results. */
static void result_shardings(ru_ctx *ctx, const ir_op *op, const ru_where *w, sharded_vec *out,
                             const md_sharding **per_result) {
  /* Users in the same function only; the use index makes this cost the kernel's uses, not its function. */
  uint32_t nuses;
  const ru_use *uses = ru_op_uses(ctx, op, &nuses);
  ar_step(ctx->arena, nuses);
  const ir_op *fn = ir_op_func(op);
  for (uint32_t j = 0; j < nuses; j++) {
    const ir_op *u = uses[j].user;
    if (ir_op_func(u) != fn) continue;
    uint32_t k = uses[j].operand;
    const ir_value *v = u->operands[k];
    const md_sharding *s = NULL;
    if (u->kind == SC_OP_SDY_SHARDING_CONSTRAINT || u->kind == SC_OP_SDY_RESHARD || u->cc == SC_CC_SHARDING) {
      if (u->nresults) s = ru_value_sharding(ctx, ir_op_result(u, 0));
    } else if (u->kind == SC_OP_RETURN && u->parent_op == ir_op_func(op) && ir_op_func(op) &&
               k < ir_op_nresult_attrs(ir_op_func(op))) {
      const ir_attrs *ra = &ir_op_result_attrs(ir_op_func(op))[k];
      const ir_attr *at = ir_attrs_find(ra, "sdy.sharding");
      if (!at) at = ir_attrs_find(ra, "mhlo.sharding");
      if (at) s = parse_attr_sharding(ctx->arena, at);
    }
    if (!s) continue;
    if (per_result && v->index < op->nresults && !per_result[v->index]) per_result[v->index] = s;
    collect(ctx, w, s, true, v->index, out);
  }
}

/* The module's func.call sites by callee, built once per rule and request (rule state): a dense index
 * per callee name and, per call op id, the previous call of the same callee. */
typedef struct {
  hs_name_map callees; /* callee name -> dense index */
  uint32_t *last;      /* per dense index: op id of its last call + 1 (0 = none) */
  uint32_t *prev;      /* per op id: the previous call of the same callee + 1 */
} call_index;

static const call_index *calls_by_callee(ru_ctx *ctx) {
  void **state = ru_rule_state(ctx);
  if (state && *state) return *state;
  const ir_module *m = ctx->module;
  call_index *ci = ar_alloc(ctx->arena, sizeof *ci);
  hs_name_map_init(&ci->callees, ctx->arena, m->nfuncs + 1);
  ci->last = ar_calloc(ctx->arena, m->nfuncs + 1, sizeof *ci->last);
  ci->prev = ar_calloc(ctx->arena, m->nops + 1, sizeof *ci->prev);
  uint32_t ncallees = 0;
  ar_step(ctx->arena, m->nops);
  for (uint32_t k = 0; k < m->nops; k++) {
    const ir_op *op = m->ops[k];
    ir_span callee = op->kind == SC_OP_CALL ? ir_op_callee(op) : ir_span_of("", 0);
    if (!callee.n || op->id >= m->nops) continue;
    uint32_t idx;
    if (!hs_name_map_get(&ci->callees, callee.p, callee.n, &idx)) {
      /* a new callee (more callee names than functions: calls to nothing, which lead nowhere) */
      if (ncallees > m->nfuncs || !hs_name_map_put(&ci->callees, callee.p, callee.n, ncallees, NULL)) continue;
      idx = ncallees++;
    }
    ci->prev[op->id] = ci->last[idx];
    ci->last[idx] = op->id + 1;
  }
  if (state) *state = ci;
  return ci;
}

/* A kernel operand's shardings. An unannotated argument of a called function (JAX's nested jit: the
 * private callee's arguments carry no sharding) takes them from the operands its call sites pass. */
static void operand_shardings(ru_ctx *ctx, const ru_where *w, const ir_value *v, uint32_t index, sharded_vec *out,
                              uint32_t depth) {
  const md_sharding *s = ru_value_sharding(ctx, v);
  if (s || !v || ir_value_def(v) || depth >= 8) {
    collect(ctx, w, s, false, index, out);
    return;
  }
  const ir_op *owner = ir_value_block(v) && ir_value_block(v)->parent ? ir_value_block(v)->parent->parent : NULL;
  if (!owner || owner->kind != SC_OP_FUNC || owner == ctx->module->entry) return;
  const call_index *ci = calls_by_callee(ctx);
  ir_span name = ir_op_sym_name(owner);
  uint32_t idx;
  if (!hs_name_map_get(&ci->callees, name.p, name.n, &idx)) return;
  for (uint32_t c = ci->last[idx]; c; c = ci->prev[c - 1]) {
    const ir_op *call = ctx->module->ops[c - 1];
    ar_step(ctx->arena, 1);
    if (v->index < call->noperands) operand_shardings(ctx, w, call->operands[v->index], index, out, depth + 1);
  }
}

static void kernel_shardings(ru_ctx *ctx, const ir_op *op, const ru_where *w, sharded_vec *out) {
  for (uint32_t i = 0; i < op->noperands; i++) {
    if (ctx->propagation && prop_engine_operand_is_copy(ctx->propagation, op, i)) collect(ctx, w, ru_operand_sharding(ctx, op, i), false, i, out);
    else operand_shardings(ctx, w, op->operands[i], i, out, 0);
  }
  size_t before = out->n;
  result_shardings(ctx, op, w, out, NULL);
  /* with propagation, a result no user constrains may still end up sharded */
  for (uint32_t i = 0; ctx->propagation && out->n == before && i < op->nresults; i++) {
    const md_sharding *s = ru_value_sharding(ctx, ir_op_result(op, i));
    if (s && s->source == SC_SHARDING_FROM_PROPAGATION) collect(ctx, w, s, true, i, out);
  }
}

/* Each propagated sharding among `uses` names the written sharding it came from (Shardy's sharding
 * origins): the fix belongs on that line of Python. */
static void relate_origins(ru_ctx *ctx, sc_diag *d, const ir_op *op, const sharded_vec *uses) {
  for (size_t i = 0; ctx->propagation && i < uses->n; i++) {
    const sharded_use *u = &uses->v[i];
    if (!u->sharding || u->sharding->source != SC_SHARDING_FROM_PROPAGATION) continue;
    if (i > 0 && uses->v[i - 1].sharding == u->sharding) continue; /* one site per tensor */
    const ir_value *v = u->result ? (u->index < op->nresults ? ir_op_result(op, u->index) : NULL)
                                  : (u->index < op->noperands ? op->operands[u->index] : NULL);
    const ir_value *o = v ? prop_engine_value_origin(ctx->propagation, v) : NULL;
    if (!o || o == v) continue;
    const ir_op *site = ir_value_def(o) ? ir_value_def(o) : ir_value_block(o) && ir_value_block(o)->parent ? ir_value_block(o)->parent->parent : NULL;
    uint32_t at = ir_value_def(o) ? ir_value_def(o)->pos.offset : o->pos.offset;
    ru_diag_related(ctx, d, at, site,
                    ar_printf(ctx->arena, "%s %u's sharding %.*s propagates from %.*s here",
                                    u->result ? "result" : "operand", u->index, SC_SPAN_ARG(u->sharding->text),
                                    SC_SPAN_ARG(o->name)));
  }
}

static bool any_explicit(const sharded_vec *v) {
  for (size_t i = 0; i < v->n; i++)
    if (v->v[i].type == SC_AXIS_EXPLICIT) return true;
  return false;
}

static const char *describe_uses(sc_arena *a, const sharded_vec *v, bool explicit_only) {
  ar_str s = SC_ASTR_INIT(a);
  size_t shown = 0;
  for (size_t i = 0; i < v->n; i++) {
    const sharded_use *u = &v->v[i];
    if (explicit_only && u->type != SC_AXIS_EXPLICIT) continue;
    if (!explicit_only && u->type == SC_AXIS_EXPLICIT) continue;
    const char *what = u->axis.n ? ar_printf(a, "%s axis '" SC_SPAN_FMT "'", sc_axis_type_name(u->type),
                                                   SC_SPAN_ARG(u->axis))
                                 : ar_printf(a, "%s axes (tile assignment {" SC_SPAN_FMT "})",
                                                   sc_axis_type_name(u->type), SC_SPAN_ARG(u->sharding->text));
    ar_str_printf(&s, "%s%s %u sharded over %s", shown ? "; " : "", u->result ? "result" : "operand", u->index, what);
    shown++;
  }
  return ar_str_str(&s);
}

/* JAX prints `get_abstract_mesh().axis_types`: the axis types in mesh order, manual ones as Manual. */
static const char *axis_types_str(sc_arena *a, const ru_where *w) {
  if (!w->mesh || !w->mesh->naxes) return "()";
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "(");
  for (uint32_t i = 0; i < w->mesh->naxes; i++) {
    const md_axis *ax = &w->mesh->axes[i];
    const char *t = ru_axis_manual(w, ax->name) && ax->size > 1 ? "Manual"
                    : ax->type == SC_AXIS_EXPLICIT                 ? "Explicit"
                    : ax->type == SC_AXIS_MANUAL                   ? "Manual"
                                                                   : "Auto";
    ar_str_printf(&s, "%s%s", i ? ", " : "", t);
  }
  ar_str_puts(&s, w->mesh->naxes == 1 ? ",)" : ")");
  return ar_str_str(&s);
}

/* ---- Fixes shared by the "needs a fully manual region" rules ---- */

static bool skip_manual(const ru_where *w, ir_span name) { return ru_axis_manual(w, name); }

static const char *free_axes_py(sc_arena *a, const ru_where *w) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "{");
  for (uint32_t i = 0; i < w->nfree; i++) ar_str_printf(&s, "%s'" SC_SPAN_FMT "'", i ? ", " : "", SC_SPAN_ARG(w->free[i]->name));
  ar_str_puts(&s, "}");
  return ar_str_str(&s);
}

static const char *free_axes_text(sc_arena *a, const ru_where *w) {
  ar_str s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < w->nfree; i++)
    ar_str_printf(&s, "%s" SC_SPAN_FMT " (size %" PRId64 ")", i ? ", " : "", SC_SPAN_ARG(w->free[i]->name), w->free[i]->size);
  return ar_str_str(&s);
}

static const char *manual_axes_text(sc_arena *a, const ru_where *w) {
  if (w->mc->nmanual_axes) return ru_axis_set(a, w->mc->manual_axes, w->mc->nmanual_axes);
  return "some axes";
}

/* What to say about the function a wrap fix wraps: the function that calls pl.pallas_call (never the
 * kernel body, which takes Refs, nor the custom-call target), and where it makes the call. */
static const char *caller_comment(ru_ctx *ctx, const ir_op *op, const char *caller, const char *placeholder,
                                  const char *kname) {
  sc_arena *a = ctx->arena;
  const char *site = ru_py_call_site(ctx, op);
  const char *at = site ? ar_printf(a, " (at %s)", site) : "";
  if (!caller)
    return ar_printf(a, "# %s: the function of your program that calls pl.pallas_call for `%s`%s, not the "
                              "kernel body (it takes Refs).",
                           placeholder, kname, at);
  return ar_printf(a, "# %s calls pl.pallas_call for `%s`%s: wrap it, not the kernel body.", caller, kname, at);
}

/* Partition specs of a function's arguments and results for a shard_map around it: arguments as the
 * module shards them, results as the kernel's when the function returns the kernel's results, else as
 * the function's result sharding.
 * Sets *unknown when a spec had to be guessed (P()). */
static void function_specs(ru_ctx *ctx, const ir_op *fn, const ir_op *op, const ru_where *w, const char **kouts,
                           const char ***ins, uint32_t *nin, const char ***outs, uint32_t *nout, bool *unknown) {
  sc_arena *a = ctx->arena;
  const ir_block *body = ru_body(fn);
  *nin = body ? body->nargs : 0;
  *ins = ar_calloc(a, *nin + 1, sizeof **ins);
  for (uint32_t i = 0; i < *nin; i++) {
    (*ins)[i] = ru_pspec(a, ru_value_sharding(ctx, body->args[i]), w, NULL);
    if (!(*ins)[i]) *unknown = true;
  }
  const ir_op *ret = ru_terminator(fn);
  *nout = ru_func_nresults(fn);
  if (!*nout && ret) *nout = ret->noperands;
  if (!*nout) *nout = 1;
  *outs = ar_calloc(a, *nout + 1, sizeof **outs);
  for (uint32_t i = 0; i < *nout; i++) {
    const ir_value *v = ret && i < ret->noperands ? ret->operands[i] : NULL;
    if (v && ir_value_def(v) == op && v->index < op->nresults) (*outs)[i] = kouts[v->index];
    if (!(*outs)[i] && ctx->model) (*outs)[i] = ru_pspec(a, md_model_func_result_sharding(ctx->model, fn, i), w, NULL);
    if (!(*outs)[i]) *unknown = true;
  }
}

/* Top level: wrap the function that calls the kernel in a shard_map over every mesh axis. */
static void add_caller_wrap_fix(ru_ctx *ctx, sc_diag *d, const ir_op *op, const ru_where *w, const char *kname) {
  sc_arena *a = ctx->arena;
  const md_mesh *mesh = w->mesh;
  const char **kins = ar_calloc(a, op->noperands + 1, sizeof *kins);
  const char **kouts = ar_calloc(a, op->nresults + 1, sizeof *kouts);
  const md_sharding **rs = ar_calloc(a, op->nresults + 1, sizeof *rs);
  sharded_vec tmp = {0};
  result_shardings(ctx, op, w, &tmp, rs);
  bool unknown = false, all_repl = true;
  for (uint32_t i = 0; i < op->noperands; i++) {
    kins[i] = ru_pspec(a, ru_operand_sharding(ctx, op, i), w, NULL);
    if (!kins[i]) unknown = true;
    else if (strcmp(kins[i], "P()") != 0) all_repl = false;
  }
  for (uint32_t i = 0; i < op->nresults; i++) {
    kouts[i] = ru_pspec(a, rs[i], w, NULL);
    if (kouts[i] || all_repl) continue;
    /* Same shape as a sharded operand: the usual elementwise/blocked kernel keeps its layout. */
    for (uint32_t k = 0; k < op->noperands && k < ir_op_noperand_types(op) && i < ir_op_nresult_types(op); k++)
      if (kins[k] && strcmp(kins[k], "P()") && ir_span_same(ir_op_operand_types(op)[k], ir_op_result_types(op)[i])) {
        kouts[i] = kins[k];
        break;
      }
  }
  const ir_op *fn = NULL;
  const char *caller = ru_py_caller(ctx, op, &fn);
  const char **ins = kins, **outs = kouts;
  uint32_t nin = op->noperands, nout = op->nresults;
  if (fn) function_specs(ctx, fn, op, w, kouts, &ins, &nin, &outs, &nout, &unknown);
  else
    for (uint32_t i = 0; i < nout; i++) unknown |= !outs[i];
  const char *comment = caller_comment(ctx, op, caller, "f", kname);
  if (unknown)
    comment = ar_printf(a, "%s\n# Arguments and results whose sharding the module does not show are replicated "
                                 "(P()): every device\n# runs the kernel on the full array. Shard a dimension (e.g. "
                                 "P('data', None)) where the kernel's\n# blocks are independent along it.",
                              comment);
  const char *target = caller ? caller : "f";
  ru_diag_fix(ctx, d,
              ar_printf(a, "Wrap `%s` (the function that calls the kernel `%s`) in jax.shard_map over all mesh "
                                 "axes %s",
                              target, kname, ru_py_axis_names(a, mesh)),
              ru_shard_map_snippet(a, mesh, target, ins, nin, outs, nout, ru_py_axis_names(a, mesh), comment));
}

/* Adds: the shard_map snippet(s), the machine wrap, and the fallback. */
static void add_wrap_fixes(ru_ctx *ctx, sc_diag *d, const ir_op *op, const ru_where *w, const char *kname) {
  sc_arena *a = ctx->arena;
  const md_mesh *mesh = w->mesh;
  if (!w->in_manual) {
    add_caller_wrap_fix(ctx, d, op, w, kname);
  } else {
    /* Inside a partially manual shard_map: make it manual over every axis, or nest one for the rest. */
    const ir_op *mop = w->mc->manual_op;
    if (mop && mop->kind == SC_OP_SDY_MANUAL_COMPUTATION) {
      const ir_attr *ia = ir_op_attr(mop, "in_shardings"), *oa = ir_op_attr(mop, "out_shardings");
      const char **ins = ar_calloc(a, mop->noperands + 1, sizeof *ins);
      const char **outs = ar_calloc(a, mop->nresults + 1, sizeof *outs);
      for (uint32_t i = 0; i < mop->noperands; i++)
        ins[i] = ia ? ru_pspec(a, ru_sdy_list_entry(a, ia->value, i), w, NULL) : NULL;
      for (uint32_t i = 0; i < mop->nresults; i++)
        outs[i] = oa ? ru_pspec(a, ru_sdy_list_entry(a, oa->value, i), w, NULL) : NULL;
      const char *comment = ar_printf(
          a, "# f is the function passed to the shard_map at line %u (now manual over %s only).", ir_op_line(ctx->lines, mop),
          manual_axes_text(a, w));
      ru_diag_fix(ctx, d,
                  ar_printf(a, "Make the enclosing shard_map manual over every mesh axis: axis_names=%s",
                                  ru_py_axis_names(a, mesh)),
                  ru_shard_map_snippet(a, mesh, "f", ins, mop->noperands, outs, mop->nresults,
                                          ru_py_axis_names(a, mesh), comment));
    } else {
      ru_diag_fix(ctx, d,
                  ar_printf(a, "Pass axis_names=%s (every mesh axis) to the enclosing shard_map",
                                  ru_py_axis_names(a, mesh)),
                  NULL);
    }
    if (w->nfree) {
      const char **ins = ar_calloc(a, op->noperands + 1, sizeof *ins);
      const char **outs = ar_calloc(a, op->nresults + 1, sizeof *outs);
      for (uint32_t i = 0; i < op->noperands; i++) {
        const md_sharding *s = ru_operand_sharding(ctx, op, i);
        const char *ps = ru_pspec(a, s, w, skip_manual);
        ins[i] = ps ? ps : "P()";
      }
      /* Only a function the module names apart from the jitted one can be wrapped inside the shard_map. */
      const ir_op *fn = NULL;
      const char *caller = ru_py_caller(ctx, op, &fn);
      if (!fn || fn == ctx->module->entry) caller = NULL;
      const char *target = caller ? caller : "kernel_fn";
      ru_diag_fix(ctx, d,
                  ar_printf(a, "Or wrap just `%s` (the function that calls the kernel `%s`) in a nested "
                                     "jax.shard_map over the remaining axes %s",
                                  target, kname, free_axes_py(a, w)),
                  ru_shard_map_snippet(
                      a, mesh, target, ins, op->noperands, outs, op->nresults, free_axes_py(a, w),
                      ar_printf(a, "%s\n# Inside the existing shard_map: the kernel sees per-device blocks.",
                                      caller_comment(ctx, op, caller, target, kname))));
    }
  }
  ru_fix_wrap_manual(
      ctx, d, op, w,
      ar_printf(a,
                      "Wrap the call in an sdy.manual_computation over %s with replicated operands (what "
                      "jax.shard_map(..., in_specs=P(), out_specs=P()) lowers to; the kernel computes exactly what "
                      "it computed on one device)",
                      free_axes_py(a, w)));
}

/* What every "this kernel must run in a fully manual shard_map" diagnostic carries: where the kernel
 * is, its name, and the shard_map wrappings that fix it. */
static void describe_and_wrap(ru_ctx *ctx, sc_diag *d, const ir_op *op, const ru_where *w, const char *kname) {
  ru_context(ctx, d, w);
  ru_diag_context(ctx, d, "kernel", kname);
  add_wrap_fixes(ctx, d, op, w, kname);
}

/* Why the op is outside a fully manual context, as a sentence. */
static const char *where_text(ru_ctx *ctx, const ru_where *w) {
  sc_arena *a = ctx->arena;
  const char *mesh = ru_kc_mesh_str(a, w->mesh);
  if (w->in_manual) {
    if (w->free_unknown)
      return ar_printf(a, "it sits in a partially manual region (GSPMD `last_tile_dims={manual, ...}`): some axes "
                                "of mesh %s stay automatic",
                             mesh);
    return ar_printf(a, "it sits in a shard_map that is manual over %s only; mesh axis%s %s of mesh %s %s still "
                              "automatic",
                           manual_axes_text(a, w), w->nfree > 1 ? "es" : "", free_axes_text(a, w), mesh,
                           w->nfree > 1 ? "are" : "is");
  }
  if (ru_retargeted(ctx))
    return ar_printf(a, "it is not inside any shard_map; the module was lowered for %s but is checked against "
                              "the target mesh %s (%" PRId64 " devices)",
                           ru_module_mesh_str(ctx, NULL), mesh, w->devices);
  return ar_printf(a, "it is not inside any shard_map and the module is partitioned over %" PRId64
                            " devices (mesh %s)",
                         w->devices, mesh);
}

/* The tiling of the first sharded operand/result (explicit ones first when `explicit_first`), for the
 * report's pictures. */
static void uses_tensor_context(ru_ctx *ctx, sc_diag *d, const ir_op *op, const sharded_vec *uses, bool explicit_first) {
  const sharded_use *pick = NULL;
  for (size_t i = 0; i < uses->n && !pick; i++)
    if (!explicit_first || uses->v[i].type == SC_AXIS_EXPLICIT) pick = &uses->v[i];
  if (!pick && uses->n) pick = &uses->v[0];
  if (!pick) return;
  ir_span type = pick->result ? ru_result_type(op, pick->index) : ru_operand_type(op, pick->index);
  ru_tensor_context(ctx, d, pick->sharding, type,
                    ar_printf(ctx->arena, "%s %u", pick->result ? "result" : "operand", pick->index), -1);
}

static bool needs_manual(const ru_where *w) { return w->devices > 1 && !w->fully_manual; }

/* ---- SC0301 kernel-outside-manual ---- */

void ru_check_kernel_outside_manual(ru_ctx *ctx, const ir_op *op) {
  if (kernel_kind_of(op) != K_MOSAIC_TPU) return;
  ru_where w = ru_locate(ctx, op);
  if (!needs_manual(&w)) return;
  sharded_vec uses = {0};
  kernel_shardings(ctx, op, &w, &uses);
  if (any_explicit(&uses)) return; /* kernel-explicit-sharding reports it (JAX raises that one first) */
  const char *kname = ru_kernel_name(ctx->arena, op);
  sc_diag *d = ru_emit(ctx, op, MOSAIC_MSG " Kernel `%s` (tpu_custom_call): %s, and on more than one device a "
                                "Mosaic kernel must run inside a shard_map that is manual over every mesh axis.",
                       kname, where_text(ctx, &w));
  describe_and_wrap(ctx, d, op, &w, kname);
  uses_tensor_context(ctx, d, op, &uses, false);
  ru_diag_fix(ctx, d, "Or run the kernel unsharded: check/deploy on a 1-device mesh, or fall back to the kernel's "
                      "reference (non-Pallas) implementation on multi-device meshes",
              NULL);
}

/* ---- SC0302 kernel-explicit-sharding ---- */

void ru_check_kernel_explicit_sharding(ru_ctx *ctx, const ir_op *op) {
  kernel_kind k = kernel_kind_of(op);
  if (k == K_NONE) return;
  ru_where w = ru_locate(ctx, op);
  if (w.fully_manual && !w.nfree) return;
  sharded_vec uses = {0};
  kernel_shardings(ctx, op, &w, &uses);
  if (!any_explicit(&uses)) return;
  const char *kname = ru_kernel_name(ctx->arena, op);
  ir_span t = ir_op_custom_call_target(op);
  sc_diag *d = ru_emit(ctx, op,
                       "pallas_call requires all mesh axes to be Manual, got %s: %s `%s` (" SC_SPAN_FMT
                       ") has %s, outside a fully manual shard_map.",
                       axis_types_str(ctx->arena, &w), kind_label(k), kname, SC_SPAN_ARG(t),
                       describe_uses(ctx->arena, &uses, true));
  relate_origins(ctx, d, op, &uses);
  describe_and_wrap(ctx, d, op, &w, kname);
  uses_tensor_context(ctx, d, op, &uses, true);
  ru_diag_fix(ctx, d, "Or remove the explicit sharding (NamedSharding/PartitionSpec, out_sharding=) from the arrays "
                      "passed to and returned from pallas_call",
              NULL);
}

/* ---- SC0303 kernel-gpu-auto-partitioned ---- */

void ru_check_kernel_gpu_auto_partitioned(ru_ctx *ctx, const ir_op *op) {
  kernel_kind k = kernel_kind_of(op);
  if (k != K_TRITON && k != K_MOSAIC_GPU) return;
  ru_where w = ru_locate(ctx, op);
  if (!needs_manual(&w)) return;
  if (k == K_MOSAIC_GPU && mosaic_gpu_communicates(op) && !w.in_manual) return; /* mosaic-gpu-multi-device */
  sharded_vec uses = {0};
  kernel_shardings(ctx, op, &w, &uses);
  if (any_explicit(&uses)) return; /* kernel-explicit-sharding */
  const char *kname = ru_kernel_name(ctx->arena, op);
  ir_span t = ir_op_custom_call_target(op);
  const char *sharded = uses.n ? ar_printf(ctx->arena, " (%s)", describe_uses(ctx->arena, &uses, false)) : "";
  sc_diag *d = ru_emit(ctx, op,
                       "%s `%s` (" SC_SPAN_FMT ") is not in a fully manual shard_map: %s. JAX has no partitioning "
                       "guard for GPU kernels, so XLA treats the call as an opaque custom call and replicates it: "
                       "operands sharded over auto axes are all-gathered%s and every device runs the kernel on the "
                       "full arrays.",
                       kind_label(k), kname, SC_SPAN_ARG(t), where_text(ctx, &w), sharded);
  describe_and_wrap(ctx, d, op, &w, kname);
  uses_tensor_context(ctx, d, op, &uses, false);
}

/* ---- SC0304 kernel-mesh-axis-unknown ---- */

/* Axis names listed in kernel_metadata's "mesh_axes" (a JSON string inside a JSON string). */
static uint32_t metadata_mesh_axes(sc_arena *a, const ir_op *op, ir_span **out) {
  ir_span md = ru_frontend_attr(op, "kernel_metadata");
  if (!md.n) return 0;
  const char *k = ru_find(md, "mesh_axes");
  if (!k) return 0;
  const char *end = md.p + md.n;
  const char *lb = memchr(k, '[', (size_t)(end - k));
  if (!lb) return 0;
  const char *rb = memchr(lb, ']', (size_t)(end - lb));
  if (!rb) return 0;
  SC_VEC(ir_span) v = {0};
  const char *p = lb + 1;
  while (p < rb) {
    while (p < rb && (*p == '\\' || *p == '"' || *p == ',' || *p == ' ')) {
      if (*p == '\\' && p + 2 < rb && p[1] == '2' && p[2] == '2') p += 2;
      p++;
    }
    const char *s = p;
    while (p < rb && *p != '\\' && *p != '"' && *p != ',' && *p != ' ') p++;
    if (p > s) SC_PUSH(a, v, ir_span_of(s, (uint32_t)(p - s)));
  }
  *out = v.v;
  return (uint32_t)v.n;
}

void ru_check_kernel_mesh_axis_unknown(ru_ctx *ctx, const ir_op *op) {
  if (kernel_kind_of(op) != K_MOSAIC_TPU) return;
  ir_span *axes = NULL;
  uint32_t n = metadata_mesh_axes(ctx->arena, op, &axes);
  if (!n) return;
  ru_where w = ru_locate(ctx, op);
  /* Only a named mesh can be compared: the request's or a module sdy.mesh. */
  bool named = w.mesh && (w.mesh->op || (ctx->model && w.mesh == ctx->model->target));
  if (!named) return;
  for (uint32_t k = 0; k < n; k++) {
    if (ru_mesh_axis(w.mesh, axes[k])) continue;
    const char *kname = ru_kernel_name(ctx->arena, op);
    sc_diag *d = ru_emit(ctx, op,
                         "Mosaic kernel `%s` communicates over mesh axis '" SC_SPAN_FMT
                         "' (kernel_metadata mesh_axes), but mesh %s has no such axis: its remote DMAs and "
                         "device ids were computed for a mesh the module is not deployed on.",
                         kname, SC_SPAN_ARG(axes[k]), ru_kc_mesh_str(ctx->arena, w.mesh));
    ru_context(ctx, d, &w);
    ru_diag_context(ctx, d, "kernel", kname);
    ru_diag_context(ctx, d, "kernel_axis", ir_span_dup(ctx->arena, axes[k]));
    /* checked against a target mesh other than the module's: the retargeting is the mistake */
    if (ctx->model && w.mesh == ctx->model->target) {
      ru_diag_caused_by(ctx, d, "SC0107", SC_SITE_ANY);
      ru_diag_caused_by(ctx, d, "SC0108", SC_SITE_ANY);
    }
    ru_diag_fix(ctx, d,
                ar_printf(ctx->arena,
                                "Check (and deploy) the module on the mesh it was lowered for, which has an axis "
                                "'" SC_SPAN_FMT "', or re-lower the kernel with this mesh's axis names %s",
                                SC_SPAN_ARG(axes[k]), ru_py_axis_names(ctx->arena, w.mesh)),
                NULL);
  }
}

/* ---- SC0305 kernel-communication-replicas ---- */

void ru_check_kernel_communication_replicas(ru_ctx *ctx, const ir_op *op) {
  int64_t replicas = ctx->model ? ctx->model->num_replicas : -1;
  if (replicas <= 1) return;
  if (kernel_kind_of(op) != K_MOSAIC_TPU) return;
  if (ru_json_bool(ru_backend_config(op), "has_communication") != 1) return;
  ru_where w = ru_locate(ctx, op);
  if (w.in_manual) return;
  const char *kname = ru_kernel_name(ctx->arena, op);
  sc_diag *d = ru_emit(ctx, op,
                       "Replica lowering for Mosaic kernels not implemented. Kernel `%s` communicates with other "
                       "devices (\"has_communication\": true) but the module is replicated over %" PRId64
                       " replicas (mhlo.num_replicas = %" PRId64 ", pmap-style) instead of partitioned over a mesh.",
                       kname, replicas, replicas);
  ru_context(ctx, d, &w);
  ru_diag_context(ctx, d, "kernel", kname);
  ru_diag_context(ctx, d, "num_replicas", ar_printf(ctx->arena, "%" PRId64, replicas));
  const char *in[1] = {"P('x')"}, *out[1] = {"P('x')"};
  md_mesh m;
  memset(&m, 0, sizeof m);
  md_axis ax = {ir_span_of("x", 1), replicas, SC_AXIS_AUTO};
  m.axes = &ax;
  m.naxes = 1;
  m.devices = replicas;
  const char *caller = ru_py_caller(ctx, op, NULL);
  ru_diag_fix(ctx, d, "Replace pmap with jax.shard_map over a mesh so the kernel is lowered in an SPMD context",
              ru_shard_map_snippet(
                  ctx->arena, &m, caller ? caller : "f", in, 1, out, 1, "{'x'}",
                  ar_printf(ctx->arena,
                                  "%s\n# one mesh axis in place of the pmapped axis; device ids become axis indices",
                                  caller_comment(ctx, op, caller, "f", kname))));
}

/* ---- SC0306 kernel-wrong-platform / SC0307 kernel-cpu-platform ---- */

static sc_platform kernel_platform(kernel_kind k) { return k == K_MOSAIC_TPU ? SC_PLATFORM_TPU : SC_PLATFORM_GPU; }

void ru_check_kernel_wrong_platform(ru_ctx *ctx, const ir_op *op) {
  sc_platform p = ctx->model ? ctx->model->platform : SC_PLATFORM_UNSPECIFIED;
  if (p != SC_PLATFORM_TPU && p != SC_PLATFORM_GPU) return;
  kernel_kind k = kernel_kind_of(op);
  if (k == K_NONE || kernel_platform(k) == p) return;
  const char *kname = ru_kernel_name(ctx->arena, op);
  ir_span t = ir_op_custom_call_target(op);
  sc_diag *d = ru_emit(ctx, op,
                       "Compiler params for platform %s cannot be used for %s lowering. %s `%s` (" SC_SPAN_FMT
                       ") only runs on %s, but the module is checked for %s.",
                       sc_platform_name(kernel_platform(k)), sc_platform_name(p), kind_label(k), kname,
                       SC_SPAN_ARG(t), sc_platform_name(kernel_platform(k)), sc_platform_name(p));
  ru_where w = ru_locate(ctx, op);
  ru_context(ctx, d, &w);
  ru_diag_context(ctx, d, "kernel", kname);
  const char *args = ru_py_arg_structs(ctx);
  const char *plat = kernel_platform(k) == SC_PLATFORM_TPU ? "tpu" : "cuda";
  ru_diag_fix(ctx, d,
              ar_printf(ctx->arena, "Lower the module for %s and deploy it there", sc_platform_name(kernel_platform(k))),
              args ? ar_printf(ctx->arena, "lowered = jax.jit(%s).trace(%s).lower(lowering_platforms=('%s',))",
                                     ru_py_fn_name(ctx), args, plat)
                   : NULL);
  const char *out = op->nresults == 1 ? ru_py_struct(ctx->arena, ru_result_type(op, 0)) : NULL;
  const char *body = ru_kernel_body(ctx->arena, op); /* pallas_call takes the kernel body */
  const char *params = p == SC_PLATFORM_GPU ? "from jax.experimental.pallas import triton as pltriton\n"
                                              "out = pl.pallas_call(%s, out_shape=%s, compiler_params=pltriton.CompilerParams())"
                                            : "from jax.experimental.pallas import tpu as pltpu\n"
                                              "out = pl.pallas_call(%s, out_shape=%s, compiler_params=pltpu.CompilerParams())";
  ru_diag_fix(ctx, d,
              ar_printf(ctx->arena, "Or give pallas_call %s compiler_params when lowering for %s", sc_platform_name(p),
                              sc_platform_name(p)),
              out && body ? ar_printf(ctx->arena, params, body, out) : NULL);
}

void ru_check_kernel_cpu_platform(ru_ctx *ctx, const ir_op *op) {
  sc_platform p = ctx->model ? ctx->model->platform : SC_PLATFORM_UNSPECIFIED;
  if (p != SC_PLATFORM_CPU) return;
  kernel_kind k = kernel_kind_of(op);
  if (k == K_NONE) return;
  const char *kname = ru_kernel_name(ctx->arena, op);
  ir_span t = ir_op_custom_call_target(op);
  sc_diag *d = ru_emit(ctx, op,
                       "Only interpret mode is supported on CPU backend. %s `%s` (" SC_SPAN_FMT
                       ") is a compiled %s kernel, but the module is checked for cpu.",
                       kind_label(k), kname, SC_SPAN_ARG(t), sc_platform_name(kernel_platform(k)));
  ru_where w = ru_locate(ctx, op);
  ru_context(ctx, d, &w);
  ru_diag_context(ctx, d, "kernel", kname);
  const char *out = op->nresults == 1 ? ru_py_struct(ctx->arena, ru_result_type(op, 0)) : NULL;
  const char *body = ru_kernel_body(ctx->arena, op); /* pallas_call takes the kernel body */
  ru_diag_fix(ctx, d, "Lower the kernel in interpret mode for CPU (it then becomes plain HLO, no custom call)",
              out && body ? ar_printf(ctx->arena, "pl.pallas_call(%s, out_shape=%s, interpret=True)", body, out)
                           : NULL);
}

/* ---- SC0308 mosaic-gpu-multi-device / SC0309 mosaic-gpu-device-order ---- */

void ru_check_mosaic_gpu_multi_device(ru_ctx *ctx, const ir_op *op) {
  if (kernel_kind_of(op) != K_MOSAIC_GPU || !mosaic_gpu_communicates(op)) return;
  ru_where w = ru_locate(ctx, op);
  if (w.in_manual || w.devices <= 1) return;
  const char *kname = ru_kernel_name(ctx->arena, op);
  sc_diag *d = ru_emit(ctx, op,
                       "Mosaic GPU only supports single-device meshes in ShardingContext. Got: %" PRId64
                       " devices. Kernel `%s` (mosaic_gpu) communicates with other devices (custom barrier or "
                       "collective metadata) and is not inside a shard_map on mesh %s.",
                       w.devices, kname, ru_kc_mesh_str(ctx->arena, w.mesh));
  describe_and_wrap(ctx, d, op, &w, kname);
}

static bool iota_order(const md_mesh *m) {
  for (uint32_t i = 0; i < m->ndevice_ids; i++)
    if (m->device_ids[i] != (int64_t)i) return false;
  return true;
}

void ru_check_mosaic_gpu_device_order(ru_ctx *ctx, const ir_op *op) {
  if (kernel_kind_of(op) != K_MOSAIC_GPU || !mosaic_gpu_communicates(op)) return;
  ru_where w = ru_locate(ctx, op);
  if (!w.in_manual) return;
  const md_mesh *m = w.mc->mesh ? w.mc->mesh : w.mesh;
  if (ctx->model && ctx->model->target) m = ctx->model->target;
  if (!m || !m->device_ids || iota_order(m)) return;
  ar_str list = SC_ASTR_INIT(ctx->arena);
  uint32_t shown = m->ndevice_ids < SC_LIST_SHOWN ? m->ndevice_ids : SC_LIST_SHOWN;
  ar_str_puts(&list, "[");
  for (uint32_t k = 0; k < shown; k++) ar_str_printf(&list, "%s%" PRId64, k ? " " : "", m->device_ids[k]);
  if (shown < m->ndevice_ids) ar_str_printf(&list, " ... and %u more", m->ndevice_ids - shown);
  ar_str_puts(&list, "]");
  const char *ids = ar_str_str(&list);
  const char *kname = ru_kernel_name(ctx->arena, op);
  sc_diag *d = ru_emit(ctx, op,
                       "Mosaic GPU only supports meshes with device ordering that follows row-major device ids. "
                       "Got: %s device ids. Kernel `%s` communicates with other devices inside a shard_map on mesh "
                       "%s.",
                       ids, kname, ru_kc_mesh_str(ctx->arena, m));
  ru_context(ctx, d, &w);
  ru_diag_context(ctx, d, "kernel", kname);
  sc_fix *f = ru_diag_fix(ctx, d, "Use a mesh whose devices are in row-major (iota) order",
                          ar_printf(ctx->arena, "mesh = %s  # devices in order 0..%" PRId64,
                                          ru_py_make_mesh(ctx->arena, m), m->devices - 1));
  /* The module's own mesh: drop its explicit device order. */
  if (m->op && (!ctx->model || m != ctx->model->target)) {
    ir_span mt = ir_op_text(ctx->module, m->op);
    const char *did = ru_find(mt, ", device_ids=[");
    if (did) {
      const char *rb = memchr(did, ']', (size_t)(mt.p + mt.n - did));
      if (rb) ru_fix_edit(ctx, f, (uint32_t)(did - ctx->module->buf), (uint32_t)(rb + 1 - did), "");
    }
  }
}
