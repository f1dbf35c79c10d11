// mesh: data=4:explicit
// A Triton kernel in a nested jit (a private callee whose arguments carry no sharding), fed through the call an
// array sharded over an Explicit mesh axis.
module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result"}) {
    %0 = call @inner(%arg0) : (tensor<64x128xf32>) -> tensor<64x128xf32>
    return %0 : tensor<64x128xf32>
  }
  func.func private @inner(%arg0: tensor<64x128xf32>) -> tensor<64x128xf32> {
    %1 = stablehlo.custom_call @__gpu$xla.gpu.triton(%arg0) {mhlo.backend_config = {debug = false, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\EFR\0DMLIRgooglex-trunk\00", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<64x128xf32>) -> tensor<64x128xf32> // expect: SC0302
    return %1 : tensor<64x128xf32>
  }
}
