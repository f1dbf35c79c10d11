// A communicating Mosaic kernel in a pmap-style (replicated) module.
module @pmap_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main(%arg0: tensor<16x128xf32> loc("x")) -> (tensor<16x128xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\22, \22has_communication\22: true, \22collective_id\22: 0, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "ring_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32> // expect: SC0305
    return %0 : tensor<16x128xf32>
  }
}
