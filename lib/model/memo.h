/* memo.h — a growable hash table for memoizing work on repeated text within one request: a module
 * writes the same sharding thousands of times, so the model parses each distinct text once and the
 * rules verify each distinct (sharding, type) once. Keys are a tag (an id or pointer the caller
 * chooses) plus up to two byte strings, borrowed (they must outlive the table); values are pointers.
 * Open addressing in the request's arena, keyed hashing, doubling at half load: every operation is O(key length)
 * amortized, however many keys a hostile module brings. One thread at a time per arena. */
#ifndef SC_MEMO_H
#define SC_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "util/arena.h"

typedef struct { /* 48 bytes: spans split into pointers and lengths, no flag (a table holds ~10^4) */
  uint64_t tag;
  const char *a, *b; /* the key's texts and their lengths */
  void *value;
  uint32_t na, nb;
  uint32_t hash; /* the key's hash with bit 31 set (0: an empty slot); the low bits place it */
} md_memo_entry;

typedef struct md_memo {
  sc_arena *arena;
  md_memo_entry *slots;
  uint32_t mask, count;
  uint64_t seed;       /* the arena's hash key (util/hash.h): the key texts come from the input */
  md_memo_entry *last; /* the last key looked up: runs of the same key skip the hashing */
} md_memo;

void md_memo_init(md_memo *m, sc_arena *a);
/* The value slot of key (tag, a, b): *found tells whether it was there; when not, a slot holding NULL
 * is inserted for the caller to fill. The pointer is valid until the next insertion. */
void **md_memo_slot(md_memo *m, uint64_t tag, ir_span a, ir_span b, bool *found);

#endif
