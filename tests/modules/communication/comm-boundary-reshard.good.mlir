// SC0903 comm-boundary-reshard: the argument arrives sharded as the shard_map's in_specs take it, P('data', None): nothing is resharded before the kernel
module @jit_step attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<4096x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<4096x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data", "model"} (%arg1: tensor<1024x1024xf32>) {
      %1 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\"custom_call_config\": {\"body\": \"\"}}", kernel_name = "scale_kernel"} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
      sdy.return %1 : tensor<1024x1024xf32>
    } : (tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
    return %0 : tensor<4096x1024xf32>
  }
}
