// SC0106 mesh-num-partitions
module attributes {mhlo.num_partitions = 8 : i32} {
sdy.mesh @mesh = <["x"=8]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
}
