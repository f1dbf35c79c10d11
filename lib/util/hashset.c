/* hashset.c — open-addressing tables with linear probing (see hashset.h). */
#include "util/bytes.h"
#include "util/hashset.h"
#include "util/hash.h"

#include <string.h>

/* A power of two at least twice `expected`, so probes stay short. */
static size_t table_size(size_t expected) {
  size_t n = 8;
  while (n < 2 * expected && n < ((size_t)1 << (sizeof(size_t) * 8 - 2))) n <<= 1;
  return n;
}


void hs_name_map_init(hs_name_map *m, sc_arena *a, size_t expected) {
  size_t n = table_size(expected);
  m->slots = ar_calloc(a, n, sizeof *m->slots);
  m->mask = m->slots ? n - 1 : 0;
  m->count = 0;
  m->expected = m->slots ? expected : 0;
  m->seed = ar_hash_seed(a);
}

void hs_name_map_make_room(hs_name_map *m, sc_arena *a) {
  if (m->count < m->expected) return;
  hs_name_map bigger;
  hs_name_map_init(&bigger, a, m->expected ? 2 * m->expected : 8);
  for (size_t i = 0; m->slots && i <= m->mask; i++)
    if (m->slots[i].used) hs_name_map_put(&bigger, m->slots[i].key, m->slots[i].len, m->slots[i].value, NULL);
  *m = bigger;
}

static hs_name_slot *find_slot(const hs_name_map *m, const char *key, uint32_t len) {
  if (!m->slots) return NULL;
  for (size_t i = hash_bytes(key, len, m->seed) & m->mask;; i = (i + 1) & m->mask) {
    hs_name_slot *s = &m->slots[i];
    if (!s->used || (s->len == len && (len == 0 || sc_bytes_eq(s->key, key, len)))) return s;
  }
}

bool hs_name_map_put(hs_name_map *m, const char *key, uint32_t len, uint32_t value, uint32_t *existing) {
  hs_name_slot *s = find_slot(m, key, len);
  if (!s) return false;
  if (s->used) {
    if (existing) *existing = s->value;
    return false;
  }
  if (m->count >= m->expected) return false;
  *s = (hs_name_slot){key, len, value, true};
  m->count++;
  return true;
}

bool hs_name_map_get(const hs_name_map *m, const char *key, uint32_t len, uint32_t *value) {
  hs_name_slot *s = find_slot(m, key, len);
  if (!s || !s->used) return false;
  *value = s->value;
  return true;
}

void hs_i64_set_init(hs_i64_set *s, sc_arena *a, size_t expected) {
  size_t n = table_size(expected);
  s->keys = ar_calloc(a, n, sizeof *s->keys);
  s->used = ar_calloc(a, n, sizeof *s->used);
  s->mask = s->keys && s->used ? n - 1 : 0;
  s->count = 0;
  s->expected = s->keys && s->used ? expected : 0;
  s->seed = ar_hash_seed(a);
}

bool hs_i64_set_add(hs_i64_set *s, int64_t v) {
  if (!s->keys || !s->used) return false;
  for (size_t i = hash_u64((uint64_t)v, s->seed) & s->mask;; i = (i + 1) & s->mask) {
    if (!s->used[i]) {
      if (s->count >= s->expected) return false;
      s->used[i] = true;
      s->keys[i] = v;
      s->count++;
      return true;
    }
    if (s->keys[i] == v) return false;
  }
}
