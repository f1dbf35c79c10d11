// SC0507 manual-axis-rebound (QA m08: nested manual computation re-binding "data": one diagnostic)
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<16x32xf32>) -> (tensor<16x32xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", ?}, {?}]>] out_shardings=[<@mesh, [{"data", ?}, {?}]>] manual_axes={"data"} (%arg1: tensor<8x32xf32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{"data"}, {"model"}]>] out_shardings=[<@mesh, [{"data"}, {"model"}]>] manual_axes={"data", "model"} (%arg2: tensor<4x8xf32>) { // expect: SC0507
        sdy.return %arg2 : tensor<4x8xf32>
      } : (tensor<8x32xf32>) -> tensor<8x32xf32>
      sdy.return %1 : tensor<8x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>
    return %0 : tensor<16x32xf32>
  }
}
