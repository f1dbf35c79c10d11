// mesh: data=4
// A module without partitioning attributes, its callback pinned to device index 5, deployed on 4 devices.
module @jit_f {
  sdy.mesh @maximal_mesh_5 = <[], device_ids=[5]>
  func.func public @main(%arg0: tensor<16xf32> loc("x")) -> (tensor<16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_5, []>]>} : (tensor<16xf32>) -> tensor<16xf32> // expect: SC0404
    return %0 : tensor<16xf32>
  }
}
