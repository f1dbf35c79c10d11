#!/usr/bin/env python3
"""Generates the catalog of every family (lib/rules/catalog/<family>.inc: what `shardcheck explain`
prints and docs/rules/ is made from) from one table. The mesh, sharding, manual and collective entries
are written as meaning / when / fix; the others as prose. The examples are checked by
tests/unit/test_catalog.c; the test modules (tests/modules/<family>/) are written by hand, and
tests/unit/test_modules.c fails when a rule lacks its entry, page or modules.
Run from the repository root: python3 scripts/gen_catalog.py, then make rule-pages (--check: only compare;
tests/corpus/rule_pages_test.sh runs that)."""
import os
import sys

MESH2 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
MESH4 = 'sdy.mesh @mesh = <["x"=4]>\n'

def fn(body, args="%arg0: tensor<8xf32>", res="tensor<8xf32>", ret="%arg0", rtype="tensor<8xf32>"):
    return f"func.func @main({args}) -> {res} {{\n{body}  return {ret} : {rtype}\n}}\n"

E = []  # (code, family, title, explanation, bad, good, mesh)
def entry(code, rule, family, title, meaning, when, fix, bad, good, mesh=None, ext="mlir"):
    expl = "What it means\n" + wrap(meaning) + "\n\nWhen it happens\n" + wrap(when) + "\n\nHow to fix (JAX)\n" + wrap(fix) + "\n"
    E.append((code, family, title, expl, bad, good, mesh))

def prose(code, rule, family, title, explanation, bad, good, mesh):
    E.append((code, family, title, explanation, bad, good, mesh))

def wrap(text, width=96):
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = (cur + " " + w) if cur else w
    if cur:
        lines.append(cur)
    return "\n".join("  " + l for l in lines)

# ---------------------------------------------------------------- mesh
entry("SC0101", "mesh-axis-size", "mesh", "A mesh axis has a size below 1",
 "Every axis of an sdy.mesh needs a positive size: a mesh of shape (2, 0) has no devices. Shardy's verifier rejects it with \"axis size must be at least 1, got: 0\".",
 "A mesh built from a computed shape (e.g. jax.device_count() // n that became 0), or a hand-edited module.",
 "Build the mesh from sizes that multiply to the device count: jax.make_mesh((2, 4), ('x', 'y')).",
 'sdy.mesh @mesh = <["x"=2, "y"=0]>\n' + fn(""),
 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n' + fn(""))
entry("SC0102", "mesh-duplicate-axis", "mesh", "A mesh names the same axis twice",
 "The axis names of a mesh must be distinct; shardings refer to axes by name, so a repeated name is ambiguous (Shardy: \"duplicate axis name\").",
 "Mesh construction with a repeated name, e.g. Mesh(devices, ('x', 'x')).",
 "Give every mesh axis its own name: jax.make_mesh((2, 4), ('data', 'model')).",
 'sdy.mesh @mesh = <["x"=2, "x"=4]>\n' + fn(""),
 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n' + fn(""))
entry("SC0103", "mesh-device-ids", "mesh", "A mesh's device_ids are negative, miscounted or not a permutation",
 "device_ids gives the device order of a mesh. It must list each of the product(axis sizes) devices exactly once (a permutation of 0..N-1), no negative ids, and an axis-less mesh may name at most one device (a maximal mesh). Shardy: \"total product of axis sizes must match total number of device ids\", \"sorted device ids must be iota(product(axes))\", \"device id must be non-negative\".",
 "A mesh built from an explicit device list that repeats or skips a device, or whose shape does not match the list.",
 "Build the mesh with jax.make_mesh or Mesh(np.array(jax.devices()).reshape(shape), names), so every device appears once.",
 'sdy.mesh @mesh = <["x"=4], device_ids=[0, 1, 2, 2]>\n' + fn(""),
 'sdy.mesh @mesh = <["x"=4], device_ids=[3, 2, 1, 0]>\n' + fn(""))
entry("SC0104", "mesh-duplicate-name", "mesh", "Two sdy.mesh declarations share a name",
 "Mesh symbols must be unique in a module; a second declaration of the same name is a redefinition, and shardings referring to it are ambiguous.",
 "Modules concatenated or merged by hand, or two lowerings' meshes pasted into one module.",
 "Rename one of the meshes (and the shardings that use it), or drop the duplicate if it is identical.",
 'sdy.mesh @mesh = <["x"=4]>\nsdy.mesh @mesh = <["x"=4]>\n' + fn(""),
 'sdy.mesh @mesh = <["x"=4]>\n' + fn(""))
# Rewritten by hand after the table (the .inc was edited): kept as prose.
prose('SC0105', 'mesh-device-count', 'mesh', "The module's meshes have different numbers of devices",
    ('What it means\n'
     '  The shardings of one jitted program use meshes that span different numbers of devices (maximal\n'
     '  single-device meshes, the empty mesh and meshes no sharding uses excepted). jax.jit refuses it:\n'
     '  "Received incompatible devices for jitted computation" or "mesh should be the same across the\n'
     '  entire program". Shardy and XLA themselves take each sharding\'s own mesh, so this is JAX\'s\n'
     '  policy: an error for modules JAX produced (jax.result_info, jit_* names, a jax.export artifact),\n'
     '  a note for other producers (docs/rules-policy.md).\n'
     '\n'
     'When it happens\n'
     '  A jitted function that mixes shardings over two meshes of different size, e.g. an 8-device mesh\n'
     '  and a 2-device sub-mesh.\n'
     '\n'
     'How to fix (JAX)\n'
     '  Use one mesh for all shardings of the function (or meshes over the same devices with different\n'
     '  axis names).\n'),
    ('module @jit_f {\n'
     '  sdy.mesh @mesh = <["x"=8]>\n'
     '  sdy.mesh @small = <["x"=2]>\n'
     '  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@small, [{"x"}]>}) {\n'
     '    return %arg0 : tensor<8xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f {\n'
     '  sdy.mesh @mesh = <["x"=8]>\n'
     '  sdy.mesh @mesh2 = <["a"=2, "b"=4]>\n'
     '  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"a", "b"}]>}) {\n'
     '    return %arg0 : tensor<8xf32>\n'
     '  }\n'
     '}\n'),
    None)
entry("SC0106", "mesh-num-partitions", "mesh", "A module mesh's device count differs from mhlo.num_partitions",
 "mhlo.num_partitions is the number of devices the module was compiled for; a mesh of another size means the shardings describe a different device assignment. JAX: \"Length of device assignment N is not equal to the size of the mesh M\".",
 "A module edited or assembled by hand, or exported under one mesh and re-annotated for another.",
 "Lower the function under the mesh it runs on: with jax.set_mesh(mesh): jax.jit(f).lower(...).",
 'module attributes {mhlo.num_partitions = 4 : i32} {\n' + MESH4.replace('4', '8') + fn("") + '}\n',
 'module attributes {mhlo.num_partitions = 8 : i32} {\n' + MESH4.replace('4', '8') + fn("") + '}\n')
entry("SC0107", "mesh-target", "mesh", "The target mesh differs from the device count the module was lowered for",
 "A module is lowered for a fixed number of devices (its sdy.mesh, or mhlo.num_partitions). Deployed on a mesh with another device count it is not the same program: shardings, collectives and kernels were planned for the original count. JAX: \"Function main was exported for N devices and is called in a context with M devices, which is not allowed.\"",
 "A module lowered on a 2-chip test machine and deployed on a pod slice; or a jax.export artifact reused on a different topology. (A module lowered for one device is accepted on any device count, as jax.export does; its kernels and callbacks are what break, and their rules report them.)",
 "Lower (or export) the function with the mesh it will run on: with jax.set_mesh(jax.make_mesh((8,), ('data',))): exported = jax.export.export(jax.jit(f))(x). The diagnostic points at the sdy.mesh declaration or the mhlo.num_partitions attribute that fixes the device count; shardings whose tile assignments only fail because of the other device count are listed as its related sites, not reported again.",
 'module attributes {mhlo.num_partitions = 2 : i32} {\n' + fn("") + '}\n',
 'module attributes {mhlo.num_partitions = 8 : i32} {\n' + fn("") + '}\n', "data=8")
entry("SC0108", "mesh-target-axes", "mesh", "The target mesh has the module's device count but other axes",
 "The target mesh has as many devices as the module was lowered for, but other axis names or sizes. The program still runs, but its shardings and collectives were planned for the module's own axes: a sharding over \"x\" of a module lowered on x=2,y=4 is not the sharding over 'data' of a data=8 deployment, and per-axis collectives group other devices. A warning: nothing fails, the layout is not the one intended.",
 "A module lowered with one mesh layout (2x4) and deployed with another (8, or 4x2) over the same devices; a checker given the production mesh for a module exported elsewhere.",
 "Deploy on the mesh the module was lowered for (jax.make_mesh((2, 4), ('x', 'y'))), or re-lower the function under the target mesh: with jax.set_mesh(jax.make_mesh((8,), ('data',))): exported = jax.export.export(jax.jit(f))(x).",
 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n' + fn(""),
 'sdy.mesh @mesh = <["data"=8]>\n' + fn(""), "data=8")

# ---------------------------------------------------------------- sharding
def arg_sh(sh, t="tensor<8xf32>", mesh=MESH4):
    return mesh + fn("", args=f"%arg0: {t} {{sdy.sharding = {sh}}}", res=t, rtype=t)
entry("SC0201", "sharding-syntax", "sharding", "A sharding annotation does not parse or has the wrong kind",
 "The text of an sdy.sharding / mhlo.sharding annotation is not a valid Shardy or XLA sharding, or it is the wrong kind of attribute for its place: function arguments and results take #sdy.sharding<...>, ops take #sdy.sharding_per_value<[...]>. The message carries the parser's own error (e.g. \"expecting priority in format 'p<number>'\", \"expected '{' to start sharding attribute\").",
 "Hand-written or generated annotations with a typo; a sharding copied from an op to a function argument without changing its kind.",
 "Let JAX write the annotations (jax.jit(in_shardings=NamedSharding(mesh, P(...)))), or follow the grammar: #sdy.sharding<@mesh, [{\"x\"}, {}]>, priorities as p0, p1, ...",
 arg_sh('#sdy.sharding<@mesh, [{"x"}phigh]>'), arg_sh('#sdy.sharding<@mesh, [{"x"}p1]>'))
entry("SC0202", "sharding-unknown-mesh", "sharding", "A sharding refers to a mesh the module does not declare",
 "A Shardy sharding names its mesh by symbol (@mesh); the module must declare it with sdy.mesh. Shardy: \"unknown mesh: @name\".",
 "A module whose sdy.mesh declarations were dropped or renamed, or a sharding copied from another module.",
 "Declare the mesh (sdy.mesh @mesh = <[\"x\"=4]>) or refer to one the module has; in JAX, lower with the mesh in context so it is emitted.",
 arg_sh('#sdy.sharding<@other, [{"x"}]>'), arg_sh('#sdy.sharding<@mesh, [{"x"}]>'))
entry("SC0203", "sharding-unknown-axis", "sharding", "A sharding names an axis its mesh does not have",
 "Every axis in a dimension sharding, replicated={...} or unreduced={...} must be an axis of the sharding's mesh. Shardy: \"unknown axis name: \\\"z\\\"\".",
 "A PartitionSpec naming an axis of another mesh, or a typo in the axis name.",
 "Only use axes of the mesh: with mesh = jax.make_mesh((4,), ('x',)), write P('x'), not P('z').",
 arg_sh('#sdy.sharding<@mesh, [{"z"}]>'), arg_sh('#sdy.sharding<@mesh, [{"x"}]>'))
entry("SC0204", "sharding-rank", "sharding", "A sharding's rank does not fit its value",
 "A tensor sharding has exactly one dimension sharding per tensor dimension. Non-shaped values (tokens) and shardings on maximal meshes must have rank 0 and no replicated/unreduced axes; tuples may only carry a sharding when they have one element; unranked tensors cannot be sharded. Shardy: \"sharding doesn't match tensor rank: 2 != 1\", \"non-shaped tensors can only have a sharding with rank 0 ...\", \"a maximal sharding can only have a sharding with rank 0 ...\".",
 "A PartitionSpec longer than the array's rank, or a sharding copied between values of different rank.",
 "Give the spec at most as many entries as the array has dimensions: P('x') or P('x', None) for a rank-2 array.",
 arg_sh('#sdy.sharding<@mesh, [{"x"}, {}]>'), arg_sh('#sdy.sharding<@mesh, [{"x"}]>'))
entry("SC0205", "sharding-value-count", "sharding", "An op has a different number of shardings than values",
 "#sdy.sharding_per_value<[...]> on an op holds one sharding per result (an op without results may carry one maximal or replicated sharding); sdy.named_computation in/out_shardings hold one per operand/result. Shardy: \"shardings don't match number of values: 2 shardings vs 1 values\".",
 "Annotations edited by hand after changing an op's results.",
 "Write exactly one sharding per result.",
 MESH4 + fn('  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}]>]>} : tensor<8xf32>\n', ret="%0"),
 MESH4 + fn('  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>\n', ret="%0"))
entry("SC0206", "sharding-duplicate-axis", "sharding", "A sharding uses an axis more than once",
 "Each mesh axis (or part of it, as sub-axes) may appear once in a sharding, across all dimensions and the replicated/unreduced lists: a tensor cannot be split twice over the same devices. Shardy: \"duplicate axis ref\", \"overlapping sub-axes\", \"both sub-axis and full-axis are used for axis name\".",
 "P('x', 'x'), or an axis both sharding a dimension and listed as replicated/unreduced.",
 "Use each mesh axis at most once per PartitionSpec: P('x', None) or P('x', 'y').",
 arg_sh('#sdy.sharding<@mesh, [{"x"}, {"x"}]>', t="tensor<8x8xf32>"), arg_sh('#sdy.sharding<@mesh, [{"x"}, {}]>', t="tensor<8x8xf32>"))
entry("SC0207", "sharding-sub-axis", "sharding", "A sub-axis is invalid for its axis, or two sub-axes should be merged",
 "A sub-axis \"x\":(m)k is the k-sized slice of axis x after the first m: m >= 1, k > 1, m*k must divide the size of x, and k may not be the whole axis (write \"x\"). Two consecutive sub-axes that together form a larger one must be written merged. Shardy: \"sub-axis next pre-size 6 doesn't divide the size of the full axis 8\", \"sub-axis size is equal to the full axis size\", \"two consecutive sub-axes can be merged\".",
 "Hand-written sub-axes, or shardings produced by a tool that does not canonicalize.",
 "Use full axes where possible; otherwise split an axis into factors of its size: for \"x\"=8, \"x\":(1)2 and \"x\":(2)4.",
 arg_sh('#sdy.sharding<@mesh, [{"x":(1)4}]>'), arg_sh('#sdy.sharding<@mesh, [{"x":(1)2}]>'))
entry("SC0208", "sharding-axis-order", "sharding", "Replicated or unreduced axes are not in mesh order",
 "The axes in replicated={...} and unreduced={...} must be listed in the order of the mesh (and sub-axes by pre-size). Shardy: \"replicated axes are not ordered w.r.t. mesh\".",
 "Hand-written shardings; tools emitting axes in set order.",
 "List the axes in the mesh's order: for mesh [\"x\", \"y\"], replicated={\"x\", \"y\"}.",
 arg_sh('#sdy.sharding<@mesh, [{}], replicated={"y", "x"}>', mesh=MESH2), arg_sh('#sdy.sharding<@mesh, [{}], replicated={"x", "y"}>', mesh=MESH2))
entry("SC0209", "sharding-priority", "sharding", "A closed, empty dimension sharding has a priority",
 "A priority (p0, p1, ...) orders how propagation may further shard a dimension. A closed empty dimension ({}) is fixed as replicated, so a priority on it is meaningless. Shardy: \"dim 0 is empty and closed but has a priority\".",
 "Shardings written with user priorities where the dimension was meant to be open ({?}p0).",
 "Drop the priority, or make the dimension open: {?}p0.",
 arg_sh('#sdy.sharding<@mesh, [{}p0]>'), arg_sh('#sdy.sharding<@mesh, [{?}p0]>'))
entry("SC0210", "sharding-divisibility", "sharding", "A function input/output dimension is not divisible by its devices",
 "A jitted function's arguments and results must split evenly over the devices that shard each dimension. Shardy's IR verifier does not check this, but its export pass does (\"argument #0 has a non-divisible sharding. Shardy expects function IO to be divisible.\"), and JAX rejects it before lowering: \"... implies that array axis 0 is partitioned 4 times, but the dimension size is 6 (... should evenly divide the shape)\".",
 "A batch or feature size that is not a multiple of the mesh axis it is sharded over, e.g. 6 examples on 4 devices.",
 "Pad the dimension to a multiple of the shard count (jnp.pad), or shard it over fewer devices: in_shardings=NamedSharding(mesh, P(None)).",
 arg_sh('#sdy.sharding<@mesh, [{"x"}]>', t="tensor<6xf32>"), arg_sh('#sdy.sharding<@mesh, [{"x"}]>', t="tensor<8xf32>"))
GS = 'module attributes {mhlo.num_partitions = 4 : i32} {\n'
entry("SC0211", "sharding-tile-assignment", "sharding", "A GSPMD sharding's tile assignment does not fit the value or the devices",
 "An XLA/GSPMD sharding ({devices=[...]...}) must tile exactly the value's dimensions (plus any last_tile_dim_replicate / last_tile_dims subgroups), name each device at most once, only devices below the module's device count, and - when the module has several partitions - use all of them. These are XLA's HloSharding::Validate errors: \"Number of tile assignment dimensions (excluding subgroups) is different than the input rank\", \"device 4 >= num_devices (4)\", \"device 0 is not unique in tile assignment\", \"tile_assignment should have 8 devices but has 4\".",
 "mhlo.sharding strings written by hand or by a tool, or a module re-targeted to another device count.",
 "Let JAX emit the sharding (NamedSharding(mesh, P(...))); for a rank-1 value on 4 devices the tile assignment is {devices=[4]<=[4]}.",
 GS + fn("", args='%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}') + '}\n',
 GS + fn("", args='%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}') + '}\n')
UR = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
entry("SC0212", "sharding-unreduced", "sharding", "A sharding constraint or reshard changes unreduced axes in a way Shardy forbids",
 "Unreduced axes mark partial results still to be reduced (sum by default). A sdy.sharding_constraint or sdy.reshard may introduce new unreduced axes only with SUM, and may not change the reduction operator of axes that stay unreduced. Shardy: \"cannot introduce 'max' unreduced axes. Expected 'sum'.\", \"cannot change the reduction operator of kept unreduced axes from max to sum.\".",
 "Shardings with unreduced={...} written by hand or by a transformation that lost the reduction kind.",
 "Introduce unreduced axes with sum reductions only and keep the reduction kind of axes that stay unreduced.",
 UR + fn('  %0 = sdy.reshard %arg0 <@mesh, [{}], unreduced=max{"x"}> : tensor<8xf32>\n', args='%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}', ret="%0"),
 UR + fn('  %0 = sdy.reshard %arg0 <@mesh, [{}], unreduced={"x"}> : tensor<8xf32>\n', args='%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}', ret="%0"))
entry("SC0213", "sharding-rule", "sharding", "An sdy.sharding_rule does not parse or does not fit its op",
 "An op sharding rule (#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>, emitted for jax custom_partitioning / custom calls) maps every operand and result dimension to factors i, j, k, ... (then z_1, z_2, ...). The factor sizes must be listed in order, every factor used, one mapping per operand/result with its rank, no factor twice in one tensor, and the special factor sets (reduction, need_replication, permutation, blocked_propagation) sorted, in range and disjoint. The message is Shardy's parser or verifier error.",
 "Hand-written sharding rules for custom calls (custom_partitioning sharding_rule strings), or a rule written for another op signature.",
 "Write one mapping per operand and result, e.g. sharding_rule='i j -> i j' in jax custom_partitioning, and list factor sizes as {i=.., j=..} in order.",
 fn('  %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {j=8, i=8}, custom>} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n', args="%arg0: tensor<8x8xf32>", res="tensor<8x8xf32>", ret="%0", rtype="tensor<8x8xf32>"),
 fn('  %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}, custom>} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n', args="%arg0: tensor<8x8xf32>", res="tensor<8x8xf32>", ret="%0", rtype="tensor<8x8xf32>"))
entry("SC0214", "sharding-propagation-edges", "sharding", "A propagation-edges debug attribute is invalid",
 "sdy.propagation_edges (and the result/block-arg variants) record which propagation step moved which axis between which operands and results. Step indices must be non-negative and unique, sources differ from targets, targets are not repeated, operand/result indices are in range, the op's operands or results must have shardings on one common mesh, and the axes must belong to it. These attributes come from Shardy's debug-sharding-origins mode.",
 "A module dumped with Shardy's debug propagation info and edited afterwards.",
 "Regenerate the dump, or strip the sdy.propagation_edges attributes; they do not affect compilation.",
 MESH4 + fn('  %0 = stablehlo.add %arg0, %arg0 {sdy.propagation_edges = #sdy.propagation_edges<[{step--1 = [{"x" = operand-0 -> [result-0]}]}]>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>\n', ret="%0"),
 MESH4 + fn('  %0 = stablehlo.add %arg0, %arg0 {sdy.propagation_edges = #sdy.propagation_edges<[{step-1 = [{"x" = operand-0 -> [result-0]}]}]>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>\n', ret="%0"))
entry("SC0215", "sharding-sdy-op", "sharding", "An sdy op is malformed",
 "Shardy's structural ops have their own invariants: sdy.propagation_barrier may not allow BOTH directions (it would block nothing); sdy.constant needs a static shape; sdy.data_flow_edge / sdy.func_data_flow_edge need a static result and a single-use input of the right origin; sdy.named_computation block arguments and results must have the types of its operands and results.",
 "Modules produced by Shardy passes and edited by hand, or passes run out of order.",
 "Use allowed_direction=FORWARD, BACKWARD or NONE (JAX: jax.lax.optimization_barrier for a full barrier); keep named computation bodies' types equal to their operands'.",
 fn('  %0 = sdy.propagation_barrier %arg0 allowed_direction=BOTH : tensor<8xf32>\n', ret="%0"),
 fn('  %0 = sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : tensor<8xf32>\n', ret="%0"))

def hlo_while(cond_sharding):
    return f"""HloModule While, num_partitions=2

%body (prev.1: s32[]) -> s32[] {{
  %prev.1 = s32[] parameter(0), sharding={{replicated}}
  %constant = s32[] constant(1)
  ROOT %add = s32[] add(s32[] %constant, s32[] %prev.1)
}}

%condition (prev.2: s32[]) -> pred[] {{
  %prev.2 = s32[] parameter(0), sharding={cond_sharding}
  %constant.1 = s32[] constant(5)
  ROOT %greater-than = pred[] compare(s32[] %constant.1, s32[] %prev.2), direction=GT
}}

ENTRY %main () -> s32[] {{
  %constant.2 = s32[] constant(0)
  ROOT %while = s32[] while(s32[] %constant.2), condition=%condition, body=%body
}}
"""
entry("SC0216", "sharding-control-flow", "sharding", "A while/conditional and its computations have different shardings",
 "XLA's HLO verifier requires a while loop, its body's parameter and root and its condition's parameter to carry the same sharding (those that have one), and a conditional to share its sharding with every branch root: they are one value flowing around the loop or out of the branches. XLA: \"Inconsistent while sharding among instructions\" / \"Inconsistent conditional sharding among instructions\".",
 "HLO produced or edited by tools that annotate loop state piecewise; JAX programs with sharding constraints inside lax.while_loop bodies that disagree with the loop carry.",
 "Give the loop carry one sharding: constrain the carry the same way before the loop and inside the body (jax.lax.with_sharding_constraint with the same NamedSharding).",
 hlo_while("{maximal device=0}"), hlo_while("{replicated}"), ext="hlo")

def hlo_channel(count_device):
    return f"""HloModule module, num_partitions=2

%cond {{
  %vars.cond = (u32[], f32[]) parameter(0)
  %count.cond = u32[] get-tuple-element(%vars.cond), index=0
  %limit = u32[] constant(10)
  ROOT %lt = pred[] compare(%count.cond, %limit), direction=LT
}}

%body {{
  %param = (u32[], f32[]) parameter(0)
  %count = u32[] get-tuple-element(%param), index=0, sharding={{maximal device={count_device}}}
  %after-all = token[] after-all()
  %recv = (f32[], u32[], token[]) recv(%after-all), channel_id=1, sharding={{{{maximal device=1}}, {{maximal device=1}}, {{maximal device=1}}}}
  %recv-done = (f32[], token[]) recv-done(%recv), channel_id=1
  %data = f32[] get-tuple-element(%recv-done), index=0
  ROOT %tuple = (u32[], f32[]) tuple(%count, %data)
}}

ENTRY %entry {{
  %p0 = f32[] parameter(0)
  %zero = u32[] constant(0)
  %init = (u32[], f32[]) tuple(%zero, %p0)
  %while = (u32[], f32[]) while(%init), body=%body, condition=%cond
  ROOT %result = f32[] get-tuple-element(%while), index=1
}}
"""
entry("SC0217", "sharding-channel-device", "sharding", "A while loop's single-device shardings conflict with a send/recv's device",
 "A send or recv with a single-device (maximal) sharding inside a while loop's body pins the loop to that device. Any other single-device sharding in the body, or on the while itself, that names another device cannot be satisfied. XLA's sharding propagation fails with \"Instruction: count is on device: 0, which conflicts with device: 1 of channel instruction: recv\".",
 "Host transfers or point-to-point channels inside lax.while_loop / lax.fori_loop bodies combined with single-device placement of other loop values.",
 "Put all single-device work of the loop on the device of its send/recv (SingleDeviceSharding(jax.devices()[1])), or move the channel out of the loop.",
 hlo_channel(0), hlo_channel(1), ext="hlo")

# ---------------------------------------------------------------- manual
def mc(ins, outs, axes, barg, body, ret, gin="tensor<16xf32>", gout="tensor<16xf32>", mesh='sdy.mesh @mesh = <["a"=4]>\n', operands="%arg0", extra=""):
    return mesh + f"""func.func @main(%arg0: {gin}) -> {gout} {{
  %0 = sdy.manual_computation({operands}) in_shardings=[{ins}] out_shardings=[{outs}] manual_axes={{{axes}}} ({barg}) {{
{body}    sdy.return {ret}
  }} : ({gin}) -> {gout}
  return %0 : {gout}
}}
"""
entry("SC0501", "manual-value-count", "manual", "A manual computation's shardings, operands, block arguments and results do not correspond",
 "sdy.manual_computation (what jax.shard_map lowers to) takes one in_sharding per operand, one out_sharding per result, one body argument per operand and returns one value per result. Shardy: \"op operand shardings don't match number of values: 2 shardings vs 1 values\", \"number of op results and region results must match\".",
 "A shard_map whose in_specs/out_specs do not match its arguments/outputs after hand editing; modules assembled by tools.",
 "Give shard_map one in_spec per argument and one out_spec per output: jax.shard_map(f, mesh=mesh, in_specs=(P('a'),), out_specs=P('a')).",
 mc('<@mesh, [{"a"}]>, <@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<4xf32>", "", "%arg1 : tensor<4xf32>"),
 mc('<@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<4xf32>", "", "%arg1 : tensor<4xf32>"))
MAB = 'sdy.mesh @meshA = <["a"=4]>\nsdy.mesh @meshB = <["b"=4]>\n'
entry("SC0502", "manual-mesh", "manual", "A manual computation's shardings are on different meshes",
 "All in_shardings and out_shardings of a manual computation with manual axes must be on the same mesh (or the empty mesh): the manual axes are axes of that mesh. Shardy: \"all in and out shardings must be bound to the same mesh or an empty mesh.\"",
 "A shard_map whose specs were written against two meshes, e.g. after renaming mesh axes in part of a program.",
 "Use one mesh for the whole shard_map: jax.shard_map(f, mesh=mesh, ...).",
 mc('<@meshA, [{}]>', '<@meshB, [{}]>', '"a"', "%arg1: tensor<16xf32>", "", "%arg1 : tensor<16xf32>", mesh=MAB),
 mc('<@meshA, [{}]>', '<@meshA, [{}]>', '"a"', "%arg1: tensor<16xf32>", "", "%arg1 : tensor<16xf32>", mesh=MAB))
entry("SC0503", "manual-unknown-axis", "manual", "A manual axis is not an axis of the mesh",
 "manual_axes lists the mesh axes the body handles explicitly (shard_map's axis_names); each must be an axis of the computation's mesh. Shardy: \"unknown manual axis: \\\"b\\\"\".",
 "shard_map(axis_names={...}) naming an axis of another mesh, or a typo.",
 "Only name axes of the shard_map's mesh in axis_names.",
 mc('<@mesh, [{}]>', '<@mesh, [{}]>', '"b"', "%arg1: tensor<16xf32>", "", "%arg1 : tensor<16xf32>"),
 mc('<@mesh, [{}]>', '<@mesh, [{}]>', '"a"', "%arg1: tensor<16xf32>", "", "%arg1 : tensor<16xf32>"))
M2 = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
entry("SC0504", "manual-axis-order", "manual", "A manual axis comes after a free axis in a dimension sharding",
 "In a manual computation's in/out shardings, the manual axes of a dimension must be its major (first) axes; free (automatic) axes can only follow them. Shardy: \"operand sharding at index 0 must have all manual axes come before free axes in its dimension sharding at index 0. Saw manual axis \\\"b\\\" after free axis \\\"a\\\"\".",
 "Partial-manual shard_maps whose specs put an automatic axis before a manual one.",
 "Order each dimension's axes manual-first: P(('b', 'a')) when only 'b' is manual.",
 mc('<@mesh, [{"a", "b"}]>', '<@mesh, [{"b"}]>', '"b"', "%arg1: tensor<8xf32>", "", "%arg1 : tensor<8xf32>", mesh=M2),
 mc('<@mesh, [{"b", "a"}]>', '<@mesh, [{"b"}]>', '"b"', "%arg1: tensor<8xf32>", "", "%arg1 : tensor<8xf32>", mesh=M2))
entry("SC0505", "manual-divisibility", "manual", "A dimension is not divisible by the manual axes that shard it",
 "Manual axes cannot introduce padding: each global dimension must be divisible by the product of the manual axes sharding it. Shardy: \"dimension size 6 is not divisible by the manual axes size 4\"; JAX: \"shard_map applied to the function ... was given argument arrays with axis sizes that are not evenly divisible by the corresponding mesh axis sizes\".",
 "shard_map over a batch whose size is not a multiple of the mesh axis.",
 "Pad the array to a multiple of the axis size, or shard that dimension over fewer devices in in_specs.",
 mc('<@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<1xf32>", "", "%arg1 : tensor<1xf32>", gin="tensor<6xf32>", gout="tensor<6xf32>"),
 mc('<@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<2xf32>", "", "%arg1 : tensor<2xf32>", gin="tensor<8xf32>", gout="tensor<8xf32>"))
entry("SC0506", "manual-local-shape", "manual", "A manual computation's body types are not the local shapes",
 "Inside a manual computation each value has its per-device (local) shape: the global dimension divided by the sizes of the manual axes that shard it. Body arguments and returned values must have exactly these types. Shardy: \"op operand shape, corresponding sharding, and region operand shape at index 0 must match. Expected local shape 'tensor<4xf32>', actual local shape 'tensor<16xf32>'\".",
 "Hand-edited shard_map bodies, or specs changed without updating the body.",
 "Write the body for per-device shapes: with in_specs=P('a') on a 4-device axis, a (16,) input is (4,) inside.",
 mc('<@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<16xf32>", "", "%arg1 : tensor<16xf32>"),
 mc('<@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<4xf32>", "", "%arg1 : tensor<4xf32>"))
entry("SC0507", "manual-axis-rebound", "manual", "An axis already manual in an enclosing manual computation is used again inside it",
 "Inside a manual computation, its manual axes are no longer available to shardings: shardings, constraints, reshards and nested manual computations in the body may only use the remaining (free) axes. Shardy: \"operates on axis \\\"a\\\" which is already bound by a parent sdy.manual_computation op\"; JAX: \"... contains a manual axes ... of mesh which is not allowed. If you are using a with_sharding_constraint under a shard_map, only use the mesh axis in PartitionSpec which are not manual.\"",
 "with_sharding_constraint(x, P('a')) inside shard_map over 'a'; a nested shard_map over an axis the outer one already made manual.",
 "Under shard_map only name non-manual axes in PartitionSpecs; nest shard_maps over disjoint axes.",
 mc('<@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<4xf32>", '    %1 = sdy.sharding_constraint %arg1 <@mesh, [{"a"}]> : tensor<4xf32>\n', "%1 : tensor<4xf32>"),
 mc('<@mesh, [{"a"}]>', '<@mesh, [{"a"}]>', '"a"', "%arg1: tensor<4xf32>", '    %1 = sdy.sharding_constraint %arg1 <@mesh, [{}]> : tensor<4xf32>\n', "%1 : tensor<4xf32>"))
entry("SC0508", "manual-isolation", "manual", "A manual computation's body uses a value defined outside it",
 "sdy.manual_computation is isolated from above: its body sees only its block arguments (local values). Using a global value from outside would mix global and per-device shapes. MLIR: \"'stablehlo.add' op using value defined outside the region\".",
 "Hand-written or transformed modules that capture an outer value in a shard_map body.",
 "Pass the value to shard_map as an argument (with an in_spec) instead of closing over it.",
 mc('<@mesh, [{}]>', '<@mesh, [{}]>', '"a"', "%arg1: tensor<16xf32>", '    %1 = stablehlo.add %arg0, %arg1 : tensor<16xf32>\n', "%1 : tensor<16xf32>"),
 mc('<@mesh, [{}]>', '<@mesh, [{}]>', '"a"', "%arg1: tensor<16xf32>", '    %1 = stablehlo.add %arg1, %arg1 : tensor<16xf32>\n', "%1 : tensor<16xf32>"))
entry("SC0509", "manual-body-mesh", "manual", "A sharding inside a manual computation's body is on a different mesh",
 "Shardings inside a manual computation's body should use the computation's own mesh: its manual axes are only defined there. Shardy does not verify this yet (TODO b/415376816 in its verifier tests), so this is a warning.",
 "with_sharding_constraint inside a shard_map body using a NamedSharding over another mesh.",
 "Use the shard_map's mesh (minus its manual axes) for shardings in the body.",
 mc('<@meshA, [{}]>', '<@meshA, [{}]>', '"a"', "%arg1: tensor<16xf32>", '    %1 = sdy.sharding_constraint %arg1 <@meshB, [{}]> : tensor<16xf32>\n', "%1 : tensor<16xf32>", mesh=MAB),
 mc('<@meshA, [{}]>', '<@meshA, [{}]>', '"a"', "%arg1: tensor<16xf32>", '    %1 = sdy.sharding_constraint %arg1 <@meshA, [{}]> : tensor<16xf32>\n', "%1 : tensor<16xf32>", mesh=MAB))
entry("SC0510", "manual-axes-sorted", "manual", "manual_axes are not in mesh order",
 "Shardy expects manual_axes sorted in the order of the mesh (docs/compiler_api.md); JAX always emits them that way. Unsorted axes are accepted by the verifier but may confuse passes, so this is a warning.",
 "Hand-written manual computations.",
 "List manual axes in the mesh's order.",
 mc('<@mesh, [{}]>', '<@mesh, [{}]>', '"b", "a"', "%arg1: tensor<16xf32>", "", "%arg1 : tensor<16xf32>", mesh=M2),
 mc('<@mesh, [{}]>', '<@mesh, [{}]>', '"a", "b"', "%arg1: tensor<16xf32>", "", "%arg1 : tensor<16xf32>", mesh=M2))
G2 = 'module attributes {mhlo.num_partitions = 2 : i32} {\n'
def gregion(s2):
    return G2 + f"""func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {{
  %0 = stablehlo.custom_call @Sharding(%arg0) {{mhlo.sharding = "{{devices=[2,1]<=[2]}}"}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {{mhlo.sharding = "{s2}"}} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  %2 = stablehlo.custom_call @Sharding(%1) {{mhlo.sharding = "{{manual}}"}} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) {{mhlo.sharding = "{{devices=[2,1]<=[2]}}"}} : (tensor<2x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}}
}}
"""
entry("SC0511", "manual-gspmd-region", "manual", "A GSPMD manual region has wrong shardings or local shapes",
 "In GSPMD modules a shard_map body is delimited by @SPMDFullToShardShape (global to local; its result sharding must be manual: {manual} or last_tile_dims={manual, ...}) and @SPMDShardToFullShape (local to global; its sharding must not be manual). The local shape is the global shape divided by the operand's tiling, which must divide it.",
 "Hand-edited GSPMD modules or tools that emit the custom calls without the matching shardings.",
 "Let jax.shard_map emit the region; it writes {manual} on @SPMDFullToShardShape and the global sharding on @SPMDShardToFullShape.",
 gregion("{devices=[2,1]<=[2]}"), gregion("{manual}"))

def unred_mc(manual, outun):
    return 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n' + fn(
        f'  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{"x"}}, {{}}], unreduced={{"y"}}>] out_shardings=[<@mesh, [{{"x"}}, {{}}]{outun}>] manual_axes={manual} (%arg1: tensor<4x8xf32>) {{\n'
        '    sdy.return %arg1 : tensor<4x8xf32>\n'
        '  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n',
        args="%arg0: tensor<8x8xf32>", res="tensor<8x8xf32>", ret="%0", rtype="tensor<8x8xf32>")
entry("SC0512", "manual-unreduced-partial", "manual", "A partially manual computation has unreduced axes in its in/out shardings",
 "Unreduced (or reduced) axes may only appear in a shard_map's in_specs/out_specs when every mesh axis is manual. JAX: \"unreduced/reduced can only be passed to in_specs when shard_map is in full manual mode. Got mesh axis names ..., manual_axes: ..., specs: ...\". In the module this is an sdy.manual_computation whose in_shardings or out_shardings carry unreduced={...} while manual_axes leaves some mesh axis of size > 1 automatic.",
 "shard_map(f, in_specs=P('x', unreduced={'y'}), axis_names={'x'}) on a mesh with more axes, or a module edited by hand.",
 "Make the shard_map fully manual (axis_names=set(mesh.axis_names)) or drop the unreduced axes from its specs.",
 unred_mc('{"x"}', ''), unred_mc('{"x", "y"}', ', unreduced={"y"}'))

def wsc(n):
    return 'sdy.mesh @mesh = <["x"=4, "y"=2]>\n' + fn(
        f'  %0 = sdy.sharding_constraint %arg0 <@mesh, [{{"x"}}, {{}}]> : tensor<{n}x8xf32>\n',
        args=f"%arg0: tensor<{n}x8xf32>", res=f"tensor<{n}x8xf32>", ret="%0", rtype=f"tensor<{n}x8xf32>")
entry("SC0218", "sharding-uneven-constraint", "sharding", "An intermediate sharding constraint does not divide the dimension it shards",
 "A with_sharding_constraint (sdy.sharding_constraint, or GSPMD @Sharding) on a dimension whose size the product of its axes does not divide is legal, but the shards are uneven: XLA pads the dimension to the next multiple, and JAX may silently replicate the array along that axis instead of sharding it (jax-ml/jax#26946), or fail only when the result is used (jax-ml/jax#15788). A warning: the program runs, but not as sharded as written.",
 "An embedding or vocabulary dimension (e.g. 17 rows) constrained to P('data') on 8 devices.",
 "Shard the dimension over an axis whose size divides it (the message names one when the mesh has it), pad the dimension to a multiple of the axis product, or leave it unsharded.",
 wsc(6), wsc(8))

def cpart(attrs):
    return MESH4 + fn(f"  %0 = stablehlo.custom_call @CustomSPMDPartitioning(%arg0) {{api_version = 2 : i32, backend_config = \"140234887351120\"{attrs}}} : (tensor<8xf32>) -> tensor<8xf32>\n", ret="%0")
entry("SC0219", "sharding-custom-partitioning", "sharding", "A custom_partitioning op can only be partitioned in the JAX process that lowered it",
 "jax.experimental.custom_partitioning lowers to a CustomSPMDPartitioning custom call whose backend_config is the id() of a Python object: when XLA partitions the module it calls back into the JAX process that lowered it to get the op's shardings and per-shard function. A serialized module (jax.export, a dump sent to a compile service) cannot be partitioned anywhere else. In a Shardy module without an sdy.sharding_rule JAX also says: \"Shardy is used, but sharding propagation callbacks instead of sharding_rule are provided. Need to provide sharding_rule to migrate to Shardy.\" A warning: the module is fine inside the process that lowered it.",
 "A model using custom_partitioning (e.g. a fused attention or TransformerEngine op) exported with jax.export or checked/compiled out of process.",
 "Express the op's per-shard computation with jax.shard_map (its partitioning is then in the module), or keep the function in-process (jax.jit) instead of exporting it.",
 cpart(""), MESH4 + fn("  %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>\n", ret="%0"))

def shop(attrs):
    return ('module attributes {mhlo.num_partitions = 4 : i32} {\n' +
            fn(f"  %0 = stablehlo.custom_call @Sharding(%arg0) {{{attrs}}} : (tensor<8xf32>) -> tensor<8xf32>\n", ret="%0") + '}\n')
entry("SC0220", "sharding-op-attributes", "sharding", "A GSPMD sharding custom call has no sharding or a malformed backend_config",
 "Under GSPMD, with_sharding_constraint lowers to a @Sharding custom call carrying the sharding (mhlo.sharding / HLO sharding=), and shard_map's region boundaries to @SPMDFullToShardShape / @SPMDShardToFullShape. XLA rejects a @Sharding without a sharding (\"Sharding instruction must have a sharding attribute\") and a backend_config on any of the three that is not empty or unspecified_dims=[i,j,...] (\"Cannot parse sharding op attributes\" / \"Unknown attribute name in sharding op\").",
 "Modules produced by other tools or edited by hand; a sharding attribute dropped when rewriting a module.",
 "Let JAX write the annotation (jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('x')))), or give the custom call its mhlo.sharding and an empty backend_config (or unspecified_dims=[...] for dimensions left to propagation).",
 shop('backend_config = ""'),
 shop('backend_config = "unspecified_dims=[0]", mhlo.sharding = "{devices=[4]<=[4]}"'))

# ---------------------------------------------------------------- collective
C2 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
def coll(op, insh, t="tensor<16x8xf32>"):
    a = f"%arg0: {t}" + (f" {{sdy.sharding = #sdy.sharding<@mesh, {insh}>}}" if insh else "")
    return C2 + fn(f"  %0 = {op} : {t}\n", args=a, res=t, ret="%0", rtype=t)
entry("SC0601", "collective-operand-sharding", "collective", "A Shardy collective's operand has no sharding",
 "sdy.all_gather, all_to_all, collective_permute, sharded_to_unreduced and replicated_to_unreduced transform their operand's sharding into out_sharding, so the operand must have one (a function argument's sdy.sharding or the sharding of the op defining it). Shardy: \"collective on operand without sharding\".",
 "Modules produced by Shardy's explicit-reshard passes and edited afterwards.",
 "Give the operand a sharding (function argument attribute or sdy.sharding_constraint) matching what the collective expects.",
 coll('sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]>', None),
 coll('sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]>', '[{"y"}, {"x"}]'))
entry("SC0602", "collective-mesh", "collective", "A Shardy collective's result is on a different mesh than its operand",
 "A collective moves data within one mesh: out_sharding must be on the operand's mesh (collective_permute may change the device order, but not the axes, and not just the mesh name). Shardy: \"result mesh does not match operand mesh\".",
 "Collectives written with the wrong mesh symbol.",
 "Use the operand's mesh in out_sharding.",
 'sdy.mesh @other = <["a"=2, "b"=2]>\n' + coll('sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@other, [{"a"}, {}]>', '[{"y"}, {"x"}]'),
 'sdy.mesh @other = <["a"=2, "b"=2]>\n' + coll('sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]>', '[{"y"}, {"x"}]'))
entry("SC0603", "collective-axes", "collective", "A Shardy collective's axes are invalid or cannot be applied",
 "The axes a collective gathers, slices, moves or reduces must be valid axes of the mesh (no duplicates, merged sub-axes, mesh order where required), one list per dimension, and applicable to the operand: gathered axes must be the minor-most (suffix) axes of the operand's dimension, reduction axes must not shard the operand, all-to-all dimensions must be distinct and in range. Shardy: \"result sharding has rank 2 but collective axes has rank 1\", \"can't apply gathering axis \\\"y\\\" to operand sharding on dimension 1\", \"overlapping source/target dimensions in all-to-all params: 0\".",
 "Collectives written by hand or produced for another operand sharding.",
 "Gather only the minor-most axes of a dimension, give one axis list per dimension, and reduce only over axes the operand is not sharded on.",
 coll('sdy.all_gather [{"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]>', '[{"y"}, {"x"}]'),
 coll('sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]>', '[{"y"}, {"x"}]'))
entry("SC0604", "collective-result-sharding", "collective", "A Shardy collective's out_sharding is not the transformed operand sharding",
 "A collective's out_sharding must be exactly its operand's sharding after the collective: all_gather removes the gathered axes, all_slice / reduce_scatter append axes, all_to_all moves them between dimensions, all_reduce keeps the dimension shardings, collective_permute keeps each dimension's shard count. Shardy: \"result sharding doesn't match expected sharding [] on dimension 1\", \"operand and result shardings are not equivalent\".",
 "out_sharding written for a different operand sharding.",
 "Set out_sharding to the operand sharding with the collective applied.",
 coll('sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {"x"}]>', '[{"y"}, {"x"}]'),
 coll('sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]>', '[{"y"}, {"x"}]'))
C3 = 'sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>\n'
def coll3(op, insh, t="tensor<16x8xf32>"):
    a = f"%arg0: {t} {{sdy.sharding = #sdy.sharding<@mesh, {insh}>}}"
    return C3 + fn(f"  %0 = {op} : {t}\n", args=a, res=t, ret="%0", rtype=t)
entry("SC0605", "collective-unreduced", "collective", "A Shardy collective changes unreduced axes it may not",
 "Unreduced axes hold partial values awaiting a reduction of a given kind (sum, max, min). A reducing collective (all_reduce, reduce_scatter) may only complete axes whose reduction kind is its own, may not add new unreduced axes, and may not change the kind of axes that stay unreduced. Shardy: \"cannot reduce 'max' unreduced axes. Expected 'min'.\"",
 "Collectives whose reduction kind does not match how the partial values were produced.",
 "Reduce unreduced axes with the same kind they were created with (e.g. all_reduce max for unreduced=max{...}).",
 coll3('sdy.all_reduce min {} %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]>', '[{"x"}, {"y"}], unreduced=max{"z"}'),
 coll3('sdy.all_reduce max {} %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]>', '[{"x"}, {"y"}], unreduced=max{"z"}'))

def hlo_subgroup(groups):
    return f"""HloModule module, num_partitions=4

sum {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}}

ENTRY entry {{
  param = f32[2,2] parameter(0), sharding={{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={{manual}}}}
  ROOT all-reduce = f32[2,2]{{1,0}} all-reduce(param), to_apply=sum, replica_groups={groups}, use_global_device_ids=true, channel_id=1, sharding={{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={{manual}}}}
}}
"""
entry("SC0606", "collective-manual-subgroup", "collective", "A collective in a partially manual region mixes manual subgroups",
 "In a partially manual region (a shard_map that leaves some axes automatic; GSPMD sharding with last_tile_dims={manual, ...}), the devices split into manual subgroups: those that share every non-manual tile index. A manual collective with global device ids may only communicate within one subgroup. XLA's SPMD partitioner: \"Manual all-reduce across devices that belong to different manual subgroups\".",
 "Hand-written replica_groups in a partial-manual module, or a collective over the automatic axes inside a partial shard_map.",
 "Inside a partial shard_map, only use collectives over its manual axes (jax.lax.psum(x, axis_name='<manual axis>')).",
 hlo_subgroup("{{1,0},{2,3}}"), hlo_subgroup("{{2,0},{1,3}}"), ext="hlo")



# Entries of the sharding, manual and collective families written as prose.
prose('SC0221', 'sharding-unreduced-transition', 'sharding', 'An op, call or return drops, adds or re-types unreduced axes',
    ('What it means\n'
     '  An unreduced axis holds partial values that still need a reduction (sum unless written max/min).\n'
     "  Shardy's export (verify-unreduced-axes) allows only these transitions: sdy.reshard and\n"
     '  sdy.sharding_constraint may drop unreduced axes (the "blessed" ops); a dot or any other op may\n'
     "  introduce only 'sum' unreduced axes, a reduce only the kind its body computes; a stablehlo\n"
     "  all_reduce / reduce_scatter may reduce only axes of its body's kind; no op may change the\n"
     "  reduction operator of an axis that stays unreduced; a func.call's operands and results and a\n"
     "  return's values must carry exactly the unreduced axes of the callee's arguments and results; an\n"
     "  sdy.all_reduce / sdy.reduce_scatter needs a sharded operand. Messages are Shardy's.\n"
     '\n'
     'When it happens\n'
     '  A value with unreduced axes used by an ordinary op whose result sharding lost them (the partial\n'
     "  sums would be read as if complete), a callee annotated without the caller's unreduced axes, a\n"
     '  max-reduction written where the computation sums. Ops whose results have no sharding yet, and\n'
     "  call boundaries whose receiving side (the callee's argument, the call's result) has none, are\n"
     '  left to propagation.\n'
     '\n'
     'How to fix (JAX)\n'
     '  Reduce explicitly before the value is used as complete (jax.lax.psum in shard_map, or\n'
     '  jax.sharding.reshard(x, P(...)) without the unreduced axes), and annotate callees with the same\n'
     '  unreduced axes as their callers.\n'),
    ('sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}) -> tensor<8x8xf32> {\n'
     '  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>\n'
     '  return %0 : tensor<8x8xf32>\n'
     '}\n'),
    ('sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}) -> tensor<8x8xf32> {\n'
     '  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>\n'
     '  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>\n'
     '  return %1 : tensor<8x8xf32>\n'
     '}\n'),
    None)
prose('SC0222', 'sharding-group', 'sharding', 'The values of one sdy.sharding_group cross a manual computation or differ in shape',
    ('What it means\n'
     '  sdy.sharding_group (what jax.shard_alike lowers to) asks Shardy to give every value of a group\n'
     "  the same sharding. Shardy's import refuses a group whose values lie on both sides of a manual\n"
     '  computation boundary (or in two different manual computations), where one sharding cannot mean\n'
     '  the same thing, and a group whose values have different shapes: "ShardingGroupOps values cannot\n'
     '  cross ManualComputationOp boundaries for groupId: N", "ShardingGroupOps values must have the same\n'
     '  shape for groupId: N".\n'
     '\n'
     'When it happens\n'
     '  jax.shard_alike applied to a value inside a shard_map and one outside it, or to arrays of\n'
     '  different shapes.\n'
     '\n'
     'How to fix (JAX)\n'
     '  Call shard_alike on values of the same shape on one side of the shard_map: inside it, or on its\n'
     '  inputs/outputs outside it.\n'),
    ('sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n'
     '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={} (%arg1: tensor<8x8xf32>) {\n'
     '    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>\n'
     '    sdy.sharding_group %1 group_id = 7 : tensor<8x8xf32>\n'
     '    sdy.return %1 : tensor<8x8xf32>\n'
     '  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n'
     '  sdy.sharding_group %0 group_id = 7 : tensor<8x8xf32>\n'
     '  %2 = stablehlo.constant dense<0.0> : tensor<8x8x1xf32>\n'
     '  sdy.sharding_group %0 group_id = 23 : tensor<8x8xf32>\n'
     '  sdy.sharding_group %2 group_id = 23 : tensor<8x8x1xf32>\n'
     '  return %0 : tensor<8x8xf32>\n'
     '}\n'),
    ('sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n'
     '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={} (%arg1: tensor<8x8xf32>) {\n'
     '    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>\n'
     '    sdy.sharding_group %1 group_id = 8 : tensor<8x8xf32>\n'
     '    sdy.return %1 : tensor<8x8xf32>\n'
     '  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n'
     '  sdy.sharding_group %0 group_id = 7 : tensor<8x8xf32>\n'
     '  sdy.sharding_group %arg0 group_id = 7 : tensor<8x8xf32>\n'
     '  return %0 : tensor<8x8xf32>\n'
     '}\n'),
    None)
prose('SC0513', 'manual-partition-id', 'manual', 'partition_id is used in a partially manual region',
    ('What it means\n'
     "  partition_id returns the device's partition number. Inside a region that leaves some mesh axes\n"
     '  automatic, the partitioner cannot tell whether the instruction or its data is replicated over the\n'
     '  automatic axes: "PartitionId instruction is not supported for SPMD partitioning since the meaning\n'
     '  is ambiguous -- whether the instruction is replicated or the data is replicated, and if the latter\n'
     '  which data is replicated."\n'
     '\n'
     'When it happens\n'
     '  jax.lax.axis_index or a custom lowering that emits partition_id inside a shard_map whose\n'
     '  axis_names do not cover every mesh axis (of size > 1).\n'
     '\n'
     'How to fix (JAX)\n'
     '  Make the shard_map fully manual (axis_names=set(mesh.axis_names)) where the partition number is\n'
     '  needed, or compute the index from jax.lax.axis_index over the manual axes only.\n'),
    ('sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {\n'
     '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {\n'
     '    %p = stablehlo.partition_id : tensor<ui32>\n'
     '    sdy.return %arg1 : tensor<4x8xf32>\n'
     '  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n'
     '  return %0 : tensor<8x8xf32>\n'
     '}\n'),
    ('sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {\n'
     '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<4x4xf32>) {\n'
     '    %p = stablehlo.partition_id : tensor<ui32>\n'
     '    sdy.return %arg1 : tensor<4x4xf32>\n'
     '  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n'
     '  return %0 : tensor<8x8xf32>\n'
     '}\n'),
    None)
prose('SC0514', 'manual-axes-without-shardings', 'manual', 'A manual computation names manual axes but has no in/out shardings',
    ('What it means\n'
     "  A manual computation's manual axes are axes of the mesh its in/out shardings are bound to. One\n"
     "  with manual_axes but no in_shardings and no out_shardings has no mesh to take them from; Shardy's\n"
     '  import refuses it when its body does anything: "op has manual_axes when there are no in/out\n'
     "  shardings and the body is not empty. This isn't allowed at this stage, please contact the Shardy\n"
     '  team or file a bug." (A body that only returns is dropped.)\n'
     '\n'
     'When it happens\n'
     '  A shard_map that takes no arguments and returns nothing (e.g. only for a side effect) lowered\n'
     "  with axis_names, or a transformation that removed the computation's operands and results.\n"
     '\n'
     'How to fix (JAX)\n'
     '  Pass the values the body works on through the shard_map (in_specs/out_specs over its manual\n'
     '  axes), or call the side-effecting code outside the shard_map.\n'),
    ('sdy.mesh @mesh = <["a"=2]>\n'
     'func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n'
     '  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={"a"} () {\n'
     '    %0 = stablehlo.constant dense<1.0> : tensor<4xf32>\n'
     '    sdy.return\n'
     '  } : () -> ()\n'
     '  return %arg0 : tensor<8xf32>\n'
     '}\n'),
    ('sdy.mesh @mesh = <["a"=2]>\n'
     'func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n'
     '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} (%arg1: tensor<4xf32>) {\n'
     '    sdy.return %arg1 : tensor<4xf32>\n'
     '  } : (tensor<8xf32>) -> tensor<8xf32>\n'
     '  return %0 : tensor<8xf32>\n'
     '}\n'),
    None)
prose('SC0607', 'collective-partial-manual-global-ids', 'collective', 'A cross-partition all-reduce in a partially manual region does not use global device ids',
    ('What it means\n'
     '  Inside a partially manual region (a shard_map or sdy.manual_computation that leaves some mesh\n'
     "  axes automatic, or a GSPMD sharding with last_tile_dims={manual, ...}) XLA's SPMD partitioner\n"
     '  regroups devices by manual subgroup; a cross-partition all-reduce (one with a channel) must then\n'
     '  name its groups by global device ids: "Cross-partition allreduce in partial manual partitioning\n'
     '  mode must use global device IDs."\n'
     '\n'
     'When it happens\n'
     '  A collective written by hand, or produced by a transformation that dropped\n'
     '  use_global_device_ids, inside a partially manual region.\n'
     '\n'
     'How to fix (JAX)\n'
     "  Use jax.lax.psum / all_gather over the shard_map's manual axes (JAX lowers them with global\n"
     '  device ids), or set use_global_device_ids with replica groups of global device ids that stay\n'
     '  within one manual subgroup.\n'),
    ('sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {\n'
     '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {\n'
     '    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>}> ({\n'
     '    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
     '      %2 = stablehlo.add %a, %b : tensor<f32>\n'
     '      stablehlo.return %2 : tensor<f32>\n'
     '    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>\n'
     '    sdy.return %1 : tensor<4x8xf32>\n'
     '  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n'
     '  return %0 : tensor<8x8xf32>\n'
     '}\n'),
    ('sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
     'func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {\n'
     '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {\n'
     '    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({\n'
     '    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
     '      %2 = stablehlo.add %a, %b : tensor<f32>\n'
     '      stablehlo.return %2 : tensor<f32>\n'
     '    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>\n'
     '    sdy.return %1 : tensor<4x8xf32>\n'
     '  } : (tensor<8x8xf32>) -> tensor<8x8xf32>\n'
     '  return %0 : tensor<8x8xf32>\n'
     '}\n'),
    None)

# ---------------------------------------------------------------- kernel, callback, syntax, export
# Written as prose (their explanations do not follow the meaning/when/fix mould) with their examples.

prose('SC0001', 'syntax', 'syntax', 'The module does not parse',
    ('What it means\n'
     "  shardcheck could not read the module's structure: a bracket is not closed, a string is not\n"
     '  terminated, a line holds something that is not an operation, or the bytes are not text.\n'
     '  Nothing else is checked in a module (or a `// -----` chunk) that does not parse.\n'
     '\n'
     'When it happens\n'
     '  A module truncated in transit or by a size limit; hand edits; a binary (bytecode) module\n'
     '  passed where text is expected; the wrong --input-format.\n'
     '\n'
     'How to fix\n'
     '  Serialize the module as text: `jax.jit(f).lower(*args).as_text()` for StableHLO, or\n'
     '  `.compile().as_text()` / XLA_FLAGS=--xla_dump_to for HLO. The diagnostic points at the first\n'
     '  byte that does not fit, and names the bracket that is still open.\n'),
    ('module {\n'
     '  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n'
     '    return %arg0 : tensor<4xf32>\n'),
    ('module {\n'
     '  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n'
     '    return %arg0 : tensor<4xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0002', 'input-limit', 'syntax', 'The module exceeds a configured limit',
    ('What it means\n'
     "  The module is larger, deeper or has more operations than this shardcheck (or the daemon's\n"
     '  configuration) accepts, so it was not checked.\n'
     '\n'
     'When it happens\n'
     '  Regions or brackets nested deeper than the nesting limit (default 256), more operations\n'
     '  than the op limit (default 5,000,000), or a request larger than the memory limit.\n'
     '\n'
     'How to fix\n'
     '  Check the module in-process with `shardcheck check` (limits can be raised with\n'
     "  --max-depth / --max-ops), or raise the daemon's limits in config/shardcheckd.json.\n"),
    None,
    None,
    None)
prose('SC0003', 'producer-version', 'syntax', 'An artifact from a newer StableHLO was read',
    ('What it means\n'
     '  The StableHLO portable artifact (MLIR bytecode from jax.export) names a producer newer than the\n'
     "  StableHLO this shardcheck knows. VHLO keeps compatibility at the producer: StableHLO's own reader\n"
     '  does not compare producer versions; it fails only on an op, attribute or type it does not know.\n'
     '  shardcheck does the same: every op, attribute and type in this artifact is one it knows, so the\n'
     '  module was read and checked in full. This note only records the version difference.\n'
     '\n'
     'When it happens\n'
     '  A jaxlib newer than this shardcheck serialized the module (jax.export, Exported.serialize()).\n'
     '\n'
     'How to fix\n'
     '  Nothing is needed. If the artifact used an op, attribute or type that StableHLO added after the\n'
     '  version shardcheck knows, reading would fail with a syntax diagnostic (SC0001) naming it; then\n'
     "  update shardcheck, or export with an older target (jax.export's serialization version).\n"),
    None,
    None,
    None)
prose('SC0004', "propagation-limit", "syntax", "Sharding propagation stopped at the request's limits",
    ('What it means\n'
     "  Before the rules run, shardcheck propagates the module's shardings the way Shardy does at compile\n"
     '  time, so that rules about kernels, callbacks and manual computations see the shardings XLA will\n'
     '  really use. Propagation may spend at most half of the memory and work the request still has\n'
     "  (the daemon's per-request memory budget). This module needed more, so the rules\n"
     '  read only the shardings written in it: a problem that appears only after propagation may be missed.\n'
     '\n'
     'When it happens\n'
     '  Very large modules checked under a tight memory budget.\n'
     '\n'
     'How to fix\n'
     "  Raise the limit (the daemon's request memory budget in config/shardcheckd.json), or check the\n"
     '  module locally with the CLI, which has no limit by default. --no-propagate skips propagation and\n'
     '  this note.\n'),
    None,
    None,
    None)
prose('SC0301', 'kernel-outside-manual', 'kernel', 'Mosaic (Pallas TPU) kernel outside a fully manual shard_map',
    ('What it means\n'
     '  A Pallas TPU kernel is lowered to an opaque `stablehlo.custom_call @tpu_custom_call` whose body\n'
     '  (Mosaic bytecode) works on the exact per-device blocks it is given. XLA cannot split such a call\n'
     '  across devices. On a mesh with more than one device the call must therefore sit in a shard_map\n'
     '  that is manual over every mesh axis (of size > 1): then each device runs the kernel on its own\n'
     '  block. JAX refuses to lower it anywhere else, with\n'
     '    NotImplementedError: Mosaic kernels cannot be automatically partitioned. Please wrap the call\n'
     '    in a shard_map.\n'
     '  This is a partitioning-context problem, not a device or TPU-generation problem: the same kernel\n'
     '  runs on a single chip and on any slice once it is inside a fully manual shard_map.\n'
     '\n'
     'When it happens\n'
     '  - jax.jit of a function that calls a Pallas TPU kernel (splash/flash attention, a custom matmul)\n'
     '    on a multi-chip slice with sharded inputs, without a shard_map around the kernel.\n'
     "  - A shard_map that is manual over some axes only (axis_names={'data'} on a ('data', 'model')\n"
     '    mesh, or the old auto=...): the kernel then sits in a partially manual region.\n'
     '  - Most often: a module lowered and tested on one device (mhlo.num_partitions = 1) and deployed\n'
     '    on a multi-chip mesh. shardcheck --mesh data=4 finds it before the job is scheduled.\n'
     '  Size-1 mesh axes count as manual (JAX drops manual computations over them).\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  mesh = jax.make_mesh((4, 2), ('data', 'model'))\n"
     "  @partial(jax.shard_map, mesh=mesh, in_specs=P('data'), out_specs=P('data'),\n"
     "           axis_names={'data'})            # 'model' stays automatic\n"
     '  def step(x):\n'
     '    return add_one_kernel(x)               # pl.pallas_call(...) for TPU\n'
     '\n'
     'Fixed example\n'
     "  @partial(jax.shard_map, mesh=mesh, in_specs=P('data'), out_specs=P('data'),\n"
     "           axis_names={'data', 'model'})   # every mesh axis manual\n"
     '  def step(x):\n'
     '    return add_one_kernel(x)\n'
     '\n'
     'How to fix\n'
     '  1. Wrap the kernel call in jax.shard_map over all mesh axes, with in_specs/out_specs that give\n'
     "     each device the block the kernel should process (shardcheck's fix names this module's axes\n"
     "     and turns the operands' shardings into PartitionSpecs).\n"
     '  2. In a partially manual shard_map, pass axis_names= with every mesh axis, or nest a second\n'
     '     shard_map over the remaining axes around the kernel alone.\n'
     "  3. Or run the kernel unsharded: deploy on one device, or fall back to the kernel's reference\n"
     '     (non-Pallas) implementation on multi-device meshes.\n'
     '  The machine fix wraps the call in an sdy.manual_computation with replicated operands, which is\n'
     '  what jax.shard_map(kernel, in_specs=P(), out_specs=P()) lowers to: every device runs the kernel\n'
     '  on the full arrays, exactly as on one device.\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4, "model"=2]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", ?}, {?}]>] out_shardings=[<@mesh, [{"data", ?}, {?}]>] manual_axes={"data"} (%arg1: tensor<16x128xf32> loc("shard_map:"(#loc1))) {\n'
     '      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "add_one_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>\n'
     '      sdy.return %1 : tensor<16x128xf32>\n'
     '    } : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %0 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'
     '#loc1 = loc("model.py":88:12)\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4, "model"=2]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data", "model"} (%arg1: tensor<16x128xf32> loc("shard_map:"(#loc1))) {\n'
     '      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "add_one_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>\n'
     '      sdy.return %1 : tensor<16x128xf32>\n'
     '    } : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %0 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'
     '#loc1 = loc("model.py":88:12)\n'),
    None)
prose('SC0302', 'kernel-explicit-sharding', 'kernel', 'Kernel operand or result sharded over an explicit mesh axis',
    ('What it means\n'
     '  pallas_call operates on per-device (manual) values. With explicit sharding (mesh axes of type\n'
     "  Explicit, jax.sharding.AxisType.Explicit) an array's type carries its sharding, and pallas_call's\n"
     '  abstract evaluation refuses any operand or result whose PartitionSpec names a mesh axis:\n'
     '    ValueError: pallas_call requires all mesh axes to be Manual, got (Explicit,)\n'
     '  In the module such values are kernel operands (or results) constrained by sdy.sharding_constraint /\n'
     '  @Sharding or function-argument shardings over axes that are not manual at the call. It applies\n'
     '  to every kernel: Mosaic TPU (tpu_custom_call), Triton (__gpu$xla.gpu.triton) and Mosaic GPU\n'
     '  (mosaic_gpu_v2). Whether an axis is explicit comes from the target mesh (--mesh data=4:explicit);\n'
     '  Shardy meshes in modules carry no axis types.\n'
     '\n'
     'When it happens\n'
     '  - Calling a Pallas kernel inside jax.jit under jax.set_mesh(mesh) with Explicit axes on arrays\n'
     '    sharded with NamedSharding / jax.reshard, without a shard_map around the kernel.\n'
     '  - Passing out_shape / out_sharding with a PartitionSpec to pallas_call.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  mesh = jax.make_mesh((4,), ('data',), axis_types=(AxisType.Explicit,))\n"
     '  with jax.set_mesh(mesh):\n'
     "    x = jax.device_put(x, P('data', None))\n"
     '    y = jax.jit(add_one)(x)                # pallas_call on an Explicit-sharded array\n'
     '\n'
     'Fixed example\n'
     '  with jax.set_mesh(mesh):\n'
     "    y = jax.jit(jax.shard_map(add_one, in_specs=P('data', None), out_specs=P('data', None)))(x)\n"
     '\n'
     'How to fix\n'
     '  1. Wrap the kernel in jax.shard_map over all mesh axes; the explicit PartitionSpecs of its\n'
     '     operands become its in_specs.\n'
     '  2. Or drop the explicit sharding from the arrays passed to and returned from pallas_call.\n'
     '  When the kernel is a Mosaic TPU kernel this error comes first; once fixed, SC0301 would apply\n'
     '  if the call were still outside a fully manual region.\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {\n'
     '    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"data"}, {}]> : tensor<64x128xf32>\n'
     '    %1 = stablehlo.custom_call @__gpu$xla.gpu.triton(%0) {mhlo.backend_config = {debug = false, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\\EFR\\0DMLIRgooglex-trunk\\00", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %1 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {\n'
     '    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"data"}, {}]> : tensor<64x128xf32>\n'
     '    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<16x128xf32>) {\n'
     '      %2 = stablehlo.custom_call @__gpu$xla.gpu.triton(%arg1) {mhlo.backend_config = {debug = false, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\\EFR\\0DMLIRgooglex-trunk\\00", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>\n'
     '      sdy.return %2 : tensor<16x128xf32>\n'
     '    } : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %1 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'),
    'data=4:explicit')
prose('SC0303', 'kernel-gpu-auto-partitioned', 'kernel', 'GPU kernel outside a fully manual shard_map (XLA replicates it)',
    ('What it means\n'
     '  Triton (`__gpu$xla.gpu.triton`, `triton_kernel_call*`) and Mosaic GPU (`mosaic_gpu_v2`) kernels are\n'
     '  opaque custom calls, like Mosaic TPU kernels, but JAX does not refuse to lower them outside a\n'
     '  shard_map. XLA cannot partition them, so it gives them a replicated sharding: operands sharded\n'
     '  over automatic axes are all-gathered first, and every device runs the kernel on the full arrays.\n'
     '  The program is still correct, but it does N times the work and moves the whole array to every\n'
     '  device - often an out-of-memory or a silent slowdown on large meshes. This is a warning.\n'
     '\n'
     'When it happens\n'
     '  - A Pallas GPU kernel called under jax.jit on a multi-GPU mesh without shard_map.\n'
     '  - A kernel in a shard_map that leaves some axes automatic (axis_names smaller than the mesh).\n'
     '  - A module lowered for one GPU deployed on several (shardcheck --mesh data=4).\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  x = jax.device_put(x, NamedSharding(mesh, P('data', None)))\n"
     '  y = jax.jit(add_one)(x)                  # Triton kernel, x all-gathered on every GPU\n'
     '\n'
     'Fixed example\n'
     "  y = jax.jit(jax.shard_map(add_one, mesh=mesh, in_specs=P('data', None),\n"
     "                            out_specs=P('data', None)))(x)\n"
     '\n'
     'How to fix\n'
     '  Wrap the kernel in jax.shard_map over every mesh axis with specs that give each device its block\n'
     "  (shardcheck's fix derives them from the operands' shardings). If the kernel really needs the\n"
     '  whole array, make that explicit with in_specs=P() so the gather is visible in the program.\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {\n'
     '    %0 = stablehlo.custom_call @__gpu$xla.gpu.triton(%arg0) {mhlo.backend_config = {debug = false, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\\EFR\\0DMLIRgooglex-trunk\\00", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %0 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4, "model"=2]>\n'
     '  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}]>] out_shardings=[<@mesh, [{"data"}]>] manual_axes={"data", "model"} (%arg1: tensor<64xf32>) {\n'
     '      %1 = stablehlo.custom_call @mosaic_gpu_v2(%arg1) {mhlo.backend_config = {kernel_hash = "\\A4,O\\92\\88\\FB;\\FC", module = "ML\\EFR\\01MLIRgooglex-trunk\\00", use_custom_barrier = false, uses_xla_collective_metadata = false}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<64xf32>) -> tensor<64xf32>\n'
     '      sdy.return %1 : tensor<64xf32>\n'
     '    } : (tensor<256xf32>) -> tensor<256xf32>\n'
     '    return %0 : tensor<256xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0304', 'kernel-mesh-axis-unknown', 'kernel', 'Mosaic kernel communicates over a mesh axis the mesh does not have',
    ('What it means\n'
     '  Pallas TPU kernels that communicate (remote DMA, semaphores, device ids computed from named axes)\n'
     "  record the mesh axes they use in the call's `mhlo.frontend_attributes = {kernel_metadata =\n"
     '  "{\\"mesh_axes\\": ...}"}`. The device ids inside the kernel were computed for those axes. If the\n'
     '  mesh the module is checked (deployed) against has no such axis, the kernel addresses devices of a\n'
     '  mesh that does not exist: wrong peers, hangs or out-of-range DMAs at run time.\n'
     '\n'
     'When it happens\n'
     "  - A module lowered with a mesh ('x', ...) deployed on a mesh with other axis names.\n"
     '  - Hand-edited or renamed meshes; kernels shared between models with different mesh layouts.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  mesh = jax.make_mesh((4,), ('data',))\n"
     "  # kernel written with pltpu.make_async_remote_copy(..., device_id=(lax.axis_index('x') + 1,),\n"
     "  # device_id_type=pltpu.DeviceIdType.MESH) but run on a mesh without axis 'x'\n"
     '\n'
     'Fixed example\n'
     "  # the kernel indexes the axis the mesh has: lax.axis_index('data')\n"
     '\n'
     'How to fix\n'
     "  Deploy the module on the mesh it was lowered for, or re-lower the kernel with the target mesh's\n"
     '  axis names.\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<16x128xf32> loc("shard_map:"(#loc1))) {\n'
     '      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22has_communication\\22: true, \\22collective_id\\22: 0, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "ring_kernel", mhlo.frontend_attributes = {kernel_metadata = "{\\22mesh_axes\\22:\\22[\\\\22x\\\\22]\\22}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>\n'
     '      sdy.return %1 : tensor<16x128xf32>\n'
     '    } : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %0 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'
     '#loc1 = loc("model.py":88:12)\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<16x128xf32> loc("shard_map:"(#loc1))) {\n'
     '      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22has_communication\\22: true, \\22collective_id\\22: 0, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "ring_kernel", mhlo.frontend_attributes = {kernel_metadata = "{\\22mesh_axes\\22:\\22[\\\\22data\\\\22]\\22}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>\n'
     '      sdy.return %1 : tensor<16x128xf32>\n'
     '    } : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %0 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'
     '#loc1 = loc("model.py":88:12)\n'),
    None)
prose('SC0305', 'kernel-communication-replicas', 'kernel', 'Communicating Mosaic kernel in a replicated (pmap-style) module',
    ('What it means\n'
     '  A Mosaic kernel whose backend config says "has_communication": true talks to other devices\n'
     '  through device ids that only make sense in an SPMD (partitioned) program. In a module replicated\n'
     "  over replicas (mhlo.num_replicas > 1, as pmap lowers) there is no mesh to address, and JAX's\n"
     '  lowering refuses:\n'
     '    NotImplementedError: Replica lowering for Mosaic kernels not implemented.\n'
     '\n'
     'When it happens\n'
     '  - A communicating Pallas kernel (remote DMA, collective_id) called under jax.pmap.\n'
     '  - Modules produced by other frameworks that replicate instead of partition.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  jax.pmap(ring_kernel, axis_name='x')(x)\n"
     '\n'
     'Fixed example\n'
     "  mesh = jax.make_mesh((2,), ('x',))\n"
     "  jax.jit(jax.shard_map(ring_kernel, mesh=mesh, in_specs=P('x'), out_specs=P('x')))(x)\n"
     '\n'
     'How to fix\n'
     '  Replace pmap by jax.shard_map over a mesh, so the kernel is lowered in an SPMD context and its\n'
     '  device ids refer to mesh positions.\n'),
    ('module @pmap_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {\n'
     '  func.func public @main(%arg0: tensor<16x128xf32> loc("x")) -> (tensor<16x128xf32> {jax.result_info = "result"}) {\n'
     '    %0 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22has_communication\\22: true, \\22collective_id\\22: 0, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "ring_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>\n'
     '    return %0 : tensor<16x128xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["x"=2]>\n'
     '  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<32x128xf32> loc("shard_map:"(#loc1))) {\n'
     '      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22has_communication\\22: true, \\22collective_id\\22: 0, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "ring_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<32x128xf32>) -> tensor<32x128xf32>\n'
     '      sdy.return %1 : tensor<32x128xf32>\n'
     '    } : (tensor<64x128xf32>) -> tensor<64x128xf32>\n'
     '    return %0 : tensor<64x128xf32>\n'
     '  }\n'
     '}\n'
     '#loc1 = loc("model.py":88:12)\n'),
    None)
prose('SC0306', 'kernel-wrong-platform', 'kernel', 'Kernel for the wrong platform (TPU kernel on GPU, GPU kernel on TPU)',
    ('What it means\n'
     '  Pallas kernels are compiled for one platform when the module is lowered: `tpu_custom_call` holds\n'
     '  Mosaic TPU bytecode, `__gpu$xla.gpu.triton` / `mosaic_gpu_v2` hold GPU code. A module checked for\n'
     '  another platform cannot run them. JAX raises the same conflict while lowering:\n'
     '    ValueError: Compiler params for platform tpu cannot be used for gpu lowering.\n'
     '\n'
     'When it happens\n'
     '  - A module lowered for TPU deployed on GPUs (or the other way round), e.g. an exported artifact\n'
     '    reused on a different cluster.\n'
     '  - Lowering with the wrong compiler_params (pltpu.CompilerParams on a GPU backend).\n'
     '\n'
     'Erroneous example (JAX)\n'
     '  pl.pallas_call(kernel, out_shape=..., compiler_params=pltpu.CompilerParams())   # run on GPU\n'
     '\n'
     'Fixed example\n'
     '  pl.pallas_call(kernel, out_shape=..., compiler_params=pltriton.CompilerParams())\n'
     '\n'
     'How to fix\n'
     '  Lower the module for the platform it runs on (jax.jit(f).trace(...).lower(lowering_platforms=\n'
     "  ('cuda',))) with that platform's compiler_params, or deploy it where it was lowered for.\n"),
    ('module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  func.func public @main(%arg0: tensor<128x128xf32> loc("x")) -> (tensor<128x128xf32> {jax.result_info = "result"}) {\n'
     '    %0 = call @matmul(%arg0, %arg0) : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>\n'
     '    return %0 : tensor<128x128xf32>\n'
     '  }\n'
     '  func.func private @matmul(%arg0: tensor<128x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<128x128xf32> {\n'
     '    %0 = stablehlo.custom_call @tpu_custom_call(%arg0, %arg1) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "matmul_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>\n'
     '    return %0 : tensor<128x128xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  func.func public @main(%arg0: tensor<8xf32> {mhlo.layout_mode = "default"} loc("x")) -> (tensor<8xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {\n'
     '    %0 = stablehlo.custom_call @__gpu$xla.gpu.triton(%arg0) {mhlo.backend_config = {debug = false, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\\EFR\\0DMLIRgooglex-trunk\\00", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<8xf32>) -> tensor<8xf32>\n'
     '    return %0 : tensor<8xf32>\n'
     '  }\n'
     '}\n'),
    'x=1;platform=gpu')
prose('SC0307', 'kernel-cpu-platform', 'kernel', 'Compiled Pallas kernel in a module checked for CPU',
    ('What it means\n'
     '  CPU has no Mosaic or Triton backend: a Pallas kernel runs there only in interpret mode, where\n'
     '  pallas_call lowers to ordinary StableHLO and no kernel custom call is left. A module with a\n'
     '  compiled kernel call (`tpu_custom_call`, `__gpu$xla.gpu.triton`, `mosaic_gpu_v2`) cannot run on\n'
     '  CPU. JAX says, while lowering:\n'
     '    Only interpret mode is supported on CPU backend.\n'
     '\n'
     'When it happens\n'
     '  - Running tests on CPU with a module lowered for TPU/GPU.\n'
     '  - Exported accelerator artifacts loaded on CPU hosts.\n'
     '\n'
     'Erroneous example (JAX)\n'
     '  pl.pallas_call(kernel, out_shape=...)(x)             # on a CPU backend\n'
     '\n'
     'Fixed example\n'
     '  pl.pallas_call(kernel, out_shape=..., interpret=True)(x)\n'
     '\n'
     'How to fix\n'
     '  Lower with interpret=True for CPU, or check/deploy the module on the accelerator it was lowered\n'
     '  for.\n'),
    ('module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  func.func public @main(%arg0: tensor<128x128xf32> loc("x")) -> (tensor<128x128xf32> {jax.result_info = "result"}) {\n'
     '    %0 = call @matmul(%arg0, %arg0) : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>\n'
     '    return %0 : tensor<128x128xf32>\n'
     '  }\n'
     '  func.func private @matmul(%arg0: tensor<128x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<128x128xf32> {\n'
     '    %0 = stablehlo.custom_call @tpu_custom_call(%arg0, %arg1) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\\22, \\22serialization_format\\22: 1, \\22needs_layout_passes\\22: true}}", kernel_name = "matmul_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>\n'
     '    return %0 : tensor<128x128xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  func.func public @main(%arg0: tensor<8xf32> loc("x")) -> (tensor<8xf32> {jax.result_info = ""}) {\n'
     '    %cst = stablehlo.constant dense<1.000000e+00> : tensor<8xf32>\n'
     '    %0 = stablehlo.add %arg0, %cst : tensor<8xf32>\n'
     '    return %0 : tensor<8xf32>\n'
     '  }\n'
     '}\n'),
    'x=1;platform=cpu')
prose('SC0308', 'kernel-mosaic-gpu-multi-device', 'kernel', 'Communicating Mosaic GPU kernel outside a shard_map on several devices',
    ('What it means\n'
     '  A Mosaic GPU kernel that communicates with other GPUs (custom barrier, XLA collective metadata,\n'
     '  NVSHMEM replica ids in its backend config) needs the per-device view of a shard_map. At the top\n'
     '  level of a multi-device jit JAX refuses to lower it:\n'
     '    Mosaic GPU only supports single-device meshes in ShardingContext. Got: 2 devices.\n'
     '\n'
     'When it happens\n'
     '  - A collective Mosaic GPU kernel (all-gather/reduce-scatter matmul) called under jax.jit on\n'
     '    several GPUs without shard_map, or a 1-GPU module deployed on several.\n'
     '\n'
     'Erroneous example (JAX)\n'
     '  y = jax.jit(collective_kernel)(x)        # 2 GPUs\n'
     '\n'
     'Fixed example\n'
     "  y = jax.jit(jax.shard_map(collective_kernel, mesh=mesh, in_specs=P('x'), out_specs=P('x')))(x)\n"
     '\n'
     'How to fix\n'
     '  Wrap the kernel in jax.shard_map over every mesh axis.\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["x"=2]>\n'
     '  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {\n'
     '    %0 = stablehlo.custom_call @mosaic_gpu_v2(%arg0) {mhlo.backend_config = {kernel_hash = "\\A4,O\\92\\88\\FB;\\FC", module = "ML\\EFR\\01MLIRgooglex-trunk\\00", use_custom_barrier = false, uses_xla_collective_metadata = true}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<256xf32>) -> tensor<256xf32>\n'
     '    return %0 : tensor<256xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["x"=2]>\n'
     '  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<128xf32>) {\n'
     '      %1 = stablehlo.custom_call @mosaic_gpu_v2(%arg1) {mhlo.backend_config = {kernel_hash = "\\A4,O\\92\\88\\FB;\\FC", module = "ML\\EFR\\01MLIRgooglex-trunk\\00", use_custom_barrier = false, uses_xla_collective_metadata = true}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<128xf32>) -> tensor<128xf32>\n'
     '      sdy.return %1 : tensor<128xf32>\n'
     '    } : (tensor<256xf32>) -> tensor<256xf32>\n'
     '    return %0 : tensor<256xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0309', 'kernel-mosaic-gpu-device-order', 'kernel', 'Communicating Mosaic GPU kernel on a mesh with a non row-major device order',
    ('What it means\n'
     '  Communicating Mosaic GPU kernels address peers by device id assuming the mesh lists devices in\n'
     '  row-major order (iota). A mesh with an explicit, permuted `device_ids=[...]` breaks that\n'
     '  assumption and JAX refuses to lower:\n'
     '    Mosaic GPU only supports meshes with device ordering that follows row-major device ids.\n'
     '    Got: [3 2 1 0] device ids.\n'
     '\n'
     'When it happens\n'
     '  - Meshes built with mesh_utils.create_device_mesh / a custom device list on multi-node GPU\n'
     '    systems, then used for a collective Mosaic GPU kernel in shard_map.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  mesh = Mesh(np.array(jax.devices())[::-1], ('x',))\n"
     '\n'
     'Fixed example\n'
     "  mesh = jax.make_mesh((4,), ('x',))      # devices 0..3 in order\n"
     '\n'
     'How to fix\n'
     "  Build the mesh with devices in row-major order. The machine fix drops the module mesh's explicit\n"
     '  device order.\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["x"=4], device_ids=[3, 2, 1, 0]>\n'
     '  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<64xf32>) {\n'
     '      %1 = stablehlo.custom_call @mosaic_gpu_v2(%arg1) {mhlo.backend_config = {kernel_hash = "\\A4,O\\92\\88\\FB;\\FC", module = "ML\\EFR\\01MLIRgooglex-trunk\\00", use_custom_barrier = false, uses_xla_collective_metadata = true}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<64xf32>) -> tensor<64xf32>\n'
     '      sdy.return %1 : tensor<64xf32>\n'
     '    } : (tensor<256xf32>) -> tensor<256xf32>\n'
     '    return %0 : tensor<256xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["x"=4]>\n'
     '  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<64xf32>) {\n'
     '      %1 = stablehlo.custom_call @mosaic_gpu_v2(%arg1) {mhlo.backend_config = {kernel_hash = "\\A4,O\\92\\88\\FB;\\FC", module = "ML\\EFR\\01MLIRgooglex-trunk\\00", use_custom_barrier = false, uses_xla_collective_metadata = true}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<64xf32>) -> tensor<64xf32>\n'
     '      sdy.return %1 : tensor<64xf32>\n'
     '    } : (tensor<256xf32>) -> tensor<256xf32>\n'
     '    return %0 : tensor<256xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0401', 'callback-sharding-in-manual', 'callback', 'Host callback with an explicit sharding inside a fully manual shard_map',
    ('What it means\n'
     '  Inside a shard_map that is manual over every mesh axis the program has per-device semantics: a\n'
     "  callback runs once on each device, on that device's block. Its placement is already decided, so\n"
     '  an explicit `sharding=` is contradictory and JAX refuses it:\n'
     '    NotImplementedError: callbacks do not support specifying sharding inside spmd computations\n'
     '  In the module the callback (`xla_ffi_python_{cpu,gpu}_callback`, legacy `xla_python_*_callback`,\n'
     '  `xla_buffer_python_*`, or TPU host `send`/`recv` with `is_host_transfer = true`) inside the manual\n'
     '  region carries a single-device (`<@maximal_mesh_k, []>`, `{maximal device=k}`) or named sharding\n'
     '  instead of the per-device one JAX emits (`<@empty_mesh, [...]>`, `{manual}`). Shardy modules show\n'
     '  the manual region as `sdy.manual_computation`; GSPMD modules as a `@shmap_body` function called\n'
     '  between `@SPMDFullToShardShape` and `@SPMDShardToFullShape`.\n'
     '\n'
     'When it happens\n'
     '  - jax.pure_callback / jax.experimental.io_callback with sharding=... inside shard_map, often a\n'
     '    sharding passed down from code written for the top level.\n'
     '  - Modules assembled or edited by hand, or by other producers.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  @shard_map(mesh=mesh, in_specs=P('data'), out_specs=P('data'))\n"
     '  def f(x):\n'
     '    return jax.pure_callback(fn, x, x, sharding=SingleDeviceSharding(jax.devices()[0]))\n'
     '\n'
     'Fixed example\n'
     "  @shard_map(mesh=mesh, in_specs=P('data'), out_specs=P('data'))\n"
     '  def f(x):\n'
     '    return jax.pure_callback(fn, x, x)    # no sharding= under shard_map\n'
     '\n'
     'How to fix\n'
     '  1. Drop the sharding= argument inside shard_map (manual mode owns placement).\n'
     '  2. Or move the callback out of the shard_map, where a SingleDeviceSharding is allowed.\n'
     "  The machine fix removes the callback's sdy.sharding attribute (Shardy) or makes its mhlo.sharding\n"
     '  `{manual}` (GSPMD), which is what JAX emits without sharding=.\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}]>] out_shardings=[<@mesh, [{"data"}]>] manual_axes={"data"} (%arg1: tensor<4xf32>) {\n'
     '      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<4xf32>) -> tensor<4xf32>\n'
     '      sdy.return %1 : tensor<4xf32>\n'
     '    } : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @empty_mesh = <[]>\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}]>] out_shardings=[<@mesh, [{"data"}]>] manual_axes={"data"} (%arg1: tensor<4xf32>) {\n'
     '      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, [{}]>]>} : (tensor<4xf32>) -> tensor<4xf32>\n'
     '      sdy.return %1 : tensor<4xf32>\n'
     '    } : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0402', 'callback-partial-manual', 'callback', 'Host callback in a shard_map that leaves some mesh axes automatic',
    ('What it means\n'
     '  A callback needs one of two clear semantics: at top level it runs once (on one device, on the\n'
     '  whole array); inside a fully manual shard_map it runs once per device. In a partially manual\n'
     "  shard_map (some axes manual, others automatic) the partitioner would still split the callback's\n"
     '  operands over the automatic axes after JAX fixed their shapes, so JAX refuses:\n'
     '    NotImplementedError: callbacks are only supported in spmd computations when all mesh axes are\n'
     '    partitioned manually (no partial automatic sharding).\n'
     '  (jax.debug.callback avoids it by nesting a shard_map over the automatic axes itself.)\n'
     '\n'
     'When it happens\n'
     "  - pure_callback / io_callback inside jax.shard_map(..., axis_names={'data'}) on a\n"
     "    ('data', 'model') mesh, or inside the older auto=... form.\n"
     '  - In GSPMD modules: a callback in a shard_map body whose shardings are\n'
     '    `last_tile_dims={manual, replicated}`.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  @partial(jax.shard_map, mesh=mesh, in_specs=P('data'), out_specs=P('data'), axis_names={'data'})\n"
     '  def f(x):\n'
     '    return jax.pure_callback(fn, x, x)\n'
     '\n'
     'Fixed example\n'
     "  @partial(jax.shard_map, mesh=mesh, in_specs=P('data'), out_specs=P('data'),\n"
     "           axis_names={'data', 'model'})\n"
     '  def f(x):\n'
     '    return jax.pure_callback(fn, x, x)\n'
     '\n'
     'How to fix\n'
     '  1. Make the shard_map manual over every mesh axis (axis_names=set(mesh.axis_names)).\n'
     '  2. Or use jax.debug.callback for side effects that need no result.\n'
     '  3. Or hoist the callback out of the shard_map.\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @empty_mesh = <[]>\n'
     '  sdy.mesh @mesh = <["data"=4, "model"=2]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", ?}]>] out_shardings=[<@mesh, [{"data", ?}]>] manual_axes={"data"} (%arg1: tensor<4xf32>) {\n'
     '      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, [{}]>]>} : (tensor<4xf32>) -> tensor<4xf32>\n'
     '      sdy.return %1 : tensor<4xf32>\n'
     '    } : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @empty_mesh = <[]>\n'
     '  sdy.mesh @mesh = <["data"=4, "model"=2]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}]>] out_shardings=[<@mesh, [{"data"}]>] manual_axes={"data", "model"} (%arg1: tensor<4xf32>) {\n'
     '      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, [{}]>]>} : (tensor<4xf32>) -> tensor<4xf32>\n'
     '      sdy.return %1 : tensor<4xf32>\n'
     '    } : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0403', 'callback-not-single-device', 'callback', 'Top-level host callback whose sharding spans several devices',
    ('What it means\n'
     '  Outside shard_map a host callback runs once, with the whole (global) value, on one device. JAX\n'
     '  gives it a single-device (maximal) sharding: `<@maximal_mesh_k, []>` / `{maximal device=k}`.\n'
     '  A sharding=... that spans devices (a NamedSharding over mesh axes) has no meaning for it:\n'
     '    NotImplementedError: pure_callback only supports SingleDeviceSharding, but got <class\n'
     "    'jax.sharding.NamedSharding'>\n"
     '  In the module the top-level callback carries a named, tiled or replicated multi-device sharding.\n'
     '\n'
     'When it happens\n'
     "  - pure_callback(..., sharding=NamedSharding(mesh, P('data'))) under jit.\n"
     '  - Hand-edited modules or other producers annotating callbacks like ordinary ops.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  jax.pure_callback(fn, x, x, sharding=NamedSharding(mesh, P('data')))\n"
     '\n'
     'Fixed example\n'
     '  jax.pure_callback(fn, x, x, sharding=SingleDeviceSharding(jax.devices()[0]))\n'
     '  # or no sharding=: JAX runs it on the first device of the computation\n'
     '\n'
     'How to fix\n'
     '  Pass a SingleDeviceSharding or none. For a per-shard callback, call it inside jax.shard_map over\n'
     '  every mesh axis. The machine fix pins the callback to device 0 (adding the\n'
     '  `sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>` it needs).\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}]>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0404', 'callback-device-not-in-assignment', 'callback', 'Host callback pinned to a device outside the device assignment',
    ('What it means\n'
     "  A top-level callback's maximal sharding names a device by its index in the computation's device\n"
     '  assignment (`@maximal_mesh_k` / `{maximal device=k}`; k is an index, not a global device id). If\n'
     '  k is not smaller than the number of devices the computation runs on, there is no such device.\n'
     "  JAX's message (often lost behind `tuple.index(x): x not in tuple`) is:\n"
     '    ValueError: Sharding provided to pure_callback specifies a device {device} that is not in the\n'
     '    device assignment ({device_assignment})\n'
     '\n'
     'When it happens\n'
     "  - pure_callback(..., sharding=SingleDeviceSharding(d)) with a device d outside the jit's devices\n"
     "    (a CPU device, another process's device).\n"
     '  - A module lowered for 8 devices with the callback on device 5, deployed on 4\n'
     '    (shardcheck --mesh data=4).\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  jax.pure_callback(fn, x, x, sharding=SingleDeviceSharding(jax.devices('cpu')[0]))\n"
     '\n'
     'Fixed example\n'
     '  jax.pure_callback(fn, x, x, sharding=SingleDeviceSharding(jax.devices()[0]))\n'
     '\n'
     'How to fix\n'
     "  Pick a device of the computation's own device assignment. The machine fix pins the callback to\n"
     '  device 0.\n'),
    ('module @jit_f {\n'
     '  sdy.mesh @maximal_mesh_5 = <[], device_ids=[5]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_5, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f {\n'
     '  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_3, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    'data=4')
prose('SC0405', 'callback-partitioned-tpu', 'callback', 'Partitioned host callback in a module checked for TPU',
    ('What it means\n'
     '  jax.debug.callback(..., partitioned=True) lowers to `xla_ffi_partitioned_python_{cpu,gpu}_callback`,\n'
     "  a custom call XLA's CPU/GPU partitioners run per shard. TPU callbacks use host send/recv instead\n"
     '  and have no partitioned form:\n'
     '    NotImplementedError: Partitioned callback not implemented on tpu backend.\n'
     '\n'
     'When it happens\n'
     '  - debug.callback(partitioned=True) in code lowered for TPU, or a CPU/GPU module deployed on TPU.\n'
     '\n'
     'Erroneous example (JAX)\n'
     '  jax.debug.callback(log_shard, x, partitioned=True)       # on TPU\n'
     '\n'
     'Fixed example\n'
     '  jax.debug.callback(log_shard, x)                          # runs on one device\n'
     '  # per shard: call it inside jax.shard_map over every mesh axis\n'
     '\n'
     'How to fix\n'
     '  Drop partitioned=True on TPU, or use a shard_map to get one call per shard.\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    stablehlo.custom_call @xla_ffi_partitioned_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = []} : (tensor<16xf32>) -> ()\n'
     '    return %arg0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = stablehlo.after_all : !stablehlo.token\n'
     '    %1 = "stablehlo.send"(%arg0, %0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true}> {mhlo.frontend_attributes = {_xla_host_transfer_handler_name = "pjrt_rendezvous", _xla_host_transfer_rendezvous = "host_callback_1"}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>, !stablehlo.token) -> !stablehlo.token\n'
     '    return %arg0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    'data=4;platform=tpu')
prose('SC0406', 'callback-partitioned-results', 'callback', 'Partitioned host callback that returns values',
    ('What it means\n'
     '  A partitioned callback (`xla_ffi_partitioned_python_*_callback`) runs once per shard for its side\n'
     '  effect; XLA cannot assemble per-shard results into a value. JAX refuses:\n'
     '    ValueError: Partitioned callback not supported with return values.\n'
     '\n'
     'When it happens\n'
     '  - A custom callback wrapper passing partitioned=True together with result shapes.\n'
     '  - Modules from other producers.\n'
     '\n'
     'Erroneous example (JAX)\n'
     '  emit_python_callback(..., partitioned=True, result_avals=[x.aval])\n'
     '\n'
     'Fixed example\n'
     "  jax.shard_map(lambda x: jax.pure_callback(fn, x, x), mesh=mesh, in_specs=P('data'),\n"
     "                out_specs=P('data'))(x)\n"
     '\n'
     'How to fix\n'
     '  Use jax.pure_callback inside jax.shard_map for per-shard results, or drop the results.\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_partitioned_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    stablehlo.custom_call @xla_ffi_partitioned_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = []} : (tensor<16xf32>) -> ()\n'
     '    return %arg0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0407', 'callback-ordered-multi-device', 'callback', 'Ordered host callback without a sharding on more than one device',
    ('What it means\n'
     '  Ordered effects (jax.debug.print(..., ordered=True)) thread a token through the program so their\n'
     '  callbacks run in program order. JAX emits ordered debug callbacks without a sharding, which is\n'
     '  only meaningful on one device; on several devices each would run its own copy in its own order,\n'
     '  so JAX refuses:\n'
     '    ValueError: The following ordered effects are not supported for more than 1 device:\n'
     '    [OrderedDebug]\n'
     '  (ordered io_callback is fine: it is pinned to one device with a maximal sharding.)\n'
     '\n'
     'When it happens\n'
     '  - debug.print/debug.callback with ordered=True in a jit that runs on several devices, or a\n'
     '    1-device module with one deployed on a mesh.\n'
     '\n'
     'Erroneous example (JAX)\n'
     '  jax.debug.print("step {}", i, ordered=True)               # on 4 devices\n'
     '\n'
     'Fixed example\n'
     '  jax.debug.print("step {}", i)                             # unordered\n'
     '  jax.experimental.io_callback(log, None, i, ordered=True)  # ordered and shardable\n'
     '\n'
     'How to fix\n'
     '  Use an unordered debug callback or an ordered io_callback. The machine fix pins the callback to\n'
     '  device 0, as an ordered io_callback lowers.\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: !stablehlo.token {jax.token = true}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (!stablehlo.token {jax.token = true}, tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0, %arg1) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<> : tensor<0xindex>]} : (!stablehlo.token, tensor<16xf32>) -> !stablehlo.token\n'
     '    return %0, %arg1 : !stablehlo.token, tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  sdy.mesh @mesh = <["data"=4]>\n'
     '  func.func public @main(%arg0: !stablehlo.token {jax.token = true}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (!stablehlo.token {jax.token = true}, tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0, %arg1) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<> : tensor<0xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (!stablehlo.token, tensor<16xf32>) -> !stablehlo.token\n'
     '    return %0, %arg1 : !stablehlo.token, tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0408', 'callback-wrong-platform', 'callback', 'Host callback lowered for a different platform than the module is checked for',
    ('What it means\n'
     '  A JAX host callback lowers per platform: `xla_ffi_python_cpu_callback` on CPU,\n'
     '  `xla_ffi_python_gpu_callback` on CUDA/ROCm, host send/recv on TPU. Each custom call target is\n'
     "  registered only in its platform's runtime, so a module carrying another platform's callback target\n"
     '  cannot run where it is deployed.\n'
     '\n'
     'When it happens\n'
     '  - A module lowered on a CPU host (tests, export) deployed on GPU or TPU, or the other way round.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  exp = jax.export.export(jax.jit(f), platforms=['cuda'])(x)   # then run on CPU\n"
     '\n'
     'Fixed example\n'
     "  exp = jax.export.export(jax.jit(f), platforms=['cpu'])(x)\n"
     '\n'
     'How to fix\n'
     '  Lower the module for the platform it runs on.\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_gpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  func.func public @main(%arg0: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {\n'
     '    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    'x=1;platform=cpu')
prose('SC0409', 'callback-multi-platform', 'callback', 'Host callback in a module lowered for several platforms',
    ('What it means\n'
     '  JAX lowers a host callback (jax.pure_callback, io_callback, debug.callback) for exactly one\n'
     '  platform: its custom call target (xla_ffi_python_cpu_callback, ..._gpu_callback, TPU host\n'
     "  send/recv) exists only in that platform's runtime. A module lowered for several platforms at\n"
     "  once (jax.export(..., platforms=('cpu', 'cuda'))) takes a `_platform_index` argument\n"
     '  (jax.global_constant = "_platform_index") and branches on it with stablehlo.case; a callback in\n'
     '  it is what JAX refuses with NotImplementedError("multi-platform lowering for python_callback").\n'
     '\n'
     'When it happens\n'
     '  - A module exported for several platforms by another producer or an edited artifact.\n'
     '  - Merging per-platform lowerings by hand into one multi-platform module.\n'
     '\n'
     'Erroneous example (JAX)\n'
     "  exp = jax.export.export(jax.jit(f), platforms=('cpu', 'cuda'))(x)   # f calls jax.pure_callback\n"
     '\n'
     'Fixed example\n'
     "  exp_cpu = jax.export.export(jax.jit(f), platforms=('cpu',))(x)\n"
     "  exp_gpu = jax.export.export(jax.jit(f), platforms=('cuda',))(x)\n"
     '\n'
     'How to fix\n'
     '  Export one artifact per platform, or keep the callback out of the exported function.\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {\n'
     '    %0 = "stablehlo.case"(%arg0) ({\n'
     '      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '      stablehlo.return %1 : tensor<16xf32>\n'
     '    }, {\n'
     '      %2 = stablehlo.custom_call @xla_ffi_python_gpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '      stablehlo.return %2 : tensor<16xf32>\n'
     '    }) : (tensor<i32>) -> tensor<16xf32>\n'
     '    return %0 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    ('module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
     '  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'
     '  func.func public @main(%arg1: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {\n'
     '    %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>\n'
     '    return %1 : tensor<16xf32>\n'
     '  }\n'
     '}\n'),
    None)
prose('SC0701', 'export-platform', 'export', 'A jax.export artifact is checked for a platform it was not exported for',
    ('What it means\n'
     '  An Exported artifact records the platforms it was lowered for (jax.export(f, platforms=...)); the\n'
     '  module inside contains platform-specific code (custom calls, kernels) for those only. Calling it\n'
     '  elsewhere fails: "The current platform CUDA is not among the platforms required by the module: [TPU]".\n'
     '\n'
     'When it happens\n'
     '  An artifact exported on a TPU host (the default platform there) is deployed on GPUs, or the\n'
     "  reverse; the check runs with --platform (or a mesh spec's platform=) set to the target.\n"
     '\n'
     'How to fix (JAX)\n'
     "  Export for every platform it will run on: jax.export(jax.jit(f), platforms=('tpu', 'cuda'))(...),\n"
     '  or export again on (or for) the target platform.\n'),
    None,
    None,
    None)
prose('SC0702', 'export-nr-devices', 'export', 'A jax.export artifact exported for N devices is checked for a mesh of a different size',
    ('What it means\n'
     '  An Exported artifact records nr_devices, the device count it was lowered for; its module is\n'
     '  partitioned for exactly that many. JAX refuses to call it elsewhere: "Function f was exported for 8\n'
     '  devices and is called in a context with 4 devices, which is not allowed." An artifact exported for\n'
     "  1 device is accepted on any mesh (JAX's rule), so it is not reported.\n"
     '\n'
     'When it happens\n'
     '  An artifact exported on an 8-chip host is deployed on a 4-chip slice (or the reverse); the check\n'
     '  runs when the target mesh is given (--mesh).\n'
     '\n'
     'How to fix (JAX)\n'
     "  Export again under a mesh of the target's size (mesh = jax.make_mesh((4,), ('data',)) and\n"
     '  jax.jit(f, in_shardings=NamedSharding(mesh, ...))), or run the artifact on nr_devices devices.\n'),
    None,
    None,
    None)
prose('SC0703', 'export-sharding-devices', 'export', "A sharding stored in a jax.export artifact does not fit the target mesh's devices (or cannot be read)",
    ('What it means\n'
     "  The container stores each input's and output's HloSharding (a serialized xla.OpSharding). Checked\n"
     "  against the target mesh's device count as XLA's HloSharding::Validate does, a tile assignment that\n"
     '  names a device the mesh lacks ("device 4 >= num_devices (4) in tile assignment") or does not use\n'
     '  every device ("tile_assignment should have 4 devices but has 8") cannot be compiled there. A stored\n'
     '  sharding that is not a readable OpSharding (damaged container) is reported with or without a mesh.\n'
     '\n'
     'When it happens\n'
     '  The artifact was exported for another device count (then it is folded into SC0702 as a related\n'
     '  site), or a container was edited or truncated in transit.\n'
     '\n'
     'How to fix (JAX)\n'
     "  Export again with shardings over the target mesh (jax.jit(f, in_shardings=NamedSharding(mesh, P('data'))))\n"
     '  and serialize it again with exported.serialize().\n'),
    None,
    None,
    None)

# ---------------------------------------------------------------- communication (SC09xx, lib/rules/communication.c)
COMM_MESH = 'sdy.mesh @mesh = <["data"=2, "model"=4]>\n'
def comm_negate(arg_sh, res_sh, t="tensor<1024x4096xf32>", mesh=COMM_MESH):
    return (mesh + f'func.func public @main(%arg0: {t} {{sdy.sharding = #sdy.sharding<@mesh, [{arg_sh}, {{}}]>}}) -> {t} {{\n'
            f'  %0 = stablehlo.negate %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{res_sh}, {{}}]>]>}} : {t}\n'
            f'  return %0 : {t}\n}}\n')

entry('SC0901', 'comm-full-rematerialization', 'communication',
    'A reshard all-gathers a sharded tensor to fully replicated (involuntary full rematerialization)',
    "Where the propagated shardings of an op's operands or results disagree with what the op computes, the "
    "partitioner inserts a reshard (Shardy's explicit-reshard pass) and turns it into collectives. When a "
    "tensor sharded over some mesh axes must become fully replicated, every device all-gathers it and then "
    "holds the whole tensor: XLA logs this as \"Involuntary full rematerialization\" and the step slows down "
    "(and may run out of memory). The diagnostic names the op, the axes gathered and the bytes each device "
    "receives. It covers op results and returned values; an operand gathered to replicated is how a sharded "
    "contraction runs (FSDP gathers its weights so) and is SC0902's when it is large.",
    "A sharding constraint or out_shardings that replicates an intermediate (P() or P(None, None)) while its "
    "producer computes it sharded; out_shardings=P() on a function whose result is computed sharded.",
    "Keep the value sharded where the op computes it: constrain it to the sharding it has "
    "(y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P('data', None))), the fix names the "
    "spec), or give the jitted function out_shardings with that spec instead of a replicated one. Replicate "
    "only where a consumer really needs the whole tensor.",
    comm_negate('{"data"}', '{}'),
    comm_negate('{"data"}', '{"data"}'),
    'data=2,model=4')

entry('SC0902', 'comm-implicit-collective', 'communication',
    'An inserted collective moves more bytes per device than --max-implicit-collective-bytes',
    "Every collective the partitioner inserts for the propagated shardings (all-gather, all-to-all, "
    "collective-permute, all-reduce of partial sums) has a cost: the bytes one device sends and receives, "
    "from the local shapes (docs/cost.md). Above the threshold (--max-implicit-collective-bytes, "
    "thresholds.max_implicit_collective_bytes in shardcheck.json; default 1 GiB) the collective is named "
    "with its kind, axes and bytes per device. A reshard to fully replicated is SC0901's instead.",
    "A constraint that shards a large tensor over fewer axes than its producer (an all-gather over the "
    "dropped axes), a transpose of the sharded dimension (an all-to-all), a contraction over a sharded "
    "dimension (an all-reduce of partial sums).",
    "Keep the value sharded as the op computes it (the fix names the spec: "
    "y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P(('data', 'model'), None)))), shard the "
    "contraction's other operand to match, or raise the threshold when the collective is intended.",
    comm_negate('{"data", "model"}', '{"data"}', t="tensor<65536x32768xf32>", mesh='sdy.mesh @mesh = <["data"=2, "model"=2]>\n'),
    comm_negate('{"data", "model"}', '{"data", "model"}', t="tensor<65536x32768xf32>", mesh='sdy.mesh @mesh = <["data"=2, "model"=2]>\n'),
    'data=2,model=2')

def comm_kernel_shard_map(arg_sh):
    t = "tensor<4096x1024xf32>"
    return ('sdy.mesh @mesh = <["data"=4, "model"=2]>\n'
            f'func.func public @main(%arg0: {t} {{sdy.sharding = #sdy.sharding<@mesh, [{arg_sh}]>}}) -> {t} {{\n'
            '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] '
            'manual_axes={"data", "model"} (%arg1: tensor<1024x1024xf32>) {\n'
            '    %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{}", kernel_name = "scale_kernel"} '
            ': (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>\n'
            '    sdy.return %1 : tensor<1024x1024xf32>\n'
            f'  }} : ({t}) -> {t}\n'
            f'  return %0 : {t}\n}}\n')

entry('SC0903', 'comm-boundary-reshard', 'communication',
    "A sharded operand is resharded at a kernel's shard_map or gathered to a host callback's device",
    "A Pallas, Triton or Mosaic kernel runs inside a shard_map, which takes each operand in the sharding its "
    "in_specs name; an operand that arrives sharded otherwise is resharded on the way in (all-gather, "
    "all-to-all, collective-permute), once per call. A host callback outside shard_map runs on one device "
    "(JAX gives it a maximal sharding), so each sharded operand is first gathered whole. The diagnostic names "
    "the kernel or callback, the collective, its axes and the bytes per device; boundaries that move less than "
    "1 MiB per device (a debug print of a small array, a bias gathered into a kernel) are left alone.",
    "A kernel wrapped in jax.shard_map(..., in_specs=P('data', None)) called on an array sharded "
    "P(None, 'model'); jax.debug.callback or jax.pure_callback on a large sharded array at the top level "
    "of a jitted function.",
    "Give the operand the in_specs' sharding where it is computed "
    "(x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('data', None))), or in_shardings of the "
    "jitted function), or change in_specs to the sharding it has when the kernel allows it. For a callback, "
    "run it per shard inside a fully manual shard_map (the fix wraps the calling function), or pass it less "
    "data.",
    comm_kernel_shard_map('{}, {"model"}'),
    comm_kernel_shard_map('{"data"}, {}'),
    'data=4,model=2')

# ---------------------------------------------------------------- emit
def cstr(s, indent="      "):
    if s is None:
        return "NULL"
    lines = s.split("\n")
    out = []
    for i, l in enumerate(lines):
        if i == len(lines) - 1 and l == "":
            break
        piece = l + ("\n" if i < len(lines) - 1 else "")
        out.append('"' + piece.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"')
    return ("\n" + indent).join(out) if out else '""'

families = {}
for e in E:
    families.setdefault(e[1], []).append(e)
for k in families:
    families[k].sort(key=lambda e: e[0])
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
check = sys.argv[1:] == ["--check"]  # compare, write nothing: exit 1 when an .inc is not what the table gives
stale = []
for fam, es in families.items():
    out = [f"/* Catalog entries for the {fam} family (included by lib/rules/catalog.c inside the entry array).",
           " * GENERATED by scripts/gen_catalog.py; edit the script, not this file.",
           " * ENTRY(code, title, explanation, bad_example, good_example, mesh_spec) */"]
    for (code, family, title, expl, bad, good, mesh) in es:
        out.append(f'ENTRY("{code}", {cstr(title)},\n      {cstr(expl)},\n      {cstr(bad)},\n      {cstr(good)},\n      {cstr(mesh)})')
    path = os.path.join(root, "lib", "rules", "catalog", f"{fam}.inc")
    text = "\n".join(out) + "\n"
    if not check:
        open(path, "w").write(text)
    elif not os.path.exists(path) or open(path).read() != text:
        stale.append(os.path.relpath(path, root))
if stale:
    sys.exit("catalog: not what scripts/gen_catalog.py generates (edit the script and run it): " + ", ".join(stale))
print(f"catalog: {len(E)} entries in {len(families)} families" + (", all .inc files up to date" if check else ""))
