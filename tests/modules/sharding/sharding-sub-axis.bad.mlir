// SC0207 sharding-sub-axis
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4}]>}) -> tensor<8xf32> { // expect: SC0207
  return %arg0 : tensor<8xf32>
}
