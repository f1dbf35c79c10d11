// mesh: data=4:explicit
// Inside shard_map the kernel sees per-device blocks.
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]>
  func.func public @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"data"}, {}]> : tensor<64x128xf32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"data"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data"} (%arg1: tensor<16x128xf32>) {
      %2 = stablehlo.custom_call @__gpu$xla.gpu.triton(%arg1) {mhlo.backend_config = {debug = false, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\EFR\0DMLIRgooglex-trunk\00", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<16x128xf32>) -> tensor<16x128xf32>
      sdy.return %2 : tensor<16x128xf32>
    } : (tensor<64x128xf32>) -> tensor<64x128xf32>
    return %1 : tensor<64x128xf32>
  }
}
