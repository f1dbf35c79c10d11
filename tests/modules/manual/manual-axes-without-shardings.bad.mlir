// SC0514 manual-axes-without-shardings: manual axes, no in/out shardings, a body that computes
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={"a"} () { // expect: SC0514
    %0 = stablehlo.constant dense<1.0> : tensor<4xf32>
    sdy.return
  } : () -> ()
  return %arg0 : tensor<8xf32>
}
