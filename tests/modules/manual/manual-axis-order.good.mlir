// SC0504 manual-axis-order
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", "a"}]>] out_shardings=[<@mesh, [{"b"}]>] manual_axes={"b"} (%arg1: tensor<8xf32>) {
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
