/* hash.h — the keyed hash behind every table that names from the input reach.
 *
 * Value, function, axis and alias names are chosen by whoever wrote the module. With a fixed hash,
 * names crafted to share their low bits turn an open-addressing table into a list and a parse into
 * quadratic work. So every table hashes with its request's seed (ar_hash_seed(): the caller's
 * random sc_options.hash_seed, else bits of addresses that ASLR moves). Each step multiplies two
 * 64-bit words, each combined with secret key material, into 128 bits and folds the halves: which
 * names collide depends on the key, so collisions found for one seed say nothing about another.
 * It is not a MAC; it only makes collisions unguessable, at about the cost of FNV-1a on short names.
 * Pure functions; any thread. */
#ifndef SC_HASH_H
#define SC_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

__extension__ typedef unsigned __int128 hash_u128;

/* The 128-bit product of a and b, halves folded together: every output bit depends on every input bit. */
static inline uint64_t hash_fold(uint64_t a, uint64_t b) {
  hash_u128 r = (hash_u128)a * b;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Two key words from the seed, related non-linearly so that neither multiplicand is ever public. */
#define SC_HASH_K1 UINT64_C(0x9e3779b97f4a7c15)
#define SC_HASH_K2 UINT64_C(0xd6e8feb86659fd93)
#define SC_HASH_K3 UINT64_C(0xc2b2ae3d27d4eb4f)
static inline uint64_t hash_key1(uint64_t seed) { return seed ^ SC_HASH_K1; }
static inline uint64_t hash_key2(uint64_t seed) { return (seed * SC_HASH_K2) ^ SC_HASH_K3; }

/* 1..8 bytes as one word; for a given length, distinct strings give distinct words. */
static inline uint64_t hash_small(const unsigned char *p, size_t n) {
  if (n >= 4) { /* the first four and the last four bytes cover all of them */
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + n - 4, 4);
    return (uint64_t)lo << 32 | hi;
  }
  return (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
}

/* Hash of n bytes under `seed`. Up to 7 bytes: one product of the bytes and the length, each combined
 * with key material. Longer: sixteen bytes per product, the last pair of words overlapping the previous
 * one rather than padding, and the length folded in at the end. */
static inline uint64_t hash_bytes(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t k1 = hash_key1(seed), h = hash_key2(seed), a, b;
  if (n > 16) {
    size_t left = n;
    do {
      memcpy(&a, p, 8);
      memcpy(&b, p + 8, 8);
      h = hash_fold(a ^ k1, b ^ h);
      p += 16;
      left -= 16;
    } while (left > 16);
    memcpy(&a, p + left - 16, 8);
    memcpy(&b, p + left - 8, 8);
  } else if (n >= 8) {
    memcpy(&a, p, 8);
    memcpy(&b, p + n - 8, 8);
  } else { /* most names: one product, the length in the second word */
    return hash_fold((n ? hash_small(p, n) : 0) ^ k1, n ^ h);
  }
  return hash_fold(hash_fold(a ^ k1, b ^ h) ^ n, h ^ SC_HASH_K1);
}

/* Hash of a 64-bit value (device ids, pointers, indexes) under `seed`. */
static inline uint64_t hash_u64(uint64_t v, uint64_t seed) {
  return hash_fold(v ^ hash_key1(seed), hash_key2(seed));
}

#endif
