// SC0211 sharding-tile-assignment
// expect: SC0211
module attributes {mhlo.num_partitions = 4 : i32} {
func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
}
