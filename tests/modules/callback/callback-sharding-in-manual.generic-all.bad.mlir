// Generic form throughout (mlir-opt --mlir-print-op-generic), sdy.mesh and func arg_attrs included: pure_callback(..., sharding=SingleDeviceSharding(d)) inside shard_map.
"builtin.module"() <{sym_name = "jit_f"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<[], device_ids=[0]>, sym_name = "maximal_mesh_0"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<["data"=4]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}], function_type = (tensor<16xf32>) -> tensor<16xf32>, res_attrs = [{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<16xf32>):
    %0 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"data"}]>]>, manual_axes = #sdy<manual_axes{"data"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"data"}]>]>}> ({
    ^bb0(%arg1: tensor<4xf32>):
      %1 = "stablehlo.custom_call"(%arg1) <{call_target_name = "xla_ffi_python_cpu_callback"}> {mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<4xf32>) -> tensor<4xf32> // expect: SC0401
      "sdy.return"(%1) : (tensor<4xf32>) -> ()
    }) : (tensor<16xf32>) -> tensor<16xf32>
    "func.return"(%0) : (tensor<16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
