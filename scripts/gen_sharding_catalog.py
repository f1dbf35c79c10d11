#!/usr/bin/env python3
"""Generates the catalog entries of the mesh, sharding, manual and collective families
(lib/rules/catalog/{mesh,sharding,manual,collective}.inc) and their test modules
(tests/modules/<family>/<rule>.{bad,good}.mlir) from one table, so explanations, examples and tests agree.
Run from the repository root: python3 scripts/gen_sharding_catalog.py"""
import os

MESH2 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
MESH4 = 'sdy.mesh @mesh = <["x"=4]>\n'

def fn(body, args="%arg0: tensor<8xf32>", res="tensor<8xf32>", ret="%arg0", rtype="tensor<8xf32>"):
    return f"func.func @main({args}) -> {res} {{\n{body}  return {ret} : {rtype}\n}}\n"

E = []  # (code, rule, family, title, meaning, when, fix, bad, good, mesh)
def entry(code, rule, family, title, meaning, when, fix, bad, good, mesh=None, ext="mlir"):
    E.append((code, rule, family, title, meaning, when, fix, bad, good, mesh, ext))

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
entry("SC0105", "mesh-device-count", "mesh", "The module's meshes have different numbers of devices",
 "All meshes of one program must span the same number of devices (maximal single-device meshes and the empty mesh excepted). Shardy documents this invariant but its verifier does not check it; JAX reports it at run time as \"Received incompatible devices for jitted computation\" or \"mesh should be the same across the entire program\".",
 "A jitted function that mixes shardings over two meshes of different size, e.g. an 8-device mesh and a 2-device sub-mesh.",
 "Use one mesh for all shardings of the function (or meshes over the same devices with different axis names).",
 'sdy.mesh @mesh = <["x"=8]>\nsdy.mesh @small = <["x"=2]>\n' + fn(""),
 'sdy.mesh @mesh = <["x"=8]>\nsdy.mesh @mesh2 = <["a"=2, "b"=4]>\n' + fn(""))
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

families = {}
for e in E:
    families.setdefault(e[2], []).append(e)
for k in families:
    families[k].sort(key=lambda e: e[0])
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for fam, es in families.items():
    out = [f"/* Catalog entries for the {fam} family (included by lib/rules/catalog.c inside the entry array).",
           " * GENERATED by scripts/gen_sharding_catalog.py from the same table as tests/modules/" + fam + "/;",
           " * edit the script, not this file. ENTRY(code, title, explanation, bad_example, good_example, mesh_spec) */"]
    for (code, rule, family, title, meaning, when, fix, bad, good, mesh, ext) in es:
        expl = "What it means\n" + wrap(meaning) + "\n\nWhen it happens\n" + wrap(when) + "\n\nHow to fix (JAX)\n" + wrap(fix) + "\n"
        out.append(f'ENTRY("{code}", {cstr(title)},\n      {cstr(expl)},\n      {cstr(bad)},\n      {cstr(good)},\n      {cstr(mesh)})')
        d = os.path.join(root, "tests", "modules", family)
        os.makedirs(d, exist_ok=True)
        hdr = f"// {code} {rule}" + (f" (checked with --mesh {mesh})" if mesh else "") + "\n"
        if ext == "hlo":  # HLO text must start with HloModule to be detected: the header goes last
            open(os.path.join(d, rule + ".bad.hlo"), "w").write(bad + hdr + "// expect: " + code + "\n")
            open(os.path.join(d, rule + ".good.hlo"), "w").write(good + hdr + "// expect: none\n")
        else:
            open(os.path.join(d, rule + ".bad.mlir"), "w").write(hdr + "// expect: " + code + "\n" + bad)
            open(os.path.join(d, rule + ".good.mlir"), "w").write(hdr + "// expect: none\n" + good)
    open(os.path.join(root, "lib", "rules", "catalog", f"{fam}.inc"), "w").write("\n".join(out) + "\n")
print(f"{len(E)} entries")
