/* Hostile inputs cost work and memory linear in their size (issue 13, findings 1 and 2).
 *
 * Each test generates the adversarial module the audit used (a huge target mesh, a huge module mesh,
 * thousands of sub-axes in one dimension, duplicate axis names in a 150k-axis mesh, a tile assignment
 * with 200k explicit devices), then runs sc_check with a byte limit and a step limit proportional to the
 * input (see ar_step: every loop over input-sized data counts its work). A quadratic
 * implementation runs past one of them and gets SC_ERR_LIMIT; a linear one finishes with the expected
 * diagnostic, whose message stays short however long the input lists are. No timing is measured. */
#include <criterion/criterion.h>
#include <stdarg.h>

#include "helpers.h"
#include "model/model.h"
#include "util/strbuf.h"

/* Generous linear budgets: work and arena bytes per input byte, plus a constant. */
#define STEPS_PER_BYTE 64u
#define BYTES_PER_BYTE 96u
#define FIXED_BYTES (4u << 20)
/* A diagnostic never quotes a whole input-sized list. */
#define MAX_MESSAGE 4096u

typedef struct {
  sc_arena *arena;
  sc_report *report;
  sc_status status;
  unsigned long long steps;
  size_t bytes;
} bounded_run;

/* Checks `text` (plus `extra_input` bytes given through the options, e.g. a target mesh) under limits
 * linear in the input; fails the test if either is exceeded. The caller frees run->arena. */
static bounded_run run_bounded(const char *text, size_t extra_input, const sc_options *opt) {
  size_t input = strlen(text) + extra_input;
  bounded_run run = {0};
  run.arena = sc_arena_new(FIXED_BYTES + BYTES_PER_BYTE * input);
  sc_arena_set_step_limit(run.arena, (unsigned long long)STEPS_PER_BYTE * input);
  run.status = sc_check(run.arena, text, strlen(text), opt, &run.report);
  run.steps = ar_steps(run.arena);
  run.bytes = sc_arena_used(run.arena);
  cr_assert_eq(run.status, SC_OK, "%zu input bytes: %s (steps %llu, arena bytes %zu)", input,
               run.report && run.report->failure ? run.report->failure : "?", run.steps, run.bytes);
  for (size_t i = 0; i < run.report->ndiags; i++)
    cr_assert_leq(strlen(run.report->diags[i].message), MAX_MESSAGE, "%s message of %zu bytes",
                  run.report->diags[i].code, strlen(run.report->diags[i].message));
  return run;
}

static const sc_diag *find_diag(const sc_report *r, const char *rule, const char *needle) {
  for (size_t i = 0; i < r->ndiags; i++)
    if (!strcmp(r->diags[i].rule, rule) && (!needle || strstr(r->diags[i].message, needle))) return &r->diags[i];
  return NULL;
}

static char *take(strbuf *b) {
  char *s = sb_take(b);
  cr_assert_not_null(s);
  return s;
}

/* A module whose only mesh has `naxes` size-1 axes "a0", "a1", ...; with `duplicate`, the last axis
 * repeats the name of the first. */
static char *module_with_mesh(uint32_t naxes, bool duplicate) {
  strbuf b = {0};
  sb_puts(&b, "sdy.mesh @mesh = <[");
  for (uint32_t i = 0; i < naxes; i++) sb_printf(&b, "%s\"a%u\"=1", i ? ", " : "", i);
  if (duplicate) sb_puts(&b, ", \"a0\"=1");
  sb_puts(&b, "]>\nfunc.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n");
  return take(&b);
}

/* A target mesh of `naxes` size-1 axes; returns its size in bytes (names and sizes as a request has them). */
static size_t size1_target(sc_arena *a, uint32_t naxes, sc_target_mesh *t) {
  memset(t, 0, sizeof *t);
  t->axes = ar_calloc(a, naxes, sizeof *t->axes);
  t->naxes = naxes;
  size_t bytes = 0;
  for (uint32_t i = 0; i < naxes; i++) {
    t->axes[i].name = ar_printf(a, "t%u", i);
    t->axes[i].size = 1;
    bytes += strlen(t->axes[i].name) + 3;
  }
  return bytes;
}

Test(linear_bounds, target_mesh_of_20000_axes) {
  const char *module = "module attributes {mhlo.num_partitions = 2 : i32} {\n"
                       "sdy.mesh @mesh = <[\"x\"=2]>\n"
                       "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
                       "  return %arg0 : tensor<8xf32>\n}\n}\n";
  sc_arena *ta = sc_arena_new(0);
  sc_target_mesh target;
  size_t target_bytes = size1_target(ta, 20000, &target);
  sc_options opt = {.mesh = &target};
  bounded_run run = run_bounded(module, target_bytes, &opt);
  const sc_diag *d = find_diag(run.report, "mesh-target", "was lowered for 2 devices");
  cr_assert_not_null(d, "the 2-device module does not fit the 1-device target");
  cr_assert_not_null(strstr(d->message, "\"t0\"=1, \"t1\"=1"), "%s", d->message);
  cr_assert_not_null(strstr(d->message, "and 19968 more"), "%s", d->message);
  sc_arena_free(run.arena);
  sc_arena_free(ta);
}

Test(linear_bounds, module_mesh_of_8000_axes_vs_target) {
  char *module = module_with_mesh(8000, false);
  cr_assert_gt(strlen(module), 80000);
  sc_arena *ta = sc_arena_new(0);
  sc_target_mesh target;
  size_t target_bytes = size1_target(ta, 1, &target);
  target.axes[0].name = "x";
  target.axes[0].size = 1; /* same device count, other axes: SC0108 */
  sc_options opt = {.mesh = &target};
  bounded_run run = run_bounded(module, target_bytes, &opt);
  const sc_diag *d = find_diag(run.report, "mesh-target-axes", "module mesh @mesh is");
  cr_assert_not_null(d, "the module's 8000 axes are not the target's");
  cr_assert_not_null(strstr(d->message, "and 7968 more"), "%s", d->message);
  sc_arena_free(run.arena);
  sc_arena_free(ta);
  free(module);
}

/* `naxes` copies of the sub-axis "x":(1)2 in the one dimension of an all_gather operand. */
static char *module_with_sub_axes(uint32_t naxes) {
  strbuf b = {0};
  sb_puts(&b, "sdy.mesh @mesh = <[\"x\"=4]>\n"
                     "func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{");
  for (uint32_t i = 0; i < naxes; i++) sb_printf(&b, "%s\"x\":(1)2", i ? ", " : "");
  sb_puts(&b, "}]>}) -> tensor<16xf32> {\n"
                     "  %0 = sdy.all_gather [{}] %arg0 out_sharding=<@mesh, [{}]> : tensor<16xf32>\n"
                     "  return %0 : tensor<16xf32>\n}\n");
  return take(&b);
}

static void check_sub_axes(uint32_t naxes) {
  char *module = module_with_sub_axes(naxes);
  bounded_run run = run_bounded(module, 0, NULL);
  cr_assert_not_null(find_diag(run.report, "sharding-duplicate-axis", "duplicate axis ref: \"x\":(1)2"));
  const sc_diag *d = find_diag(run.report, "collective-result-sharding", "doesn't match expected sharding");
  cr_assert_not_null(d, "the gathered dimension keeps its axes");
  cr_assert_not_null(strstr(d->message, ar_printf(run.arena, "and %u more", naxes - 32)), "%s", d->message);
  sc_arena_free(run.arena);
  free(module);
}

Test(linear_bounds, sub_axes_10000_in_one_dimension) { check_sub_axes(10000); }
Test(linear_bounds, sub_axes_30000_in_one_dimension) { check_sub_axes(30000); }

Test(linear_bounds, duplicate_axis_in_mesh_of_150000_axes) {
  char *module = module_with_mesh(150000, true);
  cr_assert_gt(strlen(module), 1800000);
  bounded_run run = run_bounded(module, 0, NULL);
  cr_assert_not_null(find_diag(run.report, "mesh-duplicate-axis", "duplicate axis name: \"a0\""));
  sc_arena_free(run.arena);
  free(module);
}

/* HLO whose parameter has an explicit tile assignment over `ndevices` devices; with `repeat`, the
 * last device id is the first one again. */
static char *hlo_with_tile_assignment(uint32_t ndevices, bool repeat) {
  strbuf b = {0};
  sb_printf(&b, "HloModule m, num_partitions=%u\n\nENTRY main {\n  p0 = f32[%u] parameter(0), sharding={devices=[%u]",
                   ndevices, ndevices, ndevices);
  for (uint32_t i = 0; i < ndevices; i++) sb_printf(&b, "%s%u", i ? "," : "", repeat && i == ndevices - 1 ? 0 : i);
  sb_printf(&b, "}\n  ROOT c = f32[%u] copy(p0)\n}\n", ndevices);
  return take(&b);
}

Test(linear_bounds, tile_assignment_of_200000_devices) {
  char *hlo = hlo_with_tile_assignment(200000, false);
  cr_assert_gt(strlen(hlo), 1280000);
  bounded_run run = run_bounded(hlo, 0, NULL);
  cr_assert_eq(run.report->errors, 0, "a permutation of 0..199999 is a valid tile assignment");
  sc_arena_free(run.arena);
  free(hlo);

  hlo = hlo_with_tile_assignment(200000, true);
  run = run_bounded(hlo, 0, NULL);
  cr_assert_not_null(find_diag(run.report, "sharding-tile-assignment", "device 0 is not unique in tile assignment"));
  sc_arena_free(run.arena);
  free(hlo);
}

/* Verification loops poll the cancel flag through the arena's work meter: with the flag raised, the
 * tile-assignment check of 200k devices stops inside its loop (longjmp 2), instead of finishing. */
Test(linear_bounds, cancel_stops_tile_assignment_check) {
  sc_arena *a = sc_arena_new(0);
  strbuf b = {0};
  sb_puts(&b, "{devices=[200000]");
  for (uint32_t i = 0; i < 200000; i++) sb_printf(&b, "%s%u", i ? "," : "", i);
  sb_puts(&b, "}");
  char *text = take(&b);
  const char *error = NULL;
  md_sharding *s = md_parse_gspmd_sharding(a, ir_span_of(text, (uint32_t)strlen(text)), 0, &error);
  cr_assert_not_null(s, "%s", error);
  md_shape shape;
  cr_assert(md_parse_shape(a, ir_span_of("f32[200000]", 11), &shape));
  cr_assert_null(md_gspmd_validate(a, s, &shape, 200000, false), "valid when not cancelled");

  atomic_int cancel = 1;
  jmp_buf env;
  volatile bool stopped = false;
  ar_set_cancel(a, &cancel);
  ar_set_failure_jump(a, &env);
  unsigned long long before = ar_steps(a);
  if (setjmp(env) == 2) stopped = true;
  else md_gspmd_validate(a, s, &shape, 200000, false);
  ar_set_failure_jump(a, NULL);
  cr_assert(stopped, "the check noticed the cancel flag");
  cr_assert_leq(ar_steps(a) - before, 200000 + SC_ARENA_POLL_STEPS, "and stopped at its first poll");
  sc_arena_free(a);
  free(text);
}

/* Value names crafted to share their hash's low bits: the value table is keyed by the request's seed
 * (sc_options.hash_seed), so names crafted for one seed cost nothing extra under another, while under
 * the seed they were crafted for the long probes show up on the work meter (a step limit stops them). */
#include "util/hash.h"

#define CRAFT_SEED UINT64_C(0x0123456789abcdef)
#define OTHER_SEED UINT64_C(0x5eed5eed5eed5eed)

static char *module_of_colliding_values(uint32_t n) {
  strbuf b = {0};
  sb_puts(&b, "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n");
  const char *prev = "%arg0";
  char name[2][24];
  for (uint32_t found = 0, i = 0; found < n; i++) {
    char *cur = name[found & 1];
    int len = snprintf(cur, sizeof name[0], "%%v%u", i);
    if (hash_bytes(cur, (size_t)len, CRAFT_SEED) & 0xfff) continue; /* low 12 bits: every table size up to 4096 */
    sb_printf(&b, "  %s = stablehlo.add %s, %s : tensor<8xf32>\n", cur, prev, prev);
    prev = cur;
    found++;
  }
  sb_printf(&b, "  return %s : tensor<8xf32>\n}\n", prev);
  return take(&b);
}

static unsigned long long steps_with_seed(const char *text, uint64_t seed) {
  sc_options opt = {0};
  opt.hash_seed = seed;
  sc_arena *a = sc_arena_new(0);
  sc_report *r = NULL;
  cr_assert_eq(sc_check(a, text, strlen(text), &opt, &r), SC_OK);
  cr_assert_eq(r->ops, 1500 + 3, "every op parsed (%zu)", r->ops);
  unsigned long long steps = ar_steps(a);
  sc_arena_free(a);
  return steps;
}

Test(linear_bounds, value_names_crafted_to_collide) {
  char *text = module_of_colliding_values(1500);
  unsigned long long crafted = steps_with_seed(text, CRAFT_SEED), other = steps_with_seed(text, OTHER_SEED);
  cr_assert_geq(crafted, other + 1500ull * 1500 / 4, "the meter sees the probe runs (%llu vs %llu steps)", crafted, other);
  bounded_run run = run_bounded(text, 0, &(sc_options){.hash_seed = OTHER_SEED});
  sc_arena_free(run.arena);
  free(text);
}

/* ---- Round 3: kernels, operands and uses (the rules' per-kernel work) ---- */

#define KERNEL_MODULE_HEAD                                                                                     \
  "module @m attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"                      \
  "  sdy.mesh @mesh = <[\"data\"=4]>\n"                                                                        \
  "  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>}) " \
  "-> tensor<8x8xf32> {\n"
#define KERNEL_CALL "stablehlo.custom_call @tpu_custom_call"
#define KERNEL_CONFIG "{backend_config = \"{\\22custom_call_config\\22: {\\22body\\22: \\22TUzv\\22}}\", kernel_name = \"k\"}"

static size_t count_rule(const sc_report *r, const char *rule) {
  size_t n = 0;
  for (size_t i = 0; i < r->ndiags; i++) n += !strcmp(r->diags[i].rule, rule);
  return n;
}

/* `nkernels` kernels in one function, each fed by the previous one through an add: every kernel looks up
 * the users of its results (their shardings), which must cost its own uses, not a scan of the function. */
Test(linear_bounds, kernels_5000_chained_in_one_function) {
  const uint32_t nkernels = 5000;
  strbuf b = {0};
  sb_puts(&b, KERNEL_MODULE_HEAD);
  const char *prev = "%arg0";
  char name[32];
  for (uint32_t i = 0; i < nkernels; i++) {
    sb_printf(&b, "    %%a%u = stablehlo.add %s, %%arg0 : tensor<8x8xf32>\n", i, prev);
    sb_printf(&b, "    %%k%u = " KERNEL_CALL "(%%a%u) " KERNEL_CONFIG " : (tensor<8x8xf32>) -> tensor<8x8xf32>\n",
                     i, i);
    snprintf(name, sizeof name, "%%k%u", i);
    prev = name;
  }
  sb_printf(&b, "    return %s : tensor<8x8xf32>\n  }\n}\n", prev);
  char *module = take(&b);
  bounded_run run = run_bounded(module, 0, NULL);
  cr_assert_eq(count_rule(run.report, "kernel-outside-manual"), nkernels, "every kernel is reported once");
  sc_arena_free(run.arena);
  free(module);
}

/* One kernel with `n` operands (or results, each constrained): its shard_map / manual-computation fixes
 * list every operand and result; built by re-printing a growing string they cost O(n^2) bytes. */
static void check_wide_kernel(uint32_t n, bool results) {
  strbuf b = {0};
  sb_puts(&b, KERNEL_MODULE_HEAD);
  if (results) {
    sb_printf(&b, "    %%k:%u = " KERNEL_CALL "(%%arg0) " KERNEL_CONFIG " : (tensor<8x8xf32>) -> (", n);
    for (uint32_t i = 0; i < n; i++) sb_printf(&b, "%stensor<8x8xf32>", i ? ", " : "");
    sb_puts(&b, ")\n");
    for (uint32_t i = 0; i < n; i++)
      sb_printf(&b, "    %%s%u = sdy.sharding_constraint %%k#%u <@mesh, [{\"data\"}, {}]> : tensor<8x8xf32>\n", i, i);
    sb_puts(&b, "    return %arg0 : tensor<8x8xf32>\n  }\n}\n");
  } else {
    sb_puts(&b, "    %k = " KERNEL_CALL "(");
    for (uint32_t i = 0; i < n; i++) sb_printf(&b, "%s%%arg0", i ? ", " : "");
    sb_puts(&b, ") " KERNEL_CONFIG " : (");
    for (uint32_t i = 0; i < n; i++) sb_printf(&b, "%stensor<8x8xf32>", i ? ", " : "");
    sb_puts(&b, ") -> tensor<8x8xf32>\n    return %k : tensor<8x8xf32>\n  }\n}\n");
  }
  char *module = take(&b);
  bounded_run run = run_bounded(module, 0, NULL);
  const sc_diag *d = find_diag(run.report, "kernel-outside-manual", NULL);
  cr_assert_not_null(d, "the kernel outside any shard_map is reported");
  cr_assert_geq(d->nfixes, 1, "with its fixes");
  sc_arena_free(run.arena);
  free(module);
}

Test(linear_bounds, kernel_of_20000_operands) { check_wide_kernel(20000, false); }
Test(linear_bounds, kernel_of_8000_constrained_results) { check_wide_kernel(8000, true); }

/* `n` sdy.data_flow_edge ops whose inputs each have a second user: each edge counts its input's uses. */
Test(linear_bounds, data_flow_edges_20000_with_two_users) {
  const uint32_t n = 20000;
  strbuf b = {0};
  sb_puts(&b, KERNEL_MODULE_HEAD);
  for (uint32_t i = 0; i < n; i++)
    sb_printf(&b,
                     "    %%a%u = stablehlo.add %%arg0, %%arg0 : tensor<8x8xf32>\n"
                     "    %%e%u = sdy.data_flow_edge %%a%u : tensor<8x8xf32>\n"
                     "    %%f%u = stablehlo.add %%a%u, %%a%u : tensor<8x8xf32>\n",
                     i, i, i, i, i, i);
  sb_puts(&b, "    return %arg0 : tensor<8x8xf32>\n  }\n}\n");
  char *module = take(&b);
  bounded_run run = run_bounded(module, 0, NULL);
  cr_assert_eq(count_rule(run.report, "sharding-sdy-op"), n, "every edge's input has two users");
  cr_assert_not_null(find_diag(run.report, "sharding-sdy-op", "to have a single user"));
  sc_arena_free(run.arena);
  free(module);
}

/* Checks `module` (taken over) under the linear bounds: `rule` reports a diagnostic containing `needle`
 * whose list of names is cut after SC_LIST_SHOWN, ending in `list_tail`. */
static void expect_cut_list(char *module, const char *rule, const char *needle, const char *list_tail) {
  bounded_run run = run_bounded(module, 0, NULL);
  const sc_diag *d = find_diag(run.report, rule, needle);
  cr_assert_not_null(d, "%s: no diagnostic containing \"%s\"", rule, needle);
  cr_assert_not_null(strstr(d->message, list_tail), "%s", d->message);
  sc_arena_free(run.arena);
  free(module);
}

/* `n` quoted names "<stem>0", "<stem>1", ... separated by ", ", each followed by `suffix` (e.g. "=1"). */
static void put_names(strbuf *b, uint32_t n, const char *stem, const char *suffix) {
  for (uint32_t i = 0; i < n; i++) sb_printf(b, "%s\"%s%u\"%s", i ? ", " : "", stem, i, suffix);
}

/* A manual computation over `n` axes its mesh does not have: its manual context drops repeated axis
 * names and SC0503 names the axes; both must stay linear, and the message bounded. */
Test(linear_bounds, manual_computation_over_20000_unknown_axes) {
  const uint32_t n = 20000;
  strbuf b = {0};
  sb_puts(&b, KERNEL_MODULE_HEAD "    %m = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {}]>] "
                                        "out_shardings=[<@mesh, [{}, {}]>] manual_axes={");
  put_names(&b, n, "u", "");
  sb_puts(&b, "} (%b: tensor<8x8xf32>) {\n      sdy.return %b : tensor<8x8xf32>\n"
                     "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n    return %m : tensor<8x8xf32>\n  }\n}\n");
  expect_cut_list(take(&b), "manual-unknown-axis", "unknown manual axis: \"u0\"", "'u31', ... and 19968 more}");
}

/* A sharding constraint inside a shard_map naming every manual axis of a 3000-axis mesh: the manual
 * axes it re-binds are found through a set of the sharding's axes (not manual x sharding axes
 * comparisons), and the message lists the first SC_LIST_SHOWN of them. */
Test(linear_bounds, constraint_rebinding_3000_manual_axes) {
  const uint32_t n = 3000;
  strbuf b = {0};
  sb_puts(&b, "sdy.mesh @mesh = <[");
  put_names(&b, n, "a", "=1");
  sb_puts(&b, "]>\nfunc.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] "
                     "manual_axes={");
  put_names(&b, n, "a", "");
  sb_puts(&b, "} (%arg1: tensor<4xf32>) {\n    %1 = sdy.sharding_constraint %arg1 <@mesh, [{");
  put_names(&b, n, "a", "");
  sb_puts(&b, "}]> : tensor<4xf32>\n    sdy.return %1 : tensor<4xf32>\n  } : (tensor<4xf32>) -> tensor<4xf32>\n"
                     "  return %0 : tensor<4xf32>\n}\n");
  expect_cut_list(take(&b), "manual-axis-rebound", "contains a manual axes", "'a31', ... and 2968 more)");
}

/* The cost layer (lib/cost): an entry function of 20000 donated, sharded arguments, each used by one op of
 * a 20000-op chain, costs work and memory linear in the module; the bytes are exact (each f32[8] over
 * x=4: 2 elements, 8 B per device). */
Test(linear_bounds, cost_of_20000_donated_arguments) {
  const uint32_t n = 20000;
  strbuf b = {0};
  sb_puts(&b, "sdy.mesh @mesh = <[\"x\"=4]>\nfunc.func public @main(");
  for (uint32_t i = 0; i < n; i++)
    sb_printf(&b, "%s%%arg%u: tensor<8xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}",
                     i ? ", " : "", i);
  sb_puts(&b, ") -> tensor<8xf32> {\n  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n");
  for (uint32_t i = 1; i < n; i++) sb_printf(&b, "  %%%u = stablehlo.add %%%u, %%arg%u : tensor<8xf32>\n", i, i - 1, i);
  sb_printf(&b, "  return %%%u : tensor<8xf32>\n}\n", n - 1);
  char *module = take(&b);
  bounded_run run = run_bounded(module, 0, NULL);
  cr_assert(run.report->cost.computed);
  cr_assert_eq(run.report->cost.arguments_bytes, (int64_t)n * 8);
  cr_assert_eq(run.report->cost.donated_bytes, (int64_t)n * 8);
  cr_assert_eq(run.report->cost.results_bytes, 8); /* no result sharding written: at least 32 B / 4 devices */
  cr_assert_eq(run.report->cost.peak_bytes_lower_bound, (int64_t)n * 8); /* all arguments at the start */
  sc_arena_free(run.arena);
  free(module);
}

/* The memory rules on 20000 replicated 4 MiB arguments (x=4): SC0801 against a 16 GiB device and SC0802
 * list the largest few and stay linear (the largest are picked, not sorted). */
Test(linear_bounds, memory_rules_on_20000_replicated_arguments) {
  const uint32_t n = 20000;
  strbuf b = {0};
  sb_puts(&b, "sdy.mesh @mesh = <[\"x\"=4]>\nfunc.func public @main(");
  for (uint32_t i = 0; i < n; i++)
    sb_printf(&b, "%s%%arg%u: tensor<1048576xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}", i ? ", " : "", i);
  sb_puts(&b, ") -> tensor<1048576xf32> {\n  return %arg0 : tensor<1048576xf32>\n}\n");
  char *module = take(&b);
  sc_options opt = {.device_memory_bytes = INT64_C(16) << 30};
  bounded_run run = run_bounded(module, 0, &opt);
  cr_assert_eq(run.report->cost.arguments_bytes, (int64_t)n << 22);
  cr_assert_not_null(find_diag(run.report, "memory-over-device", "needs at least"));
  const sc_diag *d = find_diag(run.report, "memory-replicated-parameters", "20000 parameters of @main are fully replicated");
  cr_assert_not_null(d);
  cr_assert_not_null(strstr(d->message, "; and 19995 more"), "%s", d->message);
  sc_arena_free(run.arena);
  free(module);
}

/* An alias reference is two bytes of input but its definition any size: a per-value list that names a
 * large sharding alias `nrefs` times reads the definitions only up to a budget linear in the module,
 * then says so, instead of parsing nrefs x its size. */
static void check_alias_fanout(uint32_t ndims, uint32_t nrefs) {
  strbuf b = {0};
  sb_puts(&b, "#big = #sdy.sharding<@mesh, [");
  for (uint32_t i = 0; i < ndims; i++) sb_printf(&b, "%s{}", i ? ", " : "");
  sb_puts(&b, "]>\nsdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
              "  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[");
  for (uint32_t i = 0; i < nrefs; i++) sb_printf(&b, "%s#big", i ? ", " : "");
  sb_puts(&b, "]>} : tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n");
  char *module = take(&b);
  bounded_run run = run_bounded(module, 0, NULL);
  cr_assert_not_null(find_diag(run.report, "sharding-syntax", "aliases read in place of their references exceed"));
  sc_arena_free(run.arena);
  free(module);
}

Test(linear_bounds, alias_named_20000_times_in_one_list) { check_alias_fanout(4000, 20000); }

/* With --split-input-file each chunk reads aliases within a budget of its own size, not the file's:
 * chunks that each fan a chain of aliases out 27000-fold stay linear in the file. */
Test(linear_bounds, alias_fan_out_in_400_chunks) {
  strbuf b = {0};
  for (int chunk = 0; chunk < 400; chunk++) {
    if (chunk) sb_puts(&b, "// -----\n");
    sb_puts(&b, "#z = #sdy.sharding<@mesh, [{}, {}]>\n");
    const char *level[] = {"#a = ", "#b = ", "#c = "}, *ref[] = {"#z", "#a", "#b"};
    for (int l = 0; l < 3; l++) {
      sb_puts(&b, level[l]);
      for (int i = 0; i < 30; i++) sb_printf(&b, "%s%s", i ? ", " : "", ref[l]);
      sb_puts(&b, "\n");
    }
    sb_puts(&b, "sdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
                "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[#c]>} : tensor<8x8xf32>\n"
                "  return %0 : tensor<8x8xf32>\n}\n");
  }
  char *module = take(&b);
  sc_options opt = {.split_input_file = true};
  bounded_run run = run_bounded(module, 0, &opt);
  sc_arena_free(run.arena);
  free(module);
}
