/* model.h — the normalized sharding model: meshes, shardings and each op's manual context.
 *
 * Built once per module (sc_model_build) before any rule runs; rules only read it. Shardy (`sdy.*`)
 * and GSPMD (`mhlo.sharding` strings, HLO `sharding=`) annotations map onto the same sc_sharding,
 * so a rule is written once for both. Everything lives in the request arena; spans point into the
 * input. Read-only after build; one thread at a time per arena. */
#ifndef SC_MODEL_H
#define SC_MODEL_H

#include "ir/ir.h"

typedef struct sc_model sc_model;

typedef struct {
  sc_span name;
  int64_t size;
  sc_axis_type type; /* from the target mesh; module meshes are auto unless manual here */
} sc_axis;

typedef struct sc_mesh {
  sc_span name;           /* symbol name without '@' ("mesh"); empty for an inline mesh */
  sc_axis *axes;
  uint32_t naxes;
  int64_t *device_ids;    /* explicit device order, NULL = iota */
  uint32_t ndevice_ids;
  bool maximal;           /* <[], device_ids=[k]> */
  int64_t devices;        /* product of axis sizes (1 for an empty or maximal mesh) */
  const sc_op *op;        /* the sdy.mesh op, NULL for inline/target/synthesized meshes */
  bool synthesized;       /* made up from num_partitions (one axis "_partitions"); names no real axes */
  uint32_t offset;        /* where it is written */
  const struct sc_name_map *axis_index; /* axis name -> index for large meshes (sc_mesh_index_axes), or NULL */
} sc_mesh;

/* A reference to a mesh axis or sub-axis: "x" or "x":(pre_size)size. */
typedef struct {
  sc_span name; /* the name's bytes. Inside a sharding they may lie in another occurrence of the same text
                   (occurrences share one parse): place a diagnostic with sc_sharding_pos(s, name). */
  bool sub;
  int64_t pre_size, size; /* size = full axis size when !sub (filled once the mesh is known, else 0) */
} sc_axis_ref;

typedef struct {
  sc_axis_ref *axes;
  uint32_t naxes;
  bool open;        /* `?` */
  int64_t priority; /* `p1` -> 1; -1 = none */
} sc_dim_sharding;

typedef enum {
  SC_SHARDING_NAMED = 0, /* per-dimension axes on a mesh (Shardy, or GSPMD mapped onto a mesh) */
  SC_SHARDING_REPLICATED,
  SC_SHARDING_MAXIMAL,   /* single device */
  SC_SHARDING_MANUAL,    /* GSPMD {manual} */
  SC_SHARDING_TILED,     /* GSPMD tile assignment not (yet) mapped onto named axes */
  SC_SHARDING_TUPLE,     /* GSPMD tuple; see elements */
  SC_SHARDING_UNKNOWN,   /* {unknown} or anything unrecognised */
  SC_SHARDING_UNREDUCED, /* GSPMD {unreduced} (every axis unreduced) */
} sc_sharding_kind;

typedef enum { SC_REDUCE_SUM = 0, SC_REDUCE_MAX, SC_REDUCE_MIN } sc_reduction;

typedef enum { SC_SHARDING_FROM_SDY = 0, SC_SHARDING_FROM_GSPMD, SC_SHARDING_FROM_PROPAGATION } sc_sharding_source;

typedef struct sc_sharding { /* fields grouped by size (no padding): one header per occurrence */
  sc_span text;              /* as written (for GSPMD: the string contents without quotes) */
  /* Shardy / named */
  sc_span mesh_name;         /* "@mesh" target without '@'; empty for inline meshes */
  const sc_mesh *mesh;       /* resolved mesh, NULL if unknown */
  sc_dim_sharding *dims;
  sc_axis_ref *replicated;
  sc_axis_ref *unreduced;
  sc_axis_ref *manual_axes;  /* GSPMD named sharding `manual={...}` */
  /* GSPMD */
  int64_t *tile_dims;        /* tile assignment dimensions, incl. trailing replicate/manual dims */
  int64_t *tile_devices;     /* flattened device list (iota expanded), NULL if none */
  uint64_t ntile_devices;
  uint8_t *last_tile_dims;   /* per trailing subgroup dim: 1 manual, 2 replicated, 3 maximal, 0 other */
  int64_t maximal_device;    /* SC_SHARDING_MAXIMAL: device id; -1 otherwise */
  struct sc_sharding **elements; /* SC_SHARDING_TUPLE */
  /* GSPMD iota tile assignment `<=[reshape]T(perm)` as written (niota_reshape 0 = explicit list) */
  int64_t *iota_reshape;
  int64_t *iota_perm;
  int64_t shard_group;       /* shard_as/shard_like N; -1 none */
  /* Built by the model: the first sharding parsed from the same text (itself for that one), so equal
   * `same_as` means equal content, mesh and mapping (rules memoize on it); NULL otherwise. */
  const struct sc_sharding *same_as;
  uint32_t offset;           /* where it is written */
  uint32_t rank;             /* of dims */
  uint32_t nreplicated;
  uint32_t nunreduced;
  uint32_t nmanual_axes;
  uint32_t ntile_dims;
  uint32_t nlast_tile_dims;
  uint32_t nelements;
  uint32_t niota_reshape;
  uint32_t niota_perm;
  /* the three enums in a byte each (a header per occurrence: ~10^5 in a large module) */
  uint8_t kind;              /* sc_sharding_kind */
  uint8_t source;            /* sc_sharding_source */
  uint8_t unreduced_op;      /* sc_reduction: unreduced=max{...} */
  bool last_tile_dim_replicate;
  bool mapped;               /* GSPMD tiled sharding mapped onto the named axes of `mesh` (kind NAMED) */
} sc_sharding;

/* Where `name` (an axis ref's or the mesh name's span of `s`) is written in the occurrence `s` itself:
 * occurrences of one text share its parse, whose names lie in the first occurrence's text. */
sc_span sc_sharding_pos(const sc_sharding *s, sc_span name);

/* Each op's manual context: the union of manual axes of enclosing manual computations (Shardy) or
 * whether the op is inside a GSPMD manual region (`@SPMDFullToShardShape` ... `@SPMDShardToFullShape`,
 * `{manual}`, `last_tile_dims={manual}`), following calls into private functions. A function reached from several call sites gets the least
 * manual of their contexts (not manual if any site is outside manual regions, else the intersection of
 * their manual axes; GSPMD-partial if any site is), so rules that require full manual see the worst case. */
typedef struct {
  const sc_op *manual_op;    /* innermost enclosing sdy.manual_computation / GSPMD region entry, or NULL */
  const sc_mesh *mesh;       /* mesh of that manual computation, or NULL */
  sc_span *manual_axes;      /* union over the nest */
  uint32_t nmanual_axes;
  bool gspmd_manual;         /* inside a GSPMD manual region */
  bool gspmd_partial;        /* ... whose manual sharding keeps some tile dims automatic */
} sc_manual_context;

/* One sharding annotation as written: an attribute (`sdy.sharding`, `mhlo.sharding`, HLO `sharding=`)
 * or a piece of an sdy op's custom syntax (`<@mesh, [...]>`, `in_shardings=[...]`, `out_sharding=<...>`). */
typedef struct {
  sc_span name;         /* attribute name ("sdy.sharding", "in_shardings", ...) */
  sc_span text;         /* the value as written */
  sc_sharding **values; /* parsed shardings (one per value for per-value forms) */
  uint32_t nvalues;
  uint32_t offset;      /* where the value starts */
  bool present;
  bool failed;          /* present but did not parse (see the model's errors) */
  bool per_value;       /* written as #sdy.sharding_per_value<[...]> or a `[...]` list */
} sc_annotation;

/* An item of an sdy op's custom syntax between the op name and its `:` type trailer:
 * `name=value`, an unnamed `<...>`/`[...]`/`{...}` group (empty name), or a bare keyword (empty value,
 * name = the keyword, e.g. the `max` of `sdy.all_reduce max {"y"}`). */
typedef struct {
  sc_span name;
  sc_span value;
  uint32_t offset; /* of the value (or keyword) */
} sc_sdy_item;

typedef struct {
  sc_annotation sdy;   /* sdy.sharding attribute */
  sc_annotation gspmd; /* mhlo.sharding / HLO sharding= */
} sc_value_annotations;

/* What the model knows about a manual / named computation or a round-trip manual-axes op: few ops
 * have any of it, so it lives apart (sc_op_info.sdy_op). */
typedef struct {
  sc_annotation in_shardings, out_shardings; /* sdy.manual_computation / sdy.named_computation */
  sc_axis_ref *manual_axes; /* sdy.manual_computation manual_axes={...} (also round-trip xla.sdy.manual_axes) */
  uint32_t nmanual_axes;
  uint32_t manual_axes_offset;
  bool has_manual_axes;
} sc_sdy_op_info;

/* A func.func's / HLO computation's annotations per argument and per result: few ops are functions, so
 * they live apart (sc_op_info.func). */
typedef struct {
  sc_value_annotations *args;
  sc_value_annotations *results;
  uint32_t nargs;
  uint32_t nresults;
} sc_func_annotations;

/* What the model knows about one op (model->ops[op->id]). */
typedef struct {
  sc_annotation sdy;        /* `sdy.sharding` attribute (ops: per value) */
  sc_annotation gspmd;      /* `mhlo.sharding` / HLO `sharding=` */
  sc_annotation sharding;   /* sdy.sharding_constraint/reshard `<...>`, data_flow_edge `sharding=`,
                               collectives `out_sharding=` */
  const sc_sdy_op_info *sdy_op; /* never NULL (an empty record for other ops) */
  const sc_func_annotations *func; /* never NULL (an empty record for other ops and bare functions) */
  sc_sdy_item *items;       /* custom syntax of sdy.* ops (pretty form) */
  uint32_t nitems;
} sc_op_info;

/* A sharding attribute that did not parse: reported by the `sharding-syntax` rule. */
typedef struct {
  const sc_op *op;
  uint32_t offset;
  const char *message;
} sc_model_error;

struct sc_model {
  sc_mesh *meshes;            /* sdy.mesh declarations in order */
  uint32_t nmeshes;
  int64_t num_partitions;     /* mhlo.num_partitions / HLO num_partitions; -1 if absent */
  int64_t num_replicas;       /* -1 if absent */
  const sc_mesh *target;      /* the request's mesh, NULL if none was given */
  /* What the module is checked against: the target if given, else the module's single mesh or a mesh
   * synthesized from num_partitions (one axis "_partitions"), else NULL. */
  const sc_mesh *effective;
  sc_platform platform;
  const sc_manual_context **manual; /* indexed by op->id; NULL = in no manual context (use sc_model_manual) */
  sc_op_info **ops;           /* indexed by op->id; NULL when the op has nothing (use sc_model_op) */
  const sc_op **annotated;    /* the ops that have a record in `ops`, in module order (rules that only
                                 look at annotated ops walk these instead of every op) */
  uint32_t nannotated;
  const sc_module *module;
  sc_model_error *errors;
  uint32_t nerrors;
  const struct sc_name_map *mesh_index; /* mesh name -> index when there are many meshes, else NULL */
  const struct sc_func_index *funcs;    /* func.func / HLO computation by name (use sc_model_func) */
  /* The module carries JAX's own markers (a jax.export container, `jax.*` attributes such as
   * jax.result_info or jax.uses_shape_polymorphism, a `jit_*` / `pjit_*` module or function name):
   * rules that encode what jax.jit refuses at its boundary apply to its entry function
   * (docs/rules-policy.md); for other producers they are notes. */
  bool jax_produced;
};

/* The severity of a JAX-policy finding (docs/rules-policy.md) about `func` (NULL: the whole module):
 * `sev` in the entry function of a JAX-produced module, else a note. */
sc_severity sc_model_jax_policy_severity(const sc_model *model, const sc_op *func, sc_severity sev);

/* Builds the model. Never fails on bad annotations (they become sc_model_error entries). */
sc_model *sc_model_build(sc_arena *a, sc_module *m, const sc_options *options);

const sc_mesh *sc_model_mesh(const sc_model *model, sc_span name); /* by symbol name, NULL if none */
/* The func.func / HLO computation named `name` (no '@'; the first definition), or NULL. Hashed. */
const sc_op *sc_model_func(const sc_model *model, sc_span name);
/* What the model knows about an op: never NULL for an op of the module (an empty record if nothing). */
const sc_op_info *sc_model_op(const sc_model *model, const sc_op *op);
/* The mesh a sharding is bound to: its inline mesh or the named one (NULL if unknown). */
const sc_mesh *sc_model_sharding_mesh(const sc_model *model, const sc_sharding *s);
/* A func argument's / result's annotation (sdy first, then GSPMD), or NULL. */
const sc_sharding *sc_model_arg_sharding(const sc_model *model, const sc_op *func, uint32_t index);
const sc_sharding *sc_model_func_result_sharding(const sc_model *model, const sc_op *func, uint32_t index);
/* The named item of an sdy op's custom syntax (e.g. "out_sharding"), or NULL. */
const sc_sdy_item *sc_model_sdy_item(const sc_model *model, const sc_op *op, const char *name);
/* An `sdy.sharding_group`'s `group_id = N` (custom syntax: an sdy item; generic form and bytecode: an
 * attribute) into *out; false when it has none. */
bool sc_model_sharding_group_id(const sc_model *model, const sc_op *op, int64_t *out);
const sc_manual_context *sc_model_manual(const sc_model *model, const sc_op *op);
/* True if every axis of size > 1 of the effective mesh is manual for `op` (size-1 axes count as manual;
 * a GSPMD manual region that is not partial counts as fully manual). True when there is no mesh with
 * more than one device. Inside a manual computation its own mesh is the reference, unless a target mesh
 * with another device count was given (then the target's axes must all be manual, which a module
 * lowered for fewer devices cannot satisfy); target axes of type manual count as manual. */
bool sc_model_fully_manual(const sc_model *model, const sc_op *op);
/* The sharding an op declares for result `index` (sdy.sharding / sdy.sharding_per_value /
 * mhlo.sharding, tuple element picked), or NULL if none. */
const sc_sharding *sc_model_result_sharding(const sc_model *model, const sc_op *op, uint32_t index);
/* The sharding known for a value: its defining op's result sharding, or a func argument's
 * sdy.sharding / mhlo.sharding, or NULL. */
const sc_sharding *sc_model_value_sharding(const sc_model *model, const sc_value *v);

/* Parsers, usable on their own (tests, rules that parse custom syntax). On error they return NULL and
 * set *error (arena). `offset` is where `text` starts in the input, for locations. */
sc_sharding *sc_parse_sdy_sharding(sc_arena *a, sc_span text, uint32_t offset, const char **error);
sc_sharding *sc_parse_gspmd_sharding(sc_arena *a, sc_span text, uint32_t offset, const char **error);
sc_mesh *sc_parse_sdy_mesh(sc_arena *a, sc_span text, uint32_t offset, const char **error);
/* `#sdy.sharding_per_value<[...]>` or a stripped list `[<...>, ...]`. Returns 0 or -1. */
int sc_parse_sdy_sharding_per_value(sc_arena *a, sc_span text, uint32_t offset, sc_sharding ***out, uint32_t *n,
                                    const char **error);
/* `{"a", "b"}` (also sub-axes) or `#sdy<manual_axes{"a"}>`. Returns 0 or -1. */
int sc_parse_sdy_axis_names(sc_arena *a, sc_span text, uint32_t offset, sc_axis_ref **out, uint32_t *n,
                            const char **error);
/* "<kind> <i>" ("arg 0", "result 1", "operand 2"): constants for the first few, else printed (arena). */
const char *sc_indexed_name(sc_arena *a, const char *kind, uint32_t i);
/* "x" or "x":(1)2 as Shardy prints it. */
const char *sc_axis_ref_str(sc_arena *a, const sc_axis_ref *r);
/* A new (zeroed) sharding of `kind` written in `source` syntax: no maximal device, no shard group. */
sc_sharding *sc_sharding_new(sc_arena *a, sc_sharding_kind kind, sc_sharding_source source);

/* A value's shape from its type text: MLIR `tensor<4x?xf32>`, `tuple<...>`, `!stablehlo.token`, or HLO
 * `f32[4,2]{1,0}`, `(f32[4], s32[])`, `token[]`. dims[i] == -1 for a dynamic dimension. */
typedef enum {
  SC_SHAPE_ARRAY = 0, /* ranked tensor / HLO array */
  SC_SHAPE_TUPLE,
  SC_SHAPE_TOKEN,
  SC_SHAPE_UNRANKED,  /* tensor<*xf32> */
  SC_SHAPE_OTHER,     /* some other non-shaped type (e.g. !stablehlo.token-like dialect types) */
} sc_shape_kind;
typedef struct sc_shape {
  sc_shape_kind kind;
  int32_t rank;
  int64_t *dims;
  struct sc_shape *elems; /* SC_SHAPE_TUPLE */
  uint32_t nelems;
} sc_shape;
/* Returns false if `type` is empty or not understood (the shape is then unknown). */
bool sc_parse_shape(sc_arena *a, sc_span type, sc_shape *out);
/* Number of leaves of a (tuple) shape. */
uint32_t sc_shape_leaf_count(const sc_shape *s);

/* Verifies a named sharding's axis references against `mesh` the way Shardy's verifier does (unknown
 * axes, sub-axis validity, duplicates/overlaps, mergeable neighbours, replicated/unreduced order, full
 * and sub-axis both used). Returns the first problem as a message (arena), or NULL. */
const char *sc_sharding_verify_axes(sc_arena *a, const sc_sharding *s, const sc_mesh *mesh);
enum { SC_AXERR_UNKNOWN = 1, SC_AXERR_DUPLICATE, SC_AXERR_SUB_AXIS, SC_AXERR_ORDER };
/* Same, with the kind of problem (SC_AXERR_*) in *kind (0 = none). */
const char *sc_sharding_verify_axes_kind(sc_arena *a, const sc_sharding *s, const sc_mesh *mesh, int *kind);
/* The same checks over free-standing axis lists (collective axes): duplicates across all lists; with
 * `order_what` each list must be sorted w.r.t. the mesh ("<order_what> axes are not ordered ..."). */
const char *sc_axis_list_verify(sc_arena *a, const sc_axis_ref *const *lists, const uint32_t *counts, uint32_t nlists,
                                const sc_mesh *mesh, const char *order_what, int *kind);
/* Appends the mesh's axes as `"x"=2, "y"=4` (names quoted with `quote`, items joined by `sep`), cut after
 * SC_LIST_SHOWN axes with "<sep>... and N more": every message quoting a mesh stays bounded. */
void sc_mesh_axes_put(sc_astr *s, const sc_mesh *m, char quote, const char *sep);
/* Index of axis `name` in `mesh` (the first one of that name), or -1. O(1) once indexed. */
int sc_mesh_axis_index(const sc_mesh *mesh, sc_span name);
/* Builds mesh->axis_index when the mesh has many axes (call when the axes are final), so lookups and
 * verification stay linear however many axes a hostile mesh declares. */
void sc_mesh_index_axes(sc_arena *a, sc_mesh *mesh);
/* Size of a reference (sub-axis size, or the full axis size from `mesh`; 1 if unknown). */
int64_t sc_axis_ref_size(const sc_axis_ref *r, const sc_mesh *mesh);
/* Product of the sizes of the axes sharding dimension `dim`. */
int64_t sc_dim_sharded_size(const sc_sharding *s, uint32_t dim, const sc_mesh *mesh);
/* True if no dimension is sharded and there are no unreduced axes. */
bool sc_sharding_is_replicated(const sc_sharding *s);

/* HloSharding::Validate for `s` against `shape` (GSPMD shardings, incl. tuples and named V3 ones) with
 * `num_devices` devices (<= 0: unknown, device-count checks skipped). Returns the first problem
 * (arena) or NULL. With `single_device_tile_ok`, a one-device tile assignment (`{devices=[1]<=[1]}`,
 * which JAX emits for 1-device meshes and XLA's proto path turns into replicated) is accepted. */
const char *sc_gspmd_validate(sc_arena *a, const sc_sharding *s, const sc_shape *shape, int64_t num_devices,
                              bool single_device_tile_ok);
/* A serialized OpSharding proto (mhlo.sharding may hold one) rendered as HloSharding text, or NULL. */
const char *sc_gspmd_proto_to_text(sc_arena *a, const void *bytes, size_t n);
/* `mesh[...] {axes}` as in HLO collectives' `replica_groups=mesh['x'=2] {'x'}`. 0 or -1 with *error. */
int sc_parse_gspmd_mesh_axes(sc_arena *a, sc_span text, uint32_t offset, const char **error);

/* Renders a named sharding as a JAX PartitionSpec: "P('data', None)". */
const char *sc_sharding_partition_spec(sc_arena *a, const sc_sharding *s);

#endif
