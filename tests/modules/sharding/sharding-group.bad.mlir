// SC0222 sharding-group: group 7 has a value inside a manual computation and one outside; group 23 mixes shapes
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={} (%arg1: tensor<8x8xf32>) {
    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>
    sdy.sharding_group %1 group_id = 7 : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  sdy.sharding_group %0 group_id = 7 : tensor<8x8xf32> // expect: SC0222
  %2 = stablehlo.constant dense<0.0> : tensor<8x8x1xf32>
  sdy.sharding_group %0 group_id = 23 : tensor<8x8xf32>
  sdy.sharding_group %2 group_id = 23 : tensor<8x8x1xf32> // expect: SC0222
  return %0 : tensor<8x8xf32>
}
