/* cache_redis.h — the optional shared tier of the result cache: Redis behind the local LRU.
 *
 * Replicas of a fleet that point at the same Redis answer a module checked on any of them from the
 * cache. The tier is best effort: Redis down, slow or answering errors makes a lookup a miss and a
 * store a no-op, logged once, and opens a circuit breaker that skips Redis for `breaker_s` seconds;
 * a call never fails because of it.
 *
 * Threads: every function is safe from any thread. Lookups and stores block the calling thread for
 * at most about two `timeout_ms` (connect + command), so they run on the analysis worker threads,
 * never on the libuv loop. Connections are pooled (one per concurrently calling thread). */
#ifndef SRV_CACHE_REDIS_H
#define SRV_CACHE_REDIS_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"

typedef struct redis_tier redis_tier;

typedef struct {
  const char *url;          /* redis://[:password@]host[:port][/db] or unix:/path/to.sock */
  uint64_t ttl_s;           /* expiry of stored reports; 0 = none */
  uint64_t timeout_ms;      /* connect and command timeout */
  uint64_t breaker_s;       /* after a failure, skip Redis this long */
  uint64_t max_value_bytes; /* larger reports stay local */
} redis_tier_config;

typedef struct {
  uint64_t hits, misses, errors, skipped, stores, too_large;
  bool up; /* false while the breaker is open */
} redis_tier_stats;

/* Parses the URL (no I/O: an unreachable Redis is found by the first lookup). NULL with a malloc'd
 * message in *err for a malformed URL. The returned tier is owned by the caller (redis_tier_free). */
redis_tier *redis_tier_new(const redis_tier_config *cfg, char **err);
void redis_tier_free(redis_tier *t);
/* On a hit fills *out with malloc'd copies (free with cache_value_clear) and returns true. */
bool redis_tier_get(redis_tier *t, const uint8_t key[32], cache_value *out);
/* Stores v under key with the TTL (nothing when it exceeds max_value_bytes or the breaker is open). */
void redis_tier_put(redis_tier *t, const uint8_t key[32], const cache_value *v);
void redis_tier_get_stats(redis_tier *t, redis_tier_stats *out);

#endif
