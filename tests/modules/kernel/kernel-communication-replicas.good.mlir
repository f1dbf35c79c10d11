// The same kernel under shard_map on a 2-device mesh.
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<32x128xf32> loc("shard_map:"(#loc1))) {
      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\22, \22has_communication\22: true, \22collective_id\22: 0, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "ring_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<32x128xf32>) -> tensor<32x128xf32>
      sdy.return %1 : tensor<32x128xf32>
    } : (tensor<64x128xf32>) -> tensor<64x128xf32>
    return %0 : tensor<64x128xf32>
  }
}
#loc1 = loc("model.py":88:12)
