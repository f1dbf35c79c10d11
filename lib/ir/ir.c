/* ir.c — IR helpers shared by the front ends and the rules: spans, line map, accessors, walks,
 * tensor types and debug-location resolution. */
#include "ir/ir.h"
#include "util/hash.h"
#include "util/hashset.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

ir_span ir_span_trim(ir_span s) {
  while (s.n && isspace((unsigned char)s.p[0])) s.p++, s.n--;
  while (s.n && isspace((unsigned char)s.p[s.n - 1])) s.n--;
  return s;
}

char *ir_span_dup(sc_arena *a, ir_span s) { return ar_strndup(a, s.p ? s.p : "", s.n); }

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char *ir_span_unquote(sc_arena *a, ir_span s) {
  if (s.n < 2 || s.p[0] != '"' || s.p[s.n - 1] != '"') return ir_span_dup(a, s);
  char *out = ar_alloc(a, s.n);
  size_t o = 0;
  for (uint32_t i = 1; i + 1 < s.n; i++) {
    char c = s.p[i];
    if (c == '\\' && i + 2 < s.n) {
      char d = s.p[i + 1];
      if (d == 'n') c = '\n', i++;
      else if (d == 't') c = '\t', i++;
      else if (d == '"' || d == '\\') c = d, i++;
      else if (i + 3 < s.n && hexval(d) >= 0 && hexval(s.p[i + 2]) >= 0) {
        c = (char)(hexval(d) * 16 + hexval(s.p[i + 2]));
        i += 2;
      }
    }
    out[o++] = c;
  }
  out[o] = '\0';
  return out;
}

const ir_attr *ir_attrs_find(const ir_attrs *attrs, const char *name) {
  for (uint32_t i = 0; i < attrs->n; i++)
    if (ir_span_eq(attrs->v[i].name, name)) return &attrs->v[i];
  return NULL;
}

/* Samples of a line [line_start, stop) past the last one (at *last), one every IR_LINE_SAMPLE_BYTES. */
static void sample_within(ir_line_sample *s, uint32_t *n, uint32_t *last, uint32_t stop, uint32_t line,
                          uint32_t line_start) {
  while (stop - *last > IR_LINE_SAMPLE_BYTES) {
    *last += IR_LINE_SAMPLE_BYTES;
    s[(*n)++] = (ir_line_sample){*last, line, line_start};
  }
}

ir_linemap ir_linemap_build(sc_arena *a, const char *buf, size_t len) {
  uint32_t nlines = 1;
  for (const char *p = buf, *end = buf + len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) nlines++;
  size_t cap = nlines / IR_LINE_SAMPLE_LINES + len / IR_LINE_SAMPLE_BYTES + 2;
  ir_line_sample *s = ar_calloc(a, cap, sizeof *s);
  ir_linemap m = {buf, (uint32_t)len, s, 0, nlines};
  if (!s) return m;
  uint32_t n = 0, last = 0, line = 1, line_start = 0, since = 0;
  s[n++] = (ir_line_sample){0, 1, 0};
  for (const char *p = buf, *end = buf + len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
    uint32_t next = (uint32_t)(p - buf + 1);
    sample_within(s, &n, &last, next, line, line_start);
    line++, line_start = next;
    if (++since >= IR_LINE_SAMPLE_LINES || next - last >= IR_LINE_SAMPLE_BYTES) {
      s[n++] = (ir_line_sample){next, line, next};
      last = next, since = 0;
    }
  }
  sample_within(s, &n, &last, (uint32_t)len, line, line_start);
  m.nsamples = n;
  return m;
}

ir_pos ir_linemap_pos(const ir_linemap *m, uint32_t offset) {
  if (offset > m->len) offset = m->len;
  uint32_t lo = 0, hi = m->nsamples;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->samples[mid].offset <= offset) lo = mid;
    else hi = mid;
  }
  const ir_line_sample *s = &m->samples[lo];
  uint32_t line = s->line, line_start = s->line_start;
  for (const char *p = m->buf + s->offset, *end = m->buf + offset; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
    line++, line_start = (uint32_t)(p - m->buf + 1);
  ir_pos pos = {offset, line, offset - line_start + 1};
  return pos;
}

const ir_attr *ir_op_attr(const ir_op *op, const char *name) { return ir_attrs_find(ir_op_attrs(op), name); }

bool ir_op_is(const ir_op *op, const char *name) { return ir_span_eq(ir_op_name(op), name); }

/* The op names the rules distinguish, with their kinds. Matched by length first (one compare for
 * most names), once per op. */
typedef struct {
  const char *name;
  uint8_t len, code;
} named_code;
#define K(lit, code) {lit, sizeof lit - 1, code}
static const named_code k_op_kinds[] = {
    K("builtin.module", SC_OP_MODULE),
    K("func.func", SC_OP_FUNC),
    K("func", SC_OP_FUNC),
    K("func.call", SC_OP_CALL),
    K("call", SC_OP_CALL),
    K("func.return", SC_OP_RETURN),
    K("return", SC_OP_RETURN),
    K("stablehlo.custom_call", SC_OP_CUSTOM_CALL),
    K("mhlo.custom_call", SC_OP_CUSTOM_CALL),
    K("custom-call", SC_OP_CUSTOM_CALL),
    K("stablehlo.send", SC_OP_SEND),
    K("mhlo.send", SC_OP_MHLO_SEND),
    K("send", SC_OP_SEND),
    K("stablehlo.recv", SC_OP_RECV),
    K("mhlo.recv", SC_OP_MHLO_RECV),
    K("recv", SC_OP_RECV),
    K("stablehlo.while", SC_OP_WHILE),
    K("stablehlo.case", SC_OP_CASE),
    K("stablehlo.if", SC_OP_IF),
    K("while", SC_OP_HLO_WHILE),
    K("conditional", SC_OP_HLO_CONDITIONAL),
    K("all-reduce", SC_OP_XLA_COLLECTIVE),
    K("all-gather", SC_OP_XLA_COLLECTIVE),
    K("reduce-scatter", SC_OP_XLA_COLLECTIVE),
    K("all-to-all", SC_OP_XLA_COLLECTIVE),
    K("stablehlo.all_reduce", SC_OP_XLA_COLLECTIVE),
    K("stablehlo.all_gather", SC_OP_XLA_COLLECTIVE),
    K("stablehlo.reduce_scatter", SC_OP_XLA_COLLECTIVE),
    K("stablehlo.all_to_all", SC_OP_XLA_COLLECTIVE),
    K("sdy.mesh", SC_OP_SDY_MESH),
    K("sdy.manual_computation", SC_OP_SDY_MANUAL_COMPUTATION),
    K("sdy.named_computation", SC_OP_SDY_NAMED_COMPUTATION),
    K("sdy.sharding_constraint", SC_OP_SDY_SHARDING_CONSTRAINT),
    K("sdy.reshard", SC_OP_SDY_RESHARD),
    K("sdy.return", SC_OP_SDY_RETURN),
    K("sdy.data_flow_edge", SC_OP_SDY_DATA_FLOW_EDGE),
    K("sdy.func_data_flow_edge", SC_OP_SDY_FUNC_DATA_FLOW_EDGE),
    K("sdy.constant", SC_OP_SDY_CONSTANT),
    K("sdy.propagation_barrier", SC_OP_SDY_PROPAGATION_BARRIER),
    K("sdy.all_gather", SC_OP_SDY_ALL_GATHER),
    K("sdy.all_slice", SC_OP_SDY_ALL_SLICE),
    K("sdy.all_to_all", SC_OP_SDY_ALL_TO_ALL),
    K("sdy.collective_permute", SC_OP_SDY_COLLECTIVE_PERMUTE),
    K("sdy.all_reduce", SC_OP_SDY_ALL_REDUCE),
    K("sdy.reduce_scatter", SC_OP_SDY_REDUCE_SCATTER),
    K("sdy.sharded_to_unreduced", SC_OP_SDY_SHARDED_TO_UNREDUCED),
    K("sdy.replicated_to_unreduced", SC_OP_SDY_REPLICATED_TO_UNREDUCED),
};
static const named_code k_cc_targets[] = {
    K("tpu_custom_call", SC_CC_MOSAIC_TPU),
    K("__gpu$xla.gpu.triton", SC_CC_TRITON),
    K("Sharding", SC_CC_SHARDING),
    K("SPMDFullToShardShape", SC_CC_FULL_TO_SHARD),
    K("SPMDShardToFullShape", SC_CC_SHARD_TO_FULL),
    K("xla_ffi_python_cpu_callback", SC_CC_HOST_CALLBACK_CPU),
    K("xla_ffi_partitioned_python_cpu_callback", SC_CC_HOST_CALLBACK_CPU),
    K("xla_python_cpu_callback", SC_CC_HOST_CALLBACK_CPU),
    K("xla_buffer_python_cpu_callback", SC_CC_HOST_CALLBACK_CPU),
    K("xla_ffi_python_gpu_callback", SC_CC_HOST_CALLBACK_GPU),
    K("xla_ffi_partitioned_python_gpu_callback", SC_CC_HOST_CALLBACK_GPU),
    K("xla_python_gpu_callback", SC_CC_HOST_CALLBACK_GPU),
    K("xla_buffer_python_gpu_callback", SC_CC_HOST_CALLBACK_GPU),
};
#undef K

/* The code of `s` in `table`, or -1. */
static int find_code(const named_code *table, size_t n, ir_span s) {
  for (size_t i = 0; i < n; i++)
    if (table[i].len == s.n && memcmp(table[i].name, s.p, s.n) == 0) return table[i].code;
  return -1;
}

static ir_op_kind kind_of_name(ir_span n) {
  int k = find_code(k_op_kinds, sizeof k_op_kinds / sizeof *k_op_kinds, n);
  if (k >= 0) return (ir_op_kind)k;
  return ir_span_starts(n, "sdy.") ? SC_OP_SDY_OTHER : SC_OP_OTHER;
}

static ir_cc_class class_of_target(ir_span t) {
  int k = find_code(k_cc_targets, sizeof k_cc_targets / sizeof *k_cc_targets, t);
  if (k >= 0) return (ir_cc_class)k;
  if (ir_span_starts(t, "triton_kernel_call")) return SC_CC_TRITON;
  if (ir_span_starts(t, "mosaic_gpu")) return SC_CC_MOSAIC_GPU;
  return SC_CC_OTHER;
}

/* stablehlo.custom_call / HLO custom-call: the call_target_name without quotes/'@', else empty. */
static ir_span custom_call_target(const ir_op *op) {
  ir_span none = {0};
  const ir_attr *a;
  if (ir_op_name(op).n != sizeof "custom-call" - 1) { /* stablehlo.custom_call, mhlo.custom_call */
    if (ir_op_callee(op).n) return ir_op_callee(op);
    a = ir_op_attr(op, "call_target_name");
  } else {
    a = ir_op_attr(op, "custom_call_target");
  }
  if (!a) return none;
  ir_span v = ir_span_trim(a->value);
  if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"') v.p++, v.n -= 2;
  else if (v.n && v.p[0] == '@') v.p++, v.n--;
  return v;
}

static void set_kind(ir_op *op, ir_op_kind kind) {
  op->kind = (uint8_t)kind;
  op->cc = op->kind == SC_OP_CUSTOM_CALL ? (uint8_t)class_of_target(custom_call_target(op)) : SC_CC_NONE;
  op->classified = true;
}

/* A module uses few op names many times: most ops cost one memcmp in the direct-mapped cache in front
 * of the interning map. */
static uint16_t intern_name(ir_name_table *t, ir_span bare) {
  uint32_t id = 0;
  if (!hs_name_map_get(&t->ids, bare.p, (uint32_t)bare.n, &id) && t->names.n < IR_MAX_OP_NAMES) {
    SC_PUSH(t->a, t->names, bare);
    SC_PUSH(t->a, t->kinds, (uint8_t)kind_of_name(bare));
    id = (uint32_t)t->names.n;
    hs_name_map_make_room(&t->ids, t->a);
    hs_name_map_put(&t->ids, bare.p, (uint32_t)bare.n, id, NULL);
  }
  return (uint16_t)id;
}

void ir_name_table_init(ir_name_table *t, sc_arena *a) {
  memset(t, 0, sizeof *t);
  t->a = a;
  hs_name_map_init(&t->ids, a, 64);
}

void ir_op_name_intern(ir_name_table *t, ir_op *op) {
  ir_span n = ir_op_bare_name(op);
  unsigned slot = n.n ? (n.n ^ (unsigned char)n.p[n.n - 1] ^ ((unsigned char)n.p[n.n / 2] << 1)) & 15u : 0;
  if (n.n && t->id[slot] && t->name[slot].n == n.n && sc_bytes_eq(t->name[slot].p, n.p, n.n)) {
    op->name_id = t->id[slot];
    return;
  }
  op->name_id = intern_name(t, n);
  if (n.n) t->name[slot] = n, t->id[slot] = op->name_id;
}

void ir_op_finish(ir_name_table *t, ir_op *op) {
  if (!op->name_id) ir_op_name_intern(t, op);
  if (!op->classified) set_kind(op, op->name_id ? (ir_op_kind)t->kinds.v[op->name_id - 1] : kind_of_name(ir_op_name(op)));
}

void ir_module_set_names(ir_module *m, const ir_name_table *t) {
  m->op_names = t->names.v;
  m->nop_names = (uint32_t)t->names.n;
}

/* Derived, not stored: custom calls are few, and ir_op stays small for the rest. */
ir_span ir_op_custom_call_target(const ir_op *op) {
  return op->classified && op->kind == SC_OP_CUSTOM_CALL ? custom_call_target(op) : ir_span_of(NULL, 0);
}

void ir_op_classify(ir_op *op) {
  if (!op->classified) set_kind(op, kind_of_name(ir_op_name(op)));
}

void ir_module_finalize(sc_arena *a, ir_module *m) {
  if (m->finalized) return; /* a front end finalized it: nothing changed since */
  ir_name_table t;
  ir_name_table_init(&t, a);
  for (uint32_t i = 0; i < m->nops; i++) {
    ir_op *op = m->ops[i];
    op->name_id = 0; /* ids are this table's */
    ir_op_finish(&t, op);
    op->subtree_end = i + 1;
  }
  ir_module_set_names(m, &t);
  /* Preorder: an op's descendants follow it, so one backward pass carries each subtree's end up. */
  for (uint32_t i = m->nops; i-- > 0;) {
    ir_op *op = m->ops[i], *up = op->parent_op;
    if (up && up->subtree_end < op->subtree_end) up->subtree_end = op->subtree_end;
  }
  m->finalized = true;
}

bool ir_module_may_name(const ir_module *m, const char *name) {
  if (!m->finalized || m->nop_names >= IR_MAX_OP_NAMES) return true; /* not every name is known */
  for (uint32_t i = 0; i < m->nop_names; i++)
    if (ir_span_eq(m->op_names[i], name)) return true;
  return false;
}

ir_op *ir_module_func(const ir_module *m, ir_span name) {
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (ir_op_sym_name(m->funcs[i]).n == name.n && memcmp(ir_op_sym_name(m->funcs[i]).p, name.p, name.n) == 0)
      return m->funcs[i];
  return NULL;
}

void ir_op_walk(ir_op *root, ir_op_visit_fn fn, void *user) {
  /* Iterative preorder with an explicit stack so hostile nesting cannot overflow the C stack. */
  typedef struct {
    ir_op *op;
    uint32_t region, block, index;
  } frame;
  if (!root || !fn(root, user)) return;
  size_t cap = 64, n = 0;
  frame *stack = malloc(cap * sizeof *stack);
  if (!stack) return;
  stack[n++] = (frame){root, 0, 0, 0};
  while (n) {
    frame *f = &stack[n - 1];
    ir_op *op = f->op;
    if (f->region >= op->nregions) {
      n--;
      continue;
    }
    ir_region *r = ir_op_regions(op)[f->region];
    if (f->block >= r->nblocks) {
      f->region++, f->block = 0, f->index = 0;
      continue;
    }
    ir_block *b = r->blocks[f->block];
    if (f->index >= b->nops) {
      f->block++, f->index = 0;
      continue;
    }
    ir_op *child = b->ops[f->index++];
    if (fn(child, user) && child->nregions) {
      if (n == cap) {
        frame *grown = realloc(stack, 2 * cap * sizeof *stack);
        if (!grown) break;
        stack = grown, cap *= 2;
      }
      stack[n++] = (frame){child, 0, 0, 0};
    }
  }
  free(stack);
}

/* "tensor<8x?x16xf32>", "tensor<f32>", "tensor<*xf32>", "tensor<2x4xf32, #enc>", HLO "f32[8,16]{1,0}". */
bool ir_parse_tensor_type(sc_arena *a, ir_span type, ir_tensor_type *out) {
  ir_span t = ir_span_trim(type);
  memset(out, 0, sizeof *out);
  if (!t.n) return false; /* unknown type (no text) */
  if (ir_span_starts(t, "tensor<")) {
    const char *p = t.p + 7, *end = t.p + t.n;
    if (end <= p || end[-1] != '>') return false;
    end--;
    if (p < end && *p == '*') {
      out->rank = -1;
      out->element = ir_span_of(p + 2 <= end ? p + 2 : end, (uint32_t)(end - (p + 2 <= end ? p + 2 : end)));
      return true;
    }
    int64_t dims[64];
    int32_t rank = 0;
    for (;;) {
      const char *q = p;
      int64_t d;
      if (q < end && *q == '?') d = -1, q++;
      else if (q < end && isdigit((unsigned char)*q)) {
        d = 0;
        while (q < end && isdigit((unsigned char)*q)) {
          if (d < INT64_MAX / 10) d = d * 10 + (*q - '0');
          q++;
        }
      } else break;
      if (q >= end || *q != 'x') break; /* not a dimension: it is the element type (e.g. "i32") */
      if (rank == 64) return false;
      dims[rank++] = d;
      p = q + 1;
    }
    const char *el = p, *el_end = p;
    int depth = 0;
    while (el_end < end && !(depth == 0 && *el_end == ',')) {
      if (*el_end == '<') depth++;
      else if (*el_end == '>') depth--;
      el_end++;
    }
    out->rank = rank;
    out->dims = ar_calloc(a, rank ? (size_t)rank : 1, sizeof *out->dims);
    memcpy(out->dims, dims, (size_t)rank * sizeof *dims);
    out->element = ir_span_trim(ir_span_of(el, (uint32_t)(el_end - el)));
    return true;
  }
  /* HLO shape: elem[d0,d1]{layout} */
  const char *lb = memchr(t.p, '[', t.n);
  if (!lb || lb == t.p) return false;
  const char *el_end = lb;
  while (el_end > t.p && el_end[-1] == ' ') el_end--; /* XLA reads `f32 [4]` as `f32[4]` */
  if (el_end == t.p) return false;
  for (const char *q = t.p; q < el_end; q++)
    if (!isalnum((unsigned char)*q)) return false;
  const char *p = lb + 1, *end = t.p + t.n;
  int64_t dims[64];
  int32_t rank = 0;
  while (p < end && *p != ']') {
    while (p < end && (*p == ' ' || *p == '<' || *p == '=')) p++;
    int64_t d = 0;
    if (p < end && *p == '?') d = -1, p++;
    else {
      if (p >= end || !isdigit((unsigned char)*p)) return false;
      while (p < end && isdigit((unsigned char)*p)) {
        if (d < INT64_MAX / 10) d = d * 10 + (*p - '0');
        p++;
      }
    }
    if (rank == 64) return false;
    dims[rank++] = d;
    while (p < end && *p == ' ') p++;
    if (p < end && *p == ',') p++;
  }
  if (p >= end) return false;
  out->rank = rank;
  out->dims = ar_calloc(a, rank ? (size_t)rank : 1, sizeof *out->dims);
  memcpy(out->dims, dims, (size_t)rank * sizeof *dims);
  out->element = ir_span_of(t.p, (uint32_t)(el_end - t.p));
  return true;
}


/* ---- debug locations ---- */

static uint32_t hash_name(const ir_module *m, const char *p, uint32_t n) {
  return (uint32_t)hash_bytes(p, n, m->alias_seed);
}

void ir_module_index_aliases(sc_arena *a, ir_module *m) {
  uint32_t n = 16;
  while (n < m->naliases * 2 + 1) n *= 2;
  m->alias_slots = ar_calloc(a, n, sizeof *m->alias_slots);
  m->nalias_slots = n;
  m->alias_seed = ar_hash_seed(a);
  m->alias_src = ar_calloc(a, m->naliases ? m->naliases : 1, sizeof *m->alias_src);
  m->alias_state = ar_calloc(a, m->naliases ? m->naliases : 1, 1);
  for (uint32_t i = 0; i < m->naliases; i++) {
    ir_span name = m->aliases[i].name;
    uint32_t h = hash_name(m, name.p, name.n) & (n - 1);
    bool duplicate = false; /* a later definition is shadowed by the first: not indexed, so many
                               definitions of one name probe no longer chain */
    for (uint32_t k; !duplicate && (k = m->alias_slots[h]) != 0; h = (h + 1) & (n - 1)) {
      ir_span other = m->aliases[k - 1].name;
      duplicate = other.n == name.n && memcmp(other.p, name.p, name.n) == 0;
    }
    if (!duplicate) m->alias_slots[h] = i + 1;
  }
}

/* Index of the alias named `name`, or -1. */
static long alias_find(const ir_module *m, ir_span name) {
  if (m->nalias_slots) {
    uint32_t h = hash_name(m, name.p, name.n) & (m->nalias_slots - 1);
    for (uint32_t k; (k = m->alias_slots[h]) != 0; h = (h + 1) & (m->nalias_slots - 1)) {
      const ir_alias *al = &m->aliases[k - 1];
      if (al->name.n == name.n && memcmp(al->name.p, name.p, name.n) == 0) return (long)k - 1;
    }
    return -1;
  }
  for (uint32_t i = 0; i < m->naliases; i++)
    if (m->aliases[i].name.n == name.n && memcmp(m->aliases[i].name.p, name.p, name.n) == 0) return i;
  return -1;
}

ir_span ir_alias_resolve(const ir_module *m, ir_span t, char sigil) {
  for (int depth = 0; depth < IR_ALIAS_DEPTH && m->naliases && t.n > 1 && t.p[0] == sigil; depth++) {
    long k = alias_find(m, t);
    if (k < 0 || !m->aliases[k].value.n) break;
    t = m->aliases[k].value;
  }
  return t;
}

static void resolve_types(const ir_module *m, ir_span *types, uint32_t n) {
  for (uint32_t i = 0; types && i < n; i++) types[i] = ir_alias_resolve(m, types[i], '!');
}

void ir_module_resolve_type_aliases(ir_module *m) {
  bool any = false;
  for (uint32_t i = 0; i < m->naliases && !any; i++) any = m->aliases[i].name.p[0] == '!';
  if (!any) return;
  for (uint32_t i = 0; i < m->nops; i++) {
    ir_op *op = m->ops[i];
    resolve_types(m, ir_op_operand_types(op), ir_op_noperand_types(op));
    resolve_types(m, ir_op_result_types(op), ir_op_nresult_types(op));
    if (ir_op_decl_get(op)) resolve_types(m, ir_op_func_result_types(op), ir_op_nresult_attrs(op));
    for (uint32_t g = 0; g < op->nregions; g++)
      for (uint32_t b = 0; b < ir_op_regions(op)[g]->nblocks; b++) {
        ir_block *blk = ir_op_regions(op)[g]->blocks[b];
        resolve_types(m, blk->arg_types, blk->arg_types ? blk->nargs : 0);
      }
  }
}

bool ir_alias_value(const ir_module *m, ir_span name, ir_span *value) {
  long k = m ? alias_find(m, name) : -1;
  if (k < 0) return false;
  *value = m->aliases[k].value;
  return true;
}


/* memchr to each '"'; it closes the string unless an odd run of backslashes precedes it (the
 * forward scan's "backslash skips the next byte", decided per candidate). Each run of backslashes is
 * counted once, so this stays linear, and long kernel payloads go at memchr speed. */
const char *ir_skip_string(const char *p, const char *end) {
  const char *body = p + 1;
  for (const char *q = body; q < end;) {
    q = memchr(q, '"', (size_t)(end - q));
    if (!q) return end;
    size_t slashes = 0;
    while (q - slashes > body && q[-1 - (ptrdiff_t)slashes] == '\\') slashes++;
    if (slashes % 2 == 0) return q + 1;
    q++;
  }
  return end;
}

const char *ir_match_paren(const char *p, const char *end) {
  int depth = 0;
  while (p < end) {
    if (*p == '"') {
      p = ir_skip_string(p, end);
      continue;
    }
    if (*p == '(') depth++;
    else if (*p == ')' && --depth == 0) return p;
    p++;
  }
  return end;
}

static uint32_t parse_u32(const char **pp, const char *end) {
  const char *p = *pp;
  uint32_t v = 0;
  while (p < end && isdigit((unsigned char)*p)) {
    if (v < 100000000u) v = v * 10 + (uint32_t)(*p - '0');
    p++;
  }
  *pp = p;
  return v;
}

/* Resolves the body of a location (without "loc(" ")"): `#alias`, "file":l:c, callsite(a at b),
 * "name"(inner), fused[...]. Depth-bounded against alias cycles. */
static ir_srcloc resolve_body(const ir_module *m, const char *p, const char *end, int budget) {
  ir_srcloc none = {0};
  p = ir_skip_space(p, end);
  if (budget <= 0 || p >= end) return none;
  if (*p == '#') {
    const char *q = p + 1;
    while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '.' || *q == '$' || *q == '-')) q++;
    long k = alias_find(m, ir_span_of(p, (uint32_t)(q - p)));
    if (k < 0) return none;
    /* Memoized: each alias is resolved once per module (the state arrays are the module's). */
    if (m->alias_state && m->alias_state[k] == 2) return m->alias_src[k];
    if (m->alias_state && m->alias_state[k] == 1) return none; /* a cycle */
    if (m->alias_state) m->alias_state[k] = 1;
    ir_span v = m->aliases[k].value;
    ir_srcloc r = none;
    const char *vp = ir_skip_space(v.p, v.p + v.n), *ve = v.p + v.n;
    if (ve - vp >= 4 && memcmp(vp, "loc(", 4) == 0) {
      const char *close = ir_match_paren(vp + 3, ve);
      r = resolve_body(m, vp + 4, close, budget - 1);
    }
    if (m->alias_state) {
      m->alias_state[k] = 2;
      m->alias_src[k] = r;
    }
    return r;
  }
  if (end - p >= 9 && memcmp(p, "callsite(", 9) == 0) {
    /* callsite(callee at caller): the callee is the innermost frame, the user's line. */
    const char *close = ir_match_paren(p + 8, end);
    const char *q = p + 9;
    int depth = 0;
    const char *at = NULL;
    while (q + 4 <= close) {
      if (*q == '"') {
        q = ir_skip_string(q, close);
        continue;
      }
      if (*q == '(') depth++;
      else if (*q == ')') depth--;
      else if (depth == 0 && q[0] == ' ' && q[1] == 'a' && q[2] == 't' && q[3] == ' ') {
        at = q;
        break;
      }
      q++;
    }
    ir_srcloc r = resolve_body(m, p + 9, at ? at : close, budget - 1);
    if (!r.known && at) r = resolve_body(m, at + 4, close, budget - 1);
    return r;
  }
  if (end - p >= 5 && memcmp(p, "fused", 5) == 0) {
    const char *q = memchr(p, '[', (size_t)(end - p));
    if (!q) return none;
    q++;
    /* First element that resolves wins. */
    while (q < end) {
      q = ir_skip_space(q, end);
      const char *e = q;
      int depth = 0;
      while (e < end) {
        if (*e == '"') {
          e = ir_skip_string(e, end);
          continue;
        }
        if (*e == '(' || *e == '[' || *e == '<') depth++;
        else if (*e == ')' || *e == ']' || *e == '>') {
          if (depth == 0) break;
          depth--;
        } else if (*e == ',' && depth == 0) break;
        e++;
      }
      ir_srcloc r = resolve_body(m, q, e, budget - 1);
      if (r.known) return r;
      if (e >= end || *e == ']') break;
      q = e + 1;
    }
    return none;
  }
  if (*p == '"') {
    const char *q = ir_skip_string(p, end);
    ir_span name = ir_span_of(p + 1, (uint32_t)(q - p - 2 > 0 ? q - p - 2 : 0));
    q = ir_skip_space(q, end);
    if (q < end && *q == ':') {
      ir_srcloc r = {true, name, 0, 0};
      q++;
      r.line = parse_u32(&q, end);
      if (q < end && *q == ':') {
        q++;
        r.col = parse_u32(&q, end);
      }
      return r;
    }
    if (q < end && *q == '(') { /* named location "name"(inner) */
      const char *close = ir_match_paren(q, end);
      return resolve_body(m, q + 1, close, budget - 1);
    }
    return none;
  }
  return none;
}

ir_srcloc ir_resolve_loc(const ir_module *m, ir_span loc) {
  ir_srcloc none = {0};
  ir_span t = ir_span_trim(loc);
  if (t.n < 5 || memcmp(t.p, "loc(", 4) != 0) return none;
  const char *end = t.p + t.n;
  const char *close = ir_match_paren(t.p + 3, end);
  return resolve_body(m, t.p + 4, close, 64);
}

ir_srcloc ir_op_srcloc(const ir_module *m, const ir_op *op) {
  ir_srcloc own = ir_op_src(op);
  if (own.known || !op->loc_offset || op->loc_offset >= op->end || !m) return own;
  return ir_resolve_loc(m, ir_span_of(m->buf + op->loc_offset, op->end - op->loc_offset));
}

/* ---- positions in modules without lines ---- */

static const ir_op *op_at_offset(const ir_module *m, uint32_t offset) {
  uint32_t lo = 0, hi = m->nops;
  while (hi > lo) { /* first op starting after offset */
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->ops[mid]->pos.offset <= offset) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NULL;
  const ir_op *op = m->ops[lo - 1];
  while (op && op->end <= offset && op->parent_op) op = op->parent_op;
  return op;
}

uint32_t ir_op_depth(const ir_op *op) {
  uint32_t depth = 0;
  for (const ir_op *p = op->parent_op; p; p = p->parent_op) depth++;
  return depth;
}

void ir_block_set_arg_attrs(sc_arena *a, ir_block *b, uint32_t index, const ir_attrs *attrs) {
  if (index >= b->nargs) return;
  if (!b->arg_attrs) b->arg_attrs = ar_calloc(a, b->nargs, sizeof *b->arg_attrs);
  b->arg_attrs[index] = attrs;
}

ir_op_types *ir_op_types_share(sc_arena *a, ir_op_types_cache *c, ir_span *operand_types, uint32_t noperand_types,
                               ir_span *result_types, uint32_t nresult_types) {
  if (!noperand_types && !nresult_types) return NULL;
  for (uint32_t k = 0; k < 4; k++) {
    ir_op_types *t = c->recent[k];
    if (t && t->operand_types == operand_types && t->noperand_types == noperand_types &&
        t->result_types == result_types && t->nresult_types == nresult_types)
      return t;
  }
  ir_op_types *t = ar_alloc(a, sizeof *t);
  *t = (ir_op_types){operand_types, result_types, noperand_types, nresult_types};
  c->recent[c->next++ & 3] = t;
  return t;
}

void ir_block_set_arg_type(sc_arena *a, ir_block *b, uint32_t index, ir_span type) {
  if (index >= b->nargs || !type.n) return;
  if (!b->arg_types) b->arg_types = ar_calloc(a, b->nargs, sizeof *b->arg_types);
  b->arg_types[index] = type;
}

const ir_block *ir_op_block(const ir_op *op, uint32_t *region, uint32_t *block, uint32_t *index) {
  const ir_op *p = op->parent_op;
  for (uint32_t r = 0; p && r < p->nregions; r++)
    for (uint32_t k = 0; k < ir_op_regions(p)[r]->nblocks; k++) {
      const ir_block *b = ir_op_regions(p)[r]->blocks[k];
      /* a block's ops are its parent's children in preorder: ids rise along b->ops */
      if (!b->nops || op->id < b->ops[0]->id || op->id > b->ops[b->nops - 1]->id) continue;
      uint32_t lo = 0, hi = b->nops - 1;
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->ops[mid]->id < op->id) lo = mid + 1;
        else hi = mid;
      }
      if (b->ops[lo] != op) continue;
      if (region) *region = r;
      if (block) *block = k;
      if (index) *index = lo;
      return b;
    }
  return NULL;
}

static uint32_t index_in_parent(const ir_op *op, uint32_t *region, uint32_t *block) {
  uint32_t index = 0;
  *region = *block = 0;
  ir_op_block(op, region, block, &index);
  return index;
}

static const char *op_path(sc_arena *a, const ir_op *op) {
  const ir_op *chain[64];
  uint32_t n = 0;
  const ir_op *fn = ir_op_func(op);
  for (const ir_op *o = op; o && o->parent_op && o != fn && n < 64; o = o->parent_op) chain[n++] = o;
  char *path = fn ? ir_span_dup(a, ir_op_sym_name(fn)) : ar_strdup(a, "module");
  for (uint32_t k = n; k-- > 0;) {
    uint32_t r, b, i = index_in_parent(chain[k], &r, &b);
    path = r || b ? ar_printf(a, "%s/r%ub%u:%u", path, r, b, i) : ar_printf(a, "%s/%u", path, i);
  }
  return path;
}

void ir_locate_without_lines(sc_arena *a, const ir_module *m, sc_diag *diags, size_t n) {
  for (size_t i = 0; i < n; i++) {
    sc_diag *d = &diags[i];
    d->line = d->col = d->end_line = d->end_col = 0;
    const ir_op *op = op_at_offset(m, d->offset);
    if (op && op != m->module && (ir_op_func(op) != op || ir_op_sym_name(op).n)) d->op_path = op_path(a, op);
    else if (op) d->op_path = "module";
    size_t kept = 0;
    for (size_t k = 0; k < d->nfixes; k++) {
      sc_fix f = d->fixes[k];
      if (f.nedits) {
        if (!f.snippet) continue;
        f.edits = NULL, f.nedits = 0, f.machine = false;
      }
      d->fixes[kept++] = f;
    }
    d->nfixes = kept;
  }
}
