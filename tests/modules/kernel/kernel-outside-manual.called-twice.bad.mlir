module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<16x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<16x128xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<4x128xf32>) {
      %1 = func.call @kern(%arg1) : (tensor<4x128xf32>) -> tensor<4x128xf32>
      sdy.return %1 : tensor<4x128xf32>
    } : (tensor<16x128xf32>) -> tensor<16x128xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.slice %0 [0:4, 0:128] : (tensor<16x128xf32>) -> tensor<4x128xf32>
    %3 = call @kern(%2) : (tensor<4x128xf32>) -> tensor<4x128xf32>
    %4 = stablehlo.pad %3, %cst, low = [0, 0], high = [12, 0], interior = [0, 0] : (tensor<4x128xf32>, tensor<f32>) -> tensor<16x128xf32>
    %5 = stablehlo.add %0, %4 : tensor<16x128xf32>
    return %5 : tensor<16x128xf32>
  }
  func.func private @kern(%arg0: tensor<4x128xf32>) -> tensor<4x128xf32> {
    %0 = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElS\22}}", kernel_name = "k", operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<4x128xf32>) -> tensor<4x128xf32> // expect: SC0301
    return %0 : tensor<4x128xf32>
  }
}
