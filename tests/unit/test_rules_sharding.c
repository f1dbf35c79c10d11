/* test_rules_sharding.c — the mesh, sharding, manual and collective families: rule selection,
 * locations, messages, fixes and context. (Every test module's expectations and every rule's failing and
 * passing module: test_modules.c.) */
#include "module_harness.h"

/* ---- targeted cases ----------------------------------------------------------------------------- */

static sc_report *run(sc_arena *a, const char *text, const char *rules) {
  sc_options opt = {0};
  opt.rules = rules;
  return test_check(a, text, &opt);
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
  const sc_diag *d = mh_find(r, "SC0203");
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
  cr_assert_not_null(mh_find(r, "SC0209"));
  cr_assert_not_null(mh_find(r, "SC0210"));
  r = run(a, text, "sharding-*,-sharding-priority");
  cr_assert_null(mh_find(r, "SC0209"));
  cr_assert_not_null(mh_find(r, "SC0210"));
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
  const sc_diag *d = mh_find(r, "SC0210");
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
  const sc_diag *d = mh_find(r, "SC0211");
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
  const sc_diag *d = mh_find(r, "SC0107");
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
  cr_assert_null(mh_find(r, "SC0107"), "a plain 1-device module is fine on 8 devices");
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
  const sc_diag *d = mh_find(r, "SC0604");
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

/* Machine-applicable fixes are real: applying one gives a module without that diagnostic. */
Test(rules_sharding, machine_fixes_apply_cleanly) {
  const char *files[] = {"tests/modules/sharding/sharding-axis-order.bad.mlir", "tests/modules/sharding/sharding-priority.bad.mlir",
                         "tests/modules/manual/manual-axes-sorted.bad.mlir"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    sc_arena *a;
    mh_module m;
    sc_report *r = mh_check_file(files[i], &a, &m);
    cr_assert_eq(r->ndiags, 1, "%s", files[i]);
    const sc_fix *machine = mh_machine_fix(&r->diags[0]);
    cr_assert_not_null(machine, "%s: no machine-applicable fix", files[i]);
    size_t fixed_len;
    char *fixed = mh_apply(m.text, m.len, machine, &fixed_len);
    sc_report *r2 = mh_check(a, fixed, fixed_len, &m.opts);
    cr_expect_eq(r2->ndiags, 0, "%s after the fix: %s", files[i], r2->ndiags ? r2->diags[0].message : "");
    free(fixed);
    mh_release(a, &m);
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
  sc_arena *a;
  mh_module m;
  sc_report *r = mh_check_file("tests/modules/manual/manual-axis-rebound.nested.bad.mlir", &a, &m);
  cr_assert_eq(test_count_code(r, "SC0507"), 1);
  mh_release(a, &m);
}

/* ---- JAX policy versus IR validity (docs/rules-policy.md) ------------------------------------------ */

static sc_severity severity_of(const sc_report *r, const char *code) {
  const sc_diag *d = mh_find(r, code);
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
  const sc_diag *d = mh_find(r, "SC0203");
  cr_assert_not_null(d);
  const sc_fix *f = mh_machine_fix(d);
  cr_assert_not_null(f, "a machine-applicable rename");
  cr_assert_str_eq(f->title, "Rename the axis \"modle\" to 'model' in this sharding");
  cr_assert_eq(f->nedits, 1);
  const sc_edit *e = &f->edits[0];
  cr_assert_eq(strncmp(text + e->offset, "\"modle\"", e->length), 0);
  char *fixed = ar_printf(a, "%.*s%s%s", (int)e->offset, text, e->replacement, text + e->offset + e->length);
  cr_assert(strstr(fixed, "[{\"data\"}, {\"model\"}]"), "%s", fixed);
  cr_assert_eq(test_check(a, fixed, NULL)->ndiags, 0, "%s", fixed);
  sc_arena_free(a);
}

/* Ops that write the same sharding text share one parse (the model keeps no copy per op); each
 * diagnostic and machine fix still points into its own op's text. */
Test(rules_sharding, repeated_op_shardings_are_placed_at_each_occurrence) {
  sc_arena *a = sc_arena_new(0);
  const char *text =
      "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
      "func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"data\"}, {\"modle\"}]> : tensor<8x4xf32>\n"
      "      %1 = sdy.sharding_constraint %0 <@mesh, [{\"data\"}, {\"modle\"}]> : tensor<8x4xf32>\n"
      "  %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"modle\"}, {}]>]>} : tensor<8x4xf32>\n"
      "   %3 = stablehlo.add %2, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"modle\"}, {}]>]>} : tensor<8x4xf32>\n"
      "  return %3 : tensor<8x4xf32>\n}\n";
  sc_report *r = test_check(a, text, NULL);
  cr_assert_eq(mh_count(r, "SC0203"), 4);
  uint32_t line = 3;
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    if (strcmp(d->code, "SC0203")) continue;
    cr_assert_eq(d->line, line++, "%s", d->message);
    cr_assert_eq(strncmp(text + d->offset, "\"modle\"", 7), 0, "the span starts at the axis of its own line");
    const sc_fix *f = mh_machine_fix(d);
    cr_assert_not_null(f);
    cr_assert_eq(f->nedits, 1);
    cr_assert_eq(f->edits[0].offset, d->offset, "the rename edits the op's own text");
  }
  const char *gspmd = "module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
                      "  func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {\n"
                      "    %0 = stablehlo.add %arg0, %arg0 {mhlo.sharding = \"{devices=[2,1]<=[2]}\"} : tensor<8x4xf32>\n"
                      "      %1 = stablehlo.add %0, %0 {mhlo.sharding = \"{devices=[2,1]<=[2]}\"} : tensor<8x4xf32>\n"
                      "    return %1 : tensor<8x4xf32>\n  }\n}\n";
  r = test_check(a, gspmd, NULL);
  cr_assert_eq(mh_count(r, "SC0211"), 2);
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    cr_assert_eq(d->line, 3 + i, "%s", d->message);
    cr_assert(strstr(d->message, "invalid sharding {devices=[2,1]<=[2]}"), "%s", d->message);
    cr_assert_eq(strncmp(gspmd + d->offset, "mhlo.sharding", 13), 0, "its own attribute: %s", gspmd + d->offset);
  }
  sc_arena_free(a);
}
