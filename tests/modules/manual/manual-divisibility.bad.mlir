// SC0505 manual-divisibility
sdy.mesh @mesh = <["a"=4]>
func.func @main(%arg0: tensor<6xf32>) -> tensor<6xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} (%arg1: tensor<1xf32>) { // expect: SC0505
    sdy.return %arg1 : tensor<1xf32>
  } : (tensor<6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
