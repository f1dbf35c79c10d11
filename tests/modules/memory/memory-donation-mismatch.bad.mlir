// SC0803 memory-donation-mismatch
// mesh: data=2,model=4
// The donated state comes back sharded on the other dimension (jax#25346).
module @jit_update attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<1024x1024xf32> {tf.aliasing_output = 0 : i32, sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) // expect: SC0803
      -> (tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    return %0 : tensor<1024x1024xf32>
  }
}
