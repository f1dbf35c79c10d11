/* cache.c — a chained hash table over SHA-256 keys plus an LRU list, under one mutex; an optional
 * shared tier (Redis, cache_redis.c) is asked on a local miss and told every new report, outside
 * the mutex. */
#include "cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/hash.h"

#include "cache_redis.h"

typedef struct entry {
  uint8_t key[32];
  cache_value v;
  size_t cost;
  struct entry *hnext;        /* bucket chain */
  struct entry *prev, *next;  /* LRU: head = most recent */
} entry;

struct srv_cache {
  pthread_mutex_t mu;
  entry **buckets;
  size_t nbuckets; /* power of two */
  entry *head, *tail;
  cache_stats st;
  redis_tier *shared; /* NULL: local only; not owned */
  uint64_t seed;      /* random: keys are SHA-256 digests a client can grind for shared low bits */
};

static size_t bucket_in(const srv_cache *c, const uint8_t key[32], size_t nbuckets) {
  return (size_t)hash_bytes(key, 32, c->seed) & (nbuckets - 1);
}

static size_t bucket_of(const srv_cache *c, const uint8_t key[32]) { return bucket_in(c, key, c->nbuckets); }

srv_cache *cache_new(size_t limit_bytes) {
  srv_cache *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->nbuckets = 1024;
  c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
  if (!c->buckets) {
    free(c);
    return NULL;
  }
  pthread_mutex_init(&c->mu, NULL);
  c->st.limit = limit_bytes;
  if (getrandom(&c->seed, sizeof c->seed, GRND_NONBLOCK) != (ssize_t)sizeof c->seed)
    c->seed = (uint64_t)(uintptr_t)c ^ (uint64_t)(uintptr_t)&c; /* addresses ASLR moves */
  return c;
}

void cache_value_clear(cache_value *v) {
  free(v->report);
  v->report = NULL;
}

static void lru_unlink(srv_cache *c, entry *e) {
  if (e->prev)
    e->prev->next = e->next;
  else
    c->head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    c->tail = e->prev;
  e->prev = e->next = NULL;
}

static void lru_push_front(srv_cache *c, entry *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head)
    c->head->prev = e;
  c->head = e;
  if (!c->tail)
    c->tail = e;
}

static void remove_entry(srv_cache *c, entry *e) {
  entry **pp = &c->buckets[bucket_of(c, e->key)];
  while (*pp != e)
    pp = &(*pp)->hnext;
  *pp = e->hnext;
  lru_unlink(c, e);
  c->st.bytes -= e->cost;
  c->st.entries--;
  cache_value_clear(&e->v);
  free(e);
}

static void evict_to(srv_cache *c, size_t limit) {
  while (c->tail && c->st.bytes > limit) {
    remove_entry(c, c->tail);
    c->st.evictions++;
  }
}

static void grow(srv_cache *c) {
  size_t nb = c->nbuckets * 2;
  entry **b = calloc(nb, sizeof *b);
  if (!b)
    return; /* keep the longer chains */
  for (size_t i = 0; i < c->nbuckets; i++)
    for (entry *e = c->buckets[i], *nx; e; e = nx) {
      nx = e->hnext;
      size_t k = bucket_in(c, e->key, nb);
      e->hnext = b[k];
      b[k] = e;
    }
  free(c->buckets);
  c->buckets = b;
  c->nbuckets = nb;
}

void cache_free(srv_cache *c) {
  if (!c)
    return;
  while (c->head)
    remove_entry(c, c->head);
  free(c->buckets);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

void cache_set_limit(srv_cache *c, size_t limit_bytes) {
  pthread_mutex_lock(&c->mu);
  c->st.limit = limit_bytes;
  evict_to(c, limit_bytes);
  pthread_mutex_unlock(&c->mu);
}

void cache_set_shared(srv_cache *c, redis_tier *shared) { c->shared = shared; }

static void put_local(srv_cache *c, const uint8_t key[32], const cache_value *v);

bool cache_get(srv_cache *c, const uint8_t key[32], cache_value *out) {
  bool hit = false;
  pthread_mutex_lock(&c->mu);
  entry *e = c->buckets[bucket_of(c, key)];
  while (e && memcmp(e->key, key, 32) != 0)
    e = e->hnext;
  if (e) {
    char *copy = malloc(e->v.report_len + 1);
    if (copy) {
      memcpy(copy, e->v.report, e->v.report_len + 1);
      *out = e->v;
      out->report = copy;
      lru_unlink(c, e);
      lru_push_front(c, e);
      hit = true;
    }
  }
  if (hit)
    c->st.hits++;
  else
    c->st.misses++;
  pthread_mutex_unlock(&c->mu);
  if (!hit && c->shared && redis_tier_get(c->shared, key, out)) {
    put_local(c, key, out); /* later lookups here need no round trip */
    hit = true;
  }
  return hit;
}

void cache_put(srv_cache *c, const uint8_t key[32], const cache_value *v) {
  put_local(c, key, v);
  if (c->shared)
    redis_tier_put(c->shared, key, v);
}

static void put_local(srv_cache *c, const uint8_t key[32], const cache_value *v) {
  size_t cost = sizeof(entry) + v->report_len + 1;
  pthread_mutex_lock(&c->mu);
  if (cost > c->st.limit)
    goto out;
  entry *e = c->buckets[bucket_of(c, key)];
  while (e && memcmp(e->key, key, 32) != 0)
    e = e->hnext;
  if (e) { /* raced with another worker computing the same report: keep the first */
    lru_unlink(c, e);
    lru_push_front(c, e);
    goto out;
  }
  e = calloc(1, sizeof *e);
  char *copy = malloc(v->report_len + 1);
  if (!e || !copy) {
    free(e);
    free(copy);
    goto out;
  }
  memcpy(copy, v->report, v->report_len);
  copy[v->report_len] = '\0';
  memcpy(e->key, key, 32);
  e->v = *v;
  e->v.report = copy;
  e->cost = cost;
  evict_to(c, c->st.limit - cost);
  if (c->st.entries >= c->nbuckets)
    grow(c);
  size_t b = bucket_of(c, key);
  e->hnext = c->buckets[b];
  c->buckets[b] = e;
  lru_push_front(c, e);
  c->st.bytes += cost;
  c->st.entries++;
  c->st.insertions++;
out:
  pthread_mutex_unlock(&c->mu);
}

void cache_get_stats(srv_cache *c, cache_stats *out) {
  pthread_mutex_lock(&c->mu);
  *out = c->st;
  pthread_mutex_unlock(&c->mu);
}
