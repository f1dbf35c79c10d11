/* Deterministic mutation smoke test (runs in every `make test`; the coverage-guided fuzzer is
 * `make fuzz`): real corpus modules with bytes flipped, deleted, duplicated and truncated must give a
 * report (maybe with syntax diagnostics) and never crash, hang or report a location outside the input. */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 11);
}

static void mutate(char *buf, size_t *len, size_t cap) {
  int edits = 1 + (int)(next_rand() % 8);
  for (int e = 0; e < edits && *len > 1; e++) {
    size_t at = next_rand() % *len;
    switch (next_rand() % 5) {
    case 0: buf[at] = (char)(next_rand() & 0xff); break;
    case 1: buf[at] = "{}()[]<>\"%@#:=,\n"[next_rand() % 16]; break;
    case 2: memmove(buf + at, buf + at + 1, *len - at - 1), (*len)--; break;
    case 3:
      if (*len + 16 < cap) {
        size_t n = 1 + next_rand() % 16, from = next_rand() % *len;
        if (from + n > *len) n = *len - from;
        memmove(buf + at + n, buf + at, *len - at);
        memmove(buf + at, buf + from, n); /* the ranges may overlap */
        *len += n;
      }
      break;
    default: *len = at + 1; break;
    }
  }
}

static void run_pattern(const char *pattern, int per_file) {
  glob_t g;
  cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "%s", pattern);
  int runs = 0;
  for (size_t i = 0; i < g.gl_pathc; i += 3) {
    size_t len;
    char *orig = test_read_file(g.gl_pathv[i], &len);
    if (!orig || len > 200000) {
      free(orig);
      continue;
    }
    size_t cap = len + 4096;
    char *buf = malloc(cap);
    for (int k = 0; k < per_file; k++) {
      memcpy(buf, orig, len);
      size_t n = len;
      mutate(buf, &n, cap);
      sc_arena *a = sc_arena_new(32u << 20);
      sc_options opt = {0};
      opt.split_input_file = k & 1;
      sc_report *r = NULL;
      sc_check(a, buf, n, &opt, &r);
      cr_assert_not_null(r);
      for (size_t d = 0; d < r->ndiags; d++) cr_assert_leq(r->diags[d].offset, n);
      free(sc_report_json(r, false));
      free(sc_report_text(r, false));
      sc_arena_free(a);
      runs++;
    }
    free(buf);
    free(orig);
  }
  globfree(&g);
  cr_assert_gt(runs, 0);
}

Test(mutation, stablehlo_corpus, .timeout = 120) { run_pattern("../shared/corpus/jax/jax_backcompat/*.mlir", 60); }
Test(mutation, shardy_corpus, .timeout = 120) { run_pattern("../shared/corpus/shardy/*/*.mlir", 60); }
Test(mutation, hlo_corpus, .timeout = 120) { run_pattern("../shared/corpus/xla/hlo/*.hlo", 40); }
