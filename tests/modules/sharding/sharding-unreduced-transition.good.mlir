// SC0221 sharding-unreduced-transition: a reshard reduces before the add; a dot introduces 'sum' axes; a callee with no argument sharding gets its caller's from propagation
sdy.mesh @mesh = <["x"=2, "y"=8]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}) {
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>
  %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
sdy.mesh @mesh8 = <["x"=16]>
func.func @sub_axes(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh8, [{"x":(1)2}, {}], unreduced={"x":(2)2}>}) -> tensor<16x8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh8, [{"x":(1)2}, {}], unreduced={"x":(2)8}>]>} : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
func.func private @undecided(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh8, [{}, {}], unreduced={"x"}> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
func.func @calls_undecided(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh8, [{}, {}], unreduced={"x"}>}) -> tensor<16x8xf32> {
  %0 = func.call @undecided(%arg0) : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
