// SC0104 mesh-duplicate-name
sdy.mesh @mesh = <["x"=4]>
sdy.mesh @mesh = <["x"=4]> // expect: SC0104
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
