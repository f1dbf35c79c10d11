// SC0213 sharding-rule
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {j=8, i=8}, custom>} : (tensor<8x8xf32>) -> tensor<8x8xf32> // expect: SC0213
  return %0 : tensor<8x8xf32>
}
