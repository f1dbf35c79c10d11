// SC0221 sharding-unreduced-transition: an add drops the unreduced axis, a call loses it
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func private @callee(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32> // expect: SC0221
  %1 = func.call @callee(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32> // expect: SC0221
  return %0 : tensor<8x8xf32>
}
