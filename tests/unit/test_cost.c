/* Per-device bytes (lib/cost, docs/cost.md), checked against numbers computed by hand in each test's
 * comment: Shardy, GSPMD and HLO forms, uneven shards, sub-axes, several axes on one dimension, partial
 * replication, sub-byte and complex types, donation and the peak lower bound, propagation, the device
 * table; the collectives of the propagated shardings. (The memory family's modules are test_modules.c's.) */
#include <criterion/criterion.h>

#include "cost/cost.h"
#include "module_harness.h"
#include "rules/rules.h"

#define GIB (INT64_C(1) << 30)

static sc_report *check_text(sc_arena *a, const char *text, const char *mesh_spec, bool propagate) {
  sc_options opt = {0};
  sc_target_mesh mesh;
  if (mesh_spec) {
    const char *err = NULL;
    cr_assert_eq(sc_mesh_parse(a, mesh_spec, &mesh, &err), 0, "%s", err);
    opt.mesh = &mesh;
  }
  opt.no_propagate = !propagate;
  sc_report *r = test_check(a, text, &opt);
  cr_assert_not_null(r);
  cr_assert(r->cost.computed, "no cost computed");
  return r;
}

static const sc_cost_tensor *tensor(const sc_report *r, const char *name) {
  for (size_t i = 0; i < r->cost.nlargest; i++)
    if (!strcmp(r->cost.largest[i].name, name)) return &r->cost.largest[i];
  cr_assert_fail("no tensor %s among the largest", name);
  return NULL;
}

Test(cost, shardy_uneven_shards_several_axes_and_partial_replication) {
  sc_arena *a = sc_arena_new(0);
  /* mesh x=2, y=4 (8 devices)
   * arg 0 tensor<10x16xf32> [{"y"}, {"x"}]: ceil(10/4)=3 x 16/2=8 = 24 elements x 4 B = 96 B
   * arg 1 tensor<64xf32> [{"x", "y"}]: 64/8 = 8 x 4 B = 32 B
   * arg 2 tensor<8x8xi1> [{"x"}, {}] (replicated over y): 4 x 8 = 32 elements x 1 B = 32 B
   * result 0 tensor<10x16xf32> no sharding written: the partitioner chooses, at least 640 / 8 = 80 B */
  sc_report *r = check_text(a,
                            "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                            "func.func public @main(%arg0: tensor<10x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}, {\"x\"}]>},\n"
                            "    %arg1: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\", \"y\"}]>},\n"
                            "    %arg2: tensor<8x8xi1> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}) -> tensor<10x16xf32> {\n"
                            "  return %arg0 : tensor<10x16xf32>\n}\n",
                            NULL, false);
  cr_assert_eq(tensor(r, "arg 0")->bytes_per_device, 96);
  cr_assert_eq(tensor(r, "arg 0")->global_bytes, 640);
  cr_assert_str_eq(tensor(r, "arg 0")->sharding, "P('y', 'x')");
  cr_assert_eq(tensor(r, "arg 1")->bytes_per_device, 32);
  cr_assert_str_eq(tensor(r, "arg 1")->sharding, "P(('x', 'y'))");
  cr_assert_eq(tensor(r, "arg 2")->bytes_per_device, 32);
  cr_assert_eq(tensor(r, "result 0")->bytes_per_device, 80);
  cr_assert_null(tensor(r, "result 0")->sharding);
  cr_assert_eq(r->cost.arguments_bytes, 96 + 32 + 32);
  cr_assert_eq(r->cost.results_bytes, 80);
  cr_assert_eq(r->cost.donated_bytes, 0);
  /* nothing donated: every argument lives to the end, the result is a new buffer at the return */
  cr_assert_eq(r->cost.peak_bytes_lower_bound, 96 + 32 + 32 + 80);
  cr_assert_eq(r->cost.device_memory_bytes, -1);
  sc_arena_free(a);
}

Test(cost, sub_axes_and_element_types) {
  sc_arena *a = sc_arena_new(0);
  /* mesh x=8; "x":(1)2 and "x":(2)4 are sub-axes of sizes 2 and 4
   * arg 0 tensor<6x8xbf16> [{"x":(1)2}, {"x":(2)4}]: 3 x 2 = 6 elements x 2 B = 12 B
   * arg 1 tensor<9xi4> [{"x"}]: ceil(9/8) = 2 elements, packed two a byte = 1 B
   * arg 2 tensor<3xcomplex<f32>> replicated: 3 x 8 B = 24 B
   * arg 3 tensor<5xf8E4M3FN> [{"x":(1)2}]: 3 x 1 B = 3 B */
  sc_report *r = check_text(a,
                            "sdy.mesh @mesh = <[\"x\"=8]>\n"
                            "func.func public @main(%arg0: tensor<6x8xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\":(1)2}, {\"x\":(2)4}]>},\n"
                            "    %arg1: tensor<9xi4> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>},\n"
                            "    %arg2: tensor<3xcomplex<f32>> {sdy.sharding = #sdy.sharding<@mesh, [{}]>},\n"
                            "    %arg3: tensor<5xf8E4M3FN> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\":(1)2}]>}) -> tensor<6x8xbf16> {\n"
                            "  return %arg0 : tensor<6x8xbf16>\n}\n",
                            NULL, false);
  cr_assert_eq(tensor(r, "arg 0")->bytes_per_device, 12);
  cr_assert_eq(tensor(r, "arg 1")->bytes_per_device, 1);
  cr_assert_eq(tensor(r, "arg 2")->bytes_per_device, 24);
  cr_assert_eq(tensor(r, "arg 3")->bytes_per_device, 3);
  cr_assert_eq(r->cost.arguments_bytes, 12 + 1 + 24 + 3);
  sc_arena_free(a);
}

Test(cost, element_bits) {
  static const struct {
    const char *name;
    uint32_t bits;
  } cases[] = {{"f32", 32}, {"bf16", 16}, {"i1", 8},  {"pred", 8},      {"s4", 4},          {"u2", 2},
               {"ui8", 8},  {"si64", 64}, {"c64", 64}, {"c128", 128}, {"complex<f64>", 128}, {"f8e5m2", 8},
               {"f4E2M1FN", 4}, {"index", 64}, {"tf32", 32}, {"token", 0}, {"foo", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_expect_eq(cost_element_bits(ir_span_of(cases[i].name, (uint32_t)strlen(cases[i].name))), cases[i].bits, "%s",
                 cases[i].name);
  cr_assert_eq(cost_bytes(9, 4), 5);
  cr_assert_eq(cost_bytes(9, 2), 3);
  cr_assert_eq(cost_bytes(INT64_MAX / 2, 32), INT64_MAX); /* saturates */
}

Test(cost, gspmd_strings) {
  sc_arena *a = sc_arena_new(0);
  /* 8 partitions; arg 0 tensor<10x3xf32> "{devices=[4,1,2]<=[8] last_tile_dim_replicate}": ceil(10/4)=3 x 3 = 9 x 4 B = 36 B
   * arg 1 tensor<7x9xf32> "{devices=[2,4]<=[8]}": ceil(7/2)=4 x ceil(9/4)=3 = 12 x 4 B = 48 B
   * arg 2 tensor<16xf32> "{replicated}": 64 B; arg 3 tensor<16xf32> "{maximal device=0}": held whole, 64 B */
  sc_report *r = check_text(a,
                            "module @jit_f attributes {mhlo.num_partitions = 8 : i32} {\n"
                            "func.func public @main(%arg0: tensor<10x3xf32> {mhlo.sharding = \"{devices=[4,1,2]<=[8] last_tile_dim_replicate}\"},\n"
                            "    %arg1: tensor<7x9xf32> {mhlo.sharding = \"{devices=[2,4]<=[8]}\"},\n"
                            "    %arg2: tensor<16xf32> {mhlo.sharding = \"{replicated}\"},\n"
                            "    %arg3: tensor<16xf32> {mhlo.sharding = \"{maximal device=0}\"}) -> tensor<16xf32> {\n"
                            "  return %arg2 : tensor<16xf32>\n}\n}\n",
                            NULL, false);
  cr_assert_eq(tensor(r, "arg 0")->bytes_per_device, 36);
  cr_assert_eq(tensor(r, "arg 1")->bytes_per_device, 48);
  cr_assert_eq(tensor(r, "arg 2")->bytes_per_device, 64);
  cr_assert_eq(tensor(r, "arg 3")->bytes_per_device, 64);
  cr_assert_eq(r->cost.arguments_bytes, 36 + 48 + 64 + 64);
  sc_arena_free(a);
}

Test(cost, hlo_text_tuples_and_input_output_alias) {
  sc_arena *a = sc_arena_new(0);
  /* p0 f32[7,9] tiled [2,4]: 4 x 3 x 4 B = 48 B, aliased with output {0}
   * p1 s4[9] tiled [8]: 2 elements packed = 1 B, a buffer donor
   * ROOT (f32[7,9], f32[16]): leaf 0 tiled [2,4] = 48 B, leaf 1 replicated = 64 B
   * peak (ops 0..4: p0, p1, n, c, t): both arguments at the start = 49 B; p0 is donated and last used by n
   *   (op 2): live [0, 2); p1 is donated and never used: not past the start; the ROOT tuple's leaves live
   *   from op 4 to the end: 48 + 64 = 112 B; the bound is max(49, 48, 112) = 112 B */
  sc_report *r = check_text(a,
                            "HloModule jit_f, input_output_alias={ {0}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }, num_partitions=8\n\n"
                            "ENTRY main {\n"
                            "  p0 = f32[7,9]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}\n"
                            "  p1 = s4[9]{0} parameter(1), sharding={devices=[8]<=[8]}\n"
                            "  n = f32[7,9]{1,0} negate(p0), sharding={devices=[2,4]<=[8]}\n"
                            "  c = f32[16]{0} constant({0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}), sharding={replicated}\n"
                            "  ROOT t = (f32[7,9]{1,0}, f32[16]{0}) tuple(n, c), sharding={{devices=[2,4]<=[8]}, {replicated}}\n"
                            "}\n",
                            NULL, false);
  cr_assert_eq(tensor(r, "arg 0")->bytes_per_device, 48);
  cr_assert(tensor(r, "arg 0")->donated);
  cr_assert_eq(tensor(r, "arg 1")->bytes_per_device, 1);
  cr_assert(tensor(r, "arg 1")->donated);
  cr_assert_eq(tensor(r, "result 0[0]")->bytes_per_device, 48);
  cr_assert_eq(tensor(r, "result 0[1]")->bytes_per_device, 64);
  cr_assert_eq(r->cost.arguments_bytes, 49);
  cr_assert_eq(r->cost.donated_bytes, 49);
  cr_assert_eq(r->cost.results_bytes, 112);
  cr_assert_eq(r->cost.peak_bytes_lower_bound, 112);
  sc_arena_free(a);
}

Test(cost, donation_shortens_an_argument_life) {
  sc_arena *a = sc_arena_new(0);
  /* mesh x=4; each f32[1024] arg sharded: 256 elements x 4 B = 1 KiB per device.
   * not donated: arg 0 and arg 1 live to the end; results %1 (defined at op 1) and %2 (op 2) follow:
   *   op 2: 1 + 1 + 1 + 1 = 4 KiB.
   * donated arg 0 (tf.aliasing_output) last used at op 0: [0, 0) — its buffer may hold %0;
   *   op 2: arg 1 + %1 + %2 = 3 KiB; at the start both arguments: 2 KiB. */
  const char *fmt = "sdy.mesh @mesh = <[\"x\"=4]>\n"
                    "func.func public @main(%%arg0: tensor<1024xf32> {%ssdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>},\n"
                    "    %%arg1: tensor<1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>})\n"
                    "    -> (tensor<1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}, tensor<1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) {\n"
                    "  %%0 = stablehlo.negate %%arg0 : tensor<1024xf32>\n"
                    "  %%1 = stablehlo.add %%0, %%arg1 : tensor<1024xf32>\n"
                    "  %%2 = stablehlo.multiply %%1, %%arg1 : tensor<1024xf32>\n"
                    "  return %%1, %%2 : tensor<1024xf32>, tensor<1024xf32>\n}\n";
  sc_report *r = check_text(a, ar_printf(a, fmt, ""), NULL, false);
  cr_assert_eq(r->cost.arguments_bytes, 2048);
  cr_assert_eq(r->cost.results_bytes, 2048);
  cr_assert_eq(r->cost.peak_bytes_lower_bound, 4096);
  r = check_text(a, ar_printf(a, fmt, "tf.aliasing_output = 0 : i32, "), NULL, false);
  cr_assert_eq(r->cost.donated_bytes, 1024);
  cr_assert_eq(r->cost.peak_bytes_lower_bound, 3072);
  r = check_text(a, ar_printf(a, fmt, "jax.buffer_donor = true, "), NULL, false);
  cr_assert_eq(r->cost.donated_bytes, 1024);
  cr_assert_eq(r->cost.peak_bytes_lower_bound, 3072);
  sc_arena_free(a);
}

Test(cost, propagated_shardings_when_propagation_ran) {
  sc_arena *a = sc_arena_new(0);
  /* mesh x=2, y=2; arg 0 f32[1024] (4096 B) has no sharding: without propagation the partitioner chooses,
   * counted as an even split over the 4 devices (1024 B); the constraint on its negation shards it over x
   * backward when propagation runs: 4096 / 2 = 2048 B. */
  const char *text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
                     "func.func public @main(%arg0: tensor<1024xf32>) -> tensor<1024xf32> {\n"
                     "  %0 = stablehlo.negate %arg0 : tensor<1024xf32>\n"
                     "  %1 = sdy.sharding_constraint %0 <@mesh, [{\"x\"}]> : tensor<1024xf32>\n"
                     "  return %1 : tensor<1024xf32>\n}\n";
  sc_report *r = check_text(a, text, NULL, false);
  cr_assert_eq(r->cost.arguments_bytes, 1024);
  cr_assert_null(tensor(r, "arg 0")->sharding);
  r = check_text(a, text, NULL, true);
  cr_assert_eq(r->cost.arguments_bytes, 2048);
  cr_assert_str_eq(tensor(r, "arg 0")->sharding, "P('x')");
  cr_assert_eq(r->cost.results_bytes, 2048);
  sc_arena_free(a);
}

Test(cost, device_memory_table_and_options) {
  cr_assert_eq(sc_device_memory_bytes("TPU v4"), 32 * GIB);
  cr_assert_eq(sc_device_memory_bytes("TPU v5 lite"), 16 * GIB);
  cr_assert_eq(sc_device_memory_bytes("v5e"), 16 * GIB);
  cr_assert_eq(sc_device_memory_bytes("TPU v5p"), 95 * GIB);
  cr_assert_eq(sc_device_memory_bytes("TPU v5"), 95 * GIB);
  cr_assert_eq(sc_device_memory_bytes("TPU v6 lite"), 32 * GIB);
  cr_assert_eq(sc_device_memory_bytes("NVIDIA A100-SXM4-40GB"), 40 * GIB);
  cr_assert_eq(sc_device_memory_bytes("NVIDIA A100-SXM4-80GB"), 80 * GIB);
  cr_assert_eq(sc_device_memory_bytes("NVIDIA H100 80GB HBM3"), 80 * GIB);
  cr_assert_eq(sc_device_memory_bytes("NVIDIA H200"), 141 * GIB);
  cr_assert_eq(sc_device_memory_bytes("NVIDIA B200"), 192 * GIB);
  cr_assert_eq(sc_device_memory_bytes("cpu"), -1);
  cr_assert_eq(sc_device_memory_bytes(NULL), -1);
  sc_arena *a = sc_arena_new(0);
  sc_target_mesh mesh;
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(a, "x=4;device_kind=TPU v5 lite", &mesh, &err), 0, "%s", err);
  cr_assert_str_eq(mesh.device_kind, "TPU v5 lite");
  cr_assert_eq(sc_mesh_parse(a, "x=4;device_kind=cpu", &mesh, &err), 0, "%s", err); /* memory unknown */
  const char *text = "func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n";
  sc_options opt = {.device_memory_bytes = 1000};
  sc_report *r = test_check(a, text, &opt);
  cr_assert_eq(r->cost.device_memory_bytes, 1000);
  cr_assert_null(r->cost.device_kind);
  char *json = sc_report_json(r, false);
  cr_assert(strstr(json, "\"cost\":{\"memory\":{\"device_memory_bytes\":1000,\"device_kind\":null,\"per_device\":"
                         "{\"arguments_bytes\":32,\"results_bytes\":32,\"donated_bytes\":0,\"peak_bytes_lower_bound\":64}"),
            "%s", json);
  free(json);
  char *text_report = sc_report_text(r, false);
  cr_assert(strstr(text_report, "<stdin>: per device: arguments 32 B, results 32 B, donated 0 B, peak >= 64 B of 1000 B\n"
                                "<stdin>: 0 errors"),
            "%s", text_report);
  free(text_report);
  sc_arena_free(a);
}

Test(cost, collectives_of_the_propagated_shardings) {
  sc_arena *a = sc_arena_new(0);
  /* mesh x=2, y=4. The dot's contracting dim is sharded over y on both operands: its result f32[64, 32]
   * propagates to [{"x"}, {}] (32 x 32 x 4 B = 4096 B a device) holding partial sums, all-reduced over y:
   * a ring sends 2 (4 - 1) / 4 of the shard = 6144 B. The return reshards it to the replicated result:
   * an all-gather over x, each device receiving the other half: 8192 - 4096 = 4096 B. */
  const char *text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                     "func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>},\n"
                     "    %arg1: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}, {}]>})\n"
                     "    -> (tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {\n"
                     "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>\n"
                     "  return %0 : tensor<64x32xf32>\n}\n";
  sc_report *r = check_text(a, text, NULL, false);
  cr_assert_null(r->cost.collectives, "no propagation, no collectives computed");
  r = check_text(a, text, NULL, true);
  cr_assert_eq(r->cost.ncollectives, 2);
  const sc_cost_collective *ar = &r->cost.collectives[0], *ag = &r->cost.collectives[1];
  cr_assert_str_eq(ar->kind, "all-reduce");
  cr_assert_eq(ar->naxes, 1);
  cr_assert_str_eq(ar->axes[0], "y");
  cr_assert_eq(ar->bytes_per_device, 6144);
  cr_assert_eq(ar->line, 5);
  cr_assert_str_eq(ar->op, "stablehlo.dot_general");
  cr_assert_str_eq(ag->kind, "all-gather");
  cr_assert_str_eq(ag->axes[0], "x");
  cr_assert_eq(ag->bytes_per_device, 4096);
  cr_assert(strstr(ag->reason, "returned value 0"), "%s", ag->reason);
  char *json = sc_report_json(r, false);
  cr_assert(strstr(json, "\"collectives\":[{\"location\":{\"line\":5,\"column\":3,\"function\":\"main\","
                         "\"op\":\"stablehlo.dot_general\"},\"kind\":\"all-reduce\",\"axes\":[\"y\"],\"bytes_per_device\":6144,"),
            "%s", json);
  free(json);
  sc_arena_free(a);
}

Test(cost, collectives_between_an_empty_mesh_and_a_named_one) {
  sc_arena *a = sc_arena_new(0);
  /* the argument lives on an empty mesh (replicated), the result on @mesh: an all-slice over i, no traffic
   * (the axes of the target's mesh are named from that mesh, not the source's) */
  sc_report *r = check_text(a,
                            "sdy.mesh @empty = <[]>\n"
                            "sdy.mesh @mesh = <[\"i\"=2]>\n"
                            "func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@empty, [{}]>})\n"
                            "    -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"i\"}]>}) {\n"
                            "  return %arg0 : tensor<8xf32>\n}\n",
                            NULL, true);
  cr_assert_eq(r->cost.ncollectives, 1);
  cr_assert_str_eq(r->cost.collectives[0].kind, "all-slice");
  cr_assert_str_eq(r->cost.collectives[0].axes[0], "i");
  cr_assert_eq(r->cost.collectives[0].bytes_per_device, 0);
  sc_arena_free(a);
}

Test(cost, host_callback_gathers_its_sharded_operands_to_its_device) {
  sc_arena *a = sc_arena_new(0);
  /* mesh x=2, y=4; a top-level callback runs on device 0 (maximal). Operand 0, f32[64, 32] sharded
   * [{"x"}, {"y"}]: a shard of 32 x 8 x 4 B = 1024 B grows to the whole 8192 B, so each device receives
   * 7168 B in an all-gather over x and y. Operand 1 is replicated: nothing to gather. Inside a fully
   * manual shard_map the same callback gathers nothing (it runs per device). */
  const char *text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                     "sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n"
                     "func.func public @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>},\n"
                     "    %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<64x32xf32> {\n"
                     "  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0, %arg1) {has_side_effect = true, "
                     "sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<64x32xf32>, tensor<4xf32>) -> tensor<64x32xf32>\n"
                     "  return %0 : tensor<64x32xf32>\n}\n";
  sc_report *r = check_text(a, text, NULL, true);
  const sc_cost_collective *g = NULL;
  for (size_t i = 0; i < r->cost.ncollectives; i++)
    if (!strcmp(r->cost.collectives[i].op, "stablehlo.custom_call")) {
      cr_assert_null(g, "one gather only: the replicated operand moves nothing");
      g = &r->cost.collectives[i];
    }
  cr_assert_not_null(g);
  cr_assert_str_eq(g->kind, "all-gather");
  cr_assert_eq(g->naxes, 2);
  cr_assert_str_eq(g->axes[0], "x");
  cr_assert_str_eq(g->axes[1], "y");
  cr_assert_eq(g->bytes_per_device, 7168);
  cr_assert_eq(g->line, 5);
  cr_assert(strstr(g->reason, "operand 0 of stablehlo.custom_call") && strstr(g->reason, "callback's device"), "%s", g->reason);
  r = check_text(a,
                 "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                 "sdy.mesh @empty_mesh = <[]>\n"
                 "func.func public @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>}) -> tensor<64x32xf32> {\n"
                 "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"x\"}, {\"y\"}]>] out_shardings=[<@mesh, [{\"x\"}, {\"y\"}]>] "
                 "manual_axes={\"x\", \"y\"} (%arg1: tensor<32x8xf32>) {\n"
                 "    %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {has_side_effect = true, "
                 "sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, [{}, {}]>]>} : (tensor<32x8xf32>) -> tensor<32x8xf32>\n"
                 "    sdy.return %1 : tensor<32x8xf32>\n"
                 "  } : (tensor<64x32xf32>) -> tensor<64x32xf32>\n"
                 "  return %0 : tensor<64x32xf32>\n}\n",
                 NULL, true);
  for (size_t i = 0; i < r->cost.ncollectives; i++)
    cr_assert_str_neq(r->cost.collectives[i].op, "stablehlo.custom_call", "a callback inside shard_map gathers nothing");
  sc_arena_free(a);
}

Test(cost, replicated_parameters_name_the_spec_and_bytes) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  const sc_diag *d = mh_diag_in("tests/modules/memory/memory-replicated-parameters.bad.mlir", "SC0802", &a, &m, &r);
  cr_assert(strstr(d->message, "arg 0 tensor<8192x8192xf32> 256 MiB -> P('model', None)"), "%s", d->message);
  cr_assert_eq(d->nfixes, 1);
  cr_assert(strstr(d->fixes[0].snippet, "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                                        "arg0 = jax.device_put(arg0, NamedSharding(mesh, P('model', None)))"),
            "%s", d->fixes[0].snippet);
  mh_release(a, &m);
}

Test(cost, full_rematerialization_names_the_axes_bytes_and_spec) {
  sc_arena *a;
  mh_module m;
  sc_report *r;
  /* f32[1024, 4096] sharded over data=2: 8 MiB a device, all-gathered to the whole 16 MiB: 8 MiB received */
  const sc_diag *d = mh_diag_in("tests/modules/communication/comm-full-rematerialization.bad.mlir", "SC0901", &a, &m, &r);
  cr_assert(strstr(d->message, "result 0 of stablehlo.negate (tensor<1024x4096xf32>) is sharded P('data', None)"), "%s",
            d->message);
  cr_assert(strstr(d->message, "all-gathers it over 'data', 8 MiB received per device"), "%s", d->message);
  cr_assert_eq(d->nfixes, 1);
  cr_assert(strstr(d->fixes[0].snippet, "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                                        "y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P('data', None)))"),
            "%s", d->fixes[0].snippet);
  mh_release(a, &m);
}

Test(cost, implicit_collective_threshold_and_unsharded_results) {
  sc_arena *a = sc_arena_new(0);
  /* The dot of collectives_of_the_propagated_shardings, but the function's result has no sharding (JAX's
   * unspecified out_shardings): the partitioner gives it the value's sharding, so the return's all-gather
   * is not reported (no SC0901); the all-reduce of 6144 B is, once the threshold is below it. */
  const char *text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n"
                     "func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>},\n"
                     "    %arg1: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}, {}]>}) -> tensor<64x32xf32> {\n"
                     "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>\n"
                     "  return %0 : tensor<64x32xf32>\n}\n";
  sc_options opt = {0};
  sc_report *r = test_check(a, text, &opt);
  cr_assert_eq(test_count_code(r, "SC0901") + test_count_code(r, "SC0902"), 0, "default 1 GiB: nothing to report");
  opt.thresholds.max_implicit_collective_bytes = 6144; /* not above: still nothing */
  r = test_check(a, text, &opt);
  cr_assert_eq(test_count_code(r, "SC0902"), 0);
  opt.thresholds.max_implicit_collective_bytes = 6143;
  r = test_check(a, text, &opt);
  cr_assert_eq(r->ndiags, 1);
  cr_assert_str_eq(r->diags[0].code, "SC0902");
  cr_assert(strstr(r->diags[0].message, "an all-reduce over 'y' for result 0 of stablehlo.dot_general"), "%s",
            r->diags[0].message);
  cr_assert(strstr(r->diags[0].message, "6 KiB per device"), "%s", r->diags[0].message);
  cr_assert_eq(r->diags[0].nfixes, 0, "partial sums: no constraint avoids the all-reduce");
  opt.no_propagate = true; /* no propagation, no collectives: the rules say nothing */
  r = test_check(a, text, &opt);
  cr_assert_eq(test_count_code(r, "SC0902"), 0);
  sc_arena_free(a);
}
