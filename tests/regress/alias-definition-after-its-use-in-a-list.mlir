module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[#a <@mesh, [{"x"}, {"y"}, {}]>]>} : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
#a = #sdy.sharding
