// SC0510 manual-axes-sorted
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"b", "a"} (%arg1: tensor<16xf32>) { // expect: SC0510
    sdy.return %arg1 : tensor<16xf32>
  } : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
