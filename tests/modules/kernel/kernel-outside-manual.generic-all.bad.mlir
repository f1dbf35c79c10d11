// Generic form throughout (mlir-opt --mlir-print-op-generic), sdy.mesh and func arg_attrs included: a Pallas TPU kernel under jit on a 4-device mesh.
"builtin.module"() <{sym_name = "jit_step"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["data"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}], function_type = (tensor<32x128xf32>) -> tensor<32x128xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<32x128xf32>):
    %0 = "stablehlo.custom_call"(%arg0) <{backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgFNTElS\22}}", call_target_name = "tpu_custom_call"}> {kernel_name = "k"} : (tensor<32x128xf32>) -> tensor<32x128xf32> // expect: SC0301
    "func.return"(%0) : (tensor<32x128xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
