/* Every line of ../shared/corpus/xla/invalid_shardings.txt must be rejected with a clear message.
 *
 * Columns: sharding, shape, num_devices ("-" = unknown), stage, expected error, provenance. Sharding
 * strings are parsed with md_parse_gspmd_sharding and validated against the shape with
 * md_gspmd_validate; `replica_groups=mesh[...] {...}` rows go through md_parse_gspmd_mesh_axes; the two
 * HLO-verifier rows (inconsistent while / conditional shardings) are whole modules in the corpus, checked
 * with sc_check when present. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "model/model.h"

#define CORPUS "../shared/corpus/xla"

static const char k_conditional[] =
    "HloModule Conditional, num_partitions=2\n\n"
    "%branch0 (p0: f32[4]) -> f32[4] {\n  ROOT %p0 = f32[4] parameter(0), sharding={replicated}\n}\n\n"
    "%branch1 (p1: f32[4]) -> f32[4] {\n  ROOT %p1 = f32[4] parameter(0), sharding={replicated}\n}\n\n"
    "ENTRY %main (pred: pred[], x: f32[4]) -> f32[4] {\n  %pred = pred[] parameter(0)\n  %x = f32[4] parameter(1)\n"
    "  ROOT %cond = f32[4] conditional(pred[] %pred, f32[4] %x, f32[4] %x), true_computation=%branch0, "
    "false_computation=%branch1, sharding={maximal device=0}\n}\n";

static const char *check_row(sc_arena *a, char **col, const char **why_module) {
  const char *err = NULL;
  *why_module = NULL;
  ir_span text = ir_span_of(col[0], (uint32_t)strlen(col[0]));
  if (!strncmp(col[0], "replica_groups=", 15)) return md_parse_gspmd_mesh_axes(a, text, 0, &err) == 0 ? NULL : err;
  if (!strcmp(col[3], "verifier")) {
    /* "{replicated}/{maximal device=0} on while body param vs cond param" -> the corpus module */
    bool is_while = strstr(col[0], "while") != NULL;
    const char *file = CORPUS "/hlo/hlo_verifier__InconsistentWhileSharding.hlo";
    *why_module = file;
    size_t len = 0;
    char *buf = is_while ? test_read_file(file, &len) : NULL;
    if (!buf) { /* hlo_verifier_test.cc InconsistentConditionSharding, written out (not in the corpus) */
      buf = strdup(k_conditional);
      len = strlen(buf);
    }
    sc_options opt = {0};
    sc_report *r = NULL;
    sc_check(a, buf, len, &opt, &r);
    const char *msg = NULL;
    for (size_t i = 0; r && i < r->ndiags; i++)
      if (!strcmp(r->diags[i].code, "SC0216")) msg = ar_strdup(a, r->diags[i].message);
    free(buf);
    return msg;
  }
  md_sharding *s = md_parse_gspmd_sharding(a, text, 0, &err);
  if (!s) return err;
  md_shape shape;
  cr_assert(md_parse_shape(a, ir_span_of(col[1], (uint32_t)strlen(col[1])), &shape), "shape %s does not parse", col[1]);
  int64_t n = col[2][0] == '-' ? 0 : atoll(col[2]);
  return md_gspmd_validate(a, s, &shape, n, false);
}

Test(invalid_shardings, every_line_is_rejected_with_a_message) {
  size_t len;
  char *buf = test_read_file(CORPUS "/invalid_shardings.txt", &len);
  cr_assert_not_null(buf, "no corpus at " CORPUS);
  size_t rows = 0, rejected = 0;
  for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || !line[0]) continue;
    char *col[6] = {0};
    int k = 0;
    col[k++] = line;
    for (char *p = line; *p && k < 6; p++)
      if (*p == '\t') {
        *p = 0;
        col[k++] = p + 1;
      }
    cr_assert_geq(k, 4, "malformed row: %s", line);
    sc_arena *a = sc_arena_new(0);
    const char *module = NULL;
    const char *msg = check_row(a, col, &module);
    rows++;
    cr_expect_not_null(msg, "accepted: %s (shape %s, %s devices; XLA: %s)", col[0], col[1], col[2], k > 4 ? col[4] : "");
    if (msg) {
      cr_expect_gt(strlen(msg), 10, "unclear message for %s: %s", col[0], msg);
      rejected++;
      if (getenv("SC_VERBOSE")) printf("  %-60.60s -> %s\n", col[0], msg);
    }
    sc_arena_free(a);
  }
  printf("invalid shardings: %zu/%zu rejected\n", rejected, rows);
  cr_assert_geq(rows, 70);
  free(buf);
}

/* The same strings never crash the parser when truncated at any byte. */
Test(invalid_shardings, truncations_do_not_crash) {
  size_t len;
  char *buf = test_read_file(CORPUS "/invalid_shardings.txt", &len);
  cr_assert_not_null(buf);
  for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    size_t n = tab ? (size_t)(tab - line) : strlen(line);
    for (size_t cut = 0; cut <= n; cut++) {
      sc_arena *a = sc_arena_new(0);
      char *copy = ar_strndup(a, line, cut);
      const char *err = NULL;
      md_parse_gspmd_sharding(a, ir_span_of(copy, (uint32_t)cut), 0, &err);
      sc_arena_free(a);
    }
  }
  free(buf);
}
