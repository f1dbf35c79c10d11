// mesh: data=4
// Lowered for 8 devices with the callback on device 5; deployed on 4.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @maximal_mesh_5 = <[], device_ids=[5]>
  sdy.mesh @mesh = <["data"=8]> // expect: SC0107
  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_5, []>]>} : (tensor<16xf32>) -> tensor<16xf32> // expect: SC0404
    return %0 : tensor<16xf32>
  }
}
