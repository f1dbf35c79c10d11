/* sharding.c — propagation's tensor shardings, the factor projection and basic factor propagation
 * (see sharding.h; the semantics are those of Shardy's AxisRefAttr, ShardingProjection and
 * BasicFactorPropagation). */
#include <inttypes.h>
#include <string.h>

#include "propagate/sharding.h"

/* ---- axis references ----------------------------------------------------------------------------- */

/* Sizes come from the input (tensor dimensions, sub-axis sizes): products saturate instead of overflowing. */
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t pre_of(prop_axis a) { return a.pre ? a.pre : 1; }
static int64_t next_pre_of(prop_axis a) { return a.pre ? sat_mul(a.pre, a.size) : a.size; }

static bool axis_eq(prop_axis a, prop_axis b) { return a.axis == b.axis && a.pre == b.pre && a.size == b.size; }

/* a contains b: the same axis and b's range lies within a's. */
static bool axis_contains(prop_axis a, prop_axis b) {
  if (a.axis != b.axis) return false;
  if (!a.pre) return true;
  if (!b.pre) return false;
  return a.pre <= b.pre && next_pre_of(a) >= next_pre_of(b);
}

static bool axis_prefix_of(prop_axis a, prop_axis b) { return axis_contains(b, a) && pre_of(a) == pre_of(b); }

static bool axis_overlaps(prop_axis a, prop_axis b) {
  if (a.axis != b.axis) return false;
  if (!a.pre || !b.pre) return true;
  return a.pre < next_pre_of(b) && b.pre < next_pre_of(a);
}

static bool sub_axes_coexist(int64_t min_pre, int64_t max_pre, int64_t min_next, int64_t max_next) {
  if (min_next > max_pre)
    return min_next % max_pre == 0 && max_pre % min_pre == 0 && max_next % min_next == 0;
  return max_pre % min_next == 0;
}

static bool axis_can_coexist(prop_axis a, prop_axis b) {
  if (a.axis != b.axis || !a.pre || !b.pre) return true;
  int64_t min_pre = a.pre < b.pre ? a.pre : b.pre, max_pre = a.pre < b.pre ? b.pre : a.pre;
  int64_t an = next_pre_of(a), bn = next_pre_of(b);
  return sub_axes_coexist(min_pre, max_pre, an < bn ? an : bn, an < bn ? bn : an);
}

/* The prefix of `a` that does not overlap `b`; false when there is none. */
static bool axis_prefix_without_overlap(prop_axis a, prop_axis b, prop_axis *out) {
  if (!axis_can_coexist(a, b)) return false;
  if (!axis_overlaps(a, b)) {
    *out = a;
    return true;
  }
  int64_t ap = pre_of(a), bp = pre_of(b);
  if (ap >= bp) return false;
  prop_axis r = {a.axis, ap, bp / ap};
  *out = r;
  return true;
}

static bool axis_prefix_without_overlap_list(prop_axis a, prop_axes list, prop_axis *out) {
  for (uint32_t i = 0; i < list.n; i++)
    if (!axis_prefix_without_overlap(a, list.v[i], &a)) return false;
  *out = a;
  return true;
}

bool prop_axis_eq(prop_axis a, prop_axis b) { return axis_eq(a, b); }
bool prop_axis_overlaps(prop_axis a, prop_axis b) { return axis_overlaps(a, b); }
bool prop_axis_can_coexist(prop_axis a, prop_axis b) { return axis_can_coexist(a, b); }
bool prop_axis_contains(prop_axis a, prop_axis b) { return axis_contains(a, b); }
bool prop_axis_prefix_of(prop_axis a, prop_axis b) { return axis_prefix_of(a, b); }
bool prop_axis_prefix_without_overlap(prop_axis a, prop_axis b, prop_axis *out) {
  return axis_prefix_without_overlap(a, b, out);
}

static bool axes_eq(prop_axes a, prop_axes b) {
  if (a.n != b.n) return false;
  for (uint32_t i = 0; i < a.n; i++)
    if (!axis_eq(a.v[i], b.v[i])) return false;
  return true;
}

/* An arena vector of axes: appends copy on growth (lists are short: a few axes). */
typedef struct {
  sc_arena *a;
  prop_axes axes;
  uint32_t cap;
} axes_builder;

static void ab_push(axes_builder *b, prop_axis x) {
  if (b->axes.n == b->cap) {
    uint32_t cap = b->cap ? b->cap * 2 : 4;
    b->axes.v = ar_grow(b->a, b->axes.v, b->axes.n, cap, sizeof *b->axes.v);
    b->cap = cap;
  }
  b->axes.v[b->axes.n++] = x;
}

/* Appends `x`, merged into the last axis when they are consecutive sub-axes of one axis (a merge that
 * covers the whole axis becomes the axis). */
static void ab_push_or_merge(axes_builder *b, prop_axis x, const md_mesh *mesh) {
  if (b->axes.n) {
    prop_axis *last = &b->axes.v[b->axes.n - 1];
    if (last->axis == x.axis && last->pre && x.pre && next_pre_of(*last) == x.pre) {
      last->size = sat_mul(last->size, x.size);
      if (last->pre == 1 && last->size == mesh->axes[x.axis].size) last->pre = 0;
      return;
    }
  }
  ab_push(b, x);
}

static prop_axes axes_copy(sc_arena *a, prop_axes xs) {
  prop_axes r = {NULL, xs.n};
  if (xs.n) {
    r.v = ar_alloc(a, xs.n * sizeof *r.v);
    memcpy(r.v, xs.v, xs.n * sizeof *r.v);
  }
  return r;
}

/* ---- tensor shardings ---------------------------------------------------------------------------- */

static bool axes_from_model(sc_arena *a, const md_axis_ref *refs, uint32_t n, const md_mesh *mesh, prop_axes *out) {
  out->n = n;
  out->v = n ? ar_alloc(a, n * sizeof *out->v) : NULL;
  for (uint32_t i = 0; i < n; i++) {
    int k = md_mesh_axis_index(mesh, refs[i].name);
    if (k < 0) return false;
    /* a sub-axis the verifier refuses (pre-size below 1, or pre-size x size not dividing the axis) places
     * nothing: pre-size 0 would read as the whole axis with the sub-axis's size */
    int64_t full = mesh->axes[k].size;
    if (refs[i].sub && (refs[i].pre_size < 1 || refs[i].size < 1 || refs[i].pre_size > full || full % refs[i].pre_size ||
                        (full / refs[i].pre_size) % refs[i].size))
      return false;
    prop_axis x = {(uint32_t)k, refs[i].sub ? refs[i].pre_size : 0, refs[i].sub ? refs[i].size : mesh->axes[k].size};
    if (x.size < 1 || x.size > INT32_MAX || (x.pre && (x.pre < 1 || x.pre > INT32_MAX))) return false;
    out->v[i] = x;
  }
  return true;
}

const prop_sharding *prop_sharding_from_model(sc_arena *a, const md_sharding *s, const md_mesh *mesh) {
  /* a sharding on a maximal mesh is kept: it stops propagation through the ops that use it */
  if (!s || !mesh || (s->kind != SC_SHARDING_NAMED && !(s->kind == SC_SHARDING_MAXIMAL && mesh->maximal))) return NULL;
  prop_sharding *r = ar_calloc(a, 1, sizeof *r);
  r->mesh = mesh;
  r->mesh_name = mesh->name.n ? mesh->name : s->mesh_name;
  r->rank = s->rank;
  r->dims = ar_calloc(a, s->rank ? s->rank : 1, sizeof *r->dims);
  for (uint32_t d = 0; d < s->rank; d++) {
    if (!axes_from_model(a, s->dims[d].axes, s->dims[d].naxes, mesh, &r->dims[d].axes)) return NULL;
    r->dims[d].closed = !s->dims[d].open;
    r->dims[d].priority = s->dims[d].priority;
  }
  if (!axes_from_model(a, s->replicated, s->nreplicated, mesh, &r->replicated)) return NULL;
  if (!axes_from_model(a, s->unreduced, s->nunreduced, mesh, &r->unreduced)) return NULL;
  r->unreduced_op = s->unreduced_op;
  return r;
}

prop_sharding *prop_sharding_open(sc_arena *a, const md_mesh *mesh, ir_span mesh_name, uint32_t rank) {
  prop_sharding *r = ar_calloc(a, 1, sizeof *r);
  r->mesh = mesh;
  r->mesh_name = mesh_name;
  r->rank = rank;
  r->dims = ar_calloc(a, rank ? rank : 1, sizeof *r->dims);
  for (uint32_t d = 0; d < rank; d++) r->dims[d].priority = -1;
  return r;
}

static void put_axis(ar_str *out, const md_mesh *mesh, prop_axis x) {
  ir_span name = mesh->axes[x.axis].name;
  if (x.pre) ar_str_printf(out, "\"%.*s\":(%" PRId64 ")%" PRId64, SC_SPAN_ARG(name), x.pre, x.size);
  else ar_str_printf(out, "\"%.*s\"", SC_SPAN_ARG(name));
}

static void put_axes(ar_str *out, const md_mesh *mesh, prop_axes xs) {
  for (uint32_t i = 0; i < xs.n; i++) {
    if (i) ar_str_puts(out, ", ");
    put_axis(out, mesh, xs.v[i]);
  }
}

/* A mesh written inline in the sharding, as MLIR prints it: mesh<["a"=2, "b"=4], device_ids=[...]>. */
static void put_inline_mesh(ar_str *out, const md_mesh *mesh) {
  ar_str_puts(out, "mesh<[");
  for (uint32_t i = 0; mesh && i < mesh->naxes; i++)
    ar_str_printf(out, "%s\"%.*s\"=%" PRId64, i ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name), mesh->axes[i].size);
  ar_str_puts(out, "]");
  for (uint32_t i = 0; mesh && i < mesh->ndevice_ids; i++)
    ar_str_printf(out, "%s%" PRId64, i ? ", " : ", device_ids=[", mesh->device_ids[i]);
  ar_str_puts(out, mesh && mesh->ndevice_ids ? "]>" : ">");
}

static void put_sharding(ar_str *out, const prop_sharding *s, bool close) {
  if (s->mesh_name.n) ar_str_printf(out, "<@%.*s, [", SC_SPAN_ARG(s->mesh_name));
  else {
    ar_str_puts(out, "<");
    put_inline_mesh(out, s->mesh);
    ar_str_puts(out, ", [");
  }
  for (uint32_t d = 0; d < s->rank; d++) {
    const prop_dim_sharding *dim = &s->dims[d];
    ar_str_puts(out, d ? ", {" : "{");
    put_axes(out, s->mesh, dim->axes);
    if (!dim->closed && !close) ar_str_puts(out, dim->axes.n ? ", ?" : "?");
    ar_str_puts(out, "}");
    if (dim->priority >= 0) ar_str_printf(out, "p%" PRId64, dim->priority);
  }
  ar_str_puts(out, "]");
  if (s->replicated.n && !close) {
    ar_str_puts(out, ", replicated={");
    put_axes(out, s->mesh, s->replicated);
    ar_str_puts(out, "}");
  }
  if (s->unreduced.n) {
    static const char *const ops[] = {"", "max", "min"};
    ar_str_printf(out, ", unreduced=%s{", s->unreduced_op < 3 ? ops[s->unreduced_op] : "");
    put_axes(out, s->mesh, s->unreduced);
    ar_str_puts(out, "}");
  }
  ar_str_puts(out, ">");
}

void prop_sharding_put(ar_str *out, const prop_sharding *s) { put_sharding(out, s, false); }

/* Shardy's TensorShardingAttr::getClosedLike: every dimension closed (priorities kept), no replicated
 * axes (they only say what an open dimension may not take), unreduced axes kept. */
void prop_sharding_put_closed(ar_str *out, const prop_sharding *s) { put_sharding(out, s, true); }

const char *prop_per_value_text(sc_arena *a, const ir_op *op, const prop_sharding *const *results, bool close) {
  const prop_sharding *any = NULL;
  for (uint32_t r = 0; r < op->nresults && !any; r++) any = results[r];
  if (!any) return "#sdy.sharding_per_value<[]>"; /* callers pass at least one; never a mesh-less guess */
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "#sdy.sharding_per_value<[");
  for (uint32_t r = 0; r < op->nresults; r++) {
    const prop_sharding *x = results[r];
    if (!x) {
      ir_tensor_type tt;
      int32_t rank = ir_parse_tensor_type(a, ir_value_type(ir_op_result(op, r)), &tt) && tt.rank > 0 ? tt.rank : 0;
      x = prop_sharding_open(a, any->mesh, any->mesh_name, (uint32_t)rank);
    }
    if (r) ar_str_puts(&s, ", ");
    put_sharding(&s, x, close);
  }
  ar_str_puts(&s, "]>");
  return ar_str_str(&s);
}

bool prop_sharding_same_layout(const prop_sharding *a, const prop_sharding *b) {
  if (a == b) return true;
  if (!a || !b || a->mesh != b->mesh || a->rank != b->rank) return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (!axes_eq(a->dims[d].axes, b->dims[d].axes)) return false;
  return axes_eq(a->unreduced, b->unreduced) && a->unreduced_op == b->unreduced_op;
}

bool prop_sharding_eq(const prop_sharding *a, const prop_sharding *b) {
  if (a == b) return true;
  if (!a || !b || a->mesh != b->mesh || a->rank != b->rank) return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d].closed != b->dims[d].closed || a->dims[d].priority != b->dims[d].priority ||
        !axes_eq(a->dims[d].axes, b->dims[d].axes))
      return false;
  return axes_eq(a->replicated, b->replicated) && axes_eq(a->unreduced, b->unreduced) && a->unreduced_op == b->unreduced_op;
}

static md_axis_ref *refs_to_model(sc_arena *a, const md_mesh *mesh, prop_axes xs) {
  md_axis_ref *r = ar_calloc(a, xs.n ? xs.n : 1, sizeof *r);
  for (uint32_t i = 0; i < xs.n; i++) {
    r[i].name = mesh->axes[xs.v[i].axis].name;
    r[i].sub = xs.v[i].pre != 0;
    r[i].pre_size = xs.v[i].pre;
    r[i].size = xs.v[i].size;
  }
  return r;
}

md_sharding *prop_sharding_to_model(sc_arena *a, const prop_sharding *s) {
  md_sharding *r = md_sharding_new(a, SC_SHARDING_NAMED, SC_SHARDING_FROM_PROPAGATION);
  ar_str text = SC_ASTR_INIT(a);
  prop_sharding_put(&text, s);
  r->text = ir_span_of(ar_str_str(&text), (uint32_t)text.n);
  r->mesh_name = s->mesh_name;
  r->mesh = s->mesh;
  r->rank = s->rank;
  r->dims = ar_calloc(a, s->rank ? s->rank : 1, sizeof *r->dims);
  for (uint32_t d = 0; d < s->rank; d++) {
    r->dims[d].axes = refs_to_model(a, s->mesh, s->dims[d].axes);
    r->dims[d].naxes = s->dims[d].axes.n;
    r->dims[d].open = !s->dims[d].closed;
    r->dims[d].priority = s->dims[d].priority;
  }
  r->replicated = refs_to_model(a, s->mesh, s->replicated);
  r->nreplicated = s->replicated.n;
  r->unreduced = refs_to_model(a, s->mesh, s->unreduced);
  r->nunreduced = s->unreduced.n;
  r->unreduced_op = s->unreduced_op;
  return r;
}

static prop_axes copy_axes(sc_arena *a, prop_axes xs) {
  prop_axes r = {xs.n ? ar_alloc(a, xs.n * sizeof *r.v) : NULL, xs.n};
  if (xs.n) memcpy(r.v, xs.v, xs.n * sizeof *r.v);
  return r;
}

static bool has_size_one_axis(const md_mesh *mesh, prop_axes xs) {
  for (uint32_t i = 0; i < xs.n; i++)
    if (!xs.v[i].pre && mesh->axes[xs.v[i].axis].size == 1) return true;
  return false;
}

static void drop_size_one_axes(const md_mesh *mesh, prop_axes *xs) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < xs->n; i++)
    if (xs->v[i].pre || mesh->axes[xs->v[i].axis].size != 1) xs->v[n++] = xs->v[i];
  xs->n = n;
}

const prop_sharding *prop_sharding_without_size_one_axes(sc_arena *a, const prop_sharding *s) {
  if (!s || !s->mesh) return s;
  bool any = has_size_one_axis(s->mesh, s->replicated) || has_size_one_axis(s->mesh, s->unreduced);
  for (uint32_t d = 0; d < s->rank && !any; d++) any = has_size_one_axis(s->mesh, s->dims[d].axes);
  if (!any) return s;
  prop_sharding *r = prop_sharding_copy(a, s);
  for (uint32_t d = 0; d < r->rank; d++) {
    drop_size_one_axes(r->mesh, &r->dims[d].axes);
    if (!r->dims[d].axes.n && r->dims[d].closed) r->dims[d].priority = -1; /* a priority needs axes or `?` */
  }
  drop_size_one_axes(r->mesh, &r->replicated);
  drop_size_one_axes(r->mesh, &r->unreduced);
  return r;
}

prop_sharding *prop_sharding_copy(sc_arena *a, const prop_sharding *s) {
  prop_sharding *r = ar_alloc(a, sizeof *r);
  *r = *s;
  r->dims = ar_alloc(a, (s->rank ? s->rank : 1) * sizeof *r->dims);
  for (uint32_t d = 0; d < s->rank; d++) {
    r->dims[d] = s->dims[d];
    r->dims[d].axes = copy_axes(a, s->dims[d].axes);
  }
  r->replicated = copy_axes(a, s->replicated);
  r->unreduced = copy_axes(a, s->unreduced);
  return r;
}

#define REBASE(p, delta) ((p) ? (void *)((char *)(p) - (delta)) : NULL)

void prop_sharding_rebase(prop_sharding *s, size_t delta) {
  s->dims = REBASE(s->dims, delta);
  for (uint32_t d = 0; d < s->rank; d++) s->dims[d].axes.v = REBASE(s->dims[d].axes.v, delta);
  s->replicated.v = REBASE(s->replicated.v, delta);
  s->unreduced.v = REBASE(s->unreduced.v, delta);
}

bool prop_sharding_empty_axes(const prop_sharding *s) {
  for (uint32_t d = 0; d < s->rank; d++)
    if (s->dims[d].axes.n) return false;
  return !s->replicated.n && !s->unreduced.n;
}

/* ---- projection ---------------------------------------------------------------------------------- */

/* The remaining part of axis `i` of `axes` (a sub-axis cut off its major part), if any. */
typedef struct {
  bool valid;
  int64_t size, pre; /* pre 0 = not split yet (the axis as written) */
  uint32_t index;
} remaining_axis;

static remaining_axis remaining_at(prop_axes axes, uint32_t i) {
  remaining_axis r = {false, 0, 0, i};
  if (i < axes.n) {
    r.valid = true;
    r.size = axes.v[i].size;
    r.pre = axes.v[i].pre;
  }
  return r;
}

static prop_axis remaining_ref(prop_axes axes, remaining_axis r) {
  prop_axis x = {axes.v[r.index].axis, r.pre, r.size};
  return x;
}

static void add_remaining(axes_builder *b, remaining_axis r, prop_axes axes, const md_mesh *mesh) {
  while (r.valid) {
    ab_push_or_merge(b, remaining_ref(axes, r), mesh);
    r = remaining_at(axes, r.index + 1);
  }
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

/* One dimension's axes split over its factors (Shardy's buildTensorFactorShardings): each factor
 * but the minor-most takes the axes (or sub-axes) whose sizes divide what is left of the factor;
 * axes that do not fit a non-minor-most factor overflow it, and factors after an overflow are closed. */
static void project_dim(sc_arena *a, prop_tensor_factors *t, const prop_dim *mapping, const prop_factor *factors,
                        prop_axes axes, bool closed, const md_mesh *mesh) {
  remaining_axis rem = remaining_at(axes, 0);
  bool overflowed = false;
  for (uint32_t k = 0; k < mapping->nfactors; k++) {
    uint32_t f = mapping->factors[k];
    prop_factor_sharding *fs = &t->factors[f];
    fs->present = true;
    fs->minor_most = k + 1 == mapping->nfactors;
    if (overflowed) {
      fs->closed = true;
      break;
    }
    fs->closed = closed;
    axes_builder b = {a, {NULL, 0}, 0};
    if (fs->minor_most) {
      add_remaining(&b, rem, axes, mesh);
      fs->axes = b.axes;
      break;
    }
    int64_t left = factors[f].size;
    int64_t g = 1;
    while (rem.valid && (rem.size == 1 || (g = gcd64(left, rem.size)) > 1)) {
      prop_axis x;
      if (rem.size > g && rem.size != 1) {
        int64_t pre = rem.pre ? rem.pre : 1;
        x = (prop_axis){axes.v[rem.index].axis, pre, g};
        rem.pre = sat_mul(pre, g);
        rem.size /= g;
        left /= g;
      } else {
        x = remaining_ref(axes, rem);
        left /= rem.size;
        rem = remaining_at(axes, rem.index + 1);
      }
      ab_push(&b, x);
    }
    fs->axes = b.axes;
    if (left > 1 && rem.valid) {
      overflowed = true;
      axes_builder o = {a, {NULL, 0}, 0};
      add_remaining(&o, rem, axes, mesh);
      fs->overflow = o.axes;
    }
  }
}

static void project_tensor(sc_arena *a, prop_tensor_factors *t, const prop_tensor *mapping, const prop_rule *rule,
                           const prop_sharding *s, bool closed_if_missing, const md_mesh *mesh) {
  t->factors = ar_calloc(a, rule->nfactors ? rule->nfactors : 1, sizeof *t->factors);
  for (uint32_t d = 0; d < mapping->rank; d++) {
    prop_axes none = {NULL, 0};
    project_dim(a, t, &mapping->dims[d], rule->factors, s ? s->dims[d].axes : none, s ? s->dims[d].closed : closed_if_missing,
                mesh);
  }
  if (s) {
    t->replicated = s->replicated;
    t->unreduced = s->unreduced;
    t->unreduced_op = s->unreduced_op;
  }
}

void prop_project(sc_arena *a, prop_projection *p, const prop_rule *rule, const md_mesh *mesh,
                  const prop_sharding *const *operands, const prop_sharding *const *results, bool closed_if_missing) {
  p->rule = rule;
  p->mesh = mesh;
  p->noperands = rule->noperands;
  p->nresults = rule->nresults;
  uint32_t n = rule->noperands + rule->nresults;
  p->tensors = ar_calloc(a, n ? n : 1, sizeof *p->tensors);
  for (uint32_t i = 0; i < rule->noperands; i++)
    project_tensor(a, &p->tensors[i], &rule->operands[i], rule, operands[i], closed_if_missing, mesh);
  for (uint32_t i = 0; i < rule->nresults; i++)
    project_tensor(a, &p->tensors[rule->noperands + i], &rule->results[i], rule, results[i], closed_if_missing, mesh);
}

static const prop_tensor *mapping_of(const prop_projection *p, uint32_t t) {
  return t < p->noperands ? &p->rule->operands[t] : &p->rule->results[t - p->noperands];
}

/* Adds `axes` to a dimension's axes (the first merged into the last when consecutive); their size. */
static int64_t add_axes(axes_builder *b, prop_axes axes, const md_mesh *mesh) {
  int64_t total = 1;
  for (uint32_t i = 0; i < axes.n; i++) {
    total = sat_mul(total, axes.v[i].size);
    if (i == 0) ab_push_or_merge(b, axes.v[i], mesh);
    else ab_push(b, axes.v[i]);
  }
  return total;
}

prop_sharding *prop_unproject(sc_arena *a, const prop_projection *p, uint32_t t, ir_span mesh_name) {
  const prop_tensor *mapping = mapping_of(p, t);
  const prop_tensor_factors *tf = &p->tensors[t];
  prop_sharding *s = prop_sharding_open(a, p->mesh, mesh_name, mapping->rank);
  for (uint32_t d = 0; d < mapping->rank; d++) {
    axes_builder b = {a, {NULL, 0}, 0};
    bool closed = false;
    for (uint32_t k = 0; k < mapping->dims[d].nfactors; k++) {
      uint32_t f = mapping->dims[d].factors[k];
      const prop_factor_sharding *fs = &tf->factors[f];
      closed |= fs->closed;
      int64_t sharded = add_axes(&b, fs->axes, p->mesh);
      if (fs->overflow.n) {
        add_axes(&b, fs->overflow, p->mesh);
        break;
      }
      if (sharded < p->rule->factors[f].size) break;
    }
    s->dims[d].axes = b.axes;
    s->dims[d].closed = closed;
  }
  s->replicated = tf->replicated;
  s->unreduced = tf->unreduced;
  s->unreduced_op = tf->unreduced_op;
  return s;
}

/* ---- basic factor propagation -------------------------------------------------------------------- */

/* Shardy's getCompatibleMajorAxesInternal: `old` and `new` merged while they agree; *can_expand stays
 * true only when nothing conflicted. */
static prop_axes compatible_major(sc_arena *a, prop_axes old, prop_axes nw, bool *can_expand) {
  axes_builder r = {a, {NULL, 0}, 0};
  uint32_t i = 0, j = 0;
  while (i < old.n && j < nw.n) {
    prop_axis o = old.v[i++], n = nw.v[j++];
    if (o.axis != n.axis) {
      *can_expand = false;
      return r.axes;
    }
    if (o.pre == n.pre && (o.pre == 0 || o.size == n.size)) {
      ab_push(&r, n);
      continue;
    }
    if (axis_prefix_of(n, o)) {
      if (j < nw.n) {
        ab_push(&r, n);
        *can_expand = false;
        return r.axes;
      }
      ab_push(&r, o);
    } else if (axis_prefix_of(o, n)) {
      if (!*can_expand || i < old.n) {
        ab_push(&r, o);
        *can_expand = false;
        return r.axes;
      }
      ab_push(&r, n);
    } else {
      *can_expand = false;
      return r.axes;
    }
  }
  for (; i < old.n; i++) ab_push(&r, old.v[i]);
  if (*can_expand)
    for (; j < nw.n; j++) ab_push(&r, nw.v[j]);
  return r.axes;
}

static prop_axes compatible_major_axes(sc_arena *a, const prop_projection *p, uint32_t f, prop_direction dir) {
  prop_axes result = {NULL, 0};
  if (dir == PROP_DIR_NONE) return result;
  bool can_expand = true;
  /* forward: operands may expand, results only constrain; backward the other way round */
  uint32_t first_begin = dir == PROP_DIR_BACKWARD ? p->noperands : 0;
  uint32_t first_end = dir == PROP_DIR_BACKWARD ? p->noperands + p->nresults : p->noperands;
  uint32_t second_begin = dir == PROP_DIR_BACKWARD ? 0 : p->noperands;
  uint32_t second_end = dir == PROP_DIR_BACKWARD ? p->noperands : p->noperands + p->nresults;
  for (uint32_t t = first_begin; t < first_end; t++)
    if (p->tensors[t].factors[f].present) result = compatible_major(a, result, p->tensors[t].factors[f].axes, &can_expand);
  if (dir != PROP_DIR_BOTH) can_expand = false;
  for (uint32_t t = second_begin; t < second_end; t++)
    if (p->tensors[t].factors[f].present) result = compatible_major(a, result, p->tensors[t].factors[f].axes, &can_expand);
  return result;
}

/* Shardy's compatiblePrefixNoConflictsWithinFactor. */
static bool prefix_within_factor(prop_axis x, const prop_tensor_factors *t, const prop_factor_sharding *fs,
                                 int64_t prev_sharded, int64_t factor_size, prop_axis *out) {
  if (!axis_prefix_without_overlap_list(x, t->replicated, &x)) return false;
  if (!axis_prefix_without_overlap_list(x, t->unreduced, &x)) return false;
  for (uint32_t i = 0; i < fs->axes.n; i++)
    if (axis_contains(fs->axes.v[i], x)) {
      *out = x;
      return true;
    }
  if (!fs->closed && !fs->overflow.n) {
    if (fs->minor_most) {
      *out = x;
      return true;
    }
    if (prev_sharded > 0 && factor_size % prev_sharded == 0) {
      int64_t g = gcd64(factor_size / prev_sharded, x.size);
      if (g == x.size) {
        *out = x;
        return true;
      }
      if (g != 1) {
        prop_axis sub = {x.axis, pre_of(x), g};
        *out = sub;
        return true;
      }
    }
  }
  if (fs->axes.n && axis_prefix_of(fs->axes.v[fs->axes.n - 1], x)) {
    *out = fs->axes.v[fs->axes.n - 1];
    return true;
  }
  return false;
}

/* Shardy's compatiblePrefixNoConflictsAcrossFactors for one tensor. */
static bool prefix_across_factors(prop_axis x, const prop_tensor_factors *tf, uint32_t nf, uint32_t f, prop_axis *out) {
  for (uint32_t g = 0; g < nf; g++) {
    if (g == f || !tf->factors[g].present) continue;
    if (!axis_prefix_without_overlap_list(x, tf->factors[g].overflow, &x)) return false;
    if (!axis_prefix_without_overlap_list(x, tf->factors[g].axes, &x)) return false;
  }
  *out = x;
  return true;
}

/* What truncation asks of each axis: where it conflicts, given the size sharded before it. */
typedef enum { CONFLICTS_ALL_TENSORS, CONFLICTS_WITHIN_FACTOR, CONFLICTS_ACROSS_FACTORS } conflict_kind;
typedef struct {
  const prop_projection *p;
  uint32_t f;
  const prop_tensor_factors *tensor; /* WITHIN / ACROSS: the one tensor */
  conflict_kind kind;
} conflicts;

static bool remove_conflicts(const conflicts *c, prop_axis x, int64_t prev_sharded, prop_axis *out) {
  const prop_projection *p = c->p;
  uint32_t nf = p->rule->nfactors;
  if (c->kind == CONFLICTS_WITHIN_FACTOR)
    return prefix_within_factor(x, c->tensor, &c->tensor->factors[c->f], prev_sharded, p->rule->factors[c->f].size, out);
  if (c->kind == CONFLICTS_ACROSS_FACTORS) return prefix_across_factors(x, c->tensor, nf, c->f, out);
  /* Shardy's compatiblePrefix over every tensor of the projection */
  for (uint32_t t = 0; t < p->noperands + p->nresults; t++) {
    const prop_tensor_factors *tf = &p->tensors[t];
    if (!prefix_across_factors(x, tf, nf, c->f, &x)) return false;
    if (tf->factors[c->f].present &&
        !prefix_within_factor(x, tf, &tf->factors[c->f], prev_sharded, p->rule->factors[c->f].size, &x))
      return false;
  }
  *out = x;
  return true;
}

/* Shardy's truncateAxesByRemovingConflicts. */
static void truncate_conflicts(const conflicts *c, prop_axes *axes, bool conservative) {
  int64_t prev_sharded = 1;
  for (uint32_t i = 0; i < axes->n; i++) {
    prop_axis x;
    if (!remove_conflicts(c, axes->v[i], prev_sharded, &x) || (conservative && x.pre)) {
      axes->n = i;
      return;
    }
    if (!axis_eq(x, axes->v[i])) {
      axes->v[i] = x;
      axes->n = i + 1;
      return;
    }
    prev_sharded = sat_mul(prev_sharded, x.size);
  }
}

typedef enum { PREFIX_NOT = 0, PREFIX_STRICT, PREFIX_EQUAL } prefix_status;

/* Shardy's isAxisListPrefixOf. */
static prefix_status list_prefix(prop_axes first, prop_axes second) {
  if (!first.n) return second.n ? PREFIX_STRICT : PREFIX_EQUAL;
  if (first.n > second.n) return PREFIX_NOT;
  for (uint32_t i = 0; i + 1 < first.n; i++)
    if (!axis_eq(first.v[i], second.v[i])) return PREFIX_NOT;
  if (first.n == second.n && axis_eq(first.v[first.n - 1], second.v[first.n - 1])) return PREFIX_EQUAL;
  return axis_prefix_of(first.v[first.n - 1], second.v[first.n - 1]) ? PREFIX_STRICT : PREFIX_NOT;
}

static bool strict_prefix(prop_axes first, prop_axes second) { return list_prefix(first, second) == PREFIX_STRICT; }

static prop_direction direction_of(const prop_projection *p, const prop_direction *directions, uint32_t f) {
  return p->rule->factors[f].blocked ? PROP_DIR_NONE : directions ? directions[f] : PROP_DIR_BOTH;
}

void prop_basic_factor_propagation(sc_arena *a, prop_projection *p, const prop_direction *directions,
                                   bool conservative, bool *updated) {
  uint32_t nt = p->noperands + p->nresults;
  for (uint32_t t = 0; t < nt; t++) updated[t] = false;
  for (uint32_t f = 0; f < p->rule->nfactors; f++) {
    prop_axes axes = compatible_major_axes(a, p, f, direction_of(p, directions, f));
    conflicts c = {p, f, NULL, CONFLICTS_ALL_TENSORS};
    truncate_conflicts(&c, &axes, conservative);
    for (uint32_t t = 0; t < nt; t++) {
      prop_factor_sharding *fs = &p->tensors[t].factors[f];
      if (fs->present && strict_prefix(fs->axes, axes)) {
        fs->axes = axes_copy(a, axes);
        updated[t] = true;
      }
    }
  }
}

/* ---- aggressive factor propagation --------------------------------------------------------------- */

/* Shardy's getPropagatedFactorSharding: the factor's axes for one tensor, or none. */
static prop_axes propagated_for_tensor(sc_arena *a, const prop_projection *p, const prop_tensor_factors *t, uint32_t f,
                                       prop_axes wanted, bool conservative) {
  prop_axes none = {NULL, 0};
  const prop_factor_sharding *fs = &t->factors[f];
  if (!fs->present) return none;
  prop_axes axes = axes_copy(a, wanted);
  conflicts within = {p, f, t, CONFLICTS_WITHIN_FACTOR};
  truncate_conflicts(&within, &axes, conservative);
  if (!strict_prefix(fs->axes, axes)) return none;
  conflicts across = {p, f, t, CONFLICTS_ACROSS_FACTORS};
  truncate_conflicts(&across, &axes, conservative);
  return axes;
}

typedef struct {
  const prop_projection *p;
  const int64_t *source_size, *sharding_size;
  const int64_t *source_index;
} factor_order;

static int64_t axes_size(prop_axes xs) {
  int64_t n = 1;
  for (uint32_t i = 0; i < xs.n; i++) n = sat_mul(n, xs.v[i].size);
  return n;
}

/* Factors in the order Shardy's aggressive strategy takes them: the largest source tensor first, then
 * (element-wise ops) the largest sharding, then the source tensor's index, then the factor's. */
static void sort_factors(uint32_t *order, uint32_t n, const int64_t *src_size, const int64_t *shard_size,
                         const int64_t *src_index) {
  for (uint32_t i = 1; i < n; i++) /* insertion sort: an op has a handful of factors */
    for (uint32_t j = i; j > 0; j--) {
      uint32_t x = order[j - 1], y = order[j];
      bool swap = src_size[y] != src_size[x]       ? src_size[y] > src_size[x]
                  : shard_size[y] != shard_size[x] ? shard_size[y] > shard_size[x]
                  : src_index[y] != src_index[x]   ? src_index[y] < src_index[x]
                                                   : y < x;
      if (!swap) break;
      order[j - 1] = y, order[j] = x;
    }
}

void prop_aggressive_factor_propagation(sc_arena *a, prop_projection *p, const prop_direction *directions,
                                        bool conservative, bool elementwise, bool *updated) {
  uint32_t nt = p->noperands + p->nresults, nf = p->rule->nfactors;
  for (uint32_t t = 0; t < nt; t++) updated[t] = false;
  prop_axes *per_factor = ar_alloc(a, (nf ? nf : 1) * sizeof *per_factor);
  bool any = false;
  for (uint32_t f = 0; f < nf; f++) {
    per_factor[f] = compatible_major_axes(a, p, f, direction_of(p, directions, f));
    any |= per_factor[f].n > 0;
  }
  if (!any) return;
  int64_t *src_size = ar_alloc(a, nf * sizeof *src_size), *src_index = ar_alloc(a, nf * sizeof *src_index);
  int64_t *shard_size = ar_alloc(a, nf * sizeof *shard_size);
  uint32_t *order = ar_alloc(a, nf * sizeof *order);
  for (uint32_t f = 0; f < nf; f++) {
    src_size[f] = src_index[f] = -1;
    shard_size[f] = elementwise ? axes_size(per_factor[f]) : 0;
    order[f] = f;
  }
  for (uint32_t t = 0; t < nt; t++) {
    const prop_tensor_factors *tf = &p->tensors[t];
    int64_t size = 1;
    for (uint32_t f = 0; f < nf; f++)
      if (tf->factors[f].present) size = sat_mul(size, p->rule->factors[f].size);
    for (uint32_t f = 0; f < nf; f++)
      if (tf->factors[f].present && per_factor[f].n && list_prefix(per_factor[f], tf->factors[f].axes) != PREFIX_NOT &&
          size > src_size[f]) {
        src_size[f] = size;
        src_index[f] = t;
      }
  }
  sort_factors(order, nf, src_size, shard_size, src_index);
  /* results first, then operands; an element-wise op's operand takes a result's longer axes */
  for (uint32_t pass = 0; pass < 2; pass++) {
    uint32_t begin = pass == 0 ? p->noperands : 0, end = pass == 0 ? nt : p->noperands;
    for (uint32_t t = begin; t < end; t++) {
      prop_tensor_factors *tf = &p->tensors[t];
      for (uint32_t k = 0; k < nf; k++) {
        uint32_t f = order[k];
        prop_axes axes = propagated_for_tensor(a, p, tf, f, per_factor[f], conservative);
        if (!axes.n) continue;
        if (pass == 1 && elementwise)
          for (uint32_t r = p->noperands; r < nt; r++)
            if (p->tensors[r].factors[f].present && strict_prefix(p->tensors[r].factors[f].axes, axes))
              axes = p->tensors[r].factors[f].axes;
        if (strict_prefix(tf->factors[f].axes, axes)) {
          tf->factors[f].axes = axes_copy(a, axes);
          updated[t] = true;
        }
      }
    }
  }
}
