/* test_modules.c — the test modules of every family (tests/modules/<family>/, format in
 * module_harness.h) yield exactly their expectations, and every rule of the table is complete: a
 * catalog entry with examples, its page docs/rules/CODE.md, a failing module that expects its code and
 * a passing module of its own that does not. */
#include <glob.h>
#include <unistd.h>

#include "module_harness.h"

Test(modules, every_module_yields_exactly_its_expectations) {
  glob_t g;
  cr_assert_eq(glob("tests/modules/*/*.{mlir,hlo}", GLOB_BRACE, NULL, &g), 0, "no test modules: run from the repository root");
  size_t failed = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) failed += !mh_check_module(g.gl_pathv[i]);
  printf("modules: %zu/%zu yield exactly their expectations\n", g.gl_pathc - failed, g.gl_pathc);
  cr_expect_geq(g.gl_pathc, 190, "only %zu test modules", g.gl_pathc);
  globfree(&g);
}

/* Rules whose input is not text (a jax.export container, MLIR bytecode from a newer producer) cannot
 * have a module in tests/modules or a text example in the catalog: the test named here builds their
 * inputs and must assert the code both ways. */
static const struct {
  const char *code, *test;
} k_binary_input[] = {
    {"SC0003", "tests/corpus/test_bytecode_corpus.c"},
    {"SC0701", "tests/corpus/exported_test.sh"},
    {"SC0702", "tests/corpus/exported_test.sh"},
    {"SC0703", "tests/corpus/exported_test.sh"},
};

/* The catalog checks its examples with default options; a limit below the default cannot be shown there
 * (their modules carry `// max-ops:` / `// max-steps:`). */
static bool example_needs_options(const char *code) { return !strcmp(code, "SC0002") || !strcmp(code, "SC0004"); }

static const char *binary_input_test(const char *code) {
  for (size_t i = 0; i < sizeof k_binary_input / sizeof *k_binary_input; i++)
    if (!strcmp(k_binary_input[i].code, code)) return k_binary_input[i].test;
  return NULL;
}

/* Whether the module's `// expect:` marks name `code`. */
static bool module_expects(const char *path, const char *code) {
  size_t len;
  char *text = test_read_file(path, &len);
  cr_assert_not_null(text, "cannot read %s", path);
  char *exp = mh_expected(text);
  char needle[32];
  snprintf(needle, sizeof needle, ":%s ", code);
  bool found = strstr(exp, needle) != NULL;
  free(exp);
  free(text);
  return found;
}

/* Whether a module of the rule (<rule>.<kind>.* or <rule>.<variant>.<kind>.*) expects `code` (want) or
 * not (!want). */
static bool has_module(const char *family, const char *rule, const char *kind, const char *code, bool want) {
  static const char *const forms[] = {"tests/modules/%s/%s.%s.*", "tests/modules/%s/%s.*.%s.*"};
  bool found = false;
  for (size_t f = 0; f < 2 && !found; f++) {
    char pat[256];
    snprintf(pat, sizeof pat, forms[f], family, rule, kind);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) continue;
    for (size_t i = 0; i < g.gl_pathc && !found; i++) found = module_expects(g.gl_pathv[i], code) == want;
    globfree(&g);
  }
  return found;
}

/* What a rule lacks, appended to `out` (a "; "-separated list); returns how many parts are missing. */
static size_t rule_gaps(const char *name, const char *family, const char *code, char *out, size_t cap) {
  size_t missing = 0;
#define GAP(what)                                                                                                      \
  do {                                                                                                                 \
    size_t used = strlen(out);                                                                                         \
    snprintf(out + used, cap - used, "%s%s", missing ? "; " : "", what);                                              \
    missing++;                                                                                                         \
  } while (0)
  const char *covered_by = binary_input_test(code);
  const sc_catalog_entry *e = sc_catalog_find(code);
  if (!e) GAP("catalog entry (lib/rules/catalog/<family>.inc)");
  else if (!e->explanation || strlen(e->explanation) < 80) GAP("catalog explanation");
  else if (!covered_by && !example_needs_options(code) && (!e->bad_example || !e->good_example)) GAP("catalog examples");
  char page[64];
  snprintf(page, sizeof page, "docs/rules/%s.md", code);
  if (access(page, R_OK) != 0) GAP("rule page (make rule-pages)");
  if (covered_by) {
    size_t len;
    char *test = test_read_file(covered_by, &len);
    if (!test || !strstr(test, code)) GAP("binary-input test that asserts it");
    free(test);
  } else {
    char what[256];
    if (!has_module(family, name, "bad", code, true)) {
      snprintf(what, sizeof what, "failing module tests/modules/%s/%s.bad.* expecting %s", family, name, code);
      GAP(what);
    }
    if (!has_module(family, name, "good", code, false)) {
      snprintf(what, sizeof what, "passing module tests/modules/%s/%s.good.*", family, name);
      GAP(what);
    }
  }
#undef GAP
  return missing;
}

Test(modules, every_rule_has_its_catalog_entry_page_and_modules) {
  size_t n = sc_rule_count(), complete = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name, *family, *code, *summary;
    sc_severity sev;
    sc_rule_info(i, &name, &family, &code, &sev, &summary);
    char gaps[1024] = "";
    if (rule_gaps(name, family, code, gaps, sizeof gaps) == 0) complete++;
    else printf("rule %s %s (%s) lacks: %s\n", code, name, family, gaps);
  }
  printf("rules: %zu/%zu complete\n", complete, n);
  cr_assert_eq(complete, n, "%zu of %zu rules are incomplete (listed above)", n - complete, n);
  cr_assert_geq(n, 76);
}
