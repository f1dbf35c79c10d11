/* Propagation beyond Shardy's FileCheck tests (tests/corpus/shardy_filecheck.py measures parity): the
 * printer on hostile text, cancellation, linear cost on long chains, wide ops, deep call graphs and
 * large meshes, and `check --propagate` naming where a derived sharding came from. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "shardcheck.h"
#include "util/arena.h"

typedef struct {
  sc_status status;
  const char *text;
  const char *failure;
  unsigned long long steps;
  size_t bytes;
} prop_run;

static prop_run run_propagate(sc_arena *a, const char *text, sc_propagate_strategy strategy) {
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  o.strategy = strategy;
  o.hash_seed = 0x9e3779b97f4a7c15ull; /* fixed: the parser meters long hash probes, so steps depend on the seed */
  sc_propagate_result r;
  prop_run out = {sc_propagate(a, text, strlen(text), &o, &r), r.text, r.failure, 0, 0};
  out.steps = ar_steps(a);
  out.bytes = sc_arena_used(a);
  return out;
}

static const char *CHAIN_HEAD = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
                                "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {\"b\"}]>}) "
                                "-> tensor<8x16xf32> {\n";

/* A chain of n element-wise ops: the first op's sharding reaches the last. */
static char *chain(size_t n) {
  size_t cap = 200 + n * 64;
  char *s = malloc(cap), *p = s;
  p += sprintf(p, "%s  %%v0 = stablehlo.negate %%arg0 : tensor<8x16xf32>\n", CHAIN_HEAD);
  for (size_t i = 1; i < n; i++) p += sprintf(p, "  %%v%zu = stablehlo.add %%v%zu, %%v%zu : tensor<8x16xf32>\n", i, i - 1, i - 1);
  sprintf(p, "  return %%v%zu : tensor<8x16xf32>\n}\n", n - 1);
  return s;
}

Test(propagate, chain_reaches_the_end) {
  char *text = chain(50);
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, text, SC_PROPAGATE_BASIC);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert(strstr(r.text, "%49 = stablehlo.add %48, %48 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {\"b\", ?}]>]>}"),
            "%s", r.text);
  cr_assert(strstr(r.text, "-> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}, {\"b\", ?}]>})"));
  sc_arena_free(a);
  free(text);
}

/* Work and memory per op stay flat from n to 4n, for every strategy (user priority runs five rounds). */
Test(propagate, linear_in_a_long_chain) {
  static const sc_propagate_strategy strategies[] = {SC_PROPAGATE_BASIC, SC_PROPAGATE_USER_PRIORITY};
  for (size_t k = 0; k < 2; k++) {
    double per_op[2];
    for (int i = 0; i < 2; i++) {
      size_t n = i ? 8000 : 2000;
      char *text = chain(n);
      sc_arena *a = sc_arena_new(0);
      prop_run r = run_propagate(a, text, strategies[k]);
      cr_assert_eq(r.status, SC_OK);
      per_op[i] = (double)r.steps / (double)n;
      cr_assert_lt((double)r.bytes / (double)n, 4096.0, "%zu ops: %zu arena bytes", n, r.bytes);
      sc_arena_free(a);
      free(text);
    }
    cr_assert_lt(per_op[1], per_op[0] * 1.25, "steps per op %.1f at n, %.1f at 4n", per_op[0], per_op[1]);
  }
}

/* One op with thousands of operands (a concatenate), sharded on a dimension every operand shares. */
Test(propagate, linear_in_operands) {
  double per_operand[2];
  for (int i = 0; i < 2; i++) {
    size_t n = i ? 4000 : 1000, cap = 400 + n * 48;
    char *s = malloc(cap), *p = s;
    p += sprintf(p, "%s  %%c = stablehlo.concatenate ", CHAIN_HEAD);
    for (size_t k = 0; k < n; k++) p += sprintf(p, "%s%%arg0", k ? ", " : "");
    p += sprintf(p, ", dim = 1 : (");
    for (size_t k = 0; k < n; k++) p += sprintf(p, "%stensor<8x16xf32>", k ? ", " : "");
    sprintf(p, ") -> tensor<8x%zuxf32>\n  return %%arg0 : tensor<8x16xf32>\n}\n", 16 * n);
    sc_arena *a = sc_arena_new(0);
    prop_run r = run_propagate(a, s, SC_PROPAGATE_BASIC);
    cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
    per_operand[i] = (double)r.bytes / (double)n;
    sc_arena_free(a);
    free(s);
  }
  cr_assert_lt(per_operand[1], per_operand[0] * 1.5, "arena bytes per operand %.0f at n, %.0f at 4n", per_operand[0],
               per_operand[1]);
}

/* 70,000 operands on one op and 70,000 uses of one value: the per-op operand offsets and the per-slot
 * user offsets outgrow their 16-bit form (a base per 64 entries and 16 bits each) and are read at 32
 * bits; the shardings around them come out as with a handful. */
Test(propagate, wide_operand_and_user_tables) {
  size_t n = 70000, cap = 600 + n * 40;
  char *s = malloc(cap), *p = s;
  p += sprintf(p, "%s  %%c = stablehlo.concatenate ", CHAIN_HEAD);
  for (size_t k = 0; k < n; k++) p += sprintf(p, "%s%%arg0", k ? ", " : "");
  p += sprintf(p, ", dim = 0 : (");
  for (size_t k = 0; k < n; k++) p += sprintf(p, "%stensor<8x16xf32>", k ? ", " : "");
  sprintf(p, ") -> tensor<%zux16xf32>\n  %%n = stablehlo.negate %%arg0 : tensor<8x16xf32>\n"
             "  %%m = stablehlo.multiply %%n, %%n : tensor<8x16xf32>\n  return %%m : tensor<8x16xf32>\n}\n", 8 * n);
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, s, SC_PROPAGATE_BASIC);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  static const char open_ab[] = "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {\"b\", ?}]>]>}";
  char want[256];
  snprintf(want, sizeof want, "%%2 = stablehlo.multiply %%1, %%1 %s", open_ab);
  cr_assert_not_null(strstr(r.text, want), "%.300s", strstr(r.text, "%1 =") ? strstr(r.text, "%1 =") : r.text);
  snprintf(want, sizeof want, "%%arg0, dim = 0 %s : (tensor<8x16xf32>", open_ab);
  cr_assert_not_null(strstr(r.text, want), "the concatenate of 70,000 operands takes their sharding");
  sc_arena_free(a);
  free(s);
}

/* A mesh of many axes and a sharding naming most of them. */
Test(propagate, large_mesh) {
  size_t naxes = 300, cap = 64 + naxes * 32;
  char *mesh = malloc(cap), *p = mesh;
  p += sprintf(p, "sdy.mesh @mesh = <[");
  for (size_t i = 0; i < naxes; i++) p += sprintf(p, "%s\"x%zu\"=1", i ? ", " : "", i);
  sprintf(p, "]>\n");
  char *text = malloc(cap * 3 + 512);
  p = text + sprintf(text, "%sfunc.func @main(%%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{", mesh);
  for (size_t i = 0; i < naxes; i++) p += sprintf(p, "%s\"x%zu\"", i ? ", " : "", i);
  sprintf(p, "}]>}) -> tensor<8xf32> {\n  %%0 = stablehlo.abs %%arg0 : tensor<8xf32>\n  return %%0 : tensor<8xf32>\n}\n");
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, text, SC_PROPAGATE_AGGRESSIVE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert_lt(r.bytes, (size_t)64 << 20);
  sc_arena_free(a);
  free(text);
  free(mesh);
}

/* n arguments written with n different priorities p1..pn, each feeding its own op: user priority runs one
 * round per priority, and each round touches only what changed (work per priority stays flat). */
static char *many_priorities(size_t n) {
  char *s = malloc(300 + n * 160), *p = s;
  p += sprintf(p, "sdy.mesh @mesh = <[\"a\"=2]>\nfunc.func @main(");
  for (size_t i = 0; i < n; i++)
    p += sprintf(p, "%s%%arg%zu: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}p%zu]>}", i ? ", " : "", i, i + 1);
  p += sprintf(p, ") -> tensor<8xf32> {\n");
  for (size_t i = 0; i < n; i++) p += sprintf(p, "  %%v%zu = stablehlo.negate %%arg%zu : tensor<8xf32>\n", i, i);
  sprintf(p, "  return %%v0 : tensor<8xf32>\n}\n");
  return s;
}

/* n public functions (no @main: every one is an entry), each calling the next through func.call. */
static char *call_chain(size_t n) {
  char *s = malloc(300 + n * 200), *p = s;
  p += sprintf(p, "sdy.mesh @mesh = <[\"a\"=2]>\n");
  for (size_t i = 0; i < n; i++) {
    p += sprintf(p, "func.func public @f%zu(%%arg0: tensor<8xf32>%s) -> tensor<8xf32> {\n", i,
                 i ? "" : " {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}");
    if (i + 1 < n) p += sprintf(p, "  %%0 = func.call @f%zu(%%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n", i + 1);
    else p += sprintf(p, "  %%0 = stablehlo.negate %%arg0 : tensor<8xf32>\n");
    p += sprintf(p, "  return %%0 : tensor<8xf32>\n}\n");
  }
  return s;
}

Test(propagate, linear_in_priorities_and_call_chains) {
  static char *(*const build[])(size_t) = {many_priorities, call_chain};
  static const char *const what[] = {"priorities", "chained public functions"};
  for (size_t k = 0; k < 2; k++) {
    double per_item[2], bytes_per_item[2];
    for (int i = 0; i < 2; i++) {
      size_t n = i ? 4000 : 1000;
      char *text = build[k](n);
      sc_arena *a = sc_arena_new(0);
      prop_run r = run_propagate(a, text, SC_PROPAGATE_PIPELINE);
      cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
      per_item[i] = (double)r.steps / (double)n;
      bytes_per_item[i] = (double)r.bytes / (double)n;
      sc_arena_free(a);
      free(text);
    }
    cr_assert_lt(per_item[1], per_item[0] * 1.25, "%s: steps per item %.1f at n, %.1f at 4n", what[k], per_item[0],
                 per_item[1]);
    cr_assert_lt(bytes_per_item[1], bytes_per_item[0] * 1.5, "%s: arena bytes per item %.0f at n, %.0f at 4n", what[k],
                 bytes_per_item[0], bytes_per_item[1]);
  }
}

Test(propagate, cancellation_stops_the_fixed_point) {
  char *text = chain(20000);
  sc_arena *a = sc_arena_new(0);
  atomic_int cancel = 1;
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  o.strategy = SC_PROPAGATE_USER_PRIORITY;
  o.cancel = &cancel;
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(a, text, strlen(text), &o, &r), SC_ERR_CANCELLED);
  sc_arena_free(a);
  free(text);
}

/* Text the printer must survive: unclosed strings and brackets, comments everywhere, no trailer. */
Test(propagate, hostile_text_is_printed_or_refused) {
  static const char *const inputs[] = {
      "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.abs %a // x \"\n  return %0\n}\n",
      "\"unclosed",
      "func.func @f() {\n  %0 = \"x.y\"() {a = \"//\"} : () -> tensor<4xf32> // c\n  return\n}\n",
      "func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>) {\n  %0 = stablehlo.abs %a :\n tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
      "{{{{((((<<<<",
      "sdy.mesh @m = <[\"a\"=2]>\nfunc.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>}) -> tensor<4xf32> attributes {x} {\n"
      "  %0:2 = stablehlo.while(%i = %a, %j = %a) : tensor<4xf32>, tensor<4xf32>\n"
      "   cond {\n    %c = stablehlo.constant dense<true> : tensor<i1>\n    stablehlo.return %c : tensor<i1>\n  } do {\n"
      "    stablehlo.return %i, %j : tensor<4xf32>, tensor<4xf32>\n  }\n  return %0#0 : tensor<4xf32>\n}\n",
  };
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
    for (int s = SC_PROPAGATE_NONE; s <= SC_PROPAGATE_USER_PRIORITY; s++) {
      sc_arena *a = sc_arena_new(16u << 20);
      prop_run r = run_propagate(a, inputs[i], (sc_propagate_strategy)s);
      cr_assert(r.status == SC_OK || (r.status == SC_ERR_INVALID && r.failure), "input %zu strategy %d", i, s);
      cr_assert(r.status != SC_OK || (!strstr(r.text, "// x") && !strstr(r.text, "// c")),
                "input %zu: a comment survived: %s", i, r.text);
      sc_arena_free(a);
    }
}

/* check (propagation on by default): a kernel fed a value whose explicit-axis sharding comes from the argument through
 * an element-wise op is flagged (SC0302), with the argument as the related site; without propagation
 * only the written shardings count. */
Test(propagate, check_names_the_origin) {
  static const char *module =
      "sdy.mesh @mesh = <[\"data\"=4]>\n"
      "func.func public @main(%arg0: tensor<8x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) -> tensor<8x128xf32> {\n"
      "  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x128xf32>\n"
      "  %1 = stablehlo.custom_call @tpu_custom_call(%0) {backend_config = \"{}\"} : (tensor<8x128xf32>) -> tensor<8x128xf32>\n"
      "  return %1 : tensor<8x128xf32>\n}\n";
  for (int propagate = 0; propagate < 2; propagate++) {
    sc_arena *a = sc_arena_new(0);
    sc_target_mesh mesh;
    const char *err = NULL;
    cr_assert_eq(sc_mesh_parse(a, "data=4:explicit", &mesh, &err), 0);
    sc_options o;
    memset(&o, 0, sizeof o);
    o.mesh = &mesh;
    o.no_propagate = !propagate;
    sc_report *r;
    cr_assert_eq(sc_check(a, module, strlen(module), &o, &r), SC_OK);
    const sc_diag *found = NULL;
    for (size_t i = 0; i < r->ndiags; i++)
      if (!strcmp(r->diags[i].code, "SC0302")) found = &r->diags[i];
    if (!propagate) {
      cr_assert_null(found, "no written sharding reaches the kernel");
    } else {
      cr_assert_not_null(found);
      cr_assert_geq(found->nrelated, 1);
      cr_assert_eq(found->related[0].line, 2, "the related site is @main's argument (line 2)");
      cr_assert(strstr(found->related[0].message, "propagates from %arg0"), "%s", found->related[0].message);
    }
    sc_arena_free(a);
  }
}

/* A long element-wise chain from a sharded argument into a kernel, as module text in `a`. */
/* A chain of transposes ending in a kernel. Each transpose has a rule of its own (element-wise ops share
 * one, and equal shardings are kept once), so what propagation keeps grows with the chain. */
static const char *transpose_chain(sc_arena *a, int n) {
  ar_str t = SC_ASTR_INIT(a);
  ar_str_puts(&t, "sdy.mesh @mesh = <[\"data\"=4]>\n"
                   "func.func public @main(%v0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) "
                   "-> tensor<8x8xf32> {\n");
  for (int i = 1; i <= n; i++)
    ar_str_printf(&t, "  %%v%d = stablehlo.transpose %%v%d, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>\n", i, i - 1);
  ar_str_printf(&t, "  %%k = stablehlo.custom_call @tpu_custom_call(%%v%d) {backend_config = \"{}\"} : "
                     "(tensor<8x8xf32>) -> tensor<8x8xf32>\n  return %%k : tensor<8x8xf32>\n}\n", n);
  return ar_str_str(&t);
}

static size_t count_code(const sc_report *r, const char *code) {
  size_t n = 0;
  for (size_t i = 0; i < r->ndiags; i++) n += !strcmp(r->diags[i].code, code);
  return n;
}

/* Under a byte limit the check can meet but propagation cannot within its half of what is left, the
 * check still answers: SC0004 (a note) instead of the derived SC0302; with room, SC0302 and no SC0004. */
Test(propagate, check_degrades_at_the_memory_limit) {
  sc_arena *scratch = sc_arena_new(0);
  const char *module = transpose_chain(scratch, 3000);
  size_t len = strlen(module);
  sc_target_mesh mesh;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(scratch, "data=4:explicit", &mesh, &err), 0);
  sc_options o;
  memset(&o, 0, sizeof o);
  o.mesh = &mesh;
  o.no_propagate = true;
  sc_arena *a = sc_arena_new(0);
  sc_report *r;
  cr_assert_eq(sc_check(a, module, len, &o, &r), SC_OK);
  size_t without = sc_arena_used(a);
  sc_arena_free(a);
  o.no_propagate = false;
  a = sc_arena_new(0);
  cr_assert_eq(sc_check(a, module, len, &o, &r), SC_OK);
  size_t with = sc_arena_used(a);
  cr_assert_eq(count_code(r, "SC0302"), 1);
  cr_assert_eq(count_code(r, "SC0004"), 0);
  sc_arena_free(a);
  cr_assert_gt(with, without, "propagation needs memory of its own (%zu vs %zu)", with, without);
  /* Some byte limit between the two lets the check finish but not propagation: find it (arena use is
   * deterministic), and check the answer there. */
  bool degraded = false;
  for (size_t limit = without; limit <= with + with / 2 && !degraded; limit += without / 32) {
    a = sc_arena_new(limit);
    if (sc_check(a, module, len, &o, &r) == SC_OK && count_code(r, "SC0004") == 1) {
      degraded = true;
      cr_assert_eq(count_code(r, "SC0302"), 0, "the rules read the written shardings");
      cr_assert(r->propagation_limited);
    }
    sc_arena_free(a);
  }
  cr_assert(degraded, "no limit between %zu and %zu bytes gave SC0004 with a finished check", without, with);
  sc_arena_free(scratch);
}

static void expect_in(const char *module, sc_propagate_strategy strategy, const char *want) {
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, module, strategy);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert(test_holds_lines(r.text, want), "missing:\n%s\nin:\n%s", want, r.text);
  sc_arena_free(a);
}

/* What sdy_opt prints for ops whose syntax differs: a constant's attributes before its literal and its
 * float splat as MLIR prints floats; an explicit data-flow edge's sharding after its operand. */
Test(propagate, printed_as_mlir_prints_constants_and_edges) {
  expect_in("sdy.mesh @mesh = <[\"a\"=2]>\n"
            "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
            "  %c = stablehlo.constant dense<0.1> : tensor<8xf32>\n"
            "  %0 = stablehlo.add %arg0, %c : tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n",
            SC_PROPAGATE_BASIC,
            "%cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}]>]>} dense<1.000000e-01> : "
            "tensor<8xf32>");
  expect_in("sdy.mesh @mesh = <[\"a\"=2]>\n"
            "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
            "  %0 = stablehlo.optimization_barrier %arg0 : tensor<8xf32>\n"
            "  %1 = sdy.data_flow_edge %0 : tensor<8xf32>\n  return %1 : tensor<8xf32>\n}\n",
            SC_PROPAGATE_BASIC, "sdy.data_flow_edge %0 sharding=<@mesh, [{\"a\", ?}]> : tensor<8xf32>");
}

/* The values of one sharding group share a sharding, across functions. */
Test(propagate, sharding_group_members_share) {
  expect_in("sdy.mesh @mesh = <[\"a\"=2]>\n"
            "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
            "  %0 = stablehlo.abs %arg0 : tensor<8xf32>\n  sdy.sharding_group %0 group_id=3 : tensor<8xf32>\n"
            "  return %0 : tensor<8xf32>\n}\n"
            "func.func private @other(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
            "  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n  sdy.sharding_group %0 group_id=3 : tensor<8xf32>\n"
            "  return %0 : tensor<8xf32>\n}\n",
            SC_PROPAGATE_BASIC,
            "%0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}]>]>} : tensor<8xf32>");
}

/* sdy.func_data_flow_edge (Shardy's explicit call edges): the edge on a callee's argument takes what every
 * call passes, the edge on a call's result what the callee returns. Here the caller's argument sharded
 * [{"a"}, {}] reaches the callee's edge and its negate, and comes back out through the result's edge. */
Test(propagate, func_data_flow_edges_carry_shardings_across_calls) {
  const char *text = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
                     "func.func private @f(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {\n"
                     "  %0 = sdy.func_data_flow_edge %arg0 : tensor<8x2xi32>\n"
                     "  %1 = stablehlo.negate %0 : tensor<8x2xi32>\n"
                     "  return %1 : tensor<8x2xi32>\n}\n"
                     "func.func @main(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}) -> tensor<8x2xi32> {\n"
                     "  %0 = call @f(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>\n"
                     "  %1 = sdy.func_data_flow_edge %0 : tensor<8x2xi32>\n"
                     "  return %1 : tensor<8x2xi32>\n}\n";
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, text, SC_PROPAGATE_BASIC);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  const char *open_a = "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\", ?}, {?}]>]>}";
  char want[256];
  snprintf(want, sizeof want, "%%0 = sdy.func_data_flow_edge %%arg0 %s : tensor<8x2xi32>", open_a);
  cr_assert(strstr(r.text, want), "the callee's edge: %s", r.text);
  snprintf(want, sizeof want, "%%1 = stablehlo.negate %%0 %s : tensor<8x2xi32>", open_a);
  cr_assert(strstr(r.text, want), "the callee's body: %s", r.text);
  snprintf(want, sizeof want, "%%1 = sdy.func_data_flow_edge %%0 %s : tensor<8x2xi32>", open_a);
  cr_assert(strstr(r.text, want), "the result's edge: %s", r.text);
  sc_arena_free(a);
}

/* The pipeline gives each call site its own copy of the callee, named as Shardy's export names them,
 * then keeps one copy per callee and shardings: both calls of @bar end at @bar_0 (the first one called
 * of two identical copies), and @bar itself is gone. With --dedup-functions-fully @bar serves both. */
Test(propagate, pipeline_copies_callees_per_call_site_and_dedups_them) {
  const char *text = "sdy.mesh @mesh = <[\"a\"=2]>\n"
                     "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n"
                     "  %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
                     "  %1 = call @bar(%0) : (tensor<8xf32>) -> tensor<8xf32>\n"
                     "  return %1 : tensor<8xf32>\n}\n"
                     "func.func private @foo(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                     "  %0 = call @bar(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
                     "  return %0 : tensor<8xf32>\n}\n"
                     "func.func private @bar(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                     "  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n"
                     "  %1 = stablehlo.abs %arg0 : tensor<8xf32>\n" /* unused: the canonicalizer drops it */
                     "  return %0 : tensor<8xf32>\n}\n";
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, text, SC_PROPAGATE_PIPELINE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert(strstr(r.text, "%1 = call @bar_0(%0)"), "%s", r.text);
  cr_assert(strstr(r.text, "%0 = call @bar_0(%arg0)"), "%s", r.text);
  cr_assert(strstr(r.text, "func.func private @bar_0(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) "
                           "-> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>})"), "%s", r.text);
  cr_assert_not(strstr(r.text, "@bar("), "%s", r.text);
  cr_assert_not(strstr(r.text, "stablehlo.abs"), "%s", r.text);
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  o.strategy = SC_PROPAGATE_PIPELINE;
  o.dedup_functions_fully = true;
  sc_propagate_result d;
  cr_assert_eq(sc_propagate(a, text, strlen(text), &o, &d), SC_OK);
  cr_assert(strstr(d.text, "%1 = call @bar(%0)"), "%s", d.text);
  cr_assert_not(strstr(d.text, "bar_0"), "%s", d.text);
  sc_arena_free(a);
}

/* Recursion is left alone (one function for every call site), and a call graph that doubles at each
 * level costs copies only up to the bound: the text stays linear in the input. */
Test(propagate, pipeline_copies_are_bounded) {
  const char *recursive = "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                          "  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
                          "  %1 = call @f(%0) : (tensor<8xf32>) -> tensor<8xf32>\n  return %1 : tensor<8xf32>\n}\n"
                          "func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                          "  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n";
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, recursive, SC_PROPAGATE_PIPELINE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert(strstr(r.text, "call @f(%0)") && !strstr(r.text, "@f_0"), "%s", r.text);
  /* f0 calls f1 twice, f1 calls f2 twice, ...: 2^40 call sites */
  char *dag = malloc(40 * 300 + 400), *p = dag;
  p += sprintf(p, "func.func @main(%%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                  "  %%0 = call @f0(%%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n  return %%0 : tensor<8xf32>\n}\n");
  for (int i = 0; i < 40; i++)
    p += sprintf(p, "func.func private @f%d(%%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                    "  %%0 = call @f%d(%%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
                    "  %%1 = call @f%d(%%0) : (tensor<8xf32>) -> tensor<8xf32>\n  return %%1 : tensor<8xf32>\n}\n",
                 i, i + 1, i + 1);
  p += sprintf(p, "func.func private @f40(%%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %%arg0 : tensor<8xf32>\n}\n");
  r = run_propagate(a, dag, SC_PROPAGATE_PIPELINE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert_lt(strlen(r.text), 8 * strlen(dag), "%zu bytes out of %zu in", strlen(r.text), strlen(dag));
  cr_assert_lt(r.bytes, (size_t)64 << 20, "%zu arena bytes", r.bytes);
  free(dag);
  sc_arena_free(a);
}

/* A mesh written inline in a sharding: printed inline by a single pass; the pipeline's import gives it a
 * symbol (an identical declared mesh's, else a new `sdy.mesh @mesh_N` after the declared ones) and
 * erases a declared mesh identical to an earlier one, renaming its references. */
Test(propagate, inline_meshes_printed_inline_or_lifted) {
  static const char *module =
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "sdy.mesh @copy = <[\"x\"=2,  \"y\"=4]>\n"
      "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<[\"x\"=2]>, [{\"x\"}, {}]>},\n"
      "                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@copy, [{}, {\"y\"}]>}) -> tensor<8x8xf32> {\n"
      "  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>\n"
      "  %1 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[\"x\"=2, \"y\"=4]>, [{}, {\"y\"}]>]>} : tensor<8x8xf32>\n"
      "  return %1 : tensor<8x8xf32>\n}\n";
  expect_in(module, SC_PROPAGATE_BASIC, "%0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[\"x\"=2]>, [{\"x\", ?}, {?}]>]>}");
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\nsdy.mesh @mesh_0 = <[\"x\"=2]>\nfunc.func @main(%arg0: tensor<8x8xf32> "
            "{sdy.sharding = #sdy.sharding<@mesh_0, [{\"x\"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
            "[{}, {\"y\"}]>})");
  expect_in(module, SC_PROPAGATE_PIPELINE, "stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {\"y\"}]>]>}");
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, module, SC_PROPAGATE_PIPELINE);
  cr_assert_null(strstr(r.text, "@copy"), "the duplicate mesh is gone:\n%s", r.text);
  sc_arena_free(a);
}

/* Lifting inline meshes is linear: every op of a long chain names its mesh inline. */
Test(propagate, lifting_inline_meshes_is_linear) {
  double per_op[2];
  for (int i = 0; i < 2; i++) {
    size_t n = i ? 4000 : 1000, cap = 400 + n * 160;
    char *s = malloc(cap), *p = s;
    p += sprintf(p, "func.func @main(%%v0: tensor<8xf32>) -> tensor<8xf32> {\n");
    for (size_t k = 1; k <= n; k++)
      p += sprintf(p, "  %%v%zu = stablehlo.negate %%v%zu {sdy.sharding = #sdy.sharding_per_value<[<mesh<[\"a\"=2]>, [{\"a\"}]>]>} : "
                      "tensor<8xf32>\n", k, k - 1);
    sprintf(p, "  return %%v%zu : tensor<8xf32>\n}\n", n);
    sc_arena *a = sc_arena_new(0);
    prop_run r = run_propagate(a, s, SC_PROPAGATE_PIPELINE);
    cr_assert_eq(r.status, SC_OK);
    cr_assert(strstr(r.text, "sdy.mesh @mesh = <[\"a\"=2]>\n"), "one mesh for all:\n%.300s", r.text);
    cr_assert_null(strstr(r.text, "mesh<"));
    per_op[i] = (double)r.steps / (double)n;
    sc_arena_free(a);
    free(s);
  }
  cr_assert_lt(per_op[1], per_op[0] * 1.25, "steps per op %.1f at n, %.1f at 4n", per_op[0], per_op[1]);
}

/* A sharding group whose members were written with different shardings: Shardy's warning names the
 * group by its number after the import (groups in order of their smallest id, from 0), and the pipeline
 * constrains each member with an open sharding the group shares; the groups are gone after export. */
Test(propagate, conflicting_group_gets_open_constraints) {
  static const char *module =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {\"b\", ?}]> : tensor<8x8xf32>\n"
      "  sdy.sharding_group %0 group_id=1183 : tensor<8x8xf32>\n"
      "  %1 = sdy.sharding_constraint %arg0 <@mesh, [{\"a\"}, {?}]> : tensor<8x8xf32>\n"
      "  sdy.sharding_group %1 group_id=1183 : tensor<8x8xf32>\n"
      "  sdy.sharding_group %arg0 group_id=7 : tensor<8x8xf32>\n"
      "  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>\n}\n";
  sc_arena *a = sc_arena_new(0);
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(a, module, strlen(module), &o, &r), SC_OK);
  cr_assert_eq(r.nmessages, 1);
  cr_assert(strstr(r.messages[0].message, "sharding groups of groupID: 1 do not match"), "%s", r.messages[0].message);
  cr_assert(test_holds_lines(r.text, "  %0 = sdy.reshard %arg0 <@mesh, [{}, {\"b\"}]> : tensor<8x8xf32>\n"
                           "  %1 = sdy.reshard %0 <@mesh, [{\"a\"}, {\"b\"}]> : tensor<8x8xf32>\n"
                           "  %2 = sdy.reshard %arg0 <@mesh, [{\"a\"}, {\"b\"}]> : tensor<8x8xf32>\n"
                           "  %3 = sdy.reshard %2 <@mesh, [{\"a\"}, {\"b\"}]> : tensor<8x8xf32>\n"
                           "  return %1, %3"),
            "%s", r.text);
  cr_assert_null(strstr(r.text, "sharding_group"));
  sc_arena_free(a);
}

/* The pipeline's constant splitter: a broadcast of a constant used by two differently sharded ops gives
 * each its own copy (printed after the first), so the second use takes its own operand's sharding instead
 * of meeting the first's; a single pass (no splitter) lets the shared broadcast carry the first sharding
 * into a conflict. A reshape of a constant is copied by the engine: the uses still do not meet. */
Test(propagate, each_use_of_a_constant_expression_has_its_own_copy) {
  static const char *module =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}, "
      "%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x8xf32>\n"
      "  %0 = stablehlo.add %arg0, %z : tensor<8x8xf32>\n"
      "  %1 = stablehlo.add %arg1, %z : tensor<8x8xf32>\n"
      "  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>\n}\n";
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "  %1 = stablehlo.broadcast_in_dim %0, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} : "
            "(tensor<f32>) -> tensor<8x8xf32>\n"
            "  %2 = stablehlo.broadcast_in_dim %0, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}, {}]>]>} : "
            "(tensor<f32>) -> tensor<8x8xf32>\n"
            "  %3 = stablehlo.add %arg0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} : tensor<8x8xf32>\n"
            "  %4 = stablehlo.add %arg1, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}, {}]>]>} : tensor<8x8xf32>\n");
  expect_in(module, SC_PROPAGATE_USER_PRIORITY, "%2 = stablehlo.add %arg1, %0 : tensor<8x8xf32>");
  static const char *reshaped =
      "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}, {}]>}, "
      "%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<64xf32>\n"
      "  %z = stablehlo.reshape %c : (tensor<64xf32>) -> tensor<8x8xf32>\n"
      "  %0 = stablehlo.add %arg0, %z : tensor<8x8xf32>\n"
      "  %1 = stablehlo.add %arg1, %z : tensor<8x8xf32>\n"
      "  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>\n}\n";
  expect_in(reshaped, SC_PROPAGATE_PIPELINE, "= stablehlo.add %arg1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}, {}]>]>}");
}

/* Copying a constant per use is linear: one broadcast read by thousands of ops. */
Test(propagate, copying_a_constant_per_use_is_linear) {
  double per_use[2];
  for (int i = 0; i < 2; i++) {
    size_t n = i ? 4000 : 1000, cap = 400 + n * 96;
    char *s = malloc(cap), *p = s;
    p += sprintf(p, "%s  %%c = stablehlo.constant dense<1.0> : tensor<f32>\n"
                    "  %%z = stablehlo.broadcast_in_dim %%c, dims = [] : (tensor<f32>) -> tensor<8x16xf32>\n"
                    "  %%v0 = stablehlo.add %%arg0, %%z : tensor<8x16xf32>\n", CHAIN_HEAD);
    for (size_t k = 1; k <= n; k++) p += sprintf(p, "  %%v%zu = stablehlo.add %%v%zu, %%z : tensor<8x16xf32>\n", k, k - 1);
    sprintf(p, "  return %%v%zu : tensor<8x16xf32>\n}\n", n);
    sc_arena *a = sc_arena_new(0);
    prop_run r = run_propagate(a, s, SC_PROPAGATE_PIPELINE);
    cr_assert_eq(r.status, SC_OK);
    per_use[i] = (double)r.steps / (double)n;
    sc_arena_free(a);
    free(s);
  }
  cr_assert_lt(per_use[1], per_use[0] * 1.25, "steps per use %.1f at n, %.1f at 4n", per_use[0], per_use[1]);
}

/* check copies a constant per use as XLA's Shardy import does: a kernel fed a constant that an
 * element-wise op also reads (sharded by the argument) gets an unsharded copy of its own, so no SC0302. */
Test(propagate, check_gives_a_kernel_its_own_copy_of_a_shared_constant) {
  static const char *shared =
      "sdy.mesh @mesh = <[\"data\"=4]>\n"
      "func.func public @main(%arg0: tensor<8x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) -> "
      "(tensor<8x128xf32>, tensor<8x128xf32>) {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<8x128xf32>\n"
      "  %0 = stablehlo.multiply %arg0, %c : tensor<8x128xf32>\n"
      "  %1 = stablehlo.custom_call @tpu_custom_call(%c) {backend_config = \"{}\"} : (tensor<8x128xf32>) -> tensor<8x128xf32>\n"
      "  return %0, %1 : tensor<8x128xf32>, tensor<8x128xf32>\n}\n";
  sc_arena *a = sc_arena_new(0);
  sc_target_mesh mesh;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(a, "data=4:explicit", &mesh, &err), 0);
  sc_options o;
  memset(&o, 0, sizeof o);
  o.mesh = &mesh;
  sc_report *r;
  cr_assert_eq(sc_check(a, shared, strlen(shared), &o, &r), SC_OK);
  cr_assert_eq(count_code(r, "SC0302"), 0, "the kernel reads its own unsharded copy of the constant");
  sc_arena_free(a);
}

/* The pipeline's -sdy-manual-axes-cleanup: the part of a manual axis an in/out sharding does not use
 * (here the sub-axis "b":(2)2 of a manual "b" whose other half is written) is replicated there, so the
 * user's sharding outside cannot extend the manual computation's dimension over it. */
Test(propagate, unused_part_of_a_manual_axis_stays_out_of_the_computation) {
  expect_in("sdy.mesh @mesh = <[\"a\"=2, \"b\"=4]>\n"
            "func.func @f(%arg0: tensor<16xf32>) -> tensor<16xf32> {\n"
            "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\":(1)2, ?}]>] out_shardings=[<@mesh, "
            "[{\"b\":(1)2, ?}]>] manual_axes={\"b\"} (%arg1: tensor<8xf32>) {\n"
            "    %1 = stablehlo.add %arg1, %arg1 : tensor<8xf32>\n    sdy.return %1 : tensor<8xf32>\n"
            "  } : (tensor<16xf32>) -> tensor<16xf32>\n"
            "  %1 = stablehlo.sine %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\", \"a\"}]>]>} : tensor<16xf32>\n"
            "  return %1 : tensor<16xf32>\n}\n",
            SC_PROPAGATE_PIPELINE,
            "in_shardings=[<@mesh, [{\"b\":(1)2}]>] out_shardings=[<@mesh, [{\"b\":(1)2}]>] manual_axes={\"b\"}");
}

/* ... and it lists the manual axes in mesh order. */
Test(propagate, manual_axes_print_in_mesh_order_after_the_pipeline) {
  expect_in("sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
            "func.func @f(%arg0: tensor<16xf32>) -> tensor<16xf32> {\n"
            "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"b\", \"a\"}]>] out_shardings=[<@mesh, "
            "[{\"b\", \"a\"}]>] manual_axes={\"b\", \"a\"} (%arg1: tensor<4xf32>) {\n"
            "    sdy.return %arg1 : tensor<4xf32>\n"
            "  } : (tensor<16xf32>) -> tensor<16xf32>\n  return %0 : tensor<16xf32>\n}\n",
            SC_PROPAGATE_PIPELINE, "manual_axes={\"a\", \"b\"} (%arg1: tensor<4xf32>)");
}

/* The pipeline's -sdy-remove-size-one-axes: axes of size 1 leave every sharding (a closed dimension left
 * empty loses its priority); the mesh keeps them. */
Test(propagate, pipeline_removes_size_one_axes) {
  expect_in("sdy.mesh @mesh = <[\"a\"=1, \"b\"=2]>\n"
            "func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", \"b\"}, {\"a\"}p1]>}) "
            "-> tensor<8x8xf32> {\n  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n  return %0 : tensor<8x8xf32>\n}\n",
            SC_PROPAGATE_PIPELINE,
            "%0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}, {}]>]>}");
  expect_in("sdy.mesh @mesh = <[\"a\"=1, \"b\"=2]>\n"
            "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", \"b\"}]>}) -> tensor<8xf32> {\n"
            "  return %arg0 : tensor<8xf32>\n}\n",
            SC_PROPAGATE_PIPELINE, "sdy.mesh @mesh = <[\"a\"=1, \"b\"=2]>");
}

static void expect_pass(const char *module, const char *want) {
  sc_arena *a = sc_arena_new(0);
  sc_propagate_options o = {.strategy = SC_PROPAGATE_NONE, .propagate_to_func_results = true};
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(a, module, strlen(module), &o, &r), SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert(test_holds_lines(r.text, want), "missing:\n%s\nin:\n%s", want, r.text);
  sc_arena_free(a);
}

/* --propagate-to-func-results (-sdy-propagate-to-func-results): a function other than main takes its
 * returned values' shardings on its results (none returned: its own is dropped); main, and a function
 * ending in another terminator, keep theirs. */
Test(propagate, func_results_from_the_returned_values) {
  const char *head = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                     "func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}]>}) {\n"
                     "  %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n";
  char module[2048];
  snprintf(module, sizeof module, "%s%s", head,
           "func.func private @foo(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) {\n"
           "  %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"y\"}]>]>} : tensor<8xf32>\n"
           "  return %0 : tensor<8xf32>\n}\n");
  expect_pass(module, "func.func private @foo(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = "
                      "#sdy.sharding<@mesh, [{\"y\"}]>})");
  expect_pass(module, "func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}]>})");
  snprintf(module, sizeof module, "%s%s", head,
           "func.func private @foo(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) {\n"
           "  %0 = stablehlo.abs %arg0 : tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n");
  expect_pass(module, "func.func private @foo(%arg0: tensor<8xf32>) -> tensor<8xf32> {");
  snprintf(module, sizeof module, "%s%s", head,
           "func.func private @foo(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) {\n"
           "  \"test.terminator\"() : () -> ()\n}\n");
  expect_pass(module, "-> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>})");
}

/* A manual computation over 20000 axes written in reverse mesh order, none of them used by its
 * shardings: the cleanup replicates each once and the printer sorts them once (no per-axis scans). */
Test(propagate, manual_axes_cleanup_of_20000_reversed_axes) {
  size_t n = 20000, cap = 512 + n * 40;
  char *s = malloc(cap), *p = s;
  p += sprintf(p, "sdy.mesh @mesh = <[");
  for (size_t i = 0; i < n; i++) p += sprintf(p, "%s\"a%zu\"=1", i ? ", " : "", i);
  p += sprintf(p, ", \"b\"=2]>\nfunc.func @main(%%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
                  "  %%0 = sdy.manual_computation(%%arg0) in_shardings=[<@mesh, [{?}]>] out_shardings=[<@mesh, [{?}]>] "
                  "manual_axes={");
  for (size_t i = n; i-- > 0;) p += sprintf(p, "\"a%zu\"%s", i, i ? ", " : "");
  sprintf(p, "} (%%arg1: tensor<4xf32>) {\n    sdy.return %%arg1 : tensor<4xf32>\n  } : (tensor<4xf32>) -> tensor<4xf32>\n"
             "  %%1 = stablehlo.sine %%0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"b\"}]>]>} : tensor<4xf32>\n"
             "  return %%1 : tensor<4xf32>\n}\n");
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, s, SC_PROPAGATE_PIPELINE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert(strstr(r.text, "manual_axes={\"a0\", \"a1\", \"a2\","), "manual axes in mesh order:\n%.400s", r.text);
  cr_assert(strstr(r.text, "out_shardings=[<@mesh, [{\"b\"}]>]"), "the free axis reaches the computation");
  sc_arena_free(a);
  free(s);
}

/* --split-input-file through the default pipeline: each chunk's passes take memory in proportion to
 * the chunk, not a fixed table per chunk (2000 one-function chunks once took 800 MB). */
Test(propagate, many_small_chunks_take_memory_in_proportion) {
  enum { NCHUNKS = 2000 };
  size_t cap = NCHUNKS * 128 + 1;
  char *text = malloc(cap), *p = text;
  for (int i = 0; i < NCHUNKS; i++)
    p += snprintf(p, cap - (size_t)(p - text),
                  "func.func @f%d(%%a: tensor<4xf32>) -> tensor<4xf32> { return %%a : tensor<4xf32> }\n// -----\n", i);
  sc_arena *a = sc_arena_new(0);
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  o.strategy = SC_PROPAGATE_PIPELINE;
  o.split_input_file = true;
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(a, text, strlen(text), &o, &r), SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert(strstr(r.text, "func.func @f1999("), "the last chunk is printed");
  size_t per_chunk = sc_arena_used(a) / NCHUNKS;
  cr_assert_lt(per_chunk, 64 * 1024, "%zu bytes per ~90-byte chunk", per_chunk);
  sc_arena_free(a);
  free(text);
}

/* sdy_opt prints ops given without a module inside one, a level deeper; an empty input is an empty
 * module. */
Test(propagate, ops_without_a_module_are_printed_inside_one) {
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a, "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                                "  return %arg0 : tensor<8xf32>\n}\n",
                             SC_PROPAGATE_PIPELINE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert_str_eq(r.text, "module {\n  func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                           "    return %arg0 : tensor<8xf32>\n  }\n}\n");
  r = run_propagate(a, "!t = tensor<8xf32>\nfunc.func @f(%arg0: !t) -> !t {\n  return %arg0 : !t\n}\n", SC_PROPAGATE_NONE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert_str_eq(r.text, "!t = tensor<8xf32>\nmodule {\n  func.func @f(%arg0: !t) -> !t {\n    return %arg0 : !t\n  }\n}\n",
                   "alias definitions stay at the top level");
  r = run_propagate(a, "#m = #sdy.mesh<[\"x\"=2,\n  \"y\"=2]>\nsdy.mesh @mesh = #m\n", SC_PROPAGATE_NONE);
  cr_assert_str_eq(r.text, "#m = #sdy.mesh<[\"x\"=2,\n  \"y\"=2]>\nmodule {\n  sdy.mesh @mesh = #m\n}\n",
                   "a definition over two lines stays whole before the module");
  r = run_propagate(a, "module @m attributes {mhlo.num_partitions = 2 : i32} {\n}\n", SC_PROPAGATE_PIPELINE);
  cr_assert_str_eq(r.text, "module @m attributes {mhlo.num_partitions = 2 : i32} {\n}\n", "a written module is not wrapped");
  r = run_propagate(a, "// nothing but a comment\n", SC_PROPAGATE_PIPELINE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert_str_eq(r.text, "module {\n}\n");
  sc_arena_free(a);
}

/* The export refuses a Shardy single-device sharding on a function's result and says where the
 * function is; GSPMD's (what JAX writes for single-device placement) are GSPMD's to partition. */
Test(propagate, maximal_function_results_are_refused_at_the_function) {
  const char *forms[] = {"sdy.sharding = #sdy.sharding<@maximal_mesh_0, []>", "mhlo.sharding = \"{maximal device=0}\"",
                         "mhlo.sharding = \"{maximal_mesh[device_id=0]}\""};
  for (size_t i = 0; i < 3; i++) {
    sc_arena *a = sc_arena_new(0);
    const char *module = ar_printf(a,
                                   "module @m attributes {mhlo.num_partitions = 2 : i32} {\n"
                                   "  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"
                                   "  func.func @main(%%arg0: tensor<8xf32>) -> (tensor<8xf32> {%s}) {\n"
                                   "    %%0 = stablehlo.negate %%arg0 : tensor<8xf32>\n"
                                   "    return %%0 : tensor<8xf32>\n  }\n}\n",
                                   forms[i]);
    sc_propagate_options o;
    memset(&o, 0, sizeof o);
    sc_propagate_result r;
    cr_assert_eq(sc_propagate(a, module, strlen(module), &o, &r), SC_OK, "%s", r.failure ? r.failure : "");
    if (i > 0) {
      cr_assert_eq(r.nmessages, 0, "%s: %s", forms[i], r.nmessages ? r.messages[0].message : "");
      cr_assert(strstr(r.text, "func.func @main"), "%s", r.text);
    } else {
      cr_assert_eq(r.nmessages, 1, "%s", forms[i]);
      cr_assert(strstr(r.messages[0].message, "function result 0 cannot have a single-device (maximal) sharding"), "%s",
                r.messages[0].message);
      cr_assert_eq(r.messages[0].line, 3, "at line %u", r.messages[0].line);
    }
    sc_arena_free(a);
  }
}

/* sdy_opt prints no debug info: `loc(...)` trailers and `#loc` definitions go; a string that holds
 * "loc(" stays as written. */
Test(propagate, locations_are_not_printed) {
  sc_arena *a = sc_arena_new(0);
  prop_run r = run_propagate(a,
                             "#loc1 = loc(\"model.py\":12:4)\n#loc2 = loc(callsite(#loc1 at\n  \"f\"(\"a.py\":1:2)))\n"
                             "module @m {\n"
                             "  func.func @main(%arg0: tensor<8xf32> loc(\"x\")) -> (tensor<8xf32> {jax.result_info = \" loc(y)\"}) {\n"
                             "    %0 = stablehlo.negate %arg0 : tensor<8xf32> loc(#loc2)\n"
                             "    return %0 : tensor<8xf32> loc(#loc1)\n  } loc(#loc1)\n} loc(#loc1)\n",
                             SC_PROPAGATE_PIPELINE);
  cr_assert_eq(r.status, SC_OK, "%s", r.failure ? r.failure : "");
  cr_assert_null(strstr(r.text, "#loc"), "%s", r.text);
  cr_assert_null(strstr(r.text, ") loc("), "%s", r.text);
  cr_assert(strstr(r.text, "jax.result_info = \" loc(y)\""), "%s", r.text);
  cr_assert(test_holds_lines(r.text, "module @m {\n  func.func @main"), "%s", r.text);
  cr_assert(test_holds_lines(r.text, "%0 = stablehlo.negate %arg0 : tensor<8xf32>\nreturn %0 : tensor<8xf32>\n}\n}\n"),
            "%s", r.text);
  sc_arena_free(a);
}

/* A GSPMD `@Sharding` custom call is the sharding constraint XLA's Shardy import makes of it
 * (import_sdy_custom_calls.cc): its sharding reaches the operand and further back (XLA's
 * PropagateFromDanglingShardingCustomCall), and the dimensions its backend_config lists as
 * unspecified stay open to what propagates into them. */
Test(propagate, gspmd_sharding_custom_call_is_a_constraint) {
  static const char *dangling =
      "module @m attributes {mhlo.num_partitions = 4 : i32} {\n"
      "  func.func public @main(%arg0: tensor<40000xi32>) -> tensor<40000xi32> {\n"
      "    %0 = stablehlo.add %arg0, %arg0 : tensor<40000xi32>\n"
      "    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = \"{devices=[4]0,1,2,3}\"} : (tensor<40000xi32>) -> tensor<40000xi32>\n"
      "    %2 = stablehlo.multiply %0, %0 : tensor<40000xi32>\n"
      "    return %2 : tensor<40000xi32>\n  }\n}\n";
  expect_in(dangling, SC_PROPAGATE_PIPELINE,
            "%0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@_partitions, [{\"_partitions\"}]>]>} : "
            "tensor<40000xi32>");
  expect_in(dangling, SC_PROPAGATE_PIPELINE,
            "%2 = stablehlo.multiply %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@_partitions, [{\"_partitions\"}]>]>} : "
            "tensor<40000xi32>");

  static const char *module =
      "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
      "func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"y\"}]>}) -> tensor<8x16xf32> {\n"
      "  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x16xf32>\n"
      "  %1 = stablehlo.custom_call @Sharding(%0) {backend_config = \"unspecified_dims=[1]\", "
      "mhlo.sharding = \"{devices=[2,1,4]<=[8] last_tile_dim_replicate}\"} : (tensor<8x16xf32>) -> tensor<8x16xf32>\n"
      "  %2 = stablehlo.add %1, %1 : tensor<8x16xf32>\n"
      "  return %2 : tensor<8x16xf32>\n}\n";
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "%0 = stablehlo.multiply %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {\"y\"}]>]>}");
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "%2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {\"y\"}]>]>}");
}

/* XLA's own sharding_propagation test PropagateFromDanglingShardingCustomCall (the corpus copy, read in
 * place): the unused @Sharding custom call's sharding reaches the parameter and every other value, as
 * XLA's test expects; with a target mesh the values name its axis. */
Test(propagate, xla_dangling_sharding_custom_call_reaches_the_parameter) {
  size_t len;
  char *hlo = test_read_file("../shared/corpus/xla/hlo/sharding_propagation__PropagateFromDanglingShardingCustomCall.hlo", &len);
  cr_assert_not_null(hlo);
  sc_arena *a = sc_arena_new(0);
  sc_target_mesh mesh;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(a, "data=4", &mesh, &err), 0);
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  o.json = true;
  o.mesh = &mesh;
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(a, hlo, len, &o, &r), SC_OK, "%s", r.failure ? r.failure : "");
  size_t values = 0;
  for (const char *v = r.text; (v = strstr(v, "\"result_of\": ")) != NULL; v++, values++) { /* each value's entry */
    const char *s = strstr(v, "\"sharding\": ");
    cr_assert_not_null(s);
    static const char want[] = "\"<@target, [{\\\"data\\\"}]>\"";
    cr_assert(!strncmp(s + 12, want, sizeof want - 1), "%.80s has no sharding on data: %.60s", v, s);
  }
  cr_assert_eq(values, 4, "p.0, add, cc and mul: %s", r.text);
  sc_arena_free(a);
  free(hlo);
}

/* jax.export's back-compat data for shard_map on TPU (the corpus copy, read in place) has GSPMD
 * shardings and no mhlo.num_partitions: the mesh its `{devices=[2,1]0,1}` tilings give (2 devices, as
 * XLA's import derives them) carries the @Sharding constraints' sharding to the wrapped function's
 * argument and on to main's call, without --mesh. */
Test(propagate, jax_gspmd_module_without_num_partitions_propagates) {
  size_t len;
  char *text = test_read_file("../shared/corpus/jax/jax_backcompat/tpu_Sharding__0.mlir", &len);
  cr_assert_not_null(text);
  cr_assert_null(strstr(text, "num_partitions"));
  sc_arena *a = sc_arena_new(0);
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  sc_propagate_result r;
  cr_assert_eq(sc_propagate(a, text, len, &o, &r), SC_OK, "%s", r.failure ? r.failure : "");
  static const char *const want[] = {
      "func.func private @wrapped(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@_partitions, [{\"_partitions\"}, {}]>})",
      "%0 = call @wrapped(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@_partitions, [{\"_partitions\"}, {}]>]>}"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_assert_not_null(strstr(r.text, want[i]), "no %s in\n%s", want[i], r.text);
  sc_arena_free(a);
  free(text);
}

/* A GSPMD `{replicated}` is a closed replicated sharding, as XLA's import reads it (its
 * stablehlo_import_pipeline test: a `{replicated}` constant becomes `<@mesh, []>`): an argument or
 * `@Sharding` constraint written so stays replicated, and sharded neighbours reshard at it. In a Shardy
 * round trip (`xla.sdy.meshes`) the export writes an open sharding as `{replicated}`: it fixes nothing. */
Test(propagate, gspmd_replicated_is_closed_outside_round_trips) {
  static const char body[] =
      "  func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = \"{devices=[2,1]<=[2]}\"}, "
      "%arg1: tensor<8x8xf32> {mhlo.sharding = \"{replicated}\"}) -> tensor<8x8xf32> {\n"
      "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
      "    %1 = stablehlo.multiply %arg0, %arg1 : tensor<8x8xf32>\n"
      "    %2 = stablehlo.add %0, %1 : tensor<8x8xf32>\n"
      "    return %2 : tensor<8x8xf32>\n  }\n}\n";
  char module[2048];
  snprintf(module, sizeof module, "module @jit_f attributes {mhlo.num_partitions = 2 : i32} {\n%s", body);
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "%arg1: tensor<8x8xf32> {mhlo.sharding = \"{replicated}\", sdy.sharding = #sdy.sharding<@_partitions, [{}, {}]>}");
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "%0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{replicated}\", sdy.sharding = "
            "#sdy.sharding_per_value<[<@_partitions, [{}, {}]>]>}");
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "%1 = stablehlo.multiply %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@_partitions, [{\"_partitions\"}, {}]>]>}");
  /* out_shardings=P(): the result stays replicated (the return all-gathers) */
  expect_in("module @jit_f attributes {mhlo.num_partitions = 2 : i32} {\n"
            "  func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = \"{devices=[2,1]<=[2]}\"}) -> "
            "(tensor<8x8xf32> {mhlo.sharding = \"{replicated}\"}) {\n"
            "    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n    return %0 : tensor<8x8xf32>\n  }\n}\n",
            SC_PROPAGATE_PIPELINE, "-> (tensor<8x8xf32> {mhlo.sharding = \"{replicated}\", sdy.sharding = #sdy.sharding<@_partitions, [{}, {}]>})");
  snprintf(module, sizeof module,
           "module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = \"{mesh = #sdy.mesh<[\\22x\\22=2]>}\"}, "
           "mhlo.num_partitions = 2 : i32} {\n%s", body);
  expect_in(module, SC_PROPAGATE_PIPELINE,
            "%0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{replicated}\", sdy.sharding = "
            "#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>}");
}
