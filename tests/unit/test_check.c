/* The check driver: report fields, split-input-file, mesh specs, rule selection, limits, cancel. */
#include <criterion/criterion.h>
#include <jansson.h>

#include "helpers.h"
#include "rules/rules.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(check, .init = setup, .fini = teardown);

static const char *GOOD = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  return %arg0 : tensor<4xf32>\n}\n";

Test(check, report_json_has_the_schema_fields) {
  sc_options opt = {0};
  opt.input_name = "m.mlir";
  sc_report *r = test_check(A, GOOD, &opt);
  cr_assert_not_null(r);
  char *s = sc_report_json(r, false);
  json_error_t e;
  json_t *j = json_loads(s, 0, &e);
  cr_assert_not_null(j, "%s", e.text);
  cr_assert_str_eq(json_string_value(json_object_get(j, "schema")), "shardcheck.report.v1");
  json_t *in = json_object_get(j, "input");
  cr_assert_str_eq(json_string_value(json_object_get(in, "name")), "m.mlir");
  cr_assert_str_eq(json_string_value(json_object_get(in, "format")), "stablehlo");
  cr_assert_eq(json_integer_value(json_object_get(in, "bytes")), (json_int_t)strlen(GOOD));
  cr_assert_eq(strlen(json_string_value(json_object_get(in, "sha256"))), 64);
  cr_assert_eq(json_integer_value(json_object_get(in, "functions")), 1);
  cr_assert_eq(json_integer_value(json_object_get(in, "ops")), 3);
  cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "summary"), "errors")), 0);
  cr_assert(json_is_array(json_object_get(j, "diagnostics")));
  cr_assert_not_null(json_object_get(j, "mesh"));
  json_decref(j);
  free(s);
}

/* The digest is computed once: a caller that already hashed the input (the daemon) hands it over;
 * anything that is not 64 lowercase hex digits is ignored and the library hashes. */
Test(check, input_sha256_given_or_computed) {
  sc_options opt = {0};
  sc_report *r = test_check(A, GOOD, &opt);
  char computed[65];
  memcpy(computed, r->sha256, sizeof computed);
  cr_assert_eq(strlen(computed), 64);
  const char *given = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  opt.input_sha256 = given;
  cr_assert_str_eq(test_check(A, GOOD, &opt)->sha256, given);
  opt.input_sha256 = "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff"; /* upper case */
  cr_assert_str_eq(test_check(A, GOOD, &opt)->sha256, computed);
  opt.input_sha256 = "0011"; /* too short */
  cr_assert_str_eq(test_check(A, GOOD, &opt)->sha256, computed);
}

Test(check, syntax_diagnostic_fields) {
  sc_report *r = test_check(A, "func.func @f() {\n  %0 = d.op(\n", NULL);
  cr_assert_eq(r->errors, 1);
  cr_assert_str_eq(r->diags[0].code, "SC0001");
  cr_assert_str_eq(r->diags[0].rule, "syntax");
  cr_assert_eq(r->diags[0].severity, SC_SEV_ERROR);
  cr_assert_eq(r->diags[0].line, 3);
  char *text = sc_report_text(r, false);
  cr_assert(strstr(text, "<stdin>:3:1: error: unexpected end of input: '(' opened at line 2, column 12 is not closed [SC0001]"),
            "%s", text);
  free(text);
}

Test(check, split_input_file_reports_each_chunk_with_file_lines) {
  const char *t = "func.func @a() {\n  return\n}\n// -----\nfunc.func @b( {\n}\n// -----\n\n// -----\nfunc.func @c() {\n";
  sc_options opt = {0};
  opt.split_input_file = true;
  sc_report *r = test_check(A, t, &opt);
  cr_assert_eq(r->errors, 2, "errors: %zu", r->errors);
  cr_assert_eq(r->diags[0].line, 7); /* end of the chunk: the region list never closes */
  cr_assert_eq(r->diags[1].line, 11);
  /* Without splitting the separators are comments and the whole file is one (broken) module. */
  sc_report *whole = test_check(A, t, NULL);
  cr_assert_eq(whole->errors, 1);
}

Test(check, mesh_specs) {
  sc_target_mesh m;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(A, "data=2,model=4:explicit", &m, &err), 0);
  cr_assert_eq(m.naxes, 2);
  cr_assert_str_eq(m.axes[1].name, "model");
  cr_assert_eq(m.axes[1].size, 4);
  cr_assert_eq(m.axes[1].type, SC_AXIS_EXPLICIT);
  cr_assert_eq(sc_mesh_parse(A, "x=2;devices=1,0;platform=tpu", &m, &err), 0);
  cr_assert(m.ndevice_ids == 2 && m.device_ids[0] == 1 && m.platform == SC_PLATFORM_TPU);
  cr_assert_eq(sc_mesh_parse(A, "x=0", &m, &err), -1);
  cr_assert_eq(sc_mesh_parse(A, "x=2,x=2", &m, &err), -1);
  cr_assert(strstr(err, "duplicate axis"), "%s", err);
  cr_assert_eq(sc_mesh_parse(A, "x=2:weird", &m, &err), -1);
  cr_assert_eq(sc_mesh_parse(A, "x=4;devices=0,1", &m, &err), -1);
}

Test(check, request_mesh_is_reported) {
  sc_target_mesh m;
  const char *err;
  cr_assert_eq(sc_mesh_parse(A, "data=2,model=4", &m, &err), 0);
  sc_options opt = {0};
  opt.mesh = &m;
  sc_report *r = test_check(A, GOOD, &opt);
  cr_assert_str_eq(r->mesh_source, "request");
  cr_assert_eq(r->mesh_devices, 8);
  cr_assert_eq(r->mesh_naxes, 2);
}

Test(check, rule_selection_globs) {
  ru_rule_selection sel;
  const char *err = NULL;
  cr_assert_eq(ru_rule_select(A, NULL, &sel, &err), 0);
  for (size_t i = 0; i < ru_rule_table_len; i++) cr_assert(sel.enabled[i]);
  cr_assert_eq(ru_rule_select(A, "syntax", &sel, &err), 0);
  for (size_t i = 0; i < ru_rule_table_len; i++)
    cr_assert_eq(sel.enabled[i], strcmp(ru_rule_table[i].family, "syntax") == 0);
  cr_assert_eq(ru_rule_select(A, "-input-limit", &sel, &err), 0);
  cr_assert_not(sel.enabled[ru_rule_by_name("input-limit") - ru_rule_table]);
  cr_assert(sel.enabled[ru_rule_by_name("syntax") - ru_rule_table]);
  cr_assert_eq(ru_rule_select(A, "SC000*", &sel, &err), 0);
  cr_assert_eq(ru_rule_select(A, "nope-*", &sel, &err), -1);
  cr_assert(strstr(err, "matches no rule"));
  sc_options opt = {0};
  opt.rules = "nope";
  sc_report *r = NULL;
  cr_assert_eq(sc_check(A, GOOD, strlen(GOOD), &opt, &r), SC_ERR_INVALID);
  cr_assert_not_null(r->failure);
}

Test(check, limits_and_cancel) {
  sc_options opt = {0};
  opt.max_ops = 2;
  sc_report *r = test_check(A, GOOD, &opt);
  cr_assert_eq(test_count_code(r, "SC0002"), 1);
  atomic_int cancel = 1;
  sc_options c = {0};
  c.cancel = &cancel;
  r = NULL;
  cr_assert_eq(sc_check(A, GOOD, strlen(GOOD), &c, &r), SC_ERR_CANCELLED);
  cr_assert_str_eq(r->failure, "cancelled");
  /* A tiny arena limit ends the check with SC_ERR_LIMIT, not a crash. */
  sc_arena *small = sc_arena_new(70000);
  r = NULL;
  sc_status st = sc_check(small, GOOD, strlen(GOOD), NULL, &r);
  cr_assert(st == SC_OK || st == SC_ERR_LIMIT);
  char big[200000];
  memset(big, '\n', sizeof big); /* a big line map */
  memcpy(big, GOOD, strlen(GOOD));
  big[sizeof big - 1] = 0;
  sc_arena *tiny = sc_arena_new(70000);
  r = NULL;
  cr_assert_eq(sc_check(tiny, big, strlen(big), NULL, &r), SC_ERR_LIMIT);
  sc_arena_free(small);
  sc_arena_free(tiny);
}

Test(check, sarif_and_text_render) {
  sc_report *r = test_check(A, "}\n", NULL);
  char *s = sc_report_sarif(r);
  json_t *j = json_loads(s, 0, NULL);
  cr_assert_not_null(j);
  json_t *res = json_array_get(json_object_get(json_array_get(json_object_get(j, "runs"), 0), "results"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(res, "ruleId")), "SC0001");
  cr_assert_str_eq(json_string_value(json_object_get(res, "level")), "error");
  json_decref(j);
  free(s);
}

/* The generic form carries in properties what the pretty form writes inline; both give one answer. */
Test(check, generic_form_is_checked_like_the_pretty_form) {
  const char *generic =
      "\"builtin.module\"() <{sym_name = \"jit_step\"}> ({\n"
      "  \"sdy.mesh\"() <{mesh = #sdy.mesh<[\"data\"=4]>, sym_name = \"mesh\"}> : () -> ()\n"
      "  \"func.func\"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{\"dta\"}, {}]>}], "
      "function_type = (tensor<32x128xf32>) -> tensor<32x128xf32>, res_attrs = [{jax.result_info = \"result\"}], "
      "sym_name = \"main\", sym_visibility = \"public\"}> ({\n"
      "  ^bb0(%arg0: tensor<32x128xf32>):\n"
      "    \"func.return\"(%arg0) : (tensor<32x128xf32>) -> ()\n"
      "  }) : () -> ()\n"
      "}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()\n";
  sc_report *r = test_check(A, generic, NULL);
  cr_assert_eq(r->ndiags, 1, "%zu diags, first %s", r->ndiags, r->ndiags ? r->diags[0].message : "");
  cr_assert_str_eq(r->diags[0].code, "SC0203");
  cr_assert_str_eq(r->mesh_source, "module");
  cr_assert_eq(r->mesh_devices, 4);
  fe_parse_error err;
  ir_module *m = test_parse(A, generic, &err);
  cr_assert_not_null(m);
  cr_assert_eq(ir_op_nresult_attrs(m->funcs[0]), 1);
  cr_assert_not_null(ir_attrs_find(&ir_op_result_attrs(m->funcs[0])[0], "jax.result_info"));
  cr_assert(ir_span_eq(ir_op_func_result_types(m->funcs[0])[0], "tensor<32x128xf32>"));
  cr_assert_not_null(ir_attrs_find(ir_value_attrs(ir_op_regions(m->funcs[0])[0]->blocks[0]->args[0]), "sdy.sharding"));
}
