// jax.pure_callback(..., sharding=SingleDeviceSharding(...)) inside a fully manual shard_map: the
// callback gets an explicit (maximal) sharding where only the per-device one is allowed.
#loc1 = loc("eval.py":17:8)
#loc2 = loc("pure_callback:"(#loc1))
module @jit_eval attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<4xf32>) {
      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<4xf32>) -> tensor<4xf32> loc(#loc2)
      sdy.return %1 : tensor<4xf32> loc(#loc2)
    } : (tensor<8xf32>) -> tensor<8xf32> loc(#loc2)
    return %0 : tensor<8xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
