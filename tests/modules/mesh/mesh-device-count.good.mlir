// SC0105 mesh-device-count
sdy.mesh @mesh = <["x"=8]>
sdy.mesh @mesh2 = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
