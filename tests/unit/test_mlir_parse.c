/* Front end: structure recovered from pretty and generic MLIR, and precise errors on bad input. */
#include <criterion/criterion.h>

#include "helpers.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(mlir_parse, .init = setup, .fini = teardown);

static const char *JAX_SHAPED =
    "#loc1 = loc(\"x\")\n"
    "#loc3 = loc(\"model.py\":88:12)\n"
    "#loc4 = loc(\"f\"(#loc3))\n"
    "module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  sdy.mesh @mesh = <[\"a\"=2]> loc(#loc)\n"
    "  func.func public @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>} loc(\"x\")) "
    "-> (tensor<2x4xf32> {jax.result_info = \"result\"}) {\n"
    "    %0 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}, {}]> : tensor<2x4xf32> loc(#loc4)\n"
    "    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{\"a\"}, {}]>] out_shardings=[<@mesh, [{\"a\"}, {}]>] "
    "manual_axes={\"a\"} (%arg1: tensor<1x4xf32> loc(\"shard_map:\"(#loc4))) {\n"
    "      %2 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = \"{\\22k\\22: 1}\"} : "
    "(tensor<1x4xf32>) -> tensor<1x4xf32> loc(#loc4)\n"
    "      sdy.return %2 : tensor<1x4xf32> loc(#loc4)\n"
    "    } : (tensor<2x4xf32>) -> tensor<2x4xf32> loc(#loc4)\n"
    "    %cst = stablehlo.constant dense<\"0x0000803F00000040\"> : tensor<2xf32> loc(#loc)\n"
    "    return %1 : tensor<2x4xf32> loc(#loc)\n"
    "  } loc(#loc)\n"
    "} loc(#loc)\n"
    "#loc = loc(unknown)\n";

Test(mlir_parse, jax_shaped_module_structure) {
  fe_parse_error err;
  ir_module *m = test_parse(A, JAX_SHAPED, &err);
  cr_assert_not_null(m, "parse failed: %s", err.message);
  cr_assert(ir_span_eq(ir_op_name(m->module), "builtin.module"));
  cr_assert(ir_span_eq(ir_op_sym_name(m->module), "jit_f"));
  cr_assert_not_null(ir_op_attr(m->module, "mhlo.num_partitions"));
  cr_assert_eq(m->nfuncs, 1);
  cr_assert_eq(m->entry, m->funcs[0]);
  cr_assert_eq(m->nops, 9, "ops: %u", m->nops); /* module mesh func constraint manual custom_call return cst return */
  ir_op *f = m->funcs[0];
  cr_assert(ir_span_eq(ir_op_sym_name(f), "main"));
  cr_assert(ir_span_eq(ir_op_visibility(f), "public"));
  ir_value *arg0 = ir_op_regions(f)[0]->blocks[0]->args[0];
  cr_assert(ir_span_eq(ir_value_type(arg0), "tensor<2x4xf32>"));
  const ir_attr *sh = ir_attrs_find(ir_value_attrs(arg0), "sdy.sharding");
  cr_assert_not_null(sh);
  cr_assert(ir_span_eq(sh->value, "#sdy.sharding<@mesh, [{\"a\"}, {}]>"));
  cr_assert_eq(ir_op_nresult_attrs(f), 1);
  cr_assert_not_null(ir_attrs_find(&ir_op_result_attrs(f)[0], "jax.result_info"));

  ir_op *mc = test_find_op(m, "sdy.manual_computation", 0);
  cr_assert_not_null(mc);
  cr_assert_eq(mc->noperands, 1);
  cr_assert_eq(mc->operands[0], ir_op_result(test_find_op(m, "sdy.sharding_constraint", 0), 0));
  cr_assert(ir_span_eq(ir_op_attr(mc, "manual_axes")->value, "{\"a\"}"));
  cr_assert(ir_span_eq(ir_op_attr(mc, "in_shardings")->value, "[<@mesh, [{\"a\"}, {}]>]"));
  cr_assert_eq(mc->nregions, 1);
  cr_assert_eq(ir_op_regions(mc)[0]->blocks[0]->nargs, 1);
  cr_assert_eq(ir_op_noperand_types(mc), 1);
  cr_assert_eq(ir_op_nresult_types(mc), 1);
  cr_assert(ir_span_eq(ir_value_type(ir_op_result(mc, 0)), "tensor<2x4xf32>"));

  ir_op *cc = test_find_op(m, "stablehlo.custom_call", 0);
  cr_assert(ir_span_eq(ir_op_custom_call_target(cc), "tpu_custom_call"));
  cr_assert_eq(cc->parent_op, mc);
  cr_assert_eq(ir_op_func(cc), f);
  cr_assert_eq(ir_op_depth(cc), 3);
  cr_assert_eq(cc->operands[0], ir_op_regions(mc)[0]->blocks[0]->args[0]);
  cr_assert_eq(test_op_pos(m, cc).line, 9);
  cr_assert_eq(test_op_pos(m, cc).col, 7);
  cr_assert(ir_op_srcloc(m, cc).known);
  cr_assert(ir_span_eq(ir_op_srcloc(m, cc).file, "model.py"));
  cr_assert_eq(ir_op_srcloc(m, cc).line, 88);
  cr_assert_eq(ir_op_srcloc(m, cc).col, 12);

  ir_op *sc = test_find_op(m, "sdy.sharding_constraint", 0);
  cr_assert(ir_span_eq(ir_op_attr(sc, "sharding")->value, "<@mesh, [{\"a\"}, {}]>"));
  ir_op *mesh = test_find_op(m, "sdy.mesh", 0);
  cr_assert(ir_span_eq(ir_op_sym_name(mesh), "mesh"));
  cr_assert(ir_span_eq(ir_op_attr(mesh, "value")->value, "<[\"a\"=2]>"));
}

Test(mlir_parse, generic_form_with_blocks_and_properties) {
  const char *text = "\"builtin.module\"() ({\n"
                     "  %0:2 = \"d.op\"() <{p = 1 : i64}> ({\n"
                     "  ^bb0(%a: i32 loc(\"z.py\":1:1), %b: i32):\n"
                     "    \"d.br\"(%a)[^bb1] : (i32) -> ()\n"
                     "  ^bb1:\n"
                     "    \"d.yield\"(%b) : (i32) -> ()\n"
                     "  }) {q = dense<\"0xDEADBEEF\"> : tensor<4xi8>} : () -> (i32, f32)\n"
                     "  \"d.use\"(%0#1, %0#0) : (f32, i32) -> ()\n"
                     "}) : () -> ()\n";
  fe_parse_error err;
  ir_module *m = test_parse(A, text, &err);
  cr_assert_not_null(m, "parse failed: %s", err.message);
  cr_assert_eq(m->nops, 5);
  ir_op *op = test_find_op(m, "d.op", 0);
  cr_assert(op->generic);
  cr_assert_eq(op->nresults, 2);
  cr_assert_not_null(ir_op_attr(op, "p"));
  cr_assert_not_null(ir_op_attr(op, "q"));
  cr_assert_eq(ir_op_regions(op)[0]->nblocks, 2);
  cr_assert_eq(ir_op_regions(op)[0]->blocks[0]->nargs, 2);
  cr_assert(ir_span_eq(ir_value_type(ir_op_result(op, 1)), "f32"));
  ir_op *use = test_find_op(m, "d.use", 0);
  cr_assert_eq(use->operands[0], ir_op_result(op, 1));
  cr_assert_eq(use->operands[1], ir_op_result(op, 0));
}

/* A generic func.func's res_attrs are one dict per result of its function_type, as the pretty form
 * and bytecode have them: a list of another length is not taken (readers index the result types by
 * the dicts, and three dicts for one type read past it). */
Test(mlir_parse, generic_func_result_attrs_match_its_function_type) {
  static const char *const lists[] = {"[{a = 1 : i32}, {b = 2 : i32}, {c = 3 : i32}]", "[{a = 1 : i32}]"};
  for (size_t i = 0; i < 2; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "\"builtin.module\"() ({\n"
             "  \"func.func\"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, res_attrs = %s, sym_name = \"main\"}> ({\n"
             "  ^bb0(%%arg0: tensor<8xf32>):\n"
             "    \"func.return\"(%%arg0) : (tensor<8xf32>) -> ()\n"
             "  }) : () -> ()\n"
             "}) : () -> ()\n",
             lists[i]);
    fe_parse_error err;
    ir_module *m = test_parse(A, text, &err);
    cr_assert_not_null(m, "parse failed: %s", err.message);
    const ir_op *f = test_find_op(m, "func.func", 0);
    cr_assert_eq(ir_op_nresult_attrs(f), i == 0 ? 0u : 1u, "%s", lists[i]);
    if (i == 1) cr_assert(ir_span_eq(ir_op_func_result_types(f)[0], "tensor<8xf32>"));
  }
}

/* Bracket groups are skipped by a byte scan when they hold only plain tokens, by the token path
 * otherwise (comments, operators that look like brackets, escaped quotes): both end in the same place. */
Test(mlir_parse, groups_skipped_by_bytes_or_tokens_end_alike) {
  const char *text = "func.func @f() {\n"
                     "%0 = d.a {x = #d.e<\"q\\22>\", [1, {y = @\"s\"}], (i32) -> i32, a <= b, c >= d>} : tensor<4x?xf32>\n"
                     "%1 = d.b {z = #d.c<4 // comment >\n   , 5>} : tensor<2x\n  f32>\n"
                     "%2 = d.c %0, %1 {w = [#d.v<{-# not resources #-}>]} : (tensor<4x?xf32>, tensor<2xf32>) -> i1\n"
                     "}\n";
  fe_parse_error err;
  ir_module *m = test_parse(A, text, &err);
  cr_assert_not_null(m, "parse failed: %s", err.message);
  cr_assert_eq(m->nops, 5);
  ir_op *a = test_find_op(m, "d.a", 0), *b = test_find_op(m, "d.b", 0), *c = test_find_op(m, "d.c", 0);
  cr_assert(ir_span_eq(ir_op_attr(a, "x")->value, "#d.e<\"q\\22>\", [1, {y = @\"s\"}], (i32) -> i32, a <= b, c >= d>"));
  cr_assert(ir_span_eq(ir_value_type(ir_op_result(a, 0)), "tensor<4x?xf32>"));
  cr_assert(ir_span_eq(ir_op_attr(b, "z")->value, "#d.c<4 // comment >\n   , 5>"));
  cr_assert(ir_span_eq(ir_value_type(ir_op_result(b, 0)), "tensor<2x\n  f32>"));
  cr_assert(ir_span_eq(ir_op_attr(c, "w")->value, "[#d.v<{-# not resources #-}>]"));
  cr_assert_eq(c->operands[0], ir_op_result(a, 0));
  cr_assert_eq(c->operands[1], ir_op_result(b, 0));
}

Test(mlir_parse, hand_written_ops_broken_over_lines) {
  const char *text = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
                     "func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
                     "  %0 = sdy.manual_computation(%arg0)\n"
                     "      in_shardings=[<@mesh, [{\"a\"}, {}]>]\n"
                     "      out_shardings=[<@mesh, [{\"a\"}, {}]>]\n"
                     "      manual_axes={\"a\"} (%arg1: tensor<4x8xf32>) {\n"
                     "    %1 = stablehlo.reduce(%arg1 init: %arg1) applies stablehlo.add across dimensions = [1]\n"
                     "        : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32>\n"
                     "    sdy.return %arg1 : tensor<4x8xf32>\n"
                     "  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
                     "  return %0 : tensor<8x8xf32>\n"
                     "}\n";
  fe_parse_error err;
  ir_module *m = test_parse(A, text, &err);
  cr_assert_not_null(m, "parse failed: %s", err.message);
  /* implicit module + mesh + func + manual + reduce + sdy.return + return */
  cr_assert_eq(m->nops, 7, "ops %u", m->nops);
  ir_op *mc = test_find_op(m, "sdy.manual_computation", 0);
  cr_assert_eq(test_op_pos(m, mc).line, 3);
  cr_assert_not_null(ir_op_attr(mc, "out_shardings"));
  ir_op *red = test_find_op(m, "stablehlo.reduce", 0);
  cr_assert_eq(red->noperands, 2);
  cr_assert_eq(red->parent_op, mc);
  cr_assert_eq(ir_op_nresult_types(red), 1);
}

Test(mlir_parse, while_iter_args_and_regions) {
  const char *text = "func.func @w(%arg0: tensor<i64>) -> tensor<i64> {\n"
                     "  %0 = stablehlo.while(%iterArg = %arg0) : tensor<i64>\n"
                     "   cond {\n"
                     "    %c = stablehlo.compare  LT, %iterArg, %iterArg : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                     "    stablehlo.return %c : tensor<i1>\n"
                     "  } do {\n"
                     "    stablehlo.return %iterArg : tensor<i64>\n"
                     "  }\n"
                     "  return %0 : tensor<i64>\n"
                     "}\n";
  fe_parse_error err;
  ir_module *m = test_parse(A, text, &err);
  cr_assert_not_null(m, "parse failed: %s", err.message);
  ir_op *w = test_find_op(m, "stablehlo.while", 0);
  cr_assert_eq(w->nregions, 2);
  cr_assert_eq(w->noperands, 1);
  ir_op *cmp = test_find_op(m, "stablehlo.compare", 0);
  cr_assert_eq(cmp->noperands, 2);
  cr_assert_not_null(cmp->operands[0], "iter arg resolves inside the cond region");
  cr_assert_eq(ir_op_regions(w)[1]->blocks[0]->nops, 1);
}

/* ---- malformed input: a precise error, never a crash ---- */

static fe_parse_error expect_error(const char *text) {
  fe_parse_error err;
  ir_module *m = test_parse(A, text, &err);
  cr_assert_null(m, "expected a syntax error for: %s", text);
  cr_assert(err.failed);
  cr_assert_not_null(err.message);
  return err;
}

Test(mlir_parse, truncated_module) {
  fe_parse_error e = expect_error("module {\n  func.func @f() {\n    return\n");
  cr_assert(strstr(e.message, "not closed"), "%s", e.message);
}

Test(mlir_parse, unbalanced_brackets) {
  fe_parse_error e = expect_error("func.func @f(%a: tensor<4xf32>) {\n  %0 = d.op(%a] : tensor<4xf32>\n}\n");
  cr_assert(strstr(e.message, "expected ')'"), "%s", e.message);
  cr_assert_eq(e.offset, (uint32_t)(strchr("func.func @f(%a: tensor<4xf32>) {\n  %0 = d.op(%a] : tensor<4xf32>\n}\n", ']') -
                                    "func.func @f(%a: tensor<4xf32>) {\n  %0 = d.op(%a] : tensor<4xf32>\n}\n"));
}

Test(mlir_parse, stray_close_brace) { expect_error("}\n"); }

/* An op keeps its region count in 16 bits: one with more regions is refused, not cut. */
Test(mlir_parse, more_regions_than_an_op_keeps) {
  size_t n = 65536, k = 0;
  char *text = malloc(n * 4 + 64);
  cr_assert_not_null(text);
  k += (size_t)sprintf(text, "\"d.op\"() (");
  for (size_t i = 0; i < n; i++) k += (size_t)sprintf(text + k, i ? ", {}" : "{}");
  strcpy(text + k, ") : () -> ()\n");
  fe_parse_error e = expect_error(text);
  cr_assert(strstr(e.message, "more than 65535 regions"), "%s", e.message);
  text[strlen(text) - strlen(") : () -> ()\n") - 4] = '\0'; /* one region fewer is read */
  strcat(text, ") : () -> ()\n");
  fe_parse_error ok;
  ir_module *m = test_parse(A, text, &ok);
  cr_assert_not_null(m, "%s", ok.message ? ok.message : "");
  cr_assert_eq(test_find_op(m, "d.op", 0)->nregions, 65535);
  free(text);
}

/* An op keeps its name's length in 16 bits: a longer (generic, quoted) name is refused, not cut. */
Test(mlir_parse, op_name_longer_than_an_op_keeps) {
  size_t n = 70000;
  char *text = malloc(n + 64);
  cr_assert_not_null(text);
  char *q = text + sprintf(text, "\"builtin.module\"() ({\n  \"d.");
  memset(q, 'x', n);
  strcpy(q + n, "\"() : () -> ()\n}) : () -> ()\n");
  fe_parse_error e = expect_error(text);
  cr_assert(strstr(e.message, "operation name longer than 65535 bytes"), "%s", e.message);
  free(text);
}

Test(mlir_parse, unterminated_string) {
  fe_parse_error e = expect_error("module attributes {x = \"abc} {\n}\n");
  cr_assert(strstr(e.message, "unterminated string"), "%s", e.message);
}

Test(mlir_parse, binary_garbage) {
  char buf[512];
  unsigned s = 12345;
  for (size_t i = 0; i < sizeof buf - 1; i++) {
    s = s * 1103515245u + 12345u;
    buf[i] = (char)((s >> 16) & 0xff);
    if (!buf[i]) buf[i] = 1;
  }
  buf[sizeof buf - 1] = 0;
  expect_error(buf);
}

/* A type written as a type alias reads as its definition, for arguments, results and trailers. */
Test(mlir_parse, type_aliases_resolve) {
  fe_parse_error err = {0};
  ir_module *m = test_parse(A,
                            "!t = tensor<4x8xf32>\n!u = !t\n"
                            "func.func @f(%arg0: !u) -> (!t {jax.result_info = \"r\"}) {\n"
                            "  %0 = stablehlo.negate %arg0 : !t\n  return %0 : !t\n}\n",
                            &err);
  cr_assert_not_null(m, "%s", err.message);
  ir_op *f = test_find_op(m, "func.func", 0), *neg = test_find_op(m, "stablehlo.negate", 0);
  cr_assert(ir_span_eq(ir_value_type(ir_op_regions(f)[0]->blocks[0]->args[0]), "tensor<4x8xf32>"));
  cr_assert(ir_span_eq(ir_op_func_result_types(f)[0], "tensor<4x8xf32>"));
  cr_assert(ir_span_eq(ir_value_type(ir_op_result(neg, 0)), "tensor<4x8xf32>"));
}

/* MLIR reads a text with no op (empty, blank, only comments or definitions) as an empty module. */
Test(mlir_parse, empty_and_blank_are_an_empty_module) {
  const char *texts[] = {"", "  \n// only a comment\n", "#s = #sdy.sharding<@m, []>\n"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    fe_parse_error err = {0};
    ir_module *m = test_parse(A, texts[i], &err);
    cr_assert_not_null(m, "%s", err.message);
    cr_assert_eq(m->nops, 1, "the module alone");
    cr_assert(ir_span_eq(ir_op_name(m->module), "builtin.module"));
    cr_assert_eq(m->nfuncs, 0);
  }
}

Test(mlir_parse, deep_nesting_is_bounded) {
  size_t n = 100000;
  char *t = malloc(2 * n + 64);
  strcpy(t, "module attributes {x = ");
  size_t o = strlen(t);
  for (size_t i = 0; i < n; i++) t[o++] = '[';
  for (size_t i = 0; i < n; i++) t[o++] = ']';
  strcpy(t + o, "} {\n}\n");
  fe_parse_error e = expect_error(t);
  cr_assert(e.limit);
  cr_assert(strstr(e.message, "nesting deeper"), "%s", e.message);
  free(t);

  /* Regions nested 100k deep. */
  t = malloc(n * 32 + 64);
  o = 0;
  for (size_t i = 0; i < n; i++) o += (size_t)sprintf(t + o, "\"d.r\"() ({\n");
  for (size_t i = 0; i < n; i++) o += (size_t)sprintf(t + o, "}) : () -> ()\n");
  t[o] = 0;
  e = expect_error(t);
  cr_assert(e.limit, "%s", e.message);
  free(t);
}

Test(mlir_parse, not_an_op_at_block_level) {
  fe_parse_error e = expect_error("func.func @f() {\n  hello world\n}\n");
  cr_assert(strstr(e.message, "expected an operation"), "%s", e.message);
}

Test(mlir_parse, every_prefix_of_a_real_module_is_handled) {
  /* Truncation at every byte: each either parses or fails cleanly with an offset inside the input. */
  size_t len = strlen(JAX_SHAPED);
  for (size_t cut = 0; cut < len; cut++) {
    sc_arena *a = sc_arena_new(0);
    char *t = strndup(JAX_SHAPED, cut);
    fe_parse_error err;
    ir_linemap lines = ir_linemap_build(a, t, cut);
    fe_parse_input in = {a, t, cut, 0, (uint32_t)cut, &lines, 64, 100000, NULL};
    ir_module *m = fe_parse_mlir(&in, &err);
    if (!m) cr_assert(err.failed && err.offset <= cut, "cut %zu: bad error state", cut);
    free(t);
    sc_arena_free(a);
  }
}

Test(mlir_parse, generic_symbols_come_from_properties) {
  fe_parse_error err;
  ir_module *m = test_parse(A,
                            "\"builtin.module\"() ({\n"
                            "  \"func.func\"() <{function_type = () -> (), sym_name = \"main\", sym_visibility = \"private\"}> ({\n"
                            "    \"func.call\"() <{callee = @g}> : () -> ()\n"
                            "    \"func.return\"() : () -> ()\n"
                            "  }) : () -> ()\n"
                            "}) : () -> ()\n",
                            &err);
  cr_assert_not_null(m, "%s", err.message);
  cr_assert(ir_span_eq(ir_op_sym_name(m->funcs[0]), "main"));
  cr_assert(ir_span_eq(ir_op_visibility(m->funcs[0]), "private"));
  cr_assert(ir_span_eq(ir_op_callee(test_find_op(m, "func.call", 0)), "g"));
  cr_assert_eq(ir_op_func(test_find_op(m, "func.call", 0)), m->funcs[0]);
}

Test(mlir_parse, op_text_ends_at_its_last_token) {
  fe_parse_error err;
  ir_module *m = test_parse(A, "func.func @f() {\n  %0 = d.op() : () -> i32 // trailing comment\n  return\n}\n", &err);
  cr_assert_not_null(m, "%s", err.message);
  cr_assert(ir_span_eq(ir_op_text(m, test_find_op(m, "d.op", 0)), "%0 = d.op() : () -> i32"));
  cr_assert(ir_span_eq(ir_op_text(m, test_find_op(m, "func.return", 0)), "return"));
  cr_assert(ir_span_eq(ir_op_text(m, test_find_op(m, "func.func", 0)), "func.func @f() {\n  %0 = d.op() : () -> i32 // trailing comment\n  return\n}"));
}

Test(mlir_parse, bare_words_in_custom_syntax, .timeout = 10) {
  /* Keywords and enum words between operands (custom syntax) are skipped, one token at a time. */
  fe_parse_error err;
  ir_module *m = test_parse(A,
                            "func.func public @f(%a: tensor<i32>) -> tensor<i1> {\n"
                            "  %0 = stablehlo.compare  LT, %a, %a,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                            "  return %0 : tensor<i1>\n"
                            "}\n",
                            &err);
  cr_assert_not_null(m, "%s", err.message);
  cr_assert_eq(test_find_op(m, "stablehlo.compare", 0)->noperands, 2);
}
