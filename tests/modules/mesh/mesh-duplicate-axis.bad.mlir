// SC0102 mesh-duplicate-axis
// expect: SC0102
sdy.mesh @mesh = <["x"=2, "x"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
