sdy.mesh @mesh = <["x"=8, "y"=2, "x"=4]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding}) -> tensor<16xf32> {
  %0 = sdy.all_gather [{"x":(2)2, "x":(2)2}] %ar0 ouor<16xf32>
}
