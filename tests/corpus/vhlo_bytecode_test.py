#!/usr/bin/python3
"""Every VHLO op StableHLO defines reads from bytecode: a module using each op (StableHLO's VhloOps.td,
v1.20: the names below) is written as bytecode by Debian's mlir-opt, and shardcheck must read all of
them, as their StableHLO ops, in order; an op no StableHLO version defines is refused (SC0001)."""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, os.environ.get("SC_BUILD", "build"), "bin/shardcheck")
MLIR_OPT = next((p for p in ["/usr/lib/llvm-22/bin/mlir-opt", "/usr/bin/mlir-opt-22"] if os.path.exists(p)), None)

VHLO_OPS = """
abs_v1 add_v1 after_all_v1 all_gather_v1 all_gather_v2 all_reduce_v1 all_reduce_v2 all_to_all_v1 all_to_all_v2
and_v1 async_done_v1 async_start_v1 atan2_v1 batch_norm_grad_v1 batch_norm_inference_v1 batch_norm_training_v1
bitcast_convert_v1 broadcast_in_dim_v1 broadcast_v1 call_v1 case_v1 cbrt_v1 cbrt_v2 ceil_v1 cholesky_v1 clamp_v1
collective_broadcast_v1 collective_broadcast_v2 collective_permute_v1 collective_reduce_v1 compare_v1 complex_v1
composite_v1 composite_v2 concatenate_v1 constant_v1 convert_v1 convolution_v1 cosine_v1 cosine_v2
count_leading_zeros_v1 create_token_v1 cross-replica-sum_v1 custom_call_v1 custom_call_v2 divide_v1
dot_general_v1 dot_general_v2 dot_v1 dynamic_broadcast_in_dim_v1 dynamic_conv_v1 dynamic_conv_v2
dynamic_gather_v1 dynamic_gather_v2 dynamic_iota_v1 dynamic_pad_v1 dynamic_reshape_v1 dynamic_slice_v1
dynamic_update_slice_v1 einsum_v1 exponential_minus_one_v1 exponential_minus_one_v2 exponential_v1
exponential_v2 fft_v1 floor_v1 func_v1 gather_v1 gather_v2 get_dimension_size_v1 get_tuple_element_v1 if_v1
imag_v1 infeed_v1 iota_v1 is_finite_v1 log_plus_one_v1 log_plus_one_v2 log_v1 log_v2 logistic_v1 logistic_v2
map_v1 maximum_v1 minimum_v1 multiply_v1 negate_v1 not_v1 optimization_barrier_v1 or_v1 outfeed_v1 pad_v1
partition_id_v1 popcnt_v1 power_v1 real_dynamic_slice_v1 real_v1 recv_v1 recv_v2 reduce_precision_v1
reduce_scatter_v1 reduce_v1 reduce_window_v1 remainder_v1 replica_id_v1 reshape_v1 return_v1 reverse_v1
rng_bit_generator_v1 rng_v1 round_nearest_afz_v1 round_nearest_even_v1 rsqrt_v1 rsqrt_v2 scatter_v1 scatter_v2
select_and_scatter_v1 select_v1 send_v1 send_v2 set_dimension_size_v1 shift_left_v1 shift_right_arithmetic_v1
shift_right_logical_v1 sign_v1 sine_v1 sine_v2 slice_v1 sort_v1 sqrt_v1 sqrt_v2 subtract_v1 tan_v1 tan_v2
tanh_v1 tanh_v2 torch_index_select_v1 transpose_v1 triangular_solve_v1 tuple_v1 unary_einsum_v1
uniform_dequantize_v1 uniform_quantize_v1 while_v1 xor_v1
""".split()

DUMP = re.compile(r"^\d+:\d+ depth=\d+ op=(\S+)")


def bytecode(tmp, name, ops):
    """A module whose function applies each op of `ops` (generic form, one operand) to its argument."""
    lines = ["func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {"]
    lines += ['  %%%d = "vhlo.%s"(%%arg0) : (tensor<4xf32>) -> tensor<4xf32>' % (i, op) for i, op in enumerate(ops)]
    lines += ["  return %arg0 : tensor<4xf32>", "}"]
    text, bc = os.path.join(tmp, name + ".mlir"), os.path.join(tmp, name + ".mlirbc")
    with open(text, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--emit-bytecode", text, "-o", bc], check=True)
    return bc


def main():
    if not MLIR_OPT:
        raise SystemExit("mlir-opt not found (Debian package mlir-22-tools)")
    assert len(VHLO_OPS) == 145, len(VHLO_OPS)
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([CLI, "check", "--debug-dump-ops", bytecode(tmp, "all", VHLO_OPS)], capture_output=True, text=True)
        names = [m.group(1) for m in map(DUMP.match, out.stdout.splitlines()) if m]
        base = [re.sub(r"_v\d+$", "", op) for op in VHLO_OPS]
        want = [("func." if b in ("call", "func", "return") else "stablehlo.") + b for b in base]
        got = names[2:-1]  # after the module and its function, before the function's return
        if out.returncode != 0 or got != want:
            missing = [w for w in want if w not in got]
            raise SystemExit("vhlo-bytecode: the VHLO ops did not all read (exit %d; missing %s)\n%s"
                             % (out.returncode, missing[:10], out.stderr[-2000:]))
        bad = subprocess.run([CLI, "check", bytecode(tmp, "future", ["constant_v99"])], capture_output=True, text=True)
        if bad.returncode != 1 or "[SC0001]" not in bad.stdout + bad.stderr or "vhlo.constant_v99" not in bad.stdout + bad.stderr:
            raise SystemExit("vhlo-bytecode: an op no StableHLO defines was not refused:\n" + bad.stdout + bad.stderr)
    print("vhlo-bytecode: %d VHLO ops read from bytecode, an unknown one refused" % len(VHLO_OPS))


if __name__ == "__main__":
    main()
