/* cache.h — content-addressed result cache, LRU bounded by bytes, safe from any thread.
 *
 * The key is a SHA-256 over everything that determines a report (module bytes, file name, mesh,
 * options, rules version: see check.c); the value is the rendered report and its summary. */
#ifndef SRV_CACHE_H
#define SRV_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct srv_cache srv_cache;

typedef struct {
  char *report; /* NUL-terminated */
  size_t report_len;
  uint32_t errors, warnings, notes, diagnostics;
  char sha256[65];
  uint64_t module_bytes;
} cache_value;

typedef struct {
  uint64_t hits, misses, insertions, evictions;
  uint64_t bytes, entries, limit;
} cache_stats;

srv_cache *cache_new(size_t limit_bytes);
void cache_free(srv_cache *c);
/* Evicts down to the new limit; 0 empties and disables the cache. */
void cache_set_limit(srv_cache *c, size_t limit_bytes);
typedef struct redis_tier redis_tier;
/* Adds a shared tier (owned by the caller, outliving the cache): asked on a local miss, stored to on
 * every cache_put. Call before the cache is shared between threads. */
void cache_set_shared(srv_cache *c, redis_tier *shared);
/* On a hit (local, or from the shared tier) fills *out with a malloc'd copy (free with cache_value_clear) and returns true. */
bool cache_get(srv_cache *c, const uint8_t key[32], cache_value *out);
/* Stores a copy of v (locally nothing if it alone exceeds the limit), and in the shared tier. */
void cache_put(srv_cache *c, const uint8_t key[32], const cache_value *v);
void cache_get_stats(srv_cache *c, cache_stats *out);
void cache_value_clear(cache_value *v);

#endif
