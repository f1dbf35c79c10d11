/* model.h — the normalized sharding model: meshes, shardings and each op's manual context.
 *
 * Built once per module (md_model_build) before any rule runs; rules only read it. Shardy (`sdy.*`)
 * and GSPMD (`mhlo.sharding` strings, HLO `sharding=`) annotations map onto the same md_sharding,
 * so a rule is written once for both. Everything lives in the request arena; spans point into the
 * input. Read-only after build; one thread at a time per arena. */
#ifndef SC_MODEL_H
#define SC_MODEL_H

#include "ir/ir.h"
#include "util/bits.h"

typedef struct md_model md_model;

typedef struct {
  ir_span name;
  int64_t size;
  sc_axis_type type; /* from the target mesh; module meshes are auto unless manual here */
} md_axis;

typedef struct md_mesh {
  ir_span name;           /* symbol name without '@' ("mesh"); empty for an inline mesh */
  md_axis *axes;
  uint32_t naxes;
  int64_t *device_ids;    /* explicit device order, NULL = iota */
  uint32_t ndevice_ids;
  bool maximal;           /* <[], device_ids=[k]> */
  int64_t devices;        /* product of axis sizes (1 for an empty or maximal mesh) */
  const ir_op *op;        /* the sdy.mesh op, NULL for inline/target/synthesized meshes */
  bool synthesized;       /* made up for a GSPMD module ("_partitions": XLA's import axes "_axis_0", ... or one
                             axis "_partitions" of num_partitions); names no real axes */
  uint32_t offset;        /* where it is written */
  const struct hs_name_map *axis_index; /* axis name -> index for large meshes (md_mesh_index_axes), or NULL */
} md_mesh;

/* A reference to a mesh axis or sub-axis: "x" or "x":(pre_size)size. */
typedef struct {
  ir_span name; /* the name's bytes. Inside a sharding they may lie in another occurrence of the same text
                   (occurrences share one parse): place a diagnostic with md_sharding_pos(s, name). */
  bool sub;
  int64_t pre_size, size; /* size = full axis size when !sub (filled once the mesh is known, else 0) */
} md_axis_ref;

typedef struct {
  md_axis_ref *axes;
  uint32_t naxes;
  bool open;        /* `?` */
  int64_t priority; /* `p1` -> 1; -1 = none */
} md_dim_sharding;

typedef enum {
  SC_SHARDING_NAMED = 0, /* per-dimension axes on a mesh (Shardy, or GSPMD mapped onto a mesh) */
  SC_SHARDING_REPLICATED,
  SC_SHARDING_MAXIMAL,   /* single device */
  SC_SHARDING_MANUAL,    /* GSPMD {manual} */
  SC_SHARDING_TILED,     /* GSPMD tile assignment not (yet) mapped onto named axes */
  SC_SHARDING_TUPLE,     /* GSPMD tuple; see elements */
  SC_SHARDING_UNKNOWN,   /* {unknown} or anything unrecognised */
  SC_SHARDING_UNREDUCED, /* GSPMD {unreduced} (every axis unreduced) */
} md_sharding_kind;

typedef enum { SC_REDUCE_SUM = 0, SC_REDUCE_MAX, SC_REDUCE_MIN } md_reduction;

typedef enum { SC_SHARDING_FROM_SDY = 0, SC_SHARDING_FROM_GSPMD, SC_SHARDING_FROM_PROPAGATION } md_sharding_source;

/* A GSPMD tiled sharding's tile assignment as written. Only tiled GSPMD shardings have one; every other
 * sharding points at md_no_tiles, so the header each occurrence of a sharding carries stays small. */
typedef struct {
  int64_t *tile_dims;        /* tile assignment dimensions, incl. trailing replicate/manual dims */
  int64_t *tile_devices;     /* flattened device list (iota expanded), NULL if none */
  uint64_t ntile_devices;
  uint8_t *last_tile_dims;   /* per trailing subgroup dim: 1 manual, 2 replicated, 3 maximal, 0 other */
  /* the iota tile assignment `<=[reshape]T(perm)` as written (niota_reshape 0 = explicit list) */
  int64_t *iota_reshape;
  int64_t *iota_perm;
  uint32_t ntile_dims;
  uint32_t nlast_tile_dims;
  uint32_t niota_reshape;
  uint32_t niota_perm;
  bool last_tile_dim_replicate;
} md_tiles;

/* No tile assignment (md_sharding.tiles of every sharding without one). */
extern const md_tiles md_no_tiles;

typedef struct md_sharding { /* fields grouped by size (no padding): one header per occurrence */
  ir_span text;              /* as written (for GSPMD: the string contents without quotes) */
  /* Shardy / named */
  ir_span mesh_name;         /* "@mesh" target without '@'; empty for inline meshes */
  const md_mesh *mesh;       /* resolved mesh, NULL if unknown */
  md_dim_sharding *dims;
  md_axis_ref *replicated;
  md_axis_ref *unreduced;
  md_axis_ref *manual_axes;  /* GSPMD named sharding `manual={...}` */
  /* GSPMD */
  const md_tiles *tiles;     /* the tile assignment: never NULL (md_no_tiles when there is none) */
  int64_t maximal_device;    /* SC_SHARDING_MAXIMAL: device id; -1 otherwise */
  struct md_sharding **elements; /* SC_SHARDING_TUPLE */
  int64_t shard_group;       /* shard_as/shard_like N; -1 none */
  /* Built by the model: the first sharding parsed from the same text (itself for that one), so equal
   * `same_as` means equal content, mesh and mapping (rules memoize on it); NULL otherwise. */
  const struct md_sharding *same_as;
  uint32_t offset;           /* where it is written */
  uint32_t rank;             /* of dims */
  uint32_t nreplicated;
  uint32_t nunreduced;
  uint32_t nmanual_axes;
  uint32_t nelements;
  /* the three enums in a byte each (a header per occurrence: ~10^5 in a large module) */
  uint8_t kind;              /* md_sharding_kind */
  uint8_t source;            /* md_sharding_source */
  uint8_t unreduced_op;      /* md_reduction: unreduced=max{...} */
  bool mapped;               /* GSPMD tiled sharding mapped onto the named axes of `mesh` (kind NAMED) */
} md_sharding;

/* Where `name` (an axis ref's or the mesh name's span of `s`) is written in the occurrence `s` itself:
 * occurrences of one text share its parse, whose names lie in the first occurrence's text. */
ir_span md_sharding_pos(const md_sharding *s, ir_span name);
/* `s` as `op` writes it: an op's own annotations (sdy.sharding, mhlo.sharding, an sdy op's sharding) share
 * the parse of an earlier occurrence of their text, so for placing a diagnostic or a fix in op's text this
 * gives a copy (in `a`) with text, mesh name and offset moved onto op's occurrence; `s` itself otherwise.
 * Content (dims, axes, mesh) is the same either way. */
const md_sharding *md_sharding_occurrence(sc_arena *a, const md_model *model, const ir_op *op, const md_sharding *s);

/* Each op's manual context: the union of manual axes of enclosing manual computations (Shardy) or
 * whether the op is inside a GSPMD manual region (`@SPMDFullToShardShape` ... `@SPMDShardToFullShape`,
 * `{manual}`, `last_tile_dims={manual}`), following calls into private functions. A function reached from several call sites gets the least
 * manual of their contexts (not manual if any site is outside manual regions, else the intersection of
 * their manual axes; GSPMD-partial if any site is), so rules that require full manual see the worst case. */
typedef struct {
  const ir_op *manual_op;    /* innermost enclosing sdy.manual_computation / GSPMD region entry, or NULL */
  const md_mesh *mesh;       /* mesh of that manual computation, or NULL */
  ir_span *manual_axes;      /* union over the nest */
  uint32_t nmanual_axes;
  bool gspmd_manual;         /* inside a GSPMD manual region */
  bool gspmd_partial;        /* ... whose manual sharding keeps some tile dims automatic */
} md_manual_context;

/* One sharding annotation as written: an attribute (`sdy.sharding`, `mhlo.sharding`, HLO `sharding=`)
 * or a piece of an sdy op's custom syntax (`<@mesh, [...]>`, `in_shardings=[...]`, `out_sharding=<...>`).
 * Which one it is follows from where the record is held (md_op_info.sdy, md_sdy_op_info.in_shardings,
 * ...): a record per annotated op keeps no name. */
typedef struct {
  const char *text_p;   /* the value as written: md_annotation_text() */
  md_sharding **values; /* parsed shardings (one per value for per-value forms) */
  uint32_t text_n;
  uint32_t offset;      /* where the value starts */
  uint32_t shift;       /* an op's annotation whose text an earlier one also wrote shares that one's parse:
                         * how far after it this one lies (mod 2^32; 0: values are this text's own) */
  unsigned nvalues : 29; /* (a list longer than MD_MAX_VALUES does not parse) */
  unsigned present : 1;
  unsigned failed : 1;  /* present but did not parse (see the model's errors) */
  unsigned per_value : 1; /* written as #sdy.sharding_per_value<[...]> or a `[...]` list */
} md_annotation;
#define MD_MAX_VALUES ((1u << 29) - 1)
static inline ir_span md_annotation_text(const md_annotation *an) { return ir_span_of(an->text_p, an->text_n); }

/* An item of an sdy op's custom syntax between the op name and its `:` type trailer:
 * `name=value`, an unnamed `<...>`/`[...]`/`{...}` group (empty name), or a bare keyword (empty value,
 * name = the keyword, e.g. the `max` of `sdy.all_reduce max {"y"}`). */
typedef struct {
  ir_span name;
  ir_span value;
  uint32_t offset; /* of the value (or keyword) */
} md_sdy_item;

/* An sdy op's items, with their count (md_op_info.items: the count in the record of every annotated op
 * took 8 bytes with its padding, for the few sdy ops that have items). */
typedef struct {
  uint32_t n;
  md_sdy_item v[];
} md_sdy_items;

/* No items (md_op_info.items of every op without any). */
extern const md_sdy_items md_no_items;

typedef struct {
  md_annotation sdy;   /* sdy.sharding attribute */
  md_annotation gspmd; /* mhlo.sharding / HLO sharding= */
} md_value_annotations;

/* What the model knows about a manual / named computation or a round-trip manual-axes op: few ops
 * have any of it, so it lives apart (md_op_info.sdy_op). */
typedef struct {
  md_annotation in_shardings, out_shardings; /* sdy.manual_computation / sdy.named_computation */
  md_axis_ref *manual_axes; /* sdy.manual_computation manual_axes={...} (also round-trip xla.sdy.manual_axes) */
  uint32_t nmanual_axes;
  uint32_t manual_axes_offset;
  bool has_manual_axes;
} md_sdy_op_info;

/* A func.func's / HLO computation's annotations per argument and per result: few ops are functions, so
 * they live apart (md_op_info.func). */
typedef struct {
  md_value_annotations *args;
  md_value_annotations *results;
  uint32_t nargs;
  uint32_t nresults;
} md_func_annotations;

/* An annotation that is not written (every annotation accessor below points somewhere). */
extern const md_annotation md_no_annotation;
extern const md_sdy_op_info md_no_sdy_op;
extern const md_func_annotations md_no_func;

/* Everything the model knows about one op: what an op with more than one annotation, or with sdy-op,
 * function or item records, keeps (md_op_info.more), and what the model builds while it reads an op. */
typedef struct {
  const md_annotation *sdy;      /* `sdy.sharding` attribute (ops: per value) */
  const md_annotation *gspmd;    /* `mhlo.sharding` / HLO `sharding=` */
  const md_annotation *sharding; /* sdy.sharding_constraint/reshard `<...>`, data_flow_edge `sharding=`,
                                    collectives `out_sharding=` */
  const md_sdy_op_info *sdy_op; /* never NULL (an empty record for other ops) */
  const md_func_annotations *func; /* never NULL (an empty record for other ops and bare functions) */
  const md_sdy_items *items;  /* custom syntax of sdy.* ops (pretty form); never NULL (md_no_items) */
} md_op_more;

/* Which annotation md_op_info.ann is. */
enum { MD_ANN_NONE, MD_ANN_SDY, MD_ANN_GSPMD, MD_ANN_SHARDING };

/* What the model knows about one op (md_model_op), read with the md_info_*() accessors below. Most
 * annotated ops have one annotation and nothing else (a sharding constraint, an op's sdy.sharding):
 * that one is held in the record itself; any other op's record points at an md_op_more. */
typedef struct {
  md_annotation ann;       /* the one annotation, when `more` is NULL (ann_kind says which) */
  const md_op_more *more;  /* everything, for any other annotated op; NULL otherwise */
  uint8_t ann_kind;        /* MD_ANN_* */
} md_op_info;

static inline const md_annotation *md_info_annotation(const md_op_info *i, int kind) {
  return i->ann_kind == kind ? &i->ann : &md_no_annotation;
}
static inline const md_annotation *md_info_sdy(const md_op_info *i) {
  return i->more ? i->more->sdy : md_info_annotation(i, MD_ANN_SDY);
}
static inline const md_annotation *md_info_gspmd(const md_op_info *i) {
  return i->more ? i->more->gspmd : md_info_annotation(i, MD_ANN_GSPMD);
}
static inline const md_annotation *md_info_sharding(const md_op_info *i) {
  return i->more ? i->more->sharding : md_info_annotation(i, MD_ANN_SHARDING);
}
static inline const md_sdy_op_info *md_info_sdy_op(const md_op_info *i) { return i->more ? i->more->sdy_op : &md_no_sdy_op; }
static inline const md_func_annotations *md_info_func(const md_op_info *i) { return i->more ? i->more->func : &md_no_func; }
static inline const md_sdy_items *md_info_items(const md_op_info *i) { return i->more ? i->more->items : &md_no_items; }

/* A sharding attribute that did not parse: reported by the `sharding-syntax` rule. */
typedef struct {
  const ir_op *op;
  uint32_t offset;
  const char *message;
} md_model_error;

struct md_model {
  md_mesh *meshes;            /* sdy.mesh declarations in order */
  uint32_t nmeshes;
  int64_t num_partitions;     /* mhlo.num_partitions / HLO num_partitions; -1 if absent */
  int64_t num_replicas;       /* -1 if absent */
  const md_mesh *target;      /* the request's mesh, NULL if none was given */
  /* What the module is checked against: the target if given, else the module's single mesh or a mesh
   * synthesized for num_partitions devices (the axes XLA's Shardy import gives a GSPMD module, or one axis
   * "_partitions"), else NULL. */
  const md_mesh *effective;
  sc_platform platform;
  /* Each op's manual context (use md_model_manual): per op id 1 + its index in manual_contexts, 0 = none;
   * 16 bits each while the numbers fit (manual16), else 32 (manual32, and manual16 is NULL). Both NULL
   * while no op is in one (a module without manual computations or GSPMD manual regions). */
  uint16_t *manual16;
  uint32_t *manual32;
  const md_manual_context **manual_contexts;
  /* The ops' records (use md_model_op): only ops that have something get one. Per op a bit (has_info,
   * by op->id), per 64 ops the number of records before them (info_rank); record k (of the k-th annotated op) is
   * info_blocks[k / MD_INFO_BLOCK][k % MD_INFO_BLOCK]. Blocks are never moved, so a growing model leaves
   * no abandoned copies; a pointer per op took 8 bytes for every op, annotated or not. */
  const uint64_t *has_info;
  const uint32_t *info_rank;
  md_op_info *const *info_blocks;
  uint32_t nannotated;        /* the ops that have a record (rules that only look at annotated ops walk
                                 them with md_annotated_first/next instead of every op) */
  const ir_module *module;
  md_model_error *errors;
  uint32_t nerrors;
  const struct hs_name_map *mesh_index; /* mesh name -> index when there are many meshes, else NULL */
  const struct md_func_index *funcs;    /* func.func / HLO computation by name (use md_model_func) */
  /* The module carries JAX's own markers (a jax.export container, `jax.*` attributes such as
   * jax.result_info or jax.uses_shape_polymorphism, a `jit_*` / `pjit_*` module or function name):
   * rules that encode what jax.jit refuses at its boundary apply to its entry function
   * (docs/rules-policy.md); for other producers they are notes. */
  bool jax_produced;
  /* The module is a Shardy round trip (it carries `xla.sdy.meshes`): its GSPMD shardings are what the
   * export wrote for Shardy's, an open one as `{replicated}`, so a replicated one fixes nothing. */
  bool sdy_round_trip;
};

/* The severity of a JAX-policy finding (docs/rules-policy.md) about `func` (NULL: the whole module):
 * `sev` in the entry function of a JAX-produced module, else a note. */
sc_severity md_model_jax_policy_severity(const md_model *model, const ir_op *func, sc_severity sev);

/* Builds the model. Never fails on bad annotations (they become md_model_error entries). */
md_model *md_model_build(sc_arena *a, ir_module *m, const sc_options *options);

const md_mesh *md_model_mesh(const md_model *model, ir_span name); /* by symbol name, NULL if none */
/* The func.func / HLO computation named `name` (no '@'; the first definition), or NULL. Hashed. */
const ir_op *md_model_func(const md_model *model, ir_span name);
/* What the model knows about an op: never NULL for an op of the module (an empty record if nothing). */
const md_op_info *md_model_op(const md_model *model, const ir_op *op);
/* Whether the model keeps a record of `op`'s annotations (one of the ops md_annotated_first/next visit). */
static inline bool md_model_has_info(const md_model *model, const ir_op *op) {
  return model && model->module && op->id < model->module->nops && sc_bit_test(model->has_info, op->id);
}
#define MD_INFO_BLOCK 64u
/* The record of the k-th annotated op (k below nannotated). */
static inline const md_op_info *md_model_info_at(const md_model *model, uint32_t k) {
  return &model->info_blocks[k / MD_INFO_BLOCK][k % MD_INFO_BLOCK];
}
/* The annotated ops in module order, with their records, found by a scan of the bits (no list of them is
 * kept: 8 bytes each):
 *   for (md_annotated it = md_annotated_first(model); it.op; md_annotated_next(model, &it)) ... */
typedef struct {
  const ir_op *op; /* NULL past the last */
  const md_op_info *info;
  uint32_t k;      /* the number of records before the next one */
  uint32_t word;   /* the has_info word being scanned, and its bits not visited yet */
  uint64_t bits;
} md_annotated;
static inline void md_annotated_next(const md_model *model, md_annotated *it) {
  uint32_t nwords = model->module->nops / 64 + 1;
  while (!it->bits && ++it->word < nwords) it->bits = model->has_info[it->word];
  if (!it->bits) {
    it->op = NULL;
    return;
  }
  it->op = model->module->ops[it->word * 64 + (uint32_t)__builtin_ctzll(it->bits)];
  it->bits &= it->bits - 1;
  it->info = md_model_info_at(model, it->k++);
}
static inline md_annotated md_annotated_first(const md_model *model) {
  md_annotated it = {NULL, NULL, 0, 0, model->has_info[0]};
  md_annotated_next(model, &it);
  return it;
}
/* The mesh a sharding is bound to: its inline mesh or the named one (NULL if unknown). */
const md_mesh *md_model_sharding_mesh(const md_model *model, const md_sharding *s);
/* A func argument's / result's annotation (sdy first, then GSPMD), or NULL. */
const md_sharding *md_model_arg_sharding(const md_model *model, const ir_op *func, uint32_t index);
const md_sharding *md_model_func_result_sharding(const md_model *model, const ir_op *func, uint32_t index);
/* The named item of an sdy op's custom syntax (e.g. "out_sharding"), or NULL. */
const md_sdy_item *md_model_sdy_item(const md_model *model, const ir_op *op, const char *name);
/* An `sdy.sharding_group`'s `group_id = N` (custom syntax: an sdy item; generic form and bytecode: an
 * attribute) into *out; false when it has none. */
bool md_model_sharding_group_id(const md_model *model, const ir_op *op, int64_t *out);
const md_manual_context *md_model_manual(const md_model *model, const ir_op *op);
/* True if every axis of size > 1 of the effective mesh is manual for `op` (size-1 axes count as manual;
 * a GSPMD manual region that is not partial counts as fully manual). True when there is no mesh with
 * more than one device. Inside a manual computation its own mesh is the reference, unless a target mesh
 * with another device count was given (then the target's axes must all be manual, which a module
 * lowered for fewer devices cannot satisfy); target axes of type manual count as manual. */
bool md_model_fully_manual(const md_model *model, const ir_op *op);
/* The sharding an op declares for result `index` (sdy.sharding / sdy.sharding_per_value /
 * mhlo.sharding, tuple element picked), or NULL if none. */
const md_sharding *md_model_result_sharding(const md_model *model, const ir_op *op, uint32_t index);
/* The sharding known for a value: its defining op's result sharding, or a func argument's
 * sdy.sharding / mhlo.sharding, or NULL. */
const md_sharding *md_model_value_sharding(const md_model *model, const ir_value *v);

/* A module's alias table as the Shardy parsers read it: `#name` references it defines read as their
 * definitions. A reference is a few bytes of input but its definition any size, so the parsers may read
 * at most `budget` bytes of definitions in all (md_aliases_of: linear in the module), then refuse. */
typedef struct {
  const ir_module *module;
  uint64_t budget;
} md_aliases;
md_aliases md_aliases_of(const ir_module *m);

/* Parsers, usable on their own (tests, rules that parse custom syntax). On error they return NULL and
 * set *error (arena). `offset` is where `text` starts in the input, for locations. With `aliases` (may
 * be NULL), `#name` references read as their definitions (`text` must then lie in the module's buffer). */
md_sharding *md_parse_sdy_sharding(sc_arena *a, md_aliases *aliases, ir_span text, uint32_t offset,
                                   const char **error);
md_sharding *md_parse_gspmd_sharding(sc_arena *a, ir_span text, uint32_t offset, const char **error);
md_mesh *md_parse_sdy_mesh(sc_arena *a, ir_span text, uint32_t offset, const char **error);
/* A GSPMD sharding op's (`@Sharding`, `@SPMDFullToShardShape`, `@SPMDShardToFullShape`) backend_config
 * (`mhlo.backend_config` or `backend_config`) as XLA's sharding_op_util::ParseAttributes reads it: absent
 * or empty, or `unspecified_dims=[i,j,...]`, whose dimensions go to *dims (in `a`; *n of them). False when
 * it is anything else (*dims and *n are then 0). */
bool md_sharding_op_unspecified_dims(sc_arena *a, const ir_op *op, uint32_t **dims, uint32_t *n);
/* `#sdy.sharding_per_value<[...]>` or a stripped list `[<...>, ...]`. Returns 0 or -1. */
int md_parse_sdy_sharding_per_value(sc_arena *a, md_aliases *aliases, ir_span text, uint32_t offset,
                                    md_sharding ***out, uint32_t *n, const char **error);
/* `{"a", "b"}` (also sub-axes) or `#sdy<manual_axes{"a"}>`. Returns 0 or -1. */
int md_parse_sdy_axis_names(sc_arena *a, ir_span text, uint32_t offset, md_axis_ref **out, uint32_t *n,
                            const char **error);
/* "<kind> <i>" ("arg 0", "result 1", "operand 2"): constants for the first few, else printed (arena). */
const char *md_indexed_name(sc_arena *a, const char *kind, uint32_t i);
/* "x" or "x":(1)2 as Shardy prints it. */
const char *md_axis_ref_str(sc_arena *a, const md_axis_ref *r);
/* A new (zeroed) sharding of `kind` written in `source` syntax: no maximal device, no shard group. */
md_sharding *md_sharding_new(sc_arena *a, md_sharding_kind kind, md_sharding_source source);

/* A value's shape from its type text: MLIR `tensor<4x?xf32>`, `tuple<...>`, `!stablehlo.token`, or HLO
 * `f32[4,2]{1,0}`, `(f32[4], s32[])`, `token[]`. dims[i] == -1 for a dynamic dimension. */
typedef enum {
  SC_SHAPE_ARRAY = 0, /* ranked tensor / HLO array */
  SC_SHAPE_TUPLE,
  SC_SHAPE_TOKEN,
  SC_SHAPE_UNRANKED,  /* tensor<*xf32> */
  SC_SHAPE_OTHER,     /* some other non-shaped type (e.g. !stablehlo.token-like dialect types) */
} md_shape_kind;
typedef struct md_shape {
  md_shape_kind kind;
  int32_t rank;
  int64_t *dims;
  struct md_shape *elems; /* SC_SHAPE_TUPLE */
  uint32_t nelems;
} md_shape;
/* Returns false if `type` is empty or not understood (the shape is then unknown). */
bool md_parse_shape(sc_arena *a, ir_span type, md_shape *out);
/* Number of leaves of a (tuple) shape. */
uint32_t md_shape_leaf_count(const md_shape *s);

/* Verifies a named sharding's axis references against `mesh` the way Shardy's verifier does (unknown
 * axes, sub-axis validity, duplicates/overlaps, mergeable neighbours, replicated/unreduced order, full
 * and sub-axis both used). Returns the first problem as a message (arena), or NULL. */
const char *md_sharding_verify_axes(sc_arena *a, const md_sharding *s, const md_mesh *mesh);
enum { SC_AXERR_UNKNOWN = 1, SC_AXERR_DUPLICATE, SC_AXERR_SUB_AXIS, SC_AXERR_ORDER };
/* Same, with the kind of problem (SC_AXERR_*) in *kind (0 = none). */
const char *md_sharding_verify_axes_kind(sc_arena *a, const md_sharding *s, const md_mesh *mesh, int *kind);
/* The same checks over free-standing axis lists (collective axes): duplicates across all lists; with
 * `order_what` each list must be sorted w.r.t. the mesh ("<order_what> axes are not ordered ..."). */
const char *md_axis_list_verify(sc_arena *a, const md_axis_ref *const *lists, const uint32_t *counts, uint32_t nlists,
                                const md_mesh *mesh, const char *order_what, int *kind);
/* Appends the mesh's axes as `"x"=2, "y"=4` (names quoted with `quote`, items joined by `sep`), cut after
 * SC_LIST_SHOWN axes with "<sep>... and N more": every message quoting a mesh stays bounded. */
void md_mesh_axes_put(ar_str *s, const md_mesh *m, char quote, const char *sep);
/* Index of axis `name` in `mesh` (the first one of that name), or -1. O(1) once indexed. */
int md_mesh_axis_index(const md_mesh *mesh, ir_span name);
/* Builds mesh->axis_index when the mesh has many axes (call when the axes are final), so lookups and
 * verification stay linear however many axes a hostile mesh declares. */
void md_mesh_index_axes(sc_arena *a, md_mesh *mesh);
/* Size of a reference (sub-axis size, or the full axis size from `mesh`; 1 if unknown). */
int64_t md_axis_ref_size(const md_axis_ref *r, const md_mesh *mesh);
/* Product of the sizes of the axes sharding dimension `dim`. */
int64_t md_dim_sharded_size(const md_sharding *s, uint32_t dim, const md_mesh *mesh);
/* True if no dimension is sharded and there are no unreduced axes. */
bool md_sharding_is_replicated(const md_sharding *s);

/* HloSharding::Validate for `s` against `shape` (GSPMD shardings, incl. tuples and named V3 ones) with
 * `num_devices` devices (<= 0: unknown, device-count checks skipped). Returns the first problem
 * (arena) or NULL. With `single_device_tile_ok`, a one-device tile assignment (`{devices=[1]<=[1]}`,
 * which JAX emits for 1-device meshes and XLA's proto path turns into replicated) is accepted. */
const char *md_gspmd_validate(sc_arena *a, const md_sharding *s, const md_shape *shape, int64_t num_devices,
                              bool single_device_tile_ok);
/* A serialized OpSharding proto (mhlo.sharding may hold one) rendered as HloSharding text, or NULL. */
const char *md_gspmd_proto_to_text(sc_arena *a, const void *bytes, size_t n);
/* `mesh[...] {axes}` as in HLO collectives' `replica_groups=mesh['x'=2] {'x'}`. 0 or -1 with *error. */
int md_parse_gspmd_mesh_axes(sc_arena *a, ir_span text, uint32_t offset, const char **error);

/* Renders a named sharding as a JAX PartitionSpec: "P('data', None)". */
const char *md_sharding_partition_spec(sc_arena *a, const md_sharding *s);

#endif
