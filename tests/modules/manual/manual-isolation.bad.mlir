// SC0508 manual-isolation
sdy.mesh @mesh = <["a"=4]>
func.func @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"a"} (%arg1: tensor<16xf32>) {
    %1 = stablehlo.add %arg0, %arg1 : tensor<16xf32> // expect: SC0508
    sdy.return %1 : tensor<16xf32>
  } : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
