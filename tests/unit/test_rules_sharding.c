/* Every rule of the mesh, sharding, manual and collective families has a failing and a passing test
 * module of its own (tests/modules/<family>/<rule>.bad.* / .good.*): the failing one yields exactly the
 * rule's code (nothing else), the passing one no diagnostic at all. Plus targeted cases: rule
 * selection, locations, messages, fixes and context. */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"
#include "rules/rules.h"

static const char *const k_families[] = {"mesh", "sharding", "manual", "collective"};

static sc_report *check_file(sc_arena *a, const char *path, char **buf_out) {
  size_t len;
  char *buf = test_read_file(path, &len);
  cr_assert_not_null(buf, "missing %s", path);
  sc_options opt = {0};
  sc_target_mesh mesh;
  const char *m = strstr(buf, "(checked with --mesh ");
  if (m) {
    m += strlen("(checked with --mesh ");
    const char *e = strchr(m, ')');
    char *spec = sc_arena_strndup(a, m, (size_t)(e - m));
    const char *err = NULL;
    cr_assert_eq(sc_mesh_parse(a, spec, &mesh, &err), 0, "%s: %s", path, err);
    opt.mesh = &mesh;
  }
  opt.input_name = path;
  sc_report *r = NULL;
  cr_assert_eq(sc_check(a, buf, len, &opt, &r), SC_OK);
  *buf_out = buf;
  return r;
}

static bool file_exists(const char *pattern) {
  glob_t g;
  bool ok = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;
  if (ok) globfree(&g);
  return ok;
}

Test(rules_sharding, every_rule_has_a_failing_and_a_passing_module) {
  size_t rules = 0;
  for (size_t i = 0; i < sc_rule_table_len; i++) {
    const sc_rule *r = &sc_rule_table[i];
    bool mine = false;
    for (size_t f = 0; f < 4; f++) mine |= !strcmp(r->family, k_families[f]);
    if (!mine) continue;
    rules++;
    char pat[256];
    snprintf(pat, sizeof pat, "tests/modules/%s/%s.bad.*", r->family, r->name);
    cr_expect(file_exists(pat), "rule %s has no failing module (%s)", r->name, pat);
    snprintf(pat, sizeof pat, "tests/modules/%s/%s.good.*", r->family, r->name);
    cr_expect(file_exists(pat), "rule %s has no passing module (%s)", r->name, pat);
  }
  cr_assert_geq(rules, 41);
}

Test(rules_sharding, modules_yield_exactly_their_code) {
  glob_t g;
  /* This family's modules only; the kernel/callback modules carry per-line expectations instead. */
  cr_assert_eq(glob("tests/modules/{mesh,sharding,manual,collective}/*.*", GLOB_BRACE, NULL, &g), 0);
  size_t n = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    const char *path = g.gl_pathv[i];
    bool bad = strstr(path, ".bad.") != NULL;
    if (!bad && !strstr(path, ".good.")) continue;
    sc_arena *a = sc_arena_new(0);
    char *buf;
    sc_report *r = check_file(a, path, &buf);
    const char *exp = strstr(buf, "// expect: ");
    cr_assert_not_null(exp, "%s: no '// expect:' line", path);
    exp += strlen("// expect: ");
    char code[16] = {0};
    sscanf(exp, "%15s", code);
    if (bad) {
      cr_expect_geq(test_count_code(r, code), 1, "%s: does not yield %s", path, code);
      for (size_t k = 0; k < r->ndiags; k++)
        cr_expect_str_eq(r->diags[k].code, code, "%s: also yields %s: %s", path, r->diags[k].code, r->diags[k].message);
    } else {
      cr_expect_eq(r->ndiags, 0, "%s: yields %s: %s", path, r->ndiags ? r->diags[0].code : "",
                   r->ndiags ? r->diags[0].message : "");
    }
    n++;
    sc_arena_free(a);
    free(buf);
  }
  globfree(&g);
  cr_assert_geq(n, 82);
}

/* ---- targeted cases ----------------------------------------------------------------------------- */

static sc_report *run(sc_arena *a, const char *text, const char *rules) {
  sc_options opt = {0};
  opt.rules = rules;
  return test_check(a, text, &opt);
}

static const sc_diag *find(const sc_report *r, const char *code) {
  for (size_t i = 0; i < r->ndiags; i++)
    if (!strcmp(r->diags[i].code, code)) return &r->diags[i];
  return NULL;
}

Test(rules_sharding, func_arg_problems_are_reported_on_the_func_line) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = run(a,
                     "sdy.mesh @mesh = <[\"a\"=2]>\n"
                     "\n"
                     "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"c\"}]>},\n"
                     "             %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
                     "  return %arg0 : tensor<8x8xf32>\n}\n",
                     NULL);
  const sc_diag *d = find(r, "SC0203");
  cr_assert_not_null(d);
  cr_assert_eq(d->line, 3);
  cr_assert(strstr(d->message, "arg 0 - unknown axis name: \"c\""), "%s", d->message);
  cr_assert_str_eq(d->function, "f");
  sc_arena_free(a);
}

Test(rules_sharding, rule_selection_by_glob) {
  sc_arena *a = sc_arena_new(0);
  const char *text = "sdy.mesh @mesh = <[\"x\"=4]>\n"
                     "func.func @f(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}p0]>},\n"
                     "             %arg1: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<6xf32> {\n"
                     "  return %arg0 : tensor<6xf32>\n}\n";
  sc_report *r = run(a, text, NULL);
  cr_assert_not_null(find(r, "SC0209"));
  cr_assert_not_null(find(r, "SC0210"));
  r = run(a, text, "sharding-*,-sharding-priority");
  cr_assert_null(find(r, "SC0209"));
  cr_assert_not_null(find(r, "SC0210"));
  r = run(a, text, "mesh");
  cr_assert_eq(r->ndiags, 0);
  sc_arena_free(a);
}

Test(rules_sharding, divisibility_quotes_jax_and_names_the_spec) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = run(a,
                     "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
                     "func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>}) -> tensor<6x8xf32> {\n"
                     "  return %arg0 : tensor<6x8xf32>\n}\n",
                     NULL);
  const sc_diag *d = find(r, "SC0210");
  cr_assert_not_null(d);
  cr_assert(strstr(d->message, "P('data', 'model')"), "%s", d->message);
  cr_assert(strstr(d->message, "implies that array axis 0 is partitioned 4 times, but the dimension size is 6"), "%s",
            d->message);
  cr_assert_geq(d->nfixes, 1);
  sc_arena_free(a);
}

Test(rules_sharding, gspmd_device_count_from_target_mesh) {
  sc_arena *a = sc_arena_new(0);
  const char *text = "func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = \"{devices=[4]0,1,2,3}\"}) -> tensor<8xf32> {\n"
                     "  return %arg0 : tensor<8xf32>\n}\n";
  sc_report *r = run(a, text, NULL);
  cr_assert_eq(r->ndiags, 0, "no device count known: fine");
  sc_target_mesh t;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(a, "x=2", &t, &err), 0);
  sc_options opt = {0};
  opt.mesh = &t;
  r = test_check(a, text, &opt);
  const sc_diag *d = find(r, "SC0211");
  cr_assert_not_null(d);
  cr_assert(strstr(d->message, "device 2 >= num_devices (2)"), "%s", d->message);
  sc_arena_free(a);
}

Test(rules_sharding, mesh_target_quotes_jax_export_error) {
  sc_arena *a = sc_arena_new(0);
  sc_target_mesh t;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(a, "data=8", &t, &err), 0);
  sc_options opt = {0};
  opt.mesh = &t;
  sc_report *r = test_check(a,
                            "module attributes {mhlo.num_partitions = 2 : i32} {\n"
                            "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                            "    return %arg0 : tensor<8xf32>\n  }\n}\n",
                            &opt);
  const sc_diag *d = find(r, "SC0107");
  cr_assert_not_null(d);
  /* A plain jit dump was lowered, not exported: jax.export's sentence would mislead. */
  cr_assert(strstr(d->message, "Function f was lowered for 2 devices and is checked against 8 devices."), "%s",
            d->message);
  cr_assert_null(strstr(d->message, "exported"), "%s", d->message);
  /* jax.export accepts a 1-device module on any device count (its check is nr_devices != 1). */
  r = test_check(a,
                 "module attributes {mhlo.num_partitions = 1 : i32} {\n"
                 "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                 "    return %arg0 : tensor<8xf32>\n  }\n}\n",
                 &opt);
  cr_assert_null(find(r, "SC0107"), "a plain 1-device module is fine on 8 devices");
  sc_arena_free(a);
}

Test(rules_sharding, collective_messages_name_axes_and_dimensions) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = run(a,
                     "sdy.mesh @mesh = <[\"x\"=8, \"y\"=2]>\n"
                     "func.func @f(%arg0 : tensor<16x8xf32> {sdy.sharding=#sdy.sharding<@mesh, [{\"y\"}, {\"x\"}]>}) -> tensor<16x8xf32> {\n"
                     "  %0 = sdy.all_gather [{}, {\"x\":(2)4}] %arg0 out_sharding=<@mesh, [{\"y\"}, {\"x\":(1)4}]> :  tensor<16x8xf32>\n"
                     "  return %0 : tensor<16x8xf32>\n}\n",
                     NULL);
  const sc_diag *d = find(r, "SC0604");
  cr_assert_not_null(d);
  cr_assert(strstr(d->message, "result sharding doesn't match expected sharding [\"x\":(1)2] on dimension 1"), "%s",
            d->message);
  cr_assert_eq(d->line, 3);
  sc_arena_free(a);
}

Test(rules_sharding, split_chunks_are_independent) {
  sc_arena *a = sc_arena_new(0);
  sc_options opt = {0};
  opt.split_input_file = true;
  sc_report *r = test_check(a,
                            "sdy.mesh @mesh = <[\"x\"=4]>\n"
                            "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n"
                            "// -----\n"
                            "sdy.mesh @mesh = <[\"x\"=2]>\n"
                            "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n",
                            &opt);
  cr_assert_eq(r->ndiags, 0, "%s", r->ndiags ? r->diags[0].message : "");
  sc_arena_free(a);
}

/* Machine-applicable fixes are real: applying their edits gives a module without that diagnostic. */
static char *apply_edits(const char *src, const sc_report *r) {
  size_t n = strlen(src);
  char *out = strdup(src);
  /* apply from the last edit backwards so offsets stay valid */
  for (;;) {
    const sc_edit *best = NULL;
    for (size_t i = 0; i < r->ndiags; i++)
      for (size_t k = 0; k < r->diags[i].nfixes; k++)
        for (size_t e = 0; e < r->diags[i].fixes[k].nedits; e++) {
          const sc_edit *ed = &r->diags[i].fixes[k].edits[e];
          if (ed->offset + ed->length <= n && (!best || ed->offset > best->offset)) best = ed;
        }
    if (!best) break;
    size_t rl = strlen(best->replacement);
    char *next = malloc(n - best->length + rl + 1);
    memcpy(next, out, best->offset);
    memcpy(next + best->offset, best->replacement, rl);
    memcpy(next + best->offset + rl, out + best->offset + best->length, n - best->offset - best->length + 1);
    free(out);
    out = next;
    n = strlen(out);
    ((sc_edit *)best)->length = (uint32_t)-1; /* consumed */
    ((sc_edit *)best)->offset = (uint32_t)-1;
  }
  return out;
}

Test(rules_sharding, machine_fixes_apply_cleanly) {
  const char *files[] = {"tests/modules/sharding/sharding-axis-order.bad.mlir", "tests/modules/sharding/sharding-priority.bad.mlir",
                         "tests/modules/manual/manual-axes-sorted.bad.mlir"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    sc_arena *a = sc_arena_new(0);
    char *buf;
    sc_report *r = check_file(a, files[i], &buf);
    cr_assert_geq(r->ndiags, 1);
    bool machine = false;
    for (size_t k = 0; k < r->diags[0].nfixes; k++) machine |= r->diags[0].fixes[k].machine;
    cr_assert(machine, "%s: no machine-applicable fix", files[i]);
    char *fixed = apply_edits(buf, r);
    sc_report *r2 = test_check(a, fixed, NULL);
    cr_expect_eq(r2->ndiags, 0, "%s after the fix: %s", files[i], r2->ndiags ? r2->diags[0].message : "");
    free(fixed);
    free(buf);
    sc_arena_free(a);
  }
}

Test(rules_sharding, unknown_axis_suggests_the_closest_mesh_axis) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = test_check(a,
                            "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
                            "func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {\"modle\"}]>}) -> tensor<16x32xf32> {\n"
                            "  return %arg0 : tensor<16x32xf32>\n"
                            "}\n",
                            NULL);
  cr_assert_eq(r->ndiags, 1);
  cr_assert_str_eq(r->diags[0].code, "SC0203");
  cr_assert_geq(r->diags[0].nfixes, 1);
  cr_assert(strstr(r->diags[0].fixes[0].title, "Did you mean 'model'?"), "%s", r->diags[0].fixes[0].title);
  /* No suggestion when nothing is close. */
  r = test_check(a,
                 "sdy.mesh @mesh = <[\"data\"=2]>\n"
                 "func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"zzzzzz\"}]>}) -> tensor<16xf32> {\n"
                 "  return %arg0 : tensor<16xf32>\n"
                 "}\n",
                 NULL);
  cr_assert_eq(r->ndiags, 1);
  cr_assert_null(strstr(r->diags[0].fixes[0].title, "Did you mean"));
  sc_arena_free(a);
}

Test(rules_sharding, gspmd_sharding_beyond_an_explicit_single_partition) {
  sc_arena *a = sc_arena_new(0);
  const char *bad = "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
                    "  func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = \"{devices=[2,1]<=[2]}\"}) -> tensor<8x16xf32> {\n"
                    "    return %arg0 : tensor<8x16xf32>\n"
                    "  }\n"
                    "}\n";
  sc_report *r = test_check(a, bad, NULL);
  cr_assert_eq(test_count_code(r, "SC0211"), 1);
  cr_assert(strstr(r->diags[0].message, "tile_assignment should have 1 devices but has 2"), "%s", r->diags[0].message);
  /* Without the attribute the device count is unknown: nothing to compare against. */
  const char *unknown = "func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = \"{devices=[2,1]<=[2]}\"}) -> tensor<8x16xf32> {\n"
                        "  return %arg0 : tensor<8x16xf32>\n"
                        "}\n";
  r = test_check(a, unknown, NULL);
  cr_assert_eq(r->ndiags, 0);
  sc_arena_free(a);
}

/* SC0210's fix is a real PartitionSpec (in_shardings for arguments, out_shardings for results), names a
 * mesh axis that divides the dimension when there is one, and GSPMD modules never hear of Shardy or of
 * the synthesized "_partitions" axis (QA s02). */
Test(rules_sharding, divisibility_fix_is_a_real_partition_spec) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = run(a,
                     "sdy.mesh @mesh = <[\"data\"=2, \"model\"=4]>\n"
                     "func.func @main(%arg0: tensor<6x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {\"data\"}]>})"
                     " -> (tensor<6x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"model\"}, {\"data\"}]>}) {\n"
                     "  return %arg0 : tensor<6x64xf32>\n}\n",
                     "SC0210");
  cr_assert_eq(r->ndiags, 2);
  for (size_t i = 0; i < 2; i++) {
    const sc_diag *d = &r->diags[i];
    bool result = strstr(d->message, "result #0") != NULL;
    cr_assert_geq(d->nfixes, 1);
    cr_assert_not_null(d->fixes[0].snippet);
    cr_assert(strstr(d->fixes[0].snippet, result ? "out_shardings=NamedSharding(mesh, P(None, 'data'))"
                                                 : "in_shardings=NamedSharding(mesh, P(None, 'data'))"),
              "%s", d->fixes[0].snippet);
    cr_assert_null(strstr(d->fixes[0].snippet, "without the axes"), "%s", d->fixes[0].snippet);
  }
  /* an axis that divides the dimension is suggested */
  r = run(a,
          "sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>\n"
          "func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}) -> tensor<6x8xf32> {\n"
          "  return %arg0 : tensor<6x8xf32>\n}\n",
          "SC0210");
  cr_assert_eq(r->ndiags, 1);
  cr_assert(strstr(r->diags[0].fixes[0].title, "\"y\""), "%s", r->diags[0].fixes[0].title);
  cr_assert(strstr(r->diags[0].fixes[0].snippet, "in_shardings=NamedSharding(mesh, P('y', None))"), "%s",
            r->diags[0].fixes[0].snippet);
  /* GSPMD: no Shardy, no synthesized axis */
  r = run(a,
          "module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n"
          "  func.func public @main(%arg0: tensor<7x64xf32> {mhlo.sharding = \"{devices=[8,1]<=[8]}\"}) -> tensor<7x64xf32> {\n"
          "    return %arg0 : tensor<7x64xf32>\n  }\n}\n",
          "SC0210");
  cr_assert_eq(r->ndiags, 1);
  const sc_diag *d = &r->diags[0];
  cr_assert_null(strstr(d->message, "Shardy"), "%s", d->message);
  cr_assert_null(strstr(d->message, "_partitions"), "%s", d->message);
  for (size_t i = 0; i < d->nfixes; i++) {
    cr_assert_null(strstr(d->fixes[i].title, "_partitions"));
    cr_assert(!d->fixes[i].snippet || !strstr(d->fixes[i].snippet, "_partitions"));
  }
  sc_arena_free(a);
}

/* One mistake, one diagnostic: a nested manual computation re-binding an axis also names it in its
 * in/out shardings; SC0507 is reported once (QA m08). */
Test(rules_sharding, nested_rebind_is_reported_once) {
  sc_arena *a = sc_arena_new(0);
  char *buf;
  sc_report *r = check_file(a, "tests/modules/manual/manual-axis-rebound.nested.bad.mlir", &buf);
  cr_assert_eq(test_count_code(r, "SC0507"), 1);
  free(buf);
  sc_arena_free(a);
}

/* ---- JAX policy versus IR validity (docs/rules-policy.md) ------------------------------------------ */

static sc_severity severity_of(const sc_report *r, const char *code) {
  const sc_diag *d = find(r, code);
  cr_assert_not_null(d, "no %s", code);
  return d->severity;
}

#define NONDIVISIBLE_MAIN                                                                                    \
  "  sdy.mesh @mesh = <[\"x\"=4]>\n"                                                                          \
  "  func.func @main(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<6xf32> {\n" \
  "    %0 = call @inner(%arg0) : (tensor<6xf32>) -> tensor<6xf32>\n"                                          \
  "    return %0 : tensor<6xf32>\n  }\n"                                                                      \
  "  func.func private @inner(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<6xf32> {\n" \
  "    return %arg0 : tensor<6xf32>\n  }\n"

Test(rules_sharding, jit_boundary_divisibility_is_an_error_only_at_a_jax_entry) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = run(a, "module @jit_f {\n" NONDIVISIBLE_MAIN "}\n", "sharding-divisibility");
  cr_assert_eq(test_count_code(r, "SC0210"), 2);
  cr_assert_eq(r->errors, 1, "the entry function only");
  cr_assert_eq(r->notes, 1, "the private callee is a note");
  r = run(a, "module @shardy_test {\n" NONDIVISIBLE_MAIN "}\n", "sharding-divisibility");
  cr_assert_eq(test_count_code(r, "SC0210"), 2);
  cr_assert_eq(r->errors, 0, "Shardy and XLA pad it: another producer's module gets notes");
  sc_arena_free(a);
}

Test(rules_sharding, several_device_counts_is_jax_policy_and_ignores_unused_meshes) {
  const char *meshes = "  sdy.mesh @mesh = <[\"x\"=8]>\n  sdy.mesh @small = <[\"x\"=2]>\n";
  const char *both = "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> "
                     "(tensor<8xf32> {sdy.sharding = #sdy.sharding<@small, [{\"x\"}]>}) {\n"
                     "    return %arg0 : tensor<8xf32>\n  }\n}\n";
  const char *one = "  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> "
                    "tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n";
  sc_arena *a = sc_arena_new(0);
  char buf[2048];
  snprintf(buf, sizeof buf, "module @jit_f {\n%s%s", meshes, both);
  cr_assert_eq(severity_of(run(a, buf, "mesh-device-count"), "SC0105"), SC_SEV_ERROR);
  snprintf(buf, sizeof buf, "module {\n%s%s", meshes, both);
  cr_assert_eq(severity_of(run(a, buf, "mesh-device-count"), "SC0105"), SC_SEV_NOTE);
  snprintf(buf, sizeof buf, "module @jit_f {\n%s%s", meshes, one);
  cr_assert_eq(run(a, buf, "mesh-device-count")->ndiags, 0, "@small shards nothing");
  sc_arena_free(a);
}

Test(rules_sharding, unreduced_in_partial_shard_map_is_jax_policy) {
  const char *body = "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                     "  func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {jax.result_info = \"\"}) {\n"
                     "    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"x\"}, {}], unreduced={\"y\"}>] "
                     "out_shardings=[<@mesh, [{\"x\"}, {}]>] manual_axes={\"x\"} (%arg1: tensor<4x8xf32>) {\n"
                     "      sdy.return %arg1 : tensor<4x8xf32>\n"
                     "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
                     "    return %0 : tensor<8x8xf32>\n  }\n}\n";
  sc_arena *a = sc_arena_new(0);
  char buf[2048];
  snprintf(buf, sizeof buf, "module {\n%s", body);
  cr_assert_eq(severity_of(run(a, buf, "manual-unreduced-partial"), "SC0512"), SC_SEV_ERROR, "jax.result_info marks JAX");
  char *plain = strdup(buf), *mark = strstr(plain, " {jax.result_info = \"\"}");
  memmove(mark, mark + strlen(" {jax.result_info = \"\"}"), strlen(mark + strlen(" {jax.result_info = \"\"}")) + 1);
  memcpy(strstr(plain, "-> (tensor<8x8xf32>)"), "->  tensor<8x8xf32> ", 20);
  cr_assert_eq(severity_of(run(a, plain, "manual-unreduced-partial"), "SC0512"), SC_SEV_NOTE, "%s", plain);
  free(plain);
  sc_arena_free(a);
}

/* An axis typo one or two edits from a mesh axis gets a machine fix renaming it; applied, the module is
 * clean. */
Test(rules_sharding, axis_typo_gets_a_machine_rename) {
  sc_arena *a = sc_arena_new(0);
  const char *text = "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
                     "func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, "
                     "{\"modle\"}]>}) -> tensor<8x4xf32> {\n"
                     "  return %arg0 : tensor<8x4xf32>\n}\n";
  sc_report *r = test_check(a, text, NULL);
  const sc_diag *d = find(r, "SC0203");
  cr_assert_not_null(d);
  const sc_fix *f = NULL;
  for (size_t i = 0; i < d->nfixes; i++)
    if (d->fixes[i].machine) f = &d->fixes[i];
  cr_assert_not_null(f, "a machine-applicable rename");
  cr_assert_str_eq(f->title, "Rename the axis \"modle\" to 'model' in this sharding");
  cr_assert_eq(f->nedits, 1);
  const sc_edit *e = &f->edits[0];
  cr_assert_eq(strncmp(text + e->offset, "\"modle\"", e->length), 0);
  char *fixed = sc_arena_printf(a, "%.*s%s%s", (int)e->offset, text, e->replacement, text + e->offset + e->length);
  cr_assert(strstr(fixed, "[{\"data\"}, {\"model\"}]"), "%s", fixed);
  cr_assert_eq(test_check(a, fixed, NULL)->ndiags, 0, "%s", fixed);
  sc_arena_free(a);
}
