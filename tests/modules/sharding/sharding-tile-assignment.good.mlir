// SC0211 sharding-tile-assignment
module attributes {mhlo.num_partitions = 4 : i32} {
func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
}
