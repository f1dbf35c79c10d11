// GSPMD form: a Triton kernel at top level of a 4-way partitioned module.
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x128xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"} loc("x")) -> (tensor<64x128xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = stablehlo.custom_call @__gpu$xla.gpu.triton(%arg0) {mhlo.backend_config = {debug = false, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\EFR\0DMLIRgooglex-trunk\00", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<64x128xf32>) -> tensor<64x128xf32> // expect: SC0303
    return %0 : tensor<64x128xf32>
  }
}
