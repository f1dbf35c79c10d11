/* engine.h — sharding propagation over one module (Shardy's basic propagation).
 *
 * Every value of the module (op results, block arguments) has a slot holding its current sharding
 * (NULL = none). The engine seeds the slots from the model (func arguments' sdy.sharding, ops'
 * result shardings, sharding constraints), then runs a worklist in program order: an op with a
 * sharding rule projects its operands' and results' shardings onto its factors, propagates along
 * them, and writes back the tensors that grew, queueing the ops that read or define them. The entry
 * function's results follow its return values (identity) before and after. A sharding only ever gains
 * axes, so the worklist ends; its work is counted on the arena (cancellation, step limits).
 * Everything lives in the caller's arena; one thread at a time per arena. */
#ifndef SC_PROPAGATE_ENGINE_H
#define SC_PROPAGATE_ENGINE_H

#include "model/model.h"
#include "propagate/print.h"
#include "propagate/sharding.h"

/* Shardy's strategies, each containing the previous: basic (no conflict resolution), aggressive
 * (conflicts resolved per tensor), op priority (aggressive in rounds that open op kinds one by one:
 * pass-through ops first, broadcasts backward only until the last), user priority (op priority once per
 * priority p0, p1, ... of the dimension shardings users wrote). */
typedef enum { PROP_BASIC = 0, PROP_AGGRESSIVE, PROP_OP_PRIORITY, PROP_USER_PRIORITY } prop_strategy;

typedef struct {
  prop_strategy strategy;
  bool conservative;
  bool keep_sharding_rules; /* print each op's rule too (keep-sharding-rules=true) */
  bool through_calls;       /* func.call: its operands flow into the callee's arguments and its results out of
                               the callee's return (Shardy's pipeline inlines or dedups calls; sdy_opt's single
                               passes do not) */
  bool seed_only;           /* only read the shardings as written (data-flow edges shared), no propagation */
  bool close_shardings;     /* print every sharding closed, without replicated axes (the export pipeline's
                               -sdy-close-shardings) */
  bool apply_constraints;   /* a value without a sharding takes the fully closed one a constraint asks of it
                               (the pipeline's -sdy-apply-sharding-constraints) */
  bool import_only;         /* stop after seeding, constraints and the sharding groups' sync (no propagation) */
  bool split_constants;     /* each use of a constant expression has its own copy (the pipeline's
                               -sdy-constant-or-scalar-splitter; see prop_engine_operand_sharding) */
  bool manual_axes_cleanup; /* a manual axis a manual computation's in/out sharding does not use is replicated
                               there (the pipeline's -sdy-manual-axes-cleanup) */
  bool remove_size_one_axes; /* shardings read without mesh axes of size 1 (the pipeline's
                               -sdy-remove-size-one-axes) */
  bool results_from_returns; /* every function but main, ending in func.return, prints its returned values'
                               shardings on its results (-sdy-propagate-to-func-results) */
} prop_engine_options;

typedef struct prop_engine prop_engine;

/* A warning Shardy's propagation emits about the module, at the byte offset of an op. */
typedef struct {
  uint32_t offset;
  const char *text; /* the engine's arena */
} prop_engine_message;

/* Runs propagation with `o->strategy` on `m` (its model built by the caller); the final state. */
prop_engine *prop_engine_run(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine_options *o);

/* The sharding a value ends with (NULL = none). */
const prop_sharding *prop_engine_value_sharding(const prop_engine *e, const ir_value *v);
/* The sharding operand `k` of `op` ends with: its value's, or with split_constants, that of the op's
 * own copy of a constant expression used elsewhere too. */
const prop_sharding *prop_engine_operand_sharding(const prop_engine *e, const ir_op *op, uint32_t k);
/* The sharding of `op`'s result r (as prop_engine_value_sharding of it, without reading the value). */
const prop_sharding *prop_engine_result_sharding(const prop_engine *e, const ir_op *op, uint32_t r);
/* Whether operand `k` of `op` reads its own copy of a constant expression (split_constants). */
bool prop_engine_operand_is_copy(const prop_engine *e, const ir_op *op, uint32_t k);

typedef struct {
  const prop_engine_message *v;
  uint32_t n;
} prop_engine_messages;
/* The warnings the run emitted (sharding groups whose members' shardings conflict), in module order. */
prop_engine_messages prop_engine_warnings(const prop_engine *e);
/* A sharding group whose members were written with different shardings: Shardy puts a fully open
 * sharding constraint (on `sharding`'s mesh) after each member and groups those instead. */
typedef struct {
  const prop_sharding *sharding; /* the first member's that is not replicated and open */
  const ir_value **members;      /* in module order, each once */
  uint32_t nmembers;
} prop_group_conflict;
typedef struct {
  const prop_group_conflict *v;
  uint32_t n;
} prop_group_conflicts;
/* The run's conflicting sharding groups, in order of their first member. */
prop_group_conflicts prop_engine_group_conflicts(const prop_engine *e);

/* The value whose written sharding (a function argument's, an op's, a constraint's) `v`'s sharding was
 * propagated from: `v` itself when it was written on it, NULL when `v` has none. */
const ir_value *prop_engine_value_origin(const prop_engine *e, const ir_value *v);

/* `s` (a sharding of a value crossing manual computation `op`'s boundary) as its body sees it: each
 * dimension without its leading manual axes, no manual replicated/unreduced axes (Shardy's
 * eraseManualAxes). `s` itself for other ops or when NULL. */
const prop_sharding *prop_engine_local_sharding(const prop_engine *e, const ir_op *op, const prop_sharding *s);

/* The rule propagation built for `op` with `conservative` (the same as prop_rule_of's), when it built
 * one: *known says whether it did (the result may be NULL: no rule). Lives in the engine's arena. */
const prop_rule *prop_engine_built_rule(const prop_engine *e, const ir_op *op, bool conservative, bool *known);
/* The module facts op rules read (prop_rule_facts_build), built once by the engine. */
const prop_rule_facts *prop_engine_facts(const prop_engine *e);

/* Whether the tensors `all` (operands then results of `rule`) hold one and the same sharding across a
 * rule that maps every tensor's dimension d to factor d: nothing can propagate. With `layout_only`,
 * whether they are laid out alike (open/closed dimensions and priorities aside): no reshard is needed. */
bool prop_tensors_agree(const prop_rule *rule, const prop_sharding *const *all, uint32_t n, bool layout_only);

/* Writes what propagation changed into `pr`: ops' `sdy.sharding` (and `sdy.sharding_rule` with
 * keep_sharding_rules), and every function signature on one line with its arguments' and results'
 * shardings. */
void prop_engine_print(prop_engine *e, prop_printer *pr);

#endif
