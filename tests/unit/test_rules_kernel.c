/* test_rules_kernel.c — the kernel family (SC03xx): machine fixes
 * that clear their diagnostic, JAX's error text, both meshes named when a module is retargeted, and
 * fixes built from the module's own axes and specs. */
#include "module_harness.h"

#define DIR_K "tests/modules/kernel"
#define MOSAIC "Mosaic kernels cannot be automatically partitioned. Please wrap the call in a shard_map."

Test(kernel, machine_fixes_clear_their_diagnostic) { cr_assert_geq(mh_check_fixes_dir(DIR_K), 8); }

Test(kernel, partial_manual_message_and_context) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_K "/kernel-outside-manual.partial.bad.mlir", "SC0301", &a, &m, &r);
  cr_expect_eq(d->severity, SC_SEV_ERROR);
  cr_expect_str_eq(d->rule, "kernel-outside-manual");
  cr_expect(strstr(d->message, MOSAIC) == d->message, "message starts with JAX's text: %s", d->message);
  cr_expect(strstr(d->message, "manual over {data} only"), "%s", d->message);
  cr_expect(strstr(d->message, "model (size 2)"), "%s", d->message);
  cr_expect_str_eq(d->target, "tpu_custom_call");
  cr_expect_str_eq(mh_context(d, "manual_axes", 0), "data");
  cr_expect_str_eq(mh_context(d, "mesh_axes", 0), "data");
  cr_expect_str_eq(mh_context(d, "mesh_axes", 1), "model");
  cr_expect_str_eq(mh_context(d, "auto_axes", 0), "model");
  cr_expect_str_eq(mh_context(d, "manual_computation", 0), "sdy.manual_computation at line 5");
  cr_expect_str_eq(mh_context(d, "kernel", 0), "add_one_kernel");
  cr_expect_str_eq(mh_context(d, "partitioner", 0), "shardy");
  /* The enclosing shard_map made manual over every axis, with its real specs. */
  const sc_fix *f = mh_fix_with(d, "axis_names={'data', 'model'}");
  cr_assert_not_null(f);
  cr_expect(strstr(f->snippet, "jax.shard_map(f, mesh=mesh, in_specs=(P('data', None),), out_specs=P('data', None), "
                               "axis_names={'data', 'model'})"),
            "%s", f->snippet);
  cr_expect(strstr(f->snippet, "mesh = jax.make_mesh((4, 2), ('data', 'model'))"), "%s", f->snippet);
  /* Or a nested shard_map over the remaining axis. */
  f = mh_fix_with(d, "axis_names={'model'}");
  cr_assert_not_null(f);
  /* The module names no function inside the shard_map body: a named placeholder, never the kernel body. */
  cr_expect(strstr(f->snippet, "kernel_fn = jax.shard_map(kernel_fn, mesh=mesh"), "%s", f->snippet);
  cr_expect(strstr(f->snippet, "# kernel_fn: the function of your program that calls pl.pallas_call for "
                               "`add_one_kernel`"),
            "%s", f->snippet);
  cr_expect_null(strstr(f->snippet, "add_one_kernel = "), "%s", f->snippet);
  /* And the machine fix: a nested manual computation over "model". */
  const sc_fix *mf = mh_machine_fix(d);
  cr_assert_not_null(mf);
  cr_expect(strstr(mf->edits[0].replacement, "manual_axes={\"model\"}"), "%s", mf->edits[0].replacement);
  mh_release(a, &m);
}

Test(kernel, top_level_fix_uses_operand_and_result_specs) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_K "/kernel-outside-manual.toplevel.bad.mlir", "SC0301", &a, &m, &r);
  cr_expect(strstr(d->message, "partitioned over 4 devices (mesh data=4)"), "%s", d->message);
  /* The kernel sits in the jitted function itself (module @jit_step): `step` is what gets wrapped, with
   * its argument's and result's specs. */
  const sc_fix *f = mh_fix_with(d, "step = jax.shard_map(step, mesh=mesh");
  cr_assert_not_null(f);
  cr_expect(strstr(f->snippet, "in_specs=(P('data', None),), out_specs=P('data', None), axis_names={'data'})"), "%s",
            f->snippet);
  cr_expect(strstr(f->snippet, "import jax\nfrom jax.sharding import PartitionSpec as P\n"), "%s", f->snippet);
  cr_expect_str_eq(mh_context(d, "manual_computation", 0), "none (top level)");
  mh_release(a, &m);
}

Test(kernel, retargeted_module_names_both_meshes) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_K "/kernel-outside-manual.retarget.bad.mlir", "SC0301", &a, &m, &r);
  cr_expect(strstr(d->message, "lowered for 1 device (mhlo.num_partitions = 1)"), "%s", d->message);
  cr_expect(strstr(d->message, "target mesh data=4 (4 devices)"), "%s", d->message);
  cr_expect_str_eq(mh_context(d, "mesh_source", 0), "request");
  cr_expect_str_eq(mh_context(d, "module_mesh", 0), "1 device (mhlo.num_partitions = 1)");
  cr_expect_str_eq(mh_context(d, "kernel", 0), "matmul_kernel");
  /* The machine fix adds the target mesh and wraps the call in the private function. */
  const sc_fix *mf = mh_machine_fix(d);
  cr_assert_not_null(mf);
  cr_assert_eq(mf->nedits, 4); /* the mesh; header, operands and tail around the op */
  size_t n = 0;
  char *fixed = mh_apply(m.text, m.len, mf, &n);
  cr_expect(strstr(fixed, "  sdy.mesh @mesh = <[\"data\"=4]>\n"), "%s", fixed);
  cr_expect(strstr(fixed, "sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{}, {}]>, <@mesh, [{}, {}]>] "
                          "out_shardings=[<@mesh, [{}, {}]>] manual_axes={\"data\"}"),
            "%s", fixed);
  free(fixed);
  mh_release(a, &m);
}

Test(kernel, one_device_is_never_flagged) {
  sc_arena *a = sc_arena_new(0);
  size_t len;
  char *text = test_read_file(DIR_K "/kernel-outside-manual.retarget.bad.mlir", &len);
  sc_options o;
  memset(&o, 0, sizeof o);
  sc_report *r = mh_check(a, text, len, &o); /* no --mesh: its own 1-device mesh */
  cr_expect_eq(mh_count(r, "SC0301"), 0);
  free(text);
  sc_arena_free(a);
}

Test(kernel, explicit_axis_message_is_jax_text) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_K "/kernel-explicit-sharding.tpu.bad.mlir", "SC0302", &a, &m, &r);
  cr_expect(strstr(d->message, "pallas_call requires all mesh axes to be Manual, got (Explicit,)") == d->message, "%s",
            d->message);
  cr_expect(strstr(d->message, "operand 0 sharded over explicit axis 'data'"), "%s", d->message);
  cr_expect_eq(mh_count(r, "SC0301"), 0, "one diagnostic per kernel: JAX raises the pallas_call error first");
  cr_expect_not_null(mh_fix_with(d, "in_specs=(P('data', None),)"));
  mh_release(a, &m);
}

Test(kernel, gpu_kernels_are_warnings_naming_sharded_operands) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_K "/kernel-gpu-auto-partitioned.bad.mlir", "SC0303", &a, &m, &r);
  cr_expect_eq(d->severity, SC_SEV_WARNING);
  cr_expect(strstr(d->message, "operand 0 sharded over auto axis 'data'"), "%s", d->message);
  cr_expect(strstr(d->message, "all-gathered"), "%s", d->message);
  cr_expect_eq(r->errors, 0);
  mh_release(a, &m);
}

Test(kernel, mesh_axes_and_platform_messages) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_K "/kernel-mesh-axis-unknown.bad.mlir", "SC0304", &a, &m, &r);
  cr_expect(strstr(d->message, "mesh axis 'x'"), "%s", d->message);
  mh_release(a, &m);
  d = mh_diag_in(DIR_K "/kernel-wrong-platform.bad.mlir", "SC0306", &a, &m, &r);
  cr_expect(strstr(d->message, "Compiler params for platform tpu cannot be used for gpu lowering.") == d->message, "%s",
            d->message);
  mh_release(a, &m);
  d = mh_diag_in(DIR_K "/kernel-cpu-platform.bad.mlir", "SC0307", &a, &m, &r);
  cr_expect(strstr(d->message, "Only interpret mode is supported on CPU backend.") == d->message, "%s", d->message);
  mh_release(a, &m);
  d = mh_diag_in(DIR_K "/kernel-communication-replicas.bad.mlir", "SC0305", &a, &m, &r);
  cr_expect(strstr(d->message, "Replica lowering for Mosaic kernels not implemented.") == d->message, "%s", d->message);
  mh_release(a, &m);
}

Test(kernel, mosaic_gpu_messages) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in(DIR_K "/kernel-mosaic-gpu-multi-device.bad.mlir", "SC0308", &a, &m, &r);
  cr_expect(strstr(d->message, "Mosaic GPU only supports single-device meshes in ShardingContext. Got: 2 devices.") ==
                d->message,
            "%s", d->message);
  cr_expect_eq(mh_count(r, "SC0303"), 0);
  mh_release(a, &m);
  d = mh_diag_in(DIR_K "/kernel-mosaic-gpu-device-order.bad.mlir", "SC0309", &a, &m, &r);
  cr_expect(strstr(d->message, "Got: [3 2 1 0] device ids."), "%s", d->message);
  mh_release(a, &m);
}

Test(kernel, rule_selection) {
  sc_arena *a;
  mh_module m;
  sc_report *r = mh_check_file(DIR_K "/kernel-outside-manual.partial.bad.mlir", &a, &m);
  cr_expect_eq(mh_count(r, "SC0301"), 1);
  mh_release(a, &m);
  a = sc_arena_new(0);
  size_t len;
  char *text = test_read_file(DIR_K "/kernel-outside-manual.partial.bad.mlir", &len);
  sc_options o;
  memset(&o, 0, sizeof o);
  o.rules = "-kernel-outside-manual";
  r = mh_check(a, text, len, &o);
  cr_expect_eq(mh_count(r, "SC0301"), 0);
  free(text);
  sc_arena_free(a);
}

/* The wrap-in-manual_computation machine fix edits around the op: its size does not depend on the
 * op's attributes (a 40 MB kernel body once gave a 40 MB replacement). */
Test(kernel, wrap_fix_edits_are_small_for_huge_kernels) {
  const size_t body = 100 * 1024;
  const char *head =
      "module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"
      "  sdy.mesh @mesh = <[\"data\"=4]>\n"
      "  func.func public @main(%arg0: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) -> "
      "(tensor<32x128xf32> {jax.result_info = \"result\"}) {\n"
      "    %0 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = \"{\\22custom_call_config\\22: "
      "{\\22body\\22: \\22";
  const char *tail = "\\22, \\22serialization_format\\22: 1}}\", kernel_name = \"big\"} : (tensor<32x128xf32>) -> "
                     "tensor<32x128xf32>\n"
                     "    return %0 : tensor<32x128xf32>\n"
                     "  }\n"
                     "}\n";
  size_t hl = strlen(head), tl = strlen(tail), len = hl + body + tl;
  char *text = malloc(len + 1);
  memcpy(text, head, hl);
  for (size_t i = 0; i < body; i++) text[hl + i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i % 64];
  memcpy(text + hl + body, tail, tl + 1);
  sc_arena *a = sc_arena_new(0);
  sc_options o;
  memset(&o, 0, sizeof o);
  sc_report *r = mh_check(a, text, len, &o);
  const sc_diag *d = mh_find(r, "SC0301");
  cr_assert_not_null(d);
  const sc_fix *mf = mh_machine_fix(d);
  cr_assert_not_null(mf);
  size_t bytes = 0, replaced = 0;
  for (size_t i = 0; i < mf->nedits; i++) {
    bytes += strlen(mf->edits[i].replacement);
    replaced += mf->edits[i].length;
  }
  cr_expect_lt(bytes, 2048, "machine fix replacements total %zu bytes", bytes);
  cr_expect_lt(replaced, 2048, "machine fix replaces %zu bytes of the module", replaced);
  /* Applied, it still clears the diagnostic and keeps the kernel body once. */
  cr_expect_eq(mh_check_fixes_text("huge kernel", text, len, &o), 1);
  size_t nl = 0;
  char *fixed = mh_apply(text, len, mf, &nl);
  cr_expect_eq(nl, len + bytes - replaced);
  cr_expect(strstr(fixed, "%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {}]>] "
                          "out_shardings=[<@mesh, [{}, {}]>] manual_axes={\"data\"} (%sc"),
            "%.400s", fixed);
  free(fixed);
  free(text);
  sc_arena_free(a);
}
