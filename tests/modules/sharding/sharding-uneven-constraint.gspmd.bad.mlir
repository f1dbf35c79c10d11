// SC0218 sharding-uneven-constraint (QA s06: GSPMD @Sharding, 17 rows on 8 devices)
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<17x256xf32>) -> (tensor<17x256xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[8,1]<=[8]}"} : (tensor<17x256xf32>) -> tensor<17x256xf32> // expect: SC0218
    return %0 : tensor<17x256xf32>
  }
}
