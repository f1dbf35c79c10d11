/* group_constraints.h — the open sharding constraints Shardy gives a conflicting sharding group.
 *
 * When the members of a sharding group were written with different shardings, Shardy's propagation warns
 * and, before propagating, puts a fully open `sdy.sharding_constraint` (on the first such sharding's mesh)
 * right after each member's definition: every other use of the member reads the constraint, and the
 * group holds the constraints. The members keep their own shardings; the group shares what propagation
 * gives the constraints. Linear in the chunk's bytes and the module's operands; everything in the
 * caller's arena; one thread per call. */
#ifndef SC_PROPAGATE_GROUP_CONSTRAINTS_H
#define SC_PROPAGATE_GROUP_CONSTRAINTS_H

#include "propagate/engine.h"

/* Writes into `out` the text of `m` (its buffer's [begin, end)) with an open constraint after every member
 * of the groups in `conflicts`, and returns how many lines it added; returns -1 (nothing written) when
 * there is none to add (no conflict, or a member whose type or place is unknown). */
int prop_open_group_constraints(sc_arena *a, const ir_module *m, prop_group_conflicts conflicts, uint32_t begin,
                                uint32_t end, ar_str *out);

#endif
