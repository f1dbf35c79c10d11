/* IR helpers: spans, line map, tensor types, debug-location resolution, walks. */
#include <criterion/criterion.h>

#include "helpers.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(ir, .init = setup, .fini = teardown);

/* The map samples the buffer; every offset still gets its exact line and column (checked against a
 * count from the start), in short lines, long lines past the byte step, and empty ones. */
Test(ir, linemap_samples_give_exact_positions) {
  size_t n = 200000;
  char *t = ar_alloc(A, n);
  uint64_t x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    unsigned r = (unsigned)(x >> 33) % 1000;
    t[i] = r < (i < n / 2 ? 40u : 1u) ? '\n' : 'a'; /* short lines, then lines of ~1000 bytes */
  }
  memset(t + 50000, 'b', 20000);                  /* one line longer than several byte steps */
  ir_linemap m = ir_linemap_build(A, t, n);
  cr_assert_lt(m.nsamples, m.nlines / 4);
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < n; i++) {
    ir_pos p = ir_linemap_pos(&m, (uint32_t)i);
    cr_assert(p.line == line && p.col == col, "offset %zu: %u:%u, expected %u:%u", i, p.line, p.col, line, col);
    if (t[i] == '\n') line++, col = 1;
    else col++;
  }
}

Test(ir, linemap_positions) {
  const char *t = "ab\ncd\n\nxyz";
  ir_linemap m = ir_linemap_build(A, t, strlen(t));
  cr_assert_eq(m.nlines, 4);
  ir_pos p = ir_linemap_pos(&m, 0);
  cr_assert(p.line == 1 && p.col == 1);
  p = ir_linemap_pos(&m, 4);
  cr_assert(p.line == 2 && p.col == 2);
  p = ir_linemap_pos(&m, 7);
  cr_assert(p.line == 4 && p.col == 1);
}

Test(ir, unquote_mlir_strings) {
  cr_assert_str_eq(ir_span_unquote(A, ir_span_of("\"a\\22b\\\\c\"", 10)), "a\"b\\c");
  cr_assert_str_eq(ir_span_unquote(A, ir_span_of("plain", 5)), "plain");
}

Test(ir, tensor_types) {
  ir_tensor_type t;
  cr_assert(ir_parse_tensor_type(A, ir_span_of("tensor<8x?x16xf32>", 18), &t));
  cr_assert_eq(t.rank, 3);
  cr_assert(t.dims[0] == 8 && t.dims[1] == -1 && t.dims[2] == 16);
  cr_assert(ir_span_eq(t.element, "f32"));
  cr_assert(ir_parse_tensor_type(A, ir_span_of("tensor<f32>", 11), &t));
  cr_assert_eq(t.rank, 0);
  cr_assert(ir_parse_tensor_type(A, ir_span_of("tensor<4xi32, #enc>", 19), &t));
  cr_assert(t.rank == 1 && ir_span_eq(t.element, "i32"));
  cr_assert(ir_parse_tensor_type(A, ir_span_of("f32[8,16]{1,0}", 14), &t));
  cr_assert(t.rank == 2 && t.dims[1] == 16 && ir_span_eq(t.element, "f32"));
  cr_assert(ir_parse_tensor_type(A, ir_span_of("s32[]", 5), &t));
  cr_assert_eq(t.rank, 0);
  cr_assert_not(ir_parse_tensor_type(A, ir_span_of("!stablehlo.token", 16), &t));
  cr_assert_not(ir_parse_tensor_type(A, ir_span_of("tensor<2x", 9), &t));
}

static ir_srcloc loc_of(const char *text, const char *opname) {
  fe_parse_error err;
  ir_module *m = test_parse(A, text, &err);
  cr_assert_not_null(m, "%s", err.message);
  return ir_op_srcloc(m, test_find_op(m, opname, 0));
}

Test(ir, locations_callsite_fused_named_alias) {
  ir_srcloc s = loc_of("\"d.a\"() : () -> () loc(callsite(\"f\"(\"in.py\":3:4) at \"out.py\":9:1))\n", "d.a");
  cr_assert(s.known && ir_span_eq(s.file, "in.py") && s.line == 3 && s.col == 4);
  s = loc_of("\"d.a\"() : () -> () loc(fused[\"a.py\":1:2, \"b.py\":3:4])\n", "d.a");
  cr_assert(s.known && ir_span_eq(s.file, "a.py"));
  s = loc_of("\"d.a\"() : () -> () loc(#l2)\n#l1 = loc(\"m.py\":7:8 to :20)\n#l2 = loc(\"name\"(#l1))\n", "d.a");
  cr_assert(s.known && s.line == 7 && s.col == 8);
  s = loc_of("\"d.a\"() : () -> () loc(unknown)\n", "d.a");
  cr_assert_not(s.known);
  /* An alias cycle ends without resolving instead of looping. */
  s = loc_of("\"d.a\"() : () -> () loc(#c1)\n#c1 = loc(\"n\"(#c2))\n#c2 = loc(\"n\"(#c1))\n", "d.a");
  cr_assert_not(s.known);
}

static bool count_op(ir_op *op, void *user) {
  (void)op;
  (*(int *)user)++;
  return true;
}

Test(ir, walk_visits_every_op_in_preorder) {
  fe_parse_error err;
  ir_module *m = test_parse(A, "\"d.a\"() ({\n  \"d.b\"() ({\n    \"d.c\"() : () -> ()\n  }) : () -> ()\n}) : () -> ()\n\"d.e\"() : () -> ()\n", &err);
  cr_assert_not_null(m);
  int n = 0;
  ir_op_walk(m->module, count_op, &n);
  cr_assert_eq(n, (int)m->nops);
  cr_assert_eq(m->nops, 5);
  cr_assert(ir_span_eq(ir_op_name(m->ops[3]), "d.c"));
  cr_assert_eq(ir_op_depth(m->ops[3]), 3);
}

/* m->ops is built after the parse: every op once, in preorder, at its id, for an explicit module (whose
 * implicit root is dropped) and for top-level ops under the implicit root. */
Test(ir, ops_array_is_preorder_by_id) {
  const char *texts[] = {
      "module {\n  func.func @f() {\n    \"d.x\"() ({\n      \"d.y\"() : () -> ()\n    }) : () -> ()\n    return\n  }\n"
      "  func.func @g() {\n    return\n  }\n}\n",
      "\"d.a\"() ({\n  \"d.b\"() : () -> ()\n}) : () -> ()\n\"d.c\"() : () -> ()\n"};
  const char *names[][8] = {{"builtin.module", "func.func", "d.x", "d.y", "func.return", "func.func", "func.return"},
                            {"builtin.module", "d.a", "d.b", "d.c"}};
  uint32_t counts[] = {7, 4};
  for (int t = 0; t < 2; t++) {
    fe_parse_error err;
    ir_module *m = test_parse(A, texts[t], &err);
    cr_assert_not_null(m);
    cr_assert_eq(m->nops, counts[t]);
    cr_assert_eq(m->ops[0], m->module);
    for (uint32_t i = 0; i < m->nops; i++) {
      cr_assert_eq(m->ops[i]->id, i);
      cr_assert(ir_span_eq(ir_op_name(m->ops[i]), names[t][i]), "op %u is %.*s", i, SC_SPAN_ARG(ir_op_name(m->ops[i])));
      cr_assert(i == 0 || m->ops[i]->parent_op->id < i);
    }
  }
}

/* Finalizing interns op names: one id per distinct bare name (generic and pretty spellings alike), in
 * order of first use, so passes classify a name once; a name no op has is known to be absent. */
Test(ir, op_names_are_interned_once_per_module) {
  const char *mlir = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n"
                     "  %1 = \"stablehlo.add\"(%0, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
                     "  %2 = stablehlo.multiply %1, %0 : tensor<2xf32>\n"
                     "  return %2 : tensor<2xf32>\n}\n";
  const char *hlo = "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  a = f32[2] add(p, p)\n"
                    "  ROOT b = f32[2] add(a, p)\n}\n";
  const char *texts[] = {mlir, hlo};
  for (int t = 0; t < 2; t++) {
    sc_arena *a = sc_arena_new(0);
    ir_linemap lines = ir_linemap_build(a, texts[t], strlen(texts[t]));
    fe_parse_input in = {a, texts[t], strlen(texts[t]), 0, (uint32_t)strlen(texts[t]), &lines, SC_DEFAULT_MAX_DEPTH,
                         SC_DEFAULT_MAX_OPS, NULL};
    fe_parse_error err;
    memset(&err, 0, sizeof err);
    ir_module *m = fe_parse_format(fe_detect_format(texts[t], strlen(texts[t])), &in, &err);
    cr_assert_not_null(m);
    ir_module_finalize(a, m);
    const ir_op *adds[2] = {NULL, NULL};
    for (uint32_t i = 0; i < m->nops; i++) {
      const ir_op *op = m->ops[i];
      cr_assert(op->name_id >= 1 && op->name_id <= m->nop_names);
      cr_assert(ir_span_same(m->op_names[op->name_id - 1], ir_op_bare_name(op)));
      for (uint32_t j = 0; j < i; j++) /* same id exactly when the same name */
        cr_assert_eq(m->ops[j]->name_id == op->name_id, ir_span_same(ir_op_bare_name(m->ops[j]), ir_op_bare_name(op)));
      if (ir_span_eq(ir_op_bare_name(op), t ? "add" : "stablehlo.add")) adds[adds[0] ? 1 : 0] = op;
    }
    cr_assert(adds[0] && adds[1] && adds[0]->name_id == adds[1]->name_id);
    for (uint32_t k = 0; k < m->nop_names; k++)
      for (uint32_t j = 0; j < k; j++) cr_assert_not(ir_span_same(m->op_names[j], m->op_names[k]));
    cr_assert(ir_module_may_name(m, t ? "add" : "stablehlo.multiply"));
    cr_assert_not(ir_module_may_name(m, "sdy.sharding_group"));
    sc_arena_free(a);
  }
}

/* Past IR_MAX_OP_NAMES distinct names, ops get no id (name_id 0) but are still classified, and the
 * module no longer rules any name out. */
Test(ir, op_names_past_the_table_get_no_id) {
  ar_str text = SC_ASTR_INIT(A);
  ar_str_puts(&text, "func.func @f() {\n");
  for (uint32_t i = 0; i < IR_MAX_OP_NAMES + 10; i++) ar_str_printf(&text, "  \"d.op%u\"() : () -> ()\n", i);
  ar_str_puts(&text, "  \"stablehlo.custom_call\"() {call_target_name = \"Sharding\"} : () -> ()\n  return\n}\n");
  fe_parse_error err;
  memset(&err, 0, sizeof err);
  ir_module *m = test_parse(A, ar_str_str(&text), &err);
  cr_assert_not_null(m, "%s", err.message);
  cr_assert_eq(m->nop_names, IR_MAX_OP_NAMES);
  uint32_t unnamed = 0;
  for (uint32_t i = 0; i < m->nops; i++) {
    unnamed += m->ops[i]->name_id == 0;
    cr_assert(m->ops[i]->classified);
  }
  cr_assert_geq(unnamed, 10);
  const ir_op *cc = m->ops[m->nops - 2];
  cr_assert_eq(cc->name_id, 0);
  cr_assert_eq(cc->kind, SC_OP_CUSTOM_CALL);
  cr_assert_eq(cc->cc, SC_CC_SHARDING);
  cr_assert(ir_module_may_name(m, "sdy.sharding_group")); /* the table is full: any name may be there */
}

/* The per-op records are what a large module's memory is made of (issue 8): these sizes are the budget;
 * a field that only some ops or values have goes behind a pointer (ir_op_extra, ir_op_decl, attrs). */
Test(ir, per_op_records_stay_small) {
  /* one of each per op: ~10^6 in a 100 MB module, so 8 bytes here are 8 MB there */
  cr_assert_leq(sizeof(ir_op), 96);
  cr_assert_leq(sizeof(ir_value), 32);
  cr_assert_leq(sizeof(ir_op_extra), 72); /* every HLO instruction has one; plain MLIR ops none */
}

Test(ir, detect_format) {
  cr_assert_eq(fe_detect_format("// c\nHloModule m\n", 16), SC_FMT_HLO);
  cr_assert_eq(fe_detect_format("module {}", 9), SC_FMT_STABLEHLO);
  /* a licence header in a block comment, as jaxlib's .hlo files open */
  const char *hlo = "/* Copyright\n * The Authors. */\n// more\nHloModule m\n";
  cr_assert_eq(fe_detect_format(hlo, strlen(hlo)), SC_FMT_HLO);
  cr_assert_eq(fe_detect_format("/* never closed HloModule", 25), SC_FMT_STABLEHLO);
  /* HLO without its header starts with a computation; MLIR never with a name and then '{' or '(' */
  const char *hlo_texts[] = {"ENTRY e {\n}\n", "add.1 {\n}\n", "%region_0.5 (a: f32[]) -> f32[] {\n}\n"};
  for (size_t i = 0; i < 3; i++) cr_assert_eq(fe_detect_format(hlo_texts[i], strlen(hlo_texts[i])), SC_FMT_HLO, "%s", hlo_texts[i]);
  const char *mlir_texts[] = {"module {\n}\n", "module @m attributes {} {\n}\n", "func.func @f() {\n}\n",
                              "sdy.mesh @m = <[]>\n", "\"builtin.module\"() ({\n}) : () -> ()\n", "%0 = foo.bar() : () -> ()\n"};
  for (size_t i = 0; i < 6; i++)
    cr_assert_eq(fe_detect_format(mlir_texts[i], strlen(mlir_texts[i])), SC_FMT_STABLEHLO, "%s", mlir_texts[i]);
}

/* Op kinds are computed once from names (pretty and generic forms alike) and custom call targets. */
Test(ir, op_kinds_and_custom_call_classes) {
  const char *t = "module {\n"
                  "  sdy.mesh @mesh = <[\"x\"=2]>\n"
                  "  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                  "    %0 = stablehlo.custom_call @tpu_custom_call(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
                  "    %1 = \"stablehlo.custom_call\"(%0) {call_target_name = \"SPMDFullToShardShape\"} : (tensor<4xf32>) -> tensor<4xf32>\n"
                  "    %2 = stablehlo.custom_call @xla_ffi_python_gpu_callback(%1) : (tensor<4xf32>) -> tensor<4xf32>\n"
                  "    %3 = \"sdy.all_reduce\"(%2) : (tensor<4xf32>) -> tensor<4xf32>\n"
                  "    %4 = sdy.some_future_op %3 : tensor<4xf32>\n"
                  "    %5 = stablehlo.add %4, %4 : tensor<4xf32>\n"
                  "    return %5 : tensor<4xf32>\n"
                  "  }\n"
                  "}\n";
  fe_parse_error err;
  ir_module *m = test_parse(A, t, &err);
  cr_assert_not_null(m, "%s", err.message);
  static const struct {
    uint8_t kind, cc;
    const char *target;
  } want[] = {{SC_OP_MODULE, SC_CC_NONE, ""},
              {SC_OP_SDY_MESH, SC_CC_NONE, ""},
              {SC_OP_FUNC, SC_CC_NONE, ""},
              {SC_OP_CUSTOM_CALL, SC_CC_MOSAIC_TPU, "tpu_custom_call"},
              {SC_OP_CUSTOM_CALL, SC_CC_FULL_TO_SHARD, "SPMDFullToShardShape"},
              {SC_OP_CUSTOM_CALL, SC_CC_HOST_CALLBACK_GPU, "xla_ffi_python_gpu_callback"},
              {SC_OP_SDY_ALL_REDUCE, SC_CC_NONE, ""},
              {SC_OP_SDY_OTHER, SC_CC_NONE, ""},
              {SC_OP_OTHER, SC_CC_NONE, ""},
              {SC_OP_RETURN, SC_CC_NONE, ""}};
  cr_assert_eq(m->nops, sizeof want / sizeof *want);
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    cr_assert(op->classified, "op %u", i);
    cr_assert_eq(op->kind, want[i].kind, "op %u (%.*s): kind %u", i, SC_SPAN_ARG(ir_op_name(op)), op->kind);
    cr_assert_eq(op->cc, want[i].cc, "op %u: class %u", i, op->cc);
    cr_assert(ir_span_eq(ir_op_custom_call_target(op), want[i].target), "op %u", i);
  }
  cr_assert_eq(m->ops[0]->subtree_end, m->nops);          /* the module holds everything */
  cr_assert_eq(m->ops[1]->subtree_end, 2);                /* sdy.mesh: a leaf */
  cr_assert_eq(m->ops[2]->subtree_end, m->nops);          /* main holds the rest */
  cr_assert(ir_op_kind_is_sdy(SC_OP_SDY_OTHER) && ir_op_kind_is_sdy_collective(SC_OP_SDY_ALL_REDUCE));
  cr_assert(!ir_op_kind_is_sdy(SC_OP_CUSTOM_CALL) && !ir_op_kind_is_sdy_collective(SC_OP_SDY_MESH));
}

/* ir_skip_string jumps between quotes with memchr; a quote closes the string unless an odd run of
 * backslashes precedes it — the same answers as reading byte by byte. */
Test(ir, skip_string_escapes) {
  struct {
    const char *text;
    int end; /* offset just past the closing quote; -1 = unclosed */
  } cases[] = {
      {"\"\"x", 2},         {"\"ab\" c", 4},        {"\"a\\\"b\" c", 6},  {"\"a\\\\\" c", 5},
      {"\"a\\\\\\\"b\"", 8}, {"\"\\\\\\\\\"z", 6},   {"\"no end", -1},     {"\"a\\\"", -1},
      {"\"\\22k\\22\"!", 9}, {"\"x\\\\\\\\\\\"", -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *t = cases[i].text, *end = t + strlen(t);
    const char *got = ir_skip_string(t, end);
    cr_assert_eq(got - t, cases[i].end < 0 ? end - t : cases[i].end, "case %zu: %s", i, t);
  }
}
