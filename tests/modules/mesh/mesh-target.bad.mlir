// SC0107 mesh-target
// mesh: data=8
module attributes {mhlo.num_partitions = 2 : i32} { // expect: SC0107
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
}
