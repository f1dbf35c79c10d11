/* op_rule.c — the op sharding rule registry: one table row per op name with the function that builds
 * its rule from the op's types and attributes, as Shardy's sdy-populate-op-sharding-rules does
 * (op_sharding_rule_registry.cc is the source of the facts; the code is our own). Rules are written with
 * the builder of op_rule_build.h; the rule syntax lives in op_rule_text.c. */
#include "propagate/op_rule.h"

#include <string.h>

#include "propagate/op_rule_build.h"

#define PT PROP_FACTOR_PASS_THROUGH
#define RED PROP_FACTOR_REDUCTION
#define NR PROP_FACTOR_NEED_REPLICATION
#define PERM PROP_FACTOR_PERMUTATION
#define NUL PB_NULL_DIM

struct prop_rule_facts {
  uint8_t *feeds_rng; /* per op id: one of its results is an operand of an rng_bit_generator; NULL: none is */
  uint32_t nops;
};

/* What a rule function reads: the op, its operand and result shapes, the options; it writes into `b`
 * (initialized with the op's tensors) or sets `none` when Shardy gives the op no rule. */
typedef struct {
  sc_arena *a;
  const ir_module *m;
  const ir_op *op;
  const prop_rule_options *opt;
  const pb_shape *in, *out;
  uint32_t nin, nout;
  pb_builder b;
  bool none;
} rc;

typedef void (*rule_fn)(rc *c);

/* ---- names ---- */

/* XLA HLO opcodes of ops Shardy has rules for, as the StableHLO ops XLA's Shardy import makes of them. */
static const char *const HLO_OPCODES[][2] = {
    {"abs", "abs"}, {"add", "add"}, {"all-reduce", "all_reduce"}, {"and", "and"}, {"atan2", "atan2"},
    {"cbrt", "cbrt"}, {"ceil", "ceil"}, {"clz", "count_leading_zeros"}, {"collective-broadcast", "collective_broadcast"},
    {"collective-permute", "collective_permute"}, {"compare", "compare"}, {"complex", "complex"}, {"convert", "convert"},
    {"cosine", "cosine"}, {"divide", "divide"}, {"exponential", "exponential"},
    {"exponential-minus-one", "exponential_minus_one"}, {"floor", "floor"}, {"imag", "imag"}, {"is-finite", "is_finite"},
    {"log-plus-one", "log_plus_one"}, {"log", "log"}, {"logistic", "logistic"}, {"maximum", "maximum"},
    {"minimum", "minimum"}, {"multiply", "multiply"}, {"negate", "negate"}, {"not", "not"}, {"or", "or"},
    {"popcnt", "popcnt"}, {"power", "power"}, {"real", "real"}, {"reduce-precision", "reduce_precision"},
    {"remainder", "remainder"}, {"round-nearest-even", "round_nearest_even"}, {"round-nearest-afz", "round_nearest_afz"},
    {"rsqrt", "rsqrt"}, {"shift-left", "shift_left"}, {"shift-right-arithmetic", "shift_right_arithmetic"},
    {"shift-right-logical", "shift_right_logical"}, {"sign", "sign"}, {"sine", "sine"}, {"sqrt", "sqrt"},
    {"subtract", "subtract"}, {"tan", "tan"}, {"tanh", "tanh"}, {"xor", "xor"}, {"all-gather", "all_gather"},
    {"all-to-all", "all_to_all"}, {"batch-norm-inference", "batch_norm_inference"}, {"bitcast-convert", "bitcast_convert"},
    {"broadcast", "broadcast_in_dim"}, {"cholesky", "cholesky"}, {"clamp", "clamp"}, {"concatenate", "concatenate"},
    {"convolution", "convolution"}, {"custom-call", "custom_call"}, {"dot", "dot_general"},
    {"dynamic-slice", "dynamic_slice"}, {"dynamic-update-slice", "dynamic_update_slice"}, {"fft", "fft"},
    {"gather", "gather"}, {"pad", "pad"}, {"reduce", "reduce"}, {"reduce-scatter", "reduce_scatter"},
    {"reduce-window", "reduce_window"}, {"reshape", "reshape"}, {"reverse", "reverse"},
    {"rng-bit-generator", "rng_bit_generator"}, {"scatter", "scatter"}, {"select-and-scatter", "select_and_scatter"},
    {"select", "select"}, {"slice", "slice"}, {"sort", "sort"}, {"transpose", "transpose"},
    {"triangular-solve", "triangular_solve"}, {"constant", "constant"}, {"iota", "iota"}, {"while", "while"},
    {"conditional", "case"}, {"after-all", "after_all"}, {"get-tuple-element", "get_tuple_element"},
    {"infeed", "infeed"}, {"outfeed", "outfeed"}, {"partition-id", "partition_id"}, {"send", "send"}, {"recv", "recv"},
    {"optimization-barrier", "optimization_barrier"},
};

/* The op's name as the registry knows it: `mhlo.` read as `stablehlo.` (XLA imports mhlo as StableHLO),
 * an XLA HLO opcode as its StableHLO op; `buf` holds it. */
ir_span prop_stablehlo_name(const ir_op *op, char *buf, size_t cap) {
  ir_span n = ir_op_name(op);
  if (ir_span_starts(n, "mhlo.") && n.n - 5 + 10 < cap) {
    memcpy(buf, "stablehlo.", 10);
    memcpy(buf + 10, n.p + 5, n.n - 5);
    return ir_span_of(buf, n.n - 5 + 10);
  }
  if (n.p && !memchr(n.p, '.', n.n))
    for (size_t i = 0; i < sizeof HLO_OPCODES / sizeof *HLO_OPCODES; i++)
      if (ir_span_eq(n, HLO_OPCODES[i][0]) && 10 + strlen(HLO_OPCODES[i][1]) < cap) {
        size_t k = strlen(HLO_OPCODES[i][1]);
        memcpy(buf, "stablehlo.", 10);
        memcpy(buf + 10, HLO_OPCODES[i][1], k);
        return ir_span_of(buf, (uint32_t)(10 + k));
      }
  return n;
}

/* An HLO instruction (a name without a dialect, e.g. `add`) rather than an MLIR op. */
static bool is_hlo(const ir_op *op) { return ir_op_name(op).p && !memchr(ir_op_name(op).p, '.', ir_op_name(op).n); }

static bool named(const ir_op *op, const char *stablehlo_name) {
  char buf[96];
  return op && ir_span_eq(prop_stablehlo_name(op, buf, sizeof buf), stablehlo_name);
}

/* ---- types ---- */

static pb_shape shape_of(sc_arena *a, ir_span type) {
  pb_shape s = {-1, NULL, false};
  ir_tensor_type t;
  if (type.n && ir_parse_tensor_type(a, type, &t)) { /* `tensor<8x16xf32>`, HLO `f32[8,16]{1,0}` */
    s.tensor = true;
    s.rank = t.rank;
    s.dims = t.dims;
  } else if (ir_span_starts(ir_span_trim(type), "tensor<")) {
    s.tensor = true; /* a tensor type we cannot read (e.g. rank beyond the IR's limit): unranked to us */
  }
  return s;
}

/* Operand and result types: the op's `: (..) -> ..` trailer when it lists every one; else the values'
 * own types; a pretty op with one trailing type (`stablehlo.add %a, %b : tensor<8xf32>`) gives it to
 * every operand whose value has none; `stablehlo.select %p, %t, %f : tensor<i1>, tensor<8xf32>` lists
 * the predicate's type then the result's. */
static ir_span result_type(const ir_op *op, uint32_t i) {
  if (ir_op_nresult_types(op) == op->nresults) return ir_op_result_types(op)[i];
  if (ir_op_nresult_types(op) > op->nresults) return ir_op_result_types(op)[ir_op_nresult_types(op) - op->nresults + i];
  return ir_op_result(op, i) ? ir_value_type(ir_op_result(op, i)) : ir_span_of(NULL, 0);
}

static ir_span operand_type(const ir_op *op, uint32_t i) {
  if (ir_op_noperand_types(op) == op->noperands) return ir_op_operand_types(op)[i];
  if (op->operands[i] && ir_value_type(op->operands[i]).n) return ir_value_type(op->operands[i]);
  if (ir_op_noperand_types(op) == 0 && ir_op_nresult_types(op) == 1) return ir_op_result_types(op)[0];
  if (ir_op_noperand_types(op) == 0 && ir_op_nresult_types(op) == 2 && op->nresults == 1) /* select's pred, then type */
    return i == 0 ? ir_op_result_types(op)[0] : ir_op_result_types(op)[1];
  return ir_span_of(NULL, 0);
}

/* Shape `s` must be a ranked tensor for this rule. */
static bool ranked(rc *c, const pb_shape *s) {
  if (s->rank >= 0) return true;
  pb_fail(&c->b, "a tensor the rule reads is not a ranked tensor");
  return false;
}
static bool need_counts(rc *c, uint32_t nin, uint32_t nout) {
  if (c->nin >= nin && c->nout >= nout) return true;
  pb_fail(&c->b, "the op has fewer operands or results than its rule reads");
  return false;
}

/* ---- attributes ---- */

/* The op's own text, without the ops nested in its regions (custom syntax lives before them). */
static ir_span own_text(const rc *c) {
  ir_span t = ir_op_text(c->m, c->op);
  uint32_t next = c->op->id + 1;
  if (t.p && next < c->op->subtree_end && next < c->m->nops) {
    const char *child = c->m->buf + c->m->ops[next]->pos.offset;
    if (child > t.p && child < t.p + t.n) t.n = (uint32_t)(child - t.p);
  }
  return t;
}

/* An attribute's value: from the attribute list, or from the op's custom syntax (`dims = [1, 0]`,
 * `contracting_dims = [1] x [0]`), which some front ends record only in part. */
static bool field(const rc *c, const char *name, ir_span *v) {
  const ir_attr *at = ir_op_attr(c->op, name);
  if (c->op->generic && at) {
    *v = at->value;
    return true;
  }
  if (pb_find_field(own_text(c), name, v)) return true;
  if (at) {
    *v = at->value;
    return true;
  }
  return false;
}

static bool int_field(const rc *c, const char *name, int64_t *out) {
  ir_span v;
  return field(c, name, &v) && pb_int(v, out);
}

/* A list attribute (absent: -1). */
static int32_t list_field(const rc *c, const char *name, int64_t **out) {
  ir_span v;
  return field(c, name, &v) ? pb_int_list(c->a, v, out) : -1;
}

/* A field of a struct attribute such as `#stablehlo.gather<offset_dims = [2], ...>` (absent: empty). */
static int32_t struct_list(rc *c, ir_span s, const char *name, int64_t **out) {
  ir_span v;
  *out = NULL;
  if (!pb_find_field(s, name, &v)) return 0;
  int32_t n = pb_int_list(c->a, v, out);
  if (n < 0) pb_fail(&c->b, "an attribute list is malformed");
  return n < 0 ? 0 : n;
}

static bool span_has(ir_span s, const char *lit) {
  size_t n = strlen(lit);
  for (uint32_t i = 0; s.p && i + n <= s.n; i++)
    if (memcmp(s.p + i, lit, n) == 0) return true;
  return false;
}

/* A field of a struct attribute `s`, or, with s == NULL, the op's own attribute of that name (the
 * bytecode front end records a struct's fields as attributes of the op, as VHLO stores them). */
static int32_t sub_list(rc *c, const ir_span *s, const char *name, int64_t **out) {
  if (s) return struct_list(c, *s, name, out);
  *out = NULL;
  if (!ir_op_attr(c->op, name)) return 0;
  int32_t n = list_field(c, name, out);
  if (n < 0) pb_fail(&c->b, "an attribute list is malformed");
  return n < 0 ? 0 : n;
}
static bool sub_int(const rc *c, const ir_span *s, const char *name, int64_t *out) {
  ir_span f;
  if (s) return pb_find_field(*s, name, &f) && pb_int(f, out);
  return int_field(c, name, out);
}

static bool contains(const int64_t *v, int32_t n, int64_t x) {
  for (int32_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* A dimension that must name a dimension of a tensor of rank `rank`. */
static bool dim_ok(rc *c, int64_t dim, int32_t rank) {
  if (dim >= 0 && dim < rank) return true;
  pb_fail(&c->b, "a dimension attribute is outside its tensor's rank");
  return false;
}

/* Dimension arrays for pb_add over the op's operands / results, all PB_NULL_DIM. */
static int64_t *null_dims(rc *c, uint32_t n) {
  int64_t *v = ar_alloc(c->a, (n ? n : 1) * sizeof *v);
  for (uint32_t i = 0; i < n; i++) v[i] = NUL;
  return v;
}

/* ---- generic shapes of rules ---- */

/* Every dimension of `s` a factor on the same dimension of every tensor of rank > 0. */
static void add_pointwise(rc *c, const pb_shape *s, int32_t rank) {
  for (int32_t d = 0; d < rank; d++) pb_add_all(&c->b, d, s->dims[d], PT, false);
}

static void r_pointwise(rc *c) {
  if (c->nout == 0 || !c->out[0].tensor) {
    c->none = true; /* tokens and the like: Shardy has no pointwise rule for them */
    return;
  }
  if (!ranked(c, &c->out[0])) return;
  add_pointwise(c, &c->out[0], c->out[0].rank);
}

/* Pointwise over operand 0 and result 0; a dimension whose size differs gets `mismatch`. */
static void add_pointwise_mismatch(rc *c, prop_factor_type mismatch, bool blocked) {
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) return;
  if (c->in[0].rank != c->out[0].rank) {
    pb_fail(&c->b, "operand and result ranks differ");
    return;
  }
  for (int32_t d = 0; d < c->in[0].rank; d++) {
    bool same = c->in[0].dims[d] == c->out[0].dims[d];
    pb_add_all(&c->b, d, c->in[0].dims[d], same ? PT : mismatch, same ? false : blocked);
  }
}

static void r_none(rc *c) { c->none = true; }

/* ---- collectives ---- */

/* all_gather / reduce_scatter: the gathered (scattered) dimension has its own factor per side. */
static void collective_along(rc *c, const char *dim_attr) {
  int64_t g;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) return;
  if (!int_field(c, dim_attr, &g) && !int_field(c, "dimensions", &g)) { /* HLO: dimensions={1} */
    pb_fail(&c->b, "missing dimension attribute");
    return;
  }
  if (!dim_ok(c, g, c->in[0].rank) || !dim_ok(c, g, c->out[0].rank)) return;
  for (int32_t d = 0; d < c->in[0].rank; d++)
    if (d != g) pb_add_all(&c->b, d, c->in[0].dims[d], PT, false);
  pb_add_operands(&c->b, g, c->in[0].dims[g], NR, false);
  pb_add_results(&c->b, g, c->out[0].dims[g], NR, false);
}

static void r_all_gather(rc *c) { collective_along(c, "all_gather_dim"); }
static void r_reduce_scatter(rc *c) { collective_along(c, "scatter_dimension"); }

static void r_all_to_all(rc *c) {
  int64_t s, k;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) return;
  if (int_field(c, "dimensions", &s) && !ir_op_attr(c->op, "split_dimension")) k = s; /* HLO array all-to-all */
  else if (!int_field(c, "split_dimension", &s) || !int_field(c, "concat_dimension", &k)) {
    pb_fail(&c->b, "missing split_dimension or concat_dimension");
    return;
  }
  const pb_shape *in = &c->in[0], *out = &c->out[0];
  if (!dim_ok(c, s, in->rank) || !dim_ok(c, k, in->rank) || !dim_ok(c, s, out->rank) || !dim_ok(c, k, out->rank)) return;
  for (int32_t d = 0; d < in->rank; d++)
    if (d != s && d != k) pb_add_all(&c->b, d, in->dims[d], PT, false);
  pb_add_operands(&c->b, s, in->dims[s], NR, false);
  pb_add_results(&c->b, s, out->dims[s], NR, false);
  if (s != k) {
    pb_add_operands(&c->b, k, in->dims[k], NR, false);
    pb_add_results(&c->b, k, out->dims[k], NR, false);
  }
}

/* ---- shape ops ---- */

static void r_bitcast_convert(rc *c) {
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) return;
  const pb_shape *in = &c->in[0], *out = &c->out[0];
  const pb_shape *s = in->rank < out->rank ? in : out;
  add_pointwise(c, s, s->rank);
  if (in->rank < out->rank) pb_add1(&c->b, NUL, out->rank - 1, out->dims[out->rank - 1], NR, false);
  else if (in->rank > out->rank) pb_add1(&c->b, in->rank - 1, NUL, in->dims[in->rank - 1], NR, false);
}

static void r_broadcast_in_dim(rc *c) {
  int64_t *bd;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) return;
  int32_t n = list_field(c, "broadcast_dimensions", &bd);
  if (n < 0) n = list_field(c, "dims", &bd);
  if (n < 0) n = list_field(c, "dimensions", &bd); /* HLO broadcast */
  const pb_shape *in = &c->in[0], *out = &c->out[0];
  if (n != in->rank) {
    pb_fail(&c->b, "broadcast dimensions do not match the operand's rank");
    return;
  }
  int64_t *out_to_in = null_dims(c, (uint32_t)out->rank);
  for (int32_t i = 0; i < n; i++) {
    if (!dim_ok(c, bd[i], out->rank)) return;
    out_to_in[bd[i]] = i;
  }
  for (int32_t o = 0; o < out->rank; o++) {
    int64_t i = out_to_in[o];
    if (i != NUL && in->dims[i] == 1 && out->dims[o] != 1) { /* expanded in place */
      pb_add1(&c->b, i, NUL, 1, PT, false);
      i = NUL;
    }
    pb_add1(&c->b, i, o, out->dims[o], PT, false);
  }
}

static void r_concatenate(rc *c);
static void r_convolution(rc *c);
static void r_custom_call(rc *c);
static void r_dot_general(rc *c);
static void r_gather(rc *c);
static void r_scatter(rc *c);
static void r_reshape(rc *c);

static void r_dot(rc *c) {
  if (!need_counts(c, 2, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->in[1])) return;
  const pb_shape *l = &c->in[0], *r = &c->in[1];
  bool lm = l->rank == 2, rm = r->rank == 2;
  if (l->rank < 1 || r->rank < 1) {
    pb_fail(&c->b, "dot operands must be vectors or matrices");
    return;
  }
  if (lm) pb_add(&c->b, PB_DIMS(0, NUL), PB_DIMS(0), l->dims[0], PT, false);
  if (rm) pb_add(&c->b, PB_DIMS(NUL, 1), PB_DIMS(lm ? 1 : 0), r->dims[1], PT, false);
  pb_add(&c->b, PB_DIMS(lm ? 1 : 0, 0), PB_DIMS(NUL), r->dims[0], RED, false);
}

static void r_dynamic_slice(rc *c) { add_pointwise_mismatch(c, NR, true); }
static void r_pad(rc *c) { add_pointwise_mismatch(c, PERM, c->opt->conservative); }
static void r_slice(rc *c) { add_pointwise_mismatch(c, PERM, c->opt->conservative); }

static bool defined_by_constant(const ir_value *v) {
  const ir_op *d = v ? ir_value_def(v) : NULL;
  return d && (named(d, "stablehlo.constant") || ir_span_eq(ir_op_name(d), "sdy.constant") ||
               ir_span_eq(ir_op_name(d), "arith.constant"));
}

static void r_dynamic_update_slice(rc *c) {
  if (!need_counts(c, 2, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->in[1])) return;
  const pb_shape *op = &c->in[0], *up = &c->in[1];
  if (op->rank != up->rank) {
    pb_fail(&c->b, "operand and update ranks differ");
    return;
  }
  bool all_const = true; /* constant start indices: the update need not be replicated */
  for (uint32_t i = 2; i < c->op->noperands; i++) all_const = all_const && defined_by_constant(c->op->operands[i]);
  int64_t *dims = null_dims(c, c->nin);
  for (int32_t d = 0; d < op->rank; d++) {
    if (op->dims[d] == up->dims[d]) {
      pb_add_all(&c->b, d, op->dims[d], PT, false);
      continue;
    }
    dims[0] = d, dims[1] = NUL;
    pb_add(&c->b, dims, c->nin, PB_DIMS(d), op->dims[d], PT, false);
    dims[0] = NUL, dims[1] = d;
    pb_add(&c->b, dims, c->nin, PB_DIMS(NUL), up->dims[d], all_const ? PT : NR, false);
  }
}

static void r_fft(rc *c) {
  int64_t *len;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) return;
  int32_t n = list_field(c, "fft_length", &len);
  if (n < 0) n = list_field(c, "length", &len);
  if (n < 0) {
    pb_fail(&c->b, "missing fft_length");
    return;
  }
  const pb_shape *in = &c->in[0], *out = &c->out[0];
  bool truncated = in->rank && out->rank && in->dims[in->rank - 1] != out->dims[out->rank - 1];
  for (int32_t d = 0; d < in->rank; d++) {
    if (n > in->rank || d < in->rank - n) pb_add_all(&c->b, d, in->dims[d], PT, false);
    else pb_add_all(&c->b, d, in->dims[d], NR, d == in->rank - 1 && truncated);
  }
}

static void r_batch_norm_inference(rc *c) {
  int64_t fi;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0])) return;
  if (!int_field(c, "feature_index", &fi)) {
    pb_fail(&c->b, "missing feature_index");
    return;
  }
  int64_t *dims = null_dims(c, c->nin);
  for (int32_t d = 0; d < c->in[0].rank; d++) {
    for (uint32_t i = 1; i < c->nin; i++) dims[i] = d == fi ? 0 : NUL;
    dims[0] = d;
    int64_t *res = null_dims(c, c->nout);
    res[0] = d;
    pb_add(&c->b, dims, c->nin, res, c->nout, c->in[0].dims[d], PT, false);
  }
}

static void r_cholesky(rc *c) {
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0])) return;
  for (int32_t d = 0; d < c->in[0].rank; d++)
    pb_add_all(&c->b, d, c->in[0].dims[d], d < c->in[0].rank - 2 ? PT : NR, false);
}

static void r_clamp(rc *c) {
  if (!need_counts(c, 2, 1) || !ranked(c, &c->in[1])) return;
  add_pointwise(c, &c->in[1], c->in[1].rank); /* operands are (min, operand, max) */
}

static void r_select(rc *c) {
  if (!need_counts(c, 1, 1) || !ranked(c, &c->out[0])) return;
  add_pointwise(c, &c->out[0], c->out[0].rank);
}

static void r_reduce(rc *c) {
  int64_t *dims;
  uint32_t n = c->nout; /* inputs, then as many init values */
  if (n == 0 || c->nin != 2 * n || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) {
    if (!c->b.err) pb_fail(&c->b, "reduce needs as many inputs and init values as results");
    return;
  }
  int32_t nd = list_field(c, "dimensions", &dims);
  if (nd < 0) {
    pb_fail(&c->b, "missing dimensions");
    return;
  }
  int64_t *od = null_dims(c, c->nin), *rd = null_dims(c, n);
  int64_t out = 0;
  for (int32_t d = 0; d < c->in[0].rank; d++) {
    for (uint32_t i = 0; i < n; i++) od[i] = d;
    bool reduced = contains(dims, nd, d);
    if (!reduced && !dim_ok(c, out, c->out[0].rank)) return;
    for (uint32_t i = 0; i < n; i++) rd[i] = reduced ? NUL : out;
    pb_add(&c->b, od, c->nin, rd, n, c->in[0].dims[d], reduced ? RED : PT, false);
    if (!reduced) out++;
  }
}

/* Shardy's window test: size 1, stride 1 and no padding make a dimension map one to one. */
static bool window_passthrough(const int64_t *pad, int32_t npad, const int64_t *win, int32_t nwin, const int64_t *str,
                               int32_t nstr, int32_t d) {
  if (npad > 0 && (2 * d + 1 >= npad || pad[2 * d] != 0 || pad[2 * d + 1] != 0)) return false;
  return (nstr <= 0 || (d < nstr && str[d] == 1)) && (nwin <= 0 || (d < nwin && win[d] == 1));
}

/* `x`-separated integers of an HLO window field (`size=3x1`, `pad=0_0x2_-2`: '_' separates too). */
static int32_t hlo_window_ints(rc *c, ir_span window, const char *name, int64_t **out) {
  size_t n = strlen(name);
  *out = NULL;
  for (const char *p = window.p; p && p + n < window.p + window.n; p++) {
    if (memcmp(p, name, n) != 0 || p[n] != '=' || (p > window.p && p[-1] != ' ' && p[-1] != '{')) continue;
    SC_VEC(int64_t) v = {0};
    const char *q = p + n + 1, *end = window.p + window.n;
    for (;;) {
      int64_t x;
      ir_span rest = ir_span_of(q, (uint32_t)(end - q));
      if (q >= end || (!(*q >= '0' && *q <= '9') && *q != '-') || !pb_int(rest, &x)) break;
      if (v.n == PB_MAX_LIST) return -1;
      SC_PUSH(c->a, v, x);
      if (*q == '-') q++;
      while (q < end && *q >= '0' && *q <= '9') q++;
      if (q >= end || (*q != 'x' && *q != '_')) break;
      q++;
    }
    *out = v.v;
    return (int32_t)v.n;
  }
  return -1;
}

/* A window's padding (low, high per dimension), sizes and strides: StableHLO attributes, or HLO's
 * `window={size=3x1 stride=3x1 pad=0_0x2_-2}`. Absent lists have length -1. */
static void window_of(rc *c, int64_t **pad, int32_t *npad, int64_t **win, int32_t *nwin, int64_t **str, int32_t *nstr) {
  ir_span w;
  *npad = list_field(c, "padding", pad);
  *nwin = list_field(c, "window_dimensions", win);
  *nstr = list_field(c, "window_strides", str);
  if (*nwin >= 0 || !is_hlo(c->op) || !field(c, "window", &w)) return;
  *nwin = hlo_window_ints(c, w, "size", win);
  *nstr = hlo_window_ints(c, w, "stride", str);
  *npad = hlo_window_ints(c, w, "pad", pad);
}

static void r_reduce_window(rc *c) {
  int64_t *pad, *win, *str;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->out[0])) return;
  int32_t npad, nwin, nstr;
  window_of(c, &pad, &npad, &win, &nwin, &str, &nstr);
  for (int32_t d = 0; d < c->out[0].rank; d++) {
    bool pass = window_passthrough(pad, npad, win, nwin, str, nstr, d);
    pb_add_all(&c->b, d, c->out[0].dims[d], pass ? PT : PERM, !pass && c->opt->conservative);
  }
}

static void r_select_and_scatter(rc *c) {
  int64_t *pad, *win, *str;
  if (!need_counts(c, 3, 1) || !ranked(c, &c->out[0]) || !ranked(c, &c->in[1])) return;
  int32_t npad, nwin, nstr;
  window_of(c, &pad, &npad, &win, &nwin, &str, &nstr);
  bool cons = c->opt->conservative;
  for (int32_t d = 0; d < c->out[0].rank; d++) {
    if (window_passthrough(pad, npad, win, nwin, str, nstr, d)) {
      pb_add_all(&c->b, d, c->out[0].dims[d], PT, false);
      continue;
    }
    if (!dim_ok(c, d, c->in[1].rank)) return;
    int64_t *od = null_dims(c, c->nin), *rd = null_dims(c, c->nout);
    od[1] = d; /* the source's windows need replication */
    pb_add(&c->b, od, c->nin, rd, c->nout, c->in[1].dims[d], NR, cons);
    od[1] = NUL, od[0] = d, rd[0] = d; /* the operand's dimension is permuted into the result's */
    pb_add(&c->b, od, c->nin, rd, c->nout, c->out[0].dims[d], PERM, cons);
  }
}

static void r_reverse(rc *c) {
  int64_t *dims;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->out[0])) return;
  int32_t n = list_field(c, "dimensions", &dims);
  if (n < 0) n = list_field(c, "dims", &dims);
  for (int32_t d = 0; d < c->out[0].rank; d++)
    pb_add_all(&c->b, d, c->out[0].dims[d], contains(dims, n, d) ? PERM : PT, false);
}

static void r_rng_bit_generator(rc *c) {
  if (is_hlo(c->op) && c->nout == 1) { /* HLO's output-only form: no state result to keep apart */
    c->none = true;
    return;
  }
  if (!need_counts(c, 1, 2) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[1])) return;
  for (int32_t d = 0; d < c->in[0].rank; d++) /* the state stays replicated and apart from the output */
    pb_add(&c->b, PB_DIMS(d), PB_DIMS(d, NUL), c->in[0].dims[d], NR, true);
  for (int32_t d = 0; d < c->out[1].rank; d++)
    pb_add(&c->b, PB_DIMS(NUL), PB_DIMS(NUL, d), c->out[1].dims[d], PT, false);
}

static void r_sort(rc *c) {
  int64_t sd;
  if (c->nin == 0 || !ranked(c, &c->in[0])) return;
  if (!int_field(c, "dimension", &sd) && !int_field(c, "dimensions", &sd)) sd = -1;
  const pb_shape *s = &c->in[0];
  bool others_one = true; /* every other dimension has size 1: nothing else could carry a sharding */
  for (int32_t d = 0; d < s->rank; d++) others_one = others_one && (d == sd || s->dims[d] == 1);
  for (int32_t d = 0; d < s->rank; d++)
    pb_add_all(&c->b, d, s->dims[d], d == sd ? NR : PT, d == sd && others_one);
}

static void r_transpose(rc *c) {
  int64_t *perm;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0])) return;
  int32_t n = list_field(c, "permutation", &perm);
  if (n < 0) n = list_field(c, "dims", &perm);
  if (n < 0) n = list_field(c, "dimensions", &perm); /* HLO */
  if (n < 0) {
    pb_fail(&c->b, "missing permutation");
    return;
  }
  for (int32_t o = 0; o < n; o++) {
    if (!dim_ok(c, perm[o], c->in[0].rank)) return;
    pb_add1(&c->b, perm[o], o, c->in[0].dims[perm[o]], PT, false);
  }
}

static void r_triangular_solve(rc *c) {
  ir_span v;
  if (!need_counts(c, 2, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->in[1])) return;
  const pb_shape *a = &c->in[0], *b = &c->in[1];
  if (a->rank < 2 || b->rank < a->rank) {
    pb_fail(&c->b, "triangular_solve needs matrices");
    return;
  }
  add_pointwise(c, a, a->rank - 2);
  int64_t d1 = a->rank - 2, d2 = a->rank - 1;
  bool left = field(c, "left_side", &v) && ir_span_starts(ir_span_trim(v), "true");
  /* TRANSPOSE and ADJOINT transpose a; NO_TRANSPOSE does not. */
  bool trans = field(c, "transpose_a", &v) && !span_has(v, "NO_TRANSPOSE") &&
               (span_has(v, "TRANSPOSE") || span_has(v, "ADJOINT"));
  if (left) { /* op(a) @ result = b */
    int64_t an = trans ? d2 : d1, ac = trans ? d1 : d2;
    pb_add(&c->b, PB_DIMS(an, d1), PB_DIMS(NUL), a->dims[an], NR, false);
    pb_add(&c->b, PB_DIMS(NUL, d2), PB_DIMS(d2), b->dims[d2], NR, false);
    pb_add(&c->b, PB_DIMS(ac, NUL), PB_DIMS(d1), a->dims[ac], NR, false);
  } else { /* result @ op(a) = b */
    int64_t an = trans ? d1 : d2, ac = trans ? d2 : d1;
    pb_add(&c->b, PB_DIMS(NUL, d1), PB_DIMS(d1), b->dims[d1], NR, false);
    pb_add(&c->b, PB_DIMS(an, d2), PB_DIMS(NUL), a->dims[an], NR, false);
    pb_add(&c->b, PB_DIMS(ac, NUL), PB_DIMS(d2), a->dims[ac], NR, false);
  }
}

/* ---- the table ---- */

typedef struct {
  const char *name;
  uint32_t len; /* strlen(name): rows are told apart by length first, once per op */
  rule_fn fn;
} rule_row;

#define ROW(n, fn) {n, sizeof(n) - 1, fn}
#define POINTWISE(n) ROW("stablehlo." n, r_pointwise)
static const rule_row RULES[] = {
    ROW("sdy.sharding_constraint", r_pointwise),
    POINTWISE("abs"), POINTWISE("add"), POINTWISE("all_reduce"), POINTWISE("and"), POINTWISE("atan2"),
    POINTWISE("cbrt"), POINTWISE("ceil"), POINTWISE("count_leading_zeros"), POINTWISE("collective_broadcast"),
    POINTWISE("collective_permute"), POINTWISE("compare"), POINTWISE("complex"), POINTWISE("convert"),
    POINTWISE("cosine"), POINTWISE("cross-replica-sum"), POINTWISE("divide"), POINTWISE("exponential"),
    POINTWISE("exponential_minus_one"), POINTWISE("floor"), POINTWISE("imag"), POINTWISE("is_finite"),
    POINTWISE("log_plus_one"), POINTWISE("log"), POINTWISE("logistic"), POINTWISE("maximum"), POINTWISE("minimum"),
    POINTWISE("multiply"), POINTWISE("negate"), POINTWISE("not"), POINTWISE("or"), POINTWISE("popcnt"),
    POINTWISE("power"), POINTWISE("real"), POINTWISE("reduce_precision"), POINTWISE("remainder"),
    POINTWISE("round_nearest_even"), POINTWISE("round_nearest_afz"), POINTWISE("rsqrt"), POINTWISE("shift_left"),
    POINTWISE("shift_right_arithmetic"), POINTWISE("shift_right_logical"), POINTWISE("sign"), POINTWISE("sine"),
    POINTWISE("sqrt"), POINTWISE("subtract"), POINTWISE("tan"), POINTWISE("tanh"), POINTWISE("xor"),
    ROW("stablehlo.all_gather", r_all_gather),
    ROW("stablehlo.all_to_all", r_all_to_all),
    ROW("stablehlo.batch_norm_inference", r_batch_norm_inference),
    ROW("stablehlo.bitcast_convert", r_bitcast_convert),
    ROW("stablehlo.broadcast_in_dim", r_broadcast_in_dim),
    ROW("stablehlo.cholesky", r_cholesky),
    ROW("stablehlo.clamp", r_clamp),
    ROW("stablehlo.concatenate", r_concatenate),
    ROW("stablehlo.convolution", r_convolution),
    ROW("stablehlo.custom_call", r_custom_call),
    ROW("stablehlo.dot_general", r_dot_general),
    ROW("stablehlo.dot", r_dot),
    ROW("stablehlo.dynamic_slice", r_dynamic_slice),
    ROW("stablehlo.dynamic_update_slice", r_dynamic_update_slice),
    ROW("stablehlo.fft", r_fft),
    ROW("stablehlo.gather", r_gather),
    ROW("stablehlo.pad", r_pad),
    ROW("stablehlo.reduce", r_reduce),
    ROW("stablehlo.reduce_scatter", r_reduce_scatter),
    ROW("stablehlo.reduce_window", r_reduce_window),
    ROW("stablehlo.reshape", r_reshape),
    ROW("stablehlo.reverse", r_reverse),
    ROW("stablehlo.rng_bit_generator", r_rng_bit_generator),
    ROW("stablehlo.scatter", r_scatter),
    ROW("stablehlo.select_and_scatter", r_select_and_scatter),
    ROW("stablehlo.select", r_select),
    ROW("stablehlo.slice", r_slice),
    ROW("stablehlo.sort", r_sort),
    ROW("stablehlo.transpose", r_transpose),
    ROW("stablehlo.triangular_solve", r_triangular_solve),
    /* Known to Shardy without a rule: handled apart (data flow, calls) or nothing to propagate. */
    ROW("builtin.module", r_none), ROW("module", r_none), ROW("func.func", r_none), ROW("func.call", r_none), ROW("call", r_none),
    ROW("sdy.constant", r_none), ROW("sdy.data_flow_edge", r_none), ROW("sdy.func_data_flow_edge", r_none),
    ROW("sdy.manual_computation", r_none), ROW("sdy.mesh", r_none), ROW("sdy.propagation_barrier", r_none),
    ROW("sdy.named_computation", r_none), ROW("sdy.sharding_group", r_none), ROW("sdy.reshard", r_none),
    ROW("stablehlo.after_all", r_none), ROW("stablehlo.case", r_none), ROW("stablehlo.constant", r_none),
    ROW("stablehlo.create_token", r_none), ROW("stablehlo.get_tuple_element", r_none), ROW("stablehlo.infeed", r_none),
    ROW("stablehlo.iota", r_none), ROW("stablehlo.outfeed", r_none), ROW("stablehlo.optimization_barrier", r_none),
    ROW("stablehlo.partition_id", r_none), ROW("stablehlo.recv", r_none), ROW("stablehlo.send", r_none),
    ROW("stablehlo.while", r_none),
    /* Terminators: no rule and no warning. */
    ROW("func.return", r_none), ROW("return", r_none), ROW("stablehlo.return", r_none), ROW("sdy.return", r_none),
};

static rule_fn find_rule(const ir_op *op) {
  char buf[96];
  ir_span n = prop_stablehlo_name(op, buf, sizeof buf);
  for (size_t i = 0; i < sizeof RULES / sizeof *RULES; i++)
    if (n.n == RULES[i].len && memcmp(n.p, RULES[i].name, n.n) == 0) return RULES[i].fn;
  return NULL;
}

/* ---- the entry points ---- */

const prop_rule_facts *prop_rule_facts_build(sc_arena *a, const ir_module *m) {
  prop_rule_facts *f = ar_calloc(a, 1, sizeof *f);
  f->nops = m->nops;
  if (!ir_module_may_name(m, "stablehlo.rng_bit_generator") && !ir_module_may_name(m, "mhlo.rng_bit_generator") &&
      !ir_module_may_name(m, "rng-bit-generator"))
    return f; /* no generator: nothing feeds one (feeds_rng stays NULL) */
  f->feeds_rng = ar_calloc(a, m->nops ? m->nops : 1, 1);
  uint8_t *rng_name = ar_calloc(a, m->nop_names + 1, 1); /* per name id: 1 rng_bit_generator, 2 other */
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    uint8_t *known = op->name_id && op->name_id <= m->nop_names ? &rng_name[op->name_id] : NULL;
    if (known && *known == 2) continue;
    ir_span n = ir_op_name(op); /* every spelling (stablehlo., mhlo., HLO rng-bit-generator) ends in "generator" */
    bool rng = n.n >= 9 && !memcmp(n.p + n.n - 9, "generator", 9) && named(op, "stablehlo.rng_bit_generator");
    if (known) *known = rng ? 1 : 2;
    if (!rng) continue;
    for (uint32_t k = 0; k < op->noperands; k++) {
      const ir_value *v = op->operands[k];
      if (v && ir_value_def(v) && ir_value_def(v)->id < m->nops) f->feeds_rng[ir_value_def(v)->id] = 1;
    }
  }
  return f;
}

/* Whether an rng_bit_generator uses a result of `op`: from the facts, or by scanning the ops that can
 * see its results (those after it inside its parent). */
static bool feeds_rng(const rc *c) {
  const ir_op *op = c->op;
  if (c->opt->facts) return c->opt->facts->feeds_rng && op->id < c->opt->facts->nops && c->opt->facts->feeds_rng[op->id];
  uint32_t end = op->parent_op ? op->parent_op->subtree_end : c->m->nops;
  for (uint32_t i = op->id + 1; i < end && i < c->m->nops; i++) {
    const ir_op *u = c->m->ops[i];
    if (ar_step(c->a, 1)) return false; /* metered: a caller without facts may visit many ops */
    if (!named(u, "stablehlo.rng_bit_generator")) continue;
    for (uint32_t k = 0; k < u->noperands; k++)
      if (u->operands[k] && ir_value_def(u->operands[k]) == op) return true;
  }
  return false;
}

/* Custom call targets Shardy knows, by what it does with them. */
typedef enum { CC_UNKNOWN, CC_NO_RULE, CC_POINTWISE, CC_EIGH, CC_QR, CC_HOUSEHOLDER, CC_TOPK, CC_APPROX_TOPK, CC_X64_COMBINE } cc_kind;

static cc_kind custom_call_kind(ir_span t) {
  static const struct {
    const char *target;
    cc_kind kind;
  } targets[] = {
      {"sdy_testonly", CC_NO_RULE}, {"tpu_custom_call", CC_NO_RULE}, {"xla_python_cpu_callback", CC_NO_RULE},
      {"xla_python_gpu_callback", CC_NO_RULE}, {"xla_ffi_python_cpu_callback", CC_NO_RULE},
      {"xla_ffi_python_gpu_callback", CC_NO_RULE}, {"xla.debug.Log", CC_NO_RULE},
      {"Sharding", CC_POINTWISE} /* GSPMD's sharding constraint (XLA imports it as sdy.sharding_constraint) */,
      {"annotate_device_placement", CC_POINTWISE}, {"Cholesky", CC_POINTWISE}, {"CompactWyHelper", CC_POINTWISE},
      {"InspectSharding", CC_POINTWISE}, {"InvertDiagBlocksLowerTriangular", CC_POINTWISE},
      {"InvertDiagBlocksUpperTriangular", CC_POINTWISE}, {"LayoutConstraint", CC_POINTWISE},
      {"mhlo.erf", CC_POINTWISE}, {"MoveToDevice", CC_POINTWISE}, {"MoveToHost", CC_POINTWISE},
      {"X64SplitHigh", CC_POINTWISE}, {"X64SplitLow", CC_POINTWISE}, {"xla.megascale.provide_metadata", CC_POINTWISE},
      {"_SPMDInternalOp_MultiPad", CC_POINTWISE}, {"_SPMDInternalOp_RotateRight", CC_POINTWISE},
      {"_SPMDInternalOp_MultiRotate", CC_POINTWISE}, {"_SPMDInternalOp_MultiSlice", CC_POINTWISE},
      {"_SPMDInternalOp_Wrap", CC_POINTWISE}, {"Eigh", CC_EIGH}, {"Qr", CC_QR}, {"QrDecompositionBlock", CC_QR},
      {"ProductOfElementaryHouseholderReflectors", CC_HOUSEHOLDER}, {"mhlo.topk", CC_TOPK},
      {"ApproxTopK", CC_APPROX_TOPK}, {"PartialReduce", CC_APPROX_TOPK}, {"X64Combine", CC_X64_COMBINE},
  };
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
    if (ir_span_eq(t, targets[i].target)) return targets[i].kind;
  return CC_UNKNOWN;
}

/* The call target as written (`@foo`, `"foo"`, or call_target_name = "foo"), without '@' or quotes. */
static ir_span call_target(const ir_op *op) {
  ir_span t = ir_op_custom_call_target(op);
  if (t.n) return t;
  const ir_attr *at = ir_op_attr(op, "call_target_name");
  if (!at) return t;
  t = ir_span_trim(at->value);
  if (t.n >= 2 && t.p[0] == '"' && t.p[t.n - 1] == '"') t = ir_span_of(t.p + 1, t.n - 2);
  return t;
}

static void cc_linalg(rc *c, cc_kind k) {
  if (!ranked(c, &c->in[0]) || c->in[0].rank < 2) {
    pb_fail(&c->b, "the decomposition's operand must have rank >= 2");
    return;
  }
  const pb_shape *in = &c->in[0];
  int64_t d1 = in->rank - 2, d2 = in->rank - 1;
  add_pointwise(c, in, in->rank - 2); /* batch dimensions */
  if (k == CC_EIGH) {
    if (!need_counts(c, 1, 2)) return;
    pb_add(&c->b, PB_DIMS(d1), PB_DIMS(d1, NUL), in->dims[d1], PT, false);
    pb_add(&c->b, PB_DIMS(d2), PB_DIMS(d2, d1), in->dims[d2], PT, false);
  } else if (k == CC_QR) {
    if (!need_counts(c, 1, 2) || !ranked(c, &c->out[1]) || !dim_ok(c, d1, c->out[1].rank)) return;
    pb_add(&c->b, PB_DIMS(d1), PB_DIMS(d1, NUL), in->dims[d1], NR, false);
    pb_add(&c->b, PB_DIMS(d2), PB_DIMS(d2, NUL), in->dims[d2], NR, false);
    pb_add(&c->b, PB_DIMS(NUL), PB_DIMS(NUL, d1), c->out[1].dims[d1], NR, false);
  } else {
    if (!need_counts(c, 2, 1) || !ranked(c, &c->in[1]) || !dim_ok(c, d1, c->in[1].rank)) return;
    pb_add(&c->b, PB_DIMS(d1, NUL), PB_DIMS(d1), in->dims[d1], NR, false);
    pb_add(&c->b, PB_DIMS(d2, NUL), PB_DIMS(d2), in->dims[d2], NR, false);
    pb_add(&c->b, PB_DIMS(NUL, d1), PB_DIMS(NUL), c->in[1].dims[d1], NR, false);
  }
}

static void cc_approx_topk(rc *c) {
  if (c->nin != 4 || c->nout != 2) {
    pb_fail(&c->b, "ApproxTopK/PartialReduce take 4 operands and give 2 results");
    return;
  }
  const pb_shape *in = &c->in[0], *out = &c->out[0];
  if (!ranked(c, in) || !ranked(c, out)) return;
  if (in->rank != out->rank) {
    pb_fail(&c->b, "operand and result ranks differ");
    return;
  }
  for (int32_t d = 0; d < in->rank; d++) {
    if (in->dims[d] == out->dims[d]) {
      pb_add_all(&c->b, d, in->dims[d], PT, false);
      continue;
    }
    pb_add(&c->b, PB_DIMS(d, d, NUL, NUL), PB_DIMS(NUL, NUL), in->dims[d], PT, false);
    pb_add(&c->b, PB_DIMS(NUL, NUL, NUL, NUL), PB_DIMS(d, d), out->dims[d], NR, true);
  }
}

static void r_custom_call(rc *c) {
  cc_kind k = custom_call_kind(call_target(c->op));
  switch (k) {
  case CC_UNKNOWN:
  case CC_NO_RULE: c->none = true; return;
  case CC_POINTWISE: r_pointwise(c); return;
  case CC_EIGH:
  case CC_QR:
  case CC_HOUSEHOLDER: cc_linalg(c, k); return;
  case CC_TOPK: add_pointwise_mismatch(c, NR, true); return;
  case CC_APPROX_TOPK: cc_approx_topk(c); return;
  case CC_X64_COMBINE:
    if (c->nout && c->out[0].rank == 1 && feeds_rng(c)) /* rng state: replicated, never resharded */
      pb_add_all(&c->b, 0, c->out[0].dims[0], NR, true);
    else r_pointwise(c);
    return;
  }
}

const char *prop_rule_warning(sc_arena *a, const ir_op *op) {
  if (ir_op_attr(op, "sdy.sharding_rule")) return NULL;
  rule_fn fn = find_rule(op);
  if (fn == r_custom_call) {
    ir_span t = call_target(op);
    return custom_call_kind(t) == CC_UNKNOWN
               ? ar_printf(a, "custom call @" SC_QUOTE_FMT " is unknown to SDY sharding rule registry",
                                 SC_QUOTE_ARG(t))
               : NULL;
  }
  if (fn || !memchr(ir_op_name(op).p ? ir_op_name(op).p : "", '.', ir_op_name(op).n)) return NULL; /* known, or not MLIR */
  return ar_printf(a, "op '" SC_QUOTE_FMT "' is unknown to SDY sharding rule registry", SC_QUOTE_ARG(ir_op_name(op)));
}

/* A rule written on the op must describe its tensors: as many mappings as operands and results, each
 * of its tensor's rank (propagation indexes dimensions through it). NULL when it does. */
static const char *tensors_mismatch(sc_arena *a, const prop_tensor *t, uint32_t n, uint32_t want, bool results,
                                    const ir_op *op) {
  const char *what = results ? "results" : "operands";
  if (n != want) return ar_printf(a, "number of %s and mappings must match: %u != %u", what, want, n);
  for (uint32_t i = 0; i < n; i++) {
    pb_shape s = shape_of(a, results ? result_type(op, i) : operand_type(op, i));
    if (s.rank < 0) continue; /* type not known here: nothing to compare */
    if ((uint32_t)s.rank != t[i].rank)
      return ar_printf(a, "%s %u - mapping rank must match: %u != %d", results ? "result" : "operand", i,
                             t[i].rank, s.rank);
  }
  return NULL;
}

static const char *written_rule_mismatch(sc_arena *a, const ir_op *op, const prop_rule *r) {
  const char *e = tensors_mismatch(a, r->operands, r->noperands, op->noperands, false, op);
  if (!e) e = tensors_mismatch(a, r->results, r->nresults, op->nresults, true, op);
  return e ? ar_printf(a, "sdy.sharding_rule on '" SC_QUOTE_FMT "': %s", SC_QUOTE_ARG(ir_op_name(op)), e) : NULL;
}

const prop_rule *prop_rule_of(sc_arena *a, const ir_module *m, const ir_op *op, const prop_rule_options *opt,
                              const char **err) {
  static const prop_rule_options defaults = {false, NULL};
  const char *e = NULL;
  if (err) *err = NULL;
  const ir_attr *written = ir_op_attr(op, "sdy.sharding_rule");
  if (written) {
    const prop_rule *r = prop_rule_parse(a, ir_span_trim(written->value), &e);
    if (r) e = written_rule_mismatch(a, op, r);
    if (e && err) *err = e;
    return e ? NULL : r;
  }
  rule_fn fn = find_rule(op);
  if (!fn || fn == r_none) return NULL;
  /* An HLO instruction with a tuple result is several StableHLO results once imported: not here. */
  if (is_hlo(op) && op->nresults == 1 && ir_span_starts(ir_span_trim(result_type(op, 0)), "(")) return NULL;
  rc c = {a, m, op, opt ? opt : &defaults, NULL, NULL, op->noperands, op->nresults, {0}, false};
  pb_shape *in = ar_calloc(a, c.nin ? c.nin : 1, sizeof *in);
  pb_shape *out = ar_calloc(a, c.nout ? c.nout : 1, sizeof *out);
  for (uint32_t i = 0; i < c.nin; i++) in[i] = shape_of(a, operand_type(op, i));
  for (uint32_t i = 0; i < c.nout; i++) out[i] = shape_of(a, result_type(op, i));
  c.in = in, c.out = out;
  pb_init(&c.b, a, in, c.nin, out, c.nout);
  if (!c.b.err) fn(&c);
  if (c.none && !c.b.err) return NULL;
  prop_rule *r = pb_build(&c.b);
  if (!r && err)
    *err = ar_printf(a, "no sharding rule for '" SC_QUOTE_FMT "': %s", SC_QUOTE_ARG(ir_op_name(op)), c.b.err);
  return r;
}


/* ---- concatenate ---- */

static bool defined_by_slice(const ir_value *v) { return v && ir_value_def(v) && named(ir_value_def(v), "stablehlo.slice"); }
static const ir_value *before_slice(const ir_value *v) {
  return defined_by_slice(v) && ir_value_def(v)->noperands ? ir_value_def(v)->operands[0] : v;
}

static void r_concatenate(rc *c) {
  int64_t dim;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->out[0])) return;
  if (!int_field(c, "dimension", &dim) && !int_field(c, "dim", &dim) && !int_field(c, "dimensions", &dim)) {
    pb_fail(&c->b, "missing dimension");
    return;
  }
  /* Sharding the concatenated dimension moves data (permutation) when the operands are slices, or
   * slices of one tensor and that tensor; otherwise it needs replication. */
  const ir_op *op = c->op;
  const ir_value *base = before_slice(op->operands[0]);
  bool all_slices = true, any_slice = false, same_base = base != NULL;
  for (uint32_t i = 0; i < op->noperands; i++) {
    bool sl = defined_by_slice(op->operands[i]);
    all_slices = all_slices && sl;
    any_slice = any_slice || sl;
    same_base = same_base && before_slice(op->operands[i]) == base;
  }
  prop_factor_type concat_type = all_slices || (same_base && any_slice) ? PERM : NR;
  for (int32_t d = 0; d < c->out[0].rank; d++) {
    if (c->opt->conservative && d == dim) continue; /* no factor: each tensor gets its own size-1 one */
    pb_add_all(&c->b, d, c->out[0].dims[d], d == dim ? concat_type : PT, false);
  }
}

/* ---- dot_general ---- */

/* `[1, 2] x [0, 3]`: the two lists. */
static bool list_pair(rc *c, ir_span v, int64_t **l, int32_t *nl, int64_t **r, int32_t *nr) {
  const char *p = v.p, *end = v.p + v.n;
  const char *a = p ? memchr(p, '[', v.n) : NULL;
  const char *ae = a ? memchr(a, ']', (size_t)(end - a)) : NULL;
  const char *b = ae ? memchr(ae, '[', (size_t)(end - ae)) : NULL;
  const char *be = b ? memchr(b, ']', (size_t)(end - b)) : NULL;
  if (!be) return false;
  *nl = pb_int_list(c->a, ir_span_of(a, (uint32_t)(ae + 1 - a)), l);
  *nr = pb_int_list(c->a, ir_span_of(b, (uint32_t)(be + 1 - b)), r);
  return *nl >= 0 && *nr >= 0;
}

typedef struct {
  int64_t *lb, *rb, *lc, *rc;
  int32_t nlb, nrb, nlc, nrc;
} dot_dims;

static bool read_dot_dims(rc *c, dot_dims *d) {
  ir_span v;
  memset(d, 0, sizeof *d);
  bool whole = field(c, "dot_dimension_numbers", &v); /* #stablehlo.dot<lhs_batching_dimensions = [0], ...> */
  if (whole || ir_op_attr(c->op, "lhs_contracting_dimensions")) {
    const ir_span *s = whole ? &v : NULL;
    d->nlb = sub_list(c, s, "lhs_batching_dimensions", &d->lb);
    d->nrb = sub_list(c, s, "rhs_batching_dimensions", &d->rb);
    d->nlc = sub_list(c, s, "lhs_contracting_dimensions", &d->lc);
    d->nrc = sub_list(c, s, "rhs_contracting_dimensions", &d->rc);
    return true;
  }
  if (ir_op_attr(c->op, "lhs_contracting_dims") || ir_op_attr(c->op, "lhs_batch_dims")) { /* HLO dot */
    d->nlb = sub_list(c, NULL, "lhs_batch_dims", &d->lb);
    d->nrb = sub_list(c, NULL, "rhs_batch_dims", &d->rb);
    d->nlc = sub_list(c, NULL, "lhs_contracting_dims", &d->lc);
    d->nrc = sub_list(c, NULL, "rhs_contracting_dims", &d->rc);
    return true;
  }
  /* Pretty form: `batching_dims = [0] x [0], contracting_dims = [2] x [1]`. */
  if (field(c, "batching_dims", &v) && !list_pair(c, v, &d->lb, &d->nlb, &d->rb, &d->nrb)) return false;
  if (field(c, "contracting_dims", &v) && !list_pair(c, v, &d->lc, &d->nlc, &d->rc, &d->nrc)) return false;
  return true;
}

static bool dims_ok(rc *c, const int64_t *v, int32_t n, int32_t rank) {
  for (int32_t i = 0; i < n; i++)
    if (!dim_ok(c, v[i], rank)) return false;
  return true;
}

static void r_dot_general(rc *c) {
  dot_dims d;
  if (!need_counts(c, 2, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->in[1])) return;
  const pb_shape *l = &c->in[0], *r = &c->in[1];
  if (!read_dot_dims(c, &d) || d.nlb != d.nrb || d.nlc != d.nrc) {
    pb_fail(&c->b, "malformed dot dimension numbers");
    return;
  }
  if (!dims_ok(c, d.lb, d.nlb, l->rank) || !dims_ok(c, d.rb, d.nrb, r->rank) || !dims_ok(c, d.lc, d.nlc, l->rank) ||
      !dims_ok(c, d.rc, d.nrc, r->rank))
    return;
  int64_t out = 0;
  for (int32_t i = 0; i < d.nlb; i++)
    pb_add(&c->b, PB_DIMS(d.lb[i], d.rb[i]), PB_DIMS(out++), l->dims[d.lb[i]], PT, false);
  for (int32_t i = 0; i < l->rank; i++)
    if (!contains(d.lc, d.nlc, i) && !contains(d.lb, d.nlb, i))
      pb_add(&c->b, PB_DIMS(i, NUL), PB_DIMS(out++), l->dims[i], PT, false);
  for (int32_t i = 0; i < r->rank; i++)
    if (!contains(d.rc, d.nrc, i) && !contains(d.rb, d.nrb, i))
      pb_add(&c->b, PB_DIMS(NUL, i), PB_DIMS(out++), r->dims[i], PT, false);
  for (int32_t i = 0; i < d.nlc; i++)
    pb_add(&c->b, PB_DIMS(d.lc[i], d.rc[i]), PB_DIMS(NUL), l->dims[d.lc[i]], RED, false);
}

/* ---- convolution ---- */

typedef struct {
  int64_t in_batch, in_feature, k_in_feature, k_out_feature, out_batch, out_feature;
  int64_t *in_spatial, *k_spatial, *out_spatial;
  int32_t nspatial;
} conv_dims;

/* One `[b, 0, 1, f]` group: the positions of the two letters and of spatial dimension 0, 1, ... */
static bool conv_group(rc *c, const char **pp, const char *end, char l1, int64_t *p1, char l2, int64_t *p2,
                       int64_t **spatial, int32_t *nspatial) {
  const char *p = *pp;
  while (p < end && *p != '[') p++;
  if (p >= end) return false;
  p++;
  int64_t pos = 0, sp[64];
  int32_t n = 0;
  *p1 = *p2 = -1;
  for (int i = 0; i < 64; i++) sp[i] = -1;
  while (p < end && *p != ']') {
    if (*p == ' ' || *p == ',') {
      p++;
      continue;
    }
    if (*p == l1) *p1 = pos;
    else if (*p == l2) *p2 = pos;
    else if (*p >= '0' && *p <= '9') {
      int64_t d = 0;
      while (p < end && *p >= '0' && *p <= '9' && d < 64) d = d * 10 + (*p++ - '0');
      if (d >= 64 || sp[d] >= 0) return false;
      sp[d] = pos, n++, pos++;
      continue;
    } else return false;
    p++, pos++;
  }
  if (p >= end || *p1 < 0 || *p2 < 0) return false;
  *pp = p + 1;
  *spatial = ar_alloc(c->a, (size_t)(n ? n : 1) * sizeof **spatial);
  for (int32_t i = 0; i < n; i++) {
    if (sp[i] < 0) return false;
    (*spatial)[i] = sp[i];
  }
  *nspatial = n;
  return true;
}

/* HLO's `dim_labels=b01f_01io->b01f`: one character per dimension. */
static bool hlo_dim_labels(rc *c, ir_span v, conv_dims *d) {
  const char *p = v.p, *end = v.p + v.n;
  const char *us = memchr(p, '_', v.n), *arrow = NULL;
  for (const char *q = us ? us : end; q + 1 < end; q++)
    if (q[0] == '-' && q[1] == '>') arrow = q;
  if (!us || !arrow) return false;
  struct {
    const char *from, *to;
    char l1, l2;
    int64_t *p1, *p2, **sp;
  } parts[3] = {{p, us, 'b', 'f', &d->in_batch, &d->in_feature, &d->in_spatial},
                {us + 1, arrow, 'i', 'o', &d->k_in_feature, &d->k_out_feature, &d->k_spatial},
                {arrow + 2, end, 'b', 'f', &d->out_batch, &d->out_feature, &d->out_spatial}};
  int32_t counts[3];
  for (int k = 0; k < 3; k++) {
    int32_t n = 0;
    *parts[k].p1 = *parts[k].p2 = -1;
    *parts[k].sp = ar_alloc(c->a, 10 * sizeof **parts[k].sp);
    for (int i = 0; i < 10; i++) (*parts[k].sp)[i] = -1;
    for (const char *q = parts[k].from; q < parts[k].to; q++) {
      int64_t pos = q - parts[k].from;
      if (*q == parts[k].l1) *parts[k].p1 = pos;
      else if (*q == parts[k].l2) *parts[k].p2 = pos;
      else if (*q >= '0' && *q <= '9' && (*parts[k].sp)[*q - '0'] < 0) (*parts[k].sp)[*q - '0'] = pos, n++;
      else return false;
    }
    for (int32_t i = 0; i < n; i++)
      if ((*parts[k].sp)[i] < 0) return false;
    if (*parts[k].p1 < 0 || *parts[k].p2 < 0) return false;
    counts[k] = n;
  }
  d->nspatial = counts[0];
  return counts[0] == counts[1] && counts[1] == counts[2];
}

static bool read_conv_dims(rc *c, conv_dims *d) {
  ir_span v;
  if (field(c, "dim_labels", &v)) return hlo_dim_labels(c, v, d);
  bool whole = field(c, "dim_numbers", &v) || field(c, "dimension_numbers", &v);
  if (!whole || span_has(v, "input_batch_dimension")) { /* #stablehlo.conv<raw input_batch_dimension = 0, ...> */
    const ir_span *s = whole ? &v : NULL;              /* or the op's own attributes (bytecode) */
    int32_t n1, n2, n3;
#define CONV_INT(name, out) sub_int(c, s, name, out)
    if (!CONV_INT("input_batch_dimension", &d->in_batch) || !CONV_INT("input_feature_dimension", &d->in_feature) ||
        !CONV_INT("kernel_input_feature_dimension", &d->k_in_feature) ||
        !CONV_INT("kernel_output_feature_dimension", &d->k_out_feature) ||
        !CONV_INT("output_batch_dimension", &d->out_batch) || !CONV_INT("output_feature_dimension", &d->out_feature))
      return false;
#undef CONV_INT
    n1 = sub_list(c, s, "input_spatial_dimensions", &d->in_spatial);
    n2 = sub_list(c, s, "kernel_spatial_dimensions", &d->k_spatial);
    n3 = sub_list(c, s, "output_spatial_dimensions", &d->out_spatial);
    d->nspatial = n1;
    return n1 == n2 && n2 == n3;
  }
  const char *p = v.p, *end = v.p + v.n; /* [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] */
  int32_t n1, n2, n3;
  if (!conv_group(c, &p, end, 'b', &d->in_batch, 'f', &d->in_feature, &d->in_spatial, &n1) ||
      !conv_group(c, &p, end, 'i', &d->k_in_feature, 'o', &d->k_out_feature, &d->k_spatial, &n2) ||
      !conv_group(c, &p, end, 'b', &d->out_batch, 'f', &d->out_feature, &d->out_spatial, &n3))
    return false;
  d->nspatial = n1;
  return n1 == n2 && n2 == n3;
}

static void conv_spatial(rc *c, const conv_dims *d, int32_t s) {
  const pb_shape *lhs = &c->in[0], *rhs = &c->in[1], *out = &c->out[0];
  int64_t ld = d->in_spatial[s], kd = d->k_spatial[s], od = d->out_spatial[s];
  if (!dim_ok(c, ld, lhs->rank) || !dim_ok(c, kd, rhs->rank) || !dim_ok(c, od, out->rank)) return;
  /* The input dimension splits into the number of windows (a permutation factor shared with the
   * output) and the window size (a reduction factor shared with the kernel); the larger goes first. */
  int64_t sizes[2] = {out->dims[od], rhs->dims[kd]};
  bool windows_first = sizes[0] >= sizes[1];
  int64_t remaining = lhs->dims[ld];
  for (int k = 0; k < 2; k++) {
    bool contracting = windows_first ? k == 1 : k == 0;
    int64_t size = sizes[contracting ? 1 : 0];
    if (remaining < size) size = remaining;
    if (size <= 1) continue;
    pb_add(&c->b, PB_DIMS(ld, contracting ? kd : NUL), PB_DIMS(contracting ? NUL : od), size,
           contracting ? RED : PERM, false);
    remaining /= size;
  }
}

static void r_convolution(rc *c) {
  conv_dims d;
  int64_t bgc = 1, fgc = 1;
  if (!need_counts(c, 2, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->in[1]) || !ranked(c, &c->out[0])) return;
  if (!read_conv_dims(c, &d)) {
    pb_fail(&c->b, "malformed convolution dimension numbers");
    return;
  }
  int_field(c, "batch_group_count", &bgc);
  int_field(c, "feature_group_count", &fgc);
  const pb_shape *lhs = &c->in[0], *rhs = &c->in[1], *out = &c->out[0];
  if (bgc < 1 || fgc < 1 || bgc > INT32_MAX || fgc > INT32_MAX || (bgc > 1 && fgc > 1)) {
    pb_fail(&c->b, "invalid batch_group_count / feature_group_count");
    return;
  }
  if (!dim_ok(c, d.out_batch, out->rank) || !dim_ok(c, d.out_feature, out->rank) ||
      !dim_ok(c, d.k_in_feature, rhs->rank) || !dim_ok(c, d.in_batch, lhs->rank))
    return;
  if (bgc > 1)
    pb_add(&c->b, PB_DIMS(d.in_batch, d.k_out_feature), PB_DIMS(d.out_feature), bgc, PT, false);
  pb_add(&c->b, PB_DIMS(d.in_batch, NUL), PB_DIMS(d.out_batch), out->dims[d.out_batch], PT, false);
  if (!c->opt->conservative)
    for (int32_t s = 0; s < d.nspatial && !c->b.err; s++) conv_spatial(c, &d, s);
  if (fgc > 1)
    pb_add(&c->b, PB_DIMS(d.in_feature, d.k_out_feature), PB_DIMS(d.out_feature), fgc, PT, false);
  pb_add(&c->b, PB_DIMS(d.in_feature, d.k_in_feature), PB_DIMS(NUL), rhs->dims[d.k_in_feature], RED, false);
  int64_t out_feature = out->dims[d.out_feature] / (bgc * fgc);
  if (out_feature > 1)
    pb_add(&c->b, PB_DIMS(NUL, d.k_out_feature), PB_DIMS(d.out_feature), out_feature, PT, false);
}

/* ---- gather and scatter ---- */

typedef struct {
  int64_t *offset, *collapsed, *in_batch, *idx_batch;
  int32_t noffset, ncollapsed, nin_batch, nidx_batch;
  int64_t index_vector_dim;
} gs_dims;

static bool read_gs_dims(rc *c, const char *attr, const char *offset, const char *collapsed, const char *in_batch,
                         const char *idx_batch, gs_dims *g) {
  ir_span v;
  const ir_span *s = field(c, attr, &v) ? &v : NULL;
  if (!s && !ir_op_attr(c->op, "index_vector_dim") && !ir_op_attr(c->op, offset)) return false;
  g->noffset = sub_list(c, s, offset, &g->offset);
  g->ncollapsed = sub_list(c, s, collapsed, &g->collapsed);
  g->nin_batch = sub_list(c, s, in_batch, &g->in_batch);
  g->nidx_batch = sub_list(c, s, idx_batch, &g->idx_batch);
  if (!sub_int(c, s, "index_vector_dim", &g->index_vector_dim)) g->index_vector_dim = 0;
  return g->nin_batch == g->nidx_batch;
}

/* Adds one gather/scatter factor on the input, indices and slices (updates) dimensions given. */
typedef void (*gs_add_fn)(rc *c, int64_t input_dim, int64_t indices_dim, int64_t slices_dim, int64_t size,
                          prop_factor_type type, bool blocked);

/* The factors gather and scatter share (Shardy's addGatherScatterFactors): offset dimensions, batch
 * dimensions (explicit: on the input too; implicit: indices and slices only), collapsed dimensions and
 * the index vector dimension. */
static void gather_scatter(rc *c, bool scatter, const pb_shape *input, const pb_shape *slices, const pb_shape *indices,
                           const gs_dims *g, prop_factor_type implicit_batch, gs_add_fn add) {
  int64_t in_dim = 0, batch_pos = 0;
  for (int32_t sd = 0; sd < slices->rank && !c->b.err; sd++) {
    if (contains(g->offset, g->noffset, sd)) {
      while (in_dim < input->rank &&
             (contains(g->collapsed, g->ncollapsed, in_dim) || contains(g->in_batch, g->nin_batch, in_dim)))
        in_dim++;
      if (!dim_ok(c, in_dim, input->rank)) return;
      int64_t isz = input->dims[in_dim], ssz = slices->dims[sd];
      if (isz == ssz) add(c, in_dim, NUL, sd, isz, PT, false);
      else if (scatter) {
        add(c, in_dim, NUL, NUL, isz, NR, false);
        add(c, NUL, NUL, sd, ssz, NR, false);
      } else if (ssz == 1) { /* sharding the operand's dimension leaves partial results */
        add(c, in_dim, NUL, NUL, isz, RED, false);
        add(c, NUL, NUL, sd, ssz, NR, false);
      } else add(c, in_dim, NUL, sd, isz, NR, true);
      in_dim++;
      continue;
    }
    int64_t idx_dim = batch_pos < g->index_vector_dim ? batch_pos : batch_pos + 1;
    if (!dim_ok(c, idx_dim, indices->rank)) return;
    int64_t in_batch = NUL;
    for (int32_t k = 0; k < g->nidx_batch; k++)
      if (g->idx_batch[k] == idx_dim) in_batch = g->in_batch[k];
    prop_factor_type t = scatter && in_batch == NUL ? implicit_batch : PT;
    add(c, in_batch, idx_dim, sd, slices->dims[sd], t, false);
    batch_pos++;
  }
  for (int32_t k = 0; k < g->ncollapsed && !c->b.err; k++) {
    int64_t cd = g->collapsed[k];
    if (!dim_ok(c, cd, input->rank)) return;
    int64_t size = input->dims[cd];
    add(c, cd, NUL, NUL, size, scatter ? PT : size == 1 ? NR : RED, false);
  }
  if (g->index_vector_dim >= 0 && g->index_vector_dim < indices->rank)
    add(c, NUL, g->index_vector_dim, NUL, indices->dims[g->index_vector_dim], NR, false);
}

static void gather_add(rc *c, int64_t input_dim, int64_t indices_dim, int64_t slices_dim, int64_t size,
                       prop_factor_type type, bool blocked) {
  pb_add(&c->b, PB_DIMS(input_dim, indices_dim), PB_DIMS(slices_dim), size, type, blocked);
}

static void r_gather(rc *c) {
  gs_dims g;
  if (c->nin != 2 || c->nout != 1 || !ranked(c, &c->in[0]) || !ranked(c, &c->in[1]) || !ranked(c, &c->out[0])) {
    if (!c->b.err) pb_fail(&c->b, "gather takes an operand and start indices and gives one result");
    return;
  }
  if (!read_gs_dims(c, "dimension_numbers", "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                    "start_indices_batching_dims", &g)) {
    pb_fail(&c->b, "malformed gather dimension numbers");
    return;
  }
  gather_scatter(c, false, &c->in[0], &c->out[0], &c->in[1], &g, PT, gather_add);
}

static void scatter_add(rc *c, int64_t input_dim, int64_t indices_dim, int64_t slices_dim, int64_t size,
                        prop_factor_type type, bool blocked) {
  uint32_t n = c->nout;
  int64_t *od = null_dims(c, c->nin), *rd = null_dims(c, n);
  for (uint32_t i = 0; i < n; i++) od[i] = input_dim, od[n + 1 + i] = slices_dim, rd[i] = input_dim;
  od[n] = indices_dim;
  pb_add(&c->b, od, c->nin, rd, n, size, type, blocked);
}

/* Shardy's getCommonSupportedReductionOp: the update computation combines each input with its update
 * by one op kind (add, multiply, maximum, minimum; and/or on i1) over the matching block arguments. */
static bool scatter_reduces(const ir_op *op, uint32_t n) {
  if (op->nregions < 1 || ir_op_regions(op)[0]->nblocks < 1) return false;
  const ir_block *blk = ir_op_regions(op)[0]->blocks[0];
  if (blk->nargs != 2 * n || blk->nops == 0) return false;
  const ir_op *ret = blk->ops[blk->nops - 1];
  if (!named(ret, "stablehlo.return") || ret->noperands != n) return false;
  const ir_op *first = NULL;
  char buf[96];
  for (uint32_t i = 0; i < n; i++) {
    const ir_value *v = ret->operands[i];
    const ir_op *d = v ? ir_value_def(v) : NULL;
    if (!d || d->noperands != 2) return false;
    ir_span name = prop_stablehlo_name(d, buf, sizeof buf);
    ir_span ty = ir_span_trim(ir_value_type(v));
    bool i1 = ir_span_eq(ty, "tensor<i1>") || (ir_span_starts(ty, "tensor<") && span_has(ty, "xi1>"));
    bool logical = i1 && (ir_span_eq(name, "stablehlo.and") || ir_span_eq(name, "stablehlo.or"));
    if (!logical && !ir_span_eq(name, "stablehlo.add") && !ir_span_eq(name, "stablehlo.multiply") &&
        !ir_span_eq(name, "stablehlo.maximum") && !ir_span_eq(name, "stablehlo.minimum"))
      return false;
    if (first && !(ir_op_name(first).n == ir_op_name(d).n && memcmp(ir_op_name(first).p, ir_op_name(d).p, ir_op_name(d).n) == 0)) return false;
    first = d;
    const ir_value *x = d->operands[0], *y = d->operands[1];
#define IS_ARG(val, k) ((val) && ir_value_block((val)) == blk && !ir_value_def((val)) && (val)->index == (k))
    if (!((IS_ARG(x, i) && IS_ARG(y, i + n)) || (IS_ARG(x, i + n) && IS_ARG(y, i)))) return false;
#undef IS_ARG
  }
  return true;
}

static void r_scatter(rc *c) {
  gs_dims g;
  uint32_t n = c->nout;
  if (n == 0 || c->nin != 2 * n + 1 || !ranked(c, &c->in[0]) || !ranked(c, &c->in[n]) || !ranked(c, &c->in[n + 1])) {
    if (!c->b.err) pb_fail(&c->b, "scatter takes N inputs, indices and N updates and gives N results");
    return;
  }
  if (!read_gs_dims(c, "scatter_dimension_numbers", "update_window_dims", "inserted_window_dims",
                    "input_batching_dims", "scatter_indices_batching_dims", &g)) {
    pb_fail(&c->b, "malformed scatter dimension numbers");
    return;
  }
  prop_factor_type implicit = scatter_reduces(c->op, n) ? RED : NR;
  gather_scatter(c, true, &c->in[0], &c->in[n + 1], &c->in[n], &g, implicit, scatter_add);
}

/* ---- reshape ---- */

static bool element_count(const pb_shape *s, int64_t *out) {
  int64_t n = 1;
  for (int32_t d = 0; d < s->rank; d++) {
    if (s->dims[d] < 0) return false;
    if (s->dims[d] == 0) {
      *out = 0;
      return true; /* checked before any overflow could matter: zero elements */
    }
    if (n > INT64_MAX / s->dims[d]) return false;
    n *= s->dims[d];
  }
  *out = n;
  return true;
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* Shardy's choice of the next factor once input and output factors diverged: one that makes them
 * converge if it divides, else one that keeps their common divisor for the next step. */
static int64_t diverged_factor(int64_t next, int64_t smaller, int64_t larger, int64_t g) {
  if (larger % smaller == 0 && next % (larger / smaller) == 0) return larger / smaller;
  return next > g ? next / g : next;
}

/* Splits input and output dimensions into common factors where their sizes share divisors, so that
 * merged and split dimensions become compound factors (`[ij]`). */
static void r_reshape(rc *c) {
  int64_t ni, no;
  if (!need_counts(c, 1, 1) || !ranked(c, &c->in[0]) || !ranked(c, &c->out[0])) return;
  const pb_shape *in = &c->in[0], *out = &c->out[0];
  bool zero_in = element_count(in, &ni) && ni == 0;
  if (zero_in) {
    c->none = true; /* zero elements: nothing to propagate (Shardy gives no rule) */
    return;
  }
  if (!element_count(in, &ni) || !element_count(out, &no) || ni != no) {
    pb_fail(&c->b, "reshape of a dynamic shape, or element counts differ");
    return;
  }
  int64_t id = 0, od = 0, pdi = 1, pdo = 1, pfi = 1, pfo = 1;
  uint64_t budget = 130u * (uint64_t)(in->rank + out->rank) + 8; /* each dimension takes < 64 factors */
  while ((id < in->rank || od < out->rank) && !c->b.err) {
    if (budget-- == 0) {
      pb_fail(&c->b, "reshape factorization did not converge");
      return;
    }
    if (id < in->rank && in->dims[id] == 1) {
      pb_add1(&c->b, id++, NUL, 1, PT, false);
      continue;
    }
    if (od < out->rank && out->dims[od] == 1) {
      pb_add1(&c->b, NUL, od++, 1, PT, false);
      continue;
    }
    if (id < in->rank && pdi == pfi) pdi *= in->dims[id];
    if (od < out->rank && pdo == pfo) pdo *= out->dims[od];
    int64_t next_in = pdi / pfi, next_out = pdo / pfo, g = gcd64(next_in, next_out);
    if (pfi == pfo) {
      if (g > 1) {
        pb_add1(&c->b, id, od, g, PT, false);
        pfi *= g, pfo *= g;
      } else {
        pb_add1(&c->b, id, NUL, next_in, PT, false);
        pfi *= next_in;
        pb_add1(&c->b, NUL, od, next_out, PT, false);
        pfo *= next_out;
      }
    } else if (pfi < pfo) {
      next_in = diverged_factor(next_in, pfi, pfo, g);
      pb_add1(&c->b, id, NUL, next_in, PT, false);
      pfi *= next_in;
    } else {
      next_out = diverged_factor(next_out, pfo, pfi, g);
      pb_add1(&c->b, NUL, od, next_out, PT, false);
      pfo *= next_out;
    }
    if (id < in->rank && pdi == pfi) id++;
    if (od < out->rank && pdo == pfo) od++;
  }
}
