// GSPMD form: fully manual shard_map ({manual}).
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x128xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<64x128xf32>) -> tensor<64x128xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<64x128xf32>) -> tensor<16x128xf32>
    %2 = call @shmap_body(%1) : (tensor<16x128xf32>) -> tensor<16x128xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<16x128xf32>) -> tensor<16x128xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<16x128xf32>) -> tensor<64x128xf32>
    return %4 : tensor<64x128xf32>
  }
  func.func private @shmap_body(%arg0: tensor<16x128xf32>) -> (tensor<16x128xf32> {jax.result_info = "[('data',), None]"}) {
    %1 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElSZ29vZ2xlMy10cnVuawABJQcBAwUBAwcDEwkLDQ8RExUXGQORcREBbw8H\22, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "add_one_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>
    return %1 : tensor<16x128xf32>
  }
}
