/* collective.c — the `collective` family: Shardy's explicit collectives (sdy.all_gather,
 * all_slice, all_to_all, collective_permute, all_reduce, reduce_scatter, sharded_to_unreduced,
 * replicated_to_unreduced) verified the way Shardy's verifier does: the operand has a sharding on the
 * same mesh, the collective's axes are valid and applicable, and `out_sharding` is exactly the operand
 * sharding transformed by the collective. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rule_util.h"
#include "model/sdy_lex.h"

/* The row functions, declared from the table so their signatures are checked against it. */
#define OP_RULE(name, family, code, sev, summary, kinds, ccs, within, fn) void fn(ru_ctx *ctx, const ir_op *op);
#include "rules/collective.def"
#undef OP_RULE

typedef SC_VEC(md_axis_ref) axvec;

typedef enum { C_GATHER, C_SLICE, C_A2A, C_PERMUTE, C_REDUCE, C_RS, C_S2U, C_R2U } ckind;

typedef struct {
  axvec axes;
  int64_t src, tgt;
} a2a_param;

typedef struct {
  ckind kind;
  md_reduction red;
  bool have_red;
  /* per-dim axes (gather/slice/rs/s2u), one list (reduce/r2u), params (a2a) */
  SC_VEC(axvec) dims;
  axvec list;
  SC_VEC(a2a_param) params;
  bool parsed;
  const char *parse_error;
} coll;

static bool kind_of(const ir_op *op, ckind *k) {
  switch (op->kind) {
  case SC_OP_SDY_ALL_GATHER: *k = C_GATHER; return true;
  case SC_OP_SDY_ALL_SLICE: *k = C_SLICE; return true;
  case SC_OP_SDY_ALL_TO_ALL: *k = C_A2A; return true;
  case SC_OP_SDY_COLLECTIVE_PERMUTE: *k = C_PERMUTE; return true;
  case SC_OP_SDY_ALL_REDUCE: *k = C_REDUCE; return true;
  case SC_OP_SDY_REDUCE_SCATTER: *k = C_RS; return true;
  case SC_OP_SDY_SHARDED_TO_UNREDUCED: *k = C_S2U; return true;
  case SC_OP_SDY_REPLICATED_TO_UNREDUCED: *k = C_R2U; return true;
  default: return false;
  }
}

static bool parse_coll(ru_ctx *ctx, const md_op_info *info, coll *c) {
  sc_arena *a = ctx->arena;
  for (uint32_t i = 0; i < md_info_items(info)->n; i++) {
    const md_sdy_item *it = &md_info_items(info)->v[i];
    if (it->name.n && !it->value.n) {
      if (ir_span_eq(it->name, "max")) c->red = SC_REDUCE_MAX, c->have_red = true;
      else if (ir_span_eq(it->name, "min")) c->red = SC_REDUCE_MIN, c->have_red = true;
      else if (ir_span_eq(it->name, "sum")) c->red = SC_REDUCE_SUM, c->have_red = true;
    }
  }
  if (c->kind == C_PERMUTE) return true;
  const md_sdy_item *g = NULL;
  for (uint32_t i = 0; i < md_info_items(info)->n && !g; i++)
    if (!md_info_items(info)->v[i].name.n && md_info_items(info)->v[i].value.n &&
        (md_info_items(info)->v[i].value.p[0] == '[' || md_info_items(info)->v[i].value.p[0] == '{'))
      g = &md_info_items(info)->v[i];
  if (!g) {
    c->parse_error = "missing the collective's axes";
    return false;
  }
  sdy_lex lx;
  sdy_lex_init(&lx, a, g->value, g->offset);
  if (c->kind == C_REDUCE || c->kind == C_R2U) {
    md_axis_ref *v;
    uint32_t n;
    if (!sdy_parse_axis_list(&lx, &v, &n)) goto fail;
    for (uint32_t i = 0; i < n; i++) SC_PUSH(a, c->list, v[i]);
    return true;
  }
  if (!sdy_expect(&lx, '[')) goto fail;
  if (sdy_eat(&lx, ']')) return true;
  for (;;) {
    md_axis_ref *v;
    uint32_t n;
    if (!sdy_parse_axis_list(&lx, &v, &n)) goto fail;
    axvec ax = {0};
    for (uint32_t i = 0; i < n; i++) SC_PUSH(a, ax, v[i]);
    if (c->kind == C_A2A) {
      a2a_param p;
      memset(&p, 0, sizeof p);
      p.axes = ax;
      if (!sdy_expect(&lx, ':')) goto fail;
      sdy_tok s = sdy_next(&lx);
      if (s.kind != SDY_INT) goto fail;
      if (sdy_next(&lx).kind != SDY_ARROW) goto fail;
      sdy_tok t = sdy_next(&lx);
      if (t.kind != SDY_INT) goto fail;
      p.src = s.ival;
      p.tgt = t.ival;
      SC_PUSH(a, c->params, p);
    } else {
      SC_PUSH(a, c->dims, ax);
    }
    if (sdy_eat(&lx, ',')) continue;
    if (!sdy_expect(&lx, ']')) goto fail;
    return true;
  }
fail:
  c->parse_error = lx.err ? lx.err : "malformed collective axes";
  return false;
}

/* ---- axis arithmetic ---------------------------------------------------------------------------- */

static int64_t full_of(const md_mesh *m, ir_span name) {
  int k = md_mesh_axis_index(m, name);
  return k >= 0 ? m->axes[k].size : 0;
}
static int64_t lo_of(const md_axis_ref *r) { return r->sub ? r->pre_size : 1; }
static int64_t hi_of(const md_axis_ref *r, const md_mesh *m) {
  return r->sub ? r->pre_size * r->size : full_of(m, r->name);
}
static md_axis_ref make_ref(ir_span name, int64_t lo, int64_t hi, const md_mesh *m) {
  md_axis_ref r;
  memset(&r, 0, sizeof r);
  r.name = name;
  if (lo == 1 && hi == full_of(m, name)) {
    r.size = hi;
    return r;
  }
  r.sub = true;
  r.pre_size = lo;
  r.size = hi / lo;
  return r;
}

/* Removes `g` (in order) as a suffix of `dim`; on failure *bad names the axis that cannot be removed. */
static bool remove_suffix(axvec *dim, const axvec *g, const md_mesh *m, const md_axis_ref **bad) {
  for (size_t j = g->n; j-- > 0;) {
    const md_axis_ref *x = &g->v[j];
    if (!dim->n) {
      *bad = x;
      return false;
    }
    md_axis_ref *cur = &dim->v[dim->n - 1];
    if (ru_axis_eq(cur, x, m)) {
      dim->n--;
      continue;
    }
    int64_t clo = lo_of(cur), chi = hi_of(cur, m), xlo = lo_of(x), xhi = hi_of(x, m);
    if (ir_span_same(cur->name, x->name) && xhi == chi && xlo > clo && xlo % clo == 0) {
      *cur = make_ref(cur->name, clo, xlo, m);
      continue;
    }
    *bad = x;
    return false;
  }
  return true;
}

static void append_merge(sc_arena *a, axvec *dim, const md_axis_ref *r, const md_mesh *m) {
  if (dim->n) {
    md_axis_ref *last = &dim->v[dim->n - 1];
    if (ir_span_same(last->name, r->name) && last->sub && r->sub && hi_of(last, m) == lo_of(r)) {
      *last = make_ref(r->name, lo_of(last), hi_of(r, m), m);
      return;
    }
  }
  SC_PUSH(a, *dim, *r);
}

static axvec dim_of(sc_arena *a, const md_sharding *s, uint32_t d) {
  axvec v = {0};
  if (s && d < s->rank)
    for (uint32_t i = 0; i < s->dims[d].naxes; i++) SC_PUSH(a, v, s->dims[d].axes[i]);
  return v;
}

static bool same_axes(const md_axis_ref *x, size_t nx, const md_axis_ref *y, size_t ny, const md_mesh *m) {
  if (nx != ny) return false;
  for (size_t i = 0; i < nx; i++)
    if (!ru_axis_eq(&x[i], &y[i], m)) return false;
  return true;
}

static int ref_order(const md_mesh *m, const md_axis_ref *x, const md_axis_ref *y) {
  int ix = md_mesh_axis_index(m, x->name), iy = md_mesh_axis_index(m, y->name);
  if (ix != iy) return ix < iy ? -1 : 1;
  int64_t lx = lo_of(x), ly = lo_of(y);
  return lx < ly ? -1 : lx > ly;
}

/* Sorted union with consecutive sub-axes merged. */
static axvec sorted_union(sc_arena *a, const md_axis_ref *x, size_t nx, const axvec *y, const md_mesh *m) {
  axvec all = {0};
  for (size_t i = 0; i < nx; i++) SC_PUSH(a, all, x[i]);
  for (size_t i = 0; i < y->n; i++) SC_PUSH(a, all, y->v[i]);
  for (size_t i = 1; i < all.n; i++)
    for (size_t j = i; j > 0 && ref_order(m, &all.v[j - 1], &all.v[j]) > 0; j--) {
      md_axis_ref t = all.v[j];
      all.v[j] = all.v[j - 1];
      all.v[j - 1] = t;
    }
  axvec out = {0};
  for (size_t i = 0; i < all.n; i++) {
    md_axis_ref r = all.v[i];
    if (out.n) {
      md_axis_ref *last = &out.v[out.n - 1];
      if (ir_span_same(last->name, r.name) && hi_of(last, m) == lo_of(&r)) {
        *last = make_ref(r.name, lo_of(last), hi_of(&r, m), m);
        continue;
      }
    }
    SC_PUSH(a, out, r);
  }
  return out;
}

static bool same_axis_set(const md_mesh *x, const md_mesh *y) {
  if (x->naxes != y->naxes) return false;
  for (uint32_t i = 0; i < x->naxes; i++)
    if (!ir_span_same(x->axes[i].name, y->axes[i].name) || x->axes[i].size != y->axes[i].size) return false;
  return true;
}

static bool same_devices(const md_mesh *x, const md_mesh *y) {
  if (x->devices != y->devices) return false;
  if (!x->ndevice_ids && !y->ndevice_ids) return true; /* both iota */
  if (x->ndevice_ids && y->ndevice_ids && x->ndevice_ids != y->ndevice_ids) return false;
  if ((int64_t)(x->ndevice_ids ? x->ndevice_ids : y->ndevice_ids) != x->devices) return false;
  for (int64_t i = 0; i < x->devices; i++) {
    int64_t dx = x->ndevice_ids ? x->device_ids[i] : i, dy = y->ndevice_ids ? y->device_ids[i] : i;
    if (dx != dy) return false;
  }
  return true;
}

static const char *red_name(md_reduction r) { return r == SC_REDUCE_MAX ? "max" : r == SC_REDUCE_MIN ? "min" : "sum"; }

/* ---- the verifier: first problem and its rule --------------------------------------------------- */

typedef struct {
  const char *rule;
  const char *msg;
} problem;

#define FAIL(r, ...)                                                                                            \
  do {                                                                                                          \
    p.rule = (r);                                                                                               \
    p.msg = ar_printf(a, __VA_ARGS__);                                                                    \
    return p;                                                                                                   \
  } while (0)

static problem verify_lists(sc_arena *a, const axvec *lists, size_t n, const md_mesh *m, const char *order) {
  problem p = {0};
  const md_axis_ref **ls = ar_calloc(a, n + 1, sizeof *ls);
  uint32_t *cs = ar_calloc(a, n + 1, sizeof *cs);
  for (size_t i = 0; i < n; i++) {
    ls[i] = lists[i].v;
    cs[i] = (uint32_t)lists[i].n;
  }
  const char *e = md_axis_list_verify(a, ls, cs, (uint32_t)n, m, order, NULL);
  if (e) FAIL("collective-axes", "%s", e);
  return p;
}

static problem unreduced_transition(sc_arena *a, const md_sharding *in, const md_sharding *out, md_reduction red,
                                    const md_mesh *m) {
  problem p = {0};
  uint32_t nin = in ? in->nunreduced : 0;
  md_reduction in_op = in ? in->unreduced_op : SC_REDUCE_SUM;
  for (uint32_t i = 0; i < out->nunreduced; i++) {
    bool kept = false;
    for (uint32_t j = 0; j < nin; j++) kept |= ru_axis_eq(&in->unreduced[j], &out->unreduced[i], m);
    if (!kept) FAIL("collective-unreduced", "cannot add new unreduced axis '%s'.", md_axis_ref_str(a, &out->unreduced[i]));
  }
  bool dropped = false;
  for (uint32_t j = 0; j < nin; j++) {
    bool kept = false;
    for (uint32_t i = 0; i < out->nunreduced; i++) kept |= ru_axis_eq(&in->unreduced[j], &out->unreduced[i], m);
    dropped |= !kept;
  }
  if (dropped && in_op != red) FAIL("collective-unreduced", "cannot reduce '%s' unreduced axes. Expected '%s'.", red_name(in_op), red_name(red));
  if (nin && out->nunreduced && in_op != out->unreduced_op)
    FAIL("collective-unreduced", "cannot change the reduction operator of kept unreduced axes from %s to %s.",
         red_name(in_op), red_name(out->unreduced_op));
  return p;
}

/* all-gather, all-slice, reduce-scatter, sharded-to-unreduced: axes move between a dimension and the rest */
static problem verify_move_axes(sc_arena *a, const coll *c, const md_sharding *in, const md_sharding *out,
                                const md_mesh *m, uint32_t rank, ckind kind) {
  problem p = {0};
  problem q = verify_lists(a, c->dims.v, c->dims.n, m, NULL);
  if (q.msg) return q;
  if (c->dims.n != rank) FAIL("collective-axes", "result sharding has rank %u but collective axes has rank %zu", rank, c->dims.n);
  if (kind == C_RS) {
    q = unreduced_transition(a, in, out, c->have_red ? c->red : SC_REDUCE_SUM, m);
    if (q.msg) return q;
  }
  axvec moved = {0};
  for (uint32_t d = 0; d < rank; d++) {
    axvec dim = dim_of(a, in, d);
    if (kind == C_GATHER || kind == C_S2U) {
      const md_axis_ref *bad = NULL;
      if (!remove_suffix(&dim, &c->dims.v[d], m, &bad))
        FAIL("collective-axes", "can't apply %s axis %s to operand sharding on dimension %u",
             kind == C_GATHER ? "gathering" : "shard-to-unreduce", md_axis_ref_str(a, bad), d);
      for (size_t i = 0; i < c->dims.v[d].n; i++) SC_PUSH(a, moved, c->dims.v[d].v[i]);
    } else {
      for (size_t i = 0; i < c->dims.v[d].n; i++) append_merge(a, &dim, &c->dims.v[d].v[i], m);
    }
    if (!same_axes(dim.v, dim.n, out->dims[d].axes, out->dims[d].naxes, m))
      FAIL("collective-result-sharding", "result sharding doesn't match expected sharding %s on dimension %u",
           ru_axes_str(a, dim.v, (uint32_t)dim.n), d);
  }
  if (kind == C_S2U) {
    if (out->nunreduced && out->unreduced_op != SC_REDUCE_SUM) FAIL("collective-axes", "out_sharding reduction_op must be SUM");
    axvec want = sorted_union(a, in ? in->unreduced : NULL, in ? in->nunreduced : 0, &moved, m);
    if (!same_axes(want.v, want.n, out->unreduced, out->nunreduced, m))
      FAIL("collective-result-sharding",
           "out_unreduced_axes should be in_unreduced_axes + sharded_to_unreduced_axes: expected unreduced=%s, got %s",
           ru_axes_str(a, want.v, (uint32_t)want.n), ru_axes_str(a, out->unreduced, out->nunreduced));
  }
  return p;
}

/* all-to-all: axes move from source to target dimensions */
static problem verify_all_to_all(sc_arena *a, const coll *c, const md_sharding *in, const md_sharding *out,
                                 const md_mesh *m, uint32_t rank) {
  problem p = {0};
  if (!c->params.n) FAIL("collective-axes", "parameter list is empty");
  for (size_t i = 0; i < c->params.n; i++) {
    if (c->params.v[i].src < 0 || c->params.v[i].src >= (int64_t)rank)
      FAIL("collective-axes", "source dimension %" PRId64 " is out of range [0, %u)", c->params.v[i].src, rank);
    if (c->params.v[i].tgt < 0 || c->params.v[i].tgt >= (int64_t)rank)
      FAIL("collective-axes", "target dimension %" PRId64 " is out of range [0, %u)", c->params.v[i].tgt, rank);
  }
  uint8_t *seen = ar_calloc(a, rank + 1, 1);
  for (size_t i = 0; i < c->params.n; i++) {
    int64_t ds[2] = {c->params.v[i].src, c->params.v[i].tgt};
    for (int k = 0; k < 2; k++) {
      if (seen[ds[k]]) FAIL("collective-axes", "overlapping source/target dimensions in all-to-all params: %" PRId64, ds[k]);
      seen[ds[k]] = 1;
    }
  }
  for (size_t i = 1; i < c->params.n; i++)
    if (c->params.v[i].src < c->params.v[i - 1].src)
      FAIL("collective-axes", "source dimensions are not sorted in ascending order: %" PRId64 " appears after %" PRId64,
           c->params.v[i].src, c->params.v[i - 1].src);
  axvec *lists = ar_calloc(a, c->params.n, sizeof *lists);
  for (size_t i = 0; i < c->params.n; i++) lists[i] = c->params.v[i].axes;
  problem q = verify_lists(a, lists, c->params.n, m, NULL);
  if (q.msg) return q;
  axvec *dims = ar_calloc(a, rank + 1, sizeof *dims);
  for (uint32_t d = 0; d < rank; d++) dims[d] = dim_of(a, in, d);
  for (size_t i = 0; i < c->params.n; i++) {
    const md_axis_ref *bad = NULL;
    if (!remove_suffix(&dims[c->params.v[i].src], &c->params.v[i].axes, m, &bad))
      FAIL("collective-axes", "can't apply all-to-all axis %s to operand sharding on dimension %" PRId64,
           md_axis_ref_str(a, bad), c->params.v[i].src);
    for (size_t k = 0; k < c->params.v[i].axes.n; k++) append_merge(a, &dims[c->params.v[i].tgt], &c->params.v[i].axes.v[k], m);
  }
  for (uint32_t d = 0; d < rank; d++)
    if (!same_axes(dims[d].v, dims[d].n, out->dims[d].axes, out->dims[d].naxes, m))
      FAIL("collective-result-sharding", "result sharding doesn't match expected sharding %s on dimension %u",
           ru_axes_str(a, dims[d].v, (uint32_t)dims[d].n), d);
  return p;
}

/* collective-permute: every dimension keeps its sharded size */
static problem verify_permute(sc_arena *a, const md_sharding *in, const md_sharding *out, const md_mesh *im,
                              const md_mesh *om, uint32_t rank) {
  problem p = {0};
  for (uint32_t d = 0; d < rank; d++) {
    int64_t x = md_dim_sharded_size(out, d, om), y = md_dim_sharded_size(in, d, im);
    if (x != y)
      FAIL("collective-result-sharding", "sharded size of result doesn't match operand on dimension %u: %" PRId64 " != %" PRId64,
           d, x, y);
  }
  return p;
}

/* all-reduce: shardings unchanged, reduction axes disjoint from them */
static problem verify_all_reduce(sc_arena *a, const coll *c, const md_sharding *in, const md_sharding *out,
                                 const md_mesh *m, uint32_t rank) {
  problem p = {0};
  problem q = verify_lists(a, &c->list, 1, m, "reduction");
  if (q.msg) return q;
  q = unreduced_transition(a, in, out, c->have_red ? c->red : SC_REDUCE_SUM, m);
  if (q.msg) return q;
  for (uint32_t d = 0; d < rank; d++) {
    axvec dim = dim_of(a, in, d);
    if (!same_axes(dim.v, dim.n, out->dims[d].axes, out->dims[d].naxes, m))
      FAIL("collective-result-sharding", "operand and result shardings are not equivalent (dimension %u: operand %s, result %s)",
           d, ru_axes_str(a, dim.v, (uint32_t)dim.n), ru_axes_str(a, out->dims[d].axes, out->dims[d].naxes));
  }
  for (size_t i = 0; i < c->list.n; i++) {
    const md_axis_ref *r = &c->list.v[i];
    bool hit = false;
    for (uint32_t d = 0; in && d < in->rank && !hit; d++)
      for (uint32_t j = 0; j < in->dims[d].naxes && !hit; j++) hit = ru_axes_overlap(r, &in->dims[d].axes[j], m);
    for (uint32_t j = 0; in && j < in->nreplicated && !hit; j++) hit = ru_axes_overlap(r, &in->replicated[j], m);
    if (hit)
      FAIL("collective-axes", "reduction axis %s overlaps with operand dimension sharding or replicated axes",
           md_axis_ref_str(a, r));
    for (uint32_t j = 0; j < out->nunreduced && !hit; j++) hit = ru_axes_overlap(r, &out->unreduced[j], m);
    if (hit) FAIL("collective-axes", "reduction axis %s overlaps with result unreduced axes", md_axis_ref_str(a, r));
  }
  return p;
}

/* replicated-to-unreduced: dimension shardings kept, the axes become unreduced */
static problem verify_replicated_to_unreduced(sc_arena *a, const coll *c, const md_sharding *in,
                                              const md_sharding *out, const md_mesh *m, uint32_t rank) {
  problem p = {0};
  if (!c->list.n) FAIL("collective-axes", "r2u axes must not be empty");
  problem q = verify_lists(a, &c->list, 1, m, "r2u");
  if (q.msg) return q;
  if (out->nunreduced && out->unreduced_op != SC_REDUCE_SUM) FAIL("collective-axes", "out_sharding reduction_op must be SUM");
  for (uint32_t d = 0; d < rank; d++) {
    axvec dim = dim_of(a, in, d);
    if (!same_axes(dim.v, dim.n, out->dims[d].axes, out->dims[d].naxes, m))
      FAIL("collective-result-sharding", "input and output must share the same dimension shardings (dimension %u)", d);
  }
  for (size_t i = 0; i < c->list.n; i++) {
    const md_axis_ref *r = &c->list.v[i];
    bool hit = false;
    for (uint32_t d = 0; in && d < in->rank && !hit; d++)
      for (uint32_t j = 0; j < in->dims[d].naxes && !hit; j++) hit = ru_axes_overlap(r, &in->dims[d].axes[j], m);
    if (hit) FAIL("collective-axes", "r2u axis %s overlaps with operand dimension sharding", md_axis_ref_str(a, r));
    for (uint32_t j = 0; in && j < in->nunreduced && !hit; j++) hit = ru_axes_overlap(r, &in->unreduced[j], m);
    if (hit) FAIL("collective-axes", "r2u axis %s overlaps with operand unreduced axes", md_axis_ref_str(a, r));
  }
  axvec want = sorted_union(a, in ? in->unreduced : NULL, in ? in->nunreduced : 0, &c->list, m);
  if (!same_axes(want.v, want.n, out->unreduced, out->nunreduced, m))
    FAIL("collective-result-sharding", "out_unreduced_axes should be in_unreduced_axes + r2u_axes: expected unreduced=%s, got %s",
         ru_axes_str(a, want.v, (uint32_t)want.n), ru_axes_str(a, out->unreduced, out->nunreduced));
  return p;
}

static problem verify(ru_ctx *ctx, const ir_op *op, const md_op_info *info, ckind kind) {
  sc_arena *a = ctx->arena;
  problem p = {0};
  const md_sharding *out = md_info_sharding(info)->nvalues ? md_info_sharding(info)->values[0] : NULL;
  if (!out) return p;
  /* an invalid out_sharding is reported by the sharding rules */
  ru_site site;
  memset(&site, 0, sizeof site);
  site.kind = RU_SDY_OP;
  site.op = op;
  site.s = out;
  site.type = ru_result_type(op, 0);
  const char *rule;
  if (ru_site_problem(ctx, &site, &rule)) return p;
  coll c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  if (!parse_coll(ctx, info, &c)) FAIL("collective-axes", "invalid collective axes: %s", c.parse_error);
  const md_mesh *om = md_model_sharding_mesh(ctx->model, out);
  const md_sharding *in = op->noperands ? md_model_value_sharding(ctx->model, op->operands[0]) : NULL;
  if (in && in->source != SC_SHARDING_FROM_SDY) in = NULL;
  bool optional = kind == C_SLICE || kind == C_REDUCE || kind == C_RS;
  if (!in && !optional)
    FAIL("collective-operand-sharding",
         "collective on operand without sharding: %.*s has no sdy.sharding (give the value a sharding, e.g. on the "
         "function argument or with sdy.sharding_constraint)",
         SC_SPAN_ARG(op->noperands && op->operands[0] ? op->operands[0]->name : ir_span_of("operand", 7)));
  const md_mesh *im = in ? md_model_sharding_mesh(ctx->model, in) : om;
  if (kind == C_PERMUTE) {
    if (!im || !om) return p;
    if (!same_axis_set(im, om))
      FAIL("collective-mesh", "result mesh has different axes than operand mesh (operand mesh: %s, result mesh: %s)",
           ru_mesh_str(a, im), ru_mesh_str(a, om));
    if (!ru_meshes_match(im, om) && same_devices(im, om))
      FAIL("collective-mesh", "result mesh name is different but same device ids as operand (operand mesh: @%.*s %s)",
           SC_SPAN_ARG(im->name), ru_mesh_str(a, im));
  } else if (in && !ru_meshes_match(im, om)) {
    FAIL("collective-mesh", "result mesh does not match operand mesh (operand mesh: %s, result mesh: %s)",
         ru_mesh_str(a, im), ru_mesh_str(a, om));
  }
  if (in && in->rank != out->rank)
    FAIL("collective-result-sharding", "result sharding has rank %u but operand sharding has rank %u", out->rank, in->rank);
  const md_mesh *m = om;
  uint32_t rank = out->rank;
  switch (kind) {
  case C_GATHER:
  case C_SLICE:
  case C_RS:
  case C_S2U:
    return verify_move_axes(a, &c, in, out, m, rank, kind);
  case C_A2A:
    return verify_all_to_all(a, &c, in, out, m, rank);
  case C_PERMUTE:
    return verify_permute(a, in, out, im, om, rank);
  case C_REDUCE:
    return verify_all_reduce(a, &c, in, out, m, rank);
  case C_R2U:
    return verify_replicated_to_unreduced(a, &c, in, out, m, rank);
  }
  return p;
}

/* One Shardy collective: verify() names the rule its first problem belongs to; each of the five rows
 * reports only its own. */
static void visit_collective(ru_ctx *ctx, const ir_op *op) {
  ckind kind;
  if (!kind_of(op, &kind)) return;
  const md_op_info *info = md_model_op(ctx->model, op);
  if (!info || md_info_sharding(info)->failed) return;
  problem p = verify(ctx, op, info, kind);
  if (!p.msg || strcmp(p.rule, ctx->rule->name) != 0) return;
  sc_diag *d = ru_emit(ctx, op, "'%.*s' op %s", SC_SPAN_ARG(ir_op_name(op)), p.msg);
  if (!strcmp(p.rule, "collective-operand-sharding"))
    ru_diag_fix(ctx, d, "Give the operand an sdy.sharding (function argument attribute or sdy.sharding_constraint)", NULL);
  else if (!strcmp(p.rule, "collective-result-sharding"))
    ru_diag_fix(ctx, d, "Set out_sharding to the operand's sharding transformed by the collective", NULL);
}

void ru_check_collective_operand_sharding(ru_ctx *ctx, const ir_op *op) { visit_collective(ctx, op); }
void ru_check_collective_mesh(ru_ctx *ctx, const ir_op *op) { visit_collective(ctx, op); }
void ru_check_collective_axes(ru_ctx *ctx, const ir_op *op) { visit_collective(ctx, op); }
void ru_check_collective_result_sharding(ru_ctx *ctx, const ir_op *op) { visit_collective(ctx, op); }
void ru_check_collective_unreduced(ru_ctx *ctx, const ir_op *op) { visit_collective(ctx, op); }

/* ---- collective-manual-subgroup: XLA collectives inside a partially manual region ---------------- */

/* Parses `{{1,0},{2,3}}` (HLO) or `dense<[[1, 0], [2, 3]]> : tensor<2x2xi64>` (StableHLO). */
typedef SC_VEC(int64_t) i64vec;
typedef SC_VEC(uint32_t) u32vec;

static bool parse_groups(sc_arena *a, ir_span v, i64vec *flat, u32vec *sizes) {
  const char *p = v.p, *e = v.p + v.n;
  if (ir_span_starts(v, "dense<")) p += 6;
  int depth = 0;
  uint32_t cur = 0;
  bool in_group = false;
  for (; p < e; p++) {
    char c = *p;
    if (c == '{' || c == '[') {
      depth++;
      if (depth == 2) {
        in_group = true;
        cur = 0;
      }
    } else if (c == '}' || c == ']') {
      if (depth == 2 && in_group) {
        SC_PUSH(a, *sizes, cur);
        in_group = false;
      }
      if (--depth == 0) break;
    } else if ((c >= '0' && c <= '9') && in_group) {
      int64_t x = 0;
      while (p < e && *p >= '0' && *p <= '9') x = x * 10 + (*p++ - '0');
      p--;
      SC_PUSH(a, *flat, x);
      cur++;
    } else if (c == '>' || c == ':') {
      break;
    }
  }
  return sizes->n > 0;
}

/* Reports the first replica group of `rg` whose devices have different subgroup keys (key[device];
 * -1 for a device outside the subgroups). `whose` names the partially manual region for the message. */
static void report_mixed_groups(ru_ctx *ctx, const ir_op *op, const ir_attr *rg, const int64_t *key, int64_t maxdev,
                                const char *whose) {
  sc_arena *a = ctx->arena;
  i64vec flat = {0};
  u32vec sizes = {0};
  if (!parse_groups(a, ir_span_trim(rg->value), &flat, &sizes)) return;
  size_t at = 0;
  for (size_t g = 0; g < sizes.n; g++) {
    int64_t k0 = -2;
    bool bad = false;
    for (uint32_t i = 0; i < sizes.v[g]; i++, at++) {
      int64_t dv = flat.v[at];
      int64_t kv = dv >= 0 && dv <= maxdev ? key[dv] : -1;
      if (k0 == -2) k0 = kv;
      else if (kv != k0) bad = true;
    }
    if (!bad) continue;
    sc_diag *d = ru_emit(ctx, op,
                         "Manual %.*s across devices that belong to different manual subgroups: replica group %zu "
                         "mixes subgroups of %s",
                         SC_SPAN_ARG(ir_op_name(op)), g, whose);
    ru_diag_span_text(ctx, d, rg->value);
    sc_fix *f = ru_diag_fix(ctx, d, "Only communicate within one manual subgroup (the devices that share all non-manual "
                                    "tile indices)", NULL);
    f->note = "In a partially manual shard_map, name only the shard_map's manual axes in collectives "
              "(jax.lax.psum(x, axis_name=...) over axes listed in axis_names)";
    return;
  }
}

/* A collective inside a partially manual sdy.manual_computation: a device's subgroup is its position
 * along the mesh's free (non-manual) axes; a replica group may only vary the manual ones. */
static void check_sdy_manual_subgroup(ru_ctx *ctx, const ir_op *op, const ir_attr *rg) {
  const md_manual_context *mc = md_model_manual(ctx->model, op);
  const md_mesh *mesh = mc->mesh;
  if (!mc->manual_op || mc->manual_op->kind != SC_OP_SDY_MANUAL_COMPUTATION || !mesh || mesh->devices <= 1 ||
      mesh->devices > 1 << 20 || md_model_fully_manual(ctx->model, op))
    return;
  int64_t n = mesh->devices, maxdev = n - 1;
  for (uint32_t i = 0; mesh->device_ids && i < mesh->ndevice_ids; i++) maxdev = mesh->device_ids[i] > maxdev ? mesh->device_ids[i] : maxdev;
  if (maxdev > 1 << 20) return;
  int64_t *key = ar_calloc(ctx->arena, (size_t)maxdev + 1, sizeof *key);
  for (int64_t i = 0; i <= maxdev; i++) key[i] = -1;
  for (int64_t pos = 0; pos < n; pos++) {
    int64_t rem = pos, k = 0, mul = 1;
    for (uint32_t d = mesh->naxes; d-- > 0;) {
      int64_t size = mesh->axes[d].size > 0 ? mesh->axes[d].size : 1, idx = rem % size;
      rem /= size;
      bool manual = false;
      for (uint32_t j = 0; j < mc->nmanual_axes && !manual; j++) manual = ir_span_same(mc->manual_axes[j], mesh->axes[d].name);
      if (manual) continue;
      k += idx * mul;
      mul *= size;
    }
    int64_t dev = mesh->device_ids && (uint64_t)pos < mesh->ndevice_ids ? mesh->device_ids[pos] : pos;
    if (dev >= 0 && dev <= maxdev) key[dev] = k;
  }
  report_mixed_groups(ctx, op, rg, key, maxdev,
                      ar_printf(ctx->arena, "the partially manual sdy.manual_computation over mesh %s",
                                      ru_mesh_ref(ctx->arena, mesh)));
}

void ru_check_collective_manual_subgroup(ru_ctx *ctx, const ir_op *op) {
  sc_arena *a = ctx->arena;
  if (op->kind != SC_OP_XLA_COLLECTIVE) return;
  const ir_attr *rg = ir_op_attr(op, "replica_groups");
  if (!rg || !ir_op_attr(op, "use_global_device_ids")) return;
  const md_sharding *s = md_model_result_sharding(ctx->model, op, 0);
  if ((!s || !s->tiles->tile_dims) && op->noperands) s = md_model_value_sharding(ctx->model, op->operands[0]);
  if (!s || !s->tiles->tile_dims || !s->tiles->tile_devices) {
    check_sdy_manual_subgroup(ctx, op, rg);
    return;
  }
  /* the manual subgroup dimension */
  int32_t mdim = -1;
  for (uint32_t i = 0; i < s->tiles->nlast_tile_dims; i++)
    if (s->tiles->last_tile_dims[i] == 1) mdim = (int32_t)(s->tiles->ntile_dims - s->tiles->nlast_tile_dims + i);
  if (mdim < 0 || (uint64_t)s->tiles->tile_dims[mdim] == s->tiles->ntile_devices) return;
  /* subgroup key of each device: its tile index without the manual dimension */
  int64_t maxdev = 0;
  for (uint64_t i = 0; i < s->tiles->ntile_devices; i++) maxdev = s->tiles->tile_devices[i] > maxdev ? s->tiles->tile_devices[i] : maxdev;
  if (maxdev > 1 << 20) return;
  int64_t *key = ar_calloc(a, (size_t)maxdev + 1, sizeof *key);
  for (int64_t i = 0; i <= maxdev; i++) key[i] = -1;
  for (uint64_t t = 0; t < s->tiles->ntile_devices; t++) {
    uint64_t rem = t, kk = 0, mul = 1;
    for (int32_t d = (int32_t)s->tiles->ntile_dims - 1; d >= 0; d--) {
      uint64_t idx = rem % (uint64_t)s->tiles->tile_dims[d];
      rem /= (uint64_t)s->tiles->tile_dims[d];
      if (d == mdim) continue;
      kk += idx * mul;
      mul *= (uint64_t)s->tiles->tile_dims[d];
    }
    key[s->tiles->tile_devices[t]] = (int64_t)kk;
  }
  report_mixed_groups(ctx, op, rg, key, maxdev,
                      ar_printf(a, "the partially manual sharding " SC_QUOTE_FMT, SC_QUOTE_ARG(s->text)));
}
