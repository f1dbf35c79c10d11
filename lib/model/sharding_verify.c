/* sharding_verify.c — shapes, and the checks both annotation systems share: Shardy's axis-list
 * verification (sdy/ir/verifiers.cc verifyAxisRefList & friends) and XLA's HloSharding::Validate. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/quoted.h"
#include "util/hashset.h"

/* ---- shapes ------------------------------------------------------------------------------------- */

/* Past white space and block comments (HLO tuple shapes carry comments like index=5). */
static const char *skip_space_and_comments(const char *p, const char *e) {
  for (;;) {
    p = ir_skip_space(p, e);
    if (p + 1 < e && p[0] == '/' && p[1] == '*') { /* HLO tuple shapes carry comments like index=5 */
      const char *q = p + 2;
      while (q + 1 < e && !(q[0] == '*' && q[1] == '/')) q++;
      p = q + 1 < e ? q + 2 : e;
      continue;
    }
    return p;
  }
}

/* Finds the matching close bracket for the open one at *p (one of <[({), honouring strings. */
static const char *match_close(const char *p, const char *e) {
  int depth = 0;
  for (; p < e; p++) {
    char c = *p;
    if (c == '"') {
      p = ir_skip_string(p, e) - 1; /* the loop steps past the closing quote */
      continue;
    }
    if (c == '<' && p + 1 < e && p[1] == '=') continue; /* HLO bounded dimension <=N */
    if (c == '<' || c == '[' || c == '(' || c == '{') depth++;
    else if (c == '>' || c == ']' || c == ')' || c == '}') {
      if (c == '>' && p[-1] == '-') continue; /* '->' */
      if (--depth == 0) return p;
    }
  }
  return NULL;
}

static bool parse_one_shape(sc_arena *a, const char **pp, const char *e, md_shape *out);

static bool parse_tuple_elems(sc_arena *a, const char *p, const char *close, md_shape *out) {
  SC_VEC(md_shape) v = {0};
  p = skip_space_and_comments(p, close);
  while (p < close) {
    md_shape el;
    if (!parse_one_shape(a, &p, close, &el)) return false;
    SC_PUSH(a, v, el);
    p = skip_space_and_comments(p, close);
    if (p < close && *p == ',') p = skip_space_and_comments(p + 1, close);
    else if (p < close) return false;
  }
  out->kind = SC_SHAPE_TUPLE;
  out->elems = v.v;
  out->nelems = (uint32_t)v.n;
  return true;
}

static bool parse_one_shape(sc_arena *a, const char **pp, const char *e, md_shape *out) {
  memset(out, 0, sizeof *out);
  const char *p = skip_space_and_comments(*pp, e);
  if (p >= e) return false;
  if (*p == '(') { /* HLO tuple */
    const char *close = match_close(p, e);
    if (!close) return false;
    if (!parse_tuple_elems(a, p + 1, close, out)) return false;
    *pp = close + 1;
    return true;
  }
  if (!strncmp(p, "tuple<", 6) && (size_t)(e - p) >= 6) {
    const char *close = match_close(p + 5, e);
    if (!close) return false;
    if (!parse_tuple_elems(a, p + 6, close, out)) return false;
    *pp = close + 1;
    return true;
  }
  if (!strncmp(p, "tensor<", 7) && (size_t)(e - p) >= 7) {
    const char *close = match_close(p + 6, e);
    if (!close) return false;
    const char *q = skip_space_and_comments(p + 7, close);
    if (q < close && *q == '*') {
      out->kind = SC_SHAPE_UNRANKED;
      out->rank = -1;
      *pp = close + 1;
      return true;
    }
    SC_VEC(int64_t) dims = {0};
    for (;;) {
      const char *r = q;
      int64_t d;
      if (r < close && *r == '?') {
        d = -1;
        r++;
      } else if (r < close && isdigit((unsigned char)*r)) {
        d = 0;
        while (r < close && isdigit((unsigned char)*r)) {
          if (d < INT64_MAX / 10) d = d * 10 + (*r - '0');
          r++;
        }
      } else {
        break;
      }
      if (r < close && *r == 'x') {
        SC_PUSH(a, dims, d);
        q = r + 1;
        continue;
      }
      break; /* a number not followed by 'x' is part of the element type (i32) — cannot happen here */
    }
    out->kind = SC_SHAPE_ARRAY;
    out->rank = (int32_t)dims.n;
    out->dims = dims.v;
    *pp = close + 1;
    return true;
  }
  if (*p == '!') {
    const char *q = p + 1;
    while (q < e && (isalnum((unsigned char)*q) || *q == '_' || *q == '.')) q++;
    ir_span name = ir_span_of(p, (uint32_t)(q - p));
    if (q < e && *q == '<') {
      const char *close = match_close(q, e);
      /* MPMD's `!mpmd.mesh_tensor<"mesh", tensor<...>(, sharding=...)?>` is the tensor it wraps */
      if (close && ir_span_eq(name, "!mpmd.mesh_tensor")) {
        const char *t = q + 1;
        if (t < close && *t == '"' && (t = md_quoted_end(t, close)) != NULL) {
          t = skip_space_and_comments(t + 1, close);
          if (t < close && *t == ',') {
            t = skip_space_and_comments(t + 1, close);
            if (parse_one_shape(a, &t, close, out) && out->kind == SC_SHAPE_ARRAY) {
              *pp = close + 1;
              return true;
            }
            memset(out, 0, sizeof *out);
          }
        }
      }
      if (close) q = close + 1;
    }
    out->kind = (ir_span_eq(name, "!stablehlo.token") || ir_span_eq(name, "!mhlo.token")) ? SC_SHAPE_TOKEN
                                                                                          : SC_SHAPE_OTHER;
    *pp = q;
    return true;
  }
  /* HLO: elem[dims]{layout} or token[] ; MLIR scalar builtin types (f32, i1, index) */
  const char *q = p;
  while (q < e && (isalnum((unsigned char)*q) || *q == '_')) q++;
  if (q == p) return false;
  ir_span elem = ir_span_of(p, (uint32_t)(q - p));
  const char *bracket = skip_space_and_comments(q, e); /* HLO reads `f32 [4]` as `f32[4]` */
  if (bracket < e && *bracket == '[') {
    q = bracket;
    const char *close = match_close(q, e);
    if (!close) return false;
    SC_VEC(int64_t) dims = {0};
    const char *r = skip_space_and_comments(q + 1, close);
    while (r < close) {
      int64_t d = 0;
      if (*r == '?') {
        d = -1;
        r++;
      } else {
        if (*r == '<' && r + 1 < close && r[1] == '=') r += 2; /* bounded dynamic <=N */
        if (r >= close || !isdigit((unsigned char)*r)) return false;
        while (r < close && isdigit((unsigned char)*r)) {
          if (d < INT64_MAX / 10) d = d * 10 + (*r - '0');
          r++;
        }
      }
      SC_PUSH(a, dims, d);
      r = skip_space_and_comments(r, close);
      if (r < close && *r == ',') r = skip_space_and_comments(r + 1, close);
      else if (r < close) return false;
    }
    q = close + 1;
    if (q < e && *q == '{') { /* layout */
      const char *lc = match_close(q, e);
      if (lc) q = lc + 1;
    }
    if (ir_span_eq(elem, "token")) out->kind = SC_SHAPE_TOKEN;
    else {
      out->kind = SC_SHAPE_ARRAY;
      out->rank = (int32_t)dims.n;
      out->dims = dims.v;
    }
    *pp = q;
    return true;
  }
  /* a bare MLIR builtin scalar type is not a tensor */
  out->kind = SC_SHAPE_OTHER;
  *pp = q;
  return true;
}

bool md_parse_shape(sc_arena *a, ir_span type, md_shape *out) {
  memset(out, 0, sizeof *out);
  if (!type.n || !type.p) return false; /* no type written (a NULL span: no arithmetic on it) */
  const char *p = type.p, *e = type.p + type.n;
  if (!parse_one_shape(a, &p, e, out)) return false;
  return true;
}

uint32_t md_shape_leaf_count(const md_shape *s) {
  if (s->kind != SC_SHAPE_TUPLE) return 1;
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->nelems; i++) n += md_shape_leaf_count(&s->elems[i]);
  return n;
}

/* ---- axis helpers ------------------------------------------------------------------------------- */


/* Meshes with more axes than this get a hash index; smaller ones are scanned. */
#define INDEXED_MESH_AXES 16u

void md_mesh_index_axes(sc_arena *a, md_mesh *mesh) {
  if (!mesh || mesh->naxes <= INDEXED_MESH_AXES || mesh->axis_index) return;
  ar_step(a, mesh->naxes);
  hs_name_map *index = ar_alloc(a, sizeof *index);
  hs_name_map_init(index, a, mesh->naxes);
  for (uint32_t i = 0; i < mesh->naxes; i++) hs_name_map_put(index, mesh->axes[i].name.p, mesh->axes[i].name.n, i, NULL);
  mesh->axis_index = index;
}

const char *md_axis_ref_str(sc_arena *a, const md_axis_ref *r) {
  if (r->sub) return ar_printf(a, "\"%.*s\":(%" PRId64 ")%" PRId64, SC_SPAN_ARG(r->name), r->pre_size, r->size);
  return ar_printf(a, "\"%.*s\"", SC_SPAN_ARG(r->name));
}

void md_mesh_axes_put(ar_str *s, const md_mesh *m, char quote, const char *sep) {
  uint32_t shown = m->naxes < SC_LIST_SHOWN ? m->naxes : SC_LIST_SHOWN;
  for (uint32_t i = 0; i < shown; i++)
    ar_str_printf(s, "%s%c%.*s%c=%" PRId64, i ? sep : "", quote, SC_SPAN_ARG(m->axes[i].name), quote, m->axes[i].size);
  if (shown < m->naxes) ar_str_printf(s, "%s... and %u more", sep, m->naxes - shown);
}

int md_mesh_axis_index(const md_mesh *mesh, ir_span name) {
  if (!mesh) return -1;
  if (mesh->axis_index) {
    uint32_t i;
    return hs_name_map_get(mesh->axis_index, name.p, name.n, &i) ? (int)i : -1;
  }
  for (uint32_t i = 0; i < mesh->naxes; i++)
    if (ir_span_same(mesh->axes[i].name, name)) return (int)i;
  return -1;
}

int64_t md_axis_ref_size(const md_axis_ref *r, const md_mesh *mesh) {
  if (r->sub) return r->size > 0 ? r->size : 1;
  int i = md_mesh_axis_index(mesh, r->name);
  if (i >= 0) return mesh->axes[i].size > 0 ? mesh->axes[i].size : 1;
  return r->size > 0 ? r->size : 1;
}

int64_t md_dim_sharded_size(const md_sharding *s, uint32_t dim, const md_mesh *mesh) {
  if (!s || dim >= s->rank) return 1;
  int64_t p = 1;
  for (uint32_t i = 0; i < s->dims[dim].naxes; i++) {
    int64_t z = md_axis_ref_size(&s->dims[dim].axes[i], mesh);
    if (p > INT64_MAX / z) return INT64_MAX;
    p *= z;
  }
  return p;
}

bool md_sharding_is_replicated(const md_sharding *s) {
  if (!s) return true;
  if (s->kind == SC_SHARDING_REPLICATED) return true;
  if (s->kind != SC_SHARDING_NAMED) return false;
  for (uint32_t i = 0; i < s->rank; i++)
    if (s->dims[i].naxes) return false;
  return s->nunreduced == 0;
}

/* Full-axis size for a reference (0 if the axis is unknown). */
static int64_t full_size(const md_mesh *m, ir_span name) {
  int i = md_mesh_axis_index(m, name);
  return i < 0 ? 0 : m->axes[i].size;
}

/* ---- Shardy axis verification ------------------------------------------------------------------- */

static bool can_merge(const md_axis_ref *a, const md_axis_ref *b) {
  return a->sub && b->sub && ir_span_same(a->name, b->name) && a->pre_size * a->size == b->pre_size;
}

/* Mesh order: axis index, then pre-size. */
static int ref_cmp(const md_mesh *m, const md_axis_ref *a, const md_axis_ref *b) {
  int ia = md_mesh_axis_index(m, a->name), ib = md_mesh_axis_index(m, b->name);
  if (ia != ib) return ia < ib ? -1 : 1;
  int64_t pa = a->sub ? a->pre_size : 1, pb = b->sub ? b->pre_size : 1;
  if (pa != pb) return pa < pb ? -1 : 1;
  int64_t sa = a->sub ? a->size : INT64_MAX, sb = b->sub ? b->size : INT64_MAX;
  return sa < sb ? -1 : sa > sb;
}

/* Every check is linear or n log n in the number of references (hostile shardings list thousands):
 * duplicates through a hash of (axis, pre-size, size), the per-axis checks through sorting. */
typedef struct {
  sc_arena *a;
  const md_mesh *mesh;
  SC_VEC(const md_axis_ref *) seen;
  hs_name_map seen_keys; /* (axis index, sub, pre-size, size) of every reference seen */
  const char *err;
  int kind;
} axis_check;

static void axis_check_init(axis_check *c, sc_arena *a, const md_mesh *mesh, size_t nrefs) {
  memset(c, 0, sizeof *c);
  c->a = a;
  c->mesh = mesh;
  ar_step(a, nrefs);
  hs_name_map_init(&c->seen_keys, a, nrefs);
}

typedef struct {
  int64_t axis, sub, pre_size, size;
} ref_key;

static void check_list(axis_check *c, const md_axis_ref *list, uint32_t n) {
  const md_axis_ref *prev = NULL;
  for (uint32_t i = 0; i < n && !c->err; i++) {
    const md_axis_ref *r = &list[i];
    int axis = md_mesh_axis_index(c->mesh, r->name);
    if (axis < 0) {
      c->err = ar_printf(c->a, "unknown axis name: \"%.*s\"", SC_SPAN_ARG(r->name));
      c->kind = SC_AXERR_UNKNOWN;
      return;
    }
    ref_key *key = ar_alloc(c->a, sizeof *key); /* zeroed: no padding bytes differ */
    *key = (ref_key){axis, r->sub, r->sub ? r->pre_size : 0, r->sub ? r->size : 0};
    if (!hs_name_map_put(&c->seen_keys, (const char *)key, sizeof *key, 0, NULL)) {
      c->err = ar_printf(c->a, "duplicate axis ref: %s", md_axis_ref_str(c->a, r));
      c->kind = SC_AXERR_DUPLICATE;
      return;
    }
    SC_PUSH(c->a, c->seen, r);
    if (prev && can_merge(prev, r)) {
      c->err = ar_printf(c->a, "two consecutive sub-axes can be merged: %s, %s", md_axis_ref_str(c->a, prev),
                               md_axis_ref_str(c->a, r));
      c->kind = SC_AXERR_SUB_AXIS;
      return;
    }
    prev = r;
  }
}

static void check_sorted(axis_check *c, const md_axis_ref *list, uint32_t n, const char *what) {
  for (uint32_t i = 1; i < n && !c->err; i++) {
    if (ref_cmp(c->mesh, &list[i - 1], &list[i]) > 0) {
      c->err = ar_printf(c->a, "%s axes are not ordered w.r.t. mesh", what);
      c->kind = SC_AXERR_ORDER;
      return;
    }
  }
}

static void check_sub_validity(axis_check *c) {
  for (size_t i = 0; i < c->seen.n && !c->err; i++) {
    const md_axis_ref *r = c->seen.v[i];
    int64_t fs = full_size(c->mesh, r->name);
    if (r->sub) {
      const char *s = md_axis_ref_str(c->a, r);
      c->kind = SC_AXERR_SUB_AXIS;
      if (r->pre_size < 1) {
        c->err = ar_printf(c->a, "sub-axis pre-size must be at least 1: %s", s);
        return;
      }
      if (r->size <= 1) {
        c->err = ar_printf(c->a, "sub-axis sizes must be greater than 1: %s", s);
        return;
      }
      int64_t next = (r->pre_size > INT64_MAX / r->size) ? INT64_MAX : r->pre_size * r->size;
      if (fs <= 0 || fs % next != 0) {
        c->err = ar_printf(c->a, "sub-axis next pre-size %" PRId64 " doesn't divide the size of the full axis %" PRId64
                                       ": %s",
                                 next, fs, s);
        return;
      }
      if (r->size == fs) {
        c->err = ar_printf(c->a, "sub-axis size is equal to the full axis size: %s", s);
        return;
      }
    }
  }
}

/* A sub-axis reference in mesh order: axis, pre-size, then the order it was seen in. */
typedef struct {
  int axis;
  int64_t pre_size;
  size_t at;
} sub_ref;

static int sub_ref_cmp(const void *x, const void *y) {
  const sub_ref *a = x, *b = y;
  if (a->axis != b->axis) return a->axis < b->axis ? -1 : 1;
  if (a->pre_size != b->pre_size) return a->pre_size < b->pre_size ? -1 : 1;
  return a->at < b->at ? -1 : a->at > b->at;
}

/* Same axis used both whole and as a sub-axis: reports the first such reference in seen order. */
static void check_full_and_sub(axis_check *c, const int *axis_of) {
  size_t n = c->seen.n;
  hs_name_map mixes; /* axis index -> bit 1: used whole, bit 2: used as a sub-axis */
  hs_name_map_init(&mixes, c->a, n);
  uint32_t *flags = ar_calloc(c->a, n ? n : 1, sizeof *flags);
  uint32_t *slot_of = ar_calloc(c->a, n ? n : 1, sizeof *slot_of);
  uint32_t nslots = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t slot = nslots;
    if (hs_name_map_put(&mixes, (const char *)&axis_of[i], sizeof axis_of[i], slot, &slot)) nslots++;
    slot_of[i] = slot;
    flags[slot] |= c->seen.v[i]->sub ? 2u : 1u;
  }
  for (size_t i = 0; i < n; i++)
    if (flags[slot_of[i]] == 3u) {
      c->err = ar_printf(c->a, "both sub-axis and full-axis are used for axis name: \"%.*s\"",
                               SC_SPAN_ARG(c->seen.v[i]->name));
      c->kind = SC_AXERR_DUPLICATE;
      return;
    }
}

/* Overlapping sub-axes of one axis: the first reference (seen order) that overlaps a sub-axis starting
 * at or after it, paired with the first such partner in seen order. Sub-axes are valid here, so
 * pre-size * size does not overflow. */
static void check_overlaps(axis_check *c, const int *axis_of) {
  size_t n = c->seen.n, nsub = 0;
  sub_ref *subs = ar_calloc(c->a, n ? n : 1, sizeof *subs);
  for (size_t i = 0; i < n; i++)
    if (c->seen.v[i]->sub) subs[nsub++] = (sub_ref){axis_of[i], c->seen.v[i]->pre_size, i};
  qsort(subs, nsub, sizeof *subs, sub_ref_cmp);
  size_t *pos = ar_calloc(c->a, n ? n : 1, sizeof *pos);
  for (size_t k = 0; k < nsub; k++) pos[subs[k].at] = k;
  for (size_t i = 0; i < n; i++) {
    const md_axis_ref *a = c->seen.v[i];
    if (!a->sub) continue;
    size_t k = pos[i];
    int64_t end = a->pre_size * a->size;
    if (k + 1 >= nsub || subs[k + 1].axis != subs[k].axis || subs[k + 1].pre_size >= end) continue;
    size_t partner = subs[k + 1].at;
    for (size_t q = k + 2; q < nsub && subs[q].axis == subs[k].axis && subs[q].pre_size < end; q++)
      if (subs[q].at < partner) partner = subs[q].at;
    c->err = ar_printf(c->a, "overlapping sub-axes: %s, %s", md_axis_ref_str(c->a, a),
                             md_axis_ref_str(c->a, c->seen.v[partner]));
    c->kind = SC_AXERR_DUPLICATE;
    return;
  }
}

static void check_sub_axes(axis_check *c) {
  check_sub_validity(c);
  if (c->err) return;
  int *axis_of = ar_calloc(c->a, c->seen.n ? c->seen.n : 1, sizeof *axis_of);
  for (size_t i = 0; i < c->seen.n; i++) axis_of[i] = md_mesh_axis_index(c->mesh, c->seen.v[i]->name);
  check_full_and_sub(c, axis_of);
  if (!c->err) check_overlaps(c, axis_of);
}

const char *md_sharding_verify_axes(sc_arena *a, const md_sharding *s, const md_mesh *mesh) {
  return md_sharding_verify_axes_kind(a, s, mesh, NULL);
}

const char *md_sharding_verify_axes_kind(sc_arena *a, const md_sharding *s, const md_mesh *mesh, int *kind) {
  if (kind) *kind = 0;
  if (!s || !mesh) return NULL;
  size_t nrefs = (size_t)s->nreplicated + s->nunreduced + s->nmanual_axes;
  for (uint32_t d = 0; d < s->rank; d++) nrefs += s->dims[d].naxes;
  axis_check c;
  axis_check_init(&c, a, mesh, nrefs);
  for (uint32_t d = 0; d < s->rank && !c.err; d++) check_list(&c, s->dims[d].axes, s->dims[d].naxes);
  if (!c.err) check_sorted(&c, s->replicated, s->nreplicated, "replicated");
  if (!c.err) check_list(&c, s->replicated, s->nreplicated);
  if (!c.err) check_sorted(&c, s->unreduced, s->nunreduced, "unreduced");
  if (!c.err) check_list(&c, s->unreduced, s->nunreduced);
  if (!c.err && s->source == SC_SHARDING_FROM_GSPMD) {
    check_sorted(&c, s->manual_axes, s->nmanual_axes, "manual");
    if (!c.err) check_list(&c, s->manual_axes, s->nmanual_axes);
  }
  if (!c.err) check_sub_axes(&c);
  if (kind) *kind = c.err ? c.kind : 0;
  return c.err;
}

/* ---- XLA HloSharding::Validate ------------------------------------------------------------------ */

/* Appends a shape; tuples and ranks past SC_LIST_SHOWN items are cut ("... and N more"). */
static void put_shape(ar_str *s, const md_shape *sh) {
  if (sh->kind == SC_SHAPE_TUPLE) {
    uint32_t shown = sh->nelems < SC_LIST_SHOWN ? sh->nelems : SC_LIST_SHOWN;
    ar_str_puts(s, "(");
    for (uint32_t i = 0; i < shown; i++) {
      if (i) ar_str_puts(s, ", ");
      put_shape(s, &sh->elems[i]);
    }
    if (shown < sh->nelems) ar_str_printf(s, ", ... and %u more", sh->nelems - shown);
    ar_str_puts(s, ")");
    return;
  }
  if (sh->kind != SC_SHAPE_ARRAY) {
    ar_str_puts(s, sh->kind == SC_SHAPE_TOKEN ? "token[]" : "<non-array>");
    return;
  }
  uint32_t rank = sh->rank > 0 ? (uint32_t)sh->rank : 0, shown = rank < SC_LIST_SHOWN ? rank : SC_LIST_SHOWN;
  ar_str_puts(s, "[");
  for (uint32_t i = 0; i < shown; i++) {
    if (sh->dims[i] < 0) ar_str_puts(s, i ? ",?" : "?");
    else ar_str_printf(s, "%s%" PRId64, i ? "," : "", sh->dims[i]);
  }
  if (shown < rank) ar_str_printf(s, ",... and %u more", rank - shown);
  ar_str_puts(s, "]");
}

static const char *shape_str(sc_arena *a, const md_shape *sh) {
  ar_str s = SC_ASTR_INIT(a);
  put_shape(&s, sh);
  return ar_str_str(&s);
}

static const char *device_in_range(sc_arena *a, int64_t d, int64_t num_devices) {
  if (d < 0) return ar_printf(a, "device %" PRId64 " is negative in tile assignment", d);
  if (num_devices > 0 && d >= num_devices)
    return ar_printf(a, "device %" PRId64 " >= num_devices (%" PRId64 ") in tile assignment", d, num_devices);
  return NULL;
}

static uint32_t tiled_rank(const md_sharding *s) {
  if (s->kind == SC_SHARDING_NAMED && !s->tiles->tile_dims) return s->rank;
  uint32_t sub = s->tiles->nlast_tile_dims;
  return s->tiles->ntile_dims >= sub ? s->tiles->ntile_dims - sub : 0;
}

static const char *validate_leaf(sc_arena *a, const md_sharding *s, const md_shape *shape, int64_t num_devices,
                                 bool single_ok) {
  if (shape->kind == SC_SHAPE_TUPLE) return "Validation shape is a tuple but sharding is not.";
  switch (s->kind) {
  case SC_SHARDING_REPLICATED:
  case SC_SHARDING_MANUAL:
  case SC_SHARDING_UNKNOWN:
  case SC_SHARDING_UNREDUCED:
  case SC_SHARDING_TUPLE:
    return NULL;
  case SC_SHARDING_MAXIMAL:
    return device_in_range(a, s->maximal_device, num_devices);
  default:
    break;
  }
  bool named_v3 = s->kind == SC_SHARDING_NAMED && !s->tiles->tile_dims;
  if (named_v3) {
    const char *e = md_sharding_verify_axes(a, s, s->mesh);
    if (e) return e;
  }
  if (!named_v3 && s->tiles->ntile_devices == 1 && !single_ok)
    return "Tile assignment only contains a single device. If a replicated sharding was intended, use "
           "HloSharding::Replicated(). If a device placement was intended, use HloSharding::SingleDevice()";
  /* A named sharding with no dimension list (`{mesh['x'=2] []}`) shards no dimension of any rank: XLA
   * prints and partitions it. */
  bool no_dims = named_v3 && s->rank == 0;
  if (shape->kind == SC_SHAPE_ARRAY && !no_dims && (uint32_t)shape->rank != tiled_rank(s))
    return ar_printf(a,
                           "Number of tile assignment dimensions (excluding subgroups) is different than the input "
                           "rank. sharding=" SC_QUOTE_FMT ", input_shape=%s (the sharding tiles %u dimensions, the value has %d)",
                           SC_QUOTE_ARG(s->text), shape_str(a, shape), tiled_rank(s), shape->rank);
  if (named_v3) {
    if (num_devices > 0 && s->mesh && s->mesh->devices != num_devices)
      return ar_printf(a, "sharding should have %" PRId64 " devices but has %" PRId64, num_devices,
                             s->mesh->devices);
    return NULL;
  }
  if (s->tiles->niota_reshape) {
    if (num_devices > 0 && (int64_t)s->tiles->ntile_devices != num_devices && !(single_ok && s->tiles->ntile_devices == 1))
      return ar_printf(a, "tile_assignment should have %" PRId64 " devices but has %" PRIu64, num_devices,
                             s->tiles->ntile_devices);
    return NULL;
  }
  ar_step(a, s->tiles->ntile_devices);
  hs_i64_set seen;
  hs_i64_set_init(&seen, a, s->tiles->ntile_devices);
  uint64_t distinct = 0;
  for (uint64_t i = 0; i < s->tiles->ntile_devices; i++) {
    const char *e = device_in_range(a, s->tiles->tile_devices[i], num_devices);
    if (e) return e;
    if (!hs_i64_set_add(&seen, s->tiles->tile_devices[i]))
      return ar_printf(a, "device %" PRId64 " is not unique in tile assignment", s->tiles->tile_devices[i]);
    distinct++;
  }
  if (num_devices > 0 && (int64_t)distinct != num_devices && !(single_ok && distinct == 1))
    return ar_printf(a, "tile_assignment should have %" PRId64 " devices but has %" PRIu64, num_devices, distinct);
  return NULL;
}

static uint32_t sharding_leaves(const md_sharding *s) { return s->kind == SC_SHARDING_TUPLE ? s->nelements : 1; }

static void collect_leaves(const md_shape *sh, const md_shape **out, uint32_t *n) {
  if (sh->kind != SC_SHAPE_TUPLE) {
    out[(*n)++] = sh;
    return;
  }
  for (uint32_t i = 0; i < sh->nelems; i++) collect_leaves(&sh->elems[i], out, n);
}

const char *md_gspmd_validate(sc_arena *a, const md_sharding *s, const md_shape *shape, int64_t num_devices,
                              bool single_device_tile_ok) {
  if (!s || !shape) return NULL;
  if (shape->kind == SC_SHAPE_TOKEN) return NULL;
  uint32_t nleaves = md_shape_leaf_count(shape);
  const md_shape **leaves = ar_calloc(a, nleaves ? nleaves : 1, sizeof *leaves);
  uint32_t nl = 0;
  if (shape->kind == SC_SHAPE_TUPLE) collect_leaves(shape, leaves, &nl);
  if (s->kind == SC_SHARDING_TUPLE) {
    if (shape->kind != SC_SHAPE_TUPLE) return "Sharding is tuple-shaped but validation shape is not.";
    if (!(nl == 0 && s->nelements == 1) && nl != sharding_leaves(s))
      return ar_printf(a, "Shape %s has %u leaf nodes while this sharding has %u (tuple element count does not match)",
                             shape_str(a, shape), nl, s->nelements);
    for (uint32_t i = 0; i < nl; i++) {
      const char *e = validate_leaf(a, s->elements[i], leaves[i], num_devices, single_device_tile_ok);
      if (e)
        return ar_printf(a, "%s (tuple element %u which is %.*s)", e, i, SC_SPAN_ARG(s->elements[i]->text));
    }
    return NULL;
  }
  if (shape->kind == SC_SHAPE_TUPLE) {
    /* XLA gives every leaf of a tuple-shaped instruction the same non-tuple sharding */
    for (uint32_t i = 0; i < nl; i++) {
      const char *e = validate_leaf(a, s, leaves[i], num_devices, single_device_tile_ok);
      if (e) return ar_printf(a, "%s (tuple element %u of %s)", e, i, shape_str(a, shape));
    }
    return NULL;
  }
  return validate_leaf(a, s, shape, num_devices, single_device_tile_ok);
}

const char *md_axis_list_verify(sc_arena *a, const md_axis_ref *const *lists, const uint32_t *counts, uint32_t nlists,
                                const md_mesh *mesh, const char *order_what, int *kind) {
  size_t nrefs = 0;
  for (uint32_t i = 0; i < nlists; i++) nrefs += counts[i];
  axis_check c;
  axis_check_init(&c, a, mesh, nrefs);
  for (uint32_t i = 0; i < nlists && !c.err; i++) {
    if (order_what) check_sorted(&c, lists[i], counts[i], order_what);
    if (!c.err) check_list(&c, lists[i], counts[i]);
  }
  if (!c.err) check_sub_axes(&c);
  if (kind) *kind = c.err ? c.kind : 0;
  return c.err;
}
