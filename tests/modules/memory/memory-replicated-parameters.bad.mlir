// SC0802 memory-replicated-parameters
// mesh: data=2,model=4
// The 256 MiB weight is replicated on all 8 devices.
module @jit_forward attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<8192x8192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, // expect: SC0802
                         %arg1: tensor<64x8192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
      -> (tensor<64x8192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0] : (tensor<64x8192xf32>, tensor<8192x8192xf32>) -> tensor<64x8192xf32>
    return %0 : tensor<64x8192xf32>
  }
}
