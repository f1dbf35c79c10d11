/* sharding_group.c — sharding-group (SC0222): the values of one sdy.sharding_group (jax.shard_alike)
 * must share their manual computation (all outside any, or all in the same one) and their shape, as
 * Shardy's import checks (transforms/import/sharding_group_import.cc). */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "rules/rule_util.h"
#include "rules/rules.h"

typedef struct {
  int64_t group;
  uint32_t index; /* into module->ops: the order the groups are met */
} member;

static int member_cmp(const void *x, const void *y) {
  const member *a = x, *b = y;
  if (a->group != b->group) return a->group < b->group ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* The innermost sdy.manual_computation the op is written in (lexically), or NULL. */
static const ir_op *manual_parent(const ir_op *op) {
  for (const ir_op *p = op->parent_op; p; p = p->parent_op)
    if (p->kind == SC_OP_SDY_MANUAL_COMPUTATION) return p;
  return NULL;
}

static bool group_id(const ru_ctx *ctx, const ir_op *op, int64_t *out) {
  return md_model_sharding_group_id(ctx->model, op, out);
}

static bool same_shape(sc_arena *a, ir_span t1, ir_span t2) {
  md_shape s1, s2;
  if (!md_parse_shape(a, t1, &s1) || !md_parse_shape(a, t2, &s2)) return true; /* unknown: not a finding */
  if (s1.kind != SC_SHAPE_ARRAY || s2.kind != SC_SHAPE_ARRAY) return s1.kind == s2.kind;
  if (s1.rank != s2.rank) return false;
  for (int32_t d = 0; d < s1.rank; d++)
    if (s1.dims[d] != s2.dims[d]) return false;
  return true;
}

static ir_span input_type(const ir_op *op) {
  return op->noperands ? ru_operand_type(op, 0) : ir_span_of("", 0);
}

void ru_check_sharding_group(ru_ctx *ctx);
void ru_check_sharding_group(ru_ctx *ctx) {
  const ir_module *m = ctx->module;
  if (!ctx->model || !ir_module_may_name(m, "sdy.sharding_group")) return;
  SC_VEC(member) v = {0};
  for (uint32_t k = 0; k < m->nops; k++) {
    const ir_op *op = m->ops[k];
    member x = {0, k};
    if (ir_span_eq(ir_op_name(op), "sdy.sharding_group") && group_id(ctx, op, &x.group)) SC_PUSH(ctx->arena, v, x);
  }
  if (v.n < 2) return;
  qsort(v.v, v.n, sizeof *v.v, member_cmp);
  for (size_t i = 0; i < v.n;) {
    size_t end = i + 1;
    while (end < v.n && v.v[end].group == v.v[i].group) end++;
    const ir_op *first = m->ops[v.v[i].index];
    for (size_t k = i + 1; k < end; k++) { /* Shardy stops at the first bad member of a group */
      const ir_op *op = m->ops[v.v[k].index];
      if (manual_parent(op) != manual_parent(first)) {
        ru_emit(ctx, op, "ShardingGroupOps values cannot cross ManualComputationOp boundaries for groupId: %lld",
                (long long)v.v[i].group);
        break;
      }
      if (!same_shape(ctx->arena, input_type(op), input_type(first))) {
        ru_emit(ctx, op, "ShardingGroupOps values must have the same shape for groupId: %lld", (long long)v.v[i].group);
        break;
      }
    }
    i = end;
  }
}
