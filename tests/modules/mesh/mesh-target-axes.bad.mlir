// SC0108 mesh-target-axes
// mesh: data=8
sdy.mesh @mesh = <["x"=2, "y"=4]> // expect: SC0108
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
