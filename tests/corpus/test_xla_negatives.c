/* XLA HLO corpus (../shared/corpus/xla/hlo, INDEX.tsv): the negative tests (expected != ok: verifier,
 * sharding propagation and SPMD partitioner errors) are flagged with an error; the others get none.
 * Negative rows are checked with the device count their XLA test used (column num_devices_in_test),
 * as XLA only validates device ids with num_partitions set. */
#include <criterion/criterion.h>

#include "helpers.h"

#define XLA "../shared/corpus/xla"

static size_t errors_of(const char *path, int ndev, const char **first) {
  size_t len;
  char *buf = test_read_file(path, &len);
  if (!buf) return (size_t)-1;
  sc_arena *a = sc_arena_new(0);
  sc_options opt = {0};
  sc_target_mesh mesh;
  if (ndev > 0) {
    const char *err = NULL;
    char spec[32];
    snprintf(spec, sizeof spec, "x=%d", ndev);
    cr_assert_eq(sc_mesh_parse(a, spec, &mesh, &err), 0);
    opt.mesh = &mesh;
  }
  sc_report *r = NULL;
  cr_assert_eq(sc_check(a, buf, len, &opt, &r), SC_OK);
  size_t n = 0;
  *first = NULL;
  for (size_t i = 0; i < r->ndiags; i++)
    if (r->diags[i].severity == SC_SEV_ERROR) {
      if (!n) *first = strdup(r->diags[i].message);
      n++;
    }
  sc_arena_free(a);
  free(buf);
  return n;
}

Test(xla_corpus, negatives_flagged_and_others_clean) {
  size_t len;
  char *idx = test_read_file(XLA "/INDEX.tsv", &len);
  cr_assert_not_null(idx, "no " XLA "/INDEX.tsv");
  size_t neg = 0, neg_hit = 0, ok = 0, ok_clean = 0;
  char *save = NULL;
  for (char *line = strtok_r(idx, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "file\t", 5)) continue;
    char *col[8] = {0};
    int k = 0;
    col[k++] = line;
    for (char *p = line; *p && k < 8; p++)
      if (*p == '\t') {
        *p = 0;
        col[k++] = p + 1;
      }
    if (k < 8) continue;
    char path[512];
    snprintf(path, sizeof path, XLA "/hlo/%s", col[0]);
    bool negative = strcmp(col[7], "ok") != 0;
    const char *first = NULL;
    size_t n = errors_of(path, negative ? atoi(col[5]) : 0, &first);
    if (n == (size_t)-1) continue; /* listed but not in this subset */
    if (negative) {
      neg++;
      neg_hit += n > 0;
      cr_expect_gt(n, 0, "%s: negative test not flagged (XLA: %s)", col[0], col[7]);
    } else {
      ok++;
      ok_clean += n == 0;
      cr_expect_eq(n, 0, "%s: %s", col[0], first ? first : "");
    }
    free((void *)first);
  }
  printf("xla hlo corpus: %zu/%zu negative tests flagged, %zu/%zu other modules without errors\n", neg_hit, neg, ok_clean,
         ok);
  cr_assert_geq(neg, 8);
  free(idx);
}
