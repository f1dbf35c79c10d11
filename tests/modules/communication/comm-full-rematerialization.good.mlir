// SC0901 comm-full-rematerialization: the negate keeps the arg's sharding over "data": nothing is gathered
// mesh: data=2,model=4
module @jit_step attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<1024x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<1024x4096xf32> {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<1024x4096xf32>
    return %0 : tensor<1024x4096xf32>
  }
}
