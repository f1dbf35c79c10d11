/* hashset.h — arena-backed hash tables for linear-time uniqueness checks and lookups on untrusted
 * input (axis names, mesh names, device ids). Open addressing, sized once for the number of keys the
 * caller will insert (at most `expected`; more is refused), so no rehashing. Keys are borrowed: a
 * name's bytes must outlive the map. One thread at a time per arena. */
#ifndef SC_HASHSET_H
#define SC_HASHSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

/* Byte string -> uint32 value. */
typedef struct {
  const char *key;
  uint32_t len, value;
  bool used;
} hs_name_slot;
typedef struct hs_name_map {
  hs_name_slot *slots;
  size_t mask, count, expected;
  uint64_t seed; /* the arena's hash key */
} hs_name_map;

/* Room for `expected` names (allocated in `a`, keyed with its hash seed). */
void hs_name_map_init(hs_name_map *m, sc_arena *a, size_t expected);
/* Maps key -> value unless the key is present or the map is full; returns true if it was inserted.
 * When the key was present, *existing (if non-NULL) is its value. */
bool hs_name_map_put(hs_name_map *m, const char *key, uint32_t len, uint32_t value, uint32_t *existing);
/* Makes room for one more name: a full map is built again at twice the size in `a` (the old table stays
 * there), so a map that starts small grows in amortized linear time. */
void hs_name_map_make_room(hs_name_map *m, sc_arena *a);
/* The value of `key`, or false if absent. */
bool hs_name_map_get(const hs_name_map *m, const char *key, uint32_t len, uint32_t *value);

/* Set of int64 values. */
typedef struct {
  int64_t *keys;
  bool *used;
  size_t mask, count, expected;
  uint64_t seed;
} hs_i64_set;

void hs_i64_set_init(hs_i64_set *s, sc_arena *a, size_t expected);
/* Adds v; returns false if it was already present (or the set is full). */
bool hs_i64_set_add(hs_i64_set *s, int64_t v);

#endif
