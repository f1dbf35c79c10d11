/* fixes.h — helpers shared by the kernel (SC03xx) and callback (SC04xx) rules: how an op sits in the
 * mesh (manual axes, free axes, the enclosing manual computation), diagnostic context, PartitionSpec
 * rendering, small readers for the attribute dictionaries kernels carry, and fix builders (JAX
 * snippets with this module's axes and specs, and machine edits of the module text).
 *
 * Everything allocates from ctx->arena; nothing here does I/O. Internal to libshardcheck. */
#ifndef SC_FIXES_H
#define SC_FIXES_H

#include "ir/ir.h"
#include "model/model.h"
#include "rules/rules.h"

/* Which partitioner's annotations the module carries. */
typedef enum { SC_PART_NONE = 0, SC_PART_SHARDY, SC_PART_GSPMD } ru_partitioner;
ru_partitioner ru_kc_partitioner(const ir_module *m);
const char *ru_partitioner_name(ru_partitioner p);

/* How an op sits in the mesh it is checked against. */
typedef struct {
  const md_mesh *mesh;              /* effective mesh, NULL if none */
  const md_manual_context *mc;      /* never NULL (an empty context if the model has none) */
  bool fully_manual;                /* md_model_fully_manual() */
  bool in_manual;                   /* inside some manual region (Shardy or GSPMD) */
  bool partial;                     /* in a manual region that is not fully manual */
  int64_t devices;                  /* devices of the effective mesh (1 if none) */
  const md_axis **free;             /* effective-mesh axes of size > 1 that are not manual here */
  uint32_t nfree;
  bool free_unknown;                /* GSPMD partial region: free axes can't be named */
} ru_where;

ru_where ru_locate(ru_ctx *ctx, const ir_op *op);
/* True if the axis is manual for this op (named in the manual context or typed manual in the mesh). */
bool ru_axis_manual(const ru_where *w, ir_span name);
const md_axis *ru_mesh_axis(const md_mesh *mesh, ir_span name);

/* "data=4,model=2" (empty mesh: "{}"); NULL mesh: "(none)". */
const char *ru_kc_mesh_str(sc_arena *a, const md_mesh *mesh);
/* "{data, model}" from a list of axis names. */
const char *ru_axis_set(sc_arena *a, const ir_span *names, uint32_t n);
/* "{'data', 'model'}" — a Python set literal of all axes of size > 1 (all axes if none is > 1). */
const char *ru_py_axis_names(sc_arena *a, const md_mesh *mesh);
/* "jax.make_mesh((4, 2), ('data', 'model'))" */
const char *ru_py_make_mesh(sc_arena *a, const md_mesh *mesh);
/* The Python name of the lowered function: `jit_train_step` -> "train_step"; "f" when unknown. */
const char *ru_py_fn_name(ru_ctx *ctx);
/* The entry function's arguments as `jax.ShapeDtypeStruct((8, 16), jnp.float32), ...`; NULL when a
 * type is not a static array of a known dtype. */
const char *ru_py_arg_structs(ru_ctx *ctx);
/* One type as `jax.ShapeDtypeStruct((8, 16), jnp.float32)`, or NULL. */
const char *ru_py_struct(sc_arena *a, ir_span type);
/* How the module was lowered: "1 device (mhlo.num_partitions = 1)", "mesh a=2 (2 devices)". */
const char *ru_module_mesh_str(ru_ctx *ctx, int64_t *devices_out);
/* The module was lowered for a different device count than the requested target mesh. */
bool ru_retargeted(ru_ctx *ctx);

/* Adds the standard context: manual_axes, mesh_axes, mesh, mesh_source, manual_computation,
 * partitioner, platform. */
void ru_context(ru_ctx *ctx, sc_diag *d, const ru_where *w);

/* "P('data', None)" for a named sharding; axes for which skip(name) is true are left out (NULL skip =
 * keep all). NULL if the sharding is not named (GSPMD tile assignments without axis names). */
typedef bool (*ru_axis_pred)(const ru_where *w, ir_span name);
const char *ru_pspec(sc_arena *a, const md_sharding *s, const ru_where *w, ru_axis_pred skip);
/* Parses a Shardy per-value list "[<@mesh, [...]>, ...]" (in_shardings=...), entry i; NULL if absent. */
const md_sharding *ru_sdy_list_entry(sc_arena *a, ir_span list, uint32_t index);
/* The sharding of a value as far as the model or an enclosing manual computation tells. */
const md_sharding *ru_value_sharding(ru_ctx *ctx, const ir_value *v);
/* Operand `k` of `op`'s sharding: its value's (ru_value_sharding), or the propagated sharding of the
 * op's own copy when the operand is a constant expression other ops use too (Shardy copies it per use). */
const md_sharding *ru_operand_sharding(ru_ctx *ctx, const ir_op *op, uint32_t k);

/* Reads `key = value` at the top level of an MLIR attribute dict `{...}` (or HLO `{k=v, ...}`);
 * empty span if absent. */
ir_span ru_dict_get(ir_span dict, const char *key);
/* Looks for a JSON key in a possibly escaped JSON text (\22 / \" quoting) and reads a bool after it:
 * 1 true, 0 false, -1 absent. */
int ru_json_bool(ir_span text, const char *key);
bool ru_json_has(ir_span text, const char *key);
/* Finds `needle` in a span. */
const char *ru_find(ir_span hay, const char *needle);

/* The text of a custom-call's backend config (MLIR `backend_config`/`mhlo.backend_config`, HLO
 * `backend_config`), raw. */
ir_span ru_backend_config(const ir_op *op);
/* A frontend attribute (`mhlo.frontend_attributes = {k = "..."}` / HLO `frontend_attributes={k="..."}`). */
ir_span ru_frontend_attr(const ir_op *op, const char *key);

/* The op's own sharding attribute: sdy.sharding, mhlo.sharding or HLO sharding; NULL if none. */
const ir_attr *ru_sharding_attr(const ir_op *op);

/* ---- Fixes ---- */

/* A shard_map snippet: `jax.shard_map(fn, mesh=mesh, in_specs=(...), out_specs=..., axis_names={...})`
 * preceded by the mesh it needs. in/out specs are rendered PartitionSpecs (NULL entries = "P()"). */
const char *ru_shard_map_snippet(sc_arena *a, const md_mesh *mesh, const char *fn, const char **in_specs,
                                    uint32_t nin, const char **out_specs, uint32_t nout, const char *axis_names,
                                    const char *comment);

/* Machine fix: wraps `op` in an sdy.manual_computation over `axes` with replicated in/out shardings
 * (what jax.shard_map(f, in_specs=P(), out_specs=P()) lowers to), inserting the sdy.mesh it needs.
 * Returns NULL (and adds nothing) where the edit would not be safe (GSPMD/HLO modules, missing types,
 * a module mesh that differs from the target). */
sc_fix *ru_fix_wrap_manual(ru_ctx *ctx, sc_diag *d, const ir_op *op, const ru_where *w, const char *title);

/* Machine edit: removes attribute `at` (and its separating comma; an emptied `{}` goes too). */
void ru_edit_remove_attr(ru_ctx *ctx, sc_fix *f, const ir_attr *at);
/* Machine edit: replaces the op's sharding attribute value (or adds one) so that every result runs on
 * device `device` (maximal sharding), in the module's own annotation style. Returns false if no safe
 * edit exists. */
bool ru_edit_set_maximal(ru_ctx *ctx, sc_fix *f, const ir_op *op, int64_t device);
/* Machine edit: makes the op's sharding per-device manual ({manual} / removes sdy.sharding). */
bool ru_edit_set_manual(ru_ctx *ctx, sc_fix *f, const ir_op *op);

/* Position of a source line: 1-based line of an op. */
uint32_t ru_line(const ir_linemap *lines, const ir_op *op);
/* "`name`" for a kernel: kernel_name / backend name / target. */
const char *ru_kernel_name(sc_arena *a, const ir_op *op);
/* The kernel body's Python name (what pl.pallas_call takes first) when the module records one
 * (kernel_name, backend config name, metadata); NULL when only the custom-call target is known. */
const char *ru_kernel_body(sc_arena *a, const ir_op *op);
/* The Python function that calls pl.pallas_call for `op`, as the module names it: the nested jit's
 * function holding the call (a private func.func / HLO computation: `@matmul` from
 * `jax.jit(matmul)`), else the jitted function (module @jit_func -> "func"); NULL if neither is
 * named. `*fn_op` (optional) gets that function's op (NULL for the module's jitted function when the
 * kernel sits in a generic body such as shmap_body). */
const char *ru_py_caller(ru_ctx *ctx, const ir_op *op, const ir_op **fn_op);
/* "matmul.py:68" — where Python called pl.pallas_call, from the op's debug info; NULL without. */
const char *ru_py_call_site(ru_ctx *ctx, const ir_op *op);

#endif
