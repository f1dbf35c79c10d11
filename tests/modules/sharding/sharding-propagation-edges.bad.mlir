// SC0214 sharding-propagation-edges
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.propagation_edges = #sdy.propagation_edges<[{step--1 = [{"x" = operand-0 -> [result-0]}]}]>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32> // expect: SC0214
  return %0 : tensor<8xf32>
}
