/* Meta-test of the catalog: every rule's code has an entry, explained in three sections with its
 * examples shown; every entry's erroneous module yields exactly its code and its fixed module yields no
 * diagnostic at all; codes are unique. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "rules/rules.h"

Test(catalog, every_rule_has_an_entry_and_codes_are_unique) {
  for (size_t i = 0; i < ru_rule_table_len; i++) {
    const sc_rule *r = &ru_rule_table[i];
    cr_assert_not_null(sc_catalog_find(r->code), "rule %s (%s) has no catalog entry", r->name, r->code);
    for (size_t k = i + 1; k < ru_rule_table_len; k++) {
      cr_assert_str_neq(r->code, ru_rule_table[k].code, "code %s used twice", r->code);
      cr_assert_str_neq(r->name, ru_rule_table[k].name, "rule name %s used twice", r->name);
    }
  }
  for (size_t i = 0; i < sc_catalog_count(); i++) {
    const sc_catalog_entry *e = sc_catalog_at(i);
    cr_assert_not_null(ru_rule_by_code(e->code), "catalog entry %s has no rule", e->code);
    cr_assert_gt(strlen(e->explanation), 80, "%s: explanation too short", e->code);
    char *text = sc_explain_text(e->code);
    cr_assert_not_null(text);
    cr_assert(strstr(text, e->title));
    cr_expect(strstr(text, "What it means") && strstr(text, "When it happens") && strstr(text, "How to fix"),
              "%s: the explanation lacks a section", e->code);
    if (e->bad_example && e->good_example)
      cr_expect(strstr(text, "Erroneous module") && strstr(text, "Fixed module"), "%s: the examples are not shown", e->code);
    free(text);
  }
}

Test(catalog, examples_yield_exactly_their_code) {
  size_t checked = 0;
  for (size_t i = 0; i < sc_catalog_count(); i++) {
    const sc_catalog_entry *e = sc_catalog_at(i);
    sc_arena *a = sc_arena_new(0);
    sc_target_mesh mesh;
    sc_options opt = {0};
    if (e->bad_mesh) {
      const char *err = NULL;
      cr_assert_eq(sc_mesh_parse(a, e->bad_mesh, &mesh, &err), 0, "%s: bad mesh spec: %s", e->code, err);
      opt.mesh = &mesh;
    }
    if (e->bad_example) {
      sc_report *r = test_check(a, e->bad_example, &opt);
      cr_assert_not_null(r);
      cr_assert_geq(test_count_code(r, e->code), 1, "%s: erroneous example does not yield it", e->code);
      for (size_t k = 0; k < r->ndiags; k++)
        cr_assert_str_eq(r->diags[k].code, e->code, "%s: erroneous example also yields %s: %s", e->code, r->diags[k].code,
                         r->diags[k].message);
      checked++;
    }
    if (e->good_example) {
      sc_report *r = test_check(a, e->good_example, &opt);
      cr_assert_eq(r->ndiags, 0, "%s: fixed example yields %s: %s", e->code, r->ndiags ? r->diags[0].code : "",
                   r->ndiags ? r->diags[0].message : "");
    }
    sc_arena_free(a);
  }
  cr_assert_geq(checked, 1);
}
