// The same callback exported for one platform (platforms=('cpu',)): no platform index, one target.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg1: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {
    %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>
    return %1 : tensor<16xf32>
  }
}
