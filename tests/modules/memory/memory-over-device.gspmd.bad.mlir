// SC0801 memory-over-device
// mesh: x=8;device_kind=A100-SXM4-40GB
// GSPMD: a 192 GiB bf16 weight tiled over 4 of the 8 devices (2 replicas each): 48 GiB per device on a 40 GB A100.
module @jit_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16384x6291456xbf16> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}) -> (tensor<16384xbf16> {mhlo.sharding = "{devices=[8]<=[8]}"}) { // expect: SC0801
    %cst = stablehlo.constant dense<0.0> : tensor<bf16>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<16384x6291456xbf16>, tensor<bf16>) -> tensor<16384xbf16>
    return %0 : tensor<16384xbf16>
  }
}
