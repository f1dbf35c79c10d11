/* bits.h — sets of ids as one bit per id, and rank tables over them: a count per 64 ids of the bits
 * set below them, so that the k-th kept record of a sparse per-op or per-slot table is found without a
 * pointer per id. Pure inline functions; any thread. */
#ifndef SC_BITS_H
#define SC_BITS_H

#include <stdbool.h>
#include <stdint.h>

/* The number of bits set in x: rank lookups read it per call, and without -mpopcnt the builtin is a call. */
static inline uint32_t sc_popcount64(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555u;
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
  return (uint32_t)((x * 0x0101010101010101u) >> 56);
}

static inline bool sc_bit_test(const uint64_t *bits, uint32_t i) { return bits[i / 64] >> (i % 64) & 1; }
static inline void sc_bit_set(uint64_t *bits, uint32_t i) { bits[i / 64] |= (uint64_t)1 << (i % 64); }
static inline void sc_bit_clear(uint64_t *bits, uint32_t i) { bits[i / 64] &= ~((uint64_t)1 << (i % 64)); }

/* Fills counts[w] (nwords of them) with the number of bits set in the words below w; returns how many
 * are set in all. */
static inline uint32_t sc_bit_counts(const uint64_t *bits, uint32_t nwords, uint32_t *counts) {
  uint32_t n = 0;
  for (uint32_t w = 0; w < nwords; w++) {
    counts[w] = n;
    n += sc_popcount64(bits[w]);
  }
  return n;
}

/* How many bits below i are set (counts from sc_bit_counts): bit i's place among the set ones. */
static inline uint32_t sc_bit_rank(const uint64_t *bits, const uint32_t *counts, uint32_t i) {
  return counts[i / 64] + sc_popcount64(bits[i / 64] & (((uint64_t)1 << (i % 64)) - 1));
}

#endif
