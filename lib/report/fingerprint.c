/* fingerprint.c — stable diagnostic identities for baselines and SARIF partialFingerprints. */
#include <openssl/evp.h>
#include <string.h>
#include <stdlib.h>

#include "shardcheck.h"
#include "util/arena.h"
#include "util/hash.h"

/* SHA-256 of the identity tuple with its occurrence number; fields are NUL-separated so no two
 * tuples share an encoding. Writes 16 hex digits + NUL. */
static void tuple_hash(const sc_diag *d, uint32_t occurrence, char out[17]) {
  const char *fields[4] = {d->code, d->function, d->op, d->target};
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_MD_CTX *h = EVP_MD_CTX_new();
  if (h && EVP_DigestInit_ex(h, EVP_sha256(), NULL)) {
    for (int i = 0; i < 4; i++) EVP_DigestUpdate(h, fields[i] ? fields[i] : "", strlen(fields[i] ? fields[i] : "") + 1);
    EVP_DigestUpdate(h, &occurrence, sizeof occurrence);
    EVP_DigestFinal_ex(h, md, &n);
  }
  EVP_MD_CTX_free(h);
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < 8; i++) {
    out[2 * i] = i < n ? hex[md[i] >> 4] : '0';
    out[2 * i + 1] = i < n ? hex[md[i] & 15] : '0';
  }
  out[16] = '\0';
}

static bool same_tuple(const sc_diag *a, const sc_diag *b) {
  const char *x[4] = {a->code, a->function, a->op, a->target}, *y[4] = {b->code, b->function, b->op, b->target};
  for (int i = 0; i < 4; i++)
    if (strcmp(x[i] ? x[i] : "", y[i] ? y[i] : "") != 0) return false;
  return true;
}

/* The occurrence number of a tuple counts earlier diagnostics with the same tuple, through a hash
 * table keyed by the tuple's occurrence-0 hash (linear overall). */
const char **sc_report_fingerprints(sc_arena *a, const sc_report *r) {
  size_t n = r->ndiags, cap = 4;
  while (cap < 2 * n) cap *= 2;
  const char **out = ar_calloc(a, n ? n : 1, sizeof *out);
  size_t *first = ar_calloc(a, cap, sizeof *first);    /* diag index + 1 of a tuple's first */
  uint32_t *count = ar_calloc(a, cap, sizeof *count);  /* occurrences seen */
  if (!out || !first || !count) return NULL;
  uint64_t seed = ar_hash_seed(a); /* the table index is keyed: fingerprints are public */
  for (size_t i = 0; i < n; i++) {
    const sc_diag *d = &r->diags[i];
    char base[17];
    tuple_hash(d, 0, base);
    size_t slot = (size_t)hash_bytes(base, 16, seed) & (cap - 1);
    while (first[slot] && !same_tuple(&r->diags[first[slot] - 1], d)) slot = (slot + 1) & (cap - 1);
    if (!first[slot]) first[slot] = i + 1;
    uint32_t occurrence = count[slot]++;
    char *fp = ar_alloc(a, 17);
    if (!fp) return NULL;
    if (occurrence == 0) memcpy(fp, base, 17);
    else tuple_hash(d, occurrence, fp);
    out[i] = fp;
  }
  return out;
}
