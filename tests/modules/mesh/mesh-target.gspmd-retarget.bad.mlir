// SC0107 mesh-target
// mesh: data=8
// A GSPMD module exported for 4 devices: each of its 3 tile assignments names 4 devices, which is only
// wrong because of the other device count. One SC0107 with the 3 annotations as related sites.
module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} { // expect: SC0107
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}) -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = stablehlo.dot %arg0, %arg1 : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
