// A communicating Mosaic GPU kernel on a mesh with a non row-major device order.
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4], device_ids=[3, 2, 1, 0]>
  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<64xf32>) {
      %1 = stablehlo.custom_call @mosaic_gpu_v2(%arg1) {mhlo.backend_config = {kernel_hash = "\A4,O\92\88\FB;\FC", module = "ML\EFR\01MLIRgooglex-trunk\00", use_custom_barrier = false, uses_xla_collective_metadata = true}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<64xf32>) -> tensor<64xf32> // expect: SC0309
      sdy.return %1 : tensor<64xf32>
    } : (tensor<256xf32>) -> tensor<256xf32>
    return %0 : tensor<256xf32>
  }
}
