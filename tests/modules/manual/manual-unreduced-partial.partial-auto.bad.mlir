// SC0512 manual-unreduced-partial (QA m05: unreduced in_specs of a partial-manual shard_map)
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<16x32xf32>) -> (tensor<16x32xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", ?}, {?}], unreduced={"model"}>] out_shardings=[<@mesh, [{"data", ?}, {?}]>] manual_axes={"data"} (%arg1: tensor<8x32xf32>) { // expect: SC0512
      sdy.return %arg1 : tensor<8x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>
    return %0 : tensor<16x32xf32>
  }
}
