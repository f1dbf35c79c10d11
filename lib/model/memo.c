/* memo.c — the growable memo table (memo.h). */
#include <string.h>

#include "model/memo.h"
#include "util/hash.h"

void md_memo_init(md_memo *m, sc_arena *a) {
  memset(m, 0, sizeof *m);
  m->arena = a;
  m->seed = ar_hash_seed(a);
}

static bool span_same(ir_span x, ir_span y) {
  if (x.n != y.n) return false;
  if (x.n == 8) { /* identity keys (a pointer's bytes): one word */
    uint64_t u, v;
    memcpy(&u, x.p, 8);
    memcpy(&v, y.p, 8);
    return u == v;
  }
  return x.n == 0 || x.p == y.p || sc_bytes_eq(x.p, y.p, x.n);
}

static md_memo_entry *probe(md_memo_entry *slots, uint32_t mask, uint64_t hash, uint64_t tag, ir_span a, ir_span b) {
  for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
    md_memo_entry *s = &slots[i];
    if (!s->used) return s;
    if (s->hash == hash && s->tag == tag && span_same(s->a, a) && span_same(s->b, b)) return s;
  }
}

/* Doubles the table (re-inserting with the stored hashes), keeping the load at most one half. */
static void grow(md_memo *m) {
  uint32_t cap = m->slots ? (m->mask + 1) * 2 : 64;
  md_memo_entry *slots = ar_calloc(m->arena, cap, sizeof *slots);
  for (uint32_t i = 0; m->slots && i <= m->mask; i++)
    if (m->slots[i].used) {
      uint32_t k = (uint32_t)m->slots[i].hash & (cap - 1);
      while (slots[k].used) k = (k + 1) & (cap - 1); /* keys are distinct: the first free slot */
      slots[k] = m->slots[i];
    }
  m->slots = slots;
  m->last = NULL; /* it pointed into the old table */
  m->mask = cap - 1;
}

void **md_memo_slot(md_memo *m, uint64_t tag, ir_span a, ir_span b, bool *found) {
  md_memo_entry *last = m->last;
  if (last && last->tag == tag && span_same(last->a, a) && span_same(last->b, b)) {
    *found = true;
    return &last->value;
  }
  if (!m->slots || (m->count + 1) * 2 > m->mask + 1) grow(m);
  uint64_t hash = hash_bytes(b.p, b.n, hash_bytes(a.p, a.n, m->seed ^ tag));
  md_memo_entry *s = probe(m->slots, m->mask, hash, tag, a, b);
  *found = s->used;
  if (!s->used) {
    s->used = true;
    s->hash = hash;
    s->tag = tag;
    s->a = a;
    s->b = b;
    s->value = NULL;
    m->count++;
  }
  m->last = s;
  return &s->value;
}
