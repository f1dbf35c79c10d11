/* cost.c — per-device bytes of the entry function's arguments and results, donations, and a lower
 * bound on peak live bytes (docs/cost.md). */
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"
#include "propagate/reshard.h"
#include "util/strbuf.h"

/* ---- sizes -------------------------------------------------------------------------------------- */

int64_t cost_mul_sat(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

int64_t cost_add_sat(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (a < 0 ? INT64_MIN : INT64_MAX) : r;
}

#define mul_sat cost_mul_sat
#define add_sat cost_add_sat

/* The digits after `p` (at most 4), or 0. */
static uint32_t digits(const char *p, const char *end) {
  uint32_t v = 0, n = 0;
  for (; p < end && *p >= '0' && *p <= '9' && n < 4; p++, n++) v = v * 10 + (uint32_t)(*p - '0');
  return p == end || !(*p >= '0' && *p <= '9') ? v : 0;
}

/* The digits starting at p, never past end (attribute text is not NUL-terminated: in the daemon
 * it ends where the request's bytes do). */
static size_t digit_run(const char *p, const char *end) {
  const char *q = p;
  while (q < end && *q >= '0' && *q <= '9') q++;
  return (size_t)(q - p);
}

uint32_t cost_element_bits(ir_span e) {
  e = ir_span_trim(e);
  if (ir_span_starts(e, "complex<") && e.n > 9 && e.p[e.n - 1] == '>')
    return 2 * cost_element_bits(ir_span_of(e.p + 8, e.n - 9));
  if (ir_span_eq(e, "pred") || ir_span_eq(e, "i1")) return 8; /* a byte per element, as XLA stores it */
  if (ir_span_eq(e, "c64")) return 64;
  if (ir_span_eq(e, "c128")) return 128;
  if (ir_span_eq(e, "index")) return 64;
  const char *p = e.p, *end = e.p + e.n;
  /* Float types name their width then the format (f8E4M3FN, f4E2M1FN, f8e5m2): read the width only. */
  if (e.n >= 2 && (p[0] == 'f' || p[0] == 'F') && p[1] >= '0' && p[1] <= '9') {
    const char *q = p + 1;
    while (q < end && *q >= '0' && *q <= '9') q++;
    return digits(p + 1, q);
  }
  static const char *const prefixes[] = {"ui", "si", "bf", "tf", "i", "s", "u"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t n = strlen(prefixes[i]);
    if (e.n > n && !memcmp(p, prefixes[i], n)) return digits(p + n, end);
  }
  return 0;
}

int64_t cost_bytes(int64_t elements, uint32_t bits) {
  if (bits == 0 || elements <= 0) return 0;
  if (bits < 8 && 8 % bits == 0) { /* packed: 2, 4 or 8 elements a byte */
    int64_t per = 8 / bits;
    return elements / per + (elements % per != 0);
  }
  return mul_sat(elements, (bits + 7) / 8);
}

const char *cost_bytes_str(sc_arena *a, int64_t b) {
  char buf[32];
  return ar_strdup(a, sb_format_bytes(buf, b));
}

/* ---- one tensor --------------------------------------------------------------------------------- */

/* Devices dimension `d` is split over under the sharding in effect (1 when unsharded or unknown). */
static int64_t dim_shards(const md_model *model, const md_sharding *w, const prop_sharding *p, uint32_t d) {
  if (p) {
    if (d >= p->rank) return 1;
    int64_t n = 1;
    for (uint32_t k = 0; k < p->dims[d].axes.n; k++) n = mul_sat(n, p->dims[d].axes.v[k].size);
    return n;
  }
  if (!w) return 1;
  if (w->kind == SC_SHARDING_NAMED) return d < w->rank ? md_dim_sharded_size(w, d, md_model_sharding_mesh(model, w)) : 1;
  if (w->kind == SC_SHARDING_TILED && d < w->tiles->ntile_dims) return w->tiles->tile_dims[d] > 0 ? w->tiles->tile_dims[d] : 1;
  return 1;
}

/* Fills the bytes of `t` (type, sharding set) from its shape. */
static void size_tensor(sc_arena *a, const md_model *model, cost_tensor_info *t) {
  ir_tensor_type tt;
  if (!ir_parse_tensor_type(a, t->type, &tt) || tt.rank < 0) return;
  uint32_t bits = cost_element_bits(tt.element);
  if (!bits) return;
  t->rank = (uint32_t)tt.rank;
  t->bits = bits;
  t->dims = tt.dims;
  t->local_dims = ar_alloc(a, (t->rank ? t->rank : 1) * sizeof *t->local_dims);
  t->shards_per_dim = ar_alloc(a, (t->rank ? t->rank : 1) * sizeof *t->shards_per_dim);
  int64_t global = 1, local = 1;
  t->shards = 1;
  for (uint32_t d = 0; d < t->rank; d++) {
    if (tt.dims[d] < 0) return; /* dynamic: unknown */
    int64_t s = dim_shards(model, t->written, t->derived, d);
    if (s < 1) s = 1;
    t->shards_per_dim[d] = s;
    t->local_dims[d] = tt.dims[d] / s + (tt.dims[d] % s != 0); /* XLA pads uneven shards to equal size */
    global = mul_sat(global, tt.dims[d]);
    local = mul_sat(local, t->local_dims[d]);
    t->shards = mul_sat(t->shards, s);
  }
  t->known = true;
  t->global_bytes = cost_bytes(global, bits);
  bool unknown = !t->derived && (!t->written || t->written->kind == SC_SHARDING_UNKNOWN);
  if (unknown && t->unknown_split > 1) /* the partitioner chooses: at least an even split */
    local = global / t->unknown_split + (global % t->unknown_split != 0);
  t->bytes_per_device = cost_bytes(local, bits);
  int64_t all = mul_sat(t->bytes_per_device, t->shards);
  t->padding_bytes = all > t->global_bytes ? all - t->global_bytes : 0;
}

static const char *spec_of(sc_arena *a, const md_model *model, const md_sharding *w, const prop_sharding *p) {
  if (p && p->mesh && p->mesh->synthesized) p = NULL; /* "_partitions" names no axis of the user's: as written */
  if (p) return md_sharding_partition_spec(a, prop_sharding_to_model(a, p));
  if (!w) return NULL;
  const md_mesh *mesh = md_model_sharding_mesh(model, w);
  bool named = w->kind == SC_SHARDING_NAMED && !(w->mapped && (!mesh || mesh->synthesized)); /* "_partitions" is no axis */
  if (named || w->kind == SC_SHARDING_REPLICATED) return md_sharding_partition_spec(a, w);
  return ar_printf(a, "%.*s", (int)(w->text.n < 256 ? w->text.n : 256), w->text.p); /* GSPMD, as written */
}

void cost_size(sc_arena *a, const md_model *model, cost_tensor_info *t) {
  t->spec = spec_of(a, model, t->written, t->derived);
  size_tensor(a, model, t);
}

/* A tuple element's type without the index comment HLO prints before every fifth one. */
static ir_span without_comment(ir_span t) {
  if (!ir_span_starts(t, "/*")) return t;
  for (uint32_t i = 2; i + 1 < t.n; i++)
    if (t.p[i] == '*' && t.p[i + 1] == '/') return ir_span_trim(ir_span_of(t.p + i + 2, t.n - i - 2));
  return t;
}

/* Adds the leaves of one argument or result (`type` possibly a tuple) to `out`. */
typedef SC_VEC(cost_tensor_info) tensor_vec;
static void add_tensor(sc_arena *a, const md_model *model, tensor_vec *out, cost_tensor_info base, const md_sharding *w) {
  md_shape shape;
  if (md_parse_shape(a, base.type, &shape) && shape.kind == SC_SHAPE_TUPLE) {
    /* HLO tuples: one leaf per element, the tuple sharding's element each (tuples of tuples count as unknown) */
    for (uint32_t i = 0; i < shape.nelems; i++) {
      cost_tensor_info leaf = base;
      leaf.leaf = (int32_t)i;
      leaf.type = ir_span_of(NULL, 0);
      leaf.written = w && w->kind == SC_SHARDING_TUPLE ? (i < w->nelements ? w->elements[i] : NULL) : w;
      /* the element's type text: re-split the tuple text at depth-1 commas */
      const char *p = base.type.p, *end = base.type.p + base.type.n;
      while (p < end && *p != '(') p++;
      int depth = 0;
      uint32_t k = 0;
      const char *start = p + 1;
      for (; p < end; p++) {
        if (*p == '(' || *p == '[' || *p == '{') depth++;
        else if (*p == ')' || *p == ']' || *p == '}') depth--;
        if ((*p == ',' && depth == 1) || (*p == ')' && depth == 0)) {
          if (k == i) leaf.type = without_comment(ir_span_trim(ir_span_of(start, (uint32_t)(p - start))));
          k++;
          start = p + 1;
          if (depth == 0) break;
        }
      }
      leaf.spec = spec_of(a, model, leaf.written, NULL);
      size_tensor(a, model, &leaf);
      SC_PUSH(a, *out, leaf);
    }
    return;
  }
  base.written = w; /* kept beside a derived one: a GSPMD module's spec is shown as written */
  base.spec = spec_of(a, model, base.written, base.derived);
  size_tensor(a, model, &base);
  SC_PUSH(a, *out, base);
}

/* ---- donation ----------------------------------------------------------------------------------- */

/* HLO `input_output_alias={ {0}: (1, {}, may-alias), ... }`: alias[param] = output index;
 * `buffer_donor={ (0, {}), ... }`: donor[param] = true. */
static void hlo_donations(const ir_module *m, uint32_t nparams, int64_t *alias, bool *donor) {
  const ir_attr *io = ir_op_attr(m->module, "input_output_alias");
  if (io) {
    const char *p = io->value.p, *end = io->value.p + io->value.n;
    int64_t out = -1;
    for (; p < end; p++) {
      if (*p == '{' && p + 1 < end && p[1] >= '0' && p[1] <= '9') out = digits(p + 1, p + 1 + digit_run(p + 1, end));
      else if (*p == '{' && p + 1 < end && p[1] == '}') out = 0;
      else if (*p == ':' ) {
        const char *q = p + 1;
        while (q < end && (*q == ' ' || *q == '(')) q++;
        size_t n = digit_run(q, end);
        if (n) {
          uint32_t param = digits(q, q + n);
          if (param < nparams) alias[param] = out, donor[param] = true;
        }
      }
    }
  }
  const ir_attr *bd = ir_op_attr(m->module, "buffer_donor");
  if (bd)
    for (const char *p = bd->value.p, *end = bd->value.p + bd->value.n; p < end; p++)
      if (*p == '(') {
        size_t n = digit_run(p + 1, end);
        if (n && digits(p + 1, p + 1 + n) < nparams) donor[digits(p + 1, p + 1 + n)] = true;
      }
}

/* ---- the entry function ------------------------------------------------------------------------- */

static ir_op *return_op(const ir_block *b) {
  if (!b->nops) return NULL;
  for (uint32_t i = 0; i < b->nops; i++)
    if (ir_op_attr(b->ops[i], "ROOT")) return b->ops[i]; /* HLO ROOT */
  return b->ops[b->nops - 1];
}

/* Whether propagation's sharding of a value supersedes its written one `w`: when there is none, or it is a
 * named sharding (propagation keeps its axes and may fill its open dimensions). A GSPMD tile assignment
 * that names no axes, a replicated, maximal or manual one stays as written. */
static bool derivable(const md_sharding *w) { return !w || w->kind == SC_SHARDING_NAMED; }

/* A tensor of the entry's signature before its sizes: value, number, type, where it is written. */
static cost_tensor_info signature_tensor(const ir_value *v, uint32_t index, bool is_result, ir_span type, uint32_t offset,
                                            int64_t devices) {
  cost_tensor_info t = {0};
  t.value = v;
  t.index = index;
  t.leaf = -1;
  t.is_result = is_result;
  t.type = type;
  t.offset = offset;
  t.alias_output = -1;
  t.unknown_split = devices;
  return t;
}

static void collect_args(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *prop,
                         const ir_block *b, int64_t devices, tensor_vec *out) {
  bool hlo = m->format == SC_FMT_HLO;
  int64_t *alias = ar_alloc(a, (b->nargs ? b->nargs : 1) * sizeof *alias);
  bool *donor = ar_calloc(a, b->nargs ? b->nargs : 1, sizeof *donor);
  for (uint32_t i = 0; i < b->nargs; i++) alias[i] = -1;
  if (hlo) hlo_donations(m, b->nargs, alias, donor);
  for (uint32_t i = 0; i < b->nargs; i++) {
    const ir_value *v = b->args[i];
    cost_tensor_info t = signature_tensor(v, i, false, ir_value_type(v), v->pos.offset, devices);
    t.alias_output = alias[i];
    t.donated = donor[i];
    const ir_attr *ao = ir_attrs_find(ir_value_attrs(v), "tf.aliasing_output");
    if (ao) {
      t.alias_output = digits(ao->value.p, ao->value.p + digit_run(ao->value.p, ao->value.p + ao->value.n));
      t.donated = true;
    }
    const ir_attr *bd = ir_attrs_find(ir_value_attrs(v), "jax.buffer_donor");
    if (bd && ir_span_starts(bd->value, "true")) t.donated = true;
    const md_sharding *w = md_model_value_sharding(model, v);
    t.derived = prop && derivable(w) ? prop_engine_value_sharding(prop, v) : NULL;
    add_tensor(a, model, out, t, w);
  }
}

static void collect_results(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *prop,
                            const ir_op *entry, const ir_op *ret, int64_t devices, tensor_vec *out) {
  if (!ret) return;
  if (m->format == SC_FMT_HLO) { /* the ROOT instruction's value is the result (a tuple's leaves each one) */
    if (!ret->nresults) return;
    cost_tensor_info t = signature_tensor(ir_op_result(ret, 0), 0, true, ir_value_type(ir_op_result(ret, 0)), ret->pos.offset, devices);
    add_tensor(a, model, out, t, md_model_value_sharding(model, ir_op_result(ret, 0)));
    return;
  }
  const ir_span *types = ir_op_func_result_types(entry);
  for (uint32_t i = 0; i < ret->noperands; i++) {
    const ir_value *v = ret->operands[i];
    ir_span type = types && i < ir_op_decl_get(entry)->nresult_attrs ? types[i] : ir_span_of(NULL, 0);
    cost_tensor_info t = signature_tensor(v, i, true, type.n || !v ? type : ir_value_type(v), ret->pos.offset, devices);
    const md_sharding *w = md_model_func_result_sharding(model, entry, i);
    /* A written result sharding is what the caller gets (a reshard precedes the return); else the
     * returned value's derived one. */
    t.derived = !w && prop && v ? prop_engine_value_sharding(prop, v) : NULL;
    add_tensor(a, model, out, t, w);
  }
}

/* An op id with a number (an HLO parameter op and its argument, a returned value's defining op and its
 * result), sorted by id for binary search: memory in arguments and results, never in ops. */
typedef struct {
  uint32_t id, index;
} id_index;

static int id_index_cmp(const void *x, const void *y) {
  const id_index *a = x, *b = y;
  return a->id != b->id ? (a->id < b->id ? -1 : 1) : (a->index < b->index ? -1 : a->index > b->index);
}

/* The argument number of `v` in entry block `b` (HLO parameters through `params`), or -1. */
static int64_t arg_index(const ir_block *b, const id_index *params, uint32_t nparams, const ir_value *v) {
  if (!v || ir_value_block(v) != b) return -1;
  if (!ir_value_def(v)) return v->index;
  uint32_t lo = 0, hi = nparams;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (params[mid].id < ir_value_def(v)->id) lo = mid + 1;
    else hi = mid;
  }
  return lo < nparams && params[lo].id == ir_value_def(v)->id ? (int64_t)params[lo].index : -1;
}

typedef struct {
  int64_t at, bytes; /* bytes become live (> 0) or dead (< 0) at program point `at` */
} live_event;

static int live_event_cmp(const void *x, const void *y) {
  const live_event *a = x, *b = y;
  return a->at != b->at ? (a->at < b->at ? -1 : 1) : (a->bytes < b->bytes ? -1 : a->bytes > b->bytes);
}

/* Peak live bytes, lower bound: arguments are live from the start (the caller's buffers: a non-donated
 * one until the end, a donated one until its last use, an unused donated one not past the start), results
 * from where they are defined to the end; intermediates are not counted (XLA may fuse any of them away). A
 * buffer whose last use is an op may hold that op's result (intervals are half-open). One walk over the
 * entry's ops; memory in arguments and results only. */
static int64_t peak_lower_bound(sc_arena *a, const ir_module *m, const ir_op *entry, cost_analysis *c) {
  const ir_block *b = ir_op_regions(entry)[0]->blocks[0];
  int64_t n = b->nops;
  id_index *params = ar_alloc(a, (b->nargs ? b->nargs : 1) * sizeof *params);
  uint32_t nparams = 0;
  for (uint32_t i = 0; i < b->nargs; i++)
    if (ir_value_def(b->args[i])) params[nparams++] = (id_index){ir_value_def(b->args[i])->id, i};
  if (nparams > 1) qsort(params, nparams, sizeof *params, id_index_cmp);
  id_index *defs = ar_alloc(a, (c->nresults ? c->nresults : 1) * sizeof *defs);
  uint32_t ndefs = 0;
  for (uint32_t i = 0; i < c->nresults; i++) {
    const ir_value *v = c->results[i].value;
    if (v && ir_value_def(v) && arg_index(b, params, nparams, v) < 0) defs[ndefs++] = (id_index){ir_value_def(v)->id, i};
  }
  if (ndefs > 1) qsort(defs, ndefs, sizeof *defs, id_index_cmp);
  int64_t *last_use = ar_alloc(a, (b->nargs ? b->nargs : 1) * sizeof *last_use);
  int64_t *def_at = ar_alloc(a, (c->nresults ? c->nresults : 1) * sizeof *def_at);
  for (uint32_t i = 0; i < b->nargs; i++) last_use[i] = -1;
  for (uint32_t i = 0; i < c->nresults; i++) def_at[i] = n ? n - 1 : 0; /* an argument returned: a new buffer at the return */
  uint32_t d = 0;
  for (uint32_t i = 0; i < n; i++) {
    const ir_op *top = b->ops[i];
    while (d < ndefs && defs[d].id < top->id) d++;
    for (; d < ndefs && defs[d].id == top->id; d++) def_at[defs[d].index] = i;
    for (uint32_t id = top->id; id < top->subtree_end; id++) {
      const ir_op *op = m->ops[id];
      for (uint32_t k = 0; k < op->noperands; k++) {
        int64_t ai = arg_index(b, params, nparams, op->operands[k]);
        if (ai >= 0) last_use[ai] = i;
      }
    }
    ar_step(a, top->subtree_end - top->id);
  }
  uint32_t nev = 0;
  live_event *ev = ar_alloc(a, (2 * ((size_t)c->nargs + c->nresults) + 1) * sizeof *ev);
  int64_t at_start = 0;
  for (uint32_t i = 0; i < c->nargs; i++) {
    const cost_tensor_info *t = &c->args[i];
    at_start = add_sat(at_start, t->bytes_per_device);
    /* donated: until its last use (never used: free from the start); else the caller's, to the end */
    int64_t end = !t->donated ? n : last_use[t->index] >= 0 ? last_use[t->index] : 0;
    ev[nev++] = (live_event){0, t->bytes_per_device};
    ev[nev++] = (live_event){end, -t->bytes_per_device};
  }
  for (uint32_t i = 0; i < c->nresults; i++) {
    ev[nev++] = (live_event){def_at[i], c->results[i].bytes_per_device};
    ev[nev++] = (live_event){n, -c->results[i].bytes_per_device};
  }
  if (nev > 1) qsort(ev, nev, sizeof *ev, live_event_cmp);
  int64_t peak = at_start, live = 0;
  for (uint32_t i = 0; i < nev;) {
    int64_t at = ev[i].at;
    for (; i < nev && ev[i].at == at; i++) live = add_sat(live, ev[i].bytes);
    if (at < n && live > peak) peak = live;
  }
  return peak;
}

static int largest_cmp(const void *x, const void *y) {
  const cost_tensor_info *const *a = x, *const *b = y;
  if ((*a)->bytes_per_device != (*b)->bytes_per_device) return (*a)->bytes_per_device > (*b)->bytes_per_device ? -1 : 1;
  if ((*a)->is_result != (*b)->is_result) return (*a)->is_result ? 1 : -1;
  if ((*a)->index != (*b)->index) return (*a)->index < (*b)->index ? -1 : 1;
  return (*a)->leaf < (*b)->leaf ? -1 : (*a)->leaf > (*b)->leaf;
}

static const char *tensor_name(sc_arena *a, const cost_tensor_info *t) {
  const char *kind = t->is_result ? "result" : "arg";
  return t->leaf < 0 ? md_indexed_name(a, kind, t->index) : ar_printf(a, "%s %u[%d]", kind, t->index, t->leaf);
}

static void fill_report(sc_arena *a, cost_analysis *c) {
  sc_cost_report *r = &c->report;
  r->computed = true;
  uint32_t n = c->nargs + c->nresults;
  const cost_tensor_info **all = ar_alloc(a, (n ? n : 1) * sizeof *all);
  uint32_t k = 0;
  for (uint32_t i = 0; i < c->nargs; i++) {
    r->arguments_bytes = add_sat(r->arguments_bytes, c->args[i].bytes_per_device);
    if (c->args[i].donated) r->donated_bytes = add_sat(r->donated_bytes, c->args[i].bytes_per_device);
    if (c->args[i].known) all[k++] = &c->args[i];
  }
  for (uint32_t i = 0; i < c->nresults; i++) {
    r->results_bytes = add_sat(r->results_bytes, c->results[i].bytes_per_device);
    if (c->results[i].known) all[k++] = &c->results[i];
  }
  if (k > 1) qsort(all, k, sizeof *all, largest_cmp);
  r->nlargest = k < SC_COST_LARGEST ? k : SC_COST_LARGEST;
  r->largest = ar_calloc(a, r->nlargest ? r->nlargest : 1, sizeof *r->largest);
  for (size_t i = 0; i < r->nlargest; i++) {
    const cost_tensor_info *t = all[i];
    sc_cost_tensor *o = &r->largest[i];
    o->name = tensor_name(a, t);
    o->kind = t->is_result ? "result" : "argument";
    o->type = ir_span_dup(a, t->type);
    o->sharding = t->spec;
    o->global_bytes = t->global_bytes;
    o->bytes_per_device = t->bytes_per_device;
    o->donated = t->donated;
  }
}

/* ---- collectives: what the reshards of the propagated shardings become ------------------------------ */

/* Elements of one device's shard of `dims` under `s` (NULL = replicated), leaving out the axes `skip`
 * (NULL = none) holds. */
static int64_t local_elements(const int64_t *dims, uint32_t rank, const prop_sharding *s, const prop_axes *skip) {
  int64_t n = 1;
  for (uint32_t d = 0; d < rank; d++) {
    int64_t split = 1;
    for (uint32_t k = 0; s && d < s->rank && k < s->dims[d].axes.n; k++) {
      bool skipped = false;
      for (uint32_t j = 0; skip && j < skip->n; j++) skipped |= prop_axis_eq(skip->v[j], s->dims[d].axes.v[k]);
      if (!skipped) split = mul_sat(split, s->dims[d].axes.v[k].size);
    }
    n = mul_sat(n, dims[d] < 0 ? 0 : dims[d] / split + (dims[d] % split != 0));
  }
  return n;
}

/* The dimension of `s` holding axis `x`, or -1. */
static int64_t dim_of(const prop_sharding *s, prop_axis x) {
  for (uint32_t d = 0; s && d < s->rank; d++)
    for (uint32_t k = 0; k < s->dims[d].axes.n; k++)
      if (prop_axis_eq(s->dims[d].axes.v[k], x)) return d;
  return -1;
}

typedef SC_VEC(sc_cost_collective) collective_vec;

static void add_collective(sc_arena *a, const ir_linemap *lines, const prop_reshard *r, const char *kind,
                           const prop_axes *axes, const md_mesh *mesh, int64_t bytes, const char *reason,
                           collective_vec *out) {
  sc_cost_collective c = {0};
  if (lines && lines->nlines) {
    ir_pos pos = ir_linemap_pos(lines, r->op->pos.offset);
    c.line = pos.line, c.col = pos.col;
  }
  c.function = ir_op_func(r->op) ? ir_span_dup(a, ir_op_sym_name(ir_op_func(r->op))) : NULL;
  c.op = ir_span_dup(a, ir_op_name(r->op));
  c.kind = kind;
  c.axes = ar_alloc(a, (axes->n ? axes->n : 1) * sizeof *c.axes);
  for (uint32_t i = 0; i < axes->n && !mesh->synthesized; i++) {
    if (axes->v[i].axis >= mesh->naxes) continue;
    ir_span name = mesh->axes[axes->v[i].axis].name; /* "x", or "x:(1)2" for a sub-axis */
    c.axes[c.naxes++] = axes->v[i].pre > 0 ? ar_printf(a, "%.*s:(%lld)%lld", SC_SPAN_ARG(name), (long long)axes->v[i].pre,
                                                             (long long)axes->v[i].size)
                                           : ir_span_dup(a, name);
  }
  c.bytes_per_device = bytes;
  c.reason = reason;
  SC_PUSH(a, *out, c);
}

/* One reshard's collectives (Shardy's kinds): axes only in `from` are all-gathered (a device receives what
 * its shard grows by), axes only in `to` all-sliced (no traffic), axes on another dimension all-to-all'd
 * ((n-1)/n of the shard leaves), the same axes in another order permuted (the shard moves); an all-reduce
 * sends 2(n-1)/n of the shard (a ring). */
static void reshard_collectives(sc_arena *a, const ir_linemap *lines, const prop_reshard *r, collective_vec *out) {
  const prop_sharding *from = r->from, *to = r->to;
  if (from && (!from->mesh || !from->mesh->naxes)) from = NULL; /* an empty mesh: replicated */
  if (to && (!to->mesh || !to->mesh->naxes)) to = NULL;
  /* across meshes Shardy leaves the reshard as it is: no collectives to name */
  if (from && to && from->mesh != to->mesh && from->mesh->naxes != to->mesh->naxes) return;
  const md_mesh *mesh = to ? to->mesh : from ? from->mesh : NULL;
  ir_tensor_type tt;
  if (!mesh || !r->value || !ir_parse_tensor_type(a, ir_value_type(r->value), &tt) || tt.rank < 0) return;
  uint32_t bits = cost_element_bits(tt.element);
  uint32_t rank = (uint32_t)tt.rank;
  ar_str why = SC_ASTR_INIT(a);
  ar_str_printf(&why, "%s of %.*s", r->what, SC_SPAN_ARG(ir_op_name(r->op)));
  bool named = !mesh->synthesized; /* a GSPMD module's made-up "_partitions" axis is not shown */
  if (named) ar_str_puts(&why, ": ");
  if (named && from) prop_sharding_put(&why, from);
  else if (named) ar_str_puts(&why, "replicated");
  int64_t shard = cost_bytes(local_elements(tt.dims, rank, from, NULL), bits);
  if (r->all_reduce.n) {
    int64_t n = 1;
    for (uint32_t i = 0; i < r->all_reduce.n; i++) n = mul_sat(n, r->all_reduce.v[i].size);
    ar_str_puts(&why, " (partial sums)");
    add_collective(a, lines, r, "all-reduce", &r->all_reduce, mesh, mul_sat(shard, 2 * (n - 1)) / n, ar_str_str(&why), out);
    return;
  }
  if (named) ar_str_puts(&why, " -> ");
  if (named && to) prop_sharding_put(&why, to);
  else if (named) ar_str_puts(&why, r->boundary ? "whole on the callback's device" : "replicated");
  const char *reason = ar_str_str(&why);
  SC_VEC(prop_axis) gone = {0}, added = {0}, moved = {0};
  bool reordered = false;
  for (uint32_t d = 0; from && d < from->rank; d++)
    for (uint32_t k = 0; k < from->dims[d].axes.n; k++) {
      prop_axis x = from->dims[d].axes.v[k];
      int64_t at = dim_of(to, x);
      if (at < 0) SC_PUSH(a, gone, x);
      else if (at != (int64_t)d) SC_PUSH(a, moved, x);
      else reordered |= k >= to->dims[d].axes.n || !prop_axis_eq(to->dims[d].axes.v[k], x);
    }
  for (uint32_t d = 0; to && d < to->rank; d++)
    for (uint32_t k = 0; k < to->dims[d].axes.n; k++)
      if (dim_of(from, to->dims[d].axes.v[k]) < 0) SC_PUSH(a, added, to->dims[d].axes.v[k]);
  prop_axes g = {gone.v, (uint32_t)gone.n}, s = {added.v, (uint32_t)added.n}, mv = {moved.v, (uint32_t)moved.n};
  if (g.n) {
    int64_t grown = cost_bytes(local_elements(tt.dims, rank, from, &g), bits);
    add_collective(a, lines, r, "all-gather", &g, mesh, grown - shard, reason, out);
  }
  if (mv.n) {
    int64_t n = 1;
    for (uint32_t i = 0; i < mv.n; i++) n = mul_sat(n, mv.v[i].size);
    add_collective(a, lines, r, "all-to-all", &mv, mesh, mul_sat(shard, n - 1) / n, reason, out);
  }
  if (s.n) add_collective(a, lines, r, "all-slice", &s, mesh, 0, reason, out);
  if (reordered && !g.n && !mv.n) {
    prop_axes none = {NULL, 0};
    add_collective(a, lines, r, "collective-permute", &none, mesh, shard, reason, out);
  }
}

/* Whether `s` puts the whole tensor on one device: GSPMD `{maximal device=k}`, Shardy `<@maximal_mesh_k, []>`. */
static bool single_device(const md_sharding *s) {
  return s && (s->kind == SC_SHARDING_MAXIMAL || (s->kind == SC_SHARDING_NAMED && s->mesh && s->mesh->maximal));
}

static bool splits(const prop_sharding *s) {
  for (uint32_t d = 0; s && s->mesh && !s->mesh->maximal && d < s->rank; d++)
    if (s->dims[d].axes.n) return true;
  return false;
}

/* Inside a shard_map or a GSPMD manual region, also through calls (the model's manual contexts). */
static bool in_manual_computation(const md_model *model, const ir_op *op) {
  const md_manual_context *mc = md_model_manual(model, op);
  return mc && (mc->manual_op || mc->gspmd_manual);
}

typedef SC_VEC(const prop_reshard *) reshard_ptr_vec;

/* A host callback outside shard_map runs once, on one device (JAX gives it a maximal sharding), so the
 * partitioner brings each sharded operand whole to that device: it replicates it (an all-gather over the
 * axes that split it, as XLA's partitioner reshards tiled to maximal) before the callback. The explicit-
 * reshard pass leaves custom calls as written, so these come from here. */
static void callback_gathers(sc_arena *a, const md_model *model, const prop_engine *prop,
                             const ir_linemap *lines, collective_vec *out, reshard_ptr_vec *from) {
  ar_step(a, model->nannotated);
  for (md_annotated it = md_annotated_first(model); it.op; md_annotated_next(model, &it)) {
    const ir_op *op = it.op; /* a single-device callback has a written sharding */
    if (op->kind != SC_OP_CUSTOM_CALL || (op->cc != SC_CC_HOST_CALLBACK_CPU && op->cc != SC_CC_HOST_CALLBACK_GPU)) continue;
    if (!single_device(md_model_result_sharding(model, op, 0)) || in_manual_computation(model, op)) continue;
    for (uint32_t k = 0; k < op->noperands; k++) {
      const prop_sharding *s = op->operands[k] ? prop_engine_operand_sharding(prop, op, k) : NULL;
      if (!splits(s)) continue;
      prop_reshard *r = ar_calloc(a, 1, sizeof *r);
      r->op = op, r->value = op->operands[k], r->from = s, r->to = NULL;
      r->what = ar_printf(a, "operand %u", k);
      r->boundary = true;
      reshard_collectives(a, lines, r, out);
      while (from->n < out->n) SC_PUSH(a, *from, r);
    }
  }
}

void cost_collectives(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *prop,
                         const ir_linemap *lines, cost_analysis *c) {
  if (!prop) return;
  prop_reshard_list rs = prop_explicit_reshards(a, m, model, prop);
  collective_vec out = {0};
  reshard_ptr_vec from = {0};
  for (uint32_t i = 0; i < rs.n; i++) {
    reshard_collectives(a, lines, &rs.v[i], &out);
    while (from.n < out.n) SC_PUSH(a, from, &rs.v[i]);
  }
  callback_gathers(a, model, prop, lines, &out, &from);
  c->collective_reshards = from.v;
  c->report.collectives = out.v ? out.v : ar_calloc(a, 1, sizeof *out.v); /* non-NULL: computed */
  c->report.ncollectives = out.n;
}

cost_analysis *cost_compute(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *prop,
                         const sc_options *options) {
  cost_analysis *c = ar_calloc(a, 1, sizeof *c);
  c->report.device_memory_bytes = -1;
  if (options->device_memory_bytes > 0) c->report.device_memory_bytes = options->device_memory_bytes;
  else if (options->mesh && options->mesh->device_kind) {
    c->report.device_memory_bytes = sc_device_memory_bytes(options->mesh->device_kind);
    if (c->report.device_memory_bytes > 0) c->report.device_kind = options->mesh->device_kind;
  }
  const ir_op *entry = m->entry;
  if (!entry || !entry->nregions || !ir_op_regions(entry)[0]->nblocks) return c;
  c->entry = entry;
  c->mesh = model->effective;
  c->devices = c->mesh ? c->mesh->devices : model->num_partitions > 0 ? model->num_partitions : 1;
  const ir_block *b = ir_op_regions(entry)[0]->blocks[0];
  tensor_vec args = {0}, results = {0};
  collect_args(a, m, model, prop, b, c->devices, &args);
  collect_results(a, m, model, prop, entry, return_op(b), c->devices, &results);
  c->args = args.v;
  c->nargs = args.n;
  c->results = results.v;
  c->nresults = results.n;
  fill_report(a, c);
  c->report.peak_bytes_lower_bound = peak_lower_bound(a, m, entry, c);
  return c;
}
