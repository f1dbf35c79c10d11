/* visit_memo.h — one copy of each distinct sharding, and what a visit of an op made of its tensors.
 *
 * A module repeats a few shardings over thousands of values and a few element-wise ops over thousands
 * of positions: propagation keeps each distinct sharding once (a value's slot points at the shared
 * copy, so equal shardings are equal pointers), and remembers, per rule and schedule, which shardings a
 * visit turned which inputs into. Visiting the next op with the same rule, schedule and input pointers
 * is then a lookup. Both tables grow in the caller's arena: call the mutating functions only where
 * nothing allocated after them will be rewound. Hashes use the arena's seed. One thread per table. */
#ifndef SC_PROPAGATE_VISIT_MEMO_H
#define SC_PROPAGATE_VISIT_MEMO_H

#include "propagate/sharding.h"

typedef struct {
  sc_arena *a;
  uint64_t seed;
  const prop_sharding **slots; /* open addressing, NULL = empty */
  uint64_t *hashes;
  uint32_t cap, n;
} prop_sharding_set;

void prop_sharding_set_init(prop_sharding_set *t, sc_arena *a);
/* The kept sharding equal to `s` (prop_sharding_eq), or NULL. */
const prop_sharding *prop_sharding_set_find(const prop_sharding_set *t, const prop_sharding *s);
/* The kept sharding equal to `s`; `s` itself (which must outlive the table) when there is none yet.
 * NULL stays NULL. */
const prop_sharding *prop_sharding_set_add(prop_sharding_set *t, const prop_sharding *s);

/* A visit's inputs (the op's tensors' shardings) and outputs, keyed by the rule and a schedule key. */
#define PROP_MEMO_MAX_TENSORS 8
typedef struct prop_memo_entry prop_memo_entry;
typedef struct {
  sc_arena *a;
  uint64_t seed;
  prop_memo_entry **slots;
  uint32_t cap, n, max; /* at most `max` entries are kept (then lookups only) */
} prop_visit_memo;

void prop_visit_memo_init(prop_visit_memo *m, sc_arena *a, uint32_t max_entries);
/* The outputs remembered for (rule, key, in[0..n)), or NULL. */
const prop_sharding *const *prop_visit_memo_get(const prop_visit_memo *m, const void *rule, uint32_t key,
                                                const prop_sharding *const *in, uint32_t n);
/* Remembers out[0..n) for (rule, key, in[0..n)); ignored past the entry limit or PROP_MEMO_MAX_TENSORS. */
void prop_visit_memo_put(prop_visit_memo *m, const void *rule, uint32_t key, const prop_sharding *const *in,
                         const prop_sharding *const *out, uint32_t n);

#endif
