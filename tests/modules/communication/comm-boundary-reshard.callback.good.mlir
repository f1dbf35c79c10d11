// SC0903 comm-boundary-reshard: the callback runs inside a fully manual shard_map ({manual}, one call per device on its own shard): nothing is gathered
module @jit_step attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  sdy.mesh @empty_mesh = <[]>
  func.func public @main(%arg0: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {"model"}]>] out_shardings=[<@mesh, [{"data"}, {"model"}]>] manual_axes={"data", "model"} (%arg1: tensor<256x512xf32>) {
      %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {api_version = 4 : i32, has_side_effect = true, mhlo.frontend_attributes = {_xla_compute_type = "host"}, sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, [{}, {}]>]>} : (tensor<256x512xf32>) -> tensor<256x512xf32>
      sdy.return %1 : tensor<256x512xf32>
    } : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    return %0 : tensor<1024x1024xf32>
  }
}
