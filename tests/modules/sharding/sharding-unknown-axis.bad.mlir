// SC0203 sharding-unknown-axis
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}]>}) -> tensor<8xf32> { // expect: SC0203
  return %arg0 : tensor<8xf32>
}
