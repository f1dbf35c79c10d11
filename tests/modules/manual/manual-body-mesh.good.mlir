// SC0509 manual-body-mesh
sdy.mesh @meshA = <["a"=4]>
sdy.mesh @meshB = <["b"=4]>
func.func @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@meshA, [{}]>] out_shardings=[<@meshA, [{}]>] manual_axes={"a"} (%arg1: tensor<16xf32>) {
    %1 = sdy.sharding_constraint %arg1 <@meshA, [{}]> : tensor<16xf32>
    sdy.return %1 : tensor<16xf32>
  } : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
