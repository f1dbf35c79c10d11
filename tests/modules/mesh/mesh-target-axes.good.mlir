// SC0108 mesh-target-axes
// mesh: data=8
sdy.mesh @mesh = <["data"=8]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
