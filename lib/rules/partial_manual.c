/* partial_manual.c — what XLA's SPMD partitioner refuses inside a partially manual region (a
 * shard_map / sdy.manual_computation that leaves some mesh axes automatic, or GSPMD
 * `last_tile_dims={manual, ...}`): a cross-partition all-reduce without global device ids
 * (collective-partial-manual-global-ids, SC0607) and partition_id (manual-partition-id, SC0513)
 * (../reference/spmd-errors.md S11 and S13); and manual axes with nothing to bind them to a mesh
 * (manual-axes-without-shardings, SC0514). */
#include <string.h>

#include "model/model.h"
#include "rules/rule_util.h"
#include "rules/rules.h"

/* A GSPMD sharding with a manual subgroup dimension that does not cover every device. */
static bool partial_manual_sharding(const md_sharding *s) {
  if (s && s->kind == SC_SHARDING_TUPLE) s = s->nelements ? s->elements[0] : NULL;
  if (!s || !s->tiles->tile_dims || !s->tiles->ntile_devices) return false;
  for (uint32_t i = 0; i < s->tiles->nlast_tile_dims; i++)
    if (s->tiles->last_tile_dims[i] == 1)
      return (uint64_t)s->tiles->tile_dims[s->tiles->ntile_dims - s->tiles->nlast_tile_dims + i] != s->tiles->ntile_devices;
  return false;
}

static bool in_partial_manual(const ru_ctx *ctx, const ir_op *op) {
  const md_manual_context *mc = md_model_manual(ctx->model, op);
  if (mc->gspmd_manual) return mc->gspmd_partial;
  if (mc->manual_op && mc->manual_op->kind == SC_OP_SDY_MANUAL_COMPUTATION) return !md_model_fully_manual(ctx->model, op);
  return partial_manual_sharding(md_model_result_sharding(ctx->model, op, 0)); /* HLO: the op's own sharding */
}

static bool attr_true(const ir_op *op, const char *name) {
  const ir_attr *a = ir_op_attr(op, name);
  return a && !ir_span_eq(ir_span_trim(a->value), "false");
}

void ru_check_collective_partial_manual_global_ids(ru_ctx *ctx, const ir_op *op);
void ru_check_collective_partial_manual_global_ids(ru_ctx *ctx, const ir_op *op) {
  ir_span n = ir_op_name(op);
  bool all_reduce = ir_span_eq(n, "all-reduce") || ir_span_eq(n, "all-reduce-start") ||
                    ir_span_eq(n, "stablehlo.all_reduce") || ir_span_eq(n, "mhlo.all_reduce");
  bool cross_partition = ir_op_attr(op, "channel_id") || ir_op_attr(op, "channel_handle");
  if (!all_reduce || !cross_partition || attr_true(op, "use_global_device_ids") || !in_partial_manual(ctx, op)) return;
  sc_diag *d = ru_emit(ctx, op,
                       "Cross-partition allreduce in partial manual partitioning mode must use global device IDs. "
                       "(%.*s in a region that leaves some mesh axes automatic)",
                       SC_SPAN_ARG(ir_op_name(op)));
  ru_diag_fix(ctx, d, "Set use_global_device_ids, with replica groups of global device ids within one manual subgroup",
              NULL)
      ->note = "jax.lax.psum inside a partially manual shard_map lowers with global device ids; a hand-written or "
               "transformed collective must do the same";
}

static bool is_partition_id(ir_span n) {
  return ir_span_eq(n, "partition-id") || ir_span_eq(n, "stablehlo.partition_id") || ir_span_eq(n, "mhlo.partition_id");
}

void ru_check_manual_partition_id(ru_ctx *ctx);
void ru_check_manual_axes_without_shardings(ru_ctx *ctx, const ir_op *op);
void ru_check_manual_partition_id(ru_ctx *ctx) {
  const ir_module *m = ctx->module;
  if (!ctx->model || !(ir_module_may_name(m, "partition-id") || ir_module_may_name(m, "stablehlo.partition_id") ||
                       ir_module_may_name(m, "mhlo.partition_id")))
    return;
  for (uint32_t k = 0; k < m->nops; k++) {
    const ir_op *op = m->ops[k];
    if (ir_op_name(op).n < 12 || !is_partition_id(ir_op_name(op)) || !in_partial_manual(ctx, op)) continue;
    sc_diag *d = ru_emit(ctx, op,
                         "PartitionId instruction is not supported for SPMD partitioning since the meaning is "
                         "ambiguous -- whether the instruction is replicated or the data is replicated, and if the "
                         "latter which data is replicated. (%.*s in a region that leaves some mesh axes automatic)",
                         SC_SPAN_ARG(ir_op_name(op)));
    ru_diag_fix(ctx, d, "Use jax.lax.axis_index over the manual axes instead, or make the shard_map fully manual", NULL);
  }
}

/* Shardy's import (manual_axes_cleanup): manual axes need a mesh, which only the in/out shardings give.
 * An empty body (just sdy.return) is harmless and dropped. */
void ru_check_manual_axes_without_shardings(ru_ctx *ctx, const ir_op *op) {
  const md_sdy_op_info *x = md_info_sdy_op(md_model_op(ctx->model, op));
  if (!x->nmanual_axes || x->in_shardings.nvalues || x->out_shardings.nvalues) return;
  const ir_block *b = ru_body(op);
  if (!b || !b->nops || b->ops[0]->kind == SC_OP_SDY_RETURN) return;
  sc_diag *d = ru_emit(ctx, op,
                       "op has manual_axes when there are no in/out shardings and the body is not empty. This isn't "
                       "allowed at this stage, please contact the Shardy team or file a bug.");
  ru_diag_fix(ctx, d, "Give the shard_map its inputs and outputs (in_specs/out_specs over the manual axes), or drop its "
                      "axis_names when it takes and returns nothing",
              NULL);
}
