// SC0211 sharding-tile-assignment
module attributes {mhlo.num_partitions = 4 : i32} {
func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}) -> tensor<8xf32> { // expect: SC0211
  return %arg0 : tensor<8xf32>
}
}
