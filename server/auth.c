/* auth.c — bearer tokens: SHA-256 digests, constant-time comparison (see auth.h). */
#include "auth.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct auth_tokens {
  unsigned char (*digest)[SHA256_DIGEST_LENGTH];
  size_t n;
};

static char *fmt_path_err(const char *what, const char *path) {
  char buf[600];
  snprintf(buf, sizeof buf, "auth.token_file %s: %s", path, what);
  return strdup(buf);
}

static int add_token(auth_tokens *t, size_t *cap, const char *s, size_t len) {
  if (t->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 8;
    void *d = realloc(t->digest, nc * sizeof *t->digest);
    if (!d)
      return -1;
    t->digest = d;
    *cap = nc;
  }
  SHA256((const unsigned char *)s, len, t->digest[t->n++]);
  return 0;
}

auth_tokens *auth_tokens_load(const char *path, char **err) {
  FILE *f = fopen(path, "r");
  if (!f) {
    *err = fmt_path_err("cannot read it", path);
    return NULL;
  }
  auth_tokens *t = calloc(1, sizeof *t);
  size_t cap = 0;
  char *line = NULL;
  size_t lcap = 0;
  ssize_t k;
  bool oom = !t;
  while (!oom && (k = getline(&line, &lcap, f)) >= 0) {
    size_t a = 0, b = (size_t)k;
    while (a < b && isspace((unsigned char)line[a]))
      a++;
    while (b > a && isspace((unsigned char)line[b - 1]))
      b--;
    if (a == b || line[a] == '#')
      continue;
    oom = add_token(t, &cap, line + a, b - a) != 0;
  }
  if (line)
    OPENSSL_cleanse(line, lcap);
  free(line);
  fclose(f);
  if (oom || t->n == 0) {
    *err = fmt_path_err(oom ? "out of memory" : "no tokens in it", path);
    auth_tokens_free(t);
    return NULL;
  }
  return t;
}

void auth_tokens_free(auth_tokens *t) {
  if (!t)
    return;
  free(t->digest);
  free(t);
}

size_t auth_tokens_count(const auth_tokens *t) { return t ? t->n : 0; }

bool auth_check_value(const auth_tokens *t, const char *v, size_t len) {
  static const char scheme[] = "bearer ";
  if (len < sizeof scheme - 1)
    return false;
  for (size_t i = 0; i < sizeof scheme - 1; i++)
    if (tolower((unsigned char)v[i]) != scheme[i])
      return false;
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256((const unsigned char *)v + sizeof scheme - 1, len - (sizeof scheme - 1), d);
  int match = 0;
  for (size_t i = 0; i < t->n; i++) /* every digest, no early exit */
    match |= CRYPTO_memcmp(d, t->digest[i], sizeof d) == 0;
  return match != 0;
}

bool auth_check(const auth_tokens *t, const grpc_metadata_array *md) {
  for (size_t i = 0; i < md->count; i++) {
    const grpc_slice *k = &md->metadata[i].key;
    if (GRPC_SLICE_LENGTH(*k) == 13 && memcmp(GRPC_SLICE_START_PTR(*k), "authorization", 13) == 0)
      return auth_check_value(t, (const char *)GRPC_SLICE_START_PTR(md->metadata[i].value),
                              GRPC_SLICE_LENGTH(md->metadata[i].value));
  }
  return false;
}
