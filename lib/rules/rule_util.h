/* rule_util.h — internal helpers shared by the mesh, sharding, manual and collective rule families
 * (lib/rules/mesh.c, sharding.c, manual.c, collective.c). */
#ifndef SC_RULE_UTIL_H
#define SC_RULE_UTIL_H

#include "model/model.h"
#include "rules/rules.h"

/* Types */
ir_span ru_result_type(const ir_op *op, uint32_t i);
ir_span ru_operand_type(const ir_op *op, uint32_t i);
ir_span ru_arg_type(const ir_op *func, uint32_t i);
ir_span ru_func_result_type(const ir_op *func, uint32_t i);
/* Number of func.func results (declared). */
uint32_t ru_func_nresults(const ir_op *func);
bool ru_is_func(const ir_op *op);
/* Whether the model keeps a record of `op`'s annotations (one of the ops md_annotated_first/next visit). */
bool ru_annotated(const ru_ctx *ctx, const ir_op *op);
/* The entry block of an op's first region, or NULL. */
const ir_block *ru_body(const ir_op *op);
/* The terminator (last op) of a single-block region, or NULL. */
const ir_op *ru_terminator(const ir_op *op);
/* Renders a type list "'t1', 't2'". */

/* Where a sharding is written and what it shards. */
typedef enum {
  RU_FUNC_ARG = 0,
  RU_FUNC_RESULT,
  RU_OP_RESULT,  /* sdy.sharding on an op */
  RU_SDY_OP,     /* sdy.sharding_constraint/reshard/data_flow_edge `<...>`, collectives `out_sharding` */
  RU_MC_IN,      /* sdy.manual_computation in_shardings */
  RU_MC_OUT,
  RU_NC_IN,      /* sdy.named_computation in_shardings */
  RU_NC_OUT,
} ru_site_kind;

typedef struct {
  ru_site_kind kind;
  const ir_op *op;  /* the op carrying the annotation (the func for args/results) */
  uint32_t offset;  /* where to report (the op's line; for func args/results the func's) */
  const md_sharding *s;
  uint32_t index;
  uint32_t count;   /* number of values of this kind (results/operands/args) */
  ir_span type;     /* type of the value sharded; empty if unknown */
  bool typeless;    /* an op without results carrying one sharding */
  const char *what; /* "arg 0", "result", "result 1", "operand", "in_shardings", ... */
} ru_site;

typedef void (*ru_site_fn)(ru_ctx *ctx, const ru_site *site, void *user);
/* Calls fn for every Shardy sharding in the module (after value-count problems are excluded). */
void ru_for_each_sdy_site(ru_ctx *ctx, ru_site_fn fn, void *user);

/* The first problem of a Shardy sharding at a site, in the order Shardy's verifier checks, with the
 * rule it belongs to ("sharding-unknown-mesh", "sharding-rank", "sharding-priority",
 * "sharding-unknown-axis", "sharding-duplicate-axis", "sharding-sub-axis", "sharding-axis-order",
 * "manual-axis-rebound"). Returns NULL if the sharding is fine. */
const char *ru_site_problem(ru_ctx *ctx, const ru_site *site, const char **rule);

/* Site callback that reports the site's first problem if it belongs to the running rule. */
void ru_site_report(ru_ctx *ctx, const ru_site *site, void *user);
/* Reports the running rule's site problems through `report` (ru_site_report, lib/rules/sharding.c):
 * every Shardy sharding is verified once per request (the first call collects all problems into the
 * request's rule cache, ctx->rule_cache), then each rule reports its own. The reporter is passed in so
 * these helpers stay below the families that phrase the diagnostics. */
void ru_report_site_problems(ru_ctx *ctx, ru_site_fn report);

/* The request's memo table of the sharding rules (lib/model/memo.h): results that depend only on a
 * sharding's text and a value's type are computed once per distinct pair. Each user tags its keys
 * with its own RU_MEMO_* bit (plus whatever else its result depends on, e.g. the sharding's kind). */
struct md_memo *ru_memo(ru_ctx *ctx);
#define RU_MEMO_VERDICT (UINT64_C(1) << 32) /* ru_site_problem */
#define RU_MEMO_UNEVEN (UINT64_C(1) << 33)  /* sharding-uneven-constraint */
#define RU_MEMO_MANUAL_VALUES (UINT64_C(1) << 34) /* manual-axis-order/-divisibility/-local-shape, | op id */
#define RU_MEMO_TARGET_MESHES (UINT64_C(1) << 35) /* fixes: the module meshes a wrap fix may name */
/* The memo key of a sharding's content: its model identity (md_sharding.same_as, 8 bytes) when it has
 * one, else its text; ORs into *tag what it depends on besides (source, resolution, kind). */
ir_span ru_sharding_key(const md_sharding *s, uint64_t *tag);

/* "[\"x\", \"y\":(1)2]" */
const char *ru_axes_str(sc_arena *a, const md_axis_ref *axes, uint32_t n);
/* Overlap between two axis refs of the same mesh (sub-axis ranges intersect). */
bool ru_axes_overlap(const md_axis_ref *a, const md_axis_ref *b, const md_mesh *mesh);
bool ru_axis_eq(const md_axis_ref *a, const md_axis_ref *b, const md_mesh *mesh);
/* Whether op `anc` (transitively) contains op/value definitions: is `op` nested in `anc`'s regions. */
bool ru_op_inside(const ir_op *op, const ir_op *anc);
/* Whether a value is defined inside `anc` (result of a nested op or argument of a nested block). */
bool ru_value_inside(const ir_value *v, const ir_op *anc);
/* Number of uses of a value in ctx->module (operands naming it). */
uint32_t ru_value_uses(ru_ctx *ctx, const ir_value *v);
/* One use of an op's result: operand `operand` of op `user`. */
typedef struct {
  const ir_op *user;
  uint32_t operand;
} ru_use;
/* The uses of op's results in ctx->module, in module order (by user op, then operand): *n of them. */
const ru_use *ru_op_uses(ru_ctx *ctx, const ir_op *op, uint32_t *n);
/* A sharding rendered in Shardy syntax: <@mesh, [{"x"}, {}]> */
const char *ru_sharding_str(sc_arena *a, const md_sharding *s);
/* Same mesh: same symbol, or (inline meshes) same axes and device ids. */
bool ru_meshes_match(const md_mesh *x, const md_mesh *y);
/* Mesh text as Shardy prints it: #sdy.mesh<["x"=2, "y"=4]> */
const char *ru_mesh_str(sc_arena *a, const md_mesh *m);
/* How a message names a mesh: `@name` when declared, else its text (an inline mesh). */
const char *ru_mesh_ref(sc_arena *a, const md_mesh *m);

/* Machine-fix helpers. The byte range of a piece of a Shardy sharding written in the module:
 * the `pN` priority after dimension `dim`, or the `{...}` of replicated= / unreduced=. */
enum { RU_PIECE_PRIORITY = 1, RU_PIECE_REPLICATED, RU_PIECE_UNREDUCED };
bool ru_sharding_piece(const ir_module *m, const md_sharding *s, int what, uint32_t dim, uint32_t *off, uint32_t *len);
/* {"a", "b":(1)2} */
const char *ru_axes_set_str(sc_arena *a, const md_axis_ref *axes, uint32_t n);
/* A copy sorted in mesh order. */
md_axis_ref *ru_sorted_axes(sc_arena *a, const md_axis_ref *axes, uint32_t n, const md_mesh *mesh);

/* Attaches the tiling of a sharded tensor to `d` for the report's pictures (lib/report/tiling.c reads
 * them back): "tensor" (what it is: `what`), "tensor_shape" (dimension sizes, -1 dynamic),
 * "tensor_mesh" ("name=size" per mesh axis, device order iota), "tensor_dim_axes" (per sharding
 * dimension the indices into tensor_mesh of its axes, major first, "i" or "i:(pre)size" for a sub-axis,
 * joined by ','), and "tensor_dim" (the flagged dimension, when dim >= 0). GSPMD tile assignments in
 * iota order become a mesh of one axis per tile dimension ("dim0", ..., "replicated"). Attaches nothing
 * when the picture would not be faithful (explicit device order, transposed tiles, unknown shape) or
 * too large (more than RU_TILING_MAX_AXES axes or dimensions). Linear in the axes and dimensions. */
#define RU_TILING_MAX_AXES 16u
void ru_tensor_context(ru_ctx *ctx, sc_diag *d, const md_sharding *s, ir_span type, const char *what, int32_t dim);

#endif
