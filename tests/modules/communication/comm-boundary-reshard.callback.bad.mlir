// SC0903 comm-boundary-reshard: a host callback outside shard_map runs on device 0 (maximal sharding), so the argument sharded P('data', 'model') is all-gathered before it
module @jit_step attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {api_version = 4 : i32, has_side_effect = true, mhlo.frontend_attributes = {_xla_compute_type = "host"}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32> // expect: SC0903
    return %0 : tensor<1024x1024xf32>
  }
}
