/* Op sharding rules (lib/propagate/op_rule*.c): invariants of every rule the registry builds for the
 * ops of Shardy's registry tests, Shardy's own rule texts parsed and printed back unchanged, the
 * attribute forms each front end writes, and hostile inputs (no crash, an error, linear memory). */
#include <criterion/criterion.h>

#include "helpers.h"
#include "propagate/op_rule.h"
#include "propagate/op_rule_build.h"

static int32_t pb_int_list_for_test(sc_arena *a, const char *text, int64_t **out) {
  return pb_int_list(a, ir_span_of(text, (uint32_t)strlen(text)), out);
}

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(op_rule, .init = setup, .fini = teardown);

static const char *REGISTRY_TESTS[] = {
    "../shared/corpus/shardy/propagation/op_sharding_rule_registry.mlir",
    "../shared/corpus/shardy/propagation/op_sharding_rule_registry_conservative.mlir",
    "../shared/corpus/shardy/propagation/op_sharding_rule_registry_failures.mlir",
};

static ir_module *parse_file(const char *path, char **buf) {
  size_t len;
  *buf = test_read_file(path, &len);
  cr_assert_not_null(*buf, "missing corpus file %s", path);
  fe_parse_error err;
  ir_module *m = test_parse(A, *buf, &err);
  cr_assert_not_null(m, "%s: %s", path, err.message);
  return m;
}

/* The rule of the first op named `name` in `text`. */
static const prop_rule *rule_in(const char *text, const char *name, bool conservative, const char **err) {
  fe_parse_error perr;
  ir_module *m = test_parse(A, text, &perr);
  cr_assert_not_null(m, "parse: %s", perr.message);
  ir_op *op = test_find_op(m, name, 0);
  cr_assert_not_null(op, "no %s", name);
  prop_rule_options opt = {conservative, prop_rule_facts_build(A, m)};
  return prop_rule_of(A, m, op, &opt, err);
}

static const char *rule_text(const char *text, const char *name) {
  const char *err = NULL;
  const prop_rule *r = rule_in(text, name, false, &err);
  cr_assert_not_null(r, "no rule for %s: %s", name, err ? err : "(none)");
  return prop_rule_str(A, r);
}

static ir_span type_of(const ir_op *op, bool result, uint32_t i) {
  if (result && ir_op_nresult_types(op) >= op->nresults) return ir_op_result_types(op)[ir_op_nresult_types(op) - op->nresults + i];
  if (result) return ir_value_type(ir_op_result(op, i));
  return ir_op_noperand_types(op) == op->noperands ? ir_op_operand_types(op)[i] : ir_value_type(op->operands[i]);
}

/* A dimension's factors multiply to its size, unless one of them needs communication (the rule maps
 * dimensions of different sizes: slice, pad, windows) or it only has the size-1 placeholder. */
static void check_dim(const prop_rule *r, const prop_dim *d, int64_t size, const char *where) {
  cr_assert_gt(d->nfactors, 0, "%s: a dimension without factors", where);
  int64_t product = 1;
  bool communicates = false;
  for (uint32_t k = 0; k < d->nfactors; k++) {
    cr_assert_lt(d->factors[k], r->nfactors, "%s: factor index out of range", where);
    const prop_factor *f = &r->factors[d->factors[k]];
    product *= f->size;
    communicates = communicates || f->type != PROP_FACTOR_PASS_THROUGH || f->blocked;
  }
  bool placeholder = d->nfactors == 1 && r->factors[d->factors[0]].size == 1;
  cr_assert(product == size || communicates || placeholder, "%s: factors multiply to %lld, dimension is %lld", where,
            (long long)product, (long long)size);
}

static void check_tensors(const ir_op *op, const prop_rule *r, bool results, bool *used) {
  uint32_t n = results ? r->nresults : r->noperands;
  const prop_tensor *t = results ? r->results : r->operands;
  cr_assert_eq(n, results ? op->nresults : op->noperands);
  for (uint32_t i = 0; i < n; i++) {
    ir_tensor_type ty;
    cr_assert(ir_parse_tensor_type(A, type_of(op, results, i), &ty));
    cr_assert_eq((int32_t)t[i].rank, ty.rank, "line op %.*s: rank", SC_SPAN_ARG(ir_op_name(op)));
    for (uint32_t d = 0; d < t[i].rank; d++) {
      char where[128];
      snprintf(where, sizeof where, "%.*s %s %u dim %u", SC_SPAN_ARG(ir_op_name(op)), results ? "result" : "operand", i, d);
      check_dim(r, &t[i].dims[d], ty.dims[d], where);
      for (uint32_t k = 0; k < t[i].dims[d].nfactors; k++) used[t[i].dims[d].factors[k]] = true;
    }
  }
}

Test(op_rule, registry_rules_keep_their_invariants) {
  size_t rules = 0;
  for (size_t f = 0; f < sizeof REGISTRY_TESTS / sizeof *REGISTRY_TESTS; f++) {
    for (int conservative = 0; conservative < 2; conservative++) {
      char *buf;
      ir_module *m = parse_file(REGISTRY_TESTS[f], &buf);
      prop_rule_options opt = {conservative, prop_rule_facts_build(A, m)};
      for (uint32_t i = 0; i < m->nops; i++) {
        const ir_op *op = m->ops[i];
        const char *err = NULL;
        const prop_rule *r = prop_rule_of(A, m, op, &opt, &err);
        cr_assert_null(err, "%.*s: %s", SC_SPAN_ARG(ir_op_name(op)), err);
        if (!r) continue;
        rules++;
        bool *used = ar_calloc(A, r->nfactors + 1, 1);
        check_tensors(op, r, false, used);
        check_tensors(op, r, true, used);
        for (uint32_t k = 0; k < r->nfactors; k++)
          cr_assert(used[k], "%.*s: factor %u is on no dimension", SC_SPAN_ARG(ir_op_name(op)), k);
        /* The printed rule parses back to itself. */
        const char *s = prop_rule_str(A, r);
        const prop_rule *back = prop_rule_parse(A, ir_span_of(s, (uint32_t)strlen(s)), &err);
        cr_assert_not_null(back, "%s: %s", s, err);
        cr_assert_str_eq(prop_rule_str(A, back), s);
      }
      free(buf);
    }
  }
  cr_assert_geq(rules, 2 * 125, "rules built: %zu", rules);
}

/* Shardy's own printed rules (its CHECK lines) parse and print back byte for byte. */
Test(op_rule, shardys_rule_texts_round_trip) {
  size_t seen = 0;
  for (size_t f = 0; f < sizeof REGISTRY_TESTS / sizeof *REGISTRY_TESTS; f++) {
    char *buf = test_read_file(REGISTRY_TESTS[f], NULL);
    cr_assert_not_null(buf);
    for (const char *p = buf; (p = strstr(p, "#sdy.op_sharding_rule<")) != NULL; p++) {
      const char *q = p + strlen("#sdy.op_sharding_rule");
      int depth = 0;
      for (; *q && *q != '\n'; q++) {
        if (*q == '<') depth++;
        if (*q == '>' && q[-1] != '-' && --depth == 0) break;
      }
      if (*q != '>') continue; /* a CHECK that stops before the rule's end */
      ir_span text = ir_span_of(p, (uint32_t)(q + 1 - p));
      const char *err = NULL;
      const prop_rule *r = prop_rule_parse(A, text, &err);
      cr_assert_not_null(r, "%.*s: %s", SC_SPAN_ARG(text), err);
      cr_assert(ir_span_eq(text, prop_rule_str(A, r)), "%.*s printed as %s", SC_SPAN_ARG(text), prop_rule_str(A, r));
      seen++;
    }
    free(buf);
  }
  cr_assert_geq(seen, 125, "rule texts: %zu", seen);
}

Test(op_rule, factor_symbols) {
  ar_str s = SC_ASTR_INIT(A);
  prop_factor_symbol(&s, 0);
  prop_factor_symbol(&s, 17);
  prop_factor_symbol(&s, 18);
  prop_factor_symbol(&s, 30);
  cr_assert_str_eq(ar_str_str(&s), "izz_1z_13");
  const char *text = "#sdy.op_sharding_rule<([z_1z_2])->([z_2]) {i=1, j=1, k=1, l=1, m=1, n=1, o=1, p=1, q=1, r=1, "
                     "s=1, t=1, u=1, v=1, w=1, x=1, y=1, z=1, z_1=2, z_2=3} reduction={z_1}, custom>";
  const prop_rule *r = prop_rule_parse(A, ir_span_of(text, (uint32_t)strlen(text)), NULL);
  cr_assert_not_null(r);
  cr_assert_eq(r->nfactors, 20);
  cr_assert_eq(r->operands[0].dims[0].nfactors, 2);
  cr_assert_eq(r->operands[0].dims[0].factors[1], 19);
  cr_assert_eq(r->factors[18].type, PROP_FACTOR_REDUCTION);
  cr_assert(r->custom);
}

/* The same op written in the forms front ends and JAX produce gives the same rule. */
Test(op_rule, generic_and_pretty_attribute_forms) {
  const char *dot_pretty = "func.func @f(%a: tensor<4x8x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {\n"
                           "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]"
                           " : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>\n"
                           "  return %0 : tensor<4x8x16xf32>\n}\n";
  const char *dot_generic =
      "func.func @f(%a: tensor<4x8x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {\n"
      "  %0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0],"
      " rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}"
      " : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>\n"
      "  return %0 : tensor<4x8x16xf32>\n}\n";
  const char *want = "#sdy.op_sharding_rule<([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=16, l=32} reduction={l}>";
  cr_assert_str_eq(rule_text(dot_pretty, "stablehlo.dot_general"), want);
  cr_assert_str_eq(rule_text(dot_generic, "stablehlo.dot_general"), want);

  const char *conv_raw =
      "func.func @f(%a: tensor<2x224x224x192xf32>, %b: tensor<3x3x192x64xf32>) -> tensor<2x112x112x64xf32> {\n"
      "  %0 = \"stablehlo.convolution\"(%a, %b) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<raw"
      " input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2],"
      " kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1],"
      " output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,"
      " feature_group_count = 1 : i64, window_strides = array<i64: 2, 2>}"
      " : (tensor<2x224x224x192xf32>, tensor<3x3x192x64xf32>) -> tensor<2x112x112x64xf32>\n"
      "  return %0 : tensor<2x112x112x64xf32>\n}\n";
  cr_assert_str_eq(rule_text(conv_raw, "stablehlo.convolution"),
                   "#sdy.op_sharding_rule<([i, jk, lm, n], [k, m, n, o])->([i, j, l, o]) {i=2, j=112, k=2, l=112, "
                   "m=2, n=192, o=64} reduction={k, m, n} permutation={j, l}>");

  const char *transpose_generic =
      "func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
      "  %0 = \"stablehlo.transpose\"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "  \"func.return\"(%0) : (tensor<3x2xf32>) -> ()\n}\n";
  cr_assert_str_eq(rule_text(transpose_generic, "stablehlo.transpose"),
                   "#sdy.op_sharding_rule<([j, i])->([i, j]) {i=3, j=2}>");
  const char *transpose_dense = /* older printers: dense<...> : tensor<2xi64> */
      "func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
      "  %0 = \"mhlo.transpose\"(%a) {permutation = dense<[1, 0]> : tensor<2xi64>} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "  return %0 : tensor<3x2xf32>\n}\n";
  cr_assert_str_eq(rule_text(transpose_dense, "mhlo.transpose"), "#sdy.op_sharding_rule<([j, i])->([i, j]) {i=3, j=2}>");

  /* A pretty op with one trailing type: the operands' types come from their values or that type. */
  const char *select = "func.func @f(%p: tensor<i1>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
                       "  %0 = stablehlo.select %p, %a, %a : tensor<i1>, tensor<4x8xf32>\n"
                       "  return %0 : tensor<4x8xf32>\n}\n";
  cr_assert_str_eq(rule_text(select, "stablehlo.select"),
                   "#sdy.op_sharding_rule<([], [i, j], [i, j])->([i, j]) {i=4, j=8}>");
}

Test(op_rule, written_rule_wins_and_must_fit) {
  const char *ok = "func.func @f(%a: tensor<4x2xf32>) -> tensor<2x4xf32> {\n"
                   "  %0 = stablehlo.custom_call @foo(%a) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i])"
                   " {i=4, j=2}, custom>} : (tensor<4x2xf32>) -> tensor<2x4xf32>\n"
                   "  return %0 : tensor<2x4xf32>\n}\n";
  cr_assert_str_eq(rule_text(ok, "stablehlo.custom_call"),
                   "#sdy.op_sharding_rule<([i, j])->([j, i]) {i=4, j=2}, custom>");
  const char *wrong_rank = "func.func @f(%a: tensor<4x2xf32>) -> tensor<2x4xf32> {\n"
                           "  %0 = stablehlo.custom_call @foo(%a) {sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i])"
                           " {i=4}, custom>} : (tensor<4x2xf32>) -> tensor<2x4xf32>\n"
                           "  return %0 : tensor<2x4xf32>\n}\n";
  const char *err = NULL;
  cr_assert_null(rule_in(wrong_rank, "stablehlo.custom_call", false, &err));
  cr_assert_not_null(err);
  cr_assert(strstr(err, "mapping rank must match"), "%s", err);
}

Test(op_rule, unknown_ops_warn_as_shardy_does) {
  fe_parse_error perr;
  ir_module *m = test_parse(A,
                            "func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
                            "  %0 = stablehlo.custom_call @mystery(%a) : (tensor<8xf32>) -> tensor<8xf32>\n"
                            "  %1 = stablehlo.custom_call @tpu_custom_call(%0) : (tensor<8xf32>) -> tensor<8xf32>\n"
                            "  %2 = stablehlo.batch_norm_training %1 : tensor<8xf32>\n"
                            "  %3 = stablehlo.iota dim = 0 : tensor<8xf32>\n"
                            "  return %2 : tensor<8xf32>\n}\n",
                            &perr);
  cr_assert_not_null(m);
  const char *err = NULL;
  for (int i = 0; i < 2; i++) {
    ir_op *cc = test_find_op(m, "stablehlo.custom_call", i);
    cr_assert_null(prop_rule_of(A, m, cc, NULL, &err));
    cr_assert_null(err);
  }
  cr_assert_str_eq(prop_rule_warning(A, test_find_op(m, "stablehlo.custom_call", 0)),
                   "custom call @mystery is unknown to SDY sharding rule registry");
  cr_assert_null(prop_rule_warning(A, test_find_op(m, "stablehlo.custom_call", 1))); /* known: no rule */
  cr_assert_str_eq(prop_rule_warning(A, test_find_op(m, "stablehlo.batch_norm_training", 0)),
                   "op 'stablehlo.batch_norm_training' is unknown to SDY sharding rule registry");
  cr_assert_null(prop_rule_warning(A, test_find_op(m, "stablehlo.iota", 0)));
  cr_assert_null(prop_rule_warning(A, test_find_op(m, "func.return", 0)));
}

/* X64Combine feeding rng_bit_generator: the same answer with the module's facts and without. */
Test(op_rule, x64_combine_with_and_without_facts) {
  const char *text = "func.func @f(%a: tensor<2xui32>, %b: tensor<2xui32>) -> tensor<4x8xui32> {\n"
                     "  %0 = stablehlo.custom_call @X64Combine(%a, %b) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui64>\n"
                     "  %s, %o = stablehlo.rng_bit_generator %0, algorithm = DEFAULT : (tensor<2xui64>) -> "
                     "(tensor<2xui64>, tensor<4x8xui32>)\n"
                     "  return %o : tensor<4x8xui32>\n}\n";
  fe_parse_error perr;
  ir_module *m = test_parse(A, text, &perr);
  ir_op *op = test_find_op(m, "stablehlo.custom_call", 0);
  prop_rule_options with = {false, prop_rule_facts_build(A, m)}, without = {false, NULL};
  const char *want = "#sdy.op_sharding_rule<([i], [i])->([i]) {i=2} need_replication={i} blocked_propagation={i}>";
  cr_assert_str_eq(prop_rule_str(A, prop_rule_of(A, m, op, &with, NULL)), want);
  cr_assert_str_eq(prop_rule_str(A, prop_rule_of(A, m, op, &without, NULL)), want);
}

/* ---- hostile inputs: an error or no rule, never a crash ---- */

static void expect_error(const char *text, const char *name) {
  const char *err = NULL;
  const prop_rule *r = rule_in(text, name, false, &err);
  cr_assert_null(r, "%s got a rule: %s", name, r ? prop_rule_str(A, r) : "");
  cr_assert_not_null(err, "%s: no error", name);
}

Test(op_rule, malformed_attributes_are_errors) {
  expect_error("func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
               "  %0 = stablehlo.transpose %a, dims = [7, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
               "  return %0 : tensor<3x2xf32>\n}\n",
               "stablehlo.transpose");
  expect_error("func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
               "  %0 = stablehlo.transpose %a, dims = [zz] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
               "  return %0 : tensor<3x2xf32>\n}\n",
               "stablehlo.transpose");
  expect_error("func.func @f(%a: tensor<8x32xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {\n"
               "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1, 0] x [0] : "
               "(tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
               "  return %0 : tensor<8x16xf32>\n}\n",
               "stablehlo.dot_general");
  expect_error("func.func @f(%a: tensor<8x32xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {\n"
               "  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 9, f]x[0, i, o]->[b, 0, f] : "
               "(tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
               "  return %0 : tensor<8x16xf32>\n}\n",
               "stablehlo.convolution");
  expect_error("func.func @f(%a: tensor<3x4xf32>, %i: tensor<2x1xi64>) -> tensor<2x4xf32> {\n"
               "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1],"
               " collapsed_slice_dims = [7], start_index_map = [0], index_vector_dim = 1>,"
               " slice_sizes = array<i64: 1, 4>} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>\n"
               "  return %0 : tensor<2x4xf32>\n}\n",
               "stablehlo.gather");
  expect_error("func.func @f(%a: tensor<6xf32>) -> tensor<4xf32> {\n" /* element counts differ */
               "  %0 = stablehlo.reshape %a : (tensor<6xf32>) -> tensor<4xf32>\n"
               "  return %0 : tensor<4xf32>\n}\n",
               "stablehlo.reshape");
  expect_error("func.func @f(%a: tensor<*xf32>) -> tensor<*xf32> {\n" /* unranked */
               "  %0 = stablehlo.add %a, %a : tensor<*xf32>\n"
               "  return %0 : tensor<*xf32>\n}\n",
               "stablehlo.add");
  /* Malformed written rules. */
  static const char *bad_rules[] = {
      "#sdy.op_sharding_rule<([i, j])->([i, j]) {j=4, i=2}>", "#sdy.op_sharding_rule<([i])->([i]) {i=2} reduction={i",
      "#sdy.op_sharding_rule<([z_0])->([i]) {i=2}>", "#sdy.op_sharding_rule<([z_99999999999])->([i]) {i=2}>",
      "#sdy.op_sharding_rule<([k])->([i]) {i=2}>", "#sdy.op_sharding_rule<([i])->([i]) {i=2} reduction={i} permutation={i}>",
      "#sdy.op_sharding_rule<([i])->([i]) {i=99999999999999999999}>", "#sdy.op_sharding_rule<", "", "<<<<>>>>",
  };
  for (size_t i = 0; i < sizeof bad_rules / sizeof *bad_rules; i++) {
    const char *err = NULL;
    cr_assert_null(prop_rule_parse(A, ir_span_of(bad_rules[i], (uint32_t)strlen(bad_rules[i])), &err), "%s",
                   bad_rules[i]);
    cr_assert_not_null(err);
  }
}

/* A module of `n` copies of `op_line` (with %0 defined by the function argument). */
static ir_module *repeated(const char *head, const char *op_line, const char *tail, size_t n, char **buf) {
  size_t hl = strlen(head), ol = strlen(op_line), tl = strlen(tail);
  *buf = malloc(hl + ol * n + tl + 1);
  memcpy(*buf, head, hl);
  for (size_t i = 0; i < n; i++) memcpy(*buf + hl + i * ol, op_line, ol);
  memcpy(*buf + hl + n * ol, tail, tl + 1);
  fe_parse_error perr;
  ir_module *m = test_parse(A, *buf, &perr);
  cr_assert_not_null(m, "%s", perr.message);
  return m;
}

/* Arena bytes to build every op's rule. */
static size_t bytes_for_rules(ir_module *m) {
  size_t before = sc_arena_used(A);
  prop_rule_options opt = {false, prop_rule_facts_build(A, m)};
  for (uint32_t i = 0; i < m->nops; i++) {
    const char *err;
    const prop_rule *r = prop_rule_of(A, m, m->ops[i], &opt, &err);
    if (r) (void)prop_rule_str(A, r);
  }
  return sc_arena_used(A) - before;
}

Test(op_rule, cost_is_linear_in_ops_and_operands) {
  /* Many X64Combine ops (each would scan its region without the facts) and a concatenate of many operands. */
  const char *head = "func.func @f(%a: tensor<2xui32>) -> tensor<2xui32> {\n";
  const char *line = "  %x = stablehlo.custom_call @X64Combine(%a, %a) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui64>\n";
  const char *tail = "  return %a : tensor<2xui32>\n}\n";
  char *b1, *b2;
  size_t small = bytes_for_rules(repeated(head, line, tail, 2000, &b1));
  size_t large = bytes_for_rules(repeated(head, line, tail, 4000, &b2));
  cr_assert_lt((double)large, 2.3 * (double)small, "2000 ops: %zu bytes, 4000 ops: %zu", small, large);
  free(b1), free(b2);

  /* One op with thousands of operands. */
  for (int k = 0; k < 2; k++) {
    size_t n = k ? 8000 : 4000;
    ar_str s = SC_ASTR_INIT(A);
    ar_str_puts(&s, "func.func @f(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {\n  %0 = stablehlo.concatenate ");
    for (size_t i = 0; i < n; i++) ar_str_puts(&s, i ? ", %a" : "%a");
    ar_str_printf(&s, ", dim = 1 : (");
    for (size_t i = 0; i < n; i++) ar_str_puts(&s, i ? ", tensor<4x2xf32>" : "tensor<4x2xf32>");
    ar_str_printf(&s, ") -> tensor<4x%zuxf32>\n  return %%a : tensor<4x2xf32>\n}\n", 2 * n);
    const char *err = NULL;
    const prop_rule *r = rule_in(ar_str_str(&s), "stablehlo.concatenate", false, &err);
    cr_assert_not_null(r, "%s", err);
    cr_assert_eq(r->noperands, n);
  }
}

Test(op_rule, huge_ranks_and_sizes) {
  /* A rank beyond what the IR reads is an error; a rank-64 reshape of primes still factors. */
  ar_str s = SC_ASTR_INIT(A);
  ar_str_puts(&s, "func.func @f(%a: tensor<");
  for (int i = 0; i < 200; i++) ar_str_puts(&s, "2x");
  ar_str_puts(&s, "f32>) -> tensor<f32> {\n  %0 = stablehlo.add %a, %a : tensor<");
  for (int i = 0; i < 200; i++) ar_str_puts(&s, "2x");
  ar_str_puts(&s, "f32>\n  return %0 : tensor<f32>\n}\n");
  const char *err = NULL;
  cr_assert_null(rule_in(ar_str_str(&s), "stablehlo.add", false, &err));
  cr_assert_not_null(err);

  static const int primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47}; /* product < 2^63 */
  ar_str in = SC_ASTR_INIT(A), out = SC_ASTR_INIT(A);
  for (int i = 0; i < 15; i++) ar_str_printf(&in, "%dx", primes[i]);
  for (int i = 14; i >= 0; i--) ar_str_printf(&out, "%dx", primes[i]);
  ar_str t = SC_ASTR_INIT(A);
  ar_str_printf(&t,
                 "func.func @f(%%a: tensor<%sf32>) -> tensor<%sf32> {\n  %%0 = stablehlo.reshape %%a : (tensor<%sf32>) -> "
                 "tensor<%sf32>\n  return %%0 : tensor<%sf32>\n}\n",
                 ar_str_str(&in), ar_str_str(&out), ar_str_str(&in), ar_str_str(&out), ar_str_str(&out));
  const prop_rule *r = rule_in(ar_str_str(&t), "stablehlo.reshape", false, &err);
  cr_assert_not_null(r, "%s", err);
  cr_assert_eq(r->nfactors, 30); /* no common divisor: every dimension its own factor */

  /* Sizes past int64 are saturated by the type reader, not overflowed. */
  cr_assert_not_null(
      rule_in("func.func @f(%a: tensor<99999999999999999999x2xf32>) -> tensor<99999999999999999999x2xf32> {\n"
              "  %0 = stablehlo.negate %a : tensor<99999999999999999999x2xf32>\n"
              "  return %0 : tensor<99999999999999999999x2xf32>\n}\n",
              "stablehlo.negate", false, &err));
}

/* The bytecode front end records struct attributes field by field (as VHLO stores them); every
 * jax.export artifact of the corpus gets the same rules from its bytecode as from its text. */
Test(op_rule, bytecode_and_text_give_the_same_rules) {
  static const char *dir = "../shared/corpus/jax/jax_backcompat/";
  static const char *names[] = {"tpu_Eigh__0", "cpu_qr_lapack_geqrf__0", "tpu_ApproxTopK__1", "cpu_lu_lapack_getrf__0",
                                "pallas_mosaic_matmul__0", "cpu_triangular_solve_blas_trsm__0"};
  size_t compared = 0;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const char *rules[2][512];
    uint32_t n[2] = {0, 0};
    for (int bc = 0; bc < 2; bc++) {
      char path[256];
      snprintf(path, sizeof path, "%s%s.%s", dir, names[i], bc ? "mlirbc" : "mlir");
      size_t len;
      char *buf = test_read_file(path, &len);
      cr_assert_not_null(buf, "missing %s", path);
      ir_linemap lines = ir_linemap_build(A, buf, len);
      fe_parse_input in = {A, buf, len, 0, (uint32_t)len, &lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
      fe_parse_error err;
      memset(&err, 0, sizeof err);
      ir_module *m = fe_parse_format(fe_detect_format(buf, len), &in, &err);
      cr_assert_not_null(m, "%s: %s", path, err.message);
      ir_module_finalize(A, m);
      prop_rule_options opt = {false, prop_rule_facts_build(A, m)};
      for (uint32_t k = 0; k < m->nops && n[bc] < 512; k++) {
        const prop_rule *r = prop_rule_of(A, m, m->ops[k], &opt, NULL);
        if (r) rules[bc][n[bc]++] = prop_rule_str(A, r);
      }
      free(buf); /* the rule strings are the arena's own; the module is not read again */
    }
    cr_assert_eq(n[0], n[1], "%s: %u rules from text, %u from bytecode", names[i], n[0], n[1]);
    for (uint32_t k = 0; k < n[0]; k++) cr_assert_str_eq(rules[1][k], rules[0][k], "%s rule %u", names[i], k);
    compared += n[0];
  }
  cr_assert_geq(compared, 40, "rules compared: %zu", compared);
}

/* The rule of the first op named `name` in an HLO text module. */
static const char *hlo_rule(const char *text, const char *name) {
  size_t len = strlen(text);
  ir_linemap lines = ir_linemap_build(A, text, len);
  fe_parse_input in = {A, text, len, 0, (uint32_t)len, &lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
  fe_parse_error err;
  memset(&err, 0, sizeof err);
  ir_module *m = fe_parse_hlo(&in, &err);
  cr_assert_not_null(m, "%s", err.message);
  ir_op *op = test_find_op(m, name, 0);
  cr_assert_not_null(op, "no %s", name);
  const char *e = NULL;
  const prop_rule *r = prop_rule_of(A, m, op, NULL, &e);
  return r ? prop_rule_str(A, r) : e ? e : "(none)";
}

/* An HLO instruction gets the rule of the StableHLO op XLA's import makes of it. */
Test(op_rule, hlo_instructions_get_their_stablehlo_rules) {
  static const char *hlo =
      "HloModule m\n\n"
      "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
      "ENTRY main {\n"
      "  a = f32[8,32]{1,0} parameter(0)\n"
      "  b = f32[32,16]{1,0} parameter(1)\n"
      "  img = f32[2,224,224,192]{3,2,1,0} parameter(2)\n"
      "  k = f32[3,3,192,64]{3,2,1,0} parameter(3)\n"
      "  d = f32[8,16]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  t = f32[16,8]{1,0} transpose(d), dimensions={1,0}\n"
      "  bc = f32[4,8,16]{2,1,0} broadcast(d), dimensions={1,2}\n"
      "  cat = f32[16,16]{1,0} concatenate(d, d), dimensions={0}\n"
      "  z = f32[] constant(0)\n"
      "  w = f32[4,8]{1,0} reduce-window(d, z), window={size=2x2 stride=2x2}, to_apply=add\n"
      "  conv = f32[2,112,112,64]{3,2,1,0} convolution(img, k), window={size=3x3 stride=2x2 pad=0_1x0_1},"
      " dim_labels=b01f_01io->b01f\n"
      "  pair = (f32[8]{0}, f32[8]{0}) reduce(d, d, z, z), dimensions={1}, to_apply=add\n"
      "  ROOT r = f32[16,8]{1,0} negate(t)\n"
      "}\n";
  cr_assert_str_eq(hlo_rule(hlo, "dot"), "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}>");
  cr_assert_str_eq(hlo_rule(hlo, "transpose"), "#sdy.op_sharding_rule<([j, i])->([i, j]) {i=16, j=8}>");
  cr_assert_str_eq(hlo_rule(hlo, "broadcast"), "#sdy.op_sharding_rule<([j, k])->([i, j, k]) {i=4, j=8, k=16}>");
  cr_assert_str_eq(hlo_rule(hlo, "concatenate"),
                   "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=16} need_replication={i}>");
  cr_assert_str_eq(hlo_rule(hlo, "reduce-window"),
                   "#sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=4, j=8} permutation={i, j}>");
  cr_assert_str_eq(hlo_rule(hlo, "negate"), "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=8}>");
  /* The same convolution as Shardy's conv_simple test. */
  cr_assert_str_eq(hlo_rule(hlo, "convolution"),
                   "#sdy.op_sharding_rule<([i, jk, lm, n], [k, m, n, o])->([i, j, l, o]) {i=2, j=112, k=2, l=112, "
                   "m=2, n=192, o=64} reduction={k, m, n} permutation={j, l}>");
  cr_assert_str_eq(hlo_rule(hlo, "reduce"), "(none)"); /* a tuple result: several results once imported */
}

/* A dimension list longer than any tensor's rank is malformed, not a quadratic membership scan. */
Test(op_rule, overlong_dimension_lists_are_errors) {
  ar_str s = SC_ASTR_INIT(A);
  ar_str_puts(&s, "func.func @f(%a: tensor<8x32xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {\n"
                   "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [");
  for (int i = 0; i < 100000; i++) ar_str_puts(&s, i ? ", 1" : "1");
  ar_str_puts(&s, "] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
                   "  return %0 : tensor<8x16xf32>\n}\n");
  expect_error(ar_str_str(&s), "stablehlo.dot_general");
  int64_t *v;
  cr_assert_eq(pb_int_list_for_test(A, "dense<7> : tensor<100000x100000xi64>", &v), -1);
  cr_assert_eq(pb_int_list_for_test(A, "dense<7> : tensor<3x2xi64>", &v), 6);
  cr_assert_eq(pb_int_list_for_test(A, "{1,0}", &v), 2);
  cr_assert_eq(pb_int_list_for_test(A, "dense<> : tensor<0xi64>", &v), 0);
}
