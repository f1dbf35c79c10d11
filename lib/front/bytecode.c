/* bytecode.c — MLIR bytecode front end: the StableHLO portable artifact JAX serializes
 * (`Exported.mlir_module_serialized`), read without MLIR into the IR the text front end builds.
 *
 * Layout (MLIR's docs/BytecodeFormat.md): magic `ML\xefR`, version, producer, then sections: strings,
 * dialects with op names (and dialect versions), attribute/type data plus offsets, the IR (ops with
 * nested regions; isolated regions in their own sub-sections from version 2), resources (skipped)
 * and properties (version 5+). Use-list orders are read and ignored.
 *
 * The IR matches what the text front end produces for the module's `.mlir` form: VHLO op names become
 * StableHLO's (`vhlo.custom_call_v1` -> `stablehlo.custom_call`, `vhlo.func_v1` -> `func.func`, ...),
 * attributes keep their names with the value text StableHLO prints (VHLO's defaults elided), func
 * signatures fill the entry block arguments' attributes and the result attributes, and each op's
 * source location is resolved from its debug location. Ops are flagged `generic` (their attributes are
 * named, as in the generic form), and have no line: their offsets are positions in the text pool
 * (bytecode.h), assigned in preorder, so an op's range covers its attributes and its children. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/bytecode.h"

/* ---- sections ----------------------------------------------------------------------------------- */

enum { S_STRING = 0, S_DIALECT, S_ATTR_TYPE, S_ATTR_TYPE_OFFSET, S_IR, S_RESOURCE, S_RESOURCE_OFFSET, S_DIALECT_VERSIONS,
       S_PROPERTIES, S_COUNT };

/* One section header and body: id | hasAlign << 7, length, [alignment, 0xCB padding]. */
static bool read_section(bc *s, bc_rd *r, unsigned *id, bc_rd *body) {
  const uint8_t *at = r->p;
  uint8_t b = bc_byte(s, r);
  uint64_t len = bc_varint(s, r);
  *id = b & 0x7f;
  if (bc_ok(s) && *id >= S_COUNT) {
    bc_fail(s, at, "unknown section id %u", *id);
    return false;
  }
  if (b & 0x80) {
    uint64_t align = bc_varint(s, r);
    if (bc_ok(s) && (align == 0 || (align & (align - 1)) || align > 4096)) {
      bc_fail(s, at, "section alignment %" PRIu64 " is not a power of two up to 4096", align);
      return false;
    }
    while (bc_ok(s) && ((size_t)(r->p - s->base) & (align - 1))) {
      if (bc_byte(s, r) != 0xCB && bc_ok(s)) bc_fail(s, r->p - 1, "expected alignment padding byte 0xCB");
    }
  }
  const uint8_t *p = bc_bytes(s, r, len);
  if (!bc_ok(s)) return false;
  body->p = p;
  body->end = p + len;
  return true;
}

static void read_strings(bc *s, bc_rd r) {
  uint64_t n = bc_count(s, &r);
  s->strs = ar_calloc(s->a, n ? n : 1, sizeof *s->strs);
  s->nstrs = (uint32_t)n;
  /* Sizes (each with its NUL) come in reverse order; the data sits at the end of the section. */
  const uint8_t *data_end = r.end;
  for (uint64_t k = n; k-- > 0 && bc_ok(s);) {
    const uint8_t *at = r.p;
    uint64_t size = bc_varint(s, &r);
    if (!bc_ok(s)) return;
    if (size == 0 || size > (uint64_t)(data_end - r.p)) {
      bc_fail(s, at, "string size %" PRIu64 " exceeds the string data", size);
      return;
    }
    data_end -= size;
    if (data_end[size - 1] != 0) {
      bc_fail(s, data_end, "string %" PRIu64 " is not NUL-terminated", k);
      return;
    }
    s->strs[k] = ir_span_of((const char *)data_end, (uint32_t)(size - 1));
  }
  if (bc_ok(s) && r.p != data_end) bc_fail(s, r.p, "unexpected data between the string sizes and the strings");
}

static uint8_t dialect_kind(ir_span name) {
  if (ir_span_eq(name, "builtin")) return BC_D_BUILTIN;
  if (ir_span_eq(name, "vhlo")) return BC_D_VHLO;
  if (ir_span_eq(name, "sdy")) return BC_D_SDY;
  return BC_D_OTHER;
}

/* The sdy dialect's version entry (major, minor, patch): Shardy refuses a newer dialect than it knows,
 * and its attribute encodings depend on it (0.0.1 writes unreduced axes as TensorShardingAttr V2). */
static void check_sdy_version(bc *s, bc_rd ver) {
  const uint8_t *at = ver.p;
  uint64_t v[3];
  for (int k = 0; k < 3; k++) v[k] = bc_varint(s, &ver);
  if (!bc_ok(s)) return;
  uint64_t newest[3] = {BC_SDY_VERSION_MAJOR, BC_SDY_VERSION_MINOR, BC_SDY_VERSION_PATCH};
  for (int k = 0; k < 3; k++) {
    if (v[k] < newest[k]) return;
    if (v[k] > newest[k]) {
      bc_fail(s, at,
              "the sdy (Shardy) dialect version %" PRIu64 ".%" PRIu64 ".%" PRIu64 " is newer than %u.%u.%u, the newest "
              "this reader knows; serialize with an older Shardy target version or update shardcheck",
              v[0], v[1], v[2], BC_SDY_VERSION_MAJOR, BC_SDY_VERSION_MINOR, BC_SDY_VERSION_PATCH);
      return;
    }
  }
}

/* VHLO ops of StableHLO up to v1.20 (openxla/stablehlo stablehlo/dialect/VhloOps.td), sorted: an op
 * outside it is refused rather than read without its attributes. */
static const char *const k_vhlo_ops[] = {
    "abs_v1", "add_v1", "after_all_v1", "all_gather_v1", "all_gather_v2", "all_reduce_v1", "all_reduce_v2",
    "all_to_all_v1", "all_to_all_v2", "and_v1", "async_done_v1", "async_start_v1", "atan2_v1",
    "batch_norm_grad_v1", "batch_norm_inference_v1", "batch_norm_training_v1", "bitcast_convert_v1",
    "broadcast_in_dim_v1", "broadcast_v1", "call_v1", "case_v1", "cbrt_v1", "cbrt_v2", "ceil_v1", "cholesky_v1",
    "clamp_v1", "collective_broadcast_v1", "collective_broadcast_v2", "collective_permute_v1",
    "collective_reduce_v1", "compare_v1", "complex_v1", "composite_v1", "composite_v2", "concatenate_v1",
    "constant_v1", "convert_v1", "convolution_v1", "cosine_v1", "cosine_v2", "count_leading_zeros_v1",
    "create_token_v1", "cross-replica-sum_v1", "custom_call_v1", "custom_call_v2", "divide_v1", "dot_general_v1", "dot_general_v2",
    "dot_v1", "dynamic_broadcast_in_dim_v1", "dynamic_conv_v1", "dynamic_conv_v2", "dynamic_gather_v1",
    "dynamic_gather_v2", "dynamic_iota_v1", "dynamic_pad_v1", "dynamic_reshape_v1", "dynamic_slice_v1",
    "dynamic_update_slice_v1", "einsum_v1", "exponential_minus_one_v1", "exponential_minus_one_v2",
    "exponential_v1", "exponential_v2", "fft_v1", "floor_v1", "func_v1", "gather_v1", "gather_v2",
    "get_dimension_size_v1", "get_tuple_element_v1", "if_v1", "imag_v1", "infeed_v1", "iota_v1", "is_finite_v1",
    "log_plus_one_v1", "log_plus_one_v2", "log_v1", "log_v2", "logistic_v1", "logistic_v2", "map_v1",
    "maximum_v1", "minimum_v1", "multiply_v1", "negate_v1", "not_v1", "optimization_barrier_v1", "or_v1",
    "outfeed_v1", "pad_v1", "partition_id_v1", "popcnt_v1", "power_v1", "real_dynamic_slice_v1", "real_v1",
    "recv_v1", "recv_v2", "reduce_precision_v1", "reduce_scatter_v1", "reduce_v1", "reduce_window_v1",
    "remainder_v1", "replica_id_v1", "reshape_v1", "return_v1", "reverse_v1", "rng_bit_generator_v1", "rng_v1",
    "round_nearest_afz_v1", "round_nearest_even_v1", "rsqrt_v1", "rsqrt_v2", "scatter_v1", "scatter_v2",
    "select_and_scatter_v1", "select_v1", "send_v1", "send_v2", "set_dimension_size_v1", "shift_left_v1",
    "shift_right_arithmetic_v1", "shift_right_logical_v1", "sign_v1", "sine_v1", "sine_v2", "slice_v1",
    "sort_v1", "sqrt_v1", "sqrt_v2", "subtract_v1", "tan_v1", "tan_v2", "tanh_v1", "tanh_v2",
    "torch_index_select_v1", "transpose_v1", "triangular_solve_v1", "tuple_v1", "unary_einsum_v1",
    "uniform_dequantize_v1", "uniform_quantize_v1", "while_v1", "xor_v1",
};

static int span_vs_cstr(const void *key, const void *elem) {
  const ir_span *k = key;
  const char *e = *(const char *const *)elem;
  size_t n = strlen(e);
  int c = memcmp(k->p, e, k->n < n ? k->n : n);
  return c ? c : (k->n > n) - (k->n < n);
}

static bool known_vhlo_op(ir_span base) {
  return bsearch(&base, k_vhlo_ops, sizeof k_vhlo_ops / sizeof *k_vhlo_ops, sizeof *k_vhlo_ops, span_vs_cstr) != NULL;
}

static uint16_t read_dialect_ref(bc *s, bc_rd *r) {
  const uint8_t *at = r->p;
  uint64_t d = bc_varint(s, r);
  if (bc_ok(s) && d >= s->ndialects) bc_fail(s, at, "dialect index %" PRIu64 " out of range", d);
  return bc_ok(s) ? (uint16_t)d : 0;
}

static void read_dialects(bc *s, bc_rd r) {
  uint64_t n = bc_count(s, &r);
  if (n > 65535) bc_fail(s, r.p, "too many dialects");
  s->dialects = ar_calloc(s->a, n ? n : 1, sizeof *s->dialects);
  s->dialect_kind = ar_calloc(s->a, n ? n : 1, 1);
  s->ndialects = bc_ok(s) ? (uint32_t)n : 0;
  for (uint64_t i = 0; i < s->ndialects && bc_ok(s); i++) {
    if (s->version < 1) {
      s->dialects[i] = bc_string(s, &r);
    } else {
      bool versioned;
      const uint8_t *at = r.p;
      uint64_t idx = bc_varint_flag(s, &r, &versioned);
      if (bc_ok(s) && idx >= s->nstrs) bc_fail(s, at, "dialect name index out of range");
      if (!bc_ok(s)) return;
      s->dialects[i] = s->strs[idx];
      unsigned id;
      bc_rd ver;
      s->dialect_kind[i] = dialect_kind(s->dialects[i]);
      if (versioned && read_section(s, &r, &id, &ver)) {
        if (id != S_DIALECT_VERSIONS) bc_fail(s, at, "expected a dialect version section");
        else if (s->dialect_kind[i] == BC_D_SDY) check_sdy_version(s, ver);
      }
      continue;
    }
    s->dialect_kind[i] = dialect_kind(s->dialects[i]);
  }
  if (s->version >= 4) bc_varint(s, &r); /* number of op names (a reservation hint) */
  SC_VEC(bc_opname) names = {0};
  while (bc_ok(s) && r.p < r.end) {
    uint16_t d = read_dialect_ref(s, &r);
    uint64_t cnt = bc_count(s, &r);
    for (uint64_t i = 0; i < cnt && bc_ok(s); i++) {
      bc_opname on = {.dialect = d};
      ir_span base;
      if (s->version >= 5) {
        const uint8_t *at = r.p;
        uint64_t idx = bc_varint_flag(s, &r, &on.registered);
        if (bc_ok(s) && idx >= s->nstrs) bc_fail(s, at, "op name index out of range");
        if (!bc_ok(s)) return;
        base = s->strs[idx];
        on.has_registered = true;
      } else {
        base = bc_string(s, &r);
      }
      if (s->dialect_kind[d] == BC_D_VHLO && !known_vhlo_op(base)) {
        bc_fail(s, r.p, "the VHLO op 'vhlo.%.*s' is not in StableHLO v%u.%u, the newest this reader knows; the artifact "
                "(producer '%.*s') needs a shardcheck that knows that StableHLO version",
                SC_SPAN_ARG(base), BC_NEWEST_STABLEHLO_MAJOR, BC_NEWEST_STABLEHLO_MINOR, SC_SPAN_ARG(s->producer));
        return;
      }
      on.name = ir_span_of(ar_printf(s->a, "%.*s.%.*s", SC_SPAN_ARG(s->dialects[d]), SC_SPAN_ARG(base)),
                           s->dialects[d].n + 1 + base.n);
      SC_PUSH(s->a, names, on);
    }
  }
  s->opnames = names.v;
  s->nopnames = (uint32_t)names.n;
}

/* Offsets section: counts, then per dialect group the (size << 1 | custom) of each entry in order. */
static void read_attr_type_offsets(bc *s, bc_rd r, bc_rd data) {
  uint64_t na = bc_count(s, &r), nt = bc_count(s, &r);
  s->attrs = ar_calloc(s->a, na ? na : 1, sizeof *s->attrs);
  s->types = ar_calloc(s->a, nt ? nt : 1, sizeof *s->types);
  s->nattrs = bc_ok(s) ? (uint32_t)na : 0;
  s->ntypes = bc_ok(s) ? (uint32_t)nt : 0;
  const uint8_t *cur = data.p;
  for (int pass = 0; pass < 2 && bc_ok(s); pass++) {
    bc_entry *v = pass ? s->types : s->attrs;
    uint64_t total = pass ? nt : na, done = 0;
    while (done < total && bc_ok(s)) {
      uint16_t d = read_dialect_ref(s, &r);
      uint64_t cnt = bc_count(s, &r);
      if (bc_ok(s) && cnt > total - done) bc_fail(s, r.p, "more attribute/type entries than declared");
      for (uint64_t i = 0; i < cnt && bc_ok(s); i++) {
        bool custom;
        uint64_t size = bc_varint_flag(s, &r, &custom);
        if (bc_ok(s) && size > (uint64_t)(data.end - cur)) bc_fail(s, r.p, "attribute/type entry runs past its section");
        if (!bc_ok(s)) return;
        v[done++] = (bc_entry){cur, (uint32_t)size, d, custom, 0, NULL};
        cur += size;
      }
    }
  }
  if (bc_ok(s) && r.p != r.end) bc_fail(s, r.p, "unexpected trailing data in the attribute/type offsets");
}

static void read_properties(bc *s, bc_rd r) {
  if (r.p == r.end) return;
  uint64_t n = bc_count(s, &r);
  s->props = r.p;
  s->nprops_buf = (size_t)(r.end - r.p);
  s->prop_off = ar_calloc(s->a, n ? n : 1, sizeof *s->prop_off);
  for (uint64_t i = 0; i < n && bc_ok(s); i++) {
    s->prop_off[i] = (uint32_t)(r.p - s->props);
    uint64_t size = bc_varint(s, &r);
    bc_bytes(s, &r, size);
  }
  s->nprops = bc_ok(s) ? (uint32_t)n : 0;
}

bool bc_prop_entry(bc *s, uint64_t index, bc_rd *out) {
  if (index >= s->nprops) {
    bc_fail(s, NULL, "properties index %" PRIu64 " out of range (%u entries)", index, s->nprops);
    return false;
  }
  bc_rd r = {s->props + s->prop_off[index], s->props + s->nprops_buf};
  uint64_t size = bc_varint(s, &r);
  const uint8_t *p = bc_bytes(s, &r, size);
  if (!p) return false;
  out->p = p;
  out->end = p + size;
  return true;
}

/* ---- IR building -------------------------------------------------------------------------------- */

typedef SC_VEC(ir_attr) attr_vec;
typedef SC_VEC(ir_value *) value_vec;

/* Values of one isolated-from-above scope; each open region reserves its range. */
typedef struct {
  value_vec vals;
} scope;

typedef struct {
  bc *s;
  const fe_parse_input *in;
  SC_VEC(ir_op *) ops;
  SC_VEC(ir_op *) funcs;
  scope *sc; /* innermost scope */
  uint32_t depth;
  /* Values and blocks the open regions declared and have not read yet. Each still needs at least one
   * byte of what is left of the IR section (a type index, a block header), so a count past that is a
   * lie caught before its slots are reserved: nested regions cannot multiply the input by their depth. */
  uint64_t pending;
  const uint8_t *ir_end;
  bool forward_results; /* some op's result was used before the op (see resolve_forward_results) */
} builder;

static bool op_is(const ir_op *op, const char *name) { return ir_span_eq(ir_op_name(op), name); }

/* The one place an op is created: preorder id, its name written at its start in the text pool. */
static ir_op *new_op(builder *b, ir_span name, ir_op *parent) {
  bc *s = b->s;
  if (b->ops.n >= b->in->max_ops) {
    bc_fail(s, NULL, "more than %u operations", b->in->max_ops);
    s->err->limit = true;
    return NULL;
  }
  if (b->in->cancel && (b->ops.n & 1023) == 0 && *b->in->cancel) {
    s->err->cancelled = true;
    bc_fail(s, NULL, "cancelled");
    return NULL;
  }
  ir_op *op = ar_alloc(s->a, sizeof *op);
  op->id = (uint32_t)b->ops.n;
  SC_PUSH(s->a, b->ops, op);
  op->pos.offset = (uint32_t)bc_mark(s);
  if (!ir_op_set_name(op, bc_put(s, name.p, name.n))) bc_fail(s, NULL, "operation name longer than %u bytes", (unsigned)UINT16_MAX);
  op->generic = true;
  op->parent_op = parent;
  op->func_like = op_is(op, "func.func");
  if (op->func_like) SC_PUSH(s->a, b->funcs, op);
  return op;
}

/* The one place an attribute is added: `name = <value text>` written into the op's range. */
static void add_attr(builder *b, attr_vec *v, ir_span name, const bc_attr *val) {
  bc *s = b->s;
  ir_attr at;
  memset(&at, 0, sizeof at);
  at.offset = (uint32_t)bc_mark(s);
  at.name = bc_put(s, name.p, name.n);
  size_t m = bc_mark(s);
  if (val && val->kind != BA_UNIT) bc_render(s, val);
  at.value = bc_since(s, m);
  at.end = (uint32_t)bc_mark(s);
  SC_PUSH(s->a, *v, at);
}

static void add_attr_text(builder *b, attr_vec *v, const char *name, ir_span text) {
  bc *s = b->s;
  ir_attr at;
  memset(&at, 0, sizeof at);
  at.offset = (uint32_t)bc_mark(s);
  at.name = bc_puts(s, name);
  at.value = bc_put(s, text.p, text.n);
  at.end = (uint32_t)bc_mark(s);
  SC_PUSH(s->a, *v, at);
}

/* StableHLO's name for an op: VHLO `vhlo.<name>_v<N>` -> `stablehlo.<name>`, with the func dialect's
 * ops mapped back to `func.*`. */
static ir_span stablehlo_name(builder *b, const bc_opname *on, const ir_op *parent) {
  ir_span n = on->name;
  if (b->s->dialect_kind[on->dialect] != BC_D_VHLO) return n;
  ir_span base = ir_span_of(n.p + 5, n.n - 5);
  uint32_t k = base.n;
  while (k > 0 && base.p[k - 1] >= '0' && base.p[k - 1] <= '9') k--;
  if (k >= 2 && k < base.n && base.p[k - 1] == 'v' && base.p[k - 2] == '_') base.n = k - 2;
  if (ir_span_eq(base, "func")) return ir_span_of("func.func", 9);
  if (ir_span_eq(base, "call")) return ir_span_of("func.call", 9);
  if (ir_span_eq(base, "return") && parent && op_is(parent, "func.func")) return ir_span_of("func.return", 11);
  return ir_span_of(ar_printf(b->s->a, "stablehlo.%.*s", SC_SPAN_ARG(base)), 10 + base.n);
}

/* Attributes StableHLO does not print when VHLO carries them at their defaults. */
static bool vhlo_default(const bc_attr *v, ir_span name) {
  if (!v) return true;
  if (v->kind == BA_BOOL && !v->i) return true;
  if (v->kind == BA_ARRAY && v->n == 0) return true;
  if (v->kind == BA_STRING && v->s.n == 0 && !v->t) return true;
  if (v->kind == BA_ENUM && ir_span_eq(name, "api_version") && v->i == 1) return true;
  return false;
}

/* What an op header carries beyond its attributes: func signatures, waiting for the entry block. */
typedef struct {
  ir_attrs *arg_attrs;
  uint32_t narg_attrs;
  const bc_type *fn_type;
} op_extra;

static ir_attrs *dict_list(builder *b, const bc_attr *list, uint32_t *n) {
  *n = 0;
  if (!list || list->kind != BA_ARRAY) return NULL;
  ir_attrs *out = ar_calloc(b->s->a, list->n ? list->n : 1, sizeof *out);
  for (uint32_t i = 0; i < list->n; i++) {
    const bc_attr *d = list->v[i];
    if (!d || d->kind != BA_DICT) continue;
    attr_vec v = {0};
    for (uint32_t k = 0; k < d->n; k++) add_attr(b, &v, bc_attr_str(d->k[k]), d->v[k]);
    out[i].v = v.v;
    out[i].n = (uint32_t)v.n;
  }
  *n = list->n;
  return out;
}

/* One named attribute of an op: symbols and signatures go to their op fields (as the pretty form
 * shows them); everything else becomes an ir_attr. */
static void take_attr(builder *b, ir_op *op, attr_vec *attrs, op_extra *x, ir_span name, const bc_attr *val,
                      bool vhlo) {
  bool func = op_is(op, "func.func"), module = op_is(op, "builtin.module"), mesh = op_is(op, "sdy.mesh");
  if ((func || module || mesh) && ir_span_eq(name, "sym_name") && val && val->kind == BA_STRING) {
    ir_op_extra_of(b->s->a, op)->sym_name = bc_put(b->s, val->s.p, val->s.n);
    return;
  }
  if ((func || module) && ir_span_eq(name, "sym_visibility") && val && val->kind == BA_STRING) {
    ir_op_decl_of(b->s->a, op)->visibility = bc_put(b->s, val->s.p, val->s.n);
    return;
  }
  if (func && ir_span_eq(name, "function_type") && val && val->kind == BA_TYPE) {
    x->fn_type = val->t;
    return;
  }
  if (func && ir_span_eq(name, "arg_attrs")) {
    x->arg_attrs = dict_list(b, val, &x->narg_attrs);
    return;
  }
  if (func && ir_span_eq(name, "res_attrs")) {
    ir_op_decl *e = ir_op_decl_of(b->s->a, op);
    e->result_attrs = dict_list(b, val, &e->nresult_attrs);
    return;
  }
  if ((op_is(op, "stablehlo.custom_call") && ir_span_eq(name, "call_target_name")) ||
      (op_is(op, "func.call") && ir_span_eq(name, "callee"))) {
    if (val && (val->kind == BA_STRING || val->kind == BA_SYMREF)) {
      ir_op_decl_of(b->s->a, op)->callee = bc_put(b->s, val->s.p, val->s.n);
      return;
    }
  }
  if (vhlo && vhlo_default(val, name)) return;
  if (vhlo && val && val->kind == BA_BOOL && ir_span_eq(name, "use_global_device_ids")) {
    add_attr(b, attrs, name, NULL);
    return;
  }
  add_attr(b, attrs, name, val);
  if (mesh && ir_span_eq(name, "mesh") && attrs->v[attrs->n - 1].value.n > 9) {
    ir_span body = attrs->v[attrs->n - 1].value; /* #sdy.mesh<...> -> value = <...> as the pretty form */
    add_attr_text(b, attrs, "value", ir_span_of(body.p + 9, body.n - 9));
  }
}

/* Properties of a registered op: ODS writes an op's attribute properties sorted by name, required
 * ones as an attribute index, optional ones with a presence flag ("?name" below). VHLO ops declare
 * every attribute required. Ops not listed here keep their properties out of the IR (no rule reads
 * them); their discardable attributes (mhlo.sharding, ...) are in the attribute dictionary anyway. */
typedef struct {
  const char *op; /* as serialized: "vhlo.custom_call_v1" */
  const char *props[9];
} prop_schema;

static const prop_schema k_prop_schemas[] = {
    {"builtin.module", {"?sym_name", "?sym_visibility"}},
    {"sdy.mesh", {"mesh", "sym_name"}},
    {"sdy.sharding_constraint", {"sharding"}},
    {"sdy.reshard", {"sharding"}},
    {"sdy.manual_computation", {"in_shardings", "manual_axes", "out_shardings"}},
    {"sdy.named_computation", {"?in_shardings", "name", "?out_shardings"}},
    {"sdy.sharding_group", {"group_id"}},
    {"sdy.data_flow_edge", {"?sharding"}},
    {"sdy.propagation_barrier", {"allowed_direction"}},
    {"func.func", {"?arg_attrs", "function_type", "?no_inline", "?res_attrs", "sym_name", "?sym_visibility"}},
    {"func.call", {"?arg_attrs", "callee", "?no_inline", "?res_attrs"}},
    {"vhlo.func_v1", {"arg_attrs", "function_type", "res_attrs", "sym_name", "sym_visibility"}},
    {"vhlo.call_v1", {"callee"}},
    {"vhlo.custom_call_v1", {"api_version", "backend_config", "call_target_name", "called_computations", "has_side_effect",
                             "operand_layouts", "output_operand_aliases", "result_layouts"}},
    {"vhlo.constant_v1", {"value"}},
    {"vhlo.broadcast_in_dim_v1", {"broadcast_dimensions"}},
    {"vhlo.compare_v1", {"compare_type", "comparison_direction"}},
    {"vhlo.iota_v1", {"iota_dimension"}},
    {"vhlo.dynamic_iota_v1", {"iota_dimension"}},
    {"vhlo.transpose_v1", {"permutation"}},
    {"vhlo.pad_v1", {"edge_padding_high", "edge_padding_low", "interior_padding"}},
    {"vhlo.slice_v1", {"limit_indices", "start_indices", "strides"}},
    {"vhlo.concatenate_v1", {"dimension"}},
    {"vhlo.get_dimension_size_v1", {"dimension"}},
    {"vhlo.get_tuple_element_v1", {"index"}},
    {"vhlo.reduce_v1", {"dimensions"}},
    {"vhlo.dynamic_slice_v1", {"slice_sizes"}},
    {"vhlo.collective_permute_v1", {"channel_id", "source_target_pairs"}},
    {"vhlo.collective_broadcast_v1", {"channel_id", "replica_groups"}},
    {"vhlo.custom_call_v2", {"api_version", "backend_config", "call_target_name", "called_computations", "has_side_effect",
                             "operand_layouts", "output_operand_aliases", "result_layouts", "result_tilings"}},
    {"vhlo.collective_broadcast_v2", {"channel_id", "has_dynamic_root", "replica_groups"}},
    {"vhlo.collective_reduce_v1", {"channel_id", "has_dynamic_root", "replica_groups", "use_global_device_ids"}},
    {"vhlo.all_reduce_v1", {"channel_id", "replica_groups", "use_global_device_ids"}},
    {"vhlo.cross-replica-sum_v1", {"replica_groups"}},
    {"vhlo.all_reduce_v2", {"channel_id", "replica_groups", "use_global_device_ids"}},
    {"vhlo.all_gather_v1", {"all_gather_dim", "channel_id", "replica_groups", "use_global_device_ids"}},
    {"vhlo.all_gather_v2", {"all_gather_dim", "channel_id", "replica_groups", "use_global_device_ids"}},
    {"vhlo.all_to_all_v1", {"channel_id", "concat_dimension", "replica_groups", "split_count", "split_dimension"}},
    {"vhlo.all_to_all_v2", {"channel_id", "concat_dimension", "replica_groups", "split_count", "split_dimension"}},
    {"vhlo.reduce_scatter_v1", {"channel_id", "replica_groups", "scatter_dimension", "use_global_device_ids"}},
    {"vhlo.send_v1", {"channel_id", "channel_type", "is_host_transfer"}},
    {"vhlo.recv_v1", {"channel_id", "channel_type", "is_host_transfer"}},
    {"vhlo.send_v2", {"channel_id", "channel_type", "is_host_transfer", "source_target_pairs"}},
    {"vhlo.recv_v2", {"channel_id", "channel_type", "is_host_transfer", "source_target_pairs"}},
    {"vhlo.composite_v1", {"composite_attributes", "decomposition", "name", "version"}},
    {"vhlo.composite_v2", {"composite_attributes", "decomposition", "name", "version"}},
    {"vhlo.gather_v2", {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims",
                        "operand_batching_dims", "slice_sizes", "start_index_map", "start_indices_batching_dims"}},
};

static void take_properties(builder *b, ir_op *op, const bc_opname *on, attr_vec *attrs, op_extra *x, bc_rd pr,
                            bool vhlo) {
  bc *s = b->s;
  const prop_schema *sch = NULL;
  for (size_t i = 0; i < sizeof k_prop_schemas / sizeof *k_prop_schemas; i++)
    if (ir_span_eq(on->name, k_prop_schemas[i].op)) sch = &k_prop_schemas[i];
  if (!sch) return;
  for (size_t i = 0; i < 9 && sch->props[i] && bc_ok(s) && pr.p < pr.end; i++) {
    const char *p = sch->props[i];
    bool optional = p[0] == '?';
    uint64_t idx;
    bool present = true;
    if (optional) idx = bc_varint_flag(s, &pr, &present);
    else idx = bc_varint(s, &pr);
    if (!bc_ok(s) || !present) continue;
    const bc_attr *v = bc_attr_at(s, idx);
    if (v) take_attr(b, op, attrs, x, ir_span_of(p + optional, (uint32_t)strlen(p + optional)), v, vhlo);
  }
}

static ir_value *new_value(builder *b) { return ar_alloc(b->s->a, sizeof(ir_value)); }

/* Defines the next value of the innermost region; a forward reference made earlier becomes it. */
typedef struct {
  size_t base, next, end;
} region_values;

static ir_value *define_value(builder *b, region_values *rv, ir_value *v) {
  if (rv->next >= rv->end) {
    bc_fail(b->s, NULL, "more values defined than the region declares");
    return v;
  }
  ir_value **slot = &b->sc->vals.v[rv->next++];
  b->pending--;
  if (*slot) { /* forward reference: keep its identity */
    **slot = *v;
    return *slot;
  }
  *slot = v;
  return v;
}

static ir_value *operand(builder *b, bc_rd *r) {
  const uint8_t *at = r->p;
  uint64_t i = bc_varint(b->s, r);
  if (!bc_ok(b->s)) return NULL;
  if (i >= b->sc->vals.n) {
    bc_fail(b->s, at, "operand refers to value %" PRIu64 " outside its scope", i);
    return NULL;
  }
  if (!b->sc->vals.v[i]) b->sc->vals.v[i] = new_value(b);
  return b->sc->vals.v[i];
}

/* Use-list orders of a range of values: read for well-formedness, not needed by any rule. */
static void skip_use_lists(bc *s, bc_rd *r, uint64_t range) {
  uint64_t n = range > 1 ? bc_count(s, r) : 1;
  for (uint64_t i = 0; i < n && bc_ok(s); i++) {
    if (range > 1) bc_varint(s, r);
    bool pairs;
    uint64_t cnt = bc_varint_flag(s, r, &pairs);
    if (bc_ok(s) && cnt > (uint64_t)(r->end - r->p)) bc_fail(s, r->p, "use-list order longer than its data");
    for (uint64_t k = 0; k < cnt && bc_ok(s); k++) bc_varint(s, r);
  }
}

static ir_region *read_region(builder *b, bc_rd *r, ir_op *parent);

/* StableHLO prints a reduce whose body is one binary op on the two block arguments as
 * `stablehlo.reduce(...) applies stablehlo.add across dimensions = [...]`, which has no region; the
 * body ops (the last ones built) go, so the IR is what the text front end sees. */
static void fold_compact_reduce(builder *b, ir_op *op) {
  if (op->nregions != 1 || ir_op_regions(op)[0]->nblocks != 1) return;
  const ir_block *blk = ir_op_regions(op)[0]->blocks[0];
  if (blk->nops != 2 || blk->nargs != 2) return;
  const ir_op *inner = blk->ops[0], *ret = blk->ops[1];
  if (inner->noperands != 2 || inner->nresults != 1 || inner->nregions || ret->noperands != 1 ||
      inner->operands[0] != blk->args[0] || inner->operands[1] != blk->args[1] || ret->operands[0] != ir_op_result(inner, 0) ||
      !ir_span_starts(ir_op_name(inner), "stablehlo.") || !op_is(ret, "stablehlo.return"))
    return;
  if (b->ops.n < 2 || b->ops.v[b->ops.n - 1] != ret || b->ops.v[b->ops.n - 2] != inner) return;
  b->ops.n -= 2;
  op->nregions = 0;
}

/* Block header: (numOps << 1 | hasArgs), arguments (type << 1 | hasLoc in v4+), use-lists (v3+). */
static uint64_t read_block_header(builder *b, bc_rd *r, ir_block *blk, region_values *rv, const ir_op *owner) {
  bc *s = b->s;
  bool has_args;
  uint64_t nops = bc_varint_flag(s, r, &has_args);
  if (bc_ok(s) && nops > (uint64_t)(r->end - r->p)) bc_fail(s, r->p, "block declares more ops than its data holds");
  if (!has_args) return nops;
  uint64_t nargs = bc_count(s, r);
  blk->args = ar_calloc(s->a, nargs ? nargs : 1, sizeof *blk->args);
  blk->arg_types = ar_calloc(s->a, nargs ? nargs : 1, sizeof *blk->arg_types);
  bool func_entry = owner && op_is(owner, "func.func");
  for (uint64_t i = 0; i < nargs && bc_ok(s); i++) {
    const bc_type *t;
    if (s->version >= 4) {
      bool has_loc;
      t = bc_type_at(s, bc_varint_flag(s, r, &has_loc));
      if (has_loc) bc_read_attr(s, r);
    } else {
      t = bc_read_type(s, r);
      bc_read_attr(s, r);
    }
    if (!bc_ok(s)) break;
    ir_value *v = new_value(b);
    if (t) blk->arg_types[i] = t->text;
    v->name = bc_printf(s, func_entry ? "%%arg%" PRIu64 : "%%barg%" PRIu64, i);
    ir_value_set_block(v, blk);
    v->index = (uint32_t)i;
    blk->args[i] = define_value(b, rv, v);
    blk->nargs = (uint32_t)(i + 1);
  }
  if (s->version >= 3 && bc_byte(s, r)) skip_use_lists(s, r, nargs);
  return nops;
}

/* The op's range in the text pool (its name, attributes and children) ends here: `end` (its text is
 * ir_op_text). */
static void set_extent(bc *s, ir_op *op) {
  op->end = (uint32_t)bc_mark(s);
}

/* An op without its regions' contents: name, mask, location, attributes, properties, results,
 * operands, successors, use-lists, region count. */
static ir_op *read_op(builder *b, bc_rd *r, ir_op *parent, region_values *rv, uint32_t nblocks) {
  bc *s = b->s;
  const uint8_t *at = r->p;
  uint64_t ni = bc_varint(s, r);
  if (bc_ok(s) && ni >= s->nopnames) bc_fail(s, at, "op name index %" PRIu64 " out of range", ni);
  uint8_t mask = bc_byte(s, r);
  const bc_attr *loc = bc_read_attr(s, r);
  if (!bc_ok(s)) return NULL;
  const bc_opname *on = &s->opnames[ni];
  bool vhlo = s->dialect_kind[on->dialect] == BC_D_VHLO;
  ir_op *op = new_op(b, stablehlo_name(b, on, parent), parent);
  if (!op) return NULL;
  ir_srcloc src = bc_resolve_loc(s, loc);
  if (src.known || src.file.n || src.line || src.col) ir_op_extra_of(s->a, op)->src = src;
  attr_vec attrs = {0};
  op_extra x;
  memset(&x, 0, sizeof x);
  if (mask & 0x01) {
    const bc_attr *d = bc_read_attr(s, r);
    if (d && d->kind == BA_DICT)
      for (uint32_t i = 0; i < d->n && bc_ok(s); i++) take_attr(b, op, &attrs, &x, bc_attr_str(d->k[i]), d->v[i], vhlo);
  }
  if (mask & 0x40) {
    if (!on->has_registered) bc_fail(s, at, "properties in bytecode version %" PRIu64, s->version);
    else if (on->registered) {
      bc_rd pr;
      if (bc_prop_entry(s, bc_varint(s, r), &pr)) take_properties(b, op, on, &attrs, &x, pr, vhlo);
    } else {
      const bc_attr *d = bc_read_attr(s, r);
      if (d && d->kind == BA_DICT)
        for (uint32_t i = 0; i < d->n && bc_ok(s); i++) take_attr(b, op, &attrs, &x, bc_attr_str(d->k[i]), d->v[i], vhlo);
    }
  }
  uint32_t nresults = 0;
  if (mask & 0x06) op->types = ar_calloc(s->a, 1, sizeof *op->types);
  if (mask & 0x02) {
    uint64_t n = bc_count(s, r);
    op->types->result_types = ar_calloc(s->a, n ? n : 1, sizeof(ir_span));
    op->result_values = ar_calloc(s->a, n ? n : 1, sizeof *op->result_values);
    for (uint64_t i = 0; i < n && bc_ok(s); i++) {
      const bc_type *t = bc_read_type(s, r);
      ir_value *v = &op->result_values[i];
      ir_value_set_def(v, op);
      v->index = (uint32_t)i;
      if (t) op->types->result_types[i] = t->text;
      nresults++;
    }
    op->types->nresult_types = nresults;
  }
  if (mask & 0x04) {
    uint64_t n = bc_count(s, r);
    op->operands = ar_calloc(s->a, n ? n : 1, sizeof *op->operands);
    op->types->operand_types = ar_calloc(s->a, n ? n : 1, sizeof(ir_span));
    for (uint64_t i = 0; i < n && bc_ok(s); i++) {
      ir_value *v = operand(b, r);
      op->operands[i] = v;
      if (v) op->types->operand_types[i] = ir_value_type(v); /* names: the values' own (ir_op_operand_name) */
    }
    op->noperands = op->types->noperand_types = bc_ok(s) ? (uint32_t)n : 0;
  }
  if (mask & 0x08) {
    uint64_t n = bc_count(s, r);
    for (uint64_t i = 0; i < n && bc_ok(s); i++)
      if (bc_varint(s, r) >= nblocks && bc_ok(s)) bc_fail(s, r->p, "successor block index out of range");
  }
  if (s->version >= 3 && (mask & 0x20)) skip_use_lists(s, r, nresults);
  op->attr_v = attrs.v;
  op->nattrs = (uint32_t)attrs.n;
  /* Results are defined in the enclosing region (not at the top level, which declares no values). */
  for (uint32_t i = 0; i < nresults && bc_ok(s); i++) {
    ir_value *v = &op->result_values[i];
    v->name = bc_printf(s, "%%%zu", rv ? rv->next : (size_t)i);
    if (rv && rv->end > rv->base && define_value(b, rv, v) != v) b->forward_results = true;
  }
  op->nresults = nresults;
  if (x.fn_type) {
    ir_op_decl *e = ir_op_decl_of(s->a, op);
    e->func_result_types = ar_calloc(s->a, x.fn_type->nouts ? x.fn_type->nouts : 1, sizeof(ir_span));
    for (uint32_t i = 0; i < x.fn_type->nouts; i++) e->func_result_types[i] = x.fn_type->outs[i]->text;
    if (e->nresult_attrs != x.fn_type->nouts) { /* one (possibly empty) dict per result, as the pretty form */
      ir_attrs *ra = ar_calloc(s->a, x.fn_type->nouts ? x.fn_type->nouts : 1, sizeof *ra);
      for (uint32_t i = 0; i < e->nresult_attrs && i < x.fn_type->nouts; i++) ra[i] = e->result_attrs[i];
      e->result_attrs = ra;
      e->nresult_attrs = x.fn_type->nouts;
    }
  }
  if (!(mask & 0x10)) {
    set_extent(s, op);
    if (op_is(op, "builtin.unrealized_conversion_cast") && op->nresults == 1 && op->noperands == 1 && rv &&
        rv->next > rv->base) {
      /* A cast between VHLO and builtin types the serializer inserts around foreign ops: not in the
       * module's text; its result is its operand. */
      b->ops.n--;
      b->sc->vals.v[rv->next - 1] = op->operands[0];
      return NULL;
    }
    return op;
  }
  /* Regions: (count << 1 | isolated); isolated regions sit in their own IR section from version 2. */
  bool isolated;
  uint64_t nregions = bc_varint_flag(s, r, &isolated);
  if (bc_ok(s) && nregions > (uint64_t)(r->end - r->p) + 1) bc_fail(s, r->p, "region count exceeds the data");
  if (bc_ok(s) && nregions > IR_MAX_REGIONS) bc_fail(s, r->p, "an operation with more than %u regions", (unsigned)IR_MAX_REGIONS);
  bc_rd sub = *r, *rr = r;
  if (isolated && s->version >= 2 && nregions) {
    unsigned id;
    if (read_section(s, r, &id, &sub) && id != S_IR) bc_fail(s, r->p, "expected an IR section for an isolated region");
    rr = &sub;
  }
  scope inner = {{0}};
  scope *outer = b->sc;
  if (isolated) b->sc = &inner;
  ir_region **regions = ir_op_extra_of(s->a, op)->regions = ar_calloc(s->a, nregions ? nregions : 1, sizeof *regions);
  for (uint64_t i = 0; i < nregions && bc_ok(s); i++) {
    ir_region *reg = read_region(b, rr, op);
    if (reg) regions[op->nregions++] = reg;
  }
  b->sc = outer;
  set_extent(s, op);
  if (op_is(op, "stablehlo.reduce")) fold_compact_reduce(b, op);
  if (x.narg_attrs && op->nregions && ir_op_regions(op)[0]->nblocks) {
    ir_block *entry = ir_op_regions(op)[0]->blocks[0];
    for (uint32_t i = 0; i < x.narg_attrs && i < entry->nargs; i++) ir_block_set_arg_attrs(s->a, entry, i, &x.arg_attrs[i]);
  }
  return op;
}

static ir_region *read_region(builder *b, bc_rd *r, ir_op *parent) {
  bc *s = b->s;
  if (b->depth + 1 > b->in->max_depth) {
    bc_fail(s, r->p, "nesting deeper than %u levels", b->in->max_depth);
    s->err->limit = true;
    return NULL;
  }
  ir_region *reg = ar_alloc(s->a, sizeof *reg);
  reg->parent = parent;
  uint64_t nblocks = bc_count(s, r);
  if (!nblocks || !bc_ok(s)) return bc_ok(s) ? reg : NULL;
  uint64_t nvalues = bc_count(s, r);
  if (!bc_ok(s)) return NULL;
  if (b->pending + nblocks + nvalues > (uint64_t)(b->ir_end - r->p)) {
    bc_fail(s, r->p, "region declares %" PRIu64 " blocks and %" PRIu64 " values, more than the rest of the input can hold",
            nblocks, nvalues);
    return NULL;
  }
  b->pending += nblocks + nvalues;
  region_values rv = {b->sc->vals.n, b->sc->vals.n, b->sc->vals.n + nvalues};
  for (uint64_t i = 0; i < nvalues; i++) SC_PUSH(s->a, b->sc->vals, (ir_value *)NULL);
  reg->blocks = ar_calloc(s->a, nblocks, sizeof *reg->blocks);
  reg->nblocks = (uint32_t)nblocks;
  for (uint64_t i = 0; i < nblocks; i++) {
    reg->blocks[i] = ar_alloc(s->a, sizeof(ir_block));
    reg->blocks[i]->parent = reg;
  }
  b->depth++;
  for (uint64_t k = 0; k < nblocks && bc_ok(s); k++) {
    ir_block *blk = reg->blocks[k];
    b->pending--;
    uint64_t nops = read_block_header(b, r, blk, &rv, k == 0 ? parent : NULL);
    blk->ops = ar_calloc(s->a, nops ? nops : 1, sizeof *blk->ops);
    for (uint64_t i = 0; i < nops && bc_ok(s); i++) {
      ir_op *op = read_op(b, r, parent, &rv, (uint32_t)nblocks);
      if (op) blk->ops[blk->nops++] = op;
    }
  }
  b->depth--;
  b->sc->vals.n = rv.base;
  if (!bc_ok(s)) return NULL; /* the counts below matter only while reading goes on */
  /* A region defines exactly the values it declares. Holding it to that keeps the slots reserved above
   * linear in the input: a declared count is only bounded by the bytes that remain, so sibling regions
   * that each over-declare would otherwise cost the rest of the input apiece. */
  if (bc_ok(s) && rv.next != rv.end)
    bc_fail(s, r->p, "region declares %" PRIu64 " values but defines %zu", nvalues, rv.next - rv.base);
  return bc_ok(s) ? reg : NULL;
}

/* The top-level block of the IR section: normally one `builtin.module`. */
static ir_op *read_top(builder *b, bc_rd r) {
  bc *s = b->s;
  b->ir_end = r.end;
  ir_block *top = ar_alloc(s->a, sizeof *top);
  region_values none = {0, 0, 0};
  uint64_t nops = read_block_header(b, &r, top, &none, NULL);
  SC_VEC(ir_op *) ops = {0};
  for (uint64_t i = 0; i < nops && bc_ok(s); i++) {
    ir_op *op = read_op(b, &r, NULL, &none, 1);
    if (op) SC_PUSH(s->a, ops, op);
  }
  if (!bc_ok(s)) return NULL;
  if (ops.n != 1 || !op_is(ops.v[0], "builtin.module")) {
    bc_fail(s, r.p, "expected one top-level builtin.module, found %zu top-level operation(s)", ops.n);
    return NULL;
  }
  return ops.v[0];
}

/* ---- entry -------------------------------------------------------------------------------------- */

/* "StableHLO_v1.13.7" -> 1, 13 (false if the producer is not StableHLO's). */
static bool stablehlo_version(ir_span producer, unsigned *major, unsigned *minor) {
  if (!ir_span_starts(producer, "StableHLO_v")) return false;
  char buf[32];
  uint32_t n = producer.n - 11 < sizeof buf - 1 ? producer.n - 11 : (uint32_t)sizeof buf - 1;
  memcpy(buf, producer.p + 11, n);
  buf[n] = 0;
  return sscanf(buf, "%u.%u", major, minor) == 2;
}

/* A result used before its op (in a later block, or a graph region) was made at its first use, and the
 * op's own result copied into it when the op came. Operands that name the first now name the op's. */
static void resolve_forward_results(ir_op **ops, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < ops[i]->noperands; k++) {
      const ir_value *u = ops[i]->operands[k];
      if (u && ir_value_def(u) && u->index < ir_value_def(u)->nresults && u != ir_op_result(ir_value_def(u), u->index))
        ops[i]->operands[k] = ir_op_result(ir_value_def(u), u->index);
    }
}

static ir_module *read_module(bc *s, const fe_parse_input *in) {
  bc_rd r = {s->base, s->base + s->len};
  const uint8_t *magic = bc_bytes(s, &r, 4);
  if (!magic || memcmp(magic, "ML\xefR", 4) != 0) {
    bc_fail(s, s->base, "not MLIR bytecode (expected the magic bytes 'ML\\xefR')");
    return NULL;
  }
  const uint8_t *at = r.p;
  s->version = bc_varint(s, &r);
  const uint8_t *nul = bc_ok(s) ? memchr(r.p, 0, (size_t)(r.end - r.p)) : NULL;
  if (bc_ok(s) && !nul) bc_fail(s, r.p, "the producer string is not NUL-terminated");
  if (!bc_ok(s)) return NULL;
  s->producer = ir_span_of((const char *)r.p, (uint32_t)(nul - r.p));
  r.p = nul + 1;
  if (s->version > BC_MAX_VERSION) {
    bc_fail(s, at, "bytecode version %" PRIu64 " (producer '%.*s') is newer than the newest this reader supports (%u)",
            s->version, SC_SPAN_ARG(s->producer), BC_MAX_VERSION);
    return NULL;
  }
  unsigned major, minor;
  if (stablehlo_version(s->producer, &major, &minor) &&
      (major > BC_NEWEST_STABLEHLO_MAJOR || (major == BC_NEWEST_STABLEHLO_MAJOR && minor > BC_NEWEST_STABLEHLO_MINOR)))
    s->newer_producer = true; /* VHLO is forward-compatible at the producer: read on, refuse only the unknown */
  bc_rd sec[S_COUNT];
  bool have[S_COUNT] = {false};
  while (bc_ok(s) && r.p < r.end) {
    unsigned id;
    bc_rd body;
    const uint8_t *sat = r.p;
    if (!read_section(s, &r, &id, &body)) break;
    if (have[id]) bc_fail(s, sat, "duplicate section %u", id);
    have[id] = true;
    sec[id] = body;
  }
  for (unsigned id = 0; id <= S_IR && bc_ok(s); id++)
    if (!have[id]) bc_fail(s, r.p, "missing required section %u", id);
  if (bc_ok(s) && s->version >= 5 && !have[S_PROPERTIES]) bc_fail(s, r.p, "missing the properties section");
  if (!bc_ok(s)) return NULL;
  read_strings(s, sec[S_STRING]);
  if (have[S_PROPERTIES]) read_properties(s, sec[S_PROPERTIES]);
  read_dialects(s, sec[S_DIALECT]);
  read_attr_type_offsets(s, sec[S_ATTR_TYPE_OFFSET], sec[S_ATTR_TYPE]);
  if (!bc_ok(s)) return NULL;

  builder b;
  memset(&b, 0, sizeof b);
  b.s = s;
  b.in = in;
  scope top = {{0}};
  b.sc = &top;
  ir_op *root = read_top(&b, sec[S_IR]);
  if (!root || !bc_ok(s)) return NULL;
  ir_module *m = ar_alloc(s->a, sizeof *m);
  m->format = SC_FMT_BYTECODE;
  if (s->newer_producer)
    m->reader_note = ar_printf(s->a,
                                     "produced by %.*s, newer than StableHLO v%u.%u (the newest this reader knows); read "
                                     "because every op, attribute and type in it is one that version defines",
                                     SC_SPAN_ARG(s->producer), BC_NEWEST_STABLEHLO_MAJOR, BC_NEWEST_STABLEHLO_MINOR);
  m->module = root;
  m->ops = b.ops.v;
  m->nops = (uint32_t)b.ops.n;
  if (b.forward_results) resolve_forward_results(m->ops, m->nops);
  m->funcs = b.funcs.v;
  m->nfuncs = (uint32_t)b.funcs.n;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    ir_op *f = m->funcs[i];
    if (ir_span_eq(ir_op_sym_name(f), "main") && !ir_span_eq(ir_op_visibility(f), "private")) m->entry = f;
  }
  if (!m->entry && m->nfuncs) m->entry = m->funcs[0];
  return m;
}

ir_module *fe_read_bytecode(sc_arena *a, const uint8_t *p, size_t n, uint32_t base_off, const fe_parse_input *in,
                            fe_parse_error *err) {
  memset(err, 0, sizeof *err);
  /* The text pool grows by restarting with a larger one; the total stays linear in the input. */
  size_t limit = 64 * n + (16u << 20);
  if (limit > UINT32_MAX - 1) limit = UINT32_MAX - 1;
  for (size_t cap = 8 * n + (64u << 10);; cap *= 4) {
    if (cap > limit) cap = limit;
    bc s;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.base = p;
    s.len = n;
    s.base_off = base_off;
    s.err = err;
    s.pool = ar_alloc(a, cap);
    s.pool_cap = cap;
    ir_module *m = read_module(&s, in);
    if (err->failed) return NULL;
    if (!s.pool_full && m) {
      m->buf = s.pool;
      m->len = s.pool_used;
      m->base_offset = 0;
      m->end_offset = (uint32_t)s.pool_used;
      return m;
    }
    if (cap == limit) {
      err->failed = true;
      err->limit = true;
      err->offset = base_off;
      err->message = ar_printf(a, "MLIR bytecode: the module's text form exceeds %zu bytes", limit);
      return NULL;
    }
  }
}

ir_module *fe_parse_bytecode(const fe_parse_input *in, fe_parse_error *err) {
  return fe_read_bytecode(in->arena, (const uint8_t *)in->buf + in->begin, in->end - in->begin, in->begin, in, err);
}

bool fe_is_bytecode(const char *buf, size_t len) { return len >= 4 && memcmp(buf, "ML\xefR", 4) == 0; }
