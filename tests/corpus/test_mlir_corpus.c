/* Corpus: every StableHLO/MLIR module nobody here wrote parses with zero syntax diagnostics. */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"

#define CORPUS "../shared/corpus"

/* Checks every file matching `pattern`; returns how many were checked. Fails on any syntax error. */
static size_t check_no_syntax_errors(const char *pattern, bool split) {
  glob_t g;
  cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no files match %s (is ../shared/corpus beside the checkout?)", pattern);
  size_t failures = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    size_t len;
    char *buf = test_read_file(g.gl_pathv[i], &len);
    cr_assert_not_null(buf, "cannot read %s", g.gl_pathv[i]);
    sc_arena *a = sc_arena_new(0);
    sc_options opt = {0};
    opt.split_input_file = split;
    opt.input_name = g.gl_pathv[i];
    sc_report *r = NULL;
    cr_assert_eq(sc_check(a, buf, len, &opt, &r), SC_OK, "%s", g.gl_pathv[i]);
    for (size_t k = 0; k < r->ndiags; k++) {
      if (strcmp(r->diags[k].rule, "syntax") && strcmp(r->diags[k].rule, "input-limit")) continue;
      cr_log_error("%s:%u:%u: %s", g.gl_pathv[i], r->diags[k].line, r->diags[k].col, r->diags[k].message);
      failures++;
    }
    if (len > 16) cr_assert_gt(r->ops, 0, "%s: no ops found", g.gl_pathv[i]); /* one verifier file is blank */
    sc_arena_free(a);
    free(buf);
  }
  size_t n = g.gl_pathc;
  globfree(&g);
  cr_assert_eq(failures, 0, "%zu syntax diagnostics under %s", failures, pattern);
  return n;
}

Test(corpus, jax_backcompat_parses) { cr_assert_geq(check_no_syntax_errors(CORPUS "/jax/jax_backcompat/*.mlir", false), 100); }
Test(corpus, jax_backcompat_history_parses) { check_no_syntax_errors(CORPUS "/jax/jax_backcompat_history/*.mlir", false); }
Test(corpus, shardy_valid_parses) { cr_assert_geq(check_no_syntax_errors(CORPUS "/shardy/valid/*.mlir", true), 15); }
Test(corpus, stablehlo_other_producers_parse) { cr_assert_geq(check_no_syntax_errors(CORPUS "/stablehlo/*.mlir", true), 10); }
Test(corpus, shardy_verifier_tests_parse) { check_no_syntax_errors(CORPUS "/shardy/verifier/*.mlir", true); }

/* Source locations resolve through #loc aliases, named locations and callsites to the user's line. */
Test(corpus, debug_locations_resolve_to_python) {
  size_t len;
  char *buf = test_read_file(CORPUS "/jax/jax_backcompat/shardy_sharding_ops_with_different_meshes__0.mlir", &len);
  cr_assert_not_null(buf);
  sc_arena *a = sc_arena_new(0);
  ir_linemap lines = ir_linemap_build(a, buf, len);
  fe_parse_input in = {a, buf, len, 0, (uint32_t)len, &lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
  fe_parse_error err;
  ir_module *m = fe_parse_mlir(&in, &err);
  cr_assert_not_null(m);
  ir_op *perm = test_find_op(m, "stablehlo.collective_permute", 0);
  cr_assert_not_null(perm);
  cr_assert_eq(test_op_pos(m, perm).line, 40);
  cr_assert(ir_op_srcloc(m, perm).known);
  cr_assert(ir_span_eq(ir_op_srcloc(m, perm).file, "third_party/py/jax/tests/export_back_compat_test.py"));
  cr_assert_eq(ir_op_srcloc(m, perm).line, 990);
  cr_assert_eq(ir_op_srcloc(m, perm).col, 15);
  ir_op *mc = test_find_op(m, "sdy.manual_computation", 0);
  cr_assert_eq(ir_op_srcloc(m, mc).line, 992);
  sc_arena_free(a);
  free(buf);
}
