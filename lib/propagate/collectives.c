/* collectives.c — sdy.reshard into collectives (see collectives.h; the algorithm is that of Shardy's
 * reshard_to_collectives.cc: the difference between the current and the output sharding shrinks with
 * every collective until both are equal). */
#include <string.h>

#include "propagate/collectives.h"
#include "propagate/engine.h"

/* ---- axis lists ------------------------------------------------------------------------------------ */

typedef struct {
  prop_axis *v;
  uint32_t n, cap;
} alist;

typedef struct {
  sc_arena *a;
  const md_mesh *mesh;
} ctx;

static bool spans_equal(ir_span a, ir_span b) { return a.n == b.n && (!a.n || !memcmp(a.p, b.p, a.n)); }

static void al_insert(sc_arena *a, alist *l, uint32_t at, prop_axis x) {
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 4;
    l->v = ar_grow(a, l->v, l->n, cap, sizeof *l->v);
    l->cap = cap;
  }
  memmove(l->v + at + 1, l->v + at, (l->n - at) * sizeof *l->v);
  l->v[at] = x;
  l->n++;
}

static void al_push(sc_arena *a, alist *l, prop_axis x) { al_insert(a, l, l->n, x); }

static void al_erase(alist *l, uint32_t at) {
  memmove(l->v + at, l->v + at + 1, (l->n - at - 1) * sizeof *l->v);
  l->n--;
}

static int al_find(const alist *l, prop_axis x) {
  for (uint32_t i = 0; i < l->n; i++)
    if (prop_axis_eq(l->v[i], x)) return (int)i;
  return -1;
}

static bool al_contains(const alist *l, prop_axis x) { return al_find(l, x) >= 0; }

static void set_insert(sc_arena *a, alist *set, prop_axis x) {
  if (!al_contains(set, x)) al_push(a, set, x);
}

static void set_erase(alist *set, prop_axis x) {
  int i = al_find(set, x);
  if (i >= 0) al_erase(set, (uint32_t)i);
}

static int64_t pre_of(prop_axis x) { return x.pre ? x.pre : 1; }
static int64_t next_pre_of(prop_axis x) { return pre_of(x) * x.size; }

/* A sub-axis [pre, pre*size) of `of`'s axis; the whole axis when it covers it. */
static prop_axis sub_axis(const md_mesh *mesh, prop_axis of, int64_t pre, int64_t size) {
  prop_axis r = {of.axis, pre, size};
  if (pre == 1 && size == mesh->axes[of.axis].size) r.pre = 0;
  return r;
}

/* Shardy's addAxisOrMerge: consecutive sub-axes of one axis merge (into the axis when they cover it). */
static void push_or_merge(ctx *c, alist *l, prop_axis x) {
  if (l->n) {
    prop_axis *last = &l->v[l->n - 1];
    if (last->axis == x.axis && last->pre && x.pre && next_pre_of(*last) == x.pre) {
      *last = sub_axis(c->mesh, *last, last->pre, last->size * x.size);
      return;
    }
  }
  al_push(c->a, l, x);
}

/* Shardy's AxisRefAttr order: by name, then a sub-axis by (pre-size, size), the whole axis right
 * after the sub-axes of pre-size 1. */
static bool axis_less(const md_mesh *mesh, prop_axis a, prop_axis b) {
  ir_span an = mesh->axes[a.axis].name, bn = mesh->axes[b.axis].name;
  if (a.axis != b.axis) {
    uint32_t n = an.n < bn.n ? an.n : bn.n;
    int cmp = memcmp(an.p, bn.p, n);
    return cmp ? cmp < 0 : an.n < bn.n;
  }
  if (!a.pre) return pre_of(b) > 1;
  if (!b.pre) return a.pre == 1;
  return a.pre != b.pre ? a.pre < b.pre : a.size < b.size;
}

static void sort_axes(const md_mesh *mesh, alist *l) {
  for (uint32_t i = 1; i < l->n; i++)
    for (uint32_t j = i; j > 0 && axis_less(mesh, l->v[j], l->v[j - 1]); j--) {
      prop_axis t = l->v[j];
      l->v[j] = l->v[j - 1];
      l->v[j - 1] = t;
    }
}

static bool axis_overlap(prop_axis a, prop_axis b, prop_axis *out) {
  if (a.axis != b.axis) return false;
  if (!a.pre) {
    *out = b;
    return true;
  }
  if (!b.pre) {
    *out = a;
    return true;
  }
  int64_t max_pre = a.pre > b.pre ? a.pre : b.pre;
  int64_t min_next = next_pre_of(a) < next_pre_of(b) ? next_pre_of(a) : next_pre_of(b);
  if (min_next <= max_pre || !prop_axis_can_coexist(a, b)) return false;
  prop_axis r = {a.axis, max_pre, min_next / max_pre};
  *out = r;
  return true;
}

static int64_t full_next_pre(const md_mesh *mesh, prop_axis x) { return x.pre ? next_pre_of(x) : mesh->axes[x.axis].size; }

static bool axis_suffix_without_overlap(const md_mesh *mesh, prop_axis a, prop_axis b, prop_axis *out) {
  if (!prop_axis_can_coexist(a, b)) return false;
  if (!prop_axis_overlaps(a, b)) {
    *out = a;
    return true;
  }
  int64_t an = full_next_pre(mesh, a), bn = full_next_pre(mesh, b);
  if (an <= bn) return false;
  prop_axis r = {a.axis, bn, an / bn};
  *out = r;
  return true;
}

/* Shardy's alignSubAxesByDecomposition: every axis of `axes` that partly overlaps one of `others`
 * (sorted, pairwise disjoint) is split into the prefix, overlap and suffix. */
static void align_list(ctx *c, alist *axes, const alist *others) {
  uint32_t i = 0;
  while (i < axes->n) {
    prop_axis x = axes->v[i];
    uint32_t k = 0;
    while (k < others->n && !prop_axis_overlaps(others->v[k], x)) k++;
    bool advanced = false;
    while (k < others->n && prop_axis_can_coexist(others->v[k], x) && !prop_axis_contains(others->v[k], x) &&
           prop_axis_overlaps(others->v[k], x)) {
      prop_axis o = others->v[k], part;
      al_erase(axes, i);
      if (prop_axis_prefix_without_overlap(x, o, &part)) al_insert(c->a, axes, i++, part);
      if (axis_overlap(x, o, &part)) al_insert(c->a, axes, i++, part);
      if (axis_suffix_without_overlap(c->mesh, x, o, &part)) {
        al_insert(c->a, axes, i, part);
        x = part;
        k++;
        advanced = false;
      } else {
        advanced = true;
        break;
      }
    }
    if (!advanced) i++;
  }
}

static alist ordered_axes(ctx *c, const alist *per_dim, uint32_t rank) {
  alist all = {0};
  for (uint32_t d = 0; d < rank; d++)
    for (uint32_t i = 0; i < per_dim[d].n; i++) al_push(c->a, &all, per_dim[d].v[i]);
  sort_axes(c->mesh, &all);
  return all;
}

static void align_dims(ctx *c, alist *per_dim, uint32_t rank, const alist *others) {
  if (!others->n) return;
  for (uint32_t d = 0; d < rank; d++) align_list(c, &per_dim[d], others);
}

static int64_t sharded_size(const alist *l) {
  int64_t s = 1;
  for (uint32_t i = 0; i < l->n; i++) s *= l->v[i].size;
  return s;
}

static bool divisible(int64_t a, int64_t b) { return a % b == 0 || b % a == 0; }

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Shardy's getAxisWithinCapacity: the part of `x` that fits `*capacity` (and the rest); updates it. */
static bool within_capacity(const md_mesh *mesh, prop_axis x, int64_t *capacity, prop_axis *within, prop_axis *rest,
                            bool *has_rest) {
  *has_rest = false;
  if (*capacity <= 1 || !divisible(x.size, *capacity)) return false;
  if (*capacity >= x.size) {
    *capacity /= x.size;
    *within = x;
    return true;
  }
  *within = sub_axis(mesh, x, pre_of(x), *capacity);
  *rest = sub_axis(mesh, x, pre_of(x) * *capacity, x.size / *capacity);
  *has_rest = true;
  *capacity = 1;
  return true;
}

/* ---- the inserter ------------------------------------------------------------------------------------ */

typedef struct {
  prop_axis axis;
  uint32_t dim, index;
} out_entry;

typedef struct {
  ctx c;
  uint32_t rank;
  const int64_t *shape;
  ir_span type;
  ir_span cur_mesh, out_mesh;
  const prop_sharding *in_sharding, *out_sharding;
  alist *in, *out, *cur, *collective, *avail_in;
  int64_t *cap;
  alist in_set;
  SC_VEC(out_entry) out_map; /* a snapshot of `out`, refreshed where Shardy refreshes it */
  SC_VEC(const char *) before, after;
} inserter;

static void rebuild_out_map(inserter *s) {
  s->out_map.n = 0;
  for (uint32_t d = 0; d < s->rank; d++)
    for (uint32_t i = 0; i < s->out[d].n; i++) {
      bool seen = false;
      for (size_t k = 0; k < s->out_map.n && !seen; k++) seen = prop_axis_eq(s->out_map.v[k].axis, s->out[d].v[i]);
      if (seen) continue;
      out_entry e = {s->out[d].v[i], d, i};
      SC_PUSH(s->c.a, s->out_map, e);
    }
}

static const out_entry *out_find(const inserter *s, prop_axis x) {
  for (size_t k = 0; k < s->out_map.n; k++)
    if (prop_axis_eq(s->out_map.v[k].axis, x)) return &s->out_map.v[k];
  return NULL;
}

static bool done(const inserter *s) {
  if (!spans_equal(s->cur_mesh, s->out_mesh)) return false;
  for (uint32_t d = 0; d < s->rank; d++)
    if (s->in[d].n || s->out[d].n) return false;
  return true;
}

static void put_axes_list(ar_str *t, const md_mesh *mesh, const alist *l) {
  prop_dim_sharding dim = {{l->v, l->n}, true, -1};
  prop_sharding one;
  memset(&one, 0, sizeof one);
  one.mesh = mesh;
  one.rank = 1;
  one.dims = &dim;
  ar_str tmp = SC_ASTR_INIT(t->a);
  prop_sharding_put(&tmp, &one); /* `<@, [{...}]>`: keep the `{...}` */
  const char *open = strchr(ar_str_str(&tmp), '{');
  const char *close = strrchr(tmp.p, '}');
  ar_str_put(t, open, (size_t)(close - open + 1));
}

static void put_axes_per_dim(ar_str *t, const inserter *s, const alist *per_dim) {
  ar_str_puts(t, "[");
  for (uint32_t d = 0; d < s->rank; d++) {
    if (d) ar_str_puts(t, ", ");
    put_axes_list(t, s->c.mesh, &per_dim[d]);
  }
  ar_str_puts(t, "]");
}

/* Emits one collective: `head` + operand + ` out_sharding=<current sharding> : type`. */
static void emit(inserter *s, const char *head) {
  prop_sharding *cur = prop_sharding_open(s->c.a, s->c.mesh, s->cur_mesh, s->rank);
  for (uint32_t d = 0; d < s->rank; d++) {
    cur->dims[d].axes.v = s->cur[d].v;
    cur->dims[d].axes.n = s->cur[d].n;
    cur->dims[d].closed = true;
  }
  cur->unreduced = s->out_sharding->unreduced;
  ar_str t = SC_ASTR_INIT(s->c.a);
  ar_str_puts(&t, " out_sharding=");
  prop_sharding_put(&t, cur);
  ar_str_printf(&t, " : %.*s", SC_SPAN_ARG(s->type));
  /* the current axes are copied: later collectives change the lists */
  const char *text = ar_str_str(&t);
  SC_PUSH(s->c.a, s->before, head);
  SC_PUSH(s->c.a, s->after, text);
}

/* Pops the axes in[from..] from the back of `current` (a sub-axis of an axis there shrinks it). */
static void pop_back_current(alist *current, const alist *in, uint32_t from) {
  for (uint32_t i = in->n; i-- > from;) {
    if (!current->n) return;
    prop_axis prefix;
    if (prop_axis_prefix_without_overlap(current->v[current->n - 1], in->v[i], &prefix)) current->v[current->n - 1] = prefix;
    else current->n--;
  }
}

/* ---- all-gather ---- */

/* The axes dimension `dim` gathers. As Shardy's loop is written (its reverse iterator steps past
 * the list's end), a last axis the output does not have gathers every remaining axis of the
 * dimension; otherwise none. */
static alist gathering_axes(inserter *s, uint32_t dim) {
  alist r = {0};
  alist *in = &s->in[dim];
  if (!in->n || out_find(s, in->v[in->n - 1])) return r;
  set_erase(&s->in_set, in->v[in->n - 1]);
  pop_back_current(&s->cur[dim], in, 0);
  for (uint32_t i = 0; i < in->n; i++) push_or_merge(&s->c, &r, in->v[i]);
  in->n = 0;
  return r;
}

static void try_all_gather(inserter *s) {
  bool any = false;
  for (uint32_t d = 0; d < s->rank; d++) {
    s->collective[d] = gathering_axes(s, d);
    any |= s->collective[d].n > 0;
  }
  if (!any) return;
  ar_str t = SC_ASTR_INIT(s->c.a);
  ar_str_puts(&t, "sdy.all_gather ");
  put_axes_per_dim(&t, s, s->collective);
  ar_str_puts(&t, " ");
  emit(s, ar_str_str(&t));
}

/* ---- distributing axes within the capacity of each dimension ---- */

typedef enum { CONSUME_NONE = 0, CONSUME_SLICING } consume_kind;

static void distribute(inserter *s, bool to_front, alist *shared, alist *per_dim, consume_kind consume, alist *slicing,
                       bool *has) {
  alist split_added = {0};
  for (uint32_t d = 0; d < s->rank; d++) {
    alist *in = &s->in[d];
    uint32_t pos = to_front ? 0 : in->n;
    alist *avail = shared ? shared : &per_dim[d];
    uint32_t i = 0;
    while (i < avail->n && s->cap[d] > 1) {
      prop_axis within, rest;
      bool has_rest;
      if (!within_capacity(s->c.mesh, avail->v[i], &s->cap[d], &within, &rest, &has_rest)) {
        i++;
        continue;
      }
      al_erase(avail, i);
      if (!to_front) pos = in->n;
      al_insert(s->c.a, in, pos++, within);
      set_insert(s->c.a, &s->in_set, within);
      if (consume == CONSUME_SLICING) {
        *has = true;
        push_or_merge(&s->c, &slicing[d], within);
        push_or_merge(&s->c, &s->cur[d], within);
      }
      if (has_rest) {
        al_push(s->c.a, &split_added, within);
        al_insert(s->c.a, avail, 0, rest);
        i++;
      }
    }
  }
  sort_axes(s->c.mesh, &split_added);
  align_dims(&s->c, s->out, s->rank, &split_added);
}

/* ---- all-slice ---- */

/* Shardy's getAxesToSliceForAllToAll: out axes [*begin, *end) of the target dimension to slice on
 * `src` so that an all-to-all can move them afterwards. */
static bool slice_for_all_to_all(inserter *s, uint32_t src, uint32_t *tgt_dim, uint32_t *begin, uint32_t *end) {
  alist *src_in = &s->in[src];
  if (!src_in->n || s->out[src].n) return false;
  const out_entry *e = out_find(s, src_in->v[src_in->n - 1]);
  if (!e) return false;
  uint32_t tgt = e->dim;
  if (s->in[tgt].n) return false;
  alist *tgt_out = &s->out[tgt];
  int found = al_find(tgt_out, src_in->v[src_in->n - 1]);
  if (found < 0) return false;
  uint32_t start = (uint32_t)found + 1;
  if (start >= tgt_out->n || al_contains(&s->in_set, tgt_out->v[start])) return false;
  int64_t common = 1;
  int64_t i = (int64_t)src_in->n - 1, j = (int64_t)start - 1;
  while (i >= 0 && j >= 0 && prop_axis_eq(src_in->v[i], tgt_out->v[j])) {
    common *= src_in->v[i].size;
    i--, j--;
  }
  for (; i >= 0; i--) {
    const out_entry *x = out_find(s, src_in->v[i]);
    if (x && x->dim == tgt) return false;
  }
  uint32_t k = start;
  int64_t added = 1;
  while (k < tgt_out->n && !al_contains(&s->in_set, tgt_out->v[k])) added *= tgt_out->v[k++].size;
  int64_t new_size = sharded_size(&s->cur[src]) * added;
  if (new_size <= 0 || s->shape[src] % new_size != 0) return false;
  s->cap[tgt] /= common * added;
  *tgt_dim = tgt;
  *begin = start;
  *end = k;
  return true;
}

static bool slicing_axes(inserter *s, alist *slicing) {
  bool has = false;
  for (uint32_t d = 0; d < s->rank; d++) {
    int64_t in_size = sharded_size(&s->in[d]), out_size = sharded_size(&s->out[d]);
    s->cap[d] = out_size / gcd64(in_size, out_size);
  }
  for (uint32_t src = 0; src < s->rank; src++) {
    uint32_t tgt, begin, end;
    if (!slice_for_all_to_all(s, src, &tgt, &begin, &end)) continue;
    has = true;
    for (uint32_t k = begin; k < end; k++) {
      prop_axis x = s->out[tgt].v[k];
      al_push(s->c.a, &s->in[src], x);
      set_insert(s->c.a, &s->in_set, x);
      push_or_merge(&s->c, &slicing[src], x);
      push_or_merge(&s->c, &s->cur[src], x);
    }
  }
  alist available = {0};
  for (uint32_t d = 0; d < s->rank; d++) {
    alist *in = &s->in[d], *out = &s->out[d];
    uint32_t k = 0;
    while (k < out->n) {
      prop_axis x = out->v[k], within, rest;
      bool has_rest;
      if (al_contains(&s->in_set, x)) {
        k++;
        continue;
      }
      if (!within_capacity(s->c.mesh, x, &s->cap[d], &within, &rest, &has_rest)) {
        al_push(s->c.a, &available, x);
        k++;
        continue;
      }
      has = true;
      push_or_merge(&s->c, &slicing[d], within);
      push_or_merge(&s->c, &s->cur[d], within);
      if (!in->n && k == 0) {
        al_erase(out, 0);
      } else {
        set_insert(s->c.a, &s->in_set, within);
        al_push(s->c.a, in, within);
        out->v[k++] = within;
      }
      if (has_rest) {
        al_insert(s->c.a, out, k++, rest);
        al_push(s->c.a, &available, rest);
      }
    }
  }
  distribute(s, false, &available, NULL, CONSUME_SLICING, slicing, &has);
  rebuild_out_map(s);
  return has;
}

static void try_all_slice(inserter *s) {
  alist *slicing = ar_calloc(s->c.a, s->rank + 1, sizeof *slicing);
  if (!slicing_axes(s, slicing)) return;
  ar_str t = SC_ASTR_INIT(s->c.a);
  ar_str_puts(&t, "sdy.all_slice ");
  put_axes_per_dim(&t, s, slicing);
  ar_str_puts(&t, " ");
  emit(s, ar_str_str(&t));
}

/* ---- collective-permute ---- */

static bool should_collective_permute(inserter *s) {
  bool has_out = false, has_in = false;
  prop_axis avail_out = {0, 0, 1}, avail_in = {0, 0, 1};
  uint8_t *seen = ar_alloc(s->c.a, s->rank + 1);
  for (uint32_t d = 0; d < s->rank; d++) {
    alist *in = &s->in[d], *out = &s->out[d];
    if (in->n && out->n && divisible(in->v[0].size, out->v[0].size)) return true;
    for (uint32_t k = 0; k < out->n; k++)
      if (!al_contains(&s->in_set, out->v[k])) avail_out = out->v[k], has_out = true;
    int64_t last_dim = -1, last_index = 0;
    memset(seen, 0, s->rank + 1);
    for (uint32_t k = 0; k < in->n; k++) {
      int64_t cur_dim = -1;
      const out_entry *e = out_find(s, in->v[k]);
      if (e) {
        cur_dim = e->dim;
        if ((cur_dim == d || seen[cur_dim]) && (last_dim != cur_dim || (int64_t)e->index != last_index + 1)) return true;
        seen[cur_dim] = 1;
        last_index = e->index;
      } else if (last_dim >= 0 && !out->n) {
        return true;
      } else {
        avail_in = in->v[k], has_in = true;
      }
      last_dim = cur_dim;
    }
  }
  return has_out && has_in && divisible(avail_out.size, avail_in.size);
}

static void perform_collective_permute(inserter *s) {
  alist available_out = {0};
  for (uint32_t d = 0; d < s->rank; d++) s->avail_in[d].n = 0;
  s->in_set.n = 0;
  for (uint32_t d = 0; d < s->rank; d++) {
    alist *in = &s->in[d], *out = &s->out[d], *cur = &s->cur[d];
    s->cap[d] = sharded_size(in);
    int64_t used = s->cap[d];
    pop_back_current(cur, in, 0);
    while (s->cap[d] > 1 && out->n) {
      prop_axis within, rest;
      bool has_rest;
      if (!within_capacity(s->c.mesh, out->v[0], &s->cap[d], &within, &rest, &has_rest)) break;
      al_erase(out, 0);
      push_or_merge(&s->c, cur, within);
      if (has_rest) al_insert(s->c.a, out, 0, rest);
    }
    for (uint32_t k = 0; k < out->n; k++) al_push(s->c.a, &available_out, out->v[k]);
    used /= s->cap[d];
    uint32_t kept = 0;
    for (uint32_t k = 0; k < in->n; k++)
      if (!out_find(s, in->v[k])) in->v[kept++] = in->v[k];
    in->n = kept;
    while (used > 1 && in->n) {
      prop_axis within, rest;
      bool has_rest;
      if (!within_capacity(s->c.mesh, in->v[0], &used, &within, &rest, &has_rest)) break;
      al_erase(in, 0);
      al_push(s->c.a, &s->avail_in[d], within);
      if (has_rest) al_insert(s->c.a, in, 0, rest);
    }
    for (uint32_t k = in->n; k-- > 0;) al_insert(s->c.a, &s->avail_in[d], 0, in->v[k]);
    in->n = 0;
  }
  distribute(s, false, &available_out, NULL, CONSUME_NONE, NULL, NULL);
  distribute(s, true, NULL, s->avail_in, CONSUME_NONE, NULL, NULL);
  alist all_in = {0};
  for (uint32_t d = 0; d < s->rank; d++)
    for (uint32_t k = 0; k < s->avail_in[d].n; k++) al_push(s->c.a, &all_in, s->avail_in[d].v[k]);
  distribute(s, true, &all_in, NULL, CONSUME_NONE, NULL, NULL);
  rebuild_out_map(s);
  for (uint32_t d = 0; d < s->rank; d++)
    for (uint32_t k = 0; k < s->in[d].n; k++) push_or_merge(&s->c, &s->cur[d], s->in[d].v[k]);
}

static void try_collective_permute(inserter *s) {
  if (should_collective_permute(s)) perform_collective_permute(s);
  else if (spans_equal(s->cur_mesh, s->out_mesh)) return;
  s->cur_mesh = s->out_mesh;
  emit(s, "sdy.collective_permute ");
}

/* ---- all-to-all ---- */

static bool all_to_all_once(inserter *s, uint32_t src, bool out_of_order) {
  alist *src_in = &s->in[src];
  int64_t i = (int64_t)src_in->n - 1, tgt = -1;
  for (; i >= 0; i--) {
    const out_entry *e = out_find(s, src_in->v[i]);
    if (!e || e->dim == src || (tgt >= 0 && (int64_t)e->dim != tgt)) break;
    tgt = e->dim;
  }
  if (tgt < 0) return false;
  uint32_t start = (uint32_t)(i + 1);
  alist *tgt_out = &s->out[tgt];
  if (!out_of_order) {
    if (tgt_out->n < src_in->n - start) return false;
    for (uint32_t k = start; k < src_in->n; k++)
      if (!prop_axis_eq(src_in->v[k], tgt_out->v[k - start])) return false;
  }
  alist axes = {0};
  pop_back_current(&s->cur[src], src_in, start);
  alist *tgt_in = &s->in[tgt];
  while (start < src_in->n) {
    prop_axis x = src_in->v[start];
    push_or_merge(&s->c, &axes, x);
    push_or_merge(&s->c, &s->cur[tgt], x);
    al_erase(src_in, start);
    set_erase(&s->in_set, x);
    if (!tgt_in->n && tgt_out->n && prop_axis_eq(tgt_out->v[0], x)) {
      al_erase(tgt_out, 0);
    } else {
      al_push(s->c.a, tgt_in, x);
      set_insert(s->c.a, &s->in_set, x);
    }
  }
  ar_str t = SC_ASTR_INIT(s->c.a);
  ar_str_puts(&t, "sdy.all_to_all [");
  put_axes_list(&t, s->c.mesh, &axes);
  ar_str_printf(&t, ": %u->%u] ", src, (uint32_t)tgt);
  emit(s, ar_str_str(&t));
  return true;
}

static void try_all_to_alls(inserter *s, bool out_of_order) {
  for (uint32_t src = 0; src < s->rank; src++)
    while (all_to_all_once(s, src, out_of_order)) ar_step(s->c.a, 1);
}

/* ---- the sequence ---- */

static alist list_of(sc_arena *a, prop_axes axes) {
  alist l = {0};
  for (uint32_t i = 0; i < axes.n; i++) al_push(a, &l, axes.v[i]);
  return l;
}

static uint32_t total_axes(const prop_sharding *s) {
  uint32_t n = s->replicated.n + s->unreduced.n;
  for (uint32_t d = 0; d < s->rank; d++) n += s->dims[d].axes.n;
  return n;
}

bool prop_collectives_for(sc_arena *a, const prop_sharding *in, const prop_sharding *out, const int64_t *shape,
                          ir_span type, prop_collectives *result) {
  memset(result, 0, sizeof *result);
  if (in->rank != out->rank || total_axes(in) + total_axes(out) > PROP_COLLECTIVE_MAX_AXES) return false;
  inserter s;
  memset(&s, 0, sizeof s);
  s.c.a = a;
  s.c.mesh = in->mesh;
  s.rank = in->rank;
  s.shape = shape;
  s.type = type;
  s.cur_mesh = in->mesh_name;
  s.out_mesh = out->mesh_name;
  s.in_sharding = in;
  s.out_sharding = out;
  uint32_t n = s.rank + 1;
  s.in = ar_calloc(a, n, sizeof *s.in);
  s.out = ar_calloc(a, n, sizeof *s.out);
  s.cur = ar_calloc(a, n, sizeof *s.cur);
  s.collective = ar_calloc(a, n, sizeof *s.collective);
  s.avail_in = ar_calloc(a, n, sizeof *s.avail_in);
  s.cap = ar_calloc(a, n, sizeof *s.cap);
  for (uint32_t d = 0; d < s.rank; d++) {
    s.in[d] = list_of(a, in->dims[d].axes);
    s.out[d] = list_of(a, out->dims[d].axes);
    s.cur[d] = list_of(a, in->dims[d].axes);
    s.cap[d] = 1;
  }
  alist in_order = ordered_axes(&s.c, s.in, s.rank), out_order = ordered_axes(&s.c, s.out, s.rank);
  align_dims(&s.c, s.in, s.rank, &out_order);
  align_dims(&s.c, s.out, s.rank, &in_order);
  for (uint32_t d = 0; d < s.rank; d++) {
    uint32_t k = 0;
    while (k < s.in[d].n && k < s.out[d].n && prop_axis_eq(s.in[d].v[k], s.out[d].v[k])) k++;
    if (k) { /* an empty list's array may be NULL */
      memmove(s.in[d].v, s.in[d].v + k, (s.in[d].n - k) * sizeof *s.in[d].v);
      s.in[d].n -= k;
      memmove(s.out[d].v, s.out[d].v + k, (s.out[d].n - k) * sizeof *s.out[d].v);
      s.out[d].n -= k;
    }
    for (uint32_t i = 0; i < s.in[d].n; i++) set_insert(a, &s.in_set, s.in[d].v[i]);
  }
  rebuild_out_map(&s);
  for (int round = 0; round < 2 && !done(&s); round++) {
    ar_step(a, 1);
    try_all_slice(&s);
    try_collective_permute(&s);
    try_all_to_alls(&s, false);
    try_all_to_alls(&s, true);
    try_all_gather(&s);
  }
  result->before = s.before.v;
  result->after = s.after.v;
  result->n = (uint32_t)s.before.n;
  return true;
}

/* ---- the pass over a module ---------------------------------------------------------------------- */

static bool fully_replicated(const prop_sharding *s) {
  for (uint32_t d = 0; d < s->rank; d++)
    if (s->dims[d].axes.n) return false;
  return true;
}

/* The same mesh, or meshes with the same axes (device order aside). */
/* Meshes with the same axes (two inline meshes both have an empty name: only a named mesh is equal by
 * its name). */
static bool equivalent_meshes(const prop_sharding *in, const prop_sharding *out) {
  if ((in->mesh_name.n && spans_equal(in->mesh_name, out->mesh_name)) || in->mesh == out->mesh) return true;
  const md_mesh *a = in->mesh, *b = out->mesh;
  if (a->naxes != b->naxes || a->maximal != b->maximal) return false;
  for (uint32_t i = 0; i < a->naxes; i++) /* device orders may differ: that is a collective permute */
    if (!spans_equal(a->axes[i].name, b->axes[i].name) || a->axes[i].size != b->axes[i].size) return false;
  return true;
}

typedef struct {
  sc_arena *a;
  const ir_module *m;
  prop_engine *e;
  prop_printer *pr;
  const char **replaced; /* per op id: the name a removed reshard's uses read instead */
  bool keep_redundant;   /* keep-redundant-reshards=true */
} pass;

/* The reshard's input through propagation barriers. */
static const ir_value *bypass_barriers(const ir_value *v) {
  for (uint32_t guard = 0; v && ir_value_def(v) && ir_value_def(v)->kind == SC_OP_SDY_PROPAGATION_BARRIER && ir_value_def(v)->noperands && guard < (1u << 30);
       guard++)
    v = ir_value_def(v)->operands[0];
  return v;
}

/* A value's name in the output: a removed reshard's replacement, else its own. */
static const char *name_of(const pass *p, const ir_value *v) {
  if (ir_value_def(v) && p->replaced[ir_value_def(v)->id]) return p->replaced[ir_value_def(v)->id];
  return ir_span_dup(p->a, v->name);
}

/* Shardy's isEquivalent: both replicated (no unreduced axes), or one mesh with the same axes on every
 * dimension and the same unreduced axes. */
static bool redundant(const prop_sharding *in, const prop_sharding *out) {
  bool in_replicated = !in || (fully_replicated(in) && !in->unreduced.n);
  bool out_replicated = !out || (fully_replicated(out) && !out->unreduced.n);
  if (in_replicated || out_replicated) return in_replicated && out_replicated;
  return in->mesh == out->mesh && prop_sharding_same_layout(in, out);
}

static void convert_reshard(pass *p, const ir_op *op) {
  if (op->noperands != 1 || op->nresults != 1 || !op->operands[0]) return;
  const prop_sharding *out = prop_engine_value_sharding(p->e, ir_op_result(op, 0));
  const ir_value *input = bypass_barriers(op->operands[0]);
  const prop_sharding *in = prop_engine_value_sharding(p->e, input);
  if (p->keep_redundant && redundant(in, out)) return;
  if (!out || out->mesh->maximal || (in && in->mesh->maximal)) return;
  ir_tensor_type tt;
  if (!ir_parse_tensor_type(p->a, ir_value_type(ir_op_result(op, 0)), &tt) || tt.rank < 0 || (uint32_t)tt.rank != out->rank) return;
  if (!in) in = prop_sharding_open(p->a, out->mesh, out->mesh_name, out->rank);
  if (in->rank != out->rank) return;
  if (fully_replicated(out)) {
    if (fully_replicated(in)) {
      prop_printer_erase(p->pr, op);
      p->replaced[op->id] = name_of(p, op->operands[0]);
      return;
    }
    prop_sharding *closed = prop_sharding_open(p->a, in->mesh, in->mesh_name, in->rank);
    for (uint32_t d = 0; d < in->rank; d++) closed->dims[d].closed = true;
    out = closed;
  }
  if (!equivalent_meshes(in, out)) return;
  prop_collectives cs;
  if (!prop_collectives_for(p->a, in, out, tt.dims, ir_value_type(ir_op_result(op, 0)), &cs)) return;
  const char *operand = name_of(p, input);
  for (uint32_t k = 0; k < cs.n; k++) {
    const char *name = prop_printer_fresh_name(p->pr);
    prop_printer_insert_before(p->pr, op, ar_printf(p->a, "%s = %s%s%s", name, cs.before[k], operand, cs.after[k]));
    operand = name;
  }
  prop_printer_erase(p->pr, op);
  p->replaced[op->id] = operand;
}

void prop_reshards_to_collectives(sc_arena *a, const ir_module *m, const md_model *model, prop_printer *pr,
                                  bool keep_redundant) {
  prop_engine_options eo = {.strategy = PROP_BASIC, .seed_only = true};
  pass p = {a, m, prop_engine_run(a, m, model, &eo), pr, ar_calloc(a, m->nops + 1, sizeof(const char *)), keep_redundant};
  pr->renumber = true;
  prop_engine_print(p.e, pr); /* signatures on one line, as sdy_opt prints them */
  for (uint32_t i = 0; i < m->nops; i++)
    if (m->ops[i]->kind == SC_OP_SDY_RESHARD) convert_reshard(&p, m->ops[i]);
  /* uses of a removed reshard read its last collective (or its input) */
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    if (p.replaced[op->id]) continue; /* removed itself */
    for (uint32_t k = 0; k < op->noperands; k++) {
      const ir_value *v = op->operands[k];
      if (v && ir_value_def(v) && p.replaced[ir_value_def(v)->id]) prop_printer_replace_operand(pr, op, k, p.replaced[ir_value_def(v)->id]);
    }
  }
}
