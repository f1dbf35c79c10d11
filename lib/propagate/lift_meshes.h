/* lift_meshes.h — the pipeline import's lifting of inline meshes into mesh symbols.
 *
 * A sharding may name its mesh inline (`#sdy.sharding<mesh<["a"=2]>, [{"a"}]>`). Shardy's
 * -sdy-lift-inlined-meshes gives each distinct inline mesh a symbol: the `sdy.mesh` already declaring an
 * identical mesh, else a new `sdy.mesh` after the last one (or first in the module) named `mesh`
 * (`maximal_mesh_K` for a maximal mesh on device K, `empty_mesh` for an empty one), made unique with
 * `_0`, `_1`, ... against the module's symbols. Every sharding then names its mesh `@symbol`.
 * Linear in the chunk's bytes; everything in the caller's arena; one thread per call. */
#ifndef SC_PROPAGATE_LIFT_MESHES_H
#define SC_PROPAGATE_LIFT_MESHES_H

#include "ir/ir.h"
#include "util/arena.h"

/* Writes into `out` the text of `m` (its buffer's [begin, end)) with its inline meshes lifted, and
 * returns the number of `sdy.mesh` lines it added before `m`'s first top-level op; returns -1 (nothing
 * written) when the chunk names no mesh inline. */
int prop_lift_inlined_meshes(sc_arena *a, const ir_module *m, uint32_t begin, uint32_t end, ar_str *out);

#endif
