// The same kernel wrapped in shard_map over every mesh axis: legal.
#loc1 = loc("train.py":41:12)
#loc2 = loc("train.py":44:10)
#loc3 = loc("step"(#loc1))
#loc4 = loc("pallas_call:"(#loc2))
module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<128x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<128x256xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<128x256xf32> loc(#loc3)
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<32x256xf32> loc(#loc4)) {
      %2 = stablehlo.custom_call @tpu_custom_call(%arg1) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElS\22, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "add_one", operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<32x256xf32>) -> tensor<32x256xf32> loc(#loc4)
      sdy.return %2 : tensor<32x256xf32> loc(#loc4)
    } : (tensor<128x256xf32>) -> tensor<128x256xf32> loc(#loc4)
    return %1 : tensor<128x256xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
