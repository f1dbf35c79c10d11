/* sharding.h — tensor shardings as propagation reads and grows them, and their projection onto an
 * op's factors (Shardy's ShardingProjection) and back.
 *
 * An axis reference is a mesh axis index with an optional sub-axis (pre-size, size); a tensor sharding
 * is a mesh, one dimension sharding per dimension (axes major to minor, closed or open, priority),
 * and replicated / unreduced axes. Propagation never edits a sharding in place: it builds a new one
 * and swaps the pointer, so shardings can be shared. Everything lives in the request's arena; one
 * thread at a time per arena. Cost: linear in rank x axes per projection. */
#ifndef SC_PROPAGATE_SHARDING_H
#define SC_PROPAGATE_SHARDING_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "propagate/op_rule.h"

typedef struct {
  uint32_t axis; /* index in the mesh's axes */
  int64_t pre;   /* sub-axis pre-size; 0 = the whole axis */
  int64_t size;  /* sub-axis size, or the whole axis's size */
} prop_axis;

typedef struct {
  prop_axis *v;
  uint32_t n;
} prop_axes;

typedef struct {
  prop_axes axes;
  bool closed;
  int64_t priority; /* -1 = none */
} prop_dim_sharding;

typedef struct {
  const md_mesh *mesh;
  ir_span mesh_name; /* without '@' */
  uint32_t rank;
  prop_dim_sharding *dims;
  prop_axes replicated, unreduced;
  uint8_t unreduced_op; /* md_reduction of the unreduced axes (sum is not printed) */
} prop_sharding;

/* Shardy's AxisRefAttr relations (sub-axes are ranges [pre, pre*size) of their axis). */
bool prop_axis_eq(prop_axis a, prop_axis b);
bool prop_axis_overlaps(prop_axis a, prop_axis b);
bool prop_axis_can_coexist(prop_axis a, prop_axis b);
/* a contains b: the same axis and b's range lies within a's. */
bool prop_axis_contains(prop_axis a, prop_axis b);
/* a is a prefix of b: b contains a and both start at the same pre-size. */
bool prop_axis_prefix_of(prop_axis a, prop_axis b);
/* The prefix of `a` that does not overlap `b`; false when there is none (or they cannot coexist). */
bool prop_axis_prefix_without_overlap(prop_axis a, prop_axis b, prop_axis *out);

/* A Shardy (or mapped GSPMD) sharding from the model, or NULL when it is not a named sharding on a
 * known mesh whose axes all resolve. */
const prop_sharding *prop_sharding_from_model(sc_arena *a, const md_sharding *s, const md_mesh *mesh);
/* The model's form of a derived sharding (source SC_SHARDING_FROM_PROPAGATION, text in Shardy's
 * syntax), for rules that read md_sharding. */
md_sharding *prop_sharding_to_model(sc_arena *a, const prop_sharding *s);
/* Shardy's text: `<@mesh, [{"a", ?}, {}p1], replicated={"b"}>` (without `#sdy.sharding`). */
void prop_sharding_put(ar_str *out, const prop_sharding *s);
/* The same, closed as the export pipeline leaves it (-sdy-close-shardings). */
void prop_sharding_put_closed(ar_str *out, const prop_sharding *s);
/* Whether `a` and `b` lay a tensor out the same way on devices: one mesh, the same axes on every
 * dimension, the same unreduced axes (open or closed dimensions and priorities aside). */
bool prop_sharding_same_layout(const prop_sharding *a, const prop_sharding *b);
bool prop_sharding_eq(const prop_sharding *a, const prop_sharding *b);
/* A deep copy laid out in one block (the struct, then its arrays), and the fix-up after that block
 * was moved `delta` bytes down in memory (ar_rewind_keep). */
prop_sharding *prop_sharding_copy(sc_arena *a, const prop_sharding *s);
void prop_sharding_rebase(prop_sharding *moved, size_t delta);
/* Shardy's -sdy-remove-size-one-axes: `s` without the whole axes of size 1 (a closed dimension left
 * without axes loses its priority), or `s` itself when it has none. */
const prop_sharding *prop_sharding_without_size_one_axes(sc_arena *a, const prop_sharding *s);
/* True when no dimension has axes and there are no replicated or unreduced axes. */
bool prop_sharding_empty_axes(const prop_sharding *s);
/* `#sdy.sharding_per_value<[...]>` of `op`'s results (op->nresults shardings; a NULL one prints open
 * and empty on the mesh of the others; all NULL gives an empty list). Arena or static string. */
const char *prop_per_value_text(sc_arena *a, const ir_op *op, const prop_sharding *const *results, bool close);
/* A fully open sharding of `rank` with no axes on `mesh`. */
prop_sharding *prop_sharding_open(sc_arena *a, const md_mesh *mesh, ir_span mesh_name, uint32_t rank);

/* ---- the projection of one op's tensors onto its rule's factors -------------------------------- */
typedef struct {
  prop_axes axes, overflow;
  bool present;    /* the tensor has this factor */
  bool closed;
  bool minor_most; /* the minor-most factor of its dimension */
} prop_factor_sharding;

typedef struct {
  prop_factor_sharding *factors; /* rule->nfactors entries */
  prop_axes replicated, unreduced;
  uint8_t unreduced_op;
} prop_tensor_factors;

typedef struct {
  const prop_rule *rule;
  const md_mesh *mesh;
  uint32_t noperands, nresults;
  prop_tensor_factors *tensors; /* operands, then results */
} prop_projection;

/* Projects the shardings (NULL = none: open, or closed when `closed_if_missing`) of the op's operands
 * and results onto `rule`'s factors. Ranks must match the rule's mappings (the caller checks). */
void prop_project(sc_arena *a, prop_projection *p, const prop_rule *rule, const md_mesh *mesh,
                  const prop_sharding *const *operands, const prop_sharding *const *results, bool closed_if_missing);
/* The tensor sharding of tensor `t` of the projection (Shardy's createTensorShardingAttr). */
prop_sharding *prop_unproject(sc_arena *a, const prop_projection *p, uint32_t t, ir_span mesh_name);

/* Directions along a factor. */
typedef enum { PROP_DIR_NONE = 0, PROP_DIR_FORWARD, PROP_DIR_BACKWARD, PROP_DIR_BOTH } prop_direction;

/* Basic factor propagation (Shardy's BasicFactorPropagation): for every factor, the longest
 * compatible major axes over the tensors that have it, truncated where they conflict with other
 * factors, replicated/unreduced axes, closed or overflowing factors, or divisibility; then every
 * tensor whose factor axes are a strict prefix of those is expanded. `updated[t]` tells which tensors
 * changed. `directions` per factor (NULL = both). */
void prop_basic_factor_propagation(sc_arena *a, prop_projection *p, const prop_direction *directions,
                                   bool conservative, bool *updated);

/* Aggressive factor propagation (Shardy's AggressiveFactorPropagation): conflicts are resolved per
 * tensor instead of dropping the factor; factors are taken from the largest source tensor first.
 * `elementwise`: the op is element-wise (its operands follow its results' longer axes). */
void prop_aggressive_factor_propagation(sc_arena *a, prop_projection *p, const prop_direction *directions,
                                        bool conservative, bool elementwise, bool *updated);

#endif
