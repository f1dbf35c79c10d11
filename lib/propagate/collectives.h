/* collectives.h — explicit reshards turned into collectives (Shardy's -sdy-reshard-to-collectives).
 *
 * Every `sdy.reshard` whose input and output shardings live on meshes that are the same up to device
 * order becomes the sequence of collectives that turns the input sharding into the output one, tried
 * in Shardy's order (all-slice, collective-permute, all-to-alls, all-gather; twice at most): each
 * collective is printed as `sdy.all_gather`, `sdy.all_slice`, `sdy.collective_permute` or
 * `sdy.all_to_all` with the sharding it leaves (`out_sharding=<...>`, closed), and the reshard's uses
 * read the last one. A reshard from or to a single-device mesh, or across different meshes, stays; a
 * reshard to a fully replicated sharding of a replicated value disappears. Input shardings are read
 * through propagation barriers and data-flow edges (a while's block arguments have its results').
 *
 * Everything lives in the caller's arena; one thread at a time per arena. Cost: linear in the module
 * plus, per reshard, quadratic in its number of axes (a reshard with more than PROP_COLLECTIVE_MAX_AXES
 * axes is left as written). */
#ifndef SC_PROPAGATE_COLLECTIVES_H
#define SC_PROPAGATE_COLLECTIVES_H

#include "model/model.h"
#include "propagate/print.h"
#include "propagate/sharding.h"

#define PROP_COLLECTIVE_MAX_AXES 256

/* A reshard's collectives, each as text without its result name and operand: collective k is
 * `before[k] OPERAND after[k]`, e.g. `sdy.all_gather [{"x"}, {}] ` + `%arg0` + ` out_sharding=<@mesh,
 * [{}, {}]> : tensor<8x8xf32>`, its operand the input for the first and the previous one's result after. */
typedef struct {
  const char **before, **after;
  uint32_t n;
} prop_collectives;

/* The collectives that turn `in` into `out` (same rank, meshes equal up to device order; `shape` the
 * tensor's dimensions, `type` its type text). False when Shardy's pass would leave the reshard. */
bool prop_collectives_for(sc_arena *a, const prop_sharding *in, const prop_sharding *out, const int64_t *shape,
                          ir_span type, prop_collectives *result);

/* Rewrites every sdy.reshard of `m` (model built by the caller) into collectives in `pr`; with
 * `keep_redundant`, a reshard whose input already has its sharding stays as it is. */
void prop_reshards_to_collectives(sc_arena *a, const ir_module *m, const md_model *model, prop_printer *pr,
                                  bool keep_redundant);

#endif
