// A Mosaic GPU kernel in a shard_map that leaves "model" automatic.
module @jit_step attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>} loc("x")) -> (tensor<256xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", ?}]>] out_shardings=[<@mesh, [{"data", ?}]>] manual_axes={"data"} (%arg1: tensor<64xf32>) {
      %1 = stablehlo.custom_call @mosaic_gpu_v2(%arg1) {mhlo.backend_config = {kernel_hash = "\A4,O\92\88\FB;\FC", module = "ML\EFR\01MLIRgooglex-trunk\00", use_custom_barrier = false, uses_xla_collective_metadata = false}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<64xf32>) -> tensor<64xf32> // expect: SC0303
      sdy.return %1 : tensor<64xf32>
    } : (tensor<256xf32>) -> tensor<256xf32>
    return %0 : tensor<256xf32>
  }
}
