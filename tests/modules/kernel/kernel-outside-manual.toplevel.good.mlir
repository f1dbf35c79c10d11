// Wrapped in shard_map over "data".
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<16x128xf32> loc("shard_map:"(#loc1))) {
      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\22, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "add_one_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>
      sdy.return %1 : tensor<16x128xf32>
    } : (tensor<64x128xf32>) -> tensor<64x128xf32>
    return %0 : tensor<64x128xf32>
  }
}
