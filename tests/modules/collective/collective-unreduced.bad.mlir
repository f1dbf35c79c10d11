// SC0605 collective-unreduced
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}], unreduced=max{"z"}>}) -> tensor<16x8xf32> {
  %0 = sdy.all_reduce min {} %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<16x8xf32> // expect: SC0605
  return %0 : tensor<16x8xf32>
}
