/* tiling.c — a sharded tensor's tiles over the devices, read back from the context a rule attached
 * (rules/rule_util.h: ru_tensor_context), for the text and HTML pictures.
 *
 * The context may come from a daemon's JSON (the CLI's remote mode rebuilds the report from it), so
 * every value is validated here: a malformed or oversized tiling is no picture, never a crash. */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static const sc_context_entry *ctx_find(const sc_diag *d, const char *key) {
  for (size_t i = 0; i < d->ncontext; i++)
    if (d->context[i].key && !strcmp(d->context[i].key, key)) return &d->context[i];
  return NULL;
}

/* A decimal integer filling the whole of [s, end); false otherwise. */
static bool parse_int(const char *s, const char *end, int64_t lo, int64_t hi, int64_t *out) {
  bool neg = s < end && *s == '-';
  if (neg) s++;
  if (s == end || end - s > 18) return false;
  int64_t v = 0;
  for (; s < end; s++) {
    if (*s < '0' || *s > '9') return false;
    v = v * 10 + (*s - '0');
  }
  v = neg ? -v : v;
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* One axis reference "i" or "i:(pre)size" of a dimension. */
static bool parse_ref(const char *s, const char *end, const rp_tiling *t, rp_axis_ref *r) {
  const char *colon = memchr(s, ':', (size_t)(end - s));
  int64_t idx;
  if (!parse_int(s, colon ? colon : end, 0, (int64_t)t->naxes - 1, &idx)) return false;
  r->axis = (uint32_t)idx;
  r->pre = 1;
  r->size = t->axis_size[idx];
  if (!colon) return true;
  const char *close = memchr(colon, ')', (size_t)(end - colon));
  if (colon + 1 >= end || colon[1] != '(' || !close) return false;
  if (!parse_int(colon + 2, close, 1, t->axis_size[idx], &r->pre) ||
      !parse_int(close + 1, end, 1, t->axis_size[idx], &r->size))
    return false;
  return t->axis_size[idx] % (r->pre * r->size) == 0;
}

static bool read_mesh(const sc_context_entry *e, rp_tiling *t) {
  if (!e->is_list || !e->nvalues || e->nvalues > RP_TILING_MAX) return false;
  t->naxes = (uint32_t)e->nvalues;
  t->devices = 1;
  for (uint32_t i = 0; i < t->naxes; i++) {
    const char *v = e->values[i];
    const char *eq = v ? strrchr(v, '=') : NULL;
    if (!eq || eq == v) return false;
    t->axis_name[i] = v;
    t->axis_name_len[i] = (int)(eq - v);
    if (!parse_int(eq + 1, eq + strlen(eq), 1, SC_MAX_MESH_DEVICES, &t->axis_size[i])) return false;
    t->devices *= t->axis_size[i];
    if (t->devices > SC_MAX_MESH_DEVICES) return false;
  }
  return true;
}

static bool read_dims(const sc_context_entry *e, rp_tiling *t) {
  if (!e->is_list || e->nvalues > RP_TILING_MAX) return false;
  t->ndims = (uint32_t)e->nvalues;
  bool used[RP_TILING_MAX] = {false};
  for (uint32_t d = 0; d < t->ndims; d++) {
    const char *v = e->values[d] ? e->values[d] : "";
    t->nrefs[d] = 0;
    t->dim_shards[d] = 1;
    for (const char *p = v; *p;) {
      const char *comma = strchr(p, ',');
      const char *end = comma ? comma : p + strlen(p);
      if (t->nrefs[d] == RP_TILING_MAX) return false;
      rp_axis_ref *r = &t->refs[d][t->nrefs[d]++];
      if (!parse_ref(p, end, t, r)) return false;
      if (r->pre == 1 && r->size == t->axis_size[r->axis]) {
        if (used[r->axis]) return false; /* an axis twice: not a tiling */
        used[r->axis] = true;
      }
      t->dim_shards[d] *= r->size;
      if (t->dim_shards[d] > t->devices) return false;
      p = comma ? comma + 1 : end;
    }
  }
  for (uint32_t i = 0; i < t->naxes; i++) t->axis_replicated[i] = !used[i];
  for (uint32_t d = 0; d < t->ndims; d++)
    for (uint32_t k = 0; k < t->nrefs[d]; k++) t->axis_replicated[t->refs[d][k].axis] = false;
  return true;
}

bool rp_tiling_read(const sc_diag *d, rp_tiling *t) {
  memset(t, 0, sizeof *t);
  const sc_context_entry *what = ctx_find(d, "tensor"), *shape = ctx_find(d, "tensor_shape"),
                         *mesh = ctx_find(d, "tensor_mesh"), *dims = ctx_find(d, "tensor_dim_axes"),
                         *flagged = ctx_find(d, "tensor_dim");
  if (!shape || !mesh || !dims || !shape->is_list || shape->nvalues > RP_TILING_MAX) return false;
  t->what = what && !what->is_list && what->nvalues && what->values[0] ? what->values[0] : "tensor";
  t->rank = (uint32_t)shape->nvalues;
  for (uint32_t i = 0; i < t->rank; i++) {
    const char *v = shape->values[i];
    if (!v || !parse_int(v, v + strlen(v), -1, INT64_C(1) << 53, &t->shape[i])) return false;
  }
  if (!read_mesh(mesh, t) || !read_dims(dims, t)) return false;
  t->flagged = -1;
  int64_t f;
  if (flagged && !flagged->is_list && flagged->nvalues && flagged->values[0] &&
      parse_int(flagged->values[0], flagged->values[0] + strlen(flagged->values[0]), 0, (int64_t)t->rank - 1, &f))
    t->flagged = (int32_t)f;
  return true;
}

int64_t rp_tiling_shards(const rp_tiling *t, uint32_t dim) { return dim < t->ndims ? t->dim_shards[dim] : 1; }

/* The coordinate of `device` (iota order, first axis major) along axis `axis`. */
static int64_t coord(const rp_tiling *t, int64_t device, uint32_t axis) {
  int64_t stride = 1;
  for (uint32_t i = t->naxes; i-- > axis + 1;) stride *= t->axis_size[i];
  return device / stride % t->axis_size[axis];
}

int64_t rp_tiling_block(const rp_tiling *t, int64_t device, uint32_t dim) {
  if (dim >= t->ndims) return 0;
  int64_t b = 0;
  for (uint32_t k = 0; k < t->nrefs[dim]; k++) { /* major to minor */
    const rp_axis_ref *r = &t->refs[dim][k];
    b = b * r->size + coord(t, device, r->axis) / r->pre % r->size;
  }
  return b;
}

int64_t rp_tiling_replica(const rp_tiling *t, int64_t device) {
  int64_t rep = 0;
  for (uint32_t i = 0; i < t->naxes; i++)
    if (t->axis_replicated[i]) rep = rep * t->axis_size[i] + coord(t, device, i);
  return rep;
}

int64_t rp_tiling_replicas(const rp_tiling *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->naxes; i++)
    if (t->axis_replicated[i]) n *= t->axis_size[i];
  return n;
}

rp_extent rp_tiling_extent(const rp_tiling *t, uint32_t dim, int64_t block) {
  rp_extent e = {0, 0, 0, 0};
  int64_t size = dim < t->rank ? t->shape[dim] : 0, shards = rp_tiling_shards(t, dim);
  if (size < 0) return e; /* dynamic: unknown */
  e.block = (size + shards - 1) / shards;
  e.start = block * e.block;
  int64_t end = e.start + e.block < size ? e.start + e.block : size;
  e.valid = end > e.start ? end - e.start : 0;
  e.padding = e.block - e.valid;
  return e;
}
