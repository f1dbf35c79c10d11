/* Explicit reshards and collectives: the printer's insert / erase / rewire / renumber API, Shardy's
 * collective sequences for hand-checked reshards, explicit reshards through sc_propagate, malformed
 * shardings that must not crash, and linear cost for thousands of ops that each need a reshard. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"
#include "propagate/collectives.h"
#include "propagate/print.h"
#include "shardcheck.h"
#include "util/strbuf.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }

static const ir_op *op_named(const ir_module *m, const char *name, uint32_t nth) {
  for (uint32_t i = 0; i < m->nops; i++)
    if (ir_span_eq(ir_op_name(m->ops[i]), name) && nth-- == 0) return m->ops[i];
  cr_assert_fail("no op %s", name);
  return NULL;
}

static const char *emit(prop_printer *pr, const ir_module *m) {
  ar_str out = SC_ASTR_INIT(A);
  prop_printer_emit(pr, 0, (uint32_t)m->len, &out);
  return ar_str_str(&out);
}

static const char *MODULE = "func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {\n"
                            "  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>\n"
                            "  %1 = stablehlo.negate %0 : tensor<8xf32>\n"
                            "  return %1 : tensor<8xf32>\n"
                            "}\n";

TestSuite(reshard_printer, .init = setup, .fini = teardown);

Test(reshard_printer, inserts_rewires_and_renumbers) {
  fe_parse_error err;
  ir_module *m = test_parse(A, MODULE, &err);
  cr_assert_not_null(m, "%s", err.message);
  prop_printer pr;
  prop_printer_init(&pr, A, m);
  pr.renumber = true;
  const ir_op *add = op_named(m, "stablehlo.add", 0), *neg = op_named(m, "stablehlo.negate", 0);
  const char *r = prop_printer_fresh_name(&pr);
  prop_printer_insert_before(&pr, add, ar_printf(A, "%s = sdy.reshard %%arg1 <@mesh, [{}]> : tensor<8xf32>", r));
  cr_assert(prop_printer_replace_operand(&pr, add, 1, r));
  const char *after = prop_printer_fresh_name(&pr);
  prop_printer_insert_after(&pr, neg, ar_printf(A, "%s = sdy.all_reduce {\"x\"} %%1 out_sharding=<@mesh, [{}]> : tensor<8xf32>", after));
  cr_assert(prop_printer_replace_operand(&pr, op_named(m, "func.return", 0), 0, after));
  cr_assert_not(prop_printer_replace_operand(&pr, add, 2, "%x"), "an operand the op does not have");
  cr_assert_str_eq(emit(&pr, m), "func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {\n"
                                 "  %0 = sdy.reshard %arg1 <@mesh, [{}]> : tensor<8xf32>\n"
                                 "  %1 = stablehlo.add %arg0, %0 : tensor<8xf32>\n"
                                 "  %2 = stablehlo.negate %1 : tensor<8xf32>\n"
                                 "  %3 = sdy.all_reduce {\"x\"} %2 out_sharding=<@mesh, [{}]> : tensor<8xf32>\n"
                                 "  return %3 : tensor<8xf32>\n"
                                 "}\n");
}

Test(reshard_printer, erases_renames_and_inserts_first) {
  fe_parse_error err;
  ir_module *m = test_parse(A, MODULE, &err);
  cr_assert_not_null(m, "%s", err.message);
  prop_printer pr;
  prop_printer_init(&pr, A, m);
  const ir_op *add = op_named(m, "stablehlo.add", 0), *neg = op_named(m, "stablehlo.negate", 0);
  prop_printer_erase(&pr, neg);
  cr_assert(prop_printer_rename_result(&pr, add, 0, "%sum"));
  cr_assert(prop_printer_replace_operand(&pr, op_named(m, "func.return", 0), 0, "%sum"));
  prop_printer_insert_first(&pr, add, "%a = sdy.reshard %arg0 <@m, [{}]> : tensor<8xf32>");
  prop_printer_insert_first(&pr, add, "%b = sdy.reshard %arg0 <@m, [{}]> : tensor<8xf32>");
  prop_printer_insert_before(&pr, add, "%c = sdy.reshard %arg0 <@m, [{}]> : tensor<8xf32>");
  cr_assert_str_eq(emit(&pr, m), "func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {\n"
                                 "  %b = sdy.reshard %arg0 <@m, [{}]> : tensor<8xf32>\n"
                                 "  %a = sdy.reshard %arg0 <@m, [{}]> : tensor<8xf32>\n"
                                 "  %c = sdy.reshard %arg0 <@m, [{}]> : tensor<8xf32>\n"
                                 "  %sum = stablehlo.add %arg0, %arg1 : tensor<8xf32>\n"
                                 "  return %sum : tensor<8xf32>\n"
                                 "}\n");
}

Test(reshard_printer, operands_found_by_name_and_block_args_skipped) {
  const char *text = "func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {\n"
                     "  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %arg1) : tensor<8xf32>, tensor<i32>\n"
                     "    cond {\n"
                     "    %1 = stablehlo.compare LT, %iterArg_2, %iterArg_2 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                     "    stablehlo.return %1 : tensor<i1>\n"
                     "  } do {\n"
                     "    stablehlo.return %iterArg, %iterArg_2 : tensor<8xf32>, tensor<i32>\n"
                     "  }\n"
                     "  return %0#0 : tensor<8xf32>\n"
                     "}\n";
  fe_parse_error err;
  ir_module *m = test_parse(A, text, &err);
  cr_assert_not_null(m, "%s", err.message);
  prop_printer pr;
  prop_printer_init(&pr, A, m);
  pr.renumber = true;
  const ir_op *w = op_named(m, "stablehlo.while", 0);
  cr_assert(prop_printer_replace_operand(&pr, w, 1, "%_sc9"));
  prop_printer_insert_before(&pr, w, "%_sc9 = sdy.reshard %arg1 <@m, []> : tensor<i32>");
  const char *out = emit(&pr, m);
  cr_assert(strstr(out, "  %0 = sdy.reshard %arg1 <@m, []> : tensor<i32>\n"), "%s", out);
  cr_assert(strstr(out, "%1:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %0)"), "%s", out);
  cr_assert(strstr(out, "%2 = stablehlo.compare"), "%s", out);
  cr_assert(strstr(out, "return %1#0 : tensor<8xf32>"), "%s", out);
}

Test(reshard_printer, renumber_names_every_result_and_constants) {
  const char *text = "func.func @f(%arg0: tensor<i32>) -> tensor<f32> {\n"
                     "  %7 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                     "  %9 = stablehlo.constant dense<1> : tensor<2xi32>\n"
                     "  %3 = stablehlo.constant dense<2.0> : tensor<f32>\n"
                     "  %x = stablehlo.add %7, %3 : tensor<f32>\n"
                     "  %_sc4 = stablehlo.add %x, %7 : tensor<f32>\n"
                     "  return %_sc4 : tensor<f32>\n"
                     "}\n"
                     "func.func @g() -> tensor<f32> {\n"
                     "  %5 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                     "  %6 = stablehlo.negate %5 : tensor<f32>\n"
                     "  return %6 : tensor<f32>\n"
                     "}\n";
  ar_str out = SC_ASTR_INIT(A);
  prop_printer_renumber(A, text, strlen(text), &out);
  cr_assert_str_eq(ar_str_str(&out), "func.func @f(%arg0: tensor<i32>) -> tensor<f32> {\n"
                                      "  %cst = stablehlo.constant dense<1.0> : tensor<f32>\n"
                                      "  %c = stablehlo.constant dense<1> : tensor<2xi32>\n"
                                      "  %cst_0 = stablehlo.constant dense<2.0> : tensor<f32>\n"
                                      "  %0 = stablehlo.add %cst, %cst_0 : tensor<f32>\n"
                                      "  %1 = stablehlo.add %0, %cst : tensor<f32>\n"
                                      "  return %1 : tensor<f32>\n"
                                      "}\n"
                                      "func.func @g() -> tensor<f32> {\n"
                                      "  %cst = stablehlo.constant dense<1.0> : tensor<f32>\n"
                                      "  %0 = stablehlo.negate %cst : tensor<f32>\n"
                                      "  return %0 : tensor<f32>\n"
                                      "}\n");
}

/* ---- through sc_propagate ------------------------------------------------------------------------- */

/* The options of one pass alone: the explicit reshards (full or partial) or reshards to collectives. */
static sc_propagate_options pass_options(bool insert, bool collectives) {
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  o.strategy = SC_PROPAGATE_NONE;
  o.insert_reshards = insert;
  o.reshards_to_collectives = collectives;
  return o;
}

/* sc_propagate of `text` with `o`, which must succeed. */
static sc_propagate_result run_ok(const char *text, const sc_propagate_options *o) {
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(A, text, strlen(text), o, &r), SC_OK, "%s", r.failure ? r.failure : "");
  return r;
}

static const char *propagate(const char *text, bool insert, bool collectives, sc_status *status) {
  sc_propagate_options o = pass_options(insert, collectives);
  sc_propagate_result r;
  *status = sc_propagate(A, text, strlen(text), &o, &r);
  return *status == SC_OK ? r.text : r.failure;
}

/* Runs one pass on `text` and asserts the output holds `expected`. */
static void expect_pass_output(const char *text, bool insert, const char *expected) {
  sc_status st;
  const char *out = propagate(text, insert, !insert, &st);
  cr_assert_eq(st, SC_OK, "%s", out);
  cr_assert(test_holds_lines(out, expected), "expected\n%s\nin\n%s", expected, out);
}

/* MLIR numbers a region's results before the regions nested in it, which start where their parent
 * stopped; an inner name that an outer one also uses stays the inner value's. */
Test(reshard_printer, renumber_regions_after_their_parent) {
  const char *text = "func.func @f(%arg0: tensor<i32>) -> tensor<i32> {\n"
                     "  %5:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg0) : tensor<i32>, tensor<i32>\n"
                     "    cond {\n"
                     "    %5 = stablehlo.compare LT, %iterArg, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                     "    stablehlo.return %5 : tensor<i1>\n"
                     "  } do {\n"
                     "    %5 = stablehlo.add %iterArg, %iterArg_0 : tensor<i32>\n"
                     "    %_sc1 = stablehlo.negate %5 : tensor<i32>\n"
                     "    stablehlo.return %_sc1, %iterArg_0 : tensor<i32>, tensor<i32>\n"
                     "  }\n"
                     "  %8 = stablehlo.negate %5#0 : tensor<i32>\n"
                     "  return %8 : tensor<i32>\n"
                     "}\n";
  ar_str out = SC_ASTR_INIT(A);
  prop_printer_renumber(A, text, strlen(text), &out);
  cr_assert_str_eq(ar_str_str(&out), "func.func @f(%arg0: tensor<i32>) -> tensor<i32> {\n"
                                      "  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg0) : tensor<i32>, tensor<i32>\n"
                                      "    cond {\n"
                                      "    %2 = stablehlo.compare LT, %iterArg, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                                      "    stablehlo.return %2 : tensor<i1>\n"
                                      "  } do {\n"
                                      "    %2 = stablehlo.add %iterArg, %iterArg_0 : tensor<i32>\n"
                                      "    %3 = stablehlo.negate %2 : tensor<i32>\n"
                                      "    stablehlo.return %3, %iterArg_0 : tensor<i32>, tensor<i32>\n"
                                      "  }\n"
                                      "  %1 = stablehlo.negate %0#0 : tensor<i32>\n"
                                      "  return %1 : tensor<i32>\n"
                                      "}\n");
}

TestSuite(reshard_pass, .init = setup, .fini = teardown);

Test(reshard_pass, collectives_of_a_swap_between_dims) {
  /* [{"x"}, {"y"}] -> [{"y"}, {"x"}] over x=2, y=2: an equal-size swap is one collective-permute */
  const char *text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                     "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>}) -> tensor<8x8xf32> {\n"
                     "  %0 = sdy.reshard %arg0 <@mesh, [{\"y\"}, {\"x\"}]> : tensor<8x8xf32>\n"
                     "  return %0 : tensor<8x8xf32>\n"
                     "}\n";
  expect_pass_output(text, false,
                     "  %0 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{\"y\"}, {\"x\"}]> : tensor<8x8xf32>\n"
                     "  return %0 : tensor<8x8xf32>\n");
}

Test(reshard_pass, collectives_gather_then_slice) {
  const char *text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                     "func.func @f(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}) -> tensor<16x16xf32> {\n"
                     "  %0 = sdy.reshard %arg0 <@mesh, [{}, {\"x\"}]> : tensor<16x16xf32>\n"
                     "  %1 = sdy.reshard %0 <@mesh, [{}, {}]> : tensor<16x16xf32>\n"
                     "  return %1 : tensor<16x16xf32>\n"
                     "}\n";
  expect_pass_output(text, false,
                     "  %0 = sdy.all_to_all [{\"x\"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {\"x\"}]> : tensor<16x16xf32>\n"
                     "  %1 = sdy.all_gather [{}, {\"x\"}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<16x16xf32>\n"
                     "  return %1 : tensor<16x16xf32>\n");
}

Test(reshard_pass, matmul_with_sharded_contraction_all_reduces) {
  const char *text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                     "func.func @f(%arg0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>},\n"
                     "             %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}, {}]>})\n"
                     "    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}) {\n"
                     "  %0 = stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
                     "  return %0 : tensor<8x16xf32>\n"
                     "}\n";
  expect_pass_output(text, true,
                     "  %1 = sdy.all_reduce {\"y\"} %0 out_sharding=<@mesh, [{\"x\"}, {}]> : tensor<8x16xf32>\n"
                     "  return %1 : tensor<8x16xf32>\n");
}

Test(reshard_pass, options_that_do_not_combine) {
  sc_propagate_options o = pass_options(true, false);
  o.strategy = SC_PROPAGATE_BASIC;
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(A, MODULE, strlen(MODULE), &o, &r), SC_ERR_INVALID);
  cr_assert(strstr(r.failure, "--insert-reshards"));
}

/* A host callback pinned to device 0 (JAX lowers it with a maximal sharding): its sharded operand is
 * gathered on the model mesh, then sent to the device; its result comes back replicated and is
 * sharded again for the consumer that wants it sharded. */
Test(reshard_pass, single_device_op_round_trip) {
  const char *text = "sdy.mesh @mesh = <[\"data\"=4]>\n"
                     "sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"
                     "func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) "
                     "-> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) {\n"
                     "  %0 = stablehlo.custom_call @xla_python_cpu_callback(%arg0) {sdy.sharding = "
                     "#sdy.sharding_per_value<[#sdy.sharding<@maximal_mesh_0, []>]>} : (tensor<16x8xf32>) -> tensor<16x8xf32>\n"
                     "  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[#sdy.sharding<@mesh, [{\"data\"}, {}]>]>} "
                     ": tensor<16x8xf32>\n"
                     "  return %1 : tensor<16x8xf32>\n"
                     "}\n";
  expect_pass_output(text, true,
                     "  %0 = sdy.reshard %arg0 <@mesh, [{}, {}]> : tensor<16x8xf32>\n"
                     "  %1 = sdy.reshard %0 <@maximal_mesh_0, []> : tensor<16x8xf32>\n"
                     "  %2 = stablehlo.custom_call @xla_python_cpu_callback(%1) {sdy.sharding = "
                     "#sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16x8xf32>) -> tensor<16x8xf32>\n"
                     "  %3 = sdy.reshard %2 <@mesh, [{}, {}]> : tensor<16x8xf32>\n"
                     "  %4 = sdy.reshard %3 <@mesh, [{\"data\"}, {}]> : tensor<16x8xf32>\n"
                     "  %5 = stablehlo.negate %4 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"data\"}, {}]>]>}");
}

/* A single-device sharding on a function's argument, or results on two different devices, fail the
 * pass with an error at the function or op, and nothing is printed. */
Test(reshard_pass, single_device_errors) {
  const char *text = "sdy.mesh @mesh = <[\"x\"=2]>\n"
                     "sdy.mesh @d0 = <[], device_ids=[0]>\n"
                     "func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@d0, []>}) -> tensor<8xf32> {\n"
                     "  return %arg0 : tensor<8xf32>\n"
                     "}\n";
  sc_propagate_options o = pass_options(true, false);
  sc_propagate_result r = run_ok(text, &o);
  cr_assert_eq(r.nmessages, 1);
  cr_assert_eq(r.messages[0].severity, SC_SEV_ERROR);
  cr_assert_eq(r.messages[0].line, 3);
  cr_assert(strstr(r.messages[0].message, "function argument 0 cannot have a single-device (maximal) sharding"), "%s",
            r.messages[0].message);
  cr_assert_not(strstr(r.text, "func.func"), "a failed pass prints nothing: %s", r.text);
  const char *conflict = "sdy.mesh @mesh = <[\"x\"=2]>\n"
                         "sdy.mesh @d0 = <[], device_ids=[0]>\n"
                         "sdy.mesh @d1 = <[], device_ids=[1]>\n"
                         "func.func @f(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {\n"
                         "  %0:2 = stablehlo.custom_call @cb(%arg0) {sdy.sharding = #sdy.sharding_per_value<"
                         "[<@d0, []>, <@d1, []>]>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)\n"
                         "  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>\n"
                         "}\n";
  r = run_ok(conflict, &o);
  cr_assert_eq(r.nmessages, 1);
  cr_assert_eq(r.messages[0].line, 5);
  cr_assert(strstr(r.messages[0].message, "has conflicting single-device result shardings"), "%s", r.messages[0].message);
}

/* keep-redundant-reshards: a reshard that changes nothing stays; one that moves axes still becomes
 * collectives. Without it the redundant one is dropped. */
Test(reshard_pass, keep_redundant_reshards) {
  const char *text = "sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\n"
                     "func.func @f(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {\"y\"}]>}) "
                     "-> (tensor<16x8xf32>, tensor<16x8xf32>) {\n"
                     "  %0 = sdy.reshard %arg0 <@m, [{\"x\"}, {\"y\"}]> : tensor<16x8xf32>\n"
                     "  %1 = sdy.reshard %arg0 <@m, [{\"y\"}, {\"x\"}]> : tensor<16x8xf32>\n"
                     "  return %0, %1 : tensor<16x8xf32>, tensor<16x8xf32>\n"
                     "}\n";
  sc_propagate_options o = pass_options(false, true);
  o.keep_redundant_reshards = true;
  sc_propagate_result r = run_ok(text, &o);
  cr_assert(test_holds_lines(r.text, "  %0 = sdy.reshard %arg0 <@m, [{\"x\"}, {\"y\"}]> : tensor<16x8xf32>\n"), "%s", r.text);
  cr_assert(test_holds_lines(r.text, "  %1 = sdy.collective_permute %arg0 out_sharding=<@m, [{\"y\"}, {\"x\"}]>"), "%s", r.text);
  o.keep_redundant_reshards = false;
  r = run_ok(text, &o);
  cr_assert_not(strstr(r.text, "sdy.reshard"), "%s", r.text);
  cr_assert(strstr(r.text, "return %arg0, %0"), "%s", r.text);
}

/* Partial sums: the reduction's own axes the result does not keep unreduced are summed right after it,
 * the kept ones only where a consumer (here the return) stops keeping them; a reshard to new unreduced
 * axes makes the replicated ones unreduced first, then the sharded ones. */
Test(reshard_pass, unreduced_axes_summed_late_and_made) {
  const char *text =
      "sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>\n"
      "func.func @sum_rows(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"x\", \"y\"}]>}) -> tensor<16xf32> {\n"
      "  %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "  %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] {sdy.sharding = "
      "#sdy.sharding_per_value<[<@mesh, [{}], unreduced={\"x\"}>]>} : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>\n"
      "  %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={\"x\"}>]>} : tensor<16xf32>\n"
      "  return %2 : tensor<16xf32>\n"
      "}\n"
      "func.func @to_unreduced(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}) -> tensor<16x8xf32> {\n"
      "  %0 = sdy.reshard %arg0 <@mesh, [{}, {}], unreduced={\"x\", \"y\"}> : tensor<16x8xf32>\n"
      "  return %0 : tensor<16x8xf32>\n"
      "}\n";
  expect_pass_output(text, true,
                     "  %1 = sdy.all_reduce {\"y\"} %0 out_sharding=<@mesh, [{}], unreduced={\"x\"}> : tensor<16xf32>\n"
                     "  %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={\"x\"}>]>} : tensor<16xf32>\n"
                     "  %3 = sdy.all_reduce {\"x\"} %2 out_sharding=<@mesh, [{}]> : tensor<16xf32>\n"
                     "  return %3 : tensor<16xf32>\n");
  expect_pass_output(text, true,
                     "  %0 = sdy.replicated_to_unreduced {\"y\"} %arg0 out_sharding=<@mesh, [{\"x\"}, {}], unreduced={\"y\"}> : tensor<16x8xf32>\n"
                     "  %1 = sdy.sharded_to_unreduced [{\"x\"}, {}] %0 out_sharding=<@mesh, [{}, {}], unreduced={\"x\", \"y\"}> : tensor<16x8xf32>\n"
                     "  %2 = sdy.all_reduce {\"x\", \"y\"} %1 out_sharding=<@mesh, [{}, {}]> : tensor<16x8xf32>\n"
                     "  return %2 : tensor<16x8xf32>\n");
}

/* Shardings that do not fit (unknown axes, wrong ranks, sub-axes that do not divide, unknown meshes)
 * leave the module printable: no crash, no reshard invented from garbage. */
Test(reshard_pass, malformed_shardings_do_not_crash) {
  static const char *bad[] = {
      "[{\"nope\"}, {}]", "[{\"x\"}]", "[{\"x\":(3)5}, {}]", "[{\"x\", \"x\"}, {\"x\"}]", "[{\"x\":(0)2}, {}]",
      "[{}, {}], unreduced={\"x\"}", "[{\"y\"}, {\"x\"}, {}]",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    for (int mode = 0; mode < 2; mode++) {
      const char *text = ar_printf(A,
                                         "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                                         "func.func @f(%%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, %s>}) -> tensor<8x8xf32> {\n"
                                         "  %%0 = stablehlo.add %%arg0, %%arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"y\"}, {}]>]>} : tensor<8x8xf32>\n"
                                         "  %%1 = sdy.reshard %%0 <@mesh, %s> : tensor<8x8xf32>\n"
                                         "  %%2 = sdy.reshard %%1 <@other, [{\"x\"}, {}]> : tensor<8x8xf32>\n"
                                         "  return %%2 : tensor<8x8xf32>\n"
                                         "}\n",
                                         bad[i], bad[i]);
      sc_status st;
      const char *out = propagate(text, mode == 0, mode == 1, &st);
      cr_assert_eq(st, SC_OK, "%s: %s", bad[i], out);
      cr_assert(strstr(out, "func.func @f"), "%s", out);
    }
}

/* ---- linear cost ------------------------------------------------------------------------------------ */

#define STEPS_PER_BYTE 64u
#define BYTES_PER_BYTE 160u
#define FIXED_BYTES (4u << 20)

/* `n` adds whose operands disagree with their results (each needs a reshard) or `n` reshards that
 * each become collectives. */
static char *chain_module(size_t n, bool reshards) {
  strbuf b = {0};
  sb_puts(&b, "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                     "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}) -> tensor<8x8xf32> {\n");
  for (size_t i = 0; i < n; i++) {
    const char *prev = i ? ar_printf(A, "%%%zu", i - 1) : "%arg0";
    const char *sh = i % 2 ? "[{\"x\"}, {\"y\"}]" : "[{\"y\"}, {\"x\"}]";
    if (reshards)
      sb_printf(&b, "  %%%zu = sdy.reshard %s <@mesh, %s> : tensor<8x8xf32>\n", i, prev, sh);
    else
      sb_printf(&b, "  %%%zu = stablehlo.add %s, %s {sdy.sharding = #sdy.sharding_per_value<[<@mesh, %s>]>} : tensor<8x8xf32>\n",
                       i, prev, prev, sh);
  }
  sb_printf(&b, "  return %%%zu : tensor<8x8xf32>\n}\n", n - 1);
  char *s = sb_take(&b);
  cr_assert_not_null(s);
  return s;
}

static void run_linear(size_t n, bool reshards) {
  char *text = chain_module(n, reshards);
  size_t len = strlen(text);
  sc_arena *a = sc_arena_new(FIXED_BYTES + BYTES_PER_BYTE * len);
  sc_arena_set_step_limit(a, (unsigned long long)STEPS_PER_BYTE * len);
  sc_propagate_options o = pass_options(!reshards, reshards);
  sc_propagate_result r;
  sc_status st = sc_propagate(a, text, len, &o, &r);
  cr_assert_eq(st, SC_OK, "%zu ops: %s (steps %llu, bytes %zu)", n, r.failure ? r.failure : "?", ar_steps(a),
               sc_arena_used(a));
  /* every op got its reshard (or collective) */
  size_t found = 0;
  for (const char *p = r.text; (p = strstr(p, reshards ? "sdy.collective_permute" : "sdy.reshard")); p++) found++;
  cr_assert_geq(found, n - 1, "%zu ops, %zu inserted", n, found);
  sc_arena_free(a);
  free(text);
}

TestSuite(reshard_linear, .init = setup, .fini = teardown);

Test(reshard_linear, ten_thousand_ops_needing_reshards) { run_linear(10000, false); }

Test(reshard_linear, ten_thousand_reshards_to_collectives) { run_linear(10000, true); }

/* The partial version (enable-full-version=false) leaves a mismatched elementwise op and return alone but
 * still brings a call's operand to its callee's argument sharding; the full version reshards all three. */
Test(reshard_pass, partial_version_only_calls_and_required_ops) {
  const char *text = "sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\n"
                     "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}, {}]>}) "
                     "-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"y\"}]>}) {\n"
                     "  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"y\"}, {}]>]>} "
                     ": tensor<8x8xf32>\n"
                     "  %1 = call @g(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
                     "  return %1 : tensor<8x8xf32>\n"
                     "}\n"
                     "func.func private @g(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {\"x\"}]>}) "
                     "-> tensor<8x8xf32> {\n"
                     "  return %arg0 : tensor<8x8xf32>\n"
                     "}\n";
  sc_propagate_options o = pass_options(true, false);
  o.insert_reshards_partial = true;
  sc_propagate_result r = run_ok(text, &o);
  cr_assert(test_holds_lines(r.text, "  %1 = sdy.reshard %0 <@m, [{}, {\"x\"}]> : tensor<8x8xf32>\n"
                           "  %2 = call @g(%1)"), "%s", r.text);
  cr_assert_eq(strstr(strstr(r.text, "sdy.reshard") + 1, "sdy.reshard"), NULL, "one reshard only: %s", r.text);
  o.insert_reshards_partial = false;
  r = run_ok(text, &o);
  cr_assert(strstr(r.text, "sdy.reshard %0 <@m, [{\"y\"}, {}]>"), "result of negate: %s", r.text);
  cr_assert(test_holds_lines(r.text, "<@m, [{}, {\"y\"}]> : tensor<8x8xf32>\n  return"), "returned value: %s", r.text);
}

/* As MLIR prints them: a select whose branches and result share a type prints `: pred, T`; a custom
 * call's operand list follows its callee without a space; rng_bit_generator's results are named. */
Test(reshard_pass, printed_as_mlir_prints_select_custom_call_rng) {
  const char *text = "sdy.mesh @m = <[\"x\"=2]>\n"
                     "func.func @f(%arg0: tensor<4xi1>, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}]>}, "
                     "%arg2: tensor<2xui64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xui64>) {\n"
                     "  %0 = stablehlo.select %arg0, %arg1, %arg1 : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
                     "  %1 = stablehlo.custom_call @mhlo.erf (%arg1) : (tensor<4xf32>) -> tensor<4xf32>\n"
                     "  %2, %3 = stablehlo.rng_bit_generator %arg2, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)\n"
                     "  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<2xui64>\n"
                     "}\n";
  sc_propagate_options o = pass_options(true, false);
  sc_propagate_result r = run_ok(text, &o);
  cr_assert(strstr(r.text, ": tensor<4xi1>, tensor<4xf32>\n"), "%s", r.text);
  cr_assert(strstr(r.text, "stablehlo.custom_call @mhlo.erf(%"), "%s", r.text);
  cr_assert(strstr(r.text, "%output_state, %output = stablehlo.rng_bit_generator"), "%s", r.text);
  cr_assert(strstr(r.text, "return %2, %4, %output_state"), "%s", r.text);
}

/* A name the text already has (a while argument `%iterArg_1`) does not keep a hint from taking it:
 * the hints are iterArg, iterArg_0, iterArg_1 as MLIR gives them, each once. */
Test(reshard_printer, renumber_hints_ignore_old_names) {
  const char *text = "func.func @f(%arg0: tensor<i32>) -> tensor<i32> {\n"
                     "  %5:3 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %arg0, %iterArg_2 = %arg0) : "
                     "tensor<i32>, tensor<i32>, tensor<i32> cond {\n"
                     "    %7 = stablehlo.compare LT, %iterArg_2, %iterArg_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                     "    stablehlo.return %7 : tensor<i1>\n"
                     "  } do {\n"
                     "    stablehlo.return %iterArg, %iterArg_1, %iterArg_2 : tensor<i32>, tensor<i32>, tensor<i32>\n"
                     "  }\n"
                     "  return %5#0 : tensor<i32>\n"
                     "}\n";
  ar_str out = SC_ASTR_INIT(A);
  prop_printer_renumber(A, text, strlen(text), &out);
  const char *s = ar_str_str(&out);
  cr_assert(strstr(s, "%0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg0, %iterArg_1 = %arg0)"), "%s", s);
  cr_assert(strstr(s, "stablehlo.compare LT, %iterArg_1, %iterArg_0"), "%s", s);
  cr_assert(strstr(s, "stablehlo.return %iterArg, %iterArg_0, %iterArg_1 :"), "%s", s);
}
