// SC0103 mesh-device-ids
sdy.mesh @mesh = <["x"=4], device_ids=[0, 1, 2, 2]> // expect: SC0103
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
