#m = #sdy.mesh<["x"=2, "y"=2]>
#s = #sdy.sharding<@mesh, [{"x"}, {}]>
#t = #s
#cycle_a = #cycle_b
#cycle_b = #cycle_a
#junk = #sdy.sharding<@mesh, [{"nope"}, {}, {}]>
#list = #sdy.sharding_per_value<[#t]>
sdy.mesh @mesh = #m
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #t}, %arg1: tensor<8x8xf32> {sdy.sharding = #cycle_a}) -> (tensor<8x8xf32> {sdy.sharding = #junk}) {
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #list} : tensor<8x8xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[#s]>} : tensor<8x8xf32>
  %2 = sdy.manual_computation(%1) in_shardings=[#s] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg2: tensor<4x8xf32>) {
    sdy.return %arg2 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 #t : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
