// SC0219 sharding-custom-partitioning
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @CustomSPMDPartitioning(%arg0) {api_version = 2 : i32, backend_config = "140234887351120"} : (tensor<8xf32>) -> tensor<8xf32> // expect: SC0219
  return %0 : tensor<8xf32>
}
