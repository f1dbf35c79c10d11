// SC0102 mesh-duplicate-axis
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
