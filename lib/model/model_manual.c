/* model_manual.c — each op's manual context for the sharding model (see model.c): Shardy manual
 * computations, round-trip manual bodies and GSPMD manual regions, followed through calls into private
 * functions (a function lookup by symbol name). Runs inside md_model_build on the request's thread,
 * on its builder and arena; nothing here keeps state. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_build.h"
#include "util/hash.h"

/* ---- manual contexts ---------------------------------------------------------------------------- */

void md_func_map_build(sc_arena *a, const ir_module *m, func_map *fm) {
  hs_name_map_init(&fm->names, a, m->nfuncs);
  fm->funcs = m->funcs;
  for (uint32_t i = 0; i < m->nfuncs; i++) { /* the first definition wins */
    ir_span name = ir_op_sym_name(m->funcs[i]);
    hs_name_map_put(&fm->names, name.p, name.n, i, NULL);
  }
}

ir_op *md_func_map_get(const func_map *fm, ir_span name) {
  uint32_t i;
  return hs_name_map_get(&fm->names, name.p, name.n, &i) ? fm->funcs[i] : NULL;
}

typedef struct {
  builder *b;
  const func_map *funcs;
  /* Per function, at its func_slot() (nfuncs + 1 entries, not one per op: a module has ~10^5 ops and
   * few functions): the least manual context of its call sites, and whether it was reached. */
  const ir_op **funcs_by_id; /* m->funcs sorted by op id */
  uint32_t nfuncs;
  const md_manual_context **func_ctx;
  bool *func_seen;
  /* per op id: results are GSPMD-local values in this context. Made when the first op gets one (set_local):
   * modules without GSPMD manual regions need none (8 bytes per op). */
  const md_manual_context **local;
  SC_VEC(ir_op *) work;
  bool any_local; /* some op's results are GSPMD-local (else operands need no look) */
  md_manual_context top;
  SC_VEC(const md_manual_context *) contexts; /* every context made (new_ctx), by number - 1 */
} mctx;

/* A context made here (all but mctx.top) with its number in the model's manual_contexts. */
typedef struct {
  md_manual_context ctx; /* first: a context made here is read as one of these */
  uint32_t number;
} numbered_ctx;

/* A new context, a copy of `init`, numbered for model->manual. */
static md_manual_context *new_ctx(mctx *c, const md_manual_context *init) {
  numbered_ctx *n = ar_alloc(c->b->a, sizeof *n);
  n->ctx = *init;
  SC_PUSH(c->b->a, c->contexts, &n->ctx);
  n->number = (uint32_t)c->contexts.n;
  return &n->ctx;
}

static int by_op_id(const void *x, const void *y) {
  uint32_t a = (*(const ir_op *const *)x)->id, b = (*(const ir_op *const *)y)->id;
  return (a > b) - (a < b);
}

/* The index of function `f` in c->funcs_by_id (binary search); nfuncs (a spare entry) if it is none. */
static uint32_t func_slot(const mctx *c, const ir_op *f) {
  uint32_t lo = 0, hi = c->nfuncs;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (c->funcs_by_id[mid]->id < f->id) lo = mid + 1;
    else hi = mid;
  }
  return lo < c->nfuncs && c->funcs_by_id[lo] == f ? lo : c->nfuncs;
}

static bool is_manual_body_name(ir_span callee) {
  return ir_span_starts(callee, "xla.sdy.manual_computation_body") ||
         ir_span_starts(callee, "local_xla.sdy.manual_computation_body");
}

static const md_mesh *op_mesh(const md_model *model, const md_sdy_op_info *info) {
  for (uint32_t i = 0; i < info->in_shardings.nvalues; i++) {
    const md_mesh *m = md_model_sharding_mesh(model, info->in_shardings.values[i]);
    if (m) return m;
  }
  for (uint32_t i = 0; i < info->out_shardings.nvalues; i++) {
    const md_mesh *m = md_model_sharding_mesh(model, info->out_shardings.values[i]);
    if (m) return m;
  }
  return NULL;
}

/* A name and where it stands in the parent's axes followed by the new ones. */
typedef struct {
  ir_span name;
  uint32_t pos;
} placed_name;

static int cmp_placed_name(const void *x, const void *y) {
  const placed_name *a = x, *b = y;
  if (a->name.n != b->name.n) return a->name.n < b->name.n ? -1 : 1;
  int c = a->name.n ? memcmp(a->name.p, b->name.p, a->name.n) : 0;
  if (c) return c;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The parent's manual axes, then each new axis not named before it. Duplicates are found by sorting
 * (n log n), not by comparing each new axis with every kept one (quadratic in a hostile axis list). */
static md_manual_context *ctx_with_axes(mctx *x, const md_manual_context *parent, const ir_op *op,
                                        const md_mesh *mesh, const md_axis_ref *axes, uint32_t n) {
  sc_arena *a = x->b->a;
  md_manual_context *c = new_ctx(x, parent);
  c->manual_op = op;
  if (mesh) c->mesh = mesh;
  uint32_t np = parent->nmanual_axes, total = np + n;
  c->manual_axes = ar_calloc(a, total + 1, sizeof(ir_span));
  ar_mark_t scratch = ar_mark(a); /* the sorted copy and the flags are forgotten at the end */
  placed_name *sorted = ar_alloc(a, (total + 1) * sizeof *sorted);
  bool *repeat = ar_calloc(a, total + 1, sizeof *repeat);
  for (uint32_t i = 0; i < total; i++) sorted[i] = (placed_name){i < np ? parent->manual_axes[i] : axes[i - np].name, i};
  qsort(sorted, total, sizeof *sorted, cmp_placed_name);
  for (uint32_t i = 1; i < total; i++) repeat[sorted[i].pos] = ir_span_same(sorted[i].name, sorted[i - 1].name);
  c->nmanual_axes = 0;
  for (uint32_t i = 0; i < np; i++) c->manual_axes[c->nmanual_axes++] = parent->manual_axes[i];
  for (uint32_t i = 0; i < n; i++)
    if (!repeat[np + i]) c->manual_axes[c->nmanual_axes++] = axes[i].name;
  ar_rewind(a, scratch);
  return c;
}

static bool gspmd_sharding_is_manual(const md_sharding *s, bool *partial) {
  if (!s) return false;
  if (s->kind == SC_SHARDING_MANUAL) {
    *partial = false;
    return true;
  }
  if (s->kind == SC_SHARDING_TUPLE) {
    bool any = false;
    for (uint32_t i = 0; i < s->nelements; i++) any |= gspmd_sharding_is_manual(s->elements[i], partial);
    return any;
  }
  if (s->kind == SC_SHARDING_NAMED && s->source == SC_SHARDING_FROM_GSPMD && s->nmanual_axes) {
    *partial = s->mesh && (uint32_t)s->nmanual_axes < s->mesh->naxes;
    return true;
  }
  for (uint32_t i = 0; i < s->tiles->nlast_tile_dims; i++) {
    if (s->tiles->last_tile_dims[i] == 1) {
      uint32_t d = s->tiles->ntile_dims - s->tiles->nlast_tile_dims + i;
      *partial = (uint64_t)s->tiles->tile_dims[d] != s->tiles->ntile_devices;
      return true;
    }
  }
  return false;
}

static md_manual_context *gspmd_ctx(mctx *c, const md_manual_context *parent, const ir_op *entry, bool partial) {
  sc_arena *a = c->b->a;
  md_manual_context *n = new_ctx(c, parent);
  n->manual_op = entry;
  n->gspmd_manual = true;
  n->gspmd_partial = partial;
  const md_mesh *mesh = c->b->model->effective;
  n->mesh = mesh;
  if (!partial && mesh) {
    n->manual_axes = ar_calloc(a, mesh->naxes + 1, sizeof(ir_span));
    n->nmanual_axes = 0;
    for (uint32_t i = 0; i < mesh->naxes; i++) n->manual_axes[n->nmanual_axes++] = mesh->axes[i].name;
  }
  return n;
}

static bool ctx_is_manual(const md_manual_context *x) {
  return x->manual_op || x->nmanual_axes || x->gspmd_manual;
}

/* The least manual of two call sites' contexts: not manual if either is not; else the intersection of
 * their manual axes, GSPMD-manual only if both are, partial if either is. */
static const md_manual_context *ctx_meet(mctx *c, const md_manual_context *x, const md_manual_context *y) {
  if (x == y) return x;
  if (!ctx_is_manual(x)) return x;
  if (!ctx_is_manual(y)) return y;
  md_manual_context *n = new_ctx(c, y->nmanual_axes < x->nmanual_axes ? y : x);
  n->manual_axes = ar_calloc(c->b->a, x->nmanual_axes + 1, sizeof(ir_span));
  n->nmanual_axes = 0;
  for (uint32_t i = 0; i < x->nmanual_axes; i++) {
    bool both = false;
    for (uint32_t j = 0; j < y->nmanual_axes; j++) both |= ir_span_same(x->manual_axes[i], y->manual_axes[j]);
    if (both) n->manual_axes[n->nmanual_axes++] = x->manual_axes[i];
  }
  n->gspmd_manual = x->gspmd_manual && y->gspmd_manual;
  n->gspmd_partial = n->gspmd_manual && (x->gspmd_partial || y->gspmd_partial);
  /* a GSPMD-manual and a Shardy-manual site: only the axes both make manual (none for a partial one) */
  if (x->gspmd_manual != y->gspmd_manual && (x->gspmd_partial || y->gspmd_partial)) n->nmanual_axes = 0;
  if (!n->gspmd_manual && !n->nmanual_axes) return &c->top;
  return n;
}

/* True if `y` is strictly less manual than `x` (ctx_meet only ever moves down, so this terminates). */
static bool ctx_lower(const md_manual_context *x, const md_manual_context *y) {
  if (ctx_is_manual(x) != ctx_is_manual(y)) return ctx_is_manual(x);
  return y->nmanual_axes < x->nmanual_axes || (x->gspmd_manual && !y->gspmd_manual) ||
         (!x->gspmd_partial && y->gspmd_partial);
}

static void visit_callee(mctx *c, ir_span name, const md_manual_context *ctx) {
  if (!name.n) return;
  if (name.p[0] == '%' || name.p[0] == '@') name = ir_span_of(name.p + 1, name.n - 1);
  ir_op *f = md_func_map_get(c->funcs, name);
  if (!f) return;
  uint32_t k = func_slot(c, f);
  if (c->func_seen[k]) {
    /* reached again: the function runs in the least manual of its call sites' contexts (what rules that
     * require a fully manual context must assume); walk it again if that got less manual */
    const md_manual_context *old = c->func_ctx[k] ? c->func_ctx[k] : &c->top;
    const md_manual_context *m = ctx_meet(c, old, ctx);
    if (!ctx_lower(old, m)) return;
    c->func_ctx[k] = m;
    SC_PUSH(c->b->a, c->work, f);
    return;
  }
  c->func_seen[k] = true;
  c->func_ctx[k] = ctx;
  SC_PUSH(c->b->a, c->work, f);
}

static const char *const k_hlo_callee_attrs[] = {"to_apply",          "calls",           "body",      "condition",
                                                 "branch_computations", "true_computation", "false_computation"};

/* Whether any attribute could be one of k_hlo_callee_attrs: most ops have none, and the lookup of
 * each of the seven names would scan the attributes seven times with a strlen each. */
static bool has_hlo_callee_attr(const ir_attrs *attrs) {
  for (uint32_t i = 0; i < attrs->n; i++) {
    ir_span n = attrs->v[i].name;
    if (n.n < 4 || n.n > 19) continue;
    for (size_t k = 0; k < sizeof k_hlo_callee_attrs / sizeof *k_hlo_callee_attrs; k++)
      if (n.p[0] == k_hlo_callee_attrs[k][0] && ir_span_eq(n, k_hlo_callee_attrs[k])) return true;
  }
  return false;
}

static void walk_block(mctx *c, const ir_block *blk, const md_manual_context *ctx);

static void set_local(mctx *c, const ir_op *op, const md_manual_context *ctx) {
  if (!c->local) c->local = ar_calloc(c->b->a, c->b->m->nops + 1, sizeof *c->local);
  c->local[op->id] = ctx;
  c->any_local = true;
}

/* Records `ctx` as `op`'s context in the model: its number (model->manual16, or manual32 once a number
 * does not fit in 16 bits), not a pointer per op. */
static void set_manual(mctx *c, const ir_op *op, const md_manual_context *ctx) {
  md_model *model = c->b->model;
  uint32_t k = ctx == &c->top ? 0 : ((const numbered_ctx *)(const void *)ctx)->number, nops = c->b->m->nops;
  if (!k && !model->manual16 && !model->manual32) return;
  if (!model->manual32 && k > UINT16_MAX) { /* widen: once, however many contexts come after */
    model->manual32 = ar_calloc(c->b->a, nops + 1, sizeof *model->manual32);
    for (uint32_t i = 0; model->manual16 && i < nops; i++) model->manual32[i] = model->manual16[i];
    model->manual16 = NULL;
  }
  if (model->manual32) {
    model->manual32[op->id] = k;
    return;
  }
  if (!model->manual16) model->manual16 = ar_calloc(c->b->a, nops + 1, sizeof *model->manual16);
  model->manual16[op->id] = (uint16_t)k;
}

static void walk_op(mctx *c, ir_op *op, const md_manual_context *ctx) {
  md_model *model = c->b->model;
  const md_op_info *info = md_model_op(model, op); /* the module is set: never NULL */
  const md_manual_context *opctx = ctx;
  if (c->local) c->local[op->id] = NULL; /* a function may be walked again in a less manual context */
  bool f2s = op->cc == SC_CC_FULL_TO_SHARD;
  bool s2f = op->cc == SC_CC_SHARD_TO_FULL;
  /* GSPMD: an op with a manual-local operand is inside the manual region */
  if (!f2s && !ctx->gspmd_manual && c->any_local) {
    for (uint32_t i = 0; i < op->noperands; i++) {
      const ir_value *v = op->operands[i];
      if (v && ir_value_def(v) && c->local[ir_value_def(v)->id]) {
        opctx = c->local[ir_value_def(v)->id];
        break;
      }
    }
  }
  if (!opctx->gspmd_manual && !f2s && !s2f && !opctx->manual_op && md_info_gspmd(info)->nvalues) {
    bool partial = false;
    if (gspmd_sharding_is_manual(md_info_gspmd(info)->values[0], &partial) &&
        md_info_gspmd(info)->values[0]->kind != SC_SHARDING_TUPLE)
      opctx = gspmd_ctx(c, ctx, op, partial);
  }
  set_manual(c, op, opctx); /* contexts never change once made */
  /* results */
  if (f2s) {
    bool partial = false;
    if (md_info_gspmd(info)->nvalues) gspmd_sharding_is_manual(md_info_gspmd(info)->values[0], &partial);
    set_local(c, op, ctx->gspmd_manual ? ctx : gspmd_ctx(c, ctx, op, partial));
  } else if (opctx->gspmd_manual && !s2f && opctx != ctx) {
    set_local(c, op, opctx);
  }
  /* round-trip manual body: GlobalToLocalShape's result feeds `call @xla.sdy.manual_computation_body` */
  const md_manual_context *callctx = opctx;
  if (ir_op_callee(op).n && is_manual_body_name(ir_op_callee(op))) {
    const md_sdy_op_info *mi = md_info_sdy_op(info);
    if (!mi->has_manual_axes) {
      for (uint32_t i = 0; i < op->noperands; i++) {
        const ir_value *v = op->operands[i];
        if (v && ir_value_def(v) && md_info_sdy_op(md_model_op(model, ir_value_def(v)))->has_manual_axes) {
          mi = md_info_sdy_op(md_model_op(model, ir_value_def(v)));
          break;
        }
      }
    }
    if (mi->has_manual_axes) callctx = ctx_with_axes(c, opctx, op, model->effective, mi->manual_axes, mi->nmanual_axes);
  }
  if (ir_op_callee(op).n) visit_callee(c, ir_op_callee(op), callctx);
  if (c->b->m->format == SC_FMT_HLO && has_hlo_callee_attr(ir_op_attrs(op))) {
    for (size_t k = 0; k < sizeof k_hlo_callee_attrs / sizeof *k_hlo_callee_attrs; k++) {
      const ir_attr *at = md_find_attr(ir_op_attrs(op), k_hlo_callee_attrs[k]);
      if (!at) continue;
      ir_span v = ir_span_trim(at->value);
      if (v.n && v.p[0] == '{') { /* {%a, %b} */
        const char *p = v.p + 1, *e = v.p + v.n - 1;
        while (p < e) {
          while (p < e && (isspace((unsigned char)*p) || *p == ',')) p++;
          const char *q = p;
          while (q < e && *q != ',' && !isspace((unsigned char)*q)) q++;
          if (q > p) visit_callee(c, ir_span_of(p, (uint32_t)(q - p)), callctx);
          p = q;
        }
      } else {
        visit_callee(c, v, callctx);
      }
    }
  }
  /* regions */
  const md_manual_context *inner = opctx;
  if (op->kind == SC_OP_SDY_MANUAL_COMPUTATION) {
    inner = ctx_with_axes(c, opctx, op, op_mesh(model, md_info_sdy_op(info)), md_info_sdy_op(info)->manual_axes,
                          md_info_sdy_op(info)->nmanual_axes);
  }
  for (uint32_t r = 0; r < op->nregions; r++)
    for (uint32_t k = 0; k < ir_op_regions(op)[r]->nblocks; k++) walk_block(c, ir_op_regions(op)[r]->blocks[k], inner);
}

static void walk_block(mctx *c, const ir_block *blk, const md_manual_context *ctx) {
  ar_step(c->b->a, blk->nops);
  for (uint32_t i = 0; i < blk->nops; i++) walk_op(c, blk->ops[i], ctx);
}

static void walk_func(mctx *c, ir_op *f) {
  uint32_t slot = func_slot(c, f);
  const md_manual_context *ctx = c->func_ctx[slot] ? c->func_ctx[slot] : &c->top;
  set_manual(c, f, &c->top); /* the function op itself is not inside its callers */
  for (uint32_t r = 0; r < f->nregions; r++)
    for (uint32_t k = 0; k < ir_op_regions(f)[r]->nblocks; k++) walk_block(c, ir_op_regions(f)[r]->blocks[k], ctx);
}

void md_build_manual(builder *b) {
  ir_module *m = b->m;
  mctx c;
  memset(&c, 0, sizeof c);
  c.b = b;
  c.nfuncs = m->nfuncs;
  c.funcs_by_id = ar_calloc(b->a, m->nfuncs + 1, sizeof *c.funcs_by_id);
  if (m->nfuncs) memcpy(c.funcs_by_id, m->funcs, m->nfuncs * sizeof *c.funcs_by_id);
  if (m->nfuncs > 1) qsort(c.funcs_by_id, m->nfuncs, sizeof *c.funcs_by_id, by_op_id);
  c.func_ctx = ar_calloc(b->a, m->nfuncs + 1, sizeof *c.func_ctx);
  c.func_seen = ar_calloc(b->a, m->nfuncs + 1, sizeof *c.func_seen);
  c.funcs = b->model->funcs;
  /* functions some op calls (they are visited from their call sites) */
  bool *called = ar_calloc(b->a, m->nfuncs + 1, sizeof *called);
  for (uint32_t k = 0; k < m->nops; k++) {
    if (!ir_op_callee(m->ops[k]).n) continue;
    ir_op *f = md_func_map_get(c.funcs, ir_op_callee(m->ops[k]));
    if (f) called[func_slot(&c, f)] = true;
  }
  /* ops outside any function (module level) keep NULL: no manual context */
  /* roots: the entry, public functions, then anything never called */
  ir_op **order = ar_calloc(b->a, m->nfuncs + 1, sizeof *order);
  uint32_t n = 0;
  if (m->entry) order[n++] = m->entry;
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (m->funcs[i] != m->entry && !ir_span_eq(ir_op_visibility(m->funcs[i]), "private")) order[n++] = m->funcs[i];
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (m->funcs[i] != m->entry && ir_span_eq(ir_op_visibility(m->funcs[i]), "private")) order[n++] = m->funcs[i];
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = func_slot(&c, order[i]);
    if (!c.func_seen[k]) {
      /* a private function that some later root calls is visited from that call */
      if (i > 0 && ir_span_eq(ir_op_visibility(order[i]), "private") && called[k] && m->format != SC_FMT_HLO)
        continue;
      c.func_seen[k] = true;
      SC_PUSH(b->a, c.work, order[i]);
    }
    while (c.work.n) {
      ir_op *f = c.work.v[--c.work.n];
      walk_func(&c, f);
    }
  }
  /* private functions only called from other never-visited functions */
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    uint32_t k = func_slot(&c, m->funcs[i]);
    if (c.func_seen[k]) continue;
    c.func_seen[k] = true;
    SC_PUSH(b->a, c.work, m->funcs[i]);
    while (c.work.n) {
      ir_op *f = c.work.v[--c.work.n];
      walk_func(&c, f);
    }
  }
  b->model->manual_contexts = c.contexts.v;
}
