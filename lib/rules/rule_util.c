/* rule_util.c — helpers shared by the sharding-related rule families (see rule_util.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/memo.h"
#include "rules/rule_util.h"


bool ru_is_func(const ir_op *op) { return op->kind == SC_OP_FUNC; }

bool ru_annotated(const ru_ctx *ctx, const ir_op *op) {
  return md_model_has_info(ctx->model, op);
}

ir_span ru_result_type(const ir_op *op, uint32_t i) {
  if (i < op->nresults && ir_value_type(ir_op_result(op, i)).n) return ir_value_type(ir_op_result(op, i));
  if (i < ir_op_nresult_types(op)) return ir_op_result_types(op)[i];
  return ir_span_of("", 0);
}

ir_span ru_operand_type(const ir_op *op, uint32_t i) {
  if (i < ir_op_noperand_types(op) && ir_op_operand_types(op)[i].n) return ir_op_operand_types(op)[i];
  if (i < op->noperands && op->operands[i] && ir_value_type(op->operands[i]).n) return ir_value_type(op->operands[i]);
  return ir_span_of("", 0);
}

const ir_block *ru_body(const ir_op *op) {
  if (!op->nregions || !ir_op_regions(op)[0]->nblocks) return NULL;
  return ir_op_regions(op)[0]->blocks[0];
}

const ir_op *ru_terminator(const ir_op *op) {
  const ir_block *b = ru_body(op);
  if (!b || !b->nops) return NULL;
  return b->ops[b->nops - 1];
}

ir_span ru_arg_type(const ir_op *func, uint32_t i) {
  const ir_block *b = ru_body(func);
  if (b && i < b->nargs) return ir_value_type(b->args[i]);
  return ir_span_of("", 0);
}

uint32_t ru_func_nresults(const ir_op *func) { return ir_op_nresult_attrs(func); }

ir_span ru_func_result_type(const ir_op *func, uint32_t i) {
  if (i < ir_op_nresult_attrs(func) && ir_op_func_result_types(func)) return ir_op_func_result_types(func)[i];
  return ir_span_of("", 0);
}

/* ---- sites -------------------------------------------------------------------------------------- */

static const char *value_what(sc_arena *a, const char *kind, uint32_t i, uint32_t n) {
  if (n == 1) return kind;
  return md_indexed_name(a, kind, i);
}

static void site_list(ru_ctx *ctx, const ir_op *op, const md_annotation *an, ru_site_kind kind, uint32_t nvalues,
                      bool operands, const char *label, ru_site_fn fn, void *user) {
  if (!an->nvalues || an->nvalues != nvalues) return; /* count problems are reported elsewhere */
  for (uint32_t i = 0; i < an->nvalues; i++) {
    ru_site s = {.kind = kind,
                 .op = op,
                 .offset = op->pos.offset,
                 .s = an->values[i],
                 .index = i,
                 .count = nvalues,
                 .type = operands ? ru_operand_type(op, i) : ru_result_type(op, i),
                 .what = label ? label : value_what(ctx->arena, operands ? "operand" : "result", i, nvalues)};
    fn(ctx, &s, user);
  }
}

void ru_for_each_sdy_site(ru_ctx *ctx, ru_site_fn fn, void *user) {
  const md_model *model = ctx->model;
  if (!model) return;
  for (md_annotated it = md_annotated_first(model); it.op; md_annotated_next(model, &it)) {
    const ir_op *op = it.op; /* ops without annotations have no sites */
    const md_op_info *info = it.info;
    if (ru_is_func(op)) {
      for (int res = 0; res < 2; res++) { /* arguments, then results */
        const md_value_annotations *vals = res ? md_info_func(info)->results : md_info_func(info)->args;
        uint32_t n = res ? md_info_func(info)->nresults : md_info_func(info)->nargs;
        for (uint32_t i = 0; i < n; i++) {
          if (!vals[i].sdy.nvalues) continue;
          ru_site s = {.kind = res ? RU_FUNC_RESULT : RU_FUNC_ARG,
                       .op = op,
                       .offset = op->pos.offset,
                       .s = vals[i].sdy.values[0],
                       .index = i,
                       .count = n,
                       .type = res ? ru_func_result_type(op, i) : ru_arg_type(op, i),
                       .what = md_indexed_name(ctx->arena, res ? "result" : "arg", i)};
          fn(ctx, &s, user);
        }
      }
      continue;
    }
    if (md_info_sdy(info)->nvalues) {
      if (op->nresults == 0 && md_info_sdy(info)->nvalues == 1) {
        ru_site s = {.kind = RU_OP_RESULT,
                     .op = op,
                     .offset = op->pos.offset,
                     .s = md_info_sdy(info)->values[0],
                     .typeless = true,
                     .what = "result"};
        fn(ctx, &s, user);
      } else {
        site_list(ctx, op, md_info_sdy(info), RU_OP_RESULT, op->nresults, false, NULL, fn, user);
      }
    }
    if (md_info_sharding(info)->nvalues) {
      ru_site s = {.kind = RU_SDY_OP,
                   .op = op,
                   .offset = op->pos.offset,
                   .s = md_info_sharding(info)->values[0],
                   .count = 1,
                   .type = ru_result_type(op, 0),
                   .what = NULL};
      fn(ctx, &s, user);
    }
    bool mc = op->kind == SC_OP_SDY_MANUAL_COMPUTATION;
    bool nc = op->kind == SC_OP_SDY_NAMED_COMPUTATION;
    if (mc || nc) {
      site_list(ctx, op, &md_info_sdy_op(info)->in_shardings, mc ? RU_MC_IN : RU_NC_IN, op->noperands, true,
                nc ? "in_shardings" : NULL, fn, user);
      site_list(ctx, op, &md_info_sdy_op(info)->out_shardings, mc ? RU_MC_OUT : RU_NC_OUT, op->nresults, false,
                nc ? "out_shardings" : NULL, fn, user);
    }
  }
}

/* ---- the per-sharding verifier ------------------------------------------------------------------ */

static const char *with_what(sc_arena *a, const ru_site *site, const char *msg) {
  if (!site->what) return msg;
  return ar_printf(a, "%s - %s", site->what, msg);
}

/* What a sharding's own checks (mesh, rank, priorities, axes) find at a site; they depend only on the
 * sharding, its mesh and the value's type, so they are memoized per (sharding text, type text). */
typedef struct {
  const char *msg;   /* the problem (without the site's "what - "), or NULL */
  const char *rule;
  bool check_manual; /* no problem, and the manual-axes check applies */
} verdict;

/* The per-request cache of the sharding rules (lives in ctx->rule_cache). */
typedef struct {
  ru_site site;
  const char *rule;
} site_problem;

typedef struct {
  bool collected;
  SC_VEC(site_problem) problems;
  md_memo verdicts; /* (resolution, typeless; sharding text, type text) -> verdict; also ru_memo() */
} site_cache;

static site_cache *cache_of(ru_ctx *ctx) {
  site_cache *c = ctx->rule_cache;
  if (!c) {
    c = ar_alloc(ctx->arena, sizeof *c);
    md_memo_init(&c->verdicts, ctx->arena);
    ctx->rule_cache = c;
  }
  return c;
}

/* `rank`: sharding-rank problems; the value's shape must match the sharding's rank. */
static verdict judge(ru_ctx *ctx, const ru_site *site, const md_mesh *mesh) {
  sc_arena *a = ctx->arena;
  const md_sharding *s = site->s;
  verdict v = {NULL, NULL, false};
  if (!mesh) {
    v.rule = "sharding-unknown-mesh";
    v.msg = ar_printf(a, "unknown mesh: @%.*s", SC_SPAN_ARG(s->mesh_name));
    return v;
  }
  bool has_extra = s->nreplicated || s->nunreduced;
  v.rule = "sharding-rank";
  if (mesh->maximal || site->typeless) {
    if (s->rank || has_extra)
      v.msg = mesh->maximal ? "a maximal sharding can only have a sharding with rank 0 and no replicated or "
                              "unreduced axes."
                            : "an op without results can only have a maximal or fully replicated sharding: "
                              "a sharding with rank 0 and no replicated or unreduced axes.";
    return v;
  }
  md_shape shape;
  bool known = site->type.n && md_parse_shape(a, site->type, &shape);
  if (known && shape.kind == SC_SHAPE_TUPLE) {
    if (shape.nelems != 1) {
      v.msg = ar_printf(a, "ops can only have a sharding for a tuple of size 1: %.*s", SC_SPAN_ARG(site->type));
      return v;
    }
    shape = shape.elems[0];
  }
  if (known && (shape.kind == SC_SHAPE_TOKEN || shape.kind == SC_SHAPE_OTHER)) {
    if (s->rank || has_extra)
      v.msg = ar_printf(a,
                              "non-shaped tensors can only have a sharding with rank 0 and no replicated or "
                              "unreduced axes. type: %.*s, sharding: %s",
                              SC_SPAN_ARG(site->type), ru_sharding_str(a, s));
    return v;
  }
  if (known && shape.kind == SC_SHAPE_UNRANKED) {
    v.msg = ar_printf(a, "only ranked tensors can have a sharding. type: %.*s", SC_SPAN_ARG(site->type));
    return v;
  }
  if (known && shape.kind == SC_SHAPE_ARRAY && (uint32_t)shape.rank != s->rank) {
    v.msg = ar_printf(a, "sharding doesn't match tensor rank: %u != %d (the value has type %.*s)", s->rank,
                            shape.rank, SC_SPAN_ARG(site->type));
    return v;
  }
  for (uint32_t d = 0; d < s->rank; d++) {
    const md_dim_sharding *dim = &s->dims[d];
    if (dim->priority >= 0 && !dim->open && dim->naxes == 0) {
      v.rule = "sharding-priority";
      v.msg = ar_printf(a, "dim %u is empty and closed but has a priority", d);
      return v;
    }
  }
  int kind = 0;
  v.msg = md_sharding_verify_axes_kind(a, s, mesh, &kind);
  v.rule = kind == SC_AXERR_UNKNOWN     ? "sharding-unknown-axis"
           : kind == SC_AXERR_DUPLICATE ? "sharding-duplicate-axis"
           : kind == SC_AXERR_ORDER     ? "sharding-axis-order"
                                        : "sharding-sub-axis";
  v.check_manual = !v.msg;
  return v;
}

ir_span ru_sharding_key(const md_sharding *s, uint64_t *tag) {
  *tag |= (uint64_t)s->source << 8 | (uint64_t)(s->mesh != NULL) << 9 | (uint64_t)s->kind << 10;
  if (!s->same_as) return s->text;
  *tag |= UINT64_C(1) << 40; /* never equal to a text key */
  return ir_span_of((const char *)&s->same_as, sizeof s->same_as);
}

/* judge(), once per distinct (sharding, type text): the same text parses and resolves the same. */
static verdict judge_memo(ru_ctx *ctx, const ru_site *site, const md_mesh *mesh) {
  const md_sharding *s = site->s;
  if (!s->text.n) return judge(ctx, site, mesh);
  uint64_t tag = RU_MEMO_VERDICT | (uint64_t)site->typeless;
  ir_span key = ru_sharding_key(s, &tag);
  bool found;
  void **slot = md_memo_slot(&cache_of(ctx)->verdicts, tag, key, site->type, &found);
  if (found) return *(verdict *)*slot;
  verdict *v = ar_alloc(ctx->arena, sizeof *v);
  *slot = v; /* judge() does not touch the memo: the slot stays valid */
  *v = judge(ctx, site, mesh);
  return *v;
}

/* `manual-axis-rebound`: an axis bound by an enclosing manual computation, or NULL. */
static const char *manual_problem(ru_ctx *ctx, const ru_site *site, const md_mesh *mesh) {
  const md_sharding *s = site->s;
  const md_manual_context *mc = md_model_manual(ctx->model, site->op);
  if (!mc || !mc->nmanual_axes || mc->gspmd_manual) return NULL;
  const md_mesh *pm = mc->mesh;
  if (pm && mesh->name.n && pm->name.n && !ir_span_same(pm->name, mesh->name)) return NULL;
  for (uint32_t i = 0; i < mc->nmanual_axes; i++) {
    ir_span ax = mc->manual_axes[i];
    bool used = false;
    for (uint32_t d = 0; d < s->rank && !used; d++)
      for (uint32_t j = 0; j < s->dims[d].naxes; j++) used |= ir_span_same(s->dims[d].axes[j].name, ax);
    for (uint32_t j = 0; j < s->nreplicated; j++) used |= ir_span_same(s->replicated[j].name, ax);
    for (uint32_t j = 0; j < s->nunreduced; j++) used |= ir_span_same(s->unreduced[j].name, ax);
    if (used)
      return ar_printf(ctx->arena,
                             "operates on axis \"%.*s\" which is already bound by a parent "
                             "sdy.manual_computation op (inside a shard_map body the manual axes may not "
                             "appear in shardings)",
                             SC_SPAN_ARG(ax));
  }
  return NULL;
}

const char *ru_site_problem(ru_ctx *ctx, const ru_site *site, const char **rule) {
  const md_sharding *s = site->s;
  if (!s || s->source != SC_SHARDING_FROM_SDY) return NULL;
  const md_mesh *mesh = md_model_sharding_mesh(ctx->model, s);
  verdict v = judge_memo(ctx, site, mesh);
  if (v.msg) {
    *rule = v.rule;
    return with_what(ctx->arena, site, v.msg);
  }
  if (!v.check_manual) return NULL;
  const char *e = manual_problem(ctx, site, mesh);
  if (!e) return NULL;
  *rule = "manual-axis-rebound";
  return with_what(ctx->arena, site, e);
}

/* ---- rendering & axis helpers ------------------------------------------------------------------- */

/* Appends `"x", "y":(1)2`: at most `limit` refs, then "... and N more". */
static void put_axes_upto(ar_str *s, const md_axis_ref *axes, uint32_t n, uint32_t limit) {
  uint32_t shown = n < limit ? n : limit;
  for (uint32_t i = 0; i < shown; i++) {
    if (i) ar_str_puts(s, ", ");
    ar_str_puts(s, md_axis_ref_str(s->a, &axes[i]));
  }
  if (shown < n) ar_str_printf(s, ", ... and %u more", n - shown);
}

/* For messages: long lists are cut after SC_LIST_SHOWN refs. */
static void put_axes(ar_str *s, const md_axis_ref *axes, uint32_t n) { put_axes_upto(s, axes, n, SC_LIST_SHOWN); }

const char *ru_axes_str(sc_arena *a, const md_axis_ref *axes, uint32_t n) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "[");
  put_axes(&s, axes, n);
  ar_str_puts(&s, "]");
  return ar_str_str(&s);
}

static void range_of(const md_axis_ref *r, const md_mesh *mesh, int64_t *lo, int64_t *hi) {
  if (r->sub) {
    *lo = r->pre_size;
    *hi = r->pre_size * r->size;
    return;
  }
  *lo = 1;
  int k = md_mesh_axis_index(mesh, r->name);
  *hi = k >= 0 ? mesh->axes[k].size : (r->size > 0 ? r->size : INT64_MAX);
}

bool ru_axes_overlap(const md_axis_ref *a, const md_axis_ref *b, const md_mesh *mesh) {
  if (!ir_span_same(a->name, b->name)) return false;
  int64_t alo, ahi, blo, bhi;
  range_of(a, mesh, &alo, &ahi);
  range_of(b, mesh, &blo, &bhi);
  /* sub-axis ranges are multiplicative: [lo, hi) in the sense of pre-size .. pre-size*size */
  return alo < bhi && blo < ahi;
}

bool ru_axis_eq(const md_axis_ref *a, const md_axis_ref *b, const md_mesh *mesh) {
  if (!ir_span_same(a->name, b->name)) return false;
  int64_t alo, ahi, blo, bhi;
  range_of(a, mesh, &alo, &ahi);
  range_of(b, mesh, &blo, &bhi);
  return alo == blo && ahi == bhi;
}

bool ru_op_inside(const ir_op *op, const ir_op *anc) {
  for (const ir_op *p = op ? op->parent_op : NULL; p; p = p->parent_op)
    if (p == anc) return true;
  return false;
}

bool ru_value_inside(const ir_value *v, const ir_op *anc) {
  if (!v) return true;
  if (ir_value_def(v)) return ru_op_inside(ir_value_def(v), anc);
  if (ir_value_block(v) && ir_value_block(v)->parent && ir_value_block(v)->parent->parent) {
    const ir_op *owner = ir_value_block(v)->parent->parent;
    return owner == anc || ru_op_inside(owner, anc);
  }
  return true;
}

/* Every operand of ctx->module indexed once, so that use queries cost their answer (plus a log), not a
 * scan of the module per query (quadratic with one query per op). */
struct ru_use_index {
  const ir_module *module;
  const ir_value **sorted; /* every operand value, sorted by address: use counts */
  uint32_t noperands;
  uint32_t *first;         /* per def op id: its uses are by_def[first[id], first[id + 1]) */
  ru_use *by_def;
};

static int cmp_value_ptr(const void *x, const void *y) {
  uintptr_t a = (uintptr_t) * (const ir_value *const *)x, b = (uintptr_t) * (const ir_value *const *)y;
  return a < b ? -1 : a > b;
}

static struct ru_use_index *use_index(ru_ctx *ctx) {
  const ir_module *m = ctx->module;
  if (ctx->uses && ctx->uses->module == m) return ctx->uses;
  struct ru_use_index *x = ar_calloc(ctx->arena, 1, sizeof *x);
  x->module = m;
  uint32_t total = 0;
  for (uint32_t i = 0; i < m->nops; i++) total += m->ops[i]->noperands;
  ar_step(ctx->arena, total);
  x->sorted = ar_alloc(ctx->arena, (total ? total : 1) * sizeof *x->sorted);
  x->first = ar_calloc(ctx->arena, (size_t)m->nops + 1, sizeof *x->first);
  x->by_def = ar_alloc(ctx->arena, (total ? total : 1) * sizeof *x->by_def);
  /* Counting sort by the defining op's id keeps module order within each op's uses. */
  for (uint32_t i = 0; i < m->nops; i++)
    for (uint32_t k = 0; k < m->ops[i]->noperands; k++) {
      const ir_value *v = m->ops[i]->operands[k];
      x->sorted[x->noperands++] = v;
      if (v && ir_value_def(v) && ir_value_def(v)->id < m->nops) x->first[ir_value_def(v)->id + 1]++;
    }
  for (uint32_t i = 0; i < m->nops; i++) x->first[i + 1] += x->first[i];
  uint32_t *fill = ar_alloc(ctx->arena, ((size_t)m->nops + 1) * sizeof *fill);
  memcpy(fill, x->first, ((size_t)m->nops + 1) * sizeof *fill);
  for (uint32_t i = 0; i < m->nops; i++)
    for (uint32_t k = 0; k < m->ops[i]->noperands; k++) {
      const ir_value *v = m->ops[i]->operands[k];
      if (v && ir_value_def(v) && ir_value_def(v)->id < m->nops) x->by_def[fill[ir_value_def(v)->id]++] = (ru_use){m->ops[i], k};
    }
  qsort(x->sorted, x->noperands, sizeof *x->sorted, cmp_value_ptr);
  ctx->uses = x;
  return x;
}

uint32_t ru_value_uses(ru_ctx *ctx, const ir_value *v) {
  const struct ru_use_index *x = use_index(ctx);
  /* The first sorted entry not below v, then count the run of v. */
  uint32_t lo = 0, hi = x->noperands;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if ((uintptr_t)x->sorted[mid] < (uintptr_t)v) lo = mid + 1;
    else hi = mid;
  }
  uint32_t n = 0;
  while (lo + n < x->noperands && x->sorted[lo + n] == v) n++;
  return n;
}

const ru_use *ru_op_uses(ru_ctx *ctx, const ir_op *op, uint32_t *n) {
  const struct ru_use_index *x = use_index(ctx);
  if (op->id >= ctx->module->nops || ctx->module->ops[op->id] != op) {
    *n = 0;
    return NULL;
  }
  *n = x->first[op->id + 1] - x->first[op->id];
  return x->by_def + x->first[op->id];
}

const char *ru_mesh_ref(sc_arena *a, const md_mesh *m) {
  return m && m->name.n ? ar_printf(a, "@%.*s", SC_SPAN_ARG(m->name)) : ru_mesh_str(a, m);
}

const char *ru_mesh_str(sc_arena *a, const md_mesh *m) {
  if (!m) return "<unknown mesh>";
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "#sdy.mesh<[");
  md_mesh_axes_put(&s, m, '"', ", ");
  ar_str_puts(&s, "]");
  if (m->ndevice_ids) {
    ar_str_puts(&s, ", device_ids=[");
    uint32_t shown = m->ndevice_ids < SC_LIST_SHOWN ? m->ndevice_ids : SC_LIST_SHOWN;
    for (uint32_t i = 0; i < shown; i++) ar_str_printf(&s, "%s%" PRId64, i ? ", " : "", m->device_ids[i]);
    if (shown < m->ndevice_ids) ar_str_printf(&s, ", ... and %u more", m->ndevice_ids - shown);
    ar_str_puts(&s, "]");
  }
  ar_str_puts(&s, ">");
  return ar_str_str(&s);
}

const char *ru_sharding_str(sc_arena *a, const md_sharding *s) {
  if (!s) return "<none>";
  if (s->source == SC_SHARDING_FROM_GSPMD && s->text.n) return ar_printf(a, SC_QUOTE_FMT, SC_QUOTE_ARG(s->text));
  ar_str t = SC_ASTR_INIT(a);
  if (s->mesh_name.n) ar_str_printf(&t, "<@%.*s, [", SC_SPAN_ARG(s->mesh_name));
  else ar_str_puts(&t, "<mesh<...>, [");
  uint32_t shown = s->rank < SC_LIST_SHOWN ? s->rank : SC_LIST_SHOWN;
  for (uint32_t d = 0; d < shown; d++) {
    const md_dim_sharding *dim = &s->dims[d];
    ar_str_puts(&t, d ? ", {" : "{");
    put_axes(&t, dim->axes, dim->naxes);
    if (dim->open) ar_str_puts(&t, dim->naxes ? ", ?" : "?");
    ar_str_puts(&t, "}");
    if (dim->priority >= 0) ar_str_printf(&t, "p%" PRId64, dim->priority);
  }
  if (shown < s->rank) ar_str_printf(&t, ", ... and %u more", s->rank - shown);
  ar_str_puts(&t, "]");
  if (s->nreplicated) {
    ar_str_puts(&t, ", replicated={");
    put_axes(&t, s->replicated, s->nreplicated);
    ar_str_puts(&t, "}");
  }
  if (s->nunreduced) {
    ar_str_printf(&t, ", unreduced=%s{",
                   s->unreduced_op == SC_REDUCE_MAX ? "max" : s->unreduced_op == SC_REDUCE_MIN ? "min" : "");
    put_axes(&t, s->unreduced, s->nunreduced);
    ar_str_puts(&t, "}");
  }
  ar_str_puts(&t, ">");
  return ar_str_str(&t);
}

bool ru_meshes_match(const md_mesh *x, const md_mesh *y) {
  if (x == y) return true;
  if (!x || !y) return false;
  if (x->name.n && y->name.n) return ir_span_same(x->name, y->name);
  if (x->naxes != y->naxes || x->ndevice_ids != y->ndevice_ids) return false;
  for (uint32_t i = 0; i < x->naxes; i++)
    if (!ir_span_same(x->axes[i].name, y->axes[i].name) || x->axes[i].size != y->axes[i].size) return false;
  for (uint32_t i = 0; i < x->ndevice_ids; i++)
    if (x->device_ids[i] != y->device_ids[i]) return false;
  return true;
}

/* ---- text positions inside a Shardy sharding (for machine-applicable fixes) --------------------- */

static bool in_buffer(const ir_module *m, ir_span s) {
  return s.n && s.p >= m->buf && s.p + s.n <= m->buf + m->len;
}

/* Walks `<mesh-or-ref, [dims], replicated={...}, unreduced=...{...}>`; fills the requested pieces. */
bool ru_sharding_piece(const ir_module *m, const md_sharding *s, int what, uint32_t dim, uint32_t *off, uint32_t *len) {
  if (!s || s->source != SC_SHARDING_FROM_SDY || !in_buffer(m, s->text)) return false;
  const char *p = s->text.p, *e = s->text.p + s->text.n;
  int depth = 0;
  bool in_dims = false, seen_dims = false;
  uint32_t d = 0;
  for (; p < e; p++) {
    char c = *p;
    if (c == '"') {
      p = ir_skip_string(p, e) - 1; /* the loop steps past the closing quote */
      continue;
    }
    if (c == '<' || c == '[' || c == '{' || c == '(') {
      depth++;
      if (c == '[' && depth == 2 && !seen_dims && p > s->text.p && (p[-1] == ' ' || p[-1] == ',')) {
        in_dims = true;
        seen_dims = true;
        continue;
      }
      if (c == '{' && in_dims && depth == 3) {
        const char *q = p;
        int dd = 0;
        for (; q < e; q++) {
          if (*q == '"') {
            q = ir_skip_string(q, e) - 1; /* the loop steps past the closing quote */
            continue;
          }
          if (*q == '{') dd++;
          else if (*q == '}' && --dd == 0) break;
        }
        if (q >= e) return false;
        if (d == dim && what == RU_PIECE_PRIORITY) {
          const char *r = q + 1;
          if (r < e && *r == 'p') {
            const char *t = r + 1;
            while (t < e && *t >= '0' && *t <= '9') t++;
            *off = (uint32_t)(r - m->buf);
            *len = (uint32_t)(t - r);
            return true;
          }
          return false;
        }
        d++;
        depth--;
        p = q;
        continue;
      }
      if (c == '{' && depth == 2 && (what == RU_PIECE_REPLICATED || what == RU_PIECE_UNREDUCED)) {
        /* the keyword before '=' */
        const char *k = p - 1;
        while (k > s->text.p && (*k == '=' || *k == ' ' || (*k >= 'a' && *k <= 'z'))) k--;
        ir_span kw = ir_span_of(k + 1, (uint32_t)(p - k - 1));
        bool repl = ir_span_starts(ir_span_trim(kw), "replicated");
        if ((what == RU_PIECE_REPLICATED) == repl) {
          const char *q = p;
          while (q < e && *q != '}') q = *q == '"' ? ir_skip_string(q, e) : q + 1;
          if (q >= e) return false;
          *off = (uint32_t)(p - m->buf);
          *len = (uint32_t)(q + 1 - p);
          return true;
        }
      }
    } else if (c == '>' || c == ']' || c == '}' || c == ')') {
      if (c == ']' && in_dims && depth == 2) in_dims = false;
      depth--;
    }
  }
  return false;
}

const char *ru_axes_set_str(sc_arena *a, const md_axis_ref *axes, uint32_t n) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "{");
  put_axes_upto(&s, axes, n, UINT32_MAX); /* machine fixes insert it: never cut */
  ar_str_puts(&s, "}");
  return ar_str_str(&s);
}

/* A copy of `axes` sorted by the mesh order (axis index, then pre-size); equal keys keep their order. */
typedef struct {
  int axis;
  int64_t pre;
  uint32_t at;
} sort_key;

static int sort_key_cmp(const void *x, const void *y) {
  const sort_key *a = x, *b = y;
  if (a->axis != b->axis) return a->axis < b->axis ? -1 : 1;
  if (a->pre != b->pre) return a->pre < b->pre ? -1 : 1;
  return a->at < b->at ? -1 : a->at > b->at;
}

md_axis_ref *ru_sorted_axes(sc_arena *a, const md_axis_ref *axes, uint32_t n, const md_mesh *mesh) {
  ar_step(a, n);
  sort_key *keys = ar_calloc(a, n ? n : 1, sizeof *keys);
  for (uint32_t i = 0; i < n; i++)
    keys[i] = (sort_key){md_mesh_axis_index(mesh, axes[i].name), axes[i].sub ? axes[i].pre_size : 1, i};
  qsort(keys, n, sizeof *keys, sort_key_cmp);
  md_axis_ref *v = ar_calloc(a, n ? n : 1, sizeof *v);
  for (uint32_t i = 0; i < n; i++) v[i] = axes[keys[i].at];
  return v;
}

/* ---- per-request cache of site problems --------------------------------------------------------- */

static void collect_site(ru_ctx *ctx, const ru_site *site, void *user) {
  site_cache *c = user;
  const char *rule = NULL;
  if (!ru_site_problem(ctx, site, &rule)) return;
  site_problem p = {*site, rule};
  SC_PUSH(ctx->arena, c->problems, p);
}

md_memo *ru_memo(ru_ctx *ctx) { return &cache_of(ctx)->verdicts; }

void ru_report_site_problems(ru_ctx *ctx, ru_site_fn report) {
  if (!ctx->model) return;
  site_cache *c = cache_of(ctx);
  if (!c->collected) {
    c->collected = true;
    ru_for_each_sdy_site(ctx, collect_site, c);
  }
  for (size_t i = 0; i < c->problems.n; i++)
    if (!strcmp(c->problems.v[i].rule, ctx->rule->name)) report(ctx, &c->problems.v[i].site, NULL);
}

/* ---- tensor tiling context (report pictures) ---- */

/* "name=size" per mesh axis of a named sharding's mesh; false if the picture would not be faithful. */
static bool tiling_named(ru_ctx *ctx, const md_sharding *s, const md_mesh *mesh, const char **axes, const char **dims) {
  sc_arena *a = ctx->arena;
  if (!mesh || mesh->device_ids || mesh->maximal || mesh->naxes > RU_TILING_MAX_AXES) return false;
  for (uint32_t i = 0; i < mesh->naxes; i++)
    axes[i] = ar_printf(a, "%.*s=%" PRId64, SC_SPAN_ARG(mesh->axes[i].name), mesh->axes[i].size);
  for (uint32_t d = 0; d < s->rank; d++) {
    ar_str b = SC_ASTR_INIT(a);
    for (uint32_t k = 0; k < s->dims[d].naxes; k++) {
      const md_axis_ref *r = &s->dims[d].axes[k];
      int idx = md_mesh_axis_index(mesh, r->name);
      if (idx < 0) return false;
      if (r->sub) ar_str_printf(&b, "%s%d:(%" PRId64 ")%" PRId64, k ? "," : "", idx, r->pre_size, r->size);
      else ar_str_printf(&b, "%s%d", k ? "," : "", idx);
    }
    dims[d] = ar_str_str(&b);
  }
  return true;
}

/* A GSPMD tile assignment in iota order as a mesh of its tile dimensions. */
static bool tiling_gspmd(ru_ctx *ctx, const md_sharding *s, uint32_t rank, const char **axes, const char **dims) {
  sc_arena *a = ctx->arena;
  uint32_t extra = s->tiles->ntile_dims - rank;
  if (s->tiles->ntile_dims < rank || s->tiles->ntile_dims > RU_TILING_MAX_AXES || extra > 1 || (extra && !s->tiles->last_tile_dim_replicate))
    return false;
  if (!s->tiles->tile_devices) return false;
  for (uint64_t i = 0; i < s->tiles->ntile_devices; i++) /* device order iota: the picture's numbering */
    if (s->tiles->tile_devices[i] != (int64_t)i) return false;
  for (uint32_t d = 0; d < s->tiles->ntile_dims; d++) {
    axes[d] = d < rank ? ar_printf(a, "dim%u=%" PRId64, d, s->tiles->tile_dims[d])
                       : ar_printf(a, "replicated=%" PRId64, s->tiles->tile_dims[d]);
    if (d < rank) dims[d] = ar_printf(a, "%u", d);
  }
  return true;
}

void ru_tensor_context(ru_ctx *ctx, sc_diag *d, const md_sharding *s, ir_span type, const char *what, int32_t dim) {
  sc_arena *a = ctx->arena;
  md_shape sh;
  if (!d || !s || !type.n || !md_parse_shape(a, type, &sh) || sh.kind != SC_SHAPE_ARRAY) return;
  uint32_t rank = (uint32_t)sh.rank;
  if (rank > RU_TILING_MAX_AXES) return;
  const char *axes[RU_TILING_MAX_AXES], *dims[RU_TILING_MAX_AXES];
  uint32_t naxes, ndims;
  if (s->kind == SC_SHARDING_NAMED && !(s->source == SC_SHARDING_FROM_GSPMD && s->tiles->tile_dims)) {
    const md_mesh *mesh = md_model_sharding_mesh(ctx->model, s);
    if (s->rank > RU_TILING_MAX_AXES || !tiling_named(ctx, s, mesh, axes, dims)) return;
    naxes = mesh->naxes, ndims = s->rank;
  } else if (s->tiles->tile_dims && (s->kind == SC_SHARDING_TILED || s->kind == SC_SHARDING_NAMED)) {
    if (!tiling_gspmd(ctx, s, rank, axes, dims)) return;
    naxes = s->tiles->ntile_dims, ndims = rank;
  } else {
    return;
  }
  const char *shape[RU_TILING_MAX_AXES];
  for (uint32_t i = 0; i < rank; i++) shape[i] = ar_printf(a, "%" PRId64, sh.dims[i]);
  ru_diag_context(ctx, d, "tensor", what);
  ru_diag_context_list(ctx, d, "tensor_shape", shape, rank);
  ru_diag_context_list(ctx, d, "tensor_mesh", axes, naxes);
  ru_diag_context_list(ctx, d, "tensor_dim_axes", dims, ndims);
  if (dim >= 0) ru_diag_context(ctx, d, "tensor_dim", ar_printf(a, "%d", dim));
}
