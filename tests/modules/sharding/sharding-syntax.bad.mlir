// SC0201 sharding-syntax
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}phigh]>}) -> tensor<8xf32> { // expect: SC0201
  return %arg0 : tensor<8xf32>
}
