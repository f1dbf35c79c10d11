// SC0105 mesh-device-count
// expect: SC0105
sdy.mesh @mesh = <["x"=8]>
sdy.mesh @small = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
