// platform: tpu
// TPU host callback (send/recv with is_host_transfer) pinned to device 0 inside shard_map.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}]>] out_shardings=[<@mesh, [{"data"}]>] manual_axes={"data"} (%arg1: tensor<4xf32>) {
      %1 = stablehlo.after_all : !stablehlo.token
      %2 = "stablehlo.send"(%arg1, %1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true}> {mhlo.frontend_attributes = {_xla_host_transfer_handler_name = "pjrt_rendezvous", _xla_host_transfer_rendezvous = "host_callback_1"}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token // expect: SC0401
      %3:2 = "stablehlo.recv"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>, is_host_transfer = true}> {mhlo.frontend_attributes = {_xla_host_transfer_handler_name = "pjrt_rendezvous", _xla_host_transfer_rendezvous = "host_callback_2"}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>, <@maximal_mesh_0, []>]>} : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token) // folded into the send's SC0401 (related site)
      sdy.return %3#0 : tensor<4xf32>
    } : (tensor<16xf32>) -> tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
