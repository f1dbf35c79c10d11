// SC0107 mesh-target
// mesh: data=8
module attributes {mhlo.num_partitions = 8 : i32} {
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
}
