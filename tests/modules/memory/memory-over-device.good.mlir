// SC0801 memory-over-device
// mesh: data=2,model=4;device_kind=v5e
// The embedding sharded over both axes: 6 GiB per device.
module @jit_train_step attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<393216x32768xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "model"}, {}]>},
                         %arg1: tensor<64x32768xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
      -> (tensor<64x393216xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [1] : (tensor<64x32768xf32>, tensor<393216x32768xf32>) -> tensor<64x393216xf32>
    return %0 : tensor<64x393216xf32>
  }
}
