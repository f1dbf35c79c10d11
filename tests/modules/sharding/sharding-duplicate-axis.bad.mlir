// SC0206 sharding-duplicate-axis
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"x"}]>}) -> tensor<8x8xf32> { // expect: SC0206
  return %arg0 : tensor<8x8xf32>
}
