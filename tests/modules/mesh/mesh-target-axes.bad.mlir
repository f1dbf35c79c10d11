// SC0108 mesh-target-axes (checked with --mesh data=8)
// expect: SC0108
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
