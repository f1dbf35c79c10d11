// A host callback in a module lowered for cpu and cuda (jax.export platforms=('cpu', 'cuda')): the
// platform index selects the branch. JAX refuses this ("multi-platform lowering for python_callback").
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.case"(%arg0) ({
      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32> // expect: SC0409
      stablehlo.return %1 : tensor<16xf32>
    }, {
      %2 = stablehlo.custom_call @xla_ffi_python_gpu_callback(%arg1) {mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16xf32>) -> tensor<16xf32>
      stablehlo.return %2 : tensor<16xf32>
    }) : (tensor<i32>) -> tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
