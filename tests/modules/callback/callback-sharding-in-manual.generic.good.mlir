// Generic form (mlir-opt --mlir-print-op-generic) but for sdy.mesh: pure_callback inside shard_map without a sharding runs per shard.
"builtin.module"() <{sym_name = "jit_f"}> ({
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  sdy.mesh @mesh = <["data"=4]>
  "func.func"() <{function_type = (tensor<16xf32>) -> tensor<16xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<16xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"data"}]>]>, manual_axes = #sdy<manual_axes{"data"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"data"}]>]>}> ({
    ^bb0(%arg1: tensor<4xf32>):
      %1 = "stablehlo.custom_call"(%arg1) <{call_target_name = "xla_ffi_python_cpu_callback"}> {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>
      "sdy.return"(%1) : (tensor<4xf32>) -> ()
    }) : (tensor<16xf32>) -> tensor<16xf32>
    "func.return"(%0) : (tensor<16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
