/* unreduced.c — sharding-unreduced-transition (SC0221): Shardy's unreduced-axis transitions
 * (openxla/shardy transforms/export/verify_unreduced_axes.cc, run before export). An unreduced axis holds
 * partial values that still need a reduction: an op may not silently drop one (only sdy.reshard /
 * sdy.sharding_constraint may, the "blessed" ops), may introduce only 'sum' ones (dot, default ops) or
 * the kind its reduction body computes (reduce), may not change a kept axis's reduction operator, and
 * calls and returns must keep exactly the same unreduced axes across the boundary.
 *
 * Only Shardy shardings are read. An op whose results carry no sharding is left alone (before
 * propagation, a missing sharding means "not decided yet", not "dropped"). */
#include <stdint.h>
#include <string.h>

#include "model/model.h"
#include "rules/rule_util.h"
#include "rules/rules.h"

static const char *const k_red_names[] = {"sum", "max", "min"};
#define RED_NONE (-1)

/* The value a propagation barrier passes through, followed to its source. */
static const ir_value *bypass_barriers(const ir_value *v) {
  for (uint32_t guard = 0; v && ir_value_def(v) && ir_value_def(v)->kind == SC_OP_SDY_PROPAGATION_BARRIER && ir_value_def(v)->noperands &&
                           guard < 1u << 20;
       guard++)
    v = ir_value_def(v)->operands[0];
  return v;
}

static const md_sharding *sdy_only(const md_sharding *s) {
  return s && s->source == SC_SHARDING_FROM_SDY && s->kind == SC_SHARDING_NAMED ? s : NULL;
}

static const md_sharding *value_sharding(const ru_ctx *ctx, const ir_value *v) {
  return sdy_only(md_model_value_sharding(ctx->model, bypass_barriers(v)));
}

/* Defined by sdy.reshard / sdy.sharding_constraint (through barriers): the blessed transitions. */
static bool from_explicit_reshard(const ir_value *v) {
  v = bypass_barriers(v);
  return v && ir_value_def(v) && (ir_value_def(v)->kind == SC_OP_SDY_RESHARD || ir_value_def(v)->kind == SC_OP_SDY_SHARDING_CONSTRAINT);
}

/* Is axis `a` covered by one of `list`: the whole axis, or a sub-axis "x":(pre)size whose range of the
 * axis [pre, pre*size) contains a's? */
static int64_t range_end(const md_axis_ref *r) { /* pre*size, saturated (sizes come from the input) */
  if (r->pre_size <= 0 || r->size <= 0) return 0;
  return r->size > INT64_MAX / r->pre_size ? INT64_MAX : r->pre_size * r->size;
}

static bool covered(const md_axis_ref *a, const md_axis_ref *list, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    const md_axis_ref *b = &list[i];
    if (!ir_span_same(b->name, a->name)) continue;
    if (!b->sub) return true;
    if (a->sub && b->pre_size <= a->pre_size && range_end(a) <= range_end(b)) return true;
  }
  return false;
}

static bool mentions(const md_sharding *s, ir_span axis) {
  for (uint32_t i = 0; s && i < s->nunreduced; i++)
    if (ir_span_same(s->unreduced[i].name, axis)) return true;
  return false;
}

typedef struct {
  const md_sharding **v;
  uint32_t n;
} shard_list;

/* The first unreduced axis of `from` that no sharding of `to` covers, or NULL. */
static const md_axis_ref *first_missing(shard_list from, shard_list to) {
  for (uint32_t i = 0; i < from.n; i++)
    for (uint32_t k = 0; from.v[i] && k < from.v[i]->nunreduced; k++) {
      const md_axis_ref *a = &from.v[i]->unreduced[k];
      bool found = false;
      for (uint32_t j = 0; j < to.n && !found; j++) found = to.v[j] && covered(a, to.v[j]->unreduced, to.v[j]->nunreduced);
      if (!found) return a;
    }
  return NULL;
}

/* One mesh for all shardings (Shardy skips the check across meshes). */
static bool one_mesh(const ru_ctx *ctx, shard_list a, shard_list b) {
  const md_mesh *mesh = NULL;
  for (int side = 0; side < 2; side++) {
    shard_list l = side ? b : a;
    for (uint32_t i = 0; i < l.n; i++) {
      const md_mesh *m = l.v[i] ? md_model_sharding_mesh(ctx->model, l.v[i]) : NULL;
      if (m && mesh && m != mesh) return false;
      if (m) mesh = m;
    }
  }
  return true;
}

/* A sharding of `l` with an unreduced axis named like `axis` whose reduction is not `want`, or NULL. */
static const md_sharding *wrong_reduction(shard_list l, ir_span axis, int want) {
  for (uint32_t i = 0; i < l.n; i++)
    if (l.v[i] && mentions(l.v[i], axis) && (int)l.v[i]->unreduced_op != want) return l.v[i];
  return NULL;
}

/* verifyUnreducedAxesTransition: `introduce` / `remove` are the reductions that may add / drop axes
 * (RED_NONE: none may). Reports one diagnostic and returns on the first violation. */
static void check_transition(ru_ctx *ctx, const ir_op *op, shard_list ins, shard_list outs, int introduce, int remove) {
  if (!one_mesh(ctx, ins, outs)) return;
  const md_axis_ref *added = first_missing(outs, ins), *dropped = first_missing(ins, outs);
  if (added) {
    const md_sharding *bad = introduce == RED_NONE ? NULL : wrong_reduction(outs, added->name, introduce);
    if (introduce == RED_NONE) {
      ru_emit(ctx, op, "'%.*s' op cannot add new unreduced axis '%.*s'.", SC_SPAN_ARG(ir_op_name(op)), SC_SPAN_ARG(added->name));
      return;
    }
    if (bad) {
      ru_emit(ctx, op, "'%.*s' op cannot introduce '%s' unreduced axes. Expected '%s'.", SC_SPAN_ARG(ir_op_name(op)),
              k_red_names[bad->unreduced_op], k_red_names[introduce]);
      return;
    }
  }
  if (dropped) {
    const md_sharding *bad = remove == RED_NONE ? NULL : wrong_reduction(ins, dropped->name, remove);
    if (remove == RED_NONE) {
      ru_emit(ctx, op,
              "'%.*s' op dropped unreduced axis '%.*s' without a blessed operation (e.g., sdy.reshard). This is an "
              "invalid transition from unreduced to reduced.",
              SC_SPAN_ARG(ir_op_name(op)), SC_SPAN_ARG(dropped->name));
      return;
    }
    if (bad) {
      ru_emit(ctx, op, "'%.*s' op cannot reduce '%s' unreduced axes. Expected '%s'.", SC_SPAN_ARG(ir_op_name(op)),
              k_red_names[bad->unreduced_op], k_red_names[remove]);
      return;
    }
  }
  for (uint32_t r = 0; r < outs.n; r++)
    for (uint32_t k = 0; outs.v[r] && k < outs.v[r]->nunreduced; k++)
      for (uint32_t i = 0; i < ins.n; i++)
        if (ins.v[i] && mentions(ins.v[i], outs.v[r]->unreduced[k].name) && ins.v[i]->unreduced_op != outs.v[r]->unreduced_op) {
          ru_emit(ctx, op, "'%.*s' op cannot change the reduction operator of kept unreduced axes from %s to %s.",
                  SC_SPAN_ARG(ir_op_name(op)), k_red_names[ins.v[i]->unreduced_op], k_red_names[outs.v[r]->unreduced_op]);
          return;
        }
}

static bool span_contains(ir_span hay, const char *needle) {
  size_t n = strlen(needle);
  for (uint32_t i = 0; i + n <= hay.n; i++)
    if (hay.p[i] == needle[0] && !memcmp(hay.p + i, needle, n)) return true;
  return false;
}

/* What a reduction body computes (the ops its terminator returns: all stablehlo.add, maximum or
 * minimum), or RED_NONE. The pretty form `applies stablehlo.add` has no region: read its text. */
static int body_reduction(const ir_module *m, const ir_op *op) {
  const ir_block *b = op->nregions && ir_op_regions(op)[0]->nblocks ? ir_op_regions(op)[0]->blocks[0] : NULL;
  int red = RED_NONE;
  if (b && b->nops) {
    const ir_op *ret = b->ops[b->nops - 1];
    for (uint32_t i = 0; i < ret->noperands; i++) {
      const ir_op *d = ret->operands[i] ? ir_value_def(ret->operands[i]) : NULL;
      int r = !d ? RED_NONE
              : ir_span_eq(ir_op_name(d), "stablehlo.add") ? SC_REDUCE_SUM
              : ir_span_eq(ir_op_name(d), "stablehlo.maximum") ? SC_REDUCE_MAX
              : ir_span_eq(ir_op_name(d), "stablehlo.minimum") ? SC_REDUCE_MIN
                                                          : RED_NONE;
      if (r == RED_NONE || (red != RED_NONE && r != red)) return RED_NONE;
      red = r;
    }
    return red;
  }
  static const struct {
    const char *text;
    int red;
  } applies[] = {{"applies stablehlo.add ", SC_REDUCE_SUM}, {"applies stablehlo.maximum ", SC_REDUCE_MAX},
                 {"applies stablehlo.minimum ", SC_REDUCE_MIN}};
  for (size_t i = 0; i < 3; i++)
    if (span_contains(ir_op_text(m, op), applies[i].text)) return applies[i].red;
  return RED_NONE;
}

/* Operand and result shardings of `op` (operands from blessed reshards count as none). */
static bool op_shardings(ru_ctx *ctx, const ir_op *op, shard_list *ins, shard_list *outs) {
  ins->v = ar_calloc(ctx->arena, op->noperands + 1, sizeof *ins->v);
  outs->v = ar_calloc(ctx->arena, op->nresults + 1, sizeof *outs->v);
  ins->n = op->noperands, outs->n = op->nresults;
  bool any_result = false;
  for (uint32_t i = 0; i < op->nresults; i++) {
    outs->v[i] = sdy_only(md_model_result_sharding(ctx->model, op, i));
    any_result |= outs->v[i] != NULL;
  }
  for (uint32_t i = 0; i < op->noperands; i++)
    ins->v[i] = op->operands[i] && !from_explicit_reshard(op->operands[i]) ? value_sharding(ctx, op->operands[i]) : NULL;
  return any_result;
}

/* The unreduced axes on each side of a boundary must be the same set. */
static void check_equal(ru_ctx *ctx, const ir_op *op, const md_sharding *from, const md_sharding *to, const char *suffix,
                        uint32_t index) {
  shard_list a = {&from, 1}, b = {&to, 1};
  const md_axis_ref *x = first_missing(a, b);
  if (!x) x = first_missing(b, a);
  if (!x) return;
  ru_emit(ctx, op, "'%.*s' op has unreduced axes mismatch for '%.*s' at %s %u%s", SC_SPAN_ARG(ir_op_name(op)),
          SC_SPAN_ARG(x->name), suffix, index,
          strcmp(suffix, "return value") ? "."
                                         : " without a blessed operation (e.g., sdy.reshard). This is an invalid "
                                           "transition from unreduced to reduced.");
}

/* A callee argument or a call result with no sharding written is not decided yet: propagation gives
 * it the sharding on the other side. A callee result without one has the sharding of the value its
 * body returns. */
static void check_call(ru_ctx *ctx, const ir_op *op) {
  const ir_op *callee = md_model_func(ctx->model, ir_op_callee(op));
  if (!callee) return;
  const ir_block *body = ru_body(callee);
  for (uint32_t i = 0; i < op->noperands && body && i < body->nargs; i++) {
    if (!op->operands[i] || from_explicit_reshard(op->operands[i])) continue;
    const md_sharding *in = value_sharding(ctx, op->operands[i]), *arg = sdy_only(md_model_arg_sharding(ctx->model, callee, i));
    if (in && arg) check_equal(ctx, op, in, arg, "call argument", i);
  }
  const ir_op *ret = body && body->nops ? body->ops[body->nops - 1] : NULL;
  for (uint32_t i = 0; i < op->nresults; i++) {
    const md_sharding *fr = sdy_only(md_model_func_result_sharding(ctx->model, callee, i)),
                      *r = sdy_only(md_model_result_sharding(ctx->model, op, i));
    if (!r) continue; /* not decided yet: propagation gives it the callee's result sharding */
    /* an unannotated callee result has the sharding of the value it returns */
    if (!fr && ret && i < ret->noperands && ret->operands[i]) fr = value_sharding(ctx, ret->operands[i]);
    check_equal(ctx, op, fr, r, "call result", i);
  }
}

/* func.return against the function's results; sdy.return against its manual / named computation's
 * results (manual axes leave the comparison: inside, they are local). */
static void check_return(ru_ctx *ctx, const ir_op *op) {
  const ir_op *parent = op->parent_op;
  if (!parent) return;
  bool func = parent->kind == SC_OP_FUNC;
  const md_sdy_op_info *mc = parent->kind == SC_OP_SDY_MANUAL_COMPUTATION ? md_info_sdy_op(md_model_op(ctx->model, parent)) : NULL;
  for (uint32_t i = 0; i < op->noperands; i++) {
    if (!op->operands[i] || from_explicit_reshard(op->operands[i])) continue;
    const md_sharding *res = func ? sdy_only(md_model_func_result_sharding(ctx->model, parent, i))
                             : i < parent->nresults ? sdy_only(md_model_result_sharding(ctx->model, parent, i))
                                                    : NULL;
    if (!res) continue;
    if (mc && res->nunreduced) { /* eraseManualAxes: the computation's manual axes are not compared */
      md_sharding *copy = ar_alloc(ctx->arena, sizeof *copy);
      *copy = *res;
      copy->unreduced = ar_calloc(ctx->arena, res->nunreduced, sizeof *copy->unreduced);
      copy->nunreduced = 0;
      for (uint32_t k = 0; k < res->nunreduced; k++) {
        bool manual = false;
        for (uint32_t j = 0; j < mc->nmanual_axes; j++) manual |= ir_span_same(mc->manual_axes[j].name, res->unreduced[k].name);
        if (!manual) copy->unreduced[copy->nunreduced++] = res->unreduced[k];
      }
      res = copy;
    }
    check_equal(ctx, op, value_sharding(ctx, op->operands[i]), res, "return value", i);
  }
}

static bool is_terminator_name(ir_span n) {
  return n.n >= 6 && !memcmp(n.p + n.n - 6, "return", 6); /* func.return, sdy.return, stablehlo.return, ... */
}

void ru_visit_sharding_unreduced_transition(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_unreduced_transition(ru_ctx *ctx, const ir_op *op) {
  if (!ctx->model || ctx->module->format == SC_FMT_HLO) return; /* Shardy shardings only */
  unsigned kind = op->kind;
  if (!ir_op_func(op) || kind == SC_OP_FUNC || kind == SC_OP_SDY_RESHARD || kind == SC_OP_SDY_SHARDING_CONSTRAINT) return;
  if (kind == SC_OP_CALL) {
    check_call(ctx, op);
    return;
  }
  if (kind == SC_OP_RETURN || kind == SC_OP_SDY_RETURN) {
    check_return(ctx, op);
    return;
  }
  if (!op->nresults && is_terminator_name(ir_op_name(op))) return; /* terminators have no results */
  if (kind == SC_OP_SDY_ALL_REDUCE || kind == SC_OP_SDY_REDUCE_SCATTER) {
    /* An unannotated function argument is replicated: nothing to reduce. (An unannotated op result is
     * still open to propagation.) The rest is sdy's own verifier (collective-unreduced). */
    const ir_value *in = op->noperands ? bypass_barriers(op->operands[0]) : NULL;
    bool func_arg = in && !ir_value_def(in) && ir_value_block(in) && ir_value_block(in)->parent && ir_value_block(in)->parent->parent &&
                    ir_value_block(in)->parent->parent->kind == SC_OP_FUNC;
    if (func_arg && !value_sharding(ctx, in))
      ru_emit(ctx, op, "'%.*s' op operand must be sharded.", SC_SPAN_ARG(ir_op_name(op)));
    return;
  }
  shard_list ins, outs;
  ar_mark_t mark = ar_mark(ctx->arena);
  if (!op_shardings(ctx, op, &ins, &outs)) { /* most ops: no written result sharding, nothing kept */
    ar_rewind(ctx->arena, mark);
    return;
  }
  if (ir_span_eq(ir_op_name(op), "stablehlo.reduce")) {
    check_transition(ctx, op, ins, outs, body_reduction(ctx->module, op), RED_NONE);
  } else if (ir_span_eq(ir_op_name(op), "stablehlo.dot_general") || ir_span_eq(ir_op_name(op), "stablehlo.dot")) {
    check_transition(ctx, op, ins, outs, SC_REDUCE_SUM, RED_NONE);
  } else if (ir_span_eq(ir_op_name(op), "stablehlo.all_reduce") || ir_span_eq(ir_op_name(op), "stablehlo.reduce_scatter")) {
    ins.n = ins.n ? 1 : 0, outs.n = outs.n ? 1 : 0;
    check_transition(ctx, op, ins, outs, RED_NONE, body_reduction(ctx->module, op));
  } else {
    check_transition(ctx, op, ins, outs, SC_REDUCE_SUM, RED_NONE);
  }
}
