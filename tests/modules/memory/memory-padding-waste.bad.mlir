// SC0804 memory-padding-waste
// mesh: data=2,model=4
// 5 rows over 4 devices: shards of 2 rows, 8 padded rows for 5 real ones.
module @jit_step attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<5x16777216xf32>) -> tensor<5x16777216xf32> {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"model"}, {}]>]>} : tensor<5x16777216xf32> // expect: SC0804
    return %0 : tensor<5x16777216xf32>
  }
}
