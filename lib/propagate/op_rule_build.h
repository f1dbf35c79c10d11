/* op_rule_build.h — the builder the registry's rules are written with (op_rule_build.c), and the
 * attribute readers they share. Internal to lib/propagate.
 *
 * The builder mirrors Shardy's OpShardingRuleBuilder concepts: tensors with ranks, factors added one
 * at a time and mapped onto given dimensions of given operands/results (-1 = not on that tensor),
 * and at the end every dimension no factor covers gets its own size-1 factor (operands first, then
 * results). A rule that does not fit the op's types (a dimension out of range) sets `err` instead of
 * asserting; later calls are then ignored. Everything lives in the caller's arena. */
#ifndef SC_PROPAGATE_OP_RULE_BUILD_H
#define SC_PROPAGATE_OP_RULE_BUILD_H

#include "propagate/op_rule.h"

#define PB_NULL_DIM (-1)

/* A tensor's shape: rank -1 = not a ranked tensor (unranked, or a type that is not a tensor). */
typedef struct {
  int32_t rank;
  const int64_t *dims;
  bool tensor;   /* a tensor type (ranked or not); tokens and tuples are not */
} pb_shape;

typedef struct {
  uint32_t *v;
  uint32_t n, cap;
} pb_dimvec;

typedef struct {
  sc_arena *a;
  uint32_t ntensors, noperands; /* tensors = operands then results */
  int32_t *rank;                /* per tensor; non-tensors have rank 0 */
  pb_dimvec **map;              /* per tensor, per dimension */
  prop_factor *factors;
  uint32_t nfactors, cap;
  const char *err;
} pb_builder;

/* Starts a rule for tensors of these shapes. An unranked tensor is an error (set in b->err). */
void pb_init(pb_builder *b, sc_arena *a, const pb_shape *operands, uint32_t noperands, const pb_shape *results,
             uint32_t nresults);
/* Adds a factor mapped onto operand_dims[i] of operand i and result_dims[j] of result j (PB_NULL_DIM,
 * or past the array's n: not on it); a size-1 factor is not appended to a dimension that already has
 * factors (Shardy's rule). PB_DIMS(a, b) passes a literal array with its length. */
void pb_add(pb_builder *b, const int64_t *operand_dims, uint32_t noperand_dims, const int64_t *result_dims,
            uint32_t nresult_dims, int64_t size, prop_factor_type type, bool blocked);
#define PB_DIMS(...) \
  (const int64_t[]){__VA_ARGS__}, (uint32_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
/* The same for one operand dimension and one result dimension (the common two-tensor case). */
void pb_add1(pb_builder *b, int64_t operand_dim, int64_t result_dim, int64_t size, prop_factor_type type, bool blocked);
/* Adds a factor on dimension `dim` of every operand / result / tensor of rank > 0. */
void pb_add_operands(pb_builder *b, int64_t dim, int64_t size, prop_factor_type type, bool blocked);
void pb_add_results(pb_builder *b, int64_t dim, int64_t size, prop_factor_type type, bool blocked);
void pb_add_all(pb_builder *b, int64_t dim, int64_t size, prop_factor_type type, bool blocked);
/* Marks the rule as not fitting the op (first message wins). */
void pb_fail(pb_builder *b, const char *msg);
/* The rule (NULL with b->err set if a step failed). */
prop_rule *pb_build(pb_builder *b);

/* ---- attribute text readers (op_rule_build.c) ---- */
/* The value of `name = value` inside `text` (strings skipped; the name must stand alone): the span up to
 * the first ',' ':' or '{' outside brackets, or an unmatched closing bracket. False if absent. */
bool pb_find_field(ir_span text, const char *name, ir_span *value);
/* Integers of a list attribute: `[1, 0]`, HLO's `{1,0}`, `array<i64: 1, 0>`, `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`,
 * a splat `dense<1> : tensor<2xi64>`, or a bare `1 : i64`; nested lists are flattened. Returns the count
 * (the array in the arena) or -1 when the text is not such a list or holds more than PB_MAX_LIST values
 * (no rule reads more than two per dimension, and tensors have at most 64, so rules stay linear). */
#define PB_MAX_LIST 256
int32_t pb_int_list(sc_arena *a, ir_span text, int64_t **out);
/* The first integer of `text` (`1 : i64`, `-2`, HLO's `{1}`). */
bool pb_int(ir_span text, int64_t *out);

#endif
