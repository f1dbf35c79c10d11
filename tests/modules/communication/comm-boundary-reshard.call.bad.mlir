// SC0903 comm-boundary-reshard: as JAX lowers it, the shard_map body calls @shmap_body, which runs the Pallas kernel; the argument sharded P(None, 'model') is all-gathered over "model" to the in_specs P('data', None) before it
module @jit_step attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<4096x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<4096x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data", "model"} (%arg1: tensor<1024x1024xf32>) { // expect: SC0903
      %1 = func.call @shmap_body(%arg1) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
      sdy.return %1 : tensor<1024x1024xf32>
    } : (tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
    return %0 : tensor<4096x1024xf32>
  }
  func.func private @shmap_body(%arg0: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
    %0 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\"custom_call_config\": {\"body\": \"\"}}", kernel_name = "scale_kernel"} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    return %0 : tensor<1024x1024xf32>
  }
}
