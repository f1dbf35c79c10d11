/* The arena hash tables behind the linear uniqueness checks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "util/hashset.h"

Test(hashset, names_keep_their_first_value) {
  sc_arena *a = sc_arena_new(0);
  hs_name_map m;
  hs_name_map_init(&m, a, 3);
  uint32_t v = 0;
  cr_assert(hs_name_map_put(&m, "x", 1, 7, NULL));
  cr_assert(hs_name_map_put(&m, "", 0, 8, NULL), "the empty name is a key too");
  cr_assert_not(hs_name_map_put(&m, "x", 1, 9, &v));
  cr_assert_eq(v, 7);
  cr_assert(hs_name_map_get(&m, "", 0, &v));
  cr_assert_eq(v, 8);
  cr_assert_not(hs_name_map_get(&m, "xy", 2, &v));
  cr_assert(hs_name_map_put(&m, "xy", 2, 10, NULL));
  cr_assert_not(hs_name_map_put(&m, "z", 1, 11, NULL), "full: more than `expected` keys are refused");
  sc_arena_free(a);
}

Test(hashset, many_names_and_ids) {
  sc_arena *a = sc_arena_new(0);
  enum { N = 100000 };
  char (*names)[12] = ar_calloc(a, N, sizeof *names);
  hs_name_map m;
  hs_name_map_init(&m, a, N);
  hs_i64_set s;
  hs_i64_set_init(&s, a, N);
  for (uint32_t i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "a%u", i);
    cr_assert(hs_name_map_put(&m, names[i], (uint32_t)strlen(names[i]), i, NULL));
    cr_assert(hs_i64_set_add(&s, (int64_t)i * 4096 - 7));
  }
  for (uint32_t i = 0; i < N; i += 997) {
    uint32_t v;
    cr_assert(hs_name_map_get(&m, names[i], (uint32_t)strlen(names[i]), &v));
    cr_assert_eq(v, i);
    cr_assert_not(hs_i64_set_add(&s, (int64_t)i * 4096 - 7));
  }
  sc_arena_free(a);
}

/* ---- the keyed hash (util/hash.h) ---- */

#include "util/hash.h"

#define SEED_A UINT64_C(0x0123456789abcdef)
#define SEED_B UINT64_C(0xfedcba9876543210)

/* Value names as a module writes them: "%v0", "%v1", ... */
static uint32_t value_name(char *out, uint32_t i) { return (uint32_t)snprintf(out, 16, "%%v%u", i); }

Test(hash, distinct_names_of_every_length_do_not_collide) {
  /* All strings of length 0..3 over 40 bytes, plus longer ones around the 8- and 16-byte read
   * boundaries: the small-input reads are injective per length and the length is mixed in. */
  sc_arena *a = sc_arena_new(0);
  enum { N = 1 + 40 + 1600 + 64000 + 6 * 4000 };
  uint64_t *h = ar_calloc(a, N, sizeof *h);
  size_t n = 0;
  unsigned char buf[40];
  h[n++] = hash_bytes("", 0, SEED_A);
  for (uint32_t len = 1; len <= 3; len++) {
    uint32_t total = len == 1 ? 40 : len == 2 ? 1600 : 64000;
    for (uint32_t v = 0; v < total; v++) {
      for (uint32_t k = 0, x = v; k < len; k++, x /= 40) buf[k] = (unsigned char)('0' + x % 40);
      h[n++] = hash_bytes(buf, len, SEED_A);
    }
  }
  static const uint32_t long_lengths[] = {7, 8, 9, 16, 17, 33};
  for (int l = 0; l < 6; l++) { /* four digits at the end, then at the start, the rest 'x' */
    uint32_t len = long_lengths[l];
    for (uint32_t v = 0; v < 4000; v++) {
      char digits[8];
      snprintf(digits, sizeof digits, "%04u", v % 2000);
      memset(buf, 'x', len);
      memcpy(buf + (v < 2000 ? len - 4 : 0), digits, 4);
      h[n++] = hash_bytes(buf, len, SEED_A);
    }
  }
  hs_i64_set seen;
  hs_i64_set_init(&seen, a, n);
  size_t dups = 0;
  for (size_t i = 0; i < n; i++) dups += !hs_i64_set_add(&seen, (int64_t)h[i]);
  cr_assert_eq(dups, 0, "%zu 64-bit collisions among %zu distinct inputs", dups, n);
  sc_arena_free(a);
}

Test(hash, the_seed_decides_which_names_collide) {
  /* Names chosen because they share their low 12 bits under one seed (what an attacker who knew the
   * seed, or who targeted an unkeyed hash, would send) spread out under another seed. */
  enum { WANT = 64, BITS = 12 };
  const uint64_t mask = (1u << BITS) - 1;
  char name[16];
  uint32_t crafted[WANT], found = 0;
  for (uint32_t i = 0; found < WANT && i < (WANT << (BITS + 3)); i++) {
    uint32_t n = value_name(name, i);
    if ((hash_bytes(name, n, SEED_A) & mask) == 0) crafted[found++] = i;
  }
  cr_assert_eq(found, WANT, "only %u names share 12 low bits under seed A", found);
  uint32_t buckets[1 << BITS] = {0}, worst = 0;
  for (uint32_t k = 0; k < WANT; k++) {
    uint32_t n = value_name(name, crafted[k]);
    uint32_t b = (uint32_t)(hash_bytes(name, n, SEED_B) & mask);
    if (++buckets[b] > worst) worst = buckets[b];
  }
  cr_assert_leq(worst, 3, "under seed B, %u of the crafted names still share a bucket", worst);
}

Test(hash, tables_take_the_arena_seed) {
  sc_arena *a = sc_arena_new(0), *b = sc_arena_new(0);
  cr_assert_neq(ar_hash_seed(a), 0);
  ar_set_hash_seed(a, SEED_A);
  ar_set_hash_seed(b, SEED_A);
  ar_set_hash_seed(b, 0); /* 0 keeps the seed */
  cr_assert_eq(ar_hash_seed(a), SEED_A);
  cr_assert_eq(ar_hash_seed(b), SEED_A);
  hs_name_map m;
  hs_name_map_init(&m, a, 4);
  cr_assert_eq(m.seed, SEED_A);
  sc_arena_free(a);
  sc_arena_free(b);
}

Test(hashset, a_small_map_makes_room_as_it_fills) {
  sc_arena *a = sc_arena_new(0);
  hs_name_map m;
  hs_name_map_init(&m, a, 2);
  static char keys[1000][8];
  for (uint32_t i = 0; i < 1000; i++) {
    snprintf(keys[i], sizeof keys[i], "k%u", i);
    hs_name_map_make_room(&m, a);
    cr_assert(hs_name_map_put(&m, keys[i], (uint32_t)strlen(keys[i]), i, NULL), "key %u fits", i);
  }
  for (uint32_t i = 0, v; i < 1000; i++) {
    cr_assert(hs_name_map_get(&m, keys[i], (uint32_t)strlen(keys[i]), &v));
    cr_assert_eq(v, i);
  }
  cr_assert_lt(m.mask + 1, 4096u, "doubling keeps the table within a few times its names");
  sc_arena_free(a);
}
