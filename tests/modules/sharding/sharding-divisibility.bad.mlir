// SC0210 sharding-divisibility
module @jit_f {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<6xf32> { // expect: SC0210
    return %arg0 : tensor<6xf32>
  }
}
