/* One mistake, one diagnostic (structured causes folded into their root, with the folded sites as
 * related locations) and spans (every family's diagnostics underline the offending token). */
#include <criterion/criterion.h>
#include <jansson.h>

#include "helpers.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(diag, .init = setup, .fini = teardown);

static sc_report *check_path(const char *path, const char *mesh_spec, char **text_out) {
  size_t len = 0;
  char *text = test_read_file(path, &len);
  cr_assert_not_null(text, "missing %s", path);
  sc_options o = {0};
  o.input_name = path;
  size_t pl = strlen(path);
  if (pl > 4 && !strcmp(path + pl - 4, ".hlo")) o.input_format = SC_FMT_HLO;
  if (strstr(text, "// platform: tpu")) o.platform = SC_PLATFORM_TPU;
  sc_target_mesh *m = ar_alloc(A, sizeof *m);
  if (mesh_spec) {
    const char *err = NULL;
    cr_assert_eq(sc_mesh_parse(A, mesh_spec, m, &err), 0, "%s", err);
    o.mesh = m;
  }
  sc_report *r = NULL;
  cr_assert_eq(sc_check(A, text, len, &o, &r), SC_OK);
  *text_out = text;
  return r;
}

static sc_report *check_str(const char *text, const char *mesh_spec) {
  sc_options o = {0};
  o.input_name = "t.mlir";
  sc_target_mesh *m = ar_alloc(A, sizeof *m);
  if (mesh_spec) {
    const char *err = NULL;
    cr_assert_eq(sc_mesh_parse(A, mesh_spec, m, &err), 0, "%s", err);
    o.mesh = m;
  }
  return test_check(A, text, &o);
}

static const char *context(const sc_diag *d, const char *key) {
  for (size_t i = 0; i < d->ncontext; i++)
    if (!strcmp(d->context[i].key, key)) return d->context[i].values[0];
  return NULL;
}

/* The report has exactly one diagnostic, of `code`, with `nrelated` related sites of `related_code`. */
static const sc_diag *only(const sc_report *r, const char *code, size_t nrelated, const char *related_code) {
  for (size_t i = 0; i < r->ndiags; i++)
    cr_expect_str_eq(r->diags[i].code, code, "also %s: %s", r->diags[i].code, r->diags[i].message);
  cr_assert_eq(r->ndiags, 1, "%zu diagnostics, want one %s", r->ndiags, code);
  const sc_diag *d = &r->diags[0];
  cr_assert_eq(d->nrelated, nrelated, "%s has %zu related sites, want %zu", code, d->nrelated, nrelated);
  for (size_t i = 0; i < d->nrelated; i++) {
    cr_assert_str_eq(d->related[i].code, related_code);
    cr_assert_gt(d->related[i].line, 0);
    cr_assert_gt(d->related[i].end_offset, d->related[i].offset);
  }
  char want[16];
  snprintf(want, sizeof want, "%zu", nrelated);
  if (nrelated) cr_assert_str_eq(context(d, "related"), want);
  else cr_assert_null(context(d, "related"));
  return d;
}

/* The bytes a diagnostic underlines. */
static char *spanned(const char *text, const sc_diag *d) {
  cr_assert_gt(d->end_offset, d->offset, "%s has no span", d->code);
  return ar_strndup(A, text + d->offset, d->end_offset - d->offset);
}

Test(diag, retargeted_gspmd_export_is_one_sc0107_with_each_annotation_related) {
  char *text;
  sc_report *r = check_path("tests/modules/mesh/mesh-target.gspmd-retarget.bad.mlir", "data=8", &text);
  const sc_diag *d = only(r, "SC0107", 3, "SC0211");
  cr_assert(strstr(d->message, "Function step was lowered for 4 devices and is checked against 8 devices."), "%s",
            d->message);
  /* the module-level mismatch points at the attribute that fixes the device count */
  cr_assert_str_eq(spanned(text, d), "mhlo.num_partitions = 4 : i32");
  /* each related site underlines its annotation */
  cr_assert_str_eq(ar_strndup(A, text + d->related[0].offset, d->related[0].end_offset - d->related[0].offset),
                   "mhlo.sharding = \"{devices=[4,1]<=[4]}\"");
  /* JSON and text carry them */
  char *j = sc_report_json(r, false);
  json_t *root = json_loads(j, 0, NULL);
  json_t *jd = json_array_get(json_object_get(root, "diagnostics"), 0);
  cr_assert_eq(json_array_size(json_object_get(jd, "related")), 3);
  /* numbers are JSON numbers */
  cr_assert_eq(json_integer_value(json_object_get(json_object_get(jd, "context"), "related")), 3);
  cr_assert(json_is_integer(json_object_get(json_object_get(jd, "context"), "module_devices")));
  json_t *loc = json_object_get(jd, "location");
  cr_assert_eq(json_integer_value(json_object_get(loc, "end_line")), 5);
  cr_assert_eq(json_integer_value(json_object_get(loc, "end_column")), 59);
  json_decref(root);
  free(j);
  char *t = sc_report_text(r, false);
  cr_assert(strstr(t, "      |                              ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"), "%s", t);
  cr_assert(strstr(t, "= related: tests/modules/mesh/mesh-target.gspmd-retarget.bad.mlir:6:51 [SC0211]"), "%s", t);
  free(t);
  free(text);
}

Test(diag, without_retargeting_the_tile_assignments_are_fine) {
  char *text;
  sc_report *r = check_path("tests/modules/mesh/mesh-target.gspmd-retarget.bad.mlir", NULL, &text);
  cr_assert_eq(r->ndiags, 0, "%s", r->ndiags ? r->diags[0].message : "");
  free(text);
  r = check_path("tests/modules/mesh/mesh-target.gspmd-retarget.bad.mlir", "data=2,model=2", &text);
  cr_assert_eq(test_count_code(r, "SC0107"), 0);
  cr_assert_eq(test_count_code(r, "SC0211"), 0);
  free(text);
}

Test(diag, shardy_device_count_mismatch_points_at_the_mesh_declaration) {
  static const char mod[] = "module @jit_f {\n"
                            "  sdy.mesh @mesh = <[\"data\"=4]>\n"
                            "  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                            "    return %arg0 : tensor<8xf32>\n"
                            "  }\n"
                            "}\n";
  sc_report *r = check_str(mod, "data=8");
  const sc_diag *d = only(r, "SC0107", 0, NULL);
  cr_assert_eq(d->line, 2);
  cr_assert_str_eq(spanned(mod, d), "sdy.mesh @mesh = <[\"data\"=4]>");
}

Test(diag, same_device_count_other_axes_is_its_own_warning) {
  static const char mod[] = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                            "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                            "  return %arg0 : tensor<8xf32>\n"
                            "}\n";
  sc_report *r = check_str(mod, "data=8");
  const sc_diag *d = only(r, "SC0108", 0, NULL);
  cr_assert_eq(d->severity, SC_SEV_WARNING);
  cr_assert_eq(test_count_code(r, "SC0107"), 0);
}

Test(diag, send_recv_callback_pair_is_one_diagnostic) {
  char *text;
  sc_report *r = check_path("tests/modules/callback/callback-sharding-in-manual.sendrecv.bad.mlir", NULL, &text);
  const sc_diag *d = only(r, "SC0401", 1, "SC0401");
  cr_assert_eq(d->line, 9, "the send is the root");
  cr_assert_eq(d->related[0].line, 10, "the recv is related");
  free(text);
}

/* A TPU host callback with many operands: a chain of sends threaded by one token, then the recv. */
Test(diag, long_send_recv_chain_is_one_diagnostic) {
  enum { SENDS = 12 };
  char *mod = ar_alloc(A, 16384);
  size_t n = (size_t)sprintf(mod, "module @jit_f attributes {mhlo.num_partitions = 4 : i32} {\n"
                                  "  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"
                                  "  sdy.mesh @mesh = <[\"data\"=4]>\n"
                                  "  func.func public @main(%%arg0: tensor<16xf32>) -> tensor<16xf32> {\n"
                                  "    %%0 = sdy.manual_computation(%%arg0) in_shardings=[<@mesh, [{\"data\"}]>] "
                                  "out_shardings=[<@mesh, [{\"data\"}]>] manual_axes={\"data\"} (%%arg1: tensor<4xf32>) {\n"
                                  "      %%t0 = stablehlo.after_all : !stablehlo.token\n");
  for (int i = 1; i <= SENDS; i++)
    n += (size_t)sprintf(mod + n,
                         "      %%t%d = \"stablehlo.send\"(%%arg1, %%t%d) <{channel_handle = #stablehlo.channel_handle<handle = %d, "
                         "type = 2>, is_host_transfer = true}> {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} "
                         ": (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token\n",
                         i, i - 1, i);
  sprintf(mod + n,
          "      %%r:2 = \"stablehlo.recv\"(%%t%d) <{channel_handle = #stablehlo.channel_handle<handle = 99, type = 3>, "
          "is_host_transfer = true}> {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>, <@maximal_mesh_0, []>]>} "
          ": (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)\n"
          "      sdy.return %%r#0 : tensor<4xf32>\n"
          "    } : (tensor<16xf32>) -> tensor<16xf32>\n"
          "    return %%0 : tensor<16xf32>\n"
          "  }\n"
          "}\n",
          SENDS);
  sc_options o = {0};
  o.platform = SC_PLATFORM_TPU;
  sc_report *r = test_check(A, mod, &o);
  const sc_diag *d = only(r, "SC0401", SENDS, "SC0401");
  cr_assert_eq(d->line, 7, "the first send is the root");
}

Test(diag, nested_shard_map_rebinding_an_axis_is_one_diagnostic) {
  char *text;
  sc_report *r = check_path("tests/modules/manual/manual-axis-rebound.nested.bad.mlir", NULL, &text);
  const sc_diag *d = only(r, "SC0507", 2, "SC0507");
  cr_assert(strstr(d->message, "already bound by a parent sdy.manual_computation"), "%s", d->message);
  cr_assert_str_eq(spanned(text, d), "\"data\"", "the re-bound axis in manual_axes");
  free(text);
}

Test(diag, a_device_reported_by_two_families_is_one_diagnostic) {
  char *text;
  sc_report *r = check_path("tests/modules/callback/callback-device-not-in-assignment.bad.mlir", NULL, &text);
  only(r, "SC0404", 1, "SC0106");
  free(text);
  r = check_path("tests/modules/callback/callback-device-not-in-assignment.gspmd.bad.mlir", NULL, &text);
  only(r, "SC0404", 1, "SC0211");
  free(text);
}

/* Spans: one diagnostic of every family underlines what is wrong. */
Test(diag, every_family_underlines_the_culprit) {
  struct {
    const char *path, *mesh, *code, *text;
  } cases[] = {
      {"tests/modules/mesh/mesh-axis-size.bad.mlir", NULL, "SC0101", "\"y\""},
      {"tests/modules/mesh/mesh-duplicate-axis.bad.mlir", NULL, "SC0102", "\"x\""},
      {"tests/modules/mesh/mesh-num-partitions.bad.mlir", NULL, "SC0106", "sdy.mesh @mesh = <[\"x\"=8]>"},
      {"tests/modules/sharding/sharding-divisibility.bad.mlir", NULL, "SC0210", NULL},
      {"tests/modules/sharding/sharding-unknown-axis.bad.mlir", NULL, "SC0203", "\"z\""},
      {"tests/modules/sharding/sharding-duplicate-axis.bad.mlir", NULL, "SC0206", NULL},
      {"tests/modules/kernel/kernel-outside-manual.retarget.bad.mlir", "data=4", "SC0301", "@tpu_custom_call"},
      {"tests/modules/kernel/kernel-outside-manual.bad.hlo", NULL, "SC0301", "\"tpu_custom_call\""},
      {"tests/modules/callback/callback-not-single-device.bad.mlir", NULL, "SC0403", "@xla_ffi_python_cpu_callback"},
      {"tests/modules/manual/manual-unknown-axis.bad.mlir", NULL, "SC0503", "\"b\""},
      {"tests/modules/collective/collective-manual-subgroup.bad.hlo", NULL, "SC0606", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *text;
    sc_report *r = check_path(cases[i].path, cases[i].mesh, &text);
    const sc_diag *d = NULL;
    for (size_t k = 0; k < r->ndiags && !d; k++)
      if (!strcmp(r->diags[k].code, cases[i].code)) d = &r->diags[k];
    cr_assert_not_null(d, "%s: no %s", cases[i].path, cases[i].code);
    const char *s = spanned(text, d);
    if (cases[i].text) cr_expect_str_eq(s, cases[i].text, "%s: %s underlines '%s'", cases[i].path, d->code, s);
    cr_expect(d->end_line >= d->line && d->end_col > 0, "%s: end position", cases[i].path);
    free(text);
  }
  /* syntax: the token where parsing failed */
  static const char bad[] = "func.func @f() {\n  %0 = d.op(\n}\n";
  sc_report *r = check_str(bad, NULL);
  cr_assert_geq(r->ndiags, 1);
  cr_assert_str_eq(r->diags[0].code, "SC0001");
  cr_assert_gt(r->diags[0].end_offset, r->diags[0].offset);
}

/* A fix note is emitted in JSON ("note") and text. */
Test(diag, fix_notes_are_emitted) {
  char *text;
  sc_report *r = check_path("tests/modules/sharding/sharding-tile-assignment.bad.mlir", NULL, &text);
  const sc_diag *d = NULL;
  for (size_t k = 0; k < r->ndiags && !d; k++)
    if (!strcmp(r->diags[k].code, "SC0211")) d = &r->diags[k];
  cr_assert_not_null(d);
  bool noted = false;
  for (size_t k = 0; k < d->nfixes; k++) noted |= d->fixes[k].note != NULL;
  char *j = sc_report_json(r, false);
  char *t = sc_report_text(r, false);
  if (noted) {
    cr_assert(strstr(j, "\"note\":"), "%s", j);
    cr_assert(strstr(t, "note: "), "%s", t);
  }
  free(j);
  free(t);
  free(text);
}
