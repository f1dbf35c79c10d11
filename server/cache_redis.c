/* cache_redis.c — Redis tier of the result cache over hiredis' synchronous API (see cache_redis.h).
 *
 * Keys are "shardcheck:v1:" + the hex of the local cache key (which already covers the daemon and
 * rules versions). Values are a fixed little-endian header (magic, summary counts, module size,
 * module SHA-256) followed by the rendered report; anything else read back is treated as a miss. */
#include "cache_redis.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

#define KEY_PREFIX "shardcheck:v1:"
#define MAGIC "SCR1"
#define HEADER_BYTES (4 + 4 * 4 + 8 + 64)
#define MAX_IDLE_CONNS 64

struct redis_tier {
  char *host, *unix_path, *password;
  int port, db;
  redis_tier_config cfg;
  pthread_mutex_t mu; /* guards idle[] */
  redisContext *idle[MAX_IDLE_CONNS];
  int nidle;
  _Atomic int64_t closed_until_ns; /* breaker: skip Redis until then */
  atomic_bool degraded;            /* a failure was logged and no success since */
  _Atomic uint64_t hits, misses, errors, skipped, stores, too_large;
};

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *dup_span(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static int parse_int(const char *s, size_t n, int lo, int hi, int *out) {
  if (n == 0 || n > 9)
    return -1;
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  if (v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

/* redis://[:password@]host[:port][/db], host:port, unix:/path or unix:///path. */
static int parse_url(redis_tier *t, const char *url) {
  if (strncmp(url, "unix:", 5) == 0) {
    const char *p = url + 5;
    if (strncmp(p, "//", 2) == 0)
      p += 2;
    if (*p != '/')
      return -1;
    return (t->unix_path = dup_span(p, strlen(p))) ? 0 : -1;
  }
  const char *p = strncmp(url, "redis://", 8) == 0 ? url + 8 : url;
  const char *at = strchr(p, '@');
  if (at) {
    const char *pw = *p == ':' ? p + 1 : p; /* redis://:pw@ or redis://user:pw@ (user ignored) */
    const char *colon = memchr(p, ':', (size_t)(at - p));
    if (colon)
      pw = colon + 1;
    if (!(t->password = dup_span(pw, (size_t)(at - pw))))
      return -1;
    p = at + 1;
  }
  const char *host_end;
  const char *rest;
  if (*p == '[') { /* [::1]:6379 */
    host_end = strchr(p, ']');
    if (!host_end)
      return -1;
    t->host = dup_span(p + 1, (size_t)(host_end - p - 1));
    rest = host_end + 1;
  } else {
    host_end = p + strcspn(p, ":/");
    t->host = dup_span(p, (size_t)(host_end - p));
    rest = host_end;
  }
  if (!t->host || !t->host[0])
    return -1;
  t->port = 6379;
  if (*rest == ':') {
    size_t n = strcspn(rest + 1, "/");
    if (parse_int(rest + 1, n, 1, 65535, &t->port))
      return -1;
    rest += 1 + n;
  }
  if (*rest == '/' && rest[1] && parse_int(rest + 1, strlen(rest + 1), 0, 1 << 20, &t->db))
    return -1;
  return 0;
}

redis_tier *redis_tier_new(const redis_tier_config *cfg, char **err) {
  redis_tier *t = calloc(1, sizeof *t);
  if (!t) {
    *err = strdup("out of memory");
    return NULL;
  }
  t->cfg = *cfg;
  t->cfg.url = NULL; /* not kept: the caller owns the string */
  pthread_mutex_init(&t->mu, NULL);
  if (parse_url(t, cfg->url) != 0) {
    char buf[600];
    snprintf(buf, sizeof buf,
             "redis.url \"%.400s\": expected redis://[:password@]host[:port][/db] or unix:/path/to.sock", cfg->url);
    *err = strdup(buf);
    redis_tier_free(t);
    return NULL;
  }
  return t;
}

void redis_tier_free(redis_tier *t) {
  if (!t)
    return;
  for (int i = 0; i < t->nidle; i++)
    redisFree(t->idle[i]);
  pthread_mutex_destroy(&t->mu);
  free(t->host);
  free(t->unix_path);
  free(t->password);
  free(t);
}

static struct timeval timeout_tv(const redis_tier *t) {
  uint64_t ms = t->cfg.timeout_ms ? t->cfg.timeout_ms : 1;
  struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
  return tv;
}

/* Opens the breaker and logs the cause once per outage. */
static void trip(redis_tier *t, const char *what, const char *why) {
  atomic_fetch_add(&t->errors, 1);
  atomic_store(&t->closed_until_ns, mono_ns() + (int64_t)t->cfg.breaker_s * 1000000000);
  if (!atomic_exchange(&t->degraded, true)) {
    json_t *f = json_object();
    json_object_set_new(f, "op", json_string(what));
    json_object_set_new(f, "error", json_string(why ? why : "?"));
    json_object_set_new(f, "skip_s", json_integer((json_int_t)t->cfg.breaker_s));
    log_json(LOG_WARN, "redis cache tier unavailable: local cache only", f);
  }
}

static void recovered(redis_tier *t) {
  if (atomic_load(&t->degraded) && atomic_exchange(&t->degraded, false))
    log_msg(LOG_INFO, "redis cache tier reachable again");
}

/* A pooled connection (*pooled = true), or a new one (connect, AUTH, SELECT); NULL after tripping
 * the breaker. */
static redisContext *take_conn(redis_tier *t, const char *what, bool *pooled) {
  pthread_mutex_lock(&t->mu);
  redisContext *c = t->nidle ? t->idle[--t->nidle] : NULL;
  pthread_mutex_unlock(&t->mu);
  *pooled = c != NULL;
  if (c)
    return c;
  struct timeval tv = timeout_tv(t);
  c = t->unix_path ? redisConnectUnixWithTimeout(t->unix_path, tv) : redisConnectWithTimeout(t->host, t->port, tv);
  if (!c || c->err) {
    trip(t, what, c ? c->errstr : "cannot allocate a connection");
    if (c)
      redisFree(c);
    return NULL;
  }
  redisSetTimeout(c, tv);
  if (t->password || t->db) {
    redisReply *r = t->password ? redisCommand(c, "AUTH %s", t->password) : NULL;
    bool ok = !t->password || (r && r->type != REDIS_REPLY_ERROR);
    if (r)
      freeReplyObject(r);
    if (ok && t->db) {
      r = redisCommand(c, "SELECT %d", t->db);
      ok = r && r->type != REDIS_REPLY_ERROR;
      if (r)
        freeReplyObject(r);
    }
    if (!ok) {
      trip(t, what, c->err ? c->errstr : "AUTH or SELECT refused");
      redisFree(c);
      return NULL;
    }
  }
  return c;
}

static void give_conn(redis_tier *t, redisContext *c) {
  pthread_mutex_lock(&t->mu);
  if (t->nidle < MAX_IDLE_CONNS) {
    t->idle[t->nidle++] = c;
    c = NULL;
  }
  pthread_mutex_unlock(&t->mu);
  if (c)
    redisFree(c);
}

static void drop_idle(redis_tier *t) {
  pthread_mutex_lock(&t->mu);
  while (t->nidle)
    redisFree(t->idle[--t->nidle]);
  pthread_mutex_unlock(&t->mu);
}

/* Runs one command; the reply's connection goes back to the pool. A pooled connection that fails is
 * replaced once by a fresh one (Redis may have restarted since it was pooled). NULL after tripping
 * the breaker; an error reply trips it too. */
static redisReply *command(redis_tier *t, const char *what, const char *fmt, ...) {
  for (int attempt = 0; attempt < 2; attempt++) {
    bool pooled;
    redisContext *c = take_conn(t, what, &pooled);
    if (!c)
      return NULL;
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r && r->type != REDIS_REPLY_ERROR) {
      give_conn(t, c);
      recovered(t);
      return r;
    }
    bool retry = !r && pooled &&
                 (c->err == REDIS_ERR_EOF || (c->err == REDIS_ERR_IO && (errno == EPIPE || errno == ECONNRESET)));
    if (!retry)
      trip(t, what, r ? r->str : c->errstr);
    if (r)
      freeReplyObject(r);
    redisFree(c); /* a timed-out connection may still deliver the late reply: never reuse it */
    if (!retry)
      return NULL;
    drop_idle(t); /* the others went to the same vanished server: the retry connects anew */
  }
  return NULL;
}

static bool breaker_open(redis_tier *t) {
  if (mono_ns() < atomic_load(&t->closed_until_ns)) {
    atomic_fetch_add(&t->skipped, 1);
    return true;
  }
  return false;
}

static void key_text(const uint8_t key[32], char out[sizeof KEY_PREFIX + 64]) {
  static const char hex[] = "0123456789abcdef";
  memcpy(out, KEY_PREFIX, sizeof KEY_PREFIX - 1);
  char *p = out + sizeof KEY_PREFIX - 1;
  for (int i = 0; i < 32; i++) {
    *p++ = hex[key[i] >> 4];
    *p++ = hex[key[i] & 15];
  }
  *p = '\0';
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static bool is_hex64(const uint8_t *p) {
  for (int i = 0; i < 64; i++)
    if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
      return false;
  return true;
}

/* Decodes a stored value; false for anything this version did not write. */
static bool decode(const uint8_t *b, size_t n, cache_value *out) {
  if (n < HEADER_BYTES || memcmp(b, MAGIC, 4) != 0 || !is_hex64(b + 28))
    return false;
  size_t report_len = n - HEADER_BYTES;
  char *report = malloc(report_len + 1);
  if (!report)
    return false;
  memcpy(report, b + HEADER_BYTES, report_len);
  report[report_len] = '\0';
  memset(out, 0, sizeof *out);
  out->errors = get_u32(b + 4);
  out->warnings = get_u32(b + 8);
  out->notes = get_u32(b + 12);
  out->diagnostics = get_u32(b + 16);
  out->module_bytes = get_u64(b + 20);
  memcpy(out->sha256, b + 28, 64);
  out->sha256[64] = '\0';
  out->report = report;
  out->report_len = report_len;
  return true;
}

bool redis_tier_get(redis_tier *t, const uint8_t key[32], cache_value *out) {
  if (breaker_open(t))
    return false;
  char k[sizeof KEY_PREFIX + 64];
  key_text(key, k);
  redisReply *r = command(t, "GET", "GET %s", k);
  if (!r)
    return false;
  bool hit = r->type == REDIS_REPLY_STRING && r->len <= t->cfg.max_value_bytes + HEADER_BYTES &&
             decode((const uint8_t *)r->str, r->len, out);
  freeReplyObject(r);
  atomic_fetch_add(hit ? &t->hits : &t->misses, 1);
  return hit;
}

void redis_tier_put(redis_tier *t, const uint8_t key[32], const cache_value *v) {
  if (v->report_len > t->cfg.max_value_bytes) {
    atomic_fetch_add(&t->too_large, 1);
    return;
  }
  if (breaker_open(t))
    return;
  size_t n = HEADER_BYTES + v->report_len;
  uint8_t *b = malloc(n);
  if (!b)
    return;
  memcpy(b, MAGIC, 4);
  put_u32(b + 4, v->errors);
  put_u32(b + 8, v->warnings);
  put_u32(b + 12, v->notes);
  put_u32(b + 16, v->diagnostics);
  put_u64(b + 20, v->module_bytes);
  memcpy(b + 28, v->sha256, 64);
  memcpy(b + HEADER_BYTES, v->report, v->report_len);
  char k[sizeof KEY_PREFIX + 64];
  key_text(key, k);
  redisReply *r = t->cfg.ttl_s ? command(t, "SET", "SET %s %b EX %llu", k, (const char *)b, n, (unsigned long long)t->cfg.ttl_s)
                               : command(t, "SET", "SET %s %b", k, (const char *)b, n);
  free(b);
  if (!r)
    return;
  freeReplyObject(r);
  atomic_fetch_add(&t->stores, 1);
}

void redis_tier_get_stats(redis_tier *t, redis_tier_stats *out) {
  out->hits = atomic_load(&t->hits);
  out->misses = atomic_load(&t->misses);
  out->errors = atomic_load(&t->errors);
  out->skipped = atomic_load(&t->skipped);
  out->stores = atomic_load(&t->stores);
  out->too_large = atomic_load(&t->too_large);
  out->up = mono_ns() >= atomic_load(&t->closed_until_ns);
}
