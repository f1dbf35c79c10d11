/* ir.h — the small IR both front ends produce and every rule reads.
 *
 * A module is a tree: ops own regions, regions own blocks, blocks own ops and block arguments.
 * Strings are spans into the caller's input buffer (never copied), so the input must outlive the IR.
 * Everything else lives in the request's arena. The IR is read-only once built; any thread may read
 * it, one at a time per arena.
 *
 * Both formats map onto the same shapes:
 *   StableHLO/MLIR: builtin.module -> func.func ops -> ops; attributes from `<{...}>`, `{...}`,
 *                   `attributes {...}` and custom-syntax `name=value` pairs.
 *   XLA HLO:        the HloModule is a "builtin.module" op; each computation is a "func.func" op with
 *                   its parameters as entry block arguments; each instruction is an op named by its
 *                   opcode ("custom-call"), its `key=value` attributes as ir_attr. */
#ifndef SC_IR_H
#define SC_IR_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/bytes.h"
#include "util/arena.h"
#include "util/hashset.h"
#include "shardcheck.h"

typedef struct {
  const char *p;
  uint32_t n;
} ir_span;

#define SC_SPAN_FMT "%.*s"
#define SC_SPAN_ARG(s) (int)(s).n, (s).p

static inline ir_span ir_span_of(const char *p, uint32_t n) {
  ir_span s = {p, n};
  return s;
}
/* Exact match / prefix of a NUL-terminated literal. Inline so a literal's length folds at compile time. */
static inline bool ir_span_eq(ir_span s, const char *lit) {
  size_t n = strlen(lit);
  return s.n == n && (n == 0 || memcmp(s.p, lit, n) == 0); /* an empty span may have p == NULL */
}
/* Two spans hold the same bytes (often the very same: the IR shares repeated type lists). */
static inline bool ir_span_same(ir_span a, ir_span b) {
  return a.n == b.n && (a.n == 0 || a.p == b.p || sc_bytes_eq(a.p, b.p, a.n));
}
/* Past the ASCII white space (isspace) in [p, end). */
static inline const char *ir_skip_space(const char *p, const char *end) {
  while (p < end && isspace((unsigned char)*p)) p++;
  return p;
}
static inline bool ir_span_starts(ir_span s, const char *lit) {
  size_t n = strlen(lit);
  return s.n >= n && (n == 0 || memcmp(s.p, lit, n) == 0);
}
ir_span ir_span_trim(ir_span s);                  /* strip ASCII white space */
char *ir_span_dup(sc_arena *a, ir_span s);        /* NUL-terminated copy */
/* Unquotes an MLIR string literal ("a\22b" -> a"b); if `s` is not quoted, returns a copy. */
char *ir_span_unquote(sc_arena *a, ir_span s);
/* At the opening '"' of a string literal: the position just past its closing quote (backslash escapes
 * skipped), or `end` if it is not closed. */
const char *ir_skip_string(const char *p, const char *end);
/* At a '(': the ')' that closes it (string literals skipped), or `end` if none does. */
const char *ir_match_paren(const char *p, const char *end);

typedef struct ir_op ir_op;
typedef struct ir_block ir_block;

/* Op kinds: every op name is mapped ONCE to a small enum by ir_op_classify(), so rules and the model
 * compare integers, never names. Kinds are exactly the name sets the rules distinguish; a name not
 * listed is SC_OP_OTHER (or SC_OP_SDY_OTHER for any other `sdy.` op). */
typedef enum {
  SC_OP_OTHER = 0,
  SC_OP_MODULE,          /* builtin.module */
  SC_OP_FUNC,            /* func.func, func (HLO computations are func.func) */
  SC_OP_CALL,            /* func.call, call */
  SC_OP_RETURN,          /* func.return, return */
  SC_OP_CUSTOM_CALL,     /* stablehlo.custom_call, mhlo.custom_call, HLO custom-call: see ir_op.cc */
  SC_OP_SEND,            /* stablehlo.send, HLO send */
  SC_OP_RECV,            /* stablehlo.recv, HLO recv */
  SC_OP_MHLO_SEND,       /* mhlo.send */
  SC_OP_MHLO_RECV,       /* mhlo.recv */
  SC_OP_WHILE,           /* stablehlo.while */
  SC_OP_CASE,            /* stablehlo.case */
  SC_OP_IF,              /* stablehlo.if */
  SC_OP_HLO_WHILE,       /* HLO while */
  SC_OP_HLO_CONDITIONAL, /* HLO conditional */
  SC_OP_XLA_COLLECTIVE,  /* HLO all-reduce/all-gather/reduce-scatter/all-to-all and their stablehlo.* forms */
  SC_OP_SDY_MESH,        /* first sdy.* kind */
  SC_OP_SDY_MANUAL_COMPUTATION,
  SC_OP_SDY_NAMED_COMPUTATION,
  SC_OP_SDY_SHARDING_CONSTRAINT,
  SC_OP_SDY_RESHARD,
  SC_OP_SDY_RETURN,
  SC_OP_SDY_DATA_FLOW_EDGE,
  SC_OP_SDY_FUNC_DATA_FLOW_EDGE,
  SC_OP_SDY_CONSTANT,
  SC_OP_SDY_PROPAGATION_BARRIER,
  SC_OP_SDY_ALL_GATHER,  /* first Shardy collective */
  SC_OP_SDY_ALL_SLICE,
  SC_OP_SDY_ALL_TO_ALL,
  SC_OP_SDY_COLLECTIVE_PERMUTE,
  SC_OP_SDY_ALL_REDUCE,
  SC_OP_SDY_REDUCE_SCATTER,
  SC_OP_SDY_SHARDED_TO_UNREDUCED,
  SC_OP_SDY_REPLICATED_TO_UNREDUCED, /* last Shardy collective */
  SC_OP_SDY_OTHER,       /* any other sdy.* op; last sdy.* kind */
  SC_OP_KIND_COUNT
} ir_op_kind;

/* Custom call target classes (ir_op.cc; SC_CC_NONE for ops that are not custom calls). */
typedef enum {
  SC_CC_NONE = 0,
  SC_CC_MOSAIC_TPU,          /* tpu_custom_call */
  SC_CC_TRITON,              /* __gpu$xla.gpu.triton, triton_kernel_call* */
  SC_CC_MOSAIC_GPU,          /* mosaic_gpu* */
  SC_CC_HOST_CALLBACK_CPU,   /* xla_ffi_python_cpu_callback and its partitioned/legacy/buffer forms */
  SC_CC_HOST_CALLBACK_GPU,   /* the same for GPU */
  SC_CC_SHARDING,            /* @Sharding */
  SC_CC_FULL_TO_SHARD,       /* @SPMDFullToShardShape */
  SC_CC_SHARD_TO_FULL,       /* @SPMDShardToFullShape */
  SC_CC_OTHER                /* any other (or empty) target */
} ir_cc_class;

static inline bool ir_op_kind_is_sdy(unsigned k) { return k >= SC_OP_SDY_MESH && k <= SC_OP_SDY_OTHER; }
static inline bool ir_op_kind_is_sdy_collective(unsigned k) {
  return k >= SC_OP_SDY_ALL_GATHER && k <= SC_OP_SDY_REPLICATED_TO_UNREDUCED;
}
typedef struct ir_region ir_region;

/* An attribute: `name = value` with both as raw text. Value text is exactly as written
 * (e.g. `"{devices=[2,1]<=[2]}"` with its quotes, `#sdy.sharding<@mesh, [{"x"}]>`, `1 : i32`). */
typedef struct {
  ir_span name;
  ir_span value;
  uint32_t offset; /* byte offset of the name; for machine edits */
  uint32_t end;    /* byte offset one past the value */
} ir_attr;

typedef struct {
  ir_attr *v;
  uint32_t n;
} ir_attrs;

const ir_attr *ir_attrs_find(const ir_attrs *attrs, const char *name);

/* A location: where in the module (always) and, from debug info, where in the user's source. */
typedef struct {
  uint32_t offset; /* byte offset */
  uint32_t line, col;
} ir_pos;

/* Where an op or value starts in the module: its byte offset only. Line and column are computed when
 * a diagnostic needs them (ir_linemap_pos, ir_op_line), never per op while parsing. */
typedef struct {
  uint32_t offset;
} ir_at;

typedef struct {
  bool known;
  ir_span file; /* without quotes */
  uint32_t line, col;
} ir_srcloc;

/* One per result and block argument (modules have ~10^5): what only some arguments have (attributes)
 * their block keeps (ir_value_attrs), and a block argument's `loc(...)` is not kept (nothing reads it).
 * A value's type is its op's or block's (ir_value_type), not a copy. */
typedef struct ir_value {
  ir_span name;       /* "%0", "%arg0", "%0#1"; HLO: "param.1" */
  /* Who made it, read with ir_value_def() / ir_value_block() and set with ir_value_set_*(): the
   * defining op of a result, or (IR_OWNER_BLOCK) the block of a block argument; IR_OWNER_PARAM marks
   * an HLO parameter, its op's result that is also its computation's argument. 0: neither yet. */
  uintptr_t owner;
  uint32_t index;     /* result index or block argument index */
  ir_at pos;
} ir_value;
#define IR_OWNER_BLOCK ((uintptr_t)1)
#define IR_OWNER_PARAM ((uintptr_t)2)

struct ir_block {
  ir_span label;      /* "^bb0" or empty for an entry block without a label */
  ir_value **args;
  const ir_attrs **arg_attrs; /* per argument (NULL entries: none), or NULL when no argument has any */
  ir_span *arg_types;         /* per argument (empty: unknown), or NULL when none is known */
  uint32_t nargs;
  ir_op **ops;
  uint32_t nops;
  ir_region *parent;
};

struct ir_region {
  ir_block **blocks;
  uint32_t nblocks;
  ir_op *parent;
};

/* The types an op's text writes (`: (a, b) -> c`, `: c`): ops whose trailers are the same arrays share
 * one record (ir_op_types_share), so an op holds a pointer, not two lists. */
typedef struct {
  ir_span *operand_types; /* noperand_types */
  ir_span *result_types;  /* nresult_types */
  uint32_t noperand_types;
  uint32_t nresult_types;
} ir_op_types;

/* The last few records ir_op_types_share() made: consecutive ops repeat their neighbours' trailers. */
typedef struct {
  ir_op_types *recent[4];
  uint32_t next;
} ir_op_types_cache;

/* The record for these lists (NULL when both are empty): one of the cache's recent ones when it holds
 * the same arrays and counts, else a new one (in `a`) that the cache remembers. For front ends. */
ir_op_types *ir_op_types_share(sc_arena *a, ir_op_types_cache *c, ir_span *operand_types, uint32_t noperand_types,
                               ir_span *result_types, uint32_t nresult_types);

/* What only funcs and calls have: behind ir_op_extra.decl, as every HLO instruction has an extra
 * record (its name, its metadata location) and few are calls. */
typedef struct {
  ir_span callee;              /* for call ops: "f"; HLO: to_apply/calls target */
  ir_span visibility;          /* func.func "public"/"private" or empty */
  ir_attrs *result_attrs;      /* func.func result attribute dicts (nresult_attrs entries) */
  ir_span *func_result_types;  /* func.func declared result types */
  uint32_t nresult_attrs;
} ir_op_decl;

/* What few ops have (symbols, calls, func.func result lists, regions, a front end's resolved location,
 * operand names that are not their values'): kept
 * out of ir_op so the many plain ops (`stablehlo.add`) stay small. Read through the ir_op_* accessors
 * below, which give an empty value when the op has no record; front ends write via ir_op_extra_of()
 * and ir_op_decl_of(). */
typedef struct {
  ir_span sym_name;            /* "@main" -> "main" (no '@', no quotes); HLO: computation/instruction name */
  ir_srcloc src;               /* Python location resolved by the front end (bytecode, HLO metadata) */
  ir_region **regions;         /* the op's regions (ir_op.nregions; ir_op_regions) */
  ir_op_decl *decl;            /* funcs and calls, else NULL */
  ir_span *operand_names;      /* NULL, or the op's operand names as written (noperands): where some name is
                                  not its value's own; read them with ir_op_operand_name() */
} ir_op_extra;

struct ir_op {
  /* Fields are grouped by size so the struct has little padding (one per op; modules have 10^5 ops). */
  uint32_t id;          /* preorder index in ir_module.ops */
  ir_at pos;            /* first token of the op (its result list, or its name) */
  uint32_t end;         /* byte offset one past the op's last token */
  uint32_t subtree_end; /* ir_module.ops[id, subtree_end) are this op and every op nested in it */
  uint32_t nresults;
  uint32_t noperands;
  uint32_t loc_offset;  /* byte offset of the op's `loc(...)` in the module's buffer, 0 = none (MLIR text; */
                        /* resolved on demand by ir_op_srcloc, the text running to its closing paren) */
  uint32_t nattrs;      /* attr_v's */
  uint16_t nregions;    /* (front ends refuse an op with more: IR_MAX_REGIONS) */
  uint16_t name_len;    /* of name_p (ir_op_set_name refuses longer names) */
  uint16_t name_id;     /* ir_module.op_names[name_id - 1] is the op's bare name (ir_module_finalize); 0 when
                           not interned: a module with more than IR_MAX_OP_NAMES distinct names */
  unsigned kind : 6;      /* ir_op_kind of `name`, set by ir_op_classify() */
  unsigned cc : 4;        /* ir_cc_class of the custom call target, else SC_CC_NONE */
  unsigned classified : 1; /* kind/cc are set */
  unsigned generic : 1;   /* written in generic form ("op"(...)) */
  unsigned func_like : 1; /* a func.func / HLO computation (MLIR text: also `func` and any `*.func`): ir_op_func */

  const char *name_p;   /* ir_op_name(): "stablehlo.add", "func.func", "builtin.module", HLO "custom-call" */

  ir_value *result_values; /* nresults, side by side (ir_op_result): no array of pointers to them */
  ir_value **operands;  /* noperands; NULL entries: names the parser could not resolve */
  ir_op_types *types;   /* the types its text writes, or NULL (read with ir_op_operand_types() ...) */

  /* Properties `<{...}>`, the attr dict `{...}`, `attributes {...}`, custom-syntax `name=value` pairs,
   * `@sym = value` (name "value"), and custom-syntax `<...>` / `[...]` groups without a name (empty
   * name, in order; for sdy.sharding_constraint/sdy.reshard the `<...>` is named "sharding"). Read with
   * ir_op_attrs() / ir_op_attr(). */
  ir_attr *attr_v;

  ir_op_extra *extra;      /* NULL for most ops; an op with regions has one (they are its) */

  ir_op *parent_op;        /* enclosing op (func, module, manual computation, ...) or NULL */
};

/* The op's attributes (nattrs of attr_v) as an ir_attrs, for the calling block only (a compound literal:
 * keep what it points at, never the pointer). Any thread. */
#define ir_op_attrs(op) (&(const ir_attrs){(op)->attr_v, (op)->nattrs})
/* Sets them (front ends). */
static inline void ir_op_set_attrs(ir_op *op, ir_attrs attrs) {
  op->attr_v = attrs.v;
  op->nattrs = attrs.n;
}
/* An op has at most this many regions (nregions' width); front ends refuse more. */
#define IR_MAX_REGIONS UINT16_MAX

/* The op's name: "stablehlo.add", "func.func", "builtin.module", HLO opcode "custom-call". Any thread. */
static inline ir_span ir_op_name(const ir_op *op) { return ir_span_of(op->name_p, op->name_len); }
/* Sets it; false (and nothing set) for a name longer than an op keeps (UINT16_MAX bytes). For front ends. */
static inline bool ir_op_set_name(ir_op *op, ir_span name) {
  if (name.n > UINT16_MAX) return false;
  op->name_p = name.p;
  op->name_len = (uint16_t)name.n;
  return true;
}

/* The op's regions (nregions of them; NULL when it has none). Any thread. */
static inline ir_region **ir_op_regions(const ir_op *op) { return op->extra ? op->extra->regions : NULL; }

_Static_assert(SC_OP_KIND_COUNT <= 64 && SC_CC_OTHER < 16, "ir_op.kind and ir_op.cc are 6 and 4 bits");

/* Result i (< nresults). Any thread. */
static inline ir_value *ir_op_result(const ir_op *op, uint32_t i) { return &op->result_values[i]; }

/* The enclosing func.func / HLO computation (the nearest func_like ancestor), or NULL. Any thread. */
static inline ir_op *ir_op_func(const ir_op *op) {
  ir_op *p = op->parent_op;
  while (p && !p->func_like) p = p->parent_op;
  return p;
}

/* The op's written operand and result types (NULL / 0 when its text writes none). */
static inline ir_span *ir_op_operand_types(const ir_op *op) { return op->types ? op->types->operand_types : NULL; }
static inline uint32_t ir_op_noperand_types(const ir_op *op) { return op->types ? op->types->noperand_types : 0; }
static inline ir_span *ir_op_result_types(const ir_op *op) { return op->types ? op->types->result_types : NULL; }
static inline uint32_t ir_op_nresult_types(const ir_op *op) { return op->types ? op->types->nresult_types : 0; }

/* The op that defines a result (an HLO parameter's: its parameter op), NULL for a block argument. */
static inline ir_op *ir_value_def(const ir_value *v) {
  return v->owner & IR_OWNER_BLOCK ? NULL : (ir_op *)(v->owner & ~(IR_OWNER_BLOCK | IR_OWNER_PARAM));
}
/* The block of a block argument (an HLO parameter's: its computation's), NULL for other results. */
static inline ir_block *ir_value_block(const ir_value *v) {
  if (v->owner & IR_OWNER_BLOCK) return (ir_block *)(v->owner & ~IR_OWNER_BLOCK);
  if (!(v->owner & IR_OWNER_PARAM)) return NULL;
  const ir_op *computation = ir_value_def(v)->parent_op;
  return ir_op_regions(computation)[0]->blocks[0];
}
static inline void ir_value_set_def(ir_value *v, ir_op *def) { v->owner = (uintptr_t)def; }
static inline void ir_value_set_block(ir_value *v, ir_block *b) { v->owner = b ? (uintptr_t)b | IR_OWNER_BLOCK : 0; }
/* An HLO parameter (its def already set) becomes its computation's argument too. */
static inline void ir_value_set_param(ir_value *v) { v->owner |= IR_OWNER_PARAM; }

/* A value's argument attributes (empty for results and arguments without any). An HLO parameter is
 * its parameter op's result and its computation's argument: its attributes are the op's. */
#define ir_value_attrs(v) ir_value_attrs_in((v), &(ir_attrs){NULL, 0})
/* ir_value_attrs(), with the record an HLO parameter's are put in (the caller's, as for ir_op_attrs). */
static inline const ir_attrs *ir_value_attrs_in(const ir_value *v, ir_attrs *param) {
  static const ir_attrs none = {NULL, 0};
  if (v->owner & IR_OWNER_PARAM) {
    param->v = ir_value_def(v)->attr_v;
    param->n = ir_value_def(v)->nattrs;
    return param;
  }
  const ir_block *b = ir_value_block(v);
  if (!b) return &none;
  const ir_attrs *a = b->arg_attrs && v->index < b->nargs ? b->arg_attrs[v->index] : NULL;
  return a ? a : &none;
}
/* A value's type as written ("tensor<8x16xf32>", "f32[8,16]{1,0}"), or empty if unknown: a result's is
 * its op's result type (the only one when the op writes one type for all its results), an argument's
 * its block's. An HLO parameter's is its parameter op's. Any thread. */
static inline ir_span ir_value_type(const ir_value *v) {
  static const ir_span none = {NULL, 0};
  const ir_op *d = ir_value_def(v);
  if (d) {
    const ir_op_types *t = d->types;
    if (!t) return none;
    return t->nresult_types == 1 ? t->result_types[0]
           : t->nresult_types == d->nresults && v->index < t->nresult_types ? t->result_types[v->index] : none;
  }
  const ir_block *b = ir_value_block(v);
  return b && b->arg_types && v->index < b->nargs ? b->arg_types[v->index] : none;
}
/* Sets argument `index`'s type (the table is made on first use; index < nargs). For front ends. */
void ir_block_set_arg_type(sc_arena *a, ir_block *b, uint32_t index, ir_span type);
/* Sets argument `index`'s attributes (the table is made on first use; index < nargs). For front ends. */
void ir_block_set_arg_attrs(sc_arena *a, ir_block *b, uint32_t index, const ir_attrs *attrs);

/* Region nesting depth (the module op's is 0): the length of its parent chain. Any thread. */
uint32_t ir_op_depth(const ir_op *op);

/* The block holding `op` (NULL for the module op and ops outside any block), found among its parent's
 * blocks by preorder ids: O(blocks of the parent + log ops of the block). *region, *block and *index
 * (each optional) get the region's and block's positions in the parent and the op's in the block. Any
 * thread; the module is only read. */
const ir_block *ir_op_block(const ir_op *op, uint32_t *region, uint32_t *block, uint32_t *index);

/* The op's side record, allocated (zeroed) on first use; for front ends. */
static inline ir_op_extra *ir_op_extra_of(sc_arena *a, ir_op *op) {
  if (!op->extra) op->extra = (ir_op_extra *)ar_calloc(a, 1, sizeof *op->extra);
  return op->extra;
}
/* The op's func/call record, allocated (zeroed) on first use with its side record; for front ends. */
static inline ir_op_decl *ir_op_decl_of(sc_arena *a, ir_op *op) {
  ir_op_extra *x = ir_op_extra_of(a, op);
  if (!x->decl) x->decl = (ir_op_decl *)ar_calloc(a, 1, sizeof *x->decl);
  return x->decl;
}
static inline const ir_op_decl *ir_op_decl_get(const ir_op *op) { return op->extra ? op->extra->decl : NULL; }
/* The op's name without the generic form's quotes (`"stablehlo.add"` -> `stablehlo.add`). */
static inline ir_span ir_op_bare_name(const ir_op *op) {
  ir_span n = ir_op_name(op);
  if (n.n >= 2 && n.p[0] == '"' && n.p[n.n - 1] == '"') n.p++, n.n -= 2;
  return n;
}
static inline ir_span ir_op_sym_name(const ir_op *op) {
  ir_span none = {0};
  return op->extra ? op->extra->sym_name : none;
}
static inline ir_span ir_op_callee(const ir_op *op) {
  ir_span none = {0};
  return ir_op_decl_get(op) ? ir_op_decl_get(op)->callee : none;
}
static inline ir_span ir_op_visibility(const ir_op *op) {
  ir_span none = {0};
  return ir_op_decl_get(op) ? ir_op_decl_get(op)->visibility : none;
}
/* The front end's own resolved location (not the `loc(...)` text; see ir_op_srcloc). */
static inline ir_srcloc ir_op_src(const ir_op *op) {
  ir_srcloc none = {0};
  return op->extra ? op->extra->src : none;
}
static inline uint32_t ir_op_nresult_attrs(const ir_op *op) {
  return ir_op_decl_get(op) ? ir_op_decl_get(op)->nresult_attrs : 0;
}
static inline ir_attrs *ir_op_result_attrs(const ir_op *op) {
  return ir_op_decl_get(op) ? ir_op_decl_get(op)->result_attrs : NULL;
}
static inline ir_span *ir_op_func_result_types(const ir_op *op) {
  return ir_op_decl_get(op) ? ir_op_decl_get(op)->func_result_types : NULL;
}

/* A #alias = value definition (locations, attributes) and !alias = type. */
typedef struct {
  ir_span name;  /* "#loc12" including the sigil */
  ir_span value;
} ir_alias;

/* One stored in/out sharding of a jax.export container (serialization.fbs table Sharding). */
typedef struct {
  uint8_t kind;          /* ShardingKind: 0 unspecified, 1 hlo_sharding */
  const uint8_t *proto;  /* hlo_sharding_proto: a serialized xla.OpSharding (points into the input) */
  uint32_t proto_len;
  bool unreadable;       /* the table or its byte vector leaves the buffer */
} ir_export_sharding;

/* What a jax.export container (Exported.serialize()) says about its module (lib/front/exported.c). */
typedef struct {
  ir_span function_name;
  ir_span *platforms;   /* "tpu", "cuda", "rocm", "cpu" */
  uint32_t nplatforms;
  uint32_t nr_devices;  /* 0 = not recorded */
  uint32_t calling_convention_version;
  uint32_t nin_shardings, nout_shardings, nordered_effects;
  ir_export_sharding *in_shardings, *out_shardings; /* nin_shardings / nout_shardings entries */
} ir_export_info;

typedef struct {
  sc_format format;
  const char *buf; /* the whole input (not just this chunk) */
  size_t len;
  uint32_t base_offset;   /* this module's start within buf (split-input-file) */
  uint32_t end_offset;
  ir_op *module;          /* root "builtin.module" op (implicit if the text had none) */
  bool implicit_module;   /* the front end made `module`: the text gave its ops without one */
  bool finalized;         /* ir_module_finalize() ran: ops classified, subtree ends set */
  ir_op **ops;            /* every op in preorder, module included */
  ir_span *op_names;      /* the distinct bare op names, by ir_op.name_id - 1 (ir_module_finalize) */
  uint32_t nop_names;
  uint32_t nops;
  ir_op **funcs;          /* func.func ops / HLO computations */
  uint32_t nfuncs;
  ir_alias *aliases;
  uint32_t naliases;
  /* Alias lookup index (open addressing over alias indices + 1) and memoized resolved locations;
   * built by ir_module_index_aliases(), used by ir_resolve_loc(). */
  uint32_t *alias_slots;
  uint32_t nalias_slots;
  uint64_t alias_seed;    /* the arena's hash key (alias names come from the input) */
  ir_srcloc *alias_src;
  uint8_t *alias_state; /* 0 unresolved, 1 resolving (cycle guard), 2 resolved */
  /* HLO: the ENTRY computation; MLIR: the public func named "main" if any. */
  ir_op *entry;
  const ir_export_info *exported; /* the container's facts, or NULL when the input was not one */
  const char *reader_note; /* the front end's remark on how it read the input (a producer newer than it
                              knows), reported as a note; NULL if none. In the arena. */
} ir_module;

/* The length of the op's text (ir_op_text). */
static inline uint32_t ir_op_text_len(const ir_op *op) { return op->end - op->pos.offset; }
/* The whole op as written, including its regions: bytes [pos, end) of its module's buffer (ops keep
 * offsets, not a second pointer). */
static inline ir_span ir_op_text(const ir_module *m, const ir_op *op) {
  return ir_span_of(m->buf + op->pos.offset, ir_op_text_len(op));
}

/* A point of the line map: an offset, the line it is on and where that line starts. */
typedef struct {
  uint32_t offset, line, line_start;
} ir_line_sample;

/* Line map over the whole input buffer: offset -> 1-based line/column. It keeps a sample at every
 * IR_LINE_SAMPLE_LINES-th line start and at least every IR_LINE_SAMPLE_BYTES bytes (inside long lines
 * too), so a lookup is a binary search and a scan of at most that many bytes, and the map takes a
 * fraction of an offset per line (a 100 MB module's offsets were 2.8 MB). */
#define IR_LINE_SAMPLE_LINES 16u
#define IR_LINE_SAMPLE_BYTES 4096u
typedef struct {
  const char *buf;
  uint32_t len;
  const ir_line_sample *samples; /* in offset order; the first is offset 0 */
  uint32_t nsamples;
  uint32_t nlines;
} ir_linemap;

/* In `a`; samples is NULL when the arena is out of memory. Any thread. */
ir_linemap ir_linemap_build(sc_arena *a, const char *buf, size_t len);
ir_pos ir_linemap_pos(const ir_linemap *m, uint32_t offset);
/* The 1-based line of an op's first token, or 0 without a line map (bytecode). */
static inline uint32_t ir_op_line(const ir_linemap *lines, const ir_op *op) {
  return lines && lines->nlines && op ? ir_linemap_pos(lines, op->pos.offset).line : 0;
}


/* Resolves op/arg `loc(...)` text through the alias table and callsite/name/fused locations to the
 * innermost "file":line:col. */
ir_srcloc ir_resolve_loc(const ir_module *m, ir_span loc);
/* The op's Python location: the front end's own (op->src) or, when it kept only the `loc(...)` text,
 * that text resolved now (diagnostics need it for a few ops, so no front end resolves every op's). */
ir_srcloc ir_op_srcloc(const ir_module *m, const ir_op *op);
/* How deep alias definitions that name other aliases are followed. */
#define IR_ALIAS_DEPTH 4
/* `t`, or when it is exactly a reference to one of the module's aliases with `sigil` ('#' attribute,
 * '!' type: "#s", "!t") that alias's definition, followed through IR_ALIAS_DEPTH levels. */
ir_span ir_alias_resolve(const ir_module *m, ir_span t, char sigil);
/* The value of the alias `name` ("#s", sigil included): false if the module defines none. */
bool ir_alias_value(const ir_module *m, ir_span name, ir_span *value);
/* Builds the alias index; front ends call it once the alias table is complete. */
void ir_module_index_aliases(sc_arena *a, ir_module *m);
/* Replaces every type written as a type alias (`!t` for `!t = tensor<...>`) by its definition, so
 * readers of types see what they stand for; after ir_module_index_aliases. */
void ir_module_resolve_type_aliases(ir_module *m);

/* For modules without lines (bytecode): fills each diagnostic's op_path from its offset (the deepest
 * op whose [pos.offset, end) holds it; ops are in preorder, so offsets are sorted) and turns machine
 * fixes (text edits of a module that has no text) into manual ones, dropping those with nothing left.
 * Path: "<function>/<i>/<j>" (op index within its block at each nesting level below the function; a
 * segment is "r<R>b<B>:<i>" in region R > 0 or block B > 0), or "module/<i>/..." outside functions. */
void ir_locate_without_lines(sc_arena *a, const ir_module *m, sc_diag *diags, size_t n);
/* Sets op->kind, op->cc and op->target from the op's name, callee and attributes (idempotent).
 * Every front end fills ir_op the same way (name span, attrs with value text), so this one function
 * classifies ops of any front end. Call it once the op's attributes are complete. */
void ir_op_classify(ir_op *op);
/* Completes what every front end leaves to the IR: classifies every op of `m` and sets each op's
 * subtree_end (ops must be in preorder with parent_op set), and interns the ops' bare names
 * (ir_op.name_id, ir_module.op_names) in `a`, the module's arena. The HLO text front end calls it
 * before returning and the MLIR one does the same work in its own walk (ir_op_finish); sc_check() calls
 * it again after any front end (a finalized module is left as it is), so a front end that does neither
 * still gets classified ops before the model and the rules run. */
void ir_module_finalize(sc_arena *a, ir_module *m);
/* How many distinct op names a module's ops get ids for (ir_op.name_id); further names get none. */
#define IR_MAX_OP_NAMES 65535u
/* The distinct op names of one module as they are met, each with an id (ir_op.name_id, from 1) and its
 * kind. ir_module_finalize interns every op's name; a front end may intern while it parses (the name's
 * text is at hand then) and finish the module itself. The table lives in `a`. */
typedef struct {
  ir_span name[16]; /* direct-mapped cache of recent names, in front of `ids` */
  uint16_t id[16];
  sc_arena *a;
  hs_name_map ids; /* bare name -> id */
  SC_VEC(ir_span) names;
  SC_VEC(uint8_t) kinds; /* ir_op_kind per id - 1 */
} ir_name_table;
void ir_name_table_init(ir_name_table *t, sc_arena *a);
/* Sets op->name_id from its bare name (0 when the table is full). */
void ir_op_name_intern(ir_name_table *t, ir_op *op);
/* Interns op's name if it has no id yet, and classifies it (ir_op_classify) if it is not yet: call it once
 * the op's attributes are complete. */
void ir_op_finish(ir_name_table *t, ir_op *op);
/* Gives `m` the table's names (ir_module.op_names). */
void ir_module_set_names(ir_module *m, const ir_name_table *t);
/* Whether some op of `m` may be named `name` (bare, as ir_module.op_names): false only when the finalized
 * module's names are all interned and none is `name`, so a check for one op can skip the module. */
bool ir_module_may_name(const ir_module *m, const char *name);

/* Convenience accessors. */
/* Operand i's name as written ("%0", "%0#1"; HLO: "p"): the MLIR text front end keeps operand_names only
 * for ops where some name is not its value's own, so this falls back to the value's name. */
static inline ir_span ir_op_operand_name(const ir_op *op, uint32_t i) {
  if (op->extra && op->extra->operand_names) return op->extra->operand_names[i];
  ir_span none = {0};
  return op->operands[i] ? op->operands[i]->name : none;
}
const ir_attr *ir_op_attr(const ir_op *op, const char *name);
/* Compares the op's name; for tests and front ends. Rules and the model compare op->kind instead. */
bool ir_op_is(const ir_op *op, const char *name);
/* stablehlo.custom_call / HLO custom-call: the call_target_name without quotes/'@', else empty. */
ir_span ir_op_custom_call_target(const ir_op *op);
/* The func.func op named `name` (no '@'), or NULL. A linear search, for tests and one-off lookups; rules
 * resolve names through md_model_func (hashed). */
ir_op *ir_module_func(const ir_module *m, ir_span name);
/* Walks ops in preorder starting at (and including) `root`; `fn` returns false to skip children. */
typedef bool (*ir_op_visit_fn)(ir_op *op, void *user);
void ir_op_walk(ir_op *root, ir_op_visit_fn fn, void *user);

/* Parsed tensor type: "tensor<8x?x16xf32>" / HLO "f32[8,16]{1,0}". rank -1 = unranked/unknown;
 * dims[i] == -1 for a dynamic dimension. Returns false if `type` is not a tensor type. */
typedef struct {
  int32_t rank;
  int64_t *dims;
  ir_span element;
} ir_tensor_type;
bool ir_parse_tensor_type(sc_arena *a, ir_span type, ir_tensor_type *out);
/* A rank-0 MLIR tensor type: `tensor<` then the element type, no dimension (digits, `?`, `*`) first. */
static inline bool ir_type_is_scalar_tensor(ir_span type) {
  return type.n > 7 && !memcmp(type.p, "tensor<", 7) && !((type.p[7] >= '0' && type.p[7] <= '9') || type.p[7] == '?' || type.p[7] == '*');
}

#endif
