// GSPMD form: a tiled sharding on a top-level callback.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32> {mhlo.sharding = "{devices=[4]<=[4]}"} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[4]<=[4]}"}) {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<16xf32>) -> tensor<16xf32> // expect: SC0403
    return %0 : tensor<16xf32>
  }
}
