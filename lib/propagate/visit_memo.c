/* visit_memo.c — the sharding set and the visit memo (visit_memo.h). */
#include "util/bytes.h"
#include "propagate/visit_memo.h"

#include <string.h>

#include "util/hash.h"

static uint64_t mix(uint64_t h, uint64_t v) { return hash_fold(h ^ v, SC_HASH_K2) ^ v; }

static uint64_t axes_hash(uint64_t h, prop_axes xs) {
  h = mix(h, xs.n);
  for (uint32_t i = 0; i < xs.n; i++) h = mix(mix(mix(h, xs.v[i].axis), (uint64_t)xs.v[i].pre), (uint64_t)xs.v[i].size);
  return h;
}

static uint64_t sharding_hash(const prop_sharding *s, uint64_t seed) {
  uint64_t h = hash_u64((uint64_t)(uintptr_t)s->mesh ^ (uint64_t)s->rank << 48, seed);
  for (uint32_t d = 0; d < s->rank; d++)
    h = axes_hash(mix(h, (uint64_t)s->dims[d].priority << 1 | s->dims[d].closed), s->dims[d].axes);
  h = axes_hash(axes_hash(h, s->replicated), s->unreduced);
  return mix(h, s->unreduced_op) | 1; /* never 0 */
}

void prop_sharding_set_init(prop_sharding_set *t, sc_arena *a) {
  memset(t, 0, sizeof *t);
  t->a = a;
  t->seed = ar_hash_seed(a);
}

static uint32_t find_pos(const prop_sharding_set *t, const prop_sharding *s, uint64_t h) {
  uint32_t i = (uint32_t)h & (t->cap - 1);
  while (t->slots[i] && !(t->hashes[i] == h && prop_sharding_eq(t->slots[i], s))) i = (i + 1) & (t->cap - 1);
  return i;
}

const prop_sharding *prop_sharding_set_find(const prop_sharding_set *t, const prop_sharding *s) {
  if (!s || !t->cap) return NULL;
  return t->slots[find_pos(t, s, sharding_hash(s, t->seed))];
}

static void set_grow(prop_sharding_set *t) {
  uint32_t cap = t->cap ? t->cap * 2 : 64;
  const prop_sharding **slots = ar_calloc(t->a, cap, sizeof *slots);
  uint64_t *hashes = ar_alloc(t->a, cap * sizeof *hashes);
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!t->slots[i]) continue;
    uint32_t j = (uint32_t)t->hashes[i] & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = t->slots[i];
    hashes[j] = t->hashes[i];
  }
  t->slots = slots, t->hashes = hashes, t->cap = cap;
}

const prop_sharding *prop_sharding_set_add(prop_sharding_set *t, const prop_sharding *s) {
  if (!s) return NULL;
  if (2 * (t->n + 1) > t->cap) set_grow(t);
  uint64_t h = sharding_hash(s, t->seed);
  uint32_t i = find_pos(t, s, h);
  if (t->slots[i]) return t->slots[i];
  t->slots[i] = s;
  t->hashes[i] = h;
  t->n++;
  return s;
}

struct prop_memo_entry {
  uint64_t hash;
  const void *rule;
  uint32_t key, n;
  const prop_sharding *in[PROP_MEMO_MAX_TENSORS], *out[PROP_MEMO_MAX_TENSORS];
};

void prop_visit_memo_init(prop_visit_memo *m, sc_arena *a, uint32_t max_entries) {
  memset(m, 0, sizeof *m);
  m->a = a;
  m->seed = ar_hash_seed(a);
  m->max = max_entries;
}

static uint64_t visit_hash(const prop_visit_memo *m, const void *rule, uint32_t key, const prop_sharding *const *in,
                           uint32_t n) {
  uint64_t h = mix(hash_u64((uint64_t)(uintptr_t)rule, m->seed), (uint64_t)key << 8 | n);
  for (uint32_t i = 0; i < n; i++) h = mix(h, (uint64_t)(uintptr_t)in[i]);
  return h;
}

static bool entry_is(const prop_memo_entry *e, uint64_t h, const void *rule, uint32_t key,
                     const prop_sharding *const *in, uint32_t n) {
  return e->hash == h && e->rule == rule && e->key == key && e->n == n && sc_bytes_eq(e->in, in, n * sizeof *in);
}

const prop_sharding *const *prop_visit_memo_get(const prop_visit_memo *m, const void *rule, uint32_t key,
                                                const prop_sharding *const *in, uint32_t n) {
  if (!m->cap || n > PROP_MEMO_MAX_TENSORS) return NULL;
  uint64_t h = visit_hash(m, rule, key, in, n);
  for (uint32_t i = (uint32_t)h & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1))
    if (entry_is(m->slots[i], h, rule, key, in, n)) return m->slots[i]->out;
  return NULL;
}

static void memo_grow(prop_visit_memo *m) {
  uint32_t cap = m->cap ? m->cap * 2 : 64;
  prop_memo_entry **slots = ar_calloc(m->a, cap, sizeof *slots);
  for (uint32_t i = 0; i < m->cap; i++) {
    if (!m->slots[i]) continue;
    uint32_t j = (uint32_t)m->slots[i]->hash & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = m->slots[i];
  }
  m->slots = slots, m->cap = cap;
}

void prop_visit_memo_put(prop_visit_memo *m, const void *rule, uint32_t key, const prop_sharding *const *in,
                         const prop_sharding *const *out, uint32_t n) {
  if (n > PROP_MEMO_MAX_TENSORS || m->n >= m->max) return;
  if (2 * (m->n + 1) > m->cap) memo_grow(m);
  uint64_t h = visit_hash(m, rule, key, in, n);
  uint32_t i = (uint32_t)h & (m->cap - 1);
  for (; m->slots[i]; i = (i + 1) & (m->cap - 1))
    if (entry_is(m->slots[i], h, rule, key, in, n)) return;
  prop_memo_entry *e = ar_calloc(m->a, 1, sizeof *e);
  e->hash = h, e->rule = rule, e->key = key, e->n = n;
  memcpy(e->in, in, n * sizeof *in);
  memcpy(e->out, out, n * sizeof *out);
  m->slots[i] = e;
  m->n++;
}
