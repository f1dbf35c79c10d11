// SC0511 manual-gspmd-region
module attributes {mhlo.num_partitions = 2 : i32} {
func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{manual}"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<2x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}
}
