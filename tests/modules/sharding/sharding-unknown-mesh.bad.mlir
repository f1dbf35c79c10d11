// SC0202 sharding-unknown-mesh
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{"x"}]>}) -> tensor<8xf32> { // expect: SC0202
  return %arg0 : tensor<8xf32>
}
