// SC0902 comm-implicit-collective: the negate's result is sharded over "data" only, so the 8 GiB arg is all-gathered over "model": 2 GiB per device, over the 1 GiB default
// mesh: data=2,model=2
module @jit_step attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func public @main(%arg0: tensor<65536x32768xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "model"}, {}]>}) -> tensor<65536x32768xf32> {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<65536x32768xf32> // expect: SC0902
    return %0 : tensor<65536x32768xf32>
  }
}
