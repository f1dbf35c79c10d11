/* budget.c — memory budget, total and per connection (see budget.h). */
#include "budget.h"

#include <stdlib.h>
#include <string.h>

#define NBUCKETS 1024
#define KEY_BYTES 64

typedef struct entry {
  char key[KEY_BYTES];
  uint64_t used;
  struct entry *next;
} entry;

struct budget {
  uint64_t total, per_conn, used;
  entry *buckets[NBUCKETS];
};

budget *budget_new(void) { return calloc(1, sizeof(budget)); }

void budget_free(budget *b) {
  if (!b)
    return;
  for (size_t i = 0; i < NBUCKETS; i++)
    for (entry *e = b->buckets[i], *n; e; e = n) {
      n = e->next;
      free(e);
    }
  free(b);
}

void budget_set_limits(budget *b, uint64_t total, uint64_t per_connection) {
  b->total = total;
  b->per_conn = per_connection == 0 ? total / 4 : per_connection < total ? per_connection : total;
  if (b->per_conn == 0)
    b->per_conn = total;
}

static size_t bucket_of(const char *key) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)key; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  return (size_t)(h % NBUCKETS);
}

/* The entry of `conn`, created (with 0 bytes) when `create`; NULL if absent or out of memory. */
static entry *find(budget *b, const char *conn, bool create) {
  char key[KEY_BYTES];
  strncpy(key, conn ? conn : "", KEY_BYTES - 1);
  key[KEY_BYTES - 1] = '\0';
  size_t i = bucket_of(key);
  for (entry *e = b->buckets[i]; e; e = e->next)
    if (strcmp(e->key, key) == 0)
      return e;
  if (!create)
    return NULL;
  entry *e = calloc(1, sizeof *e);
  if (!e)
    return NULL;
  memcpy(e->key, key, KEY_BYTES);
  e->next = b->buckets[i];
  b->buckets[i] = e;
  return e;
}

static void drop(budget *b, entry *gone) {
  entry **pp = &b->buckets[bucket_of(gone->key)];
  while (*pp != gone)
    pp = &(*pp)->next;
  *pp = gone->next;
  free(gone);
}

budget_result budget_charge(budget *b, const char *conn, uint64_t n) {
  if (n > b->total || b->used > b->total - n)
    return BUDGET_FULL;
  entry *e = find(b, conn, true);
  if (!e)
    return BUDGET_FULL;
  if (n > b->per_conn || e->used > b->per_conn - n) {
    if (e->used == 0)
      drop(b, e);
    return BUDGET_CONNECTION_FULL;
  }
  e->used += n;
  b->used += n;
  return BUDGET_OK;
}

void budget_force(budget *b, const char *conn, uint64_t n) {
  entry *e = find(b, conn, true);
  if (e) /* out of memory: counted in the total only (released the same way) */
    e->used += n;
  b->used += n;
}

void budget_release(budget *b, const char *conn, uint64_t n) {
  entry *e = find(b, conn, false);
  if (e) {
    e->used -= n < e->used ? n : e->used;
    if (e->used == 0)
      drop(b, e);
  }
  b->used -= n < b->used ? n : b->used;
}

uint64_t budget_used(const budget *b) { return b->used; }
uint64_t budget_total(const budget *b) { return b->total; }
uint64_t budget_per_connection(const budget *b) { return b->per_conn; }

uint64_t budget_connection_used(const budget *b, const char *conn) {
  entry *e = find((budget *)b, conn, false);
  return e ? e->used : 0;
}
