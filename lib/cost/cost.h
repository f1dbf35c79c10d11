/* cost.h — what a module costs per device: the entry function's arguments and results under the
 * shardings in effect (propagated when propagation ran, else written), donations, a lower bound on peak
 * live bytes, and the device's memory (docs/cost.md).
 *
 * A tensor's per-device shard is ceil(dim / product of the sizes of the axes sharding that dim) per
 * dimension — XLA pads uneven shards to equal size — times the element size (pred and i1 one byte;
 * 1-, 2- and 4-bit types packed as XLA packs them; others whole bytes). Shardy shardings and GSPMD ones
 * (mapped onto named axes, or read from their tile assignment) give the same numbers.
 *
 * Everything lives in the caller's arena; one thread at a time per arena. Cost: linear in the entry
 * function's ops and the rank of its arguments and results. */
#ifndef SC_COST_COST_H
#define SC_COST_COST_H

#include "model/model.h"
#include "propagate/engine.h"
#include "propagate/reshard.h"

/* One argument or result of the entry function (a tuple's leaves are each one). */
typedef struct {
  const ir_value *value;        /* the argument, or the value returned as this result */
  uint32_t index;               /* argument / result number */
  int32_t leaf;                 /* tuple leaf number, -1 for a plain tensor */
  bool is_result;
  bool known;                   /* shape and element size understood (bytes below are 0 otherwise) */
  ir_span type;                 /* the leaf's type text */
  uint32_t rank;
  uint32_t bits;                 /* of one element */
  const int64_t *dims;          /* global dims */
  int64_t *local_dims;          /* one device's shard (padded) */
  int64_t *shards_per_dim;      /* devices a dim is split over */
  int64_t shards;               /* product of shards_per_dim */
  int64_t global_bytes, bytes_per_device;
  int64_t padding_bytes;        /* bytes_per_device * shards - global_bytes: the padding of one copy of the tensor */
  const md_sharding *written;   /* the sharding in effect when it was written (or mapped GSPMD), else NULL */
  const prop_sharding *derived; /* ... when propagation derived it, else NULL */
  const char *spec;             /* that sharding as JAX writes it (P(...)), or NULL */
  int64_t unknown_split;         /* no sharding in effect: counted as split evenly over this many devices (the
                                   least the partitioner can leave on one; 1 on a one-device module) */
  bool donated;                 /* tf.aliasing_output / jax.buffer_donor / HLO input_output_alias, buffer_donor */
  int64_t alias_output;         /* the result it is aliased with (tf.aliasing_output, input_output_alias), or -1 */
  uint32_t offset;              /* where it is written (the argument, or the returned value's use) */
} cost_tensor_info;

typedef struct cost_analysis {
  const ir_op *entry;           /* NULL: nothing was computed */
  const md_mesh *mesh;          /* the mesh the shardings live on (the model's effective one), or NULL */
  int64_t devices;
  cost_tensor_info *args, *results;
  uint32_t nargs, nresults;
  sc_cost_report report;        /* the public summary (docs/report-schema.md) */
  const prop_reshard **collective_reshards; /* the reshard report.collectives[i] comes from (same length) */
} cost_analysis;

/* Computes the cost of `m`'s entry function. `prop` (NULL: not run) gives derived shardings; `options`
 * gives the device memory (device_memory_bytes, else mesh->device_kind). Never fails on bad input: an
 * unknown type contributes no bytes. report.collectives stays NULL (see cost_collectives). */
cost_analysis *cost_compute(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *prop,
                         const sc_options *options);

/* Fills c->report.collectives (the whole module's) and c->collective_reshards from the explicit-reshard
 * pass over `prop`'s shardings (nothing without propagation); `lines` (NULL without lines) places them. Work as the reshard pass's,
 * counted on the arena (the caller bounds it). */
void cost_collectives(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *prop,
                         const ir_linemap *lines, cost_analysis *c);

/* Fills `t`'s spec and bytes from its type, written and derived sharding (the derived one wins). */
void cost_size(sc_arena *a, const md_model *model, cost_tensor_info *t);

/* Bits of one element of `element` (MLIR "f32", "bf16", "i1", "complex<f32>", "f8E4M3FN"; HLO "pred", "s4",
 * "c64"), or 0 when unknown. pred/i1 count 8 (XLA stores a byte). */
uint32_t cost_element_bits(ir_span element);

/* Bytes of `elements` elements of `bits` each: 1-, 2- and 4-bit types packed (rounded up to a byte),
 * others whole bytes. Saturates at INT64_MAX. */
int64_t cost_bytes(int64_t elements, uint32_t bits);

/* a * b and a + b saturated at INT64_MIN / INT64_MAX: byte counts of hostile shapes never overflow. */
int64_t cost_mul_sat(int64_t a, int64_t b);
int64_t cost_add_sat(int64_t a, int64_t b);

/* "1.5 GiB", "512 B": a byte count for messages (arena). */
const char *cost_bytes_str(sc_arena *a, int64_t bytes);

#endif
