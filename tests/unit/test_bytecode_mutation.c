/* Hostile MLIR bytecode: truncated at every length, bit-flipped at every byte, random bytes behind the
 * magic, bytecode versions newer than the reader knows (a newer producer is read, with a note). Each
 * gives a report with a clear syntax diagnostic (SC0001 with a byte offset inside the input) or a clean read, never a crash or a hang.
 * (`make fuzz` runs the coverage-guided harness tests/fuzz/fuzz_bytecode.c on the same inputs.) */
#include <criterion/criterion.h>

#include "helpers.h"

#define SMALL "../shared/corpus/jax/jax_backcompat/annotate_data_placement__0.mlirbc"
#define SDY "../shared/corpus/jax/jax_backcompat/shardy_sharding_ops_with_different_meshes__0.mlirbc"
#define OLD "../shared/corpus/jax/jax_backcompat/tpu_Sharding__0.mlirbc"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 11);
}

static const sc_diag *syntax_diag(const sc_report *r) {
  for (size_t i = 0; i < r->ndiags; i++)
    if (!strcmp(r->diags[i].code, "SC0001") || !strcmp(r->diags[i].code, "SC0002")) return &r->diags[i];
  return NULL;
}

/* Checks `n` bytes as bytecode; returns the syntax diagnostic, if any. */
static const sc_diag *check_bytes(sc_arena *a, const char *buf, size_t n) {
  sc_options opt = {0};
  opt.input_format = SC_FMT_BYTECODE;
  sc_report *r = NULL;
  sc_status st = sc_check(a, buf, n, &opt, &r);
  cr_assert_not_null(r);
  cr_assert(st == SC_OK || st == SC_ERR_LIMIT, "status %d", st);
  const sc_diag *d = syntax_diag(r);
  if (d) {
    cr_assert_leq(d->offset, n, "syntax error offset %u outside the %zu-byte input", d->offset, n);
    cr_assert(strstr(d->message, "byte offset") != NULL || strstr(d->message, "MLIR bytecode") != NULL, "%s",
              d->message);
  }
  return d;
}

static void every_truncation(const char *path) {
  size_t len = 0;
  char *orig = test_read_file(path, &len);
  cr_assert_not_null(orig, "%s", path);
  for (size_t n = 0; n < len; n++) {
    char *buf = malloc(n ? n : 1); /* exact size: reads past the end are caught by ASan/valgrind */
    memcpy(buf, orig, n);
    sc_arena *a = sc_arena_new(64u << 20);
    cr_assert_not_null(check_bytes(a, buf, n), "%s truncated to %zu bytes read without a diagnostic", path, n);
    sc_arena_free(a);
    free(buf);
  }
  free(orig);
}

Test(bytecode_mutation, every_truncation_is_diagnosed) {
  every_truncation(SMALL);
  every_truncation(SDY);
}

Test(bytecode_mutation, every_byte_flipped) {
  const char *files[] = {SMALL, SDY, OLD};
  for (size_t f = 0; f < 3; f++) {
    size_t len = 0;
    char *orig = test_read_file(files[f], &len);
    cr_assert_not_null(orig);
    char *buf = malloc(len);
    for (size_t at = 0; at < len; at++) {
      memcpy(buf, orig, len);
      buf[at] ^= (char)(1u << (next_rand() % 8));
      sc_arena *a = sc_arena_new(64u << 20);
      check_bytes(a, buf, len);
      sc_arena_free(a);
    }
    free(buf);
    free(orig);
  }
}

Test(bytecode_mutation, random_bytes_behind_the_magic) {
  char buf[512];
  for (int k = 0; k < 3000; k++) {
    size_t n = 5 + next_rand() % (sizeof buf - 5);
    memcpy(buf, "ML\xefR", 4);
    for (size_t i = 4; i < n; i++) buf[i] = (char)(next_rand() & 0xff);
    if (k & 1) buf[4] = (char)(1 + 2 * (next_rand() % 7)); /* a plausible version varint */
    sc_arena *a = sc_arena_new(16u << 20);
    cr_assert_not_null(check_bytes(a, buf, n));
    sc_arena_free(a);
  }
}

Test(bytecode_mutation, newer_versions_are_named) {
  size_t len = 0;
  char *orig = test_read_file(SDY, &len);
  cr_assert_not_null(orig);
  sc_arena *a = sc_arena_new(0);
  char *buf = malloc(len + 8);
  memcpy(buf, orig, len);
  buf[4] = (char)(7 << 1 | 1); /* bytecode version 7 */
  const sc_diag *d = check_bytes(a, buf, len);
  cr_assert_not_null(d);
  cr_assert(strstr(d->message, "bytecode version 7") && strstr(d->message, "(6)"), "%s", d->message);
  memcpy(buf, orig, len);
  char *v = NULL;
  for (size_t i = 0; i + 17 <= len && !v; i++)
    if (!memcmp(buf + i, "StableHLO_v1.10.9", 17)) v = buf + i;
  cr_assert_not_null(v);
  memcpy(v, "StableHLO_v1.99.9", 17); /* a newer producer is read (VHLO is compatible at the producer), with a note */
  cr_assert_null(check_bytes(a, buf, len));
  sc_report *r = NULL;
  cr_assert_eq(sc_check(a, buf, len, NULL, &r), SC_OK);
  cr_assert_eq(test_count_code(r, "SC0003"), 1);
  for (size_t i = 0; i < r->ndiags; i++)
    if (!strcmp(r->diags[i].code, "SC0003")) d = &r->diags[i];
  cr_assert(strstr(d->message, "StableHLO_v1.99.9") && strstr(d->message, "StableHLO v1.20"), "%s", d->message);
  cr_assert_eq(d->severity, SC_SEV_NOTE);
  free(buf);
  free(orig);
  sc_arena_free(a);
}

Test(bytecode_mutation, detected_by_magic) {
  size_t len = 0;
  char *orig = test_read_file(SDY, &len);
  cr_assert_not_null(orig);
  cr_assert_eq(fe_detect_format(orig, len), SC_FMT_BYTECODE);
  sc_arena *a = sc_arena_new(0);
  sc_report *r = NULL;
  cr_assert_eq(sc_check(a, orig, len, NULL, &r), SC_OK);
  cr_assert_eq(r->format, SC_FMT_BYTECODE);
  cr_assert_null(syntax_diag(r));
  cr_assert_eq(r->ops, 8);
  sc_arena_free(a);
  free(orig);
}

/* Changes each one-byte varint of the SDY module in turn (`raise` gives its new byte, or 0 to leave it)
 * and counts the syntax errors containing `needle`; each must name the region that declared too much. */
static size_t region_errors_when_varints_raised(uint8_t (*raise)(uint8_t), const char *needle) {
  size_t len = 0;
  char *orig = test_read_file(SDY, &len);
  cr_assert_not_null(orig);
  char *buf = malloc(len);
  size_t hits = 0;
  for (size_t i = 8; i < len; i++) {
    uint8_t raised = (orig[i] & 1) ? raise((uint8_t)orig[i]) : 0; /* odd bytes are one-byte varints */
    if (!raised) continue;
    memcpy(buf, orig, len);
    buf[i] = (char)raised;
    sc_arena *a = sc_arena_new(64u << 20);
    const sc_diag *d = check_bytes(a, buf, len);
    if (d && strstr(d->message, needle)) {
      cr_assert(strstr(d->message, "region declares "), "%s", d->message);
      hits++;
    }
    sc_arena_free(a);
  }
  free(buf);
  free(orig);
  return hits;
}

static uint8_t plus_one(uint8_t b) { return b >= 0xfd ? 0 : (uint8_t)(b + 2); }       /* value + 1, unless at the top */
static uint8_t to_sixty_four(uint8_t b) { return b >= 0x81 ? 0 : (uint8_t)0x81; }  /* the one-byte varint 64 */

/* A region's value count reserves slots before its values are read, bounded only by the bytes that
 * remain; a region must define exactly the values it declares, so over-declaring (sibling regions that
 * each claim the rest of the input would cost quadratic work) is a precise syntax error. Raising each
 * one-byte varint by one hits the region headers among others. */
Test(bytecode_mutation, over_declared_region_values_are_diagnosed) {
  cr_assert_gt(region_errors_when_varints_raised(plus_one, "values but defines"), 0,
               "some raised count is a region's value count, and is diagnosed");
}

/* Declared block and value counts still to be read each need a byte of what is left of the IR section,
 * summed over all open regions: a count past that is refused before its slots are reserved (nested
 * regions that each claimed the rest of their section cost their depth times the input). Single counts
 * are already bounded by their section; raising one-byte varints to 64 makes an outer region claim
 * enough that a nested region's own counts no longer fit. */
Test(bytecode_mutation, region_counts_past_the_input_are_refused_early) {
  cr_assert_gt(region_errors_when_varints_raised(to_sixty_four, "more than the rest of the input can hold"), 0,
               "an outer region's raised count leaves no room for a nested region's, and is refused");
}

/* ---- the sdy dialect version entry ---------------------------------------------------------------- */

static uint64_t read_varint(const uint8_t *p, size_t *at) {
  uint8_t first = p[*at];
  if (first & 1) return (uint64_t)(p[(*at)++] >> 1);
  unsigned extra = first ? (unsigned)__builtin_ctz(first) : 8;
  uint64_t v = 0;
  if (!first) {
    for (unsigned i = 0; i < 8; i++) v |= (uint64_t)p[*at + 1 + i] << (8 * i);
  } else {
    for (unsigned i = 0; i <= extra; i++) v |= (uint64_t)p[*at + i] << (8 * i);
    v >>= extra + 1;
  }
  *at += extra + 1;
  return v;
}

static size_t put_varint(uint8_t *out, uint64_t v) { /* values below 2^14 are enough here */
  if (v < 128) {
    out[0] = (uint8_t)(v << 1 | 1);
    return 1;
  }
  out[0] = (uint8_t)((v << 2 | 2) & 0xff), out[1] = (uint8_t)((v << 2) >> 8);
  return 2;
}

typedef struct {
  unsigned id;
  uint64_t align; /* 0 = none */
  const uint8_t *body;
  size_t len;
} section;

/* The artifact `orig` rebuilt with a version entry (major.minor.patch) on its sdy dialect: sections are
 * re-emitted with their alignment padding recomputed for the new offsets. Returns the new length. */
static size_t with_sdy_version(const uint8_t *orig, size_t len, uint8_t *out, unsigned major, unsigned minor,
                               unsigned patch) {
  size_t at = 4;
  read_varint(orig, &at); /* bytecode version */
  while (orig[at]) at++;
  at++;
  size_t n = at;
  memcpy(out, orig, at);
  section secs[16];
  size_t nsecs = 0;
  while (at < len && nsecs < 16) {
    section s = {orig[at] & 0x7f, 0, NULL, 0};
    bool aligned = orig[at++] & 0x80;
    s.len = read_varint(orig, &at);
    if (aligned) {
      s.align = read_varint(orig, &at);
      while (at % s.align) at++;
    }
    s.body = orig + at;
    at += s.len;
    secs[nsecs++] = s;
  }
  section *str = NULL, *dia = NULL; /* by id: the writer's section order is its own */
  for (size_t k = 0; k < nsecs; k++) {
    if (secs[k].id == 0) str = &secs[k];
    if (secs[k].id == 1) dia = &secs[k];
  }
  cr_assert(str && dia);
  /* strings: count, sizes (reversed), data at the end; find "sdy" */
  size_t p = 0;
  uint64_t nstr = read_varint(str->body, &p);
  uint64_t sizes[256];
  cr_assert_leq(nstr, 256);
  for (uint64_t k = nstr; k-- > 0;) sizes[k] = read_varint(str->body, &p);
  size_t data = str->len;
  for (uint64_t k = nstr; k-- > 0;) data -= sizes[k];
  uint64_t sdy = UINT64_MAX;
  for (uint64_t k = 0, off = data; k < nstr; off += sizes[k], k++)
    if (sizes[k] == 4 && !memcmp(str->body + off, "sdy", 4)) sdy = k;
  cr_assert_neq(sdy, UINT64_MAX, "no sdy dialect name");
  /* dialect section: count, then per dialect (name index << 1 | has version) [+ version section] */
  static uint8_t dialect[1 << 16];
  size_t q = 0, d = 0;
  uint64_t ndia = read_varint(dia->body, &q);
  d += put_varint(dialect + d, ndia);
  for (uint64_t k = 0; k < ndia; k++) {
    size_t start = q;
    uint64_t v = read_varint(dia->body, &q);
    if (v & 1) { /* an existing version section: keep it */
      q++;
      uint64_t l = read_varint(dia->body, &q);
      q += l;
      memcpy(dialect + d, dia->body + start, q - start);
      d += q - start;
      continue;
    }
    if ((v >> 1) != sdy) {
      memcpy(dialect + d, dia->body + start, q - start);
      d += q - start;
      continue;
    }
    d += put_varint(dialect + d, v | 1);
    uint8_t ver[8];
    size_t vl = put_varint(ver, major);
    vl += put_varint(ver + vl, minor);
    vl += put_varint(ver + vl, patch);
    dialect[d++] = 7; /* the dialect versions section id */
    d += put_varint(dialect + d, vl);
    memcpy(dialect + d, ver, vl);
    d += vl;
  }
  memcpy(dialect + d, dia->body + q, dia->len - q); /* the op names */
  d += dia->len - q;
  dia->body = dialect, dia->len = d;
  for (size_t k = 0; k < nsecs; k++) {
    out[n++] = (uint8_t)(secs[k].id | (secs[k].align ? 0x80 : 0));
    n += put_varint(out + n, secs[k].len);
    if (secs[k].align) {
      n += put_varint(out + n, secs[k].align);
      while (n % secs[k].align) out[n++] = 0xCB;
    }
    memcpy(out + n, secs[k].body, secs[k].len);
    n += secs[k].len;
  }
  return n;
}

Test(bytecode_mutation, sdy_dialect_version_is_honoured) {
  size_t len = 0;
  uint8_t *orig = (uint8_t *)test_read_file(SDY, &len);
  cr_assert_not_null(orig);
  uint8_t *buf = malloc(len + 4096);
  sc_arena *a = sc_arena_new(0);
  size_t n = with_sdy_version(orig, len, buf, 0, 0, 1); /* known: reads as before */
  cr_assert_null(check_bytes(a, (const char *)buf, n));
  sc_report *r0 = NULL, *r1 = NULL;
  cr_assert_eq(sc_check(a, (const char *)orig, len, NULL, &r0), SC_OK);
  cr_assert_eq(sc_check(a, (const char *)buf, n, NULL, &r1), SC_OK);
  cr_assert_eq(r1->ops, r0->ops);
  cr_assert_eq(r1->ndiags, r0->ndiags);
  n = with_sdy_version(orig, len, buf, 0, 0, 9); /* newer than this reader knows: refused, named */
  const sc_diag *d = check_bytes(a, (const char *)buf, n);
  cr_assert_not_null(d);
  cr_assert(strstr(d->message, "sdy (Shardy) dialect version 0.0.9") && strstr(d->message, "0.0.2"), "%s", d->message);
  sc_arena_free(a);
  free(buf);
  free(orig);
}
