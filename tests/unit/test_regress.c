/* Replays tests/regress/: inputs that once crashed, hung or took quadratic time (fuzzer finds and
 * audit reproducers, see tests/regress/README.md). Each must give a report without a crash, within
 * byte and step budgets linear in its size, and with every location inside the input; `propagate`
 * (pipeline and reshard passes) must answer it too. */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"

Test(regress, every_input_checks_within_linear_budgets) {
  glob_t g;
  cr_assert_eq(glob("tests/regress/*", 0, NULL, &g), 0, "run from the repository root");
  size_t replayed = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    if (strstr(g.gl_pathv[i], "README")) continue;
    size_t len;
    char *text = test_read_file(g.gl_pathv[i], &len);
    cr_assert_not_null(text, "%s", g.gl_pathv[i]);
    /* Exactly len bytes, no NUL after them: the daemon hands the library a request's bytes as they
     * are, so a read past the end (strspn on attribute text) must fail here under ASan. */
    char *buf = malloc(len ? len : 1);
    cr_assert_not_null(buf);
    memcpy(buf, text, len);
    free(text);
    sc_arena *a = sc_arena_new((16u << 20) + 96 * len);
    sc_arena_set_step_limit(a, 1000000ull + 64ull * len);
    for (int split = 0; split < 2; split++) {
      sc_options opt = {.split_input_file = split};
      sc_report *r = NULL;
      sc_status st = sc_check(a, buf, len, &opt, &r);
      cr_assert_not_null(r, "%s", g.gl_pathv[i]);
      cr_assert_eq(st, SC_OK, "%s: %s", g.gl_pathv[i], r->failure ? r->failure : "?");
      for (size_t d = 0; d < r->ndiags; d++) cr_assert_leq(r->diags[d].offset, len, "%s", g.gl_pathv[i]);
      free(sc_report_json(r, false));
      free(sc_report_text(r, false));
      /* and the propagate command: the pipeline (with its call-graph copies and export), the reshard
       * passes, the basic and aggressive strategies alone (the basic one keeping the rules it built), and
       * the rule annotation, which a crash input may reach where check does not */
      for (int pass = 0; pass < 7; pass++) {
        sc_propagate_options po = {.split_input_file = split};
        po.strategy = pass == 4 ? SC_PROPAGATE_BASIC : pass == 5 ? SC_PROPAGATE_AGGRESSIVE : pass ? SC_PROPAGATE_NONE : SC_PROPAGATE_PIPELINE;
        po.keep_sharding_rules = pass == 4;
        po.annotate_rules = pass == 6;
        po.insert_reshards = pass == 1;
        po.reshards_to_collectives = pass == 2;
        po.propagate_to_func_results = pass == 3;
        sc_propagate_result pr;
        sc_status ps = sc_propagate(a, buf, len, &po, &pr);
        cr_assert(ps == SC_OK || ps == SC_ERR_INVALID, "%s: propagate pass %d: status %d", g.gl_pathv[i], pass, ps);
      }
    }
    sc_arena_free(a);
    free(buf);
    replayed++;
  }
  globfree(&g);
  cr_assert_geq(replayed, 2, "tests/regress/ holds the regression inputs");
}
