// What JAX emits: the callback runs on device 0.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
