/* reshard.h — explicit reshards where an op's shardings disagree with its sharding rule (Shardy's
 * -sdy-insert-explicit-reshards='enable-full-version=true').
 *
 * For every op with a (non-custom) sharding rule whose operands and results live on one mesh, the
 * shardings are projected onto the rule's factors and one sharding per factor is chosen: the one all
 * tensors agree on when they do, else the preferred tensor's for an op between two tensors with one
 * factor per dimension, else Shardy's greedy heuristic (factor-axes candidates ranked by the global
 * size of the tensors already sharded that way, the factor's kind and the sharding size). Operands
 * whose sharding differs get an `sdy.reshard` before the op; results whose sharding differs take the
 * chosen sharding and an `sdy.reshard` back to their own after the op; axes on reduction factors leave
 * partial results, summed by an `sdy.all_reduce` after the op. Function results get a reshard before
 * the return where the returned value's sharding differs from the function's result sharding.
 *
 * Data-flow ops (while, case, optimization_barrier, manual and named computations) reshard the values
 * flowing into each edge to its owner's sharding, right after the value is defined.
 *
 * An op with a result on a single-device (maximal) mesh runs on that device: its tensor operands are
 * resharded there through the global mesh (the first declared mesh with axes), its results back.
 *
 * Unreduced axes: an operand's unreduced axes the op's first result (or a return's, edge's or boundary's
 * target) does not keep are summed by an `sdy.all_reduce` first; a reshard or target with new unreduced
 * axes becomes `sdy.sharded_to_unreduced` / `sdy.replicated_to_unreduced` (Shardy's
 * insertUnreducedCollectives).
 *
 * Not done yet (left as written): calls.
 *
 * Everything lives in the caller's arena; one thread at a time per arena. Cost: linear in the module
 * times, per op, a polynomial in its tensors' axes (small: a few axes per dimension); the greedy choice is
 * quadratic in an op's candidates and counts that work on the arena, so a hostile op with thousands of
 * differently sharded operands ends the request at its step limit instead of running on. */
#ifndef SC_PROPAGATE_RESHARD_H
#define SC_PROPAGATE_RESHARD_H

#include "model/model.h"
#include "propagate/engine.h"
#include "propagate/print.h"

/* An error of a pass at an op (Shardy's emitOpError): the pass failed and its output is not printed. */
typedef struct {
  uint32_t offset;     /* where the op is written */
  const char *message; /* arena string */
  /* a function signature's error: which argument (kind 'a') or result ('r'), else kind 0 */
  char signature_kind;
  uint32_t signature_index;
} prop_pass_error;
typedef struct {
  prop_pass_error *v;
  uint32_t n;
} prop_pass_errors;

/* Writes the explicit reshards of `m` (model built by the caller) into `pr` — every one (Shardy's full
 * version), or with `partial` only those enable-full-version=false inserts (calls, ragged dots, concatenates
 * of differently sharded operands, the dot pattern, unreduced axes); returns the pass's errors
 * (a single-device sharding on a function's argument or result, an op with results on two different
 * single devices), after which `pr` holds nothing worth printing. */
prop_pass_errors prop_insert_explicit_reshards(sc_arena *a, const ir_module *m, const md_model *model, prop_printer *pr,
                                              bool partial);

/* One reshard the pass inserts: `value` (an operand or result of `op`, or a value flowing into a data-flow
 * edge or a return) goes from sharding `from` (NULL = replicated) to `to`; or, with `all_reduce` axes, the
 * partial sums of `op`'s result are all-reduced (from = to = the result's sharding). */
typedef struct {
  const ir_op *op;
  const ir_value *value;
  const prop_sharding *from, *to;
  const char *what; /* "operand 0", "result 1", "returned value 0" */
  prop_axes all_reduce;
  bool boundary;    /* not the pass's: an operand brought to a host callback's single device (lib/cost) */
} prop_reshard;
typedef struct {
  prop_reshard *v;
  uint32_t n;
} prop_reshard_list;

/* The reshards the pass would insert given `e`'s shardings (a propagation's final state), in the pass's
 * order; nothing is printed. Same cost as the pass. */
prop_reshard_list prop_explicit_reshards(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *e);

#endif
