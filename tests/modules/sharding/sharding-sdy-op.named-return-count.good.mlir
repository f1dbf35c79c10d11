// SC0215 sharding-sdy-op: one value returned per result
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:2 = sdy.named_computation<"foo">(%arg0) (%arg1: tensor<8xf32>) {
    sdy.return %arg1, %arg1 : tensor<8xf32>, tensor<8xf32>
  } : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}
