// SC0108 mesh-target-axes (checked with --mesh data=8)
// expect: none
sdy.mesh @mesh = <["data"=8]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
