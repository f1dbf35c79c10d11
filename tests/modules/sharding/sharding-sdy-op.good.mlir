// SC0215 sharding-sdy-op
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : tensor<8xf32>
  return %0 : tensor<8xf32>
}
