// SC0208 sharding-axis-order
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], replicated={"x", "y"}>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
