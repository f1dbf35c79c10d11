// SC0105 mesh-device-count
module @jit_f {
  sdy.mesh @mesh = <["x"=8]>
  sdy.mesh @small = <["x"=2]> // expect: SC0105
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@small, [{"x"}]>}) {
    return %arg0 : tensor<8xf32>
  }
}
