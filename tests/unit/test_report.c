/* Emitters: text (gcc/rustc style), JSON and SARIF from the same diagnostics. */
#include <criterion/criterion.h>
#include <jansson.h>

#include "helpers.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(report, .init = setup, .fini = teardown);

/* A Pallas kernel outside shard_map on 4 devices, with debug info: one SC0301 with source and fixes. */
static const char *KERNEL =
    "#loc1 = loc(\"train.py\":44:10)\n"
    "module @m attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  sdy.mesh @mesh = <[\"data\"=4]>\n"
    "  func.func public @main(%arg0: tensor<8x128xf32>) -> tensor<8x128xf32> {\n"
    "\t%0 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = \"{}\", kernel_name = \"k\"} : "
    "(tensor<8x128xf32>) -> tensor<8x128xf32> loc(#loc1)\n"
    "    return %0 : tensor<8x128xf32>\n"
    "  }\n"
    "}\n";

Test(report, text_has_location_source_line_caret_source_and_fixes) {
  sc_options opt = {0};
  opt.input_name = "k.mlir";
  sc_report *r = test_check(A, KERNEL, &opt);
  cr_assert_eq(r->errors, 1);
  char *t = sc_report_text(r, false);
  /* The Python location leads with JAX's sentence alone; the rest of the message is a note. */
  cr_assert(strstr(t, "train.py:44:10: error: Mosaic kernels cannot be automatically partitioned. Please wrap the call "
                      "in a shard_map. [SC0301]\n"),
            "%s", t);
  /* then the module location, at the culprit token (the custom call target), underlined to its end */
  cr_assert(strstr(t, "      = module: k.mlir:5:29\n"), "%s", t);
  cr_assert(strstr(t, "    5 | \t%0 = stablehlo.custom_call"), "%s", t);
  cr_assert(strstr(t, "      | \t                           ^~~~~~~~~~~~~~~~\n"), "the caret keeps the tab: %s", t);
  cr_assert(strstr(t, "      = note: Kernel `k` (tpu_custom_call): it is not inside any shard_map"), "%s", t);
  cr_assert(strstr(t, "= fix"), "%s", t);
  cr_assert(strstr(t, "= help: shardcheck explain SC0301"), "%s", t);
  cr_assert(strstr(t, "k.mlir: 1 error, 0 warnings, 0 notes\n"), "%s", t);
  cr_assert_null(strstr(t, "\033["), "no color unless asked");
  free(t);
  t = sc_report_text(r, true);
  cr_assert_not_null(strstr(t, "\033[1;31merror"));
  free(t);
}

/* HLO metadata with source_line but no source_column: the text shows `file.py:120`, never `:120:0`. */
Test(report, text_source_without_column) {
  static const char *HLO =
      "HloModule jit_step, entry_computation_layout={(f32[64,128]{1,0})->f32[64,128]{1,0}}, num_partitions=4\n"
      "\n"
      "ENTRY main.3 {\n"
      "  Arg_0.1 = f32[64,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}\n"
      "  ROOT custom-call.2 = f32[64,128]{1,0} custom-call(Arg_0.1), custom_call_target=\"tpu_custom_call\", "
      "backend_config={\"custom_call_config\": {\"body\": \"TUzv\"}}, "
      "metadata={op_name=\"jit(step)/pallas_call\" source_file=\"train.py\" source_line=120}\n"
      "}\n";
  sc_options opt = {0};
  opt.input_name = "k.hlo";
  sc_report *r = test_check(A, HLO, &opt);
  cr_assert_geq(r->errors, 1);
  char *t = sc_report_text(r, false);
  cr_expect(strstr(t, "train.py:120: error: "), "%s", t);
  cr_expect(strstr(t, "      = module: k.hlo:5:"), "%s", t);
  cr_expect_null(strstr(t, "train.py:120:0"), "%s", t);
  free(t);
}

Test(report, json_diagnostic_fields) {
  sc_report *r = test_check(A, KERNEL, NULL);
  char *s = sc_report_json(r, true);
  json_t *j = json_loads(s, 0, NULL);
  cr_assert_not_null(j);
  json_t *d = json_array_get(json_object_get(j, "diagnostics"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(d, "code")), "SC0301");
  cr_assert_str_eq(json_string_value(json_object_get(d, "rule")), "kernel-outside-manual");
  cr_assert_str_eq(json_string_value(json_object_get(d, "severity")), "error");
  json_t *loc = json_object_get(d, "location");
  cr_assert_eq(json_integer_value(json_object_get(loc, "line")), 5);
  cr_assert_eq(json_integer_value(json_object_get(loc, "column")), 29);
  cr_assert_eq(json_integer_value(json_object_get(loc, "end_line")), 5);
  cr_assert_eq(json_integer_value(json_object_get(loc, "end_column")), 45, "@tpu_custom_call is underlined");
  cr_assert_str_eq(json_string_value(json_object_get(loc, "function")), "main");
  cr_assert_str_eq(json_string_value(json_object_get(loc, "op")), "stablehlo.custom_call");
  cr_assert_str_eq(json_string_value(json_object_get(loc, "target")), "tpu_custom_call");
  json_t *src = json_object_get(d, "source_location");
  cr_assert_str_eq(json_string_value(json_object_get(src, "file")), "train.py");
  cr_assert_eq(json_integer_value(json_object_get(src, "line")), 44);
  cr_assert(json_is_object(json_object_get(d, "context")));
  json_t *fixes = json_object_get(d, "fixes");
  cr_assert_gt(json_array_size(fixes), 0);
  bool machine = false;
  for (size_t i = 0; i < json_array_size(fixes); i++) {
    json_t *f = json_array_get(fixes, i);
    const char *ap = json_string_value(json_object_get(f, "applicability"));
    cr_assert(!strcmp(ap, "manual") || !strcmp(ap, "machine"));
    if (!strcmp(ap, "machine")) {
      machine = true;
      cr_assert_gt(json_array_size(json_object_get(f, "edits")), 0);
    }
  }
  cr_assert(machine, "SC0301 carries a machine-applicable fix");
  json_decref(j);
  free(s);
}

Test(report, sarif_has_rules_results_locations_and_fixes) {
  sc_options opt = {0};
  opt.input_name = "k.mlir";
  sc_report *r = test_check(A, KERNEL, &opt);
  char *s = sc_report_sarif(r);
  json_t *j = json_loads(s, 0, NULL);
  json_t *run = json_array_get(json_object_get(j, "runs"), 0);
  json_t *rules = json_object_get(json_object_get(json_object_get(run, "tool"), "driver"), "rules");
  cr_assert_eq(json_array_size(rules), sc_rule_count());
  json_t *res = json_array_get(json_object_get(run, "results"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(res, "ruleId")), "SC0301");
  size_t idx = (size_t)json_integer_value(json_object_get(res, "ruleIndex"));
  cr_assert_str_eq(json_string_value(json_object_get(json_array_get(rules, idx), "id")), "SC0301");
  json_t *region = json_object_get(json_object_get(json_array_get(json_object_get(res, "locations"), 0), "physicalLocation"), "region");
  cr_assert_eq(json_integer_value(json_object_get(region, "startLine")), 5);
  cr_assert_not_null(json_object_get(res, "relatedLocations"), "the Python source is a related location");
  cr_assert_not_null(json_object_get(res, "fixes"));
  json_decref(j);
  free(s);
}

Test(report, invalid_utf8_in_names_still_gives_valid_json) {
  sc_options opt = {0};
  opt.input_name = "bad\xff\xfename.mlir";
  sc_report *r = test_check(A, "}\n", &opt);
  char *s = sc_report_json(r, false);
  json_t *j = json_loads(s, 0, NULL);
  cr_assert_not_null(j);
  cr_assert(strstr(json_string_value(json_object_get(json_object_get(j, "input"), "name")), "bad"));
  json_decref(j);
  free(s);
}

/* The caret line underlines [col, end_col) when the rule gave an end on the same line. */
Test(report, text_underlines_the_span_and_cuts_long_lines) {
  sc_options opt = {0};
  opt.input_name = "k.mlir";
  sc_report *r = test_check(A, KERNEL, &opt);
  sc_diag *d = &r->diags[0];
  d->col = 2, d->end_line = d->line, d->end_col = d->col + 4; /* "%0 =" after the tab: 4 columns */
  char *t = sc_report_text(r, false);
  cr_assert(strstr(t, "      | \t^~~~\n"), "%s", t);
  free(t);
  /* A 3000-byte line, the span at column 2000: shown around the span, cut with "…" on both sides. */
  char *line = ar_alloc(A, 3100);
  memset(line, 'a', 3000);
  memcpy(line + 1999, "BAD", 3);
  sc_report fake = *r;
  fake.buf = line, fake.bytes = 3000;
  sc_diag one = *d;
  one.line = 1, one.col = 2000, one.offset = 1999, one.end_line = 1, one.end_col = 2003, one.nfixes = 0;
  one.has_source = false;
  fake.diags = &one, fake.ndiags = 1;
  t = sc_report_text(&fake, false);
  cr_assert(strstr(t, "    1 | \xe2\x80\xa6" "aaaa"), "%s", t);
  cr_assert(strstr(t, "BAD"), "%s", t);
  cr_assert(strstr(t, "a\xe2\x80\xa6\n"), "%s", t);
  const char *caret = strstr(t, "^~~");
  const char *bad = strstr(t, "BAD");
  const char *bad_line = bad; while (bad_line[-1] != '\n') bad_line--;
  const char *caret_line = caret; while (caret_line[-1] != '\n') caret_line--;
  /* "…" is 3 bytes and one column; the caret line has one space for it */
  cr_assert_eq(bad - bad_line - 2, caret - caret_line, "the caret sits under the span: %s", t);
  cr_assert_lt(strlen(t), 1000, "the line was cut");
  free(t);
}

/* The caller's reader gives the Python line: shown under the headline with the called name underlined. */
static const char *read_train_py(void *user, const char *file, uint32_t line, size_t *len) {
  (void)user;
  if (strcmp(file, "train.py") || line != 44) return NULL;
  static const char text[] = "    out = pl.pallas_call(k, out_shape=x)(x)";
  *len = sizeof text - 1;
  return text;
}

Test(report, text_shows_the_python_line_the_caller_reads) {
  sc_options opt = {0};
  opt.input_name = "k.mlir";
  sc_report *r = test_check(A, KERNEL, &opt);
  sc_text_options o = {false, true, 0, read_train_py, NULL};
  char *t = sc_report_text_ex(r, &o);
  cr_assert(strstr(t, "[SC0301]\n"
                      "   44 |     out = pl.pallas_call(k, out_shape=x)(x)\n"
                      "      |           ^~~~~~~~~~~~~~\n"
                      "      = module: k.mlir:5:29\n"),
            "%s", t);
  free(t);
}

/* On a terminal of 60 columns a long module line is windowed around the caret: no line wraps, and the
 * caret stays under the span. */
Test(report, text_windows_long_lines_to_the_terminal_width) {
  sc_options opt = {0};
  opt.input_name = "k.mlir";
  char *line = ar_alloc(A, 400);
  memset(line, 'a', 300);
  memcpy(line + 199, "BAD", 3);
  line[300] = 0;
  sc_report *r = test_check(A, KERNEL, &opt);
  sc_report fake = *r;
  fake.buf = line, fake.bytes = 300;
  sc_diag one = r->diags[0];
  one.line = 1, one.col = 200, one.offset = 199, one.end_line = 1, one.end_col = 203, one.nfixes = 0;
  one.has_source = false, one.message = "Short.";
  fake.diags = &one, fake.ndiags = 1;
  sc_text_options o = {false, false, 60, NULL, NULL};
  char *t = sc_report_text_ex(&fake, &o);
  const char *bad = strstr(t, "BAD"), *caret = strstr(t, "^~~");
  cr_assert(bad && caret, "%s", t);
  const char *bad_line = bad, *caret_line = caret;
  while (bad_line[-1] != '\n') bad_line--;
  while (caret_line[-1] != '\n') caret_line--;
  cr_assert_eq(bad - bad_line - 2, caret - caret_line, "the caret sits under the span: %s", t);
  const char *nl = strchr(bad_line, '\n');
  cr_assert_leq(nl - bad_line - 4, 60, "the line fits 60 columns (two 3-byte '…'): %s", t);
  free(t);
}

/* Diagnostics are separated by a blank line; 20 related sites are listed as 8 and "and 12 more". */
Test(report, text_blank_line_between_diagnostics_and_related_capped) {
  sc_options opt = {0};
  opt.input_name = "k.mlir";
  sc_report *r = test_check(A, KERNEL, &opt);
  sc_report fake = *r;
  sc_diag two[2] = {r->diags[0], r->diags[0]};
  sc_related rel[20];
  memset(rel, 0, sizeof rel);
  for (size_t i = 0; i < 20; i++) rel[i].line = (uint32_t)i + 1, rel[i].col = 1, rel[i].code = "SC0211";
  two[0].related = rel, two[0].nrelated = 20;
  fake.diags = two, fake.ndiags = 2;
  char *t = sc_report_text_ex(&fake, NULL);
  cr_assert(strstr(t, "      = help: shardcheck explain SC0301\n\ntrain.py:44:10: error:"), "%s", t);
  cr_assert(strstr(t, "= related: k.mlir:8:1 [SC0211]\n      = related: and 12 more (all in --format json)\n"), "%s", t);
  cr_assert_null(strstr(t, "k.mlir:9:1 [SC0211]"), "%s", t);
  free(t);
}

/* Control characters in the input name (and messages) never reach the terminal raw. */
Test(report, text_escapes_the_input_name) {
  sc_options opt = {0};
  opt.input_name = "evil\033[2J\nfake.mlir:1:1: error: forged";
  sc_report *r = test_check(A, "}\n", &opt);
  char *t = sc_report_text(r, false);
  cr_assert_null(strchr(t, '\033'), "%s", t);
  cr_assert(strstr(t, "evil\\x1b[2J\\x0afake.mlir:1:1: error: forged:1:1: error:"), "%s", t);
  free(t);
}

/* One log, one run, for many reports; fingerprints survive moving every line (unrelated edits). */
Test(report, sarif_many_one_run_and_stable_fingerprints) {
  sc_options opt = {0};
  opt.input_name = "a.mlir";
  sc_report *a = test_check(A, KERNEL, &opt);
  char *moved = ar_printf(A, "// a comment\n// another\n%s", KERNEL);
  opt.input_name = "b c#.mlir";
  sc_report *b = test_check(A, moved, &opt);
  const char **fa = sc_report_fingerprints(A, a), **fb = sc_report_fingerprints(A, b);
  cr_assert_str_eq(fa[0], fb[0]);
  cr_assert_eq(strlen(fa[0]), 16);
  const sc_report *both[2] = {a, b};
  char *s = sc_report_sarif_many(both, 2, NULL);
  json_t *j = json_loads(s, 0, NULL);
  json_t *runs = json_object_get(j, "runs");
  cr_assert_eq(json_array_size(runs), 1);
  json_t *results = json_object_get(json_array_get(runs, 0), "results");
  cr_assert_eq(json_array_size(results), 2);
  json_t *loc = json_object_get(json_object_get(json_array_get(json_object_get(json_array_get(results, 1), "locations"), 0),
                                                "physicalLocation"), "artifactLocation");
  cr_assert_str_eq(json_string_value(json_object_get(loc, "uri")), "b%20c%23.mlir");
  cr_assert_str_eq(json_string_value(json_object_get(loc, "uriBaseId")), "%SRCROOT%");
  json_t *rule = json_array_get(json_object_get(json_object_get(json_object_get(json_array_get(runs, 0), "tool"), "driver"), "rules"), 0);
  cr_assert(strstr(json_string_value(json_object_get(json_object_get(rule, "help"), "markdown")), "## SC"));
  json_decref(j);
  free(s);
}
