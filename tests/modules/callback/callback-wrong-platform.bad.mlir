// platform: cpu
// A GPU host callback in a module checked for CPU.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @xla_ffi_python_gpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32> // expect: SC0408
    return %0 : tensor<16xf32>
  }
}
