sdy.mesh @mesh = <["x"=8, "y"=2, "x"=4]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4, "x":(2)2, "y", "x"}]>}) -> tensor<16xf32> {
  %0 = sdy.all_gather [{"x":(2)2, "x":(2)2}] %arg0 out_sharding=<@mesh, [{}]> : tensor<16xf32>
  return %0 : tensor<16xf32>
}
