

// CHECK: sdy.mesh @empty_mesh = <[]>

// CHECK-LABEL: func @inlined_empty_mesh(
// CHECK-SAME:    %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@empty_mesh, [{}, {}]>})
func.func @inlined_empty_mesh(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<[]>, [{}, {}]>}) -> tensor<8x8xf32> {
  // CHECK-NEXT: stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@empty_mesh, [{}, {}]>]>
  %0 = stablehlo.add %arg0 // CHECK-NEXT: sdy.sharding_constraint %[[RESHARD]] <@mesh_1, [{}, {"x"}]>
  %0 = sdy.data_flow_edge %arg0 sharding=<mesh<["x"=2]>, [{"x"}, {}]> : tensor<8x8xf32>
  %1 = sdy.reshard %0 <mesh<["y"=4]>, [{}, {"y"}]> : tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <mesh<["x"=2], device_ids=[1, 0]>, [{}, {"x"}]> : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

