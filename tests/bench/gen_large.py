#!/usr/bin/python3
"""Writes a large JAX-shaped StableHLO module (Shardy meshes, sharded args, shard_map bodies, kernels,
dense constants, debug locations) for benchmarks. usage: gen_large.py OUT NUM_FUNCS"""
import sys

out, nfuncs = sys.argv[1], int(sys.argv[2])
lines = ['#loc1 = loc("train.py":10:4)']
for i in range(64):
    lines.append('#loc%d = loc("layer_%d"(#loc1))' % (i + 2, i))
lines.append('module @jit_train_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {')
lines.append('  sdy.mesh @mesh = <["data"=2, "model"=4]>')
for f in range(nfuncs):
    vis = "public" if f == 0 else "private"
    name = "main" if f == 0 else "layer_%d" % f
    lines.append('  func.func %s @%s(%%arg0: tensor<256x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>} loc("x"), '
                 '%%arg1: tensor<1024x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> '
                 '(tensor<256x1024xbf16> {jax.result_info = "result"}) {' % (vis, name))
    v = "%arg0"
    for k in range(40):
        loc = "#loc%d" % (2 + (k % 64))
        lines.append('    %%%d = stablehlo.dot_general %s, %%arg1, contracting_dims = [1] x [0] : (tensor<256x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<256x1024xbf16> loc(%s)' % (3 * k, v, loc))
        lines.append('    %%cst_%d = stablehlo.constant dense<"0x%s"> : tensor<16xbf16> loc(%s)' % (k, "3F80" * 16, loc))
        lines.append('    %%%d = sdy.sharding_constraint %%%d <@mesh, [{"data"}, {"model"}]> : tensor<256x1024xbf16> loc(%s)' % (3 * k + 1, 3 * k, loc))
        lines.append('    %%%d = stablehlo.tanh %%%d : tensor<256x1024xbf16> loc(%s)' % (3 * k + 2, 3 * k + 1, loc))
        v = "%%%d" % (3 * k + 2)
    lines.append('    %%r = sdy.manual_computation(%s) in_shardings=[<@mesh, [{"data"}, {"model"}]>] out_shardings=[<@mesh, [{"data"}, {"model"}]>] manual_axes={"data", "model"} (%%b: tensor<128x256xbf16>) {' % v)
    lines.append('      %k = stablehlo.custom_call @tpu_custom_call(%b) {backend_config = "{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElS\\22}}", kernel_name = "k"} : (tensor<128x256xbf16>) -> tensor<128x256xbf16> loc(#loc2)')
    lines.append('      sdy.return %k : tensor<128x256xbf16> loc(#loc2)')
    lines.append('    } : (tensor<256x1024xbf16>) -> tensor<256x1024xbf16> loc(#loc2)')
    lines.append('    return %r : tensor<256x1024xbf16> loc(#loc1)')
    lines.append('  } loc(#loc1)')
lines.append('} loc(#loc1)')
with open(out, "w") as fh:
    fh.write("\n".join(lines) + "\n")
