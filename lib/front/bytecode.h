/* bytecode.h — internals shared by the MLIR bytecode front end (bytecode.c: sections and IR;
 * bytecode_attr.c: attributes, types and their text). Not a public interface.
 *
 * Every read is checked against the end of its section; the first error sticks (bc_fail) and every
 * later read returns zero, so callers check bc_ok() at loop heads rather than after each read.
 *
 * Text the rules read (attribute values, types, op names) is written into one contiguous "text pool"
 * in the order ops are built (preorder); the module's `buf` is that pool. So every span the IR holds
 * has an offset, an op's attributes lie inside its [pos.offset, end) range and its children's ranges
 * nest inside it, as in a text module. */
#ifndef SC_FRONT_BYTECODE_H
#define SC_FRONT_BYTECODE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "front/front.h"
#include "ir/ir.h"

/* The newest MLIR bytecode version this reader knows (kNativePropertiesODSSegmentSize). */
#define BC_MAX_VERSION 6u
/* The newest StableHLO whose VHLO ops, attributes and types this reader knows (VhloOps.td, VhloAttrs.td,
 * VhloTypes.td), and the newest sdy dialect version (shardy/dialect/sdy/ir/dialect.h). */
#define BC_NEWEST_STABLEHLO_MAJOR 1u
#define BC_NEWEST_STABLEHLO_MINOR 20u
#define BC_SDY_VERSION_MAJOR 0u
#define BC_SDY_VERSION_MINOR 0u
#define BC_SDY_VERSION_PATCH 2u

typedef struct {
  const uint8_t *p, *end;
} bc_rd;

typedef enum { BC_D_OTHER = 0, BC_D_BUILTIN, BC_D_VHLO, BC_D_SDY } bc_dialect_kind;

typedef struct bc_type bc_type;
typedef struct bc_attr bc_attr;

/* A decoded attribute (memoized per index). Which fields are used depends on `kind`. */
typedef enum {
  BA_ASM = 1, /* assembly-format fallback or anything rendered as fixed text: `s` */
  BA_STRING,  /* `s` raw (unescaped) value; `t` type for typed strings */
  BA_SYMREF,  /* `s` root name; `v` nested references */
  BA_TYPE,    /* `t` */
  BA_UNIT,
  BA_BOOL,    /* `i` */
  BA_INT,     /* `i`, `t` (value as signed 64-bit; `wide` when wider) */
  BA_FLOAT,   /* `f`, `t` */
  BA_ARRAY,   /* `v[n]` */
  BA_DICT,    /* `k[n]` names (string attrs), `v[n]` values */
  BA_DENSE,   /* `t` shaped type, `blob` raw data */
  BA_DENSE_ARRAY, /* `t` element type, `i` count, `blob` */
  BA_DENSE_STRING, /* `t`, `v` string attrs (one when splat) */
  BA_LOC_UNKNOWN,
  BA_LOC_FILE,    /* `s` file, `i` line, `j` column */
  BA_LOC_NAME,    /* `s` name, `v[0]` child */
  BA_LOC_CALLSITE,/* `v[0]` callee, `v[1]` caller */
  BA_LOC_FUSED,   /* `v[n]` */
  BA_ENUM,        /* `s` text of a VHLO enum/int-like attribute (`#stablehlo<...>` or `N : i32`) */
  BA_SDY_MESH_AXIS, /* `s` name, `i` size */
  BA_SDY_MESH,      /* `v` axes, `ids` device ids (nids) */
  BA_SDY_SUB_AXIS,  /* `i` pre-size, `j` size */
  BA_SDY_AXIS_REF,  /* `s` name, `v[0]` sub-axis info or NULL */
  BA_SDY_DIM,       /* `v` axes, `i` closed, `j` priority (-1 none) */
  BA_SDY_SHARDING,  /* `v[0]` mesh or ref, `k` dims (n), `w` replicated (nw), `x` unreduced (nx), `i` reduction */
  BA_SDY_PER_VALUE, /* `v` shardings */
  BA_SDY_MANUAL_AXES, /* `v` string attrs */
  BA_SDY_AXIS_LIST,   /* `v` axis refs */
  BA_SDY_AXIS_LISTS,  /* `v` axis lists */
} bc_attr_kind;

struct bc_attr {
  uint8_t kind;
  bool wide;
  uint32_t n, nw, nx, nids;
  bc_attr **v, **k, **w, **x;
  int64_t *ids;
  ir_span s;
  int64_t i, j;
  double f;
  const bc_type *t;
  const uint8_t *blob;
  uint32_t nblob;
  ir_srcloc loc;  /* resolved source location (locations) */
  uint8_t loc_state; /* 0 unresolved, 1 resolving, 2 done */
};

/* A decoded type: its StableHLO text plus what dense-element rendering needs. */
struct bc_type {
  ir_span text;
  uint8_t elem_kind;   /* 0 other, 1 signed/signless int, 2 unsigned int, 3 float, 4 bool(i1), 5 complex */
  uint32_t elem_bits;  /* element width for ints/floats */
  int64_t nelems;      /* shaped types: element count (-1 if dynamic/unranked) */
  int32_t rank;        /* ranked shaped types, else -1 */
  int64_t *dims;
  const bc_type *elem; /* shaped types: element type */
  const bc_type **ins, **outs; /* function types */
  uint32_t nins, nouts;
};

typedef struct {
  const uint8_t *p;
  uint32_t n;
  uint16_t dialect;
  bool custom;
  uint8_t state; /* 0 not decoded, 1 decoding (cycle guard), 2 done */
  void *val;
} bc_entry;

typedef struct {
  ir_span name; /* "vhlo.custom_call_v1" (in the text pool) */
  uint16_t dialect;
  bool registered, has_registered;
} bc_opname;

typedef struct bc {
  sc_arena *a;
  const uint8_t *base; /* the bytecode (may sit inside a container) */
  size_t len;
  uint32_t base_off;   /* its offset within the whole input, for error offsets */
  fe_parse_error *err;
  uint64_t version;
  ir_span producer;
  bool newer_producer; /* a StableHLO producer newer than BC_NEWEST_STABLEHLO_*: read, with a note */
  ir_span *strs;
  uint32_t nstrs;
  ir_span *dialects;
  uint8_t *dialect_kind;
  uint32_t ndialects;
  bc_opname *opnames;
  uint32_t nopnames;
  bc_entry *attrs, *types;
  uint32_t nattrs, ntypes;
  const uint8_t *props;   /* properties buffer and its entry offsets */
  size_t nprops_buf;
  uint32_t *prop_off;
  uint32_t nprops;
  uint32_t depth;         /* attribute/type nesting during decoding */
  uint32_t render_depth;  /* nesting while rendering (memoized entries can chain deeper than decoding) */
  /* text pool */
  char *pool;
  size_t pool_cap, pool_used;
  bool pool_full;
} bc;

/* ---- reading ---- */
bool bc_ok(const bc *s);
void bc_fail(bc *s, const uint8_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
uint8_t bc_byte(bc *s, bc_rd *r);
uint64_t bc_varint(bc *s, bc_rd *r);
int64_t bc_svarint(bc *s, bc_rd *r);
uint64_t bc_varint_flag(bc *s, bc_rd *r, bool *flag);
const uint8_t *bc_bytes(bc *s, bc_rd *r, uint64_t n);
/* A count about to drive a loop: bounded by the bytes left (each element takes at least one). */
uint64_t bc_count(bc *s, bc_rd *r);
ir_span bc_string(bc *s, bc_rd *r);

/* ---- text pool ---- */
ir_span bc_put(bc *s, const char *p, size_t n);
ir_span bc_puts(bc *s, const char *str);
ir_span bc_printf(bc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* MLIR string literal: quotes, and \XX for '"', '\\' and non-printable bytes. */
void bc_put_quoted(bc *s, ir_span raw);
static inline size_t bc_mark(const bc *s) { return s->pool_used; }
static inline ir_span bc_since(const bc *s, size_t mark) {
  return s->pool_full ? ir_span_of("", 0) : ir_span_of(s->pool + mark, (uint32_t)(s->pool_used - mark));
}

/* ---- attributes and types (bytecode_attr.c) ---- */
/* The properties buffer entry `index` (v5+), or NULL with an error. */
bool bc_prop_entry(bc *s, uint64_t index, bc_rd *out);
const bc_attr *bc_attr_at(bc *s, uint64_t index);
const bc_type *bc_type_at(bc *s, uint64_t index);
const bc_attr *bc_read_attr(bc *s, bc_rd *r);
const bc_type *bc_read_type(bc *s, bc_rd *r);
/* Appends the attribute's MLIR text to the pool. */
void bc_render(bc *s, const bc_attr *a);
/* The innermost "file":line:col of a location, resolved through name/callsite/fused locations. */
ir_srcloc bc_resolve_loc(bc *s, const bc_attr *loc);
/* The raw string of a string attribute (builtin or VHLO), or empty. */
ir_span bc_attr_str(const bc_attr *a);

#endif
