// SC0215 sharding-sdy-op: the named computation's sdy.return gives one value for two results
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:2 = sdy.named_computation<"foo">(%arg0) (%arg1: tensor<8xf32>) { // expect: SC0215
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}
