/* constants.h — the pipeline's copies of constants per use, and their merging after propagation.
 *
 * Shardy's import (-sdy-constant-or-scalar-splitter) gives every use of a constant, an iota or a
 * broadcast of a scalar its own copy, so uses never share a sharding through them; its export
 * (-sdy-constant-or-scalar-merger) merges the copies left identical (same value, type and sharding)
 * within a region again. Scalars themselves are never copied. Here the copies are made in the text before
 * propagation (the first use keeps the op as written; each later use reads a copy printed right after
 * it), and merged in the printed module. Constant expressions built from constants by other ops (a
 * reshape of a constant, say) are copied by the engine instead (prop_engine_options.split_constants).
 * Linear in the text and the operands; everything in the caller's arena; one thread per call. */
#ifndef SC_PROPAGATE_CONSTANTS_H
#define SC_PROPAGATE_CONSTANTS_H

#include "propagate/print.h"

/* Writes into `out` the text of `m` (its buffer's [begin, end)) with a copy of each constant, iota or
 * scalar broadcast for every use after its first; returns the number of copies, or -1 (nothing written)
 * when no value needs one or the renaming would read more than 4 x the chunk + 1 MiB of op text. */
int prop_split_constants(sc_arena *a, const ir_module *m, uint32_t begin, uint32_t end, ar_str *out);

/* On the printed module `m`: every `sdy.constant` (or scalar broadcast) identical to an earlier one of the
 * same region, its location aside, is erased from `pr` and its uses read the earlier one; `erased` (per op
 * id) gets them too. Returns how many were merged. */
uint32_t prop_merge_constants(sc_arena *a, const ir_module *m, prop_printer *pr, uint8_t *erased);

#endif
