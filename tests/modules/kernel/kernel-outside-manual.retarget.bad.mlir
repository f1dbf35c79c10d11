// mesh: data=4
// Lowered for one device (mhlo.num_partitions = 1), deployed on four.
module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<128x128xf32> loc("x")) -> (tensor<128x128xf32> {jax.result_info = "result"}) {
    %0 = call @matmul(%arg0, %arg0) : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
    return %0 : tensor<128x128xf32>
  }
  func.func private @matmul(%arg0: tensor<128x128xf32>, %arg1: tensor<128x128xf32>) -> tensor<128x128xf32> {
    %0 = stablehlo.custom_call @tpu_custom_call(%arg0, %arg1) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\22, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "matmul_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32> // expect: SC0301
    return %0 : tensor<128x128xf32>
  }
}
