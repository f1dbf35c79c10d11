// SC0507 manual-axis-rebound (GSPMD: a tiled sharding without manual subgroup inside @shmap_body)
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<16x8xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<16x8xf32>) -> tensor<4x8xf32>
    %2 = call @shmap_body(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<4x8xf32>) -> tensor<16x8xf32>
    return %4 : tensor<16x8xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32> {jax.result_info = "[('x',), None]"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[1,4]<=[4]}"} : (tensor<4x8xf32>) -> tensor<4x8xf32> // expect: SC0507
    return %0 : tensor<4x8xf32>
  }
}
