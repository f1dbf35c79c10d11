// A sharding that names an axis the mesh does not have.
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"modle"}]>}) -> tensor<16x32xf32> {
    return %arg0 : tensor<16x32xf32>
  }
}
