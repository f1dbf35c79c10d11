#!/usr/bin/python3
"""Writes the benchmark's JAX-shaped module at about SIZE megabytes, in one of three forms of the same
program:

  generic  MLIR generic form (what mlir-opt --allow-unregistered-dialect reads: stablehlo and sdy are
           not registered there), "stablehlo.multiply"(...) with loc("model.py":N:4)
  pretty   the form jax's `as_text()` prints (custom syntax, #loc aliases)
  hlo      XLA HLO text with GSPMD shardings

The program: a mesh ["data"=2, "model"=4]; a public main and private funcs, each with a sharded
argument, 40 rounds of multiply -> sharding constraint -> add on tensor<256x1024xbf16>, then a
manual computation over both axes holding one Mosaic TPU kernel (tpu_custom_call).

usage: gen_module.py generic|pretty|hlo SIZE_MB OUT"""
import sys

ROUNDS = 40
T = "tensor<256x1024xbf16>"
LOCAL = "tensor<128x256xbf16>"
SHARD = '[{"data"}, {"model"}]'
KERNEL_CONFIG = '"{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUgFNTElSZ2VuZXJhdGVk\\22}}"'


def generic_func(i, name, vis):
    out = []
    ftype = "(%s) -> %s" % (T, T)
    out.append('  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, %s>}], function_type = %s, '
               'sym_name = "%s", sym_visibility = "%s"}> ({' % (SHARD, ftype, name, vis))
    out.append("  ^bb0(%%arg0: %s):" % T)
    v = "%arg0"
    for k in range(ROUNDS):
        line = 100 + k
        out.append('    %%%d = "stablehlo.multiply"(%s, %s) : (%s, %s) -> %s loc("model.py":%d:4)' % (3 * k, v, v, T, T, T, line))
        out.append('    %%%d = "sdy.sharding_constraint"(%%%d) <{sharding = #sdy.sharding<@mesh, %s>}> : (%s) -> %s loc("model.py":%d:4)'
                   % (3 * k + 1, 3 * k, SHARD, T, T, line))
        out.append('    %%%d = "stablehlo.add"(%%%d, %s) : (%s, %s) -> %s loc("model.py":%d:4)' % (3 * k + 2, 3 * k + 1, v, T, T, T, line))
        v = "%%%d" % (3 * k + 2)
    out.append('    %%r = "sdy.manual_computation"(%s) <{in_shardings = #sdy.sharding_per_value<[<@mesh, %s>]>, '
               'manual_axes = #sdy<manual_axes{"data", "model"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, %s>]>}> ({'
               % (v, SHARD, SHARD))
    out.append("    ^bb0(%%b: %s):" % LOCAL)
    out.append('      %%k = "stablehlo.custom_call"(%%b) <{backend_config = %s, call_target_name = "tpu_custom_call"}> '
               '{kernel_name = "k%d"} : (%s) -> %s loc("kernel.py":7:2)' % (KERNEL_CONFIG, i, LOCAL, LOCAL))
    out.append('      "sdy.return"(%%k) : (%s) -> () loc("kernel.py":8:2)' % LOCAL)
    out.append("    }) : (%s) -> %s" % (T, T))
    out.append('    "func.return"(%%r) : (%s) -> () loc("model.py":200:2)' % T)
    out.append("  }) : () -> ()")
    return out


def pretty_func(i, name, vis):
    out = []
    out.append('  func.func %s @%s(%%arg0: %s {sdy.sharding = #sdy.sharding<@mesh, %s>} loc("x")) -> (%s {jax.result_info = "result"}) {'
               % (vis, name, T, SHARD, T))
    v = "%arg0"
    for k in range(ROUNDS):
        loc = "#loc%d" % (1 + k)
        out.append("    %%%d = stablehlo.multiply %s, %s : %s loc(%s)" % (3 * k, v, v, T, loc))
        out.append("    %%%d = sdy.sharding_constraint %%%d <@mesh, %s> : %s loc(%s)" % (3 * k + 1, 3 * k, SHARD, T, loc))
        out.append("    %%%d = stablehlo.add %%%d, %s : %s loc(%s)" % (3 * k + 2, 3 * k + 1, v, T, loc))
        v = "%%%d" % (3 * k + 2)
    out.append('    %%r = sdy.manual_computation(%s) in_shardings=[<@mesh, %s>] out_shardings=[<@mesh, %s>] '
               'manual_axes={"data", "model"} (%%b: %s) {' % (v, SHARD, SHARD, LOCAL))
    out.append('      %%k = stablehlo.custom_call @tpu_custom_call(%%b) {backend_config = %s, kernel_name = "k%d"} : (%s) -> %s loc(#loc41)'
               % (KERNEL_CONFIG, i, LOCAL, LOCAL))
    out.append("      sdy.return %%k : %s loc(#loc41)" % LOCAL)
    out.append("    } : (%s) -> %s loc(#loc42)" % (T, T))
    out.append("    return %%r : %s loc(#loc42)" % T)
    out.append("  } loc(#loc42)")
    return out


def hlo_func(i, name):
    out = []
    shard = "sharding={devices=[2,4]<=[8]}"
    out.append("%s {" % name)
    out.append("  p.%d = bf16[256,1024]{1,0} parameter(0), %s" % (i, shard))
    v = "p.%d" % i
    for k in range(ROUNDS):
        meta = 'metadata={op_name="jit(step)/mul" source_file="model.py" source_line=%d}' % (100 + k)
        out.append("  m.%d.%d = bf16[256,1024]{1,0} multiply(%s, %s), %s" % (i, k, v, v, meta))
        out.append('  s.%d.%d = bf16[256,1024]{1,0} custom-call(m.%d.%d), custom_call_target="Sharding", %s'
                   % (i, k, i, k, shard))
        out.append("  a.%d.%d = bf16[256,1024]{1,0} add(s.%d.%d, %s), %s" % (i, k, i, k, v, meta))
        v = "a.%d.%d" % (i, k)
    out.append('  fs.%d = bf16[128,256]{1,0} custom-call(%s), custom_call_target="SPMDFullToShardShape", '
               "sharding={manual}" % (i, v))
    out.append('  k.%d = bf16[128,256]{1,0} custom-call(fs.%d), custom_call_target="tpu_custom_call", '
               "sharding={manual}, backend_config=%s" % (i, i, KERNEL_CONFIG.replace("\\22", '\\"')))
    out.append('  ROOT sf.%d = bf16[256,1024]{1,0} custom-call(k.%d), custom_call_target="SPMDShardToFullShape", %s'
               % (i, i, shard))
    out.append("}")
    return out


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("generic", "pretty", "hlo"):
        sys.exit(__doc__)
    form, target, path = sys.argv[1], float(sys.argv[2]) * 1e6, sys.argv[3]
    with open(path, "w") as fh:
        written = 0
        if form == "hlo":
            head = ["HloModule jit_step, num_partitions=8", ""]
        elif form == "pretty":
            head = ['#loc%d = loc("model.py":%d:4)' % (1 + k, 100 + k) for k in range(ROUNDS)]
            head += ['#loc41 = loc("kernel.py":7:2)', '#loc42 = loc("model.py":200:2)']
            head += ["module @jit_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {",
                     '  sdy.mesh @mesh = <["data"=2, "model"=4]>']
        else:
            head = ['"builtin.module"() <{sym_name = "jit_step"}> ({',
                    '  "sdy.mesh"() <{mesh = #sdy.mesh<["data"=2, "model"=4]>, sym_name = "mesh"}> : () -> ()']
        text = "\n".join(head) + "\n"
        fh.write(text)
        written += len(text)
        i = 0
        # The entry comes last in HLO (callers after callees is not needed: no calls) and first in MLIR.
        while True:
            name = "main" if i == 0 else "layer_%d" % i
            if form == "hlo":
                lines = hlo_func(i, ("ENTRY " if i == 0 else "") + name)
            elif form == "pretty":
                lines = pretty_func(i, name, "public" if i == 0 else "private")
            else:
                lines = generic_func(i, name, "public" if i == 0 else "private")
            text = "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text)
            i += 1
            if written >= target:
                break
        if form == "pretty":
            fh.write("} loc(#loc42)\n")
        elif form == "generic":
            fh.write("}) : () -> ()\n")


if __name__ == "__main__":
    main()
