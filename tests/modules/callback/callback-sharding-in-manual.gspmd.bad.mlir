// GSPMD form: {maximal device=0} on a callback in a fully manual shard_map body.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32> {mhlo.sharding = "{devices=[4]<=[4]}"} loc("x")) -> (tensor<16xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[4]<=[4]}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<16xf32>) -> tensor<16xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<16xf32>) -> tensor<4xf32>
    %2 = call @shmap_body(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<4xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<4xf32>) -> tensor<16xf32>
    return %4 : tensor<16xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "[('data',)]"}) {
    %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], mhlo.sharding = "{maximal device=0}"} : (tensor<4xf32>) -> tensor<4xf32> // expect: SC0401
    return %1 : tensor<4xf32>
  }
}
