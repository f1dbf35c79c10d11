/* The sharding model: meshes, effective/target mesh, annotations, value shardings, GSPMD shardings mapped
 * onto mesh axes, and each op's manual context (Shardy nests, GSPMD regions via @shmap_body calls,
 * partial manual, private functions called from manual bodies). */
#include <criterion/criterion.h>

#include "helpers.h"
#include "model/model.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(model, .init = setup, .fini = teardown);

static ir_module *M;

static md_model *build(const char *text, const sc_options *opt) {
  fe_parse_error err = {0};
  M = test_parse(A, text, &err);
  cr_assert_not_null(M, "parse: %s", err.message);
  sc_options none = {0};
  return md_model_build(A, M, opt ? opt : &none);
}

static ir_op *op(const char *name, int nth) {
  ir_op *o = test_find_op(M, name, nth);
  cr_assert_not_null(o, "no %s #%d", name, nth);
  return o;
}

static bool has_axis(const md_manual_context *c, const char *name) {
  for (uint32_t i = 0; i < c->nmanual_axes; i++)
    if (ir_span_eq(c->manual_axes[i], name)) return true;
  return false;
}

Test(model, meshes_and_num_partitions) {
  md_model *m = build("module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n"
                      "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                      "  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"
                      "  sdy.mesh @empty_mesh = <[]>\n"
                      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                      "    return %arg0 : tensor<8xf32>\n  }\n}\n",
                      NULL);
  cr_assert_eq(m->num_partitions, 8);
  cr_assert_eq(m->num_replicas, 1);
  cr_assert_eq(m->nmeshes, 3);
  cr_assert(m->meshes[1].maximal);
  cr_assert_not_null(m->effective);
  cr_assert(ir_span_eq(m->effective->name, "mesh"), "the multi-device mesh is the effective one");
  cr_assert_null(m->target);
  cr_assert_not_null(md_model_mesh(m, ir_span_of("empty_mesh", 10)));
  cr_assert_null(md_model_mesh(m, ir_span_of("nope", 4)));
}

Test(model, mesh_in_attribute_form) {
  md_model *m = build("sdy.mesh @mesh = #sdy.mesh<[\"x\"=2, \"y\"=4]>\n"
                      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}]>}) -> tensor<8xf32> {\n"
                      "  return %arg0 : tensor<8xf32>\n}\n",
                      NULL);
  cr_assert_eq(m->nmeshes, 1);
  cr_assert_eq(m->nerrors, 0);
  const md_mesh *mesh = md_model_mesh(m, ir_span_of("mesh", 4));
  cr_assert(mesh && mesh->naxes == 2 && mesh->devices == 8);
}

/* MLIR attribute aliases (`#s = #sdy.sharding<...>`) read as what they stand for, wherever they are
 * used: a mesh body, an argument's sharding, inside a per-value list, an alias of an alias. */
Test(model, shardy_attributes_through_aliases) {
  md_model *m = build("#mesh_xy = #sdy.mesh<[\"x\"=2, \"y\"=4]>\n"
                      "#row = #sdy.sharding<@mesh, [{\"x\"}, {}]>\n"
                      "#also_row = #row\n"
                      "#col = #sdy.sharding<@mesh, [{}, {\"y\"}]>\n"
                      "module {\n"
                      "  sdy.mesh @mesh = #mesh_xy\n"
                      "  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #also_row}) -> tensor<8x8xf32> {\n"
                      "    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[#col]>} : tensor<8x8xf32>\n"
                      "    %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[#row]>} : tensor<8x8xf32>\n"
                      "    return %1 : tensor<8x8xf32>\n  }\n}\n",
                      NULL);
  cr_assert_eq(m->nerrors, 0, "%s", m->nerrors ? m->errors[0].message : "");
  const md_mesh *mesh = md_model_mesh(m, ir_span_of("mesh", 4));
  cr_assert(mesh && mesh->naxes == 2 && mesh->devices == 8);
  const md_sharding *arg = md_model_arg_sharding(m, op("func.func", 0), 0);
  cr_assert(arg && arg->rank == 2 && arg->dims[0].naxes == 1 && ir_span_eq(arg->dims[0].axes[0].name, "x"));
  const md_sharding *neg = md_model_result_sharding(m, op("stablehlo.negate", 0), 0);
  cr_assert(neg && neg->dims[1].naxes == 1 && ir_span_eq(neg->dims[1].axes[0].name, "y"));
  const md_sharding *abs = md_model_result_sharding(m, op("stablehlo.abs", 0), 0);
  cr_assert(abs && abs->dims[0].naxes == 1 && ir_span_eq(abs->dims[0].axes[0].name, "x"));
  cr_assert(abs->offset < neg->offset, "a sharding read from an alias is located at its definition");
}

/* A generic-form sdy.mesh without its `mesh` attribute is refused as Shardy's verifier words it. */
Test(model, generic_mesh_without_mesh_attribute) {
  md_model *m = build("\"sdy.mesh\"() {sym_name = \"m\", other = {axes = [1]}} : () -> ()\n", NULL);
  cr_assert_eq(m->nerrors, 1);
  cr_assert_str_eq(m->errors[0].message, "'sdy.mesh' op requires attribute 'mesh'");
  m = build("\"sdy.mesh\"() {mesh = #sdy.mesh<[\"x\"=2]>, sym_name = \"m\"} : () -> ()\n", NULL);
  cr_assert_eq(m->nerrors, 0);
  cr_assert_eq(m->nmeshes, 1);
}

Test(model, synthesized_and_target_meshes) {
  md_model *m = build("module attributes {mhlo.num_partitions = 4 : i32} {\n"
                      "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                      "    return %arg0 : tensor<8xf32>\n  }\n}\n",
                      NULL);
  cr_assert_not_null(m->effective);
  cr_assert(ir_span_eq(m->effective->name, "_partitions"));
  cr_assert_eq(m->effective->devices, 4);

  sc_target_mesh t;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(A, "data=2,model=4:explicit", &t, &err), 0, "%s", err);
  sc_options opt = {0};
  opt.mesh = &t;
  opt.platform = SC_PLATFORM_TPU;
  m = build("func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n", &opt);
  cr_assert_not_null(m->target);
  cr_assert_eq(m->effective, m->target);
  cr_assert_eq(m->target->devices, 8);
  cr_assert_eq(m->target->axes[1].type, SC_AXIS_EXPLICIT);
  cr_assert_eq(m->platform, SC_PLATFORM_TPU);
}

Test(model, annotations_and_value_shardings) {
  md_model *m = build("sdy.mesh @mesh = <[\"x\"=4]>\n"
                      "sdy.mesh @maximal_mesh_1 = <[], device_ids=[1]>\n"
                      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> "
                      "(tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {\n"
                      "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}]>]>} : tensor<8xf32>\n"
                      "  %1 = sdy.sharding_constraint %0 <@mesh, [{\"x\"}]> : tensor<8xf32>\n"
                      "  %2 = stablehlo.custom_call @cb(%1) {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_1, []>]>} : (tensor<8xf32>) -> tensor<8xf32>\n"
                      "  return %2 : tensor<8xf32>\n}\n",
                      NULL);
  cr_assert_eq(m->nerrors, 0);
  ir_op *f = op("func.func", 0);
  const md_sharding *a0 = md_model_arg_sharding(m, f, 0);
  cr_assert_not_null(a0);
  cr_assert(a0->mesh == md_model_mesh(m, ir_span_of("mesh", 4)), "mesh references are resolved");
  cr_assert_eq(a0->dims[0].axes[0].size, 4, "full axis sizes are filled in");
  cr_assert_not_null(md_model_func_result_sharding(m, f, 0));
  cr_assert(md_model_result_sharding(m, op("stablehlo.add", 0), 0)->dims[0].open);
  const md_sharding *c = md_model_result_sharding(m, op("sdy.sharding_constraint", 0), 0);
  cr_assert(c && c->dims[0].naxes == 1);
  const md_sharding *cb = md_model_result_sharding(m, op("stablehlo.custom_call", 0), 0);
  cr_assert(cb && cb->kind == SC_SHARDING_MAXIMAL && cb->maximal_device == 1);
  /* value shardings: func argument and op results */
  cr_assert_eq(md_model_value_sharding(m, op("stablehlo.add", 0)->operands[0]), a0);
  cr_assert_eq(md_model_value_sharding(m, op("func.return", 0)->operands[0]), cb);
  cr_assert_str_eq(md_sharding_partition_spec(A, a0), "P('x')");
}

Test(model, bad_annotations_become_errors) {
  md_model *m = build("sdy.mesh @mesh = <[\"x\"=4]>\n"
                      "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}p01]>}) -> tensor<8xf32> {\n"
                      "  %0 = stablehlo.add %arg0, %arg0 {mhlo.sharding = \"{devices=[2\"} : tensor<8xf32>\n"
                      "  return %0 : tensor<8xf32>\n}\n",
                      NULL);
  cr_assert_eq(m->nerrors, 2);
  cr_assert(strstr(m->errors[0].message, "leading zeros"), "%s", m->errors[0].message);
  cr_assert_eq(m->errors[0].op, op("func.func", 0));
  cr_assert(strstr(m->errors[1].message, "expects integer") || strstr(m->errors[1].message, "expected"),
            "%s", m->errors[1].message);
}

Test(model, gspmd_mapped_onto_mesh_axes) {
  md_model *m = build("module attributes {mhlo.num_partitions = 8 : i32} {\n"
                      "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                      "  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = \"{devices=[2,4]<=[8]}\"},"
                      " %arg1: tensor<8x8xf32> {mhlo.sharding = \"{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}\"},"
                      " %arg2: tensor<8xf32> {mhlo.sharding = \"\\08\\03\\1A\\01\\02\\22\\02\\00\\01\"}) -> tensor<8x8xf32> {\n"
                      "    return %arg0 : tensor<8x8xf32>\n  }\n}\n",
                      NULL);
  cr_assert_eq(m->nerrors, 0, "%s", m->nerrors ? m->errors[0].message : "");
  ir_op *f = op("func.func", 0);
  const md_sharding *s = md_model_arg_sharding(m, f, 0);
  cr_assert(s->mapped && s->kind == SC_SHARDING_NAMED);
  cr_assert_str_eq(md_sharding_partition_spec(A, s), "P('x', 'y')");
  s = md_model_arg_sharding(m, f, 1);
  cr_assert(s->mapped, "transposed iota with a replicated subgroup maps too");
  cr_assert_str_eq(md_sharding_partition_spec(A, s), "P('y', None)");
  s = md_model_arg_sharding(m, f, 2);
  cr_assert_not_null(s, "serialized OpSharding proto");
  cr_assert_eq(s->tiles->ntile_dims, 1);
}

static const char *k_shardy_nest =
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n"
    "func.func private @helper(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = stablehlo.negate %arg0 : tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n}\n"
    "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
    "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] manual_axes={\"a\"} (%arg1: tensor<4xf32>) {\n"
    "    %1 = stablehlo.abs %arg1 : tensor<4xf32>\n"
    "    %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{\"b\"}]>] out_shardings=[<@mesh, [{\"b\"}]>] manual_axes={\"b\"} (%arg2: tensor<2xf32>) {\n"
    "      %3 = call @helper(%arg2) : (tensor<2xf32>) -> tensor<2xf32>\n"
    "      sdy.return %3 : tensor<2xf32>\n"
    "    } : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    sdy.return %2 : tensor<4xf32>\n"
    "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
    "  return %0 : tensor<8xf32>\n}\n";

Test(model, shardy_nested_manual_contexts) {
  md_model *m = build(k_shardy_nest, NULL);
  ir_op *outer = op("sdy.manual_computation", 0), *inner = op("sdy.manual_computation", 1);
  const md_manual_context *c = md_model_manual(m, outer);
  cr_assert_null(c->manual_op, "the manual computation itself is outside its body");
  cr_assert_eq(c->nmanual_axes, 0);
  c = md_model_manual(m, op("stablehlo.abs", 0));
  cr_assert_eq(c->manual_op, outer);
  cr_assert(c->nmanual_axes == 1 && has_axis(c, "a"));
  cr_assert(c->mesh && ir_span_eq(c->mesh->name, "mesh"));
  cr_assert_not(md_model_fully_manual(m, op("stablehlo.abs", 0)), "b and c are free");
  c = md_model_manual(m, inner);
  cr_assert_eq(c->manual_op, outer);
  c = md_model_manual(m, op("func.call", 0));
  cr_assert_eq(c->manual_op, inner);
  cr_assert(c->nmanual_axes == 2 && has_axis(c, "a") && has_axis(c, "b"), "union over the nest");
  /* the private function called from the inner body inherits its context */
  c = md_model_manual(m, op("stablehlo.negate", 0));
  cr_assert(c->nmanual_axes == 2 && has_axis(c, "b"));
  cr_assert_not(md_model_fully_manual(m, op("stablehlo.negate", 0)));
  cr_assert_not(c->gspmd_manual);
}

Test(model, fully_manual_and_single_device) {
  md_model *m = build("sdy.mesh @mesh = <[\"a\"=4, \"b\"=1]>\n"
                      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] manual_axes={\"a\"} (%arg1: tensor<2xf32>) {\n"
                      "    %1 = stablehlo.abs %arg1 : tensor<2xf32>\n"
                      "    sdy.return %1 : tensor<2xf32>\n"
                      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
                      "  %2 = stablehlo.abs %0 : tensor<8xf32>\n"
                      "  return %2 : tensor<8xf32>\n}\n",
                      NULL);
  cr_assert(md_model_fully_manual(m, op("stablehlo.abs", 0)), "size-1 axes count as manual");
  cr_assert_not(md_model_fully_manual(m, op("stablehlo.abs", 1)));
  m = build("func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
            "  %0 = stablehlo.abs %arg0 : tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n",
            NULL);
  cr_assert(md_model_fully_manual(m, op("stablehlo.abs", 0)), "no multi-device mesh: trivially manual");
}

static const char *gspmd_region(const char *manual_sharding) {
  return ar_printf(
      A,
      "module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n"
      "  func.func public @main(%%arg0: tensor<8192x784xf32>) -> tensor<8192x784xf32> {\n"
      "    %%0 = stablehlo.custom_call @Sharding(%%arg0) {backend_config = \"\", mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<8192x784xf32>) -> tensor<8192x784xf32>\n"
      "    %%1 = stablehlo.custom_call @SPMDFullToShardShape(%%0) {backend_config = \"\", mhlo.sharding = \"%s\"} : (tensor<8192x784xf32>) -> tensor<1024x784xf32>\n"
      "    %%2 = call @shmap_body(%%1) : (tensor<1024x784xf32>) -> tensor<1024x784xf32>\n"
      "    %%3 = stablehlo.custom_call @Sharding(%%2) {backend_config = \"\", mhlo.sharding = \"{manual}\"} : (tensor<1024x784xf32>) -> tensor<1024x784xf32>\n"
      "    %%4 = stablehlo.custom_call @SPMDShardToFullShape(%%3) {backend_config = \"\", mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<1024x784xf32>) -> tensor<8192x784xf32>\n"
      "    %%5 = stablehlo.abs %%4 : tensor<8192x784xf32>\n"
      "    return %%5 : tensor<8192x784xf32>\n  }\n"
      "  func.func private @shmap_body(%%arg0: tensor<1024x784xf32>) -> tensor<1024x784xf32> {\n"
      "    %%0 = stablehlo.custom_call @tpu_custom_call(%%arg0) {backend_config = \"{}\"} : (tensor<1024x784xf32>) -> tensor<1024x784xf32>\n"
      "    return %%0 : tensor<1024x784xf32>\n  }\n}\n",
      manual_sharding);
}

/* A private function called from several contexts runs in the least manual of them (QA k08). */
Test(model, function_called_from_several_contexts_gets_the_least_manual) {
  const char *body =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func private @kern(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.negate %arg0 : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n"
      "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
      "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\", \"b\"}]>] out_shardings=[<@mesh, [{\"a\", \"b\"}]>] manual_axes={\"a\", \"b\"} (%arg1: tensor<2xf32>) {\n"
      "    %1 = func.call @kern(%arg1) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "    sdy.return %1 : tensor<2xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  %2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] manual_axes={\"a\"} (%arg1: tensor<4xf32>) {\n"
      "    %3 = stablehlo.slice %arg1 [0:2] : (tensor<4xf32>) -> tensor<2xf32>\n"
      "    %4 = func.call @kern(%3) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "    %5 = stablehlo.pad %4, %4, low = [0], high = [2], interior = [0] : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>\n"
      "    sdy.return %5 : tensor<4xf32>\n"
      "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "  %TOP\n"
      "  return %0 : tensor<8xf32>\n}\n";
  /* full manual + partial manual {a}: the intersection {a}, not fully manual */
  md_model *m = build(ar_printf(A, "%.*s%s", (int)(strstr(body, "  %TOP") - body), body,
                            "  return %0 : tensor<8xf32>\n}\n"),
            NULL);
  const md_manual_context *c = md_model_manual(m, op("stablehlo.negate", 0));
  cr_assert(c->nmanual_axes == 1 && has_axis(c, "a") && !has_axis(c, "b"), "intersection of the call sites' axes");
  cr_assert_not_null(c->manual_op);
  cr_assert_not(md_model_fully_manual(m, op("stablehlo.negate", 0)));
  /* ... and called once more at top level: not manual at all */
  m = build(ar_printf(A, "%.*s%s", (int)(strstr(body, "  %TOP") - body), body,
                            "  %6 = func.call @kern(%arg0) : (tensor<8xf32>) -> tensor<2xf32>\n"
                            "  return %0 : tensor<8xf32>\n}\n"),
            NULL);
  c = md_model_manual(m, op("stablehlo.negate", 0));
  cr_assert_null(c->manual_op, "a call site outside manual regions makes the function not manual");
  cr_assert_eq(c->nmanual_axes, 0);
  cr_assert_not(md_model_fully_manual(m, op("stablehlo.negate", 0)));
  /* the call sites themselves keep their own contexts */
  cr_assert(md_model_fully_manual(m, op("func.call", 0)));
  /* GSPMD: @shmap_body called inside the region and once more at top level is not GSPMD-manual */
  const char *g = gspmd_region("{manual}");
  const char *abs = strstr(g, "%5 = stablehlo.abs %4");
  cr_assert_not_null(abs);
  m = build(ar_printf(A, "%.*s%%5 = call @shmap_body(%%4)%s", (int)(abs - g), g, abs + strlen("%5 = stablehlo.abs %4")), NULL);
  ir_op *kernel = NULL;
  for (int i = 0; (kernel = test_find_op(M, "stablehlo.custom_call", i)); i++)
    if (ir_span_eq(ir_op_custom_call_target(kernel), "tpu_custom_call")) break;
  cr_assert_not_null(kernel);
  cr_assert_not(md_model_manual(m, kernel)->gspmd_manual);
  cr_assert_not(md_model_fully_manual(m, kernel));
}

Test(model, gspmd_region_via_shmap_body) {
  md_model *m = build(gspmd_region("{manual}"), NULL);
  cr_assert_eq(m->nerrors, 0);
  ir_op *kernel = NULL;
  for (int i = 0; (kernel = test_find_op(M, "stablehlo.custom_call", i)); i++)
    if (ir_span_eq(ir_op_custom_call_target(kernel), "tpu_custom_call")) break;
  cr_assert_not_null(kernel);
  const md_manual_context *c = md_model_manual(m, kernel);
  cr_assert(c->gspmd_manual);
  cr_assert_not(c->gspmd_partial);
  cr_assert(md_model_fully_manual(m, kernel));
  cr_assert(md_model_manual(m, op("func.call", 0))->gspmd_manual, "the call consumes a local value");
  cr_assert(md_model_manual(m, op("stablehlo.custom_call", 3))->gspmd_manual, "@Sharding {manual} inside");
  cr_assert(md_model_manual(m, op("stablehlo.custom_call", 4))->gspmd_manual, "ShardToFull consumes a local value");
  cr_assert_not(md_model_manual(m, op("stablehlo.custom_call", 0))->gspmd_manual);
  cr_assert_not(md_model_manual(m, op("stablehlo.abs", 0))->gspmd_manual, "after ShardToFull values are global");
  cr_assert_not(md_model_fully_manual(m, op("stablehlo.abs", 0)));
}

Test(model, gspmd_partial_manual_region) {
  md_model *m = build(gspmd_region("{devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}"), NULL);
  ir_op *kernel = NULL;
  for (int i = 0; (kernel = test_find_op(M, "stablehlo.custom_call", i)); i++)
    if (ir_span_eq(ir_op_custom_call_target(kernel), "tpu_custom_call")) break;
  cr_assert_not_null(kernel);
  const md_manual_context *c = md_model_manual(m, kernel);
  cr_assert(c->gspmd_manual);
  cr_assert(c->gspmd_partial, "a manual subgroup of 4 of 8 devices is partial");
  cr_assert_not(md_model_fully_manual(m, kernel));
}

Test(model, sdy_op_custom_syntax) {
  md_model *m = build("sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                      "func.func @main(%arg0: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"x\"}]>}) -> tensor<16x2xf32> {\n"
                      "  %0 = sdy.all_reduce max {\"y\"} %arg0 out_sharding=<@mesh, [{}, {\"x\"}]> : tensor<16x2xf32>\n"
                      "  %1 = sdy.propagation_barrier %0 allowed_direction=BACKWARD : tensor<16x2xf32>\n"
                      "  return %1 : tensor<16x2xf32>\n}\n",
                      NULL);
  ir_op *ar = op("sdy.all_reduce", 0);
  const md_sdy_item *it = md_model_sdy_item(m, ar, "out_sharding");
  cr_assert_not_null(it);
  const md_op_info *info = md_model_op(m, ar);
  bool saw_max = false, saw_group = false;
  for (uint32_t i = 0; i < md_info_items(info)->n; i++) {
    if (ir_span_eq(md_info_items(info)->v[i].name, "max") && !md_info_items(info)->v[i].value.n) saw_max = true;
    if (!md_info_items(info)->v[i].name.n && ir_span_eq(md_info_items(info)->v[i].value, "{\"y\"}")) saw_group = true;
  }
  cr_assert(saw_max && saw_group);
  cr_assert_not_null(md_model_result_sharding(m, ar, 0));
  it = md_model_sdy_item(m, op("sdy.propagation_barrier", 0), "allowed_direction");
  cr_assert(it && ir_span_eq(it->value, "BACKWARD"));
}

Test(model, hlo_gspmd_regions_and_partial_manual) {
  size_t len;
  char *buf = test_read_file("../shared/corpus/xla/hlo/sharding_propagation__CallPropagationWithSPMDShardToFullShape.hlo", &len);
  cr_assert_not_null(buf);
  ir_linemap *lines = ar_alloc(A, sizeof *lines);
  *lines = ir_linemap_build(A, buf, len);
  fe_parse_input in = {A, buf, len, 0, (uint32_t)len, lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
  fe_parse_error err = {0};
  M = fe_parse_hlo(&in, &err);
  cr_assert_not_null(M, "%s", err.message);
  sc_options opt = {0};
  md_model *m = md_model_build(A, M, &opt);
  cr_assert_eq(m->nerrors, 0);
  const char *names[] = {"custom-call.1", "custom-call.2", "custom-call.3", "custom-call.4", "call"};
  bool manual[] = {false, false, true, true, false};
  for (int i = 0; i < 5; i++) {
    ir_op *o = NULL;
    for (uint32_t k = 0; k < M->nops && !o; k++)
      if (ir_span_eq(ir_op_sym_name(M->ops[k]), names[i])) o = M->ops[k];
    cr_assert_not_null(o, "%s", names[i]);
    cr_assert_eq(md_model_manual(m, o)->gspmd_manual, manual[i], "%s", names[i]);
  }
  /* the tiled parameter sharding of custom-call.1 with a replicated subgroup */
  ir_op *o = test_find_op(M, "custom-call", 0);
  const md_sharding *s = md_model_result_sharding(m, o, 0);
  cr_assert(s && s->tiles->tile_dims && s->tiles->last_tile_dim_replicate);
  free(buf);
}

Test(model, fully_manual_against_a_target_mesh) {
  const char *text = "sdy.mesh @mesh = <[\"a\"=4]>\n"
                     "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                     "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] manual_axes={\"a\"} (%arg1: tensor<2xf32>) {\n"
                     "    %1 = stablehlo.abs %arg1 : tensor<2xf32>\n"
                     "    sdy.return %1 : tensor<2xf32>\n"
                     "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
                     "  return %0 : tensor<8xf32>\n}\n";
  sc_target_mesh t;
  const char *err = NULL;
  sc_options opt = {0};
  opt.mesh = &t;
  cr_assert_eq(sc_mesh_parse(A, "data=4", &t, &err), 0);
  md_model *m = build(text, &opt);
  cr_assert(md_model_fully_manual(m, op("stablehlo.abs", 0)), "same device count: the module's mesh decides");
  cr_assert_eq(sc_mesh_parse(A, "data=8", &t, &err), 0);
  m = build(text, &opt);
  cr_assert_not(md_model_fully_manual(m, op("stablehlo.abs", 0)), "8 devices: axis a does not cover them");
  cr_assert_eq(sc_mesh_parse(A, "data=8:manual", &t, &err), 0);
  m = build(text, &opt);
  cr_assert(md_model_fully_manual(m, op("stablehlo.abs", 0)), "manual target axes count as manual");
}

/* The axes of `s`'s dimension d, as "a,b" (or "" when none). */
static const char *dim_axes(const md_sharding *s, uint32_t d) {
  static char buf[128];
  buf[0] = 0;
  cr_assert_not_null(s);
  cr_assert_eq(s->kind, SC_SHARDING_NAMED, "mapped onto named axes");
  for (uint32_t k = 0; k < s->dims[d].naxes; k++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%.*s", k ? "," : "", SC_SPAN_ARG(s->dims[d].axes[k].name));
  return buf;
}

/* A GSPMD module without a mesh gets the axes XLA's Shardy import makes (its
 * stablehlo_import_pipeline test: `{devices=[4,8]<=[8,4]T(1,0)}` and `{devices=[8,1,4]<=[32]
 * last_tile_dim_replicate}` give ["_axis_0"=8, "_axis_1"=4], [{"_axis_1"}, {"_axis_0"}] and
 * [{"_axis_0"}, {}]); tilings that share no factor sequence, or device lists that are no iota, keep the
 * one "_partitions" axis. */
Test(model, gspmd_module_gets_the_mesh_xla_imports) {
  md_model *m = build("module attributes {mhlo.num_partitions = 32 : i32} {\n"
                      "  func.func @f(%arg0: tensor<8x8xf32> {mhlo.sharding = \"{devices=[4,8]<=[8,4]T(1,0)}\"}) -> tensor<8x8xf32> {\n"
                      "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[8,1,4]<=[32] "
                      "last_tile_dim_replicate}\"} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
                      "    return %0 : tensor<8x8xf32>\n  }\n}\n",
                      NULL);
  const md_mesh *mesh = m->effective;
  cr_assert(mesh && mesh->synthesized);
  cr_assert_eq(mesh->naxes, 2);
  cr_assert(ir_span_eq(mesh->axes[0].name, "_axis_0") && mesh->axes[0].size == 8);
  cr_assert(ir_span_eq(mesh->axes[1].name, "_axis_1") && mesh->axes[1].size == 4);
  const md_sharding *arg = md_model_arg_sharding(m, op("func.func", 0), 0);
  cr_assert_str_eq(dim_axes(arg, 0), "_axis_1");
  cr_assert_str_eq(dim_axes(arg, 1), "_axis_0");
  const md_sharding *c = md_model_result_sharding(m, op("stablehlo.custom_call", 0), 0);
  cr_assert_str_eq(dim_axes(c, 0), "_axis_0");
  cr_assert_str_eq(dim_axes(c, 1), "");

  /* `<=[2,4]T(0,1)` is `<=[8]`: one tile dimension of 8 and a [2,4] tiling share the factors [2,4] */
  m = build("module attributes {mhlo.num_partitions = 8 : i32} {\n"
            "  func.func @f(%arg0: tensor<16xf32> {mhlo.sharding = \"{devices=[8]<=[2,4]T(0,1)}\"}, "
            "%arg1: tensor<8x8xf32> {mhlo.sharding = \"{devices=[2,4]<=[8]}\"}) -> tensor<16xf32> {\n"
            "    return %arg0 : tensor<16xf32>\n  }\n}\n",
            NULL);
  cr_assert_eq(m->effective->naxes, 2);
  cr_assert_eq(m->effective->axes[0].size, 2);
  cr_assert_eq(m->effective->axes[1].size, 4);
  cr_assert_str_eq(dim_axes(md_model_arg_sharding(m, op("func.func", 0), 0), 0), "_axis_0,_axis_1");

  static const char *const one_axis[] = {
      "{devices=[2,3]<=[6]}\"}, %arg1: tensor<6x6xf32> {mhlo.sharding = \"{devices=[3,2]<=[6]}", /* no common factors */
      "{devices=[2,3]1,0,2,3,4,5}\"}, %arg1: tensor<6x6xf32> {mhlo.sharding = \"{devices=[2,3]<=[6]}", /* no iota */
      "{devices=[6,1]<=[6]}\"}, %arg1: tensor<6x6xf32> {mhlo.sharding = \"{replicated}"}; /* one factor */
  for (size_t i = 0; i < sizeof one_axis / sizeof *one_axis; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "module attributes {mhlo.num_partitions = 6 : i32} {\n"
             "  func.func @f(%%arg0: tensor<6x6xf32> {mhlo.sharding = \"%s\"}) -> tensor<6x6xf32> {\n"
             "    return %%arg0 : tensor<6x6xf32>\n  }\n}\n",
             one_axis[i]);
    m = build(text, NULL);
    cr_assert_eq(m->effective->naxes, 1, "%s", one_axis[i]);
    cr_assert(ir_span_eq(m->effective->axes[0].name, "_partitions"), "%s", one_axis[i]);
  }
}

/* Without mhlo.num_partitions (jax.export's older artifacts, HLO whose partition count was a compile
 * option) the tiled shardings alone give the mesh and its device count, as to XLA's import; a module
 * whose shardings tile nothing gets none. */
Test(model, gspmd_module_without_num_partitions_gets_its_shardings_mesh) {
  md_model *m = build("module {\n"
                      "  func.func @f(%arg0: tensor<8x8xf32> {mhlo.sharding = \"{devices=[4,8]<=[8,4]T(1,0)}\"}) -> tensor<8x8xf32> {\n"
                      "    return %arg0 : tensor<8x8xf32>\n  }\n}\n",
                      NULL);
  cr_assert_eq(m->num_partitions, -1);
  const md_mesh *mesh = m->effective;
  cr_assert(mesh && mesh->synthesized);
  cr_assert_eq(mesh->devices, 32);
  cr_assert_eq(mesh->naxes, 2);
  cr_assert(ir_span_eq(mesh->axes[0].name, "_axis_0") && mesh->axes[0].size == 8);
  cr_assert(ir_span_eq(mesh->axes[1].name, "_axis_1") && mesh->axes[1].size == 4);

  m = build("module {\n"
            "  func.func @f(%arg0: tensor<8x8xf32> {mhlo.sharding = \"{devices=[2,1]0,1}\"}) -> tensor<8x8xf32> {\n"
            "    return %arg0 : tensor<8x8xf32>\n  }\n}\n",
            NULL);
  cr_assert(m->effective && m->effective->devices == 2 && m->effective->naxes == 1);
  cr_assert(ir_span_eq(m->effective->axes[0].name, "_partitions"));
  cr_assert_str_eq(dim_axes(md_model_arg_sharding(m, op("func.func", 0), 0), 0), "_partitions");

  static const char *const no_mesh[] = {"{replicated}", "{maximal device=1}", "{manual}", "{devices=[1,1]0}"};
  for (size_t i = 0; i < sizeof no_mesh / sizeof *no_mesh; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "module {\n  func.func @f(%%arg0: tensor<6x6xf32> {mhlo.sharding = \"%s\"}) -> tensor<6x6xf32> {\n"
             "    return %%arg0 : tensor<6x6xf32>\n  }\n}\n",
             no_mesh[i]);
    cr_assert_null(build(text, NULL)->effective, "%s", no_mesh[i]);
  }
}
