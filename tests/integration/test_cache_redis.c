/* test_cache_redis.c — the Redis tier of the result cache (server/cache_redis.c): URL parsing, an
 * unreachable Redis (a miss, never an error; the breaker then skips it), and against a real
 * redis-server on a unix socket: sharing between two caches, values it did not write, and the size
 * bound. Counts only, no timing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cache_redis.h"

static redis_tier_config conf(const char *url) {
  redis_tier_config c = {url, 60, 10000, 60, 1 << 20}; /* a generous timeout: valgrind, busy CI */
  return c;
}

static void key(uint8_t k[32], int i) {
  memset(k, 0x5a, 32);
  k[0] = (uint8_t)i;
}

static cache_value val(const char *report) {
  cache_value v = {0};
  v.report = (char *)report;
  v.report_len = strlen(report);
  v.errors = 2;
  v.warnings = 1;
  v.diagnostics = 3;
  v.module_bytes = 1234;
  memset(v.sha256, 'a', 64);
  return v;
}

Test(cache_redis, urls) {
  const char *good[] = {"redis://127.0.0.1:6379", "redis://localhost", "redis://:secret@10.0.0.1:7000/2",
                        "redis://user:pw@[::1]:6380/0", "127.0.0.1:6379", "unix:/run/redis.sock", "unix:///run/redis.sock"};
  const char *bad[] = {"", "redis://", "redis://host:0", "redis://host:70000", "redis://host:port", "redis://[::1",
                       "unix:relative.sock", "redis://host/db"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    char *err = NULL;
    redis_tier_config c = conf(good[i]);
    redis_tier *t = redis_tier_new(&c, &err);
    cr_assert(t, "%s: %s", good[i], err ? err : "");
    redis_tier_free(t);
  }
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *err = NULL;
    redis_tier_config c = conf(bad[i]);
    cr_assert_null(redis_tier_new(&c, &err), "%s accepted", bad[i]);
    cr_assert(err && strstr(err, "redis.url"), "%s", err ? err : "no message");
    free(err);
  }
}

Test(cache_redis, unreachable_is_a_miss_then_skipped) {
  char *err = NULL;
  redis_tier_config c = conf("unix:/nonexistent/shardcheck-test.sock");
  redis_tier *t = redis_tier_new(&c, &err);
  cr_assert(t);
  srv_cache *cache = cache_new(1 << 20);
  cache_set_shared(cache, t);
  uint8_t k[32];
  key(k, 1);
  cache_value out;
  cr_assert_not(cache_get(cache, k, &out), "nothing anywhere: a miss");
  cache_value v = val("{}");
  cache_put(cache, k, &v); /* local only: the breaker is open */
  cr_assert(cache_get(cache, k, &out), "the local tier still works");
  cache_value_clear(&out);
  redis_tier_stats st;
  redis_tier_get_stats(t, &st);
  cr_assert_eq(st.errors, 1, "one failed connect, then the breaker: %llu errors", (unsigned long long)st.errors);
  cr_assert_eq(st.skipped, 1, "the store skipped Redis");
  cr_assert_not(st.up);
  cache_free(cache);
  redis_tier_free(t);
}

/* A redis-server of our own on a unix socket in a temp dir; stopped by redis_stop. */
static char dir[64], sock[128];
static void redis_start(void) {
  strcpy(dir, "/tmp/sc-redis-test.XXXXXX");
  cr_assert(mkdtemp(dir));
  snprintf(sock, sizeof sock, "%s/redis.sock", dir);
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "redis-server --port 0 --unixsocket %s --save '' --appendonly no --dir %s --daemonize yes "
           "--pidfile %s/redis.pid --logfile %s/redis.log",
           sock, dir, dir, dir);
  cr_assert_eq(system(cmd), 0, "redis-server (scripts/deps.sh --test installs it)");
  for (int i = 0; i < 200 && access(sock, F_OK) != 0; i++)
    usleep(20000);
  cr_assert_eq(access(sock, F_OK), 0, "redis-server did not create %s", sock);
}
static void redis_stop(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "redis-cli -s %s shutdown nosave >/dev/null 2>&1; rm -rf %s", sock, dir);
  (void)system(cmd);
}

Test(cache_redis, shared_between_caches, .init = redis_start, .fini = redis_stop) {
  char url[160], *err = NULL;
  snprintf(url, sizeof url, "unix:%s", sock);
  redis_tier_config c = conf(url);
  c.max_value_bytes = 64;
  redis_tier *ta = redis_tier_new(&c, &err), *tb = redis_tier_new(&c, &err);
  cr_assert(ta && tb);
  srv_cache *a = cache_new(1 << 20), *b = cache_new(1 << 20);
  cache_set_shared(a, ta);
  cache_set_shared(b, tb);
  uint8_t k[32];
  key(k, 7);
  cache_value v = val("{\"report\":\"from a\"}"), out;
  cache_put(a, k, &v);
  cr_assert(cache_get(b, k, &out), "b finds what a stored");
  cr_assert_str_eq(out.report, v.report);
  cr_assert_eq(out.report_len, v.report_len);
  cr_assert_eq(out.errors, 2);
  cr_assert_eq(out.warnings, 1);
  cr_assert_eq(out.diagnostics, 3);
  cr_assert_eq(out.module_bytes, 1234);
  cr_assert_eq(memcmp(out.sha256, v.sha256, 65), 0);
  cache_value_clear(&out);
  cr_assert(cache_get(b, k, &out), "now from b's own tier");
  cache_value_clear(&out);
  redis_tier_stats st;
  redis_tier_get_stats(tb, &st);
  cr_assert_eq(st.hits, 1, "the second lookup stayed local");

  /* A value this version did not write is a miss, not a crash or an error. */
  uint8_t k2[32];
  key(k2, 8);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "redis-cli -s %s set shardcheck:v1:08%s garbage >/dev/null", sock,
           "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a");
  cr_assert_eq(system(cmd), 0);
  cr_assert_not(cache_get(b, k2, &out));
  redis_tier_get_stats(tb, &st);
  cr_assert_eq(st.misses, 1);
  cr_assert_eq(st.errors, 0);

  /* Over max_value_bytes: stays local. */
  uint8_t k3[32];
  key(k3, 9);
  cache_value big = val("{\"report\":\"a report longer than sixty-four bytes, so it stays local\"}");
  cache_put(a, k3, &big);
  cr_assert_not(cache_get(b, k3, &out));
  redis_tier_get_stats(ta, &st);
  cr_assert_eq(st.too_large, 1);
  cr_assert_eq(st.stores, 1);
  cache_free(a);
  cache_free(b);
  redis_tier_free(ta);
  redis_tier_free(tb);
}
