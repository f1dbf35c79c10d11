// SC0209 sharding-priority
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}p0]>}) -> tensor<8xf32> { // expect: SC0209
  return %arg0 : tensor<8xf32>
}
