module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} { // expect: SC0004
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<16x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<16x128xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x128xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<16x128xf32>
    %2 = stablehlo.tanh %1 : tensor<16x128xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<16x128xf32>
    return %3 : tensor<16x128xf32>
  }
}
// SC0004 propagation-limit: a jitted step whose propagation needs more than half of the work a limit of 80 steps leaves;
// reported at the start of the module
// max-steps: 80
