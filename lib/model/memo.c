/* memo.c — the growable memo table (memo.h). */
#include <string.h>

#include "model/memo.h"
#include "util/hash.h"

void md_memo_init(md_memo *m, sc_arena *a) {
  memset(m, 0, sizeof *m);
  m->arena = a;
  m->seed = ar_hash_seed(a);
}

static bool span_same(const char *p, uint32_t n, ir_span y) {
  if (n != y.n) return false;
  if (n == 8) { /* identity keys (a pointer's bytes): one word */
    uint64_t u, v;
    memcpy(&u, p, 8);
    memcpy(&v, y.p, 8);
    return u == v;
  }
  return n == 0 || p == y.p || sc_bytes_eq(p, y.p, n);
}

static bool key_same(const md_memo_entry *s, uint64_t tag, ir_span a, ir_span b) {
  return s->tag == tag && span_same(s->a, s->na, a) && span_same(s->b, s->nb, b);
}

static md_memo_entry *probe(md_memo_entry *slots, uint32_t mask, uint32_t hash, uint64_t tag, ir_span a, ir_span b) {
  for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
    md_memo_entry *s = &slots[i];
    if (!s->hash) return s;
    if (s->hash == hash && key_same(s, tag, a, b)) return s;
  }
}

/* Doubles the table (re-inserting with the stored hashes), keeping the load at most one half. */
static void grow(md_memo *m) {
  uint32_t cap = m->slots ? (m->mask + 1) * 2 : 64;
  md_memo_entry *slots = ar_calloc(m->arena, cap, sizeof *slots);
  for (uint32_t i = 0; m->slots && i <= m->mask; i++)
    if (m->slots[i].hash) {
      uint32_t k = m->slots[i].hash & (cap - 1);
      while (slots[k].hash) k = (k + 1) & (cap - 1); /* keys are distinct: the first free slot */
      slots[k] = m->slots[i];
    }
  m->slots = slots;
  m->last = NULL; /* it pointed into the old table */
  m->mask = cap - 1;
}

void **md_memo_slot(md_memo *m, uint64_t tag, ir_span a, ir_span b, bool *found) {
  md_memo_entry *last = m->last;
  if (last && key_same(last, tag, a, b)) {
    *found = true;
    return &last->value;
  }
  if (!m->slots || (m->count + 1) * 2 > m->mask + 1) grow(m);
  uint32_t hash = (uint32_t)hash_bytes(b.p, b.n, hash_bytes(a.p, a.n, m->seed ^ tag)) | 1u << 31;
  md_memo_entry *s = probe(m->slots, m->mask, hash, tag, a, b);
  *found = s->hash != 0;
  if (!s->hash) {
    *s = (md_memo_entry){tag, a.p, b.p, NULL, a.n, b.n, hash};
    m->count++;
  }
  m->last = s;
  return &s->value;
}
