/* dead_code.h — the trivially dead ops MLIR's canonicalizer erases after the pipeline's export.
 *
 * An op is trivially dead when none of its results is used and it has no memory effects: StableHLO's
 * pure ops (NoMemoryEffect / Pure in StablehloOps.td), sdy.reshard, sdy.constant and
 * sdy.propagation_barrier, and ops with recursive effects (while, case, reduce, sort, manual and named
 * computations, ...) whose nested ops are all pure. Erasing one can leave its operands' definitions
 * dead in turn. sdy.sharding_constraint, collectives, custom calls and calls have effects and stay.
 * Linear in the module's ops and operands; everything in the caller's arena; one thread per call. */
#ifndef SC_PROPAGATE_DEAD_CODE_H
#define SC_PROPAGATE_DEAD_CODE_H

#include "propagate/print.h"

/* Erases from `pr` (a printer of `m`) every op of `m` that is trivially dead, directly or once the
 * dead ops that used it are gone, except ops `erased` already (per op id; NULL = none). Returns how
 * many ops were erased. */
uint32_t prop_erase_dead_ops(sc_arena *a, const ir_module *m, prop_printer *pr, const uint8_t *erased);

#endif
