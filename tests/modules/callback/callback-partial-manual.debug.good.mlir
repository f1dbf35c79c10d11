// jax.debug.callback in a partial-manual shard_map wraps itself in a nested shard_map over the automatic axes.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @empty_mesh = <[]>
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", ?}]>] out_shardings=[<@mesh, [{"data", ?}]>] manual_axes={"data"} (%arg1: tensor<4xf32>) {
      sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{?}]>] out_shardings=[] manual_axes={"model"} (%arg2: tensor<4xf32>) {
        stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg2) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [], sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, []>]>} : (tensor<4xf32>) -> ()
        sdy.return
      } : (tensor<4xf32>) -> ()
      sdy.return %arg1 : tensor<4xf32>
    } : (tensor<16xf32>) -> tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
