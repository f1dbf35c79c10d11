// platform: cpu
// The same partitioned callback on CPU.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {
    stablehlo.custom_call @xla_ffi_partitioned_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = []} : (tensor<16xf32>) -> ()
    return %arg0 : tensor<16xf32>
  }
}
