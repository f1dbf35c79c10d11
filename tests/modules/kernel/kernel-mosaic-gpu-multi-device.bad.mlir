// A communicating Mosaic GPU kernel at top level on two devices.
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = stablehlo.custom_call @mosaic_gpu_v2(%arg0) {mhlo.backend_config = {kernel_hash = "\A4,O\92\88\FB;\FC", module = "ML\EFR\01MLIRgooglex-trunk\00", use_custom_barrier = false, uses_xla_collective_metadata = true}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<256xf32>) -> tensor<256xf32> // expect: SC0308
    return %0 : tensor<256xf32>
  }
}
