// SC0218 sharding-uneven-constraint
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<6x8xf32> // expect: SC0218
  return %0 : tensor<6x8xf32>
}
