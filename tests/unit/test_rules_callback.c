/* test_rules_callback.c — the callback family (SC04xx): machine
 * fixes that clear their diagnostic, JAX's error texts (the seeds), and what the fixes edit. */
#include "module_harness.h"

#define DIR_C "tests/modules/callback"

Test(callback, machine_fixes_clear_their_diagnostic) { cr_assert_geq(mh_check_fixes_dir(DIR_C), 8); }

Test(callback, sharding_in_manual_shardy) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_C "/callback-sharding-in-manual.bad.mlir", "SC0401", &a, &m, &r);
  cr_expect(strstr(d->message, "callbacks do not support specifying sharding inside spmd computations") == d->message,
            "%s", d->message);
  cr_expect_str_eq(d->target, "xla_ffi_python_cpu_callback");
  cr_expect_str_eq(mh_context(d, "manual_axes", 0), "data");
  cr_expect_str_eq(mh_context(d, "manual_computation", 0), "sdy.manual_computation at line 6");
  cr_expect_not_null(mh_fix_with(d, "jax.pure_callback(fn, result_shape, x)"));
  const sc_fix *f = mh_machine_fix(d);
  cr_assert_not_null(f);
  size_t n;
  char *fixed = mh_apply(m.text, m.len, f, &n);
  const char *line = strstr(fixed, "@xla_ffi_python_cpu_callback");
  cr_assert_not_null(line);
  const char *eol = strchr(line, '\n');
  cr_expect(!mh_has(line, (size_t)(eol - line), "sdy.sharding"), "the sdy.sharding attribute is removed: %.*s",
            (int)(eol - line), line);
  cr_expect(mh_has(line, (size_t)(eol - line), "result_layouts = [dense<0> : tensor<1xindex>]} :"),
            "the dict stays well-formed: %.*s", (int)(eol - line), line);
  free(fixed);
  mh_release(a, &m);
}

Test(callback, sharding_in_manual_gspmd_becomes_manual) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_C "/callback-sharding-in-manual.gspmd.bad.mlir", "SC0401", &a, &m, &r);
  cr_expect_str_eq(mh_context(d, "partitioner", 0), "gspmd");
  const sc_fix *f = mh_machine_fix(d);
  cr_assert_not_null(f);
  cr_assert_eq(f->nedits, 1);
  cr_expect_str_eq(f->edits[0].replacement, "mhlo.sharding = \"{manual}\"");
  mh_release(a, &m);
}

Test(callback, partial_manual) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_C "/callback-partial-manual.bad.mlir", "SC0402", &a, &m, &r);
  cr_expect(strstr(d->message, "callbacks are only supported in spmd computations when all mesh axes are partitioned "
                               "manually (no partial automatic sharding).") == d->message,
            "%s", d->message);
  cr_expect(strstr(d->message, "axes {model}"), "%s", d->message);
  const sc_fix *f = mh_fix_with(d, "axis_names={'data', 'model'}");
  cr_assert_not_null(f);
  cr_expect(strstr(f->snippet, "in_specs=(P('data'),), out_specs=P('data'), axis_names={'data', 'model'})"), "%s",
            f->snippet);
  cr_expect_not_null(mh_fix_with(d, "jax.debug.callback"));
  mh_release(a, &m);
}

Test(callback, top_level_named_sharding_gets_a_maximal_mesh) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_C "/callback-not-single-device.bad.mlir", "SC0403", &a, &m, &r);
  cr_expect(strstr(d->message, "pure_callback only supports SingleDeviceSharding, but got") == d->message, "%s",
            d->message);
  const sc_fix *f = mh_machine_fix(d);
  cr_assert_not_null(f);
  size_t n;
  char *fixed = mh_apply(m.text, m.len, f, &n);
  cr_expect(strstr(fixed, "  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"), "%s", fixed);
  cr_expect(strstr(fixed, "sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>"), "%s", fixed);
  free(fixed);
  mh_release(a, &m);
}

Test(callback, device_not_in_assignment) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_C "/callback-device-not-in-assignment.bad.mlir", "SC0404", &a, &m, &r);
  cr_expect(strstr(d->message, "Sharding provided to pure_callback specifies a device 5 that is not in the device "
                               "assignment (0, 1, 2, 3)") == d->message,
            "%s", d->message);
  mh_release(a, &m);
  d = mh_diag_in(DIR_C "/callback-device-not-in-assignment.retarget.bad.mlir", "SC0404", &a, &m, &r);
  cr_expect(strstr(d->message, "mesh data=4 has 4 devices"), "%s", d->message);
  mh_release(a, &m);
}

Test(callback, partitioned_ordered_platform) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_C "/callback-partitioned-tpu.bad.mlir", "SC0405", &a, &m, &r);
  cr_expect(strstr(d->message, "Partitioned callback not implemented on tpu backend.") == d->message, "%s", d->message);
  cr_expect_eq(mh_count(r, "SC0408"), 0);
  mh_release(a, &m);
  d = mh_diag_in(DIR_C "/callback-partitioned-results.bad.mlir", "SC0406", &a, &m, &r);
  cr_expect(strstr(d->message, "Partitioned callback not supported with return values.") == d->message, "%s",
            d->message);
  mh_release(a, &m);
  d = mh_diag_in(DIR_C "/callback-ordered-multi-device.bad.mlir", "SC0407", &a, &m, &r);
  cr_expect(strstr(d->message, "The following ordered effects are not supported for more than 1 device:") == d->message,
            "%s", d->message);
  cr_expect_not_null(mh_machine_fix(d));
  mh_release(a, &m);
  d = mh_diag_in(DIR_C "/callback-wrong-platform.bad.mlir", "SC0408", &a, &m, &r);
  cr_expect(strstr(d->message, "checked for cpu"), "%s", d->message);
  mh_release(a, &m);
}

Test(callback, host_transfers_are_callbacks) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  mh_diag_in(DIR_C "/callback-sharding-in-manual.sendrecv.bad.mlir", "SC0401", &a, &m, &r);
  /* one callback, one diagnostic: the recv of the send/recv pair is a related site of the send's */
  cr_expect_eq(mh_count(r, "SC0401"), 1, "the send and the recv are one diagnostic");
  cr_expect_eq(mh_find(r, "SC0401")->nrelated, 1);
  mh_release(a, &m);
}

/* One mistake, one diagnostic: a callback pinned to a device outside the assignment is SC0404 only,
 * not also the maximal mesh's SC0106 (Shardy) or the tile assignment's SC0211 (GSPMD). */
Test(callback, device_not_in_assignment_is_reported_once) {
  static const char *files[] = {DIR_C "/callback-device-not-in-assignment.bad.mlir",
                                DIR_C "/callback-device-not-in-assignment.gspmd.bad.mlir"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    sc_arena *a;
    mh_module m;
    sc_report *r = mh_check_file(files[i], &a, &m);
    cr_expect_eq(mh_count(r, "SC0404"), 1, "%s", files[i]);
    cr_expect_eq(mh_count(r, "SC0106"), 0, "%s: SC0106 duplicates SC0404", files[i]);
    cr_expect_eq(mh_count(r, "SC0211"), 0, "%s: SC0211 duplicates SC0404", files[i]);
    cr_expect_eq(r->errors, 1, "%s", files[i]);
    mh_release(a, &m);
    /* Without the callback rule, the other families still report the bad device. */
    a = sc_arena_new(0);
    mh_load(a, files[i], &m);
    m.opts.rules = "-callback-device-not-in-assignment";
    r = mh_check(a, m.text, m.len, &m.opts);
    cr_expect_eq(mh_count(r, "SC0106") + mh_count(r, "SC0211"), 1, "%s", files[i]);
    mh_release(a, &m);
  }
}

/* A sharding with a mesh of its own (HloSharding V3 `mesh[...]`) or a tile assignment spans its own
 * devices, whatever the module's mesh. */
Test(callback, spread_counts_the_devices_the_sharding_names) {
  static const char *const module =
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.custom_call @xla_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.sharding = "
      "\"{{mesh[a=2,b=2], [{a}]}}\"} : (tensor<8xf32>) -> tuple<tensor<8xf32>>\n"
      "  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<8xf32>>) -> tensor<8xf32>\n"
      "  return %1 : tensor<8xf32>\n}\n";
  sc_arena *a = sc_arena_new(0);
  sc_options o = {0};
  sc_report *r = mh_check(a, module, strlen(module), &o);
  const sc_diag *d = NULL;
  for (size_t i = 0; i < r->ndiags; i++)
    if (!strcmp(r->diags[i].code, "SC0403")) d = &r->diags[i];
  cr_assert_not_null(d);
  cr_expect(strstr(d->message, "which spans the 4 devices of its mesh"), "%s", d->message);
  sc_arena_free(a);
}
