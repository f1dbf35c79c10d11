// SC0204 sharding-rank
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8xf32> { // expect: SC0204
  return %arg0 : tensor<8xf32>
}
