/* op_rule.h — Shardy's op sharding rules: how an op's operand and result dimensions map onto factors.
 *
 * A rule names the op's independent iteration "factors" (a pointwise add of 8x16 tensors has two, i=8
 * and j=16; a matmul has three, the contracting one a reduction factor) and, for every dimension of
 * every operand and result, the factors it is made of, major to minor (a reshape of 4x8 into 32 maps
 * the result dimension onto two factors: a compound factor `[ij]`). Propagation moves shardings along
 * factors: a dimension's sharding is split over its factors, and a factor's sharding is projected back
 * onto every tensor that has it. Factor kinds (Shardy's FactorType): pass-through, reduction (the
 * factor is summed over: sharding it leaves partial results), need-replication (must be replicated
 * for the op to be computed locally) and permutation (sharding it moves data between devices); a
 * factor may also be blocked (shardings do not propagate along it). `custom` marks a rule that came
 * from an `sdy.sharding_rule` attribute written on the op (custom_partitioning), printed as `custom`.
 *
 * The registry (op_rule.c) is data: one table row per op name with the function that builds its
 * rule from the op's types and attributes, as the rule table of lib/rules is. Everything is allocated
 * from the caller's arena; functions run on the caller's thread and never abort on bad input (an op
 * whose types or attributes do not fit its rule gets no rule and an error message). */
#ifndef SC_PROPAGATE_OP_RULE_H
#define SC_PROPAGATE_OP_RULE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "util/arena.h"

typedef enum {
  PROP_FACTOR_PASS_THROUGH = 0,
  PROP_FACTOR_REDUCTION,
  PROP_FACTOR_NEED_REPLICATION,
  PROP_FACTOR_PERMUTATION,
} prop_factor_type;

typedef struct {
  int64_t size;   /* the factor's size (a dynamic dimension's factor is ShapedType::kDynamic: -1) */
  uint8_t type;   /* prop_factor_type */
  bool blocked;   /* printed in blocked_propagation={...}: shardings never propagate along it */
} prop_factor;

/* One dimension of one operand or result: the factors it is made of, major to minor. A dimension
 * that no factor covers (size 1 dimensions some rules leave out) has nfactors == 0. */
typedef struct {
  uint32_t *factors;
  uint32_t nfactors;
} prop_dim;

typedef struct {
  prop_dim *dims;
  uint32_t rank;
} prop_tensor;

typedef struct {
  prop_factor *factors;
  uint32_t nfactors;
  prop_tensor *operands;
  uint32_t noperands;
  prop_tensor *results;
  uint32_t nresults;
  bool custom; /* written on the op as sdy.sharding_rule (custom_partitioning), not built here */
} prop_rule;

/* What some rules ask about the rest of the module (Shardy's X64Combine rule: is the result used by an
 * rng_bit_generator?), gathered in one linear pass so that a whole module's rules cost linear time. */
typedef struct prop_rule_facts prop_rule_facts;

/* Built once per module (arena-owned; read-only afterwards, so any thread may share it). */
const prop_rule_facts *prop_rule_facts_build(sc_arena *a, const ir_module *m);
/* The op's name as Shardy sees it: `mhlo.` read as `stablehlo.` (XLA imports mhlo as StableHLO), an XLA
 * HLO opcode (`add`, `dynamic-slice`) as its StableHLO op; other names as written. The result may lie
 * in `buf` (cap bytes: 96 hold every such name). */
ir_span prop_stablehlo_name(const ir_op *op, char *buf, size_t cap);

typedef struct {
  /* Shardy's conservative-propagation=true: factors that need communication to stay sharded are
   * need-replication instead (see the registry for which ops this changes). */
  bool conservative;
  /* prop_rule_facts_build(m), or NULL: then the few rules that need it scan the op's enclosing
   * region (fine for one op; callers that visit every op pass the facts). */
  const prop_rule_facts *facts;
} prop_rule_options;

/* The rule of `op`, built from its kind, operand/result types and attributes the way Shardy's
 * registry (sdy-populate-op-sharding-rules) builds it; an `sdy.sharding_rule` attribute on the op wins.
 * Returns NULL with *err == NULL when Shardy has no rule for the op (func.return, constants, ops of
 * unknown dialects), and NULL with *err set (arena message) when the op has a rule but its types or
 * attributes do not fit it (e.g. an unranked operand); `err` may be NULL. */
const prop_rule *prop_rule_of(sc_arena *a, const ir_module *m, const ir_op *op, const prop_rule_options *opt,
                              const char **err);

/* The warning Shardy's registry emits for an op it does not know (`custom call @foo is unknown to SDY
 * sharding rule registry`, `op 'x.y' is unknown to SDY sharding rule registry`), or NULL when it knows
 * the op (with or without a rule) or the op is a terminator. Arena string. Shardy emits it once per
 * process and kind (a once-flag), so a caller reproducing its output reports only the first. */
const char *prop_rule_warning(sc_arena *a, const ir_op *op);

/* Parses the text of an `#sdy.op_sharding_rule<...>` attribute (as written on an op). NULL with *err
 * (arena message) when it is malformed. */
const prop_rule *prop_rule_parse(sc_arena *a, ir_span text, const char **err);

/* The rule in Shardy's syntax, e.g. `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=16}
 * reduction={j}>`: factor symbols i..z then z_1, z_2, ...; a compound dimension's symbols written
 * together (`[ij]`); the factor-kind lists only when non-empty, in the order reduction,
 * need_replication, permutation, blocked_propagation; `, custom` last. Arena string. */
const char *prop_rule_str(sc_arena *a, const prop_rule *r);

/* The symbol of factor `index` (i, j, ..., z, z_1, ...) appended to `out`. */
void prop_factor_symbol(ar_str *out, uint32_t index);

#endif
