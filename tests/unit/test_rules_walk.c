/* The rule engine's walk: table rows subscribe to op kinds, one preorder walk dispatches, and each
 * rule's diagnostics still come out in table order (as if the rules ran one after another). */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"
#include "model/model.h"
#include "rules/rules.h"

Test(rules_walk, rows_subscribe_to_op_kinds) {
  for (size_t i = 0; i < ru_rule_table_len; i++) {
    const sc_rule *r = &ru_rule_table[i];
    if (r->visit) cr_expect(r->kinds != 0, "rule %s visits ops but subscribes to no op kind", r->name);
    else cr_expect(r->kinds == 0 && r->ccs == 0, "rule %s subscribes to op kinds but has no visit", r->name);
    cr_expect(r->kinds <= SC_KINDS_ALL, "rule %s: kinds beyond SC_OP_KIND_COUNT", r->name);
    cr_expect(!r->ccs || (r->kinds & SC_KIND(SC_OP_CUSTOM_CALL)), "rule %s: custom call classes without custom calls",
              r->name);
    cr_expect(r->within < SC_OP_KIND_COUNT, "rule %s: scope is not an op kind", r->name);
    cr_expect(ru_rule_is_engine(r) == (strcmp(r->family, "syntax") == 0), "rule %s: engine rows are the syntax family",
              r->name);
  }
}

/* Parses and runs every rule on `path` (NULL when it does not parse); the ctx keeps the raw diagnostics. */
static bool run_rules(sc_arena *a, const char *path, const sc_options *opt, ru_ctx *ctx) {
  size_t len = 0;
  char *text = test_read_file(path, &len);
  cr_assert_not_null(text, "%s", path);
  char *copy = ar_strndup(a, text, len);
  free(text);
  fe_parse_error err = {0};
  ir_module *m = test_parse(a, copy, &err);
  if (!m) return false;
  ir_module_finalize(a, m);
  memset(ctx, 0, sizeof *ctx);
  ctx->arena = a;
  ctx->options = opt;
  ctx->module = m;
  ctx->model = md_model_build(a, m, opt);
  ctx->buf = copy;
  ctx->len = len;
  ru_rules_run(ctx, NULL);
  return true;
}

Test(rules_walk, diagnostics_come_out_in_table_order) {
  glob_t g;
  cr_assert_eq(glob("tests/modules/*/*.bad.mlir", 0, NULL, &g), 0);
  size_t runs = 0, multi = 0;
  for (size_t f = 0; f < g.gl_pathc; f++) {
    sc_arena *a = sc_arena_new(0);
    sc_options opt = {0};
    ru_ctx ctx;
    if (run_rules(a, g.gl_pathv[f], &opt, &ctx)) {
      runs++;
      size_t last = 0;
      for (size_t k = 0; k < ctx.diags.n; k++) {
        const sc_rule *r = ru_rule_by_code(ctx.diags.v[k].code);
        cr_assert_not_null(r);
        size_t at = (size_t)(r - ru_rule_table);
        cr_expect_geq(at, last, "%s: %s reported after a later rule's diagnostic", g.gl_pathv[f], r->code);
        if (at != last && k) multi++;
        last = at;
      }
      for (size_t k = 0; k < ctx.causes.n; k++)
        cr_expect_lt(ctx.causes.v[k].diag, ctx.diags.n, "%s: a link to no diagnostic", g.gl_pathv[f]);
    }
    sc_arena_free(a);
  }
  globfree(&g);
  cr_assert_gt(runs, 50);
  cr_assert_gt(multi, 0, "no module had diagnostics of several rules");
}

Test(rules_walk, a_cancelled_request_runs_no_rule) {
  sc_arena *a = sc_arena_new(0);
  atomic_int cancel = 1;
  sc_options opt = {0};
  opt.cancel = &cancel;
  ru_ctx ctx;
  cr_assert(run_rules(a, "tests/modules/manual/manual-isolation.bad.mlir", &opt, &ctx));
  cr_assert_eq(ctx.diags.n, 0);
  cr_assert_null(ctx.rule);
  sc_arena_free(a);
}

Test(rules_walk, scoped_rules_see_ops_nested_in_their_scope) {
  sc_arena *a = sc_arena_new(0);
  sc_options opt = {0};
  ru_ctx ctx;
  cr_assert(run_rules(a, "tests/modules/manual/manual-isolation.bad.mlir", &opt, &ctx));
  size_t n = 0;
  for (size_t k = 0; k < ctx.diags.n; k++) n += strcmp(ctx.diags.v[k].code, "SC0508") == 0;
  cr_assert_gt(n, 0, "manual-isolation (scoped to manual computations) reported nothing");
  sc_arena_free(a);
}
