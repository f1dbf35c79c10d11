/* gspmd_sharding.c — XLA HloSharding text (`mhlo.sharding = "{...}"` in StableHLO, `sharding={...}` in
 * HLO): the full grammar of xla/hlo/parser/hlo_parser.cc (V1 explicit device lists, V2 iota tile
 * assignments `<=[..]T(..)`, `last_tile_dim_replicate`, `last_tile_dims={...}`, `shard_as/shard_like`,
 * metadata, tuples, and V3 named shardings `{mesh['x'=2], [{'x'}]}` / `{maximal_mesh[device_id=k]}`),
 * plus everything HloSharding::Validate and the named-sharding constructors check
 * (../shared/reference/hlo-sharding-validate.md), and the checks XLA leaves to DCHECKs or crashes on.
 *
 * Parse errors use XLA's own parser messages where XLA has one. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "model/model.h"
#include "model/quoted.h"

/* ---- tokenizer (xla/hlo/parser/hlo_lexer.cc, the part shardings need) --------------------------- */

typedef enum { G_EOF = 0, G_INT, G_IDENT, G_ATTR, G_STR, G_LEQ, G_PUNCT, G_BAD } gkind;

typedef struct {
  gkind kind;
  ir_span text; /* IDENT/STR: name/contents; ATTR: name without '=' */
  const char *at;
  int64_t ival;
  bool overflow;
  char ch;
} gtok;

typedef struct {
  sc_arena *a;
  const char *start, *p, *end;
  uint32_t base;
  const char *err;
  uint32_t err_offset;
} glex;

static void g_init(glex *lx, sc_arena *a, ir_span text, uint32_t offset) {
  static const char nothing[1] = "";
  if (!text.p) text = ir_span_of(nothing, 0); /* an empty value may have no bytes at all */
  memset(lx, 0, sizeof *lx);
  lx->a = a;
  lx->start = lx->p = text.p;
  lx->end = text.p + text.n;
  lx->base = offset;
}

static void g_skip(glex *lx) {
  for (;;) {
    while (lx->p < lx->end && isspace((unsigned char)*lx->p)) lx->p++;
    if (lx->p + 1 < lx->end && lx->p[0] == '/' && lx->p[1] == '*') {
      const char *q = lx->p + 2;
      while (q + 1 < lx->end && !(q[0] == '*' && q[1] == '/')) q++;
      lx->p = q + 1 < lx->end ? q + 2 : lx->end;
      continue;
    }
    if (lx->p + 1 < lx->end && lx->p[0] == '/' && lx->p[1] == '/') {
      while (lx->p < lx->end && *lx->p != '\n') lx->p++;
      continue;
    }
    return;
  }
}

static gtok g_lex(glex *lx) {
  gtok t;
  memset(&t, 0, sizeof t);
  g_skip(lx);
  const char *p = lx->p, *e = lx->end;
  t.at = p;
  if (p >= e) return t;
  char c = *p;
  if (isdigit((unsigned char)c) || (c == '-' && p + 1 < e && isdigit((unsigned char)p[1]))) {
    const char *q = p;
    bool neg = *q == '-';
    if (neg) q++;
    uint64_t v = 0;
    while (q < e && isdigit((unsigned char)*q)) {
      unsigned d = (unsigned)(*q - '0');
      if (v > (UINT64_C(9223372036854775807) - d) / 10) t.overflow = true;
      else v = v * 10 + d;
      q++;
    }
    t.kind = G_INT;
    t.ival = neg ? -(int64_t)v : (int64_t)v;
    t.text = ir_span_of(p, (uint32_t)(q - p));
    lx->p = q;
    return t;
  }
  if (isalpha((unsigned char)c) || c == '_') {
    const char *q = p + 1;
    while (q < e && (isalnum((unsigned char)*q) || *q == '_' || *q == '.' || *q == '-')) q++;
    t.text = ir_span_of(p, (uint32_t)(q - p));
    if (q < e && *q == '=' && !(q + 1 < e && q[1] == '=')) {
      t.kind = G_ATTR;
      lx->p = q + 1;
    } else {
      t.kind = G_IDENT;
      lx->p = q;
    }
    return t;
  }
  if (c == '"' || c == '\'') {
    const char *q = md_quoted_end(p, e);
    if (!q) {
      t.kind = G_BAD;
      t.text = ir_span_of(p, (uint32_t)(e - p));
      lx->p = e;
      return t;
    }
    t.kind = G_STR;
    t.text = ir_span_of(p + 1, (uint32_t)(q - p - 1));
    lx->p = q + 1;
    return t;
  }
  if (c == '<' && p + 1 < e && p[1] == '=') {
    t.kind = G_LEQ;
    t.text = ir_span_of(p, 2);
    lx->p = p + 2;
    return t;
  }
  t.kind = G_PUNCT;
  t.ch = c;
  t.text = ir_span_of(p, 1);
  lx->p = p + 1;
  return t;
}

static gtok g_peek(glex *lx) {
  const char *save = lx->p;
  gtok t = g_lex(lx);
  lx->p = save;
  return t;
}

static bool g_fail_at(glex *lx, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool g_fail_at(glex *lx, const char *at, const char *fmt, ...) {
  if (lx->err) return false;
  va_list ap;
  va_start(ap, fmt);
  lx->err = ar_vprintf(lx->a, fmt, ap);
  va_end(ap);
  if (at < lx->start) at = lx->start;
  lx->err_offset = lx->base + (uint32_t)(at - lx->start);
  return false;
}
#define g_fail(lx, ...) g_fail_at((lx), g_peek(lx).at, __VA_ARGS__)

static bool g_is(gtok t, char c) { return t.kind == G_PUNCT && t.ch == c; }
static bool g_eat(glex *lx, char c) {
  if (g_is(g_peek(lx), c)) {
    g_lex(lx);
    return true;
  }
  return false;
}
static bool g_expect(glex *lx, char c, const char *msg) {
  if (g_eat(lx, c)) return true;
  return g_fail(lx, "%s", msg);
}
static bool g_int(glex *lx, int64_t *v) {
  gtok t = g_lex(lx);
  if (t.kind != G_INT) return g_fail_at(lx, t.at, "expects integer");
  if (t.overflow) return g_fail_at(lx, t.at, "integer %.*s overflows int64", SC_SPAN_ARG(t.text));
  *v = t.ival;
  return true;
}
static bool g_kw(gtok t, const char *kw) { return t.kind == G_IDENT && ir_span_eq(t.text, kw); }

typedef SC_VEC(int64_t) i64vec;

/* Tile assignments and meshes are expanded to device lists: bound them (real systems: thousands). */
#define SC_MAX_TILE_DEVICES (1 << 20)

static int64_t prod_checked(const int64_t *v, size_t n, bool *bad) {
  int64_t p = 1;
  for (size_t i = 0; i < n; i++) {
    if (v[i] <= 0) {
      *bad = true;
      return 0;
    }
    if (p > INT64_MAX / v[i]) {
      *bad = true;
      return INT64_MAX;
    }
    p *= v[i];
  }
  return p;
}

/* `[` dims `]` `T(` perm `)` */
static bool parse_iota_array(glex *lx, i64vec *reshape, i64vec *perm) {
  if (!g_expect(lx, '[', "expected '[' to start sharding iota_reshape_dims")) return false;
  do {
    int64_t d = 0;
    if (!g_int(lx, &d)) return false;
    SC_PUSH(lx->a, *reshape, d);
  } while (g_eat(lx, ','));
  if (!g_expect(lx, ']', "expected ']' to end sharding iota_reshape_dims")) return false;
  if (reshape->n > 64) return g_fail(lx, "iota reshape has %zu dimensions; at most 64 are supported", reshape->n);
  if (reshape->n == 1) {
    SC_PUSH(lx->a, *perm, 0);
    return true;
  }
  gtok t = g_peek(lx);
  if (!g_kw(t, "T")) return g_fail(lx, "expected 'T(' to start sharding devices iota_transpose_perm");
  g_lex(lx);
  if (!g_expect(lx, '(', "expected 'T(' to start sharding devices iota_transpose_perm")) return false;
  do {
    const char *at = g_peek(lx).at;
    int64_t d = 0;
    if (!g_int(lx, &d)) return false;
    if (d < 0 || (uint64_t)d >= reshape->n)
      return g_fail_at(lx, at, "Out of range iota minor_to_major value %" PRId64 ", expecting value in range [0, %zu)",
                       d, reshape->n);
    SC_PUSH(lx->a, *perm, d);
  } while (g_eat(lx, ','));
  if (!g_expect(lx, ')', "expected ')' to end sharding devices iota_transpose_perm")) return false;
  if (perm->n != reshape->n)
    return g_fail(lx, "iota_transpose_perm should have the same rank as iota_reshape_dims : expected %zu, saw %zu.",
                  reshape->n, perm->n);
  return true;
}

/* Expands an iota tile assignment: arange(prod).reshape(reshape).transpose(perm).flatten(). */
static int64_t *iota_expand(sc_arena *a, const int64_t *reshape, uint32_t nr, const int64_t *perm, uint64_t total) {
  ar_step(a, total * (nr ? nr : 1)); /* metered: a short `<=[N]` expands to N devices */
  int64_t *out = ar_calloc(a, total ? total : 1, sizeof *out);
  /* strides of the reshaped (untransposed) array */
  int64_t stride[64];
  int64_t tdims[64];
  if (nr > 64) return NULL;
  int64_t s = 1;
  for (int i = (int)nr - 1; i >= 0; i--) {
    stride[i] = s;
    s *= reshape[i];
  }
  for (uint32_t i = 0; i < nr; i++) tdims[i] = reshape[perm[i]];
  int64_t idx[64] = {0};
  for (uint64_t k = 0; k < total; k++) {
    int64_t v = 0;
    for (uint32_t i = 0; i < nr; i++) v += idx[i] * stride[perm[i]];
    out[k] = v;
    for (int i = (int)nr - 1; i >= 0; i--) {
      if (++idx[i] < tdims[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

static bool skip_braces(glex *lx) {
  int depth = 0;
  do {
    gtok t = g_lex(lx);
    if (t.kind == G_EOF || t.kind == G_BAD) return g_fail_at(lx, t.at, "expected '}' to end metadata");
    if (g_is(t, '{')) depth++;
    else if (g_is(t, '}')) depth--;
    else if (depth == 0) return g_fail_at(lx, t.at, "expected '{' to start metadata");
  } while (depth > 0);
  return true;
}

/* ---- V3 named shardings ------------------------------------------------------------------------- */

static const char *mesh_str(sc_arena *a, const md_mesh *m) {
  if (m->maximal) return ar_printf(a, "maximal_mesh[device_id=%" PRId64 "]", m->device_ids[0]);
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "mesh[");
  md_mesh_axes_put(&s, m, '\'', ",");
  ar_str_puts(&s, "]");
  return ar_str_str(&s);
}

/* `(` iota-array | ints `)` after `device_ids=` */
static bool parse_device_ids(glex *lx, md_mesh *m, const char *at) {
  int64_t prod = m->devices;
  if (!g_expect(lx, '(', "expected '(' for device_ids")) return false;
  if (g_is(g_peek(lx), '[')) {
    i64vec reshape = {0}, perm = {0};
    if (!parse_iota_array(lx, &reshape, &perm)) return false;
    if (!g_expect(lx, ')', "expected ')' to end device_ids")) return false;
    bool bad = false;
    int64_t p = prod_checked(reshape.v, reshape.n, &bad);
    if (bad || p != prod)
      return g_fail_at(lx, at, "device_ids iota [..] has %" PRId64 " devices but the mesh axes need %" PRId64, p, prod);
    m->device_ids = iota_expand(lx->a, reshape.v, (uint32_t)reshape.n, perm.v, (uint64_t)prod);
    m->ndevice_ids = (uint32_t)prod;
    return true;
  }
  i64vec ids = {0};
  if (!g_is(g_peek(lx), ')')) {
    do {
      int64_t d = 0;
      if (!g_int(lx, &d)) return false;
      SC_PUSH(lx->a, ids, d);
    } while (g_eat(lx, ','));
  }
  if (!g_expect(lx, ')', "expected ')' to end device_ids")) return false;
  if ((int64_t)ids.n != prod)
    return g_fail_at(lx, at, "Expected %" PRId64 " device_ids based on mesh axes, but got %zu", prod, ids.n);
  m->device_ids = ids.v;
  m->ndevice_ids = (uint32_t)ids.n;
  bool iota = true;
  for (size_t i = 0; i < ids.n; i++) {
    if (ids.v[i] < 0) return g_fail_at(lx, at, "Mesh device ids must be non-negative. Device id: %" PRId64, ids.v[i]);
    if (ids.v[i] != (int64_t)i) iota = false;
  }
  if (iota)
    return g_fail_at(lx, at,
                     "Non-iota device assignment has iota device id list [0,1,2,3...]: write the mesh without "
                     "device_ids");
  uint8_t *seen = ar_calloc(lx->a, ids.n, 1);
  for (size_t i = 0; i < ids.n; i++) {
    if (ids.v[i] >= (int64_t)ids.n || seen[ids.v[i]])
      return g_fail_at(lx, at, "Device ids must be a permutation of [0,1,2,3...].");
    seen[ids.v[i]] = 1;
  }
  return true;
}

static bool parse_v3_mesh(glex *lx, md_mesh **out) {
  gtok kind = g_lex(lx);
  md_mesh *m = ar_alloc(lx->a, sizeof *m);
  m->offset = lx->base + (uint32_t)(kind.at - lx->start);
  *out = m;
  if (g_kw(kind, "maximal_mesh")) {
    if (!g_expect(lx, '[', "expected '[' after maximal_mesh")) return false;
    gtok t = g_lex(lx);
    if (t.kind != G_ATTR || !ir_span_eq(t.text, "device_id"))
      return g_fail_at(lx, t.at, "expected device_id= attribute in maximal_mesh");
    int64_t d = 0;
    if (!g_int(lx, &d)) return false;
    if (!g_expect(lx, ']', "expected ']' to end maximal_mesh")) return false;
    m->maximal = true;
    m->device_ids = ar_alloc(lx->a, sizeof(int64_t));
    m->device_ids[0] = d;
    m->ndevice_ids = 1;
    m->devices = 1;
    return true;
  }
  if (!g_kw(kind, "mesh")) return g_fail_at(lx, kind.at, "Expected 'mesh' or 'maximal_mesh'");
  if (!g_expect(lx, '[', "expected '[' after mesh")) return false;
  SC_VEC(md_axis) axes = {0};
  const char *inner_ids = NULL;
  if (!g_is(g_peek(lx), ']')) {
    for (;;) {
      gtok pk = g_peek(lx);
      if (pk.kind == G_ATTR && ir_span_eq(pk.text, "device_ids")) { /* mesh['x'=2, device_ids=(...)] */
        inner_ids = pk.at;
        break;
      }
      gtok name = g_lex(lx); /* XLA prints `a=2`; its older printer quoted the name: `'a'=2` */
      if (name.kind != G_STR && name.kind != G_ATTR) return g_fail_at(lx, name.at, "expects name");
      if (name.kind == G_STR && !g_expect(lx, '=', "expects '=' after axis name")) return false;
      int64_t size = 0;
      if (!g_int(lx, &size)) return false;
      md_axis ax = {name.text, size, SC_AXIS_AUTO};
      SC_PUSH(lx->a, axes, ax);
      if (!g_eat(lx, ',')) break;
    }
  }
  const char *ids_save = lx->p;
  if (inner_ids) { /* skip the device list for now; it is parsed once the axes are known */
    g_lex(lx);
    int depth = 0;
    do {
      gtok t = g_lex(lx);
      if (t.kind == G_EOF) return g_fail_at(lx, inner_ids, "expected ')' to end device_ids");
      if (g_is(t, '(')) depth++;
      else if (g_is(t, ')')) depth--;
    } while (depth > 0);
  }
  if (!g_expect(lx, ']', "expected ']' to end mesh axes")) return false;
  m->axes = axes.v;
  m->naxes = (uint32_t)axes.n;
  int64_t prod = 1;
  for (uint32_t i = 0; i < m->naxes; i++) {
    if (m->axes[i].size <= 0) return g_fail_at(lx, kind.at, "Mesh axis size must be positive");
    if (prod > INT64_MAX / m->axes[i].size) return g_fail_at(lx, kind.at, "mesh size overflows int64");
    prod *= m->axes[i].size;
  }
  m->devices = prod;
  if (prod > SC_MAX_TILE_DEVICES) return g_fail_at(lx, kind.at, "mesh has more than %d devices", SC_MAX_TILE_DEVICES);
  md_mesh_index_axes(lx->a, m);
  for (uint32_t i = 0; i < m->naxes; i++)
    if (md_mesh_axis_index(m, m->axes[i].name) != (int)i)
      return g_fail_at(lx, kind.at, "Mesh has duplicate axis names. Duplicate axis name: %.*s",
                       SC_SPAN_ARG(m->axes[i].name));
  if (m->naxes == 0) return true;
  if (inner_ids) {
    const char *after = lx->p;
    lx->p = ids_save;
    g_lex(lx); /* device_ids= */
    if (!parse_device_ids(lx, m, inner_ids)) return false;
    lx->p = after;
    return true;
  }
  /* `, device_ids=(...)` : only when the next tokens are exactly that */
  const char *save = lx->p;
  if (g_eat(lx, ',')) {
    gtok t = g_peek(lx);
    if (t.kind == G_ATTR && ir_span_eq(t.text, "device_ids")) {
      g_lex(lx);
      return parse_device_ids(lx, m, t.at);
    }
    lx->p = save; /* the comma belongs to the sharding */
  }
  return true;
}

static bool parse_v3_axis(glex *lx, const md_mesh *m, md_axis_ref *r) {
  memset(r, 0, sizeof *r);
  gtok t = g_lex(lx); /* an axis: its name, bare (`a`) or quoted (`'a'`), or its index (`1`) */
  if (t.kind != G_STR && t.kind != G_IDENT && t.kind != G_INT) return g_fail_at(lx, t.at, "expects name");
  int64_t idx = t.kind == G_INT ? -1 : md_mesh_axis_index(m, t.text); /* names are unique (parse_v3_mesh) */
  if (idx < 0) {
    bool num = t.text.n > 0;
    int64_t v = 0;
    for (uint32_t i = 0; i < t.text.n; i++) {
      if (!isdigit((unsigned char)t.text.p[i]) || v > 100000000) num = false;
      else v = v * 10 + (t.text.p[i] - '0');
    }
    if (!num)
      return g_fail_at(lx, t.at, "axis '%.*s' is not a valid axis name or index in mesh %s", SC_SPAN_ARG(t.text),
                       mesh_str(lx->a, m));
    if (v >= m->naxes)
      return g_fail_at(lx, t.at, "axis index %" PRId64 " is out of bounds for mesh %s which has %u axes", v,
                       mesh_str(lx->a, m), m->naxes);
    idx = v;
  }
  r->name = m->axes[idx].name;
  r->size = m->axes[idx].size;
  if (g_eat(lx, ':')) {
    if (!g_expect(lx, '(', "expected '(' before pre_size in sub axis")) return false;
    if (!g_int(lx, &r->pre_size)) return false;
    if (!g_expect(lx, ')', "expected ')' after pre_size in sub axis")) return false;
    if (!g_int(lx, &r->size)) return false;
    r->sub = true;
  }
  return true;
}

static bool parse_v3_axis_list(glex *lx, const md_mesh *m, md_axis_ref **out, uint32_t *n) {
  if (!g_expect(lx, '{', "expected '{' to start axis list")) return false;
  SC_VEC(md_axis_ref) v = {0};
  if (!g_eat(lx, '}')) {
    do {
      md_axis_ref r;
      if (!parse_v3_axis(lx, m, &r)) return false;
      SC_PUSH(lx->a, v, r);
    } while (g_eat(lx, ','));
    if (!g_expect(lx, '}', "expected '}' to end axis list")) return false;
  }
  *out = v.v;
  *n = (uint32_t)v.n;
  return true;
}

static bool parse_metadata_attr(glex *lx) {
  gtok t = g_lex(lx);
  if (t.kind != G_ATTR || !ir_span_eq(t.text, "metadata"))
    return g_fail_at(lx, t.at, "unknown attribute in named sharding: expected replicated, unreduced, manual or metadata");
  return skip_braces(lx);
}

/* Every axis of the mesh, as axis refs (`manual`, `unreduced` without a list). */
static md_axis_ref *all_axes(sc_arena *a, const md_mesh *m) {
  md_axis_ref *v = ar_calloc(a, m->naxes ? m->naxes : 1, sizeof *v);
  for (uint32_t i = 0; i < m->naxes; i++) {
    v[i].name = m->axes[i].name;
    v[i].size = m->axes[i].size;
  }
  return v;
}

/* The end of a named sharding: an optional `, metadata={...}` and the closing `}`. */
static md_sharding *end_named(glex *lx, md_sharding *s) {
  if (g_eat(lx, ',') && !parse_metadata_attr(lx)) return NULL;
  return g_expect(lx, '}', "expected '}' to end sharding attribute") ? s : NULL;
}

static bool parse_reduction(glex *lx, md_sharding *s) {
  gtok t = g_peek(lx);
  if (t.kind != G_IDENT) return g_fail(lx, "expected sum, max, or min for unreduced op");
  if (ir_span_eq(t.text, "sum")) s->unreduced_op = SC_REDUCE_SUM;
  else if (ir_span_eq(t.text, "max")) s->unreduced_op = SC_REDUCE_MAX;
  else if (ir_span_eq(t.text, "min")) s->unreduced_op = SC_REDUCE_MIN;
  else return g_fail(lx, "expected sum, max, or min for unreduced op");
  g_lex(lx);
  return true;
}

static md_sharding *parse_named(glex *lx, const char *open_at) {
  md_sharding *s = md_sharding_new(lx->a, SC_SHARDING_NAMED, SC_SHARDING_FROM_GSPMD);
  s->offset = lx->base + (uint32_t)(open_at - lx->start);
  md_mesh *m;
  if (!parse_v3_mesh(lx, &m)) return NULL;
  s->mesh = m;
  if (m->maximal) {
    s->kind = SC_SHARDING_MAXIMAL;
    s->maximal_device = m->device_ids[0];
    return end_named(lx, s);
  }
  g_eat(lx, ',');
  gtok t = g_peek(lx);
  if (g_kw(t, "replicated")) {
    g_lex(lx);
    s->kind = SC_SHARDING_REPLICATED;
    return end_named(lx, s);
  }
  if (g_kw(t, "manual")) {
    g_lex(lx);
    s->kind = SC_SHARDING_MANUAL;
    s->manual_axes = all_axes(lx->a, m);
    s->nmanual_axes = m->naxes;
    return end_named(lx, s);
  }
  if ((t.kind == G_ATTR || t.kind == G_IDENT) && ir_span_eq(t.text, "unreduced")) {
    g_lex(lx);
    bool assign = t.kind == G_ATTR || g_eat(lx, '=');
    if (assign && !parse_reduction(lx, s)) return NULL;
    if (g_is(g_peek(lx), '{')) {
      if (!parse_v3_axis_list(lx, m, &s->unreduced, &s->nunreduced)) return NULL;
    } else {
      s->unreduced = all_axes(lx->a, m);
      s->nunreduced = m->naxes;
    }
    return end_named(lx, s);
  }
  /* dimension shardings */
  if (!g_expect(lx, '[', "expected '[' to start dimension shardings")) return NULL;
  SC_VEC(md_dim_sharding) dims = {0};
  if (!g_eat(lx, ']')) {
    do {
      md_dim_sharding d;
      memset(&d, 0, sizeof d);
      d.priority = -1;
      if (!g_expect(lx, '{', "expected '{' to start dimension sharding")) return NULL;
      SC_VEC(md_axis_ref) axes = {0};
      if (!g_eat(lx, '}')) {
        do {
          if (d.open) {
            g_fail(lx, "Saw axis ref after '?'");
            return NULL;
          }
          if (g_eat(lx, '?')) {
            d.open = true;
            continue;
          }
          md_axis_ref r;
          if (!parse_v3_axis(lx, m, &r)) return NULL;
          SC_PUSH(lx->a, axes, r);
        } while (g_eat(lx, ','));
        if (!g_expect(lx, '}', "expected '}' to end dimension sharding")) return NULL;
      }
      d.axes = axes.v;
      d.naxes = (uint32_t)axes.n;
      SC_PUSH(lx->a, dims, d);
    } while (g_eat(lx, ','));
    if (!g_expect(lx, ']', "expected ']' to end dimension shardings")) return NULL;
  }
  s->dims = dims.v;
  s->rank = (uint32_t)dims.n;
  while (!g_is(g_peek(lx), '}')) {
    if (!g_eat(lx, ',')) {
      g_fail(lx, "expected ',' before next attribute");
      return NULL;
    }
    gtok a = g_lex(lx);
    if (a.kind == G_ATTR && ir_span_eq(a.text, "replicated")) {
      if (!parse_v3_axis_list(lx, m, &s->replicated, &s->nreplicated)) return NULL;
    } else if (a.kind == G_ATTR && ir_span_eq(a.text, "unreduced")) {
      if (g_peek(lx).kind == G_IDENT && !parse_reduction(lx, s)) return NULL;
      if (!parse_v3_axis_list(lx, m, &s->unreduced, &s->nunreduced)) return NULL;
    } else if (a.kind == G_ATTR && ir_span_eq(a.text, "manual")) {
      if (!parse_v3_axis_list(lx, m, &s->manual_axes, &s->nmanual_axes)) return NULL;
    } else if (a.kind == G_ATTR && ir_span_eq(a.text, "metadata")) {
      if (!skip_braces(lx)) return NULL;
    } else {
      g_fail_at(lx, a.at, "unknown attribute in named sharding: expected replicated, unreduced, manual or metadata");
      return NULL;
    }
  }
  g_lex(lx);
  return s;
}

/* ---- V1/V2 single shardings --------------------------------------------------------------------- */

/* What the attributes of one single sharding say, before it is built. */
typedef struct {
  bool maximal, replicated, manual, unknown, unreduced;
  bool ltdr, ltds, have_device, have_devices;
  int nkinds;
  int64_t device;
  i64vec dims, devices, reshape, perm;
  SC_VEC(uint8_t) subgroups;
  int64_t group;
  const char *devices_at;
} single_attrs;

/* devices-attr ::= `devices=` `[` int (`,` int)* `]` (`<=` iota-array | int (`,` int)*) */
static bool parse_devices(glex *lx, single_attrs *sa) {
  if (!g_expect(lx, '[', "expected '[' to start sharding devices shape")) return false;
  do {
    int64_t d = 0;
    if (!g_int(lx, &d)) return false;
    SC_PUSH(lx->a, sa->dims, d);
  } while (g_eat(lx, ','));
  if (!g_expect(lx, ']', "expected ']' to end sharding devices shape")) return false;
  if (g_peek(lx).kind == G_LEQ) {
    g_lex(lx);
    return parse_iota_array(lx, &sa->reshape, &sa->perm);
  }
  do {
    int64_t d = 0;
    if (!g_int(lx, &d)) return false;
    SC_PUSH(lx->a, sa->devices, d);
  } while (g_eat(lx, ','));
  return true;
}

/* last-tile-dims-attr ::= `last_tile_dims=` `{` (type (`,` type)*)? `}`
 * type ::= `manual` | `replicated` | `maximal` | `unreduced` */
static bool parse_last_tile_dims(glex *lx, single_attrs *sa) {
  if (!g_expect(lx, '{', "expected '{' to start sharding type list")) return false;
  if (!g_is(g_peek(lx), '}')) {
    do {
      gtok k = g_lex(lx);
      uint8_t v;
      if (g_kw(k, "manual")) v = 1;
      else if (g_kw(k, "replicated")) v = 2;
      else if (g_kw(k, "maximal") || g_kw(k, "maximul")) v = 3;
      else if (g_kw(k, "unreduced")) v = 4;
      else
        return g_fail_at(lx, k.at, "unknown sharding type '%.*s' in last_tile_dims (expected manual, replicated, maximal or "
                                   "unreduced)", SC_SPAN_ARG(k.text));
      SC_PUSH(lx->a, sa->subgroups, v);
    } while (g_eat(lx, ','));
  }
  return g_expect(lx, '}', "expected '}' to end sharding type list");
}

/* attr ::= `maximal` | `replicated` | `manual` | `unknown` | `unreduced` | `last_tile_dim_replicate`
 *        | (`shard_as` | `shard_like`) int | `device=` int | devices-attr | `metadata=` `{`...`}`
 *        | last-tile-dims-attr
 * `t` is the attribute's first token, already consumed. */
static bool parse_single_attr(glex *lx, single_attrs *sa, gtok t) {
  if (g_kw(t, "maximal")) sa->maximal = true, sa->nkinds++;
  else if (g_kw(t, "replicated")) sa->replicated = true, sa->nkinds++;
  else if (g_kw(t, "manual")) sa->manual = true, sa->nkinds++;
  else if (g_kw(t, "unknown")) sa->unknown = true, sa->nkinds++;
  else if (g_kw(t, "unreduced")) sa->unreduced = true, sa->nkinds++;
  else if (g_kw(t, "last_tile_dim_replicate")) sa->ltdr = true;
  else if (g_kw(t, "shard_as") || g_kw(t, "shard_like")) return g_int(lx, &sa->group);
  else if (t.kind == G_ATTR && ir_span_eq(t.text, "device")) {
    gtok v = g_lex(lx);
    if (v.kind != G_INT) return g_fail_at(lx, v.at, "device= attribute must be an integer");
    sa->device = v.ival;
    sa->have_device = true;
    sa->devices_at = t.at;
  } else if (t.kind == G_ATTR && ir_span_eq(t.text, "devices")) {
    sa->devices_at = t.at;
    sa->have_devices = true;
    return parse_devices(lx, sa);
  } else if (t.kind == G_ATTR && ir_span_eq(t.text, "metadata")) {
    return skip_braces(lx);
  } else if (t.kind == G_ATTR && ir_span_eq(t.text, "last_tile_dims")) {
    sa->ltds = true;
    return parse_last_tile_dims(lx, sa);
  } else if (t.kind == G_ATTR) {
    return g_fail_at(lx, t.at, "unknown attribute in sharding: expected device=, devices= metadata= or last_tile_dims= ");
  } else {
    return g_fail_at(lx, t.at, "unexpected token");
  }
  return true;
}

/* The tile assignment of a tiled sharding: `devices=[dims]` with an iota `<=[reshape]T(perm)` or an
 * explicit device list, checked the way HloSharding's constructors and Validate do, into `t`. */
static bool set_tile_assignment(glex *lx, md_tiles *t, single_attrs *sa, const char *loc) {
  i64vec *dims = &sa->dims, *devices = &sa->devices, *reshape = &sa->reshape, *perm = &sa->perm;
  for (size_t i = 0; i < dims->n; i++)
    if (dims->v[i] <= 0)
      return g_fail_at(lx, sa->devices_at, "tile assignment dimension %zu is %" PRId64 "; every dimension must be positive",
                       i, dims->v[i]);
  bool bad = false;
  int64_t total = prod_checked(dims->v, dims->n, &bad);
  if (bad || total > SC_MAX_TILE_DEVICES)
    return g_fail_at(lx, sa->devices_at, "tile assignment has more than %d devices", SC_MAX_TILE_DEVICES);
  t->tile_dims = dims->v;
  t->ntile_dims = (uint32_t)dims->n;
  if (!reshape->n) {
    if (devices->n <= 1) return g_fail_at(lx, loc, "non-maximal shardings must have more than one device assigned");
    if ((int64_t)devices->n != total)
      return g_fail_at(lx, sa->devices_at,
                       "tile assignment lists %zu devices but its dimensions [..] hold %" PRId64 " (XLA would %s)",
                       devices->n, total, (int64_t)devices->n < total ? "zero-fill the missing entries" : "write past the array");
    t->tile_devices = devices->v;
    t->ntile_devices = devices->n;
    return true;
  }
  int64_t rp = prod_checked(reshape->v, reshape->n, &bad);
  if (bad || rp != total)
    return g_fail_at(lx, sa->devices_at,
                     "iota tile assignment reshapes %" PRId64 " devices but its dimensions hold %" PRId64
                     " (product of devices=[...] must equal product of <=[...])",
                     rp, total);
  uint8_t *seen = ar_calloc(lx->a, perm->n, 1);
  for (size_t i = 0; i < perm->n; i++) {
    if (perm->v[i] < 0 || (size_t)perm->v[i] >= perm->n || seen[perm->v[i]])
      return g_fail_at(lx, sa->devices_at, "iota transpose T(...) is not a permutation of 0..%zu", perm->n - 1);
    seen[perm->v[i]] = 1;
  }
  t->iota_reshape = reshape->v;
  t->niota_reshape = (uint32_t)reshape->n;
  t->iota_perm = perm->v;
  t->niota_perm = (uint32_t)perm->n;
  t->tile_devices = iota_expand(lx->a, reshape->v, (uint32_t)reshape->n, perm->v, (uint64_t)total);
  t->ntile_devices = (uint64_t)total;
  return true;
}

/* The sharding the attributes describe (written at `loc`), or NULL: one kind at most; replicated,
 * manual, unknown and unreduced without devices; maximal with exactly one; else tiled. */
static md_sharding *build_single(glex *lx, single_attrs *sa, const char *loc) {
  md_sharding *s = md_sharding_new(lx->a, SC_SHARDING_TILED, SC_SHARDING_FROM_GSPMD);
  s->offset = lx->base + (uint32_t)(loc - lx->start);
  s->shard_group = sa->group;
  if (sa->nkinds > 1) {
    g_fail_at(lx, loc, "conflicting sharding kinds in one sharding (%s%s%s%s%s): XLA keeps only the first of "
                       "replicated > maximal > manual > unknown > unreduced",
              sa->replicated ? "replicated " : "", sa->maximal ? "maximal " : "", sa->manual ? "manual " : "",
              sa->unknown ? "unknown " : "", sa->unreduced ? "unreduced " : "");
    return NULL;
  }
  bool any_devices = sa->have_device || sa->have_devices;
  if (sa->replicated || sa->manual || sa->unknown || sa->unreduced) {
    const char *k = sa->replicated ? "replicated" : sa->manual ? "manual" : sa->unknown ? "unknown" : "unreduced";
    if (any_devices) {
      g_fail_at(lx, loc, "%s shardings should not have any devices assigned", k);
      return NULL;
    }
    s->kind = sa->replicated ? SC_SHARDING_REPLICATED
              : sa->manual   ? SC_SHARDING_MANUAL
              : sa->unknown  ? SC_SHARDING_UNKNOWN
                             : SC_SHARDING_UNREDUCED;
    return s;
  }
  if (sa->maximal) {
    int64_t n = sa->have_device ? 1 : (int64_t)sa->devices.n;
    if (sa->have_devices && sa->reshape.n) n = -1;
    if (n != 1 || (sa->have_device && sa->have_devices)) {
      g_fail_at(lx, loc, "maximal shardings should have exactly one device assigned");
      return NULL;
    }
    s->kind = SC_SHARDING_MAXIMAL;
    s->maximal_device = sa->have_device ? sa->device : sa->devices.v[0];
    return s;
  }
  if (sa->dims.n == 0) {
    g_fail_at(lx, loc, "non-maximal shardings must have a tile assignment list including dimensions");
    return NULL;
  }
  if (sa->have_device) {
    g_fail_at(lx, sa->devices_at, "device= is only valid in a maximal sharding; a tiled sharding uses devices=[...]");
    return NULL;
  }
  if (sa->ltdr && sa->ltds) {
    g_fail_at(lx, loc, "last_tile_dim_replicate and last_tile_dims= cannot both be given (XLA aborts on this)");
    return NULL;
  }
  md_tiles *t = ar_alloc(lx->a, sizeof *t);
  if (!set_tile_assignment(lx, t, sa, loc)) return NULL;
  s->tiles = t;
  if (sa->ltdr) {
    t->last_tile_dim_replicate = true;
    t->last_tile_dims = ar_alloc(lx->a, 1);
    t->last_tile_dims[0] = 2;
    t->nlast_tile_dims = 1;
  } else if (sa->subgroups.n) {
    if (sa->subgroups.n > sa->dims.n) {
      g_fail_at(lx, loc, "last_tile_dims lists %zu subgroup types but there are only %zu tile dimensions",
                sa->subgroups.n, sa->dims.n);
      return NULL;
    }
    t->last_tile_dims = sa->subgroups.v;
    t->nlast_tile_dims = (uint32_t)sa->subgroups.n;
  }
  return s;
}

/* single ::= `{` (named-sharding | attr*) `}`   (the `{` already consumed when `lbrace_pre_lexed`) */
static md_sharding *parse_single(glex *lx, bool lbrace_pre_lexed, const char *open_at) {
  if (!lbrace_pre_lexed) {
    gtok t = g_peek(lx);
    open_at = t.at;
    if (!g_expect(lx, '{', "expected '{' to start sharding attribute")) return NULL;
  }
  gtok first = g_peek(lx);
  if (g_kw(first, "mesh") || g_kw(first, "maximal_mesh")) return parse_named(lx, open_at);
  single_attrs sa;
  memset(&sa, 0, sizeof sa);
  sa.group = -1;
  for (;;) {
    gtok t = g_peek(lx);
    if (g_is(t, '}')) break;
    if (t.kind == G_EOF) {
      g_fail(lx, "expected '}' to end sharding attribute");
      return NULL;
    }
    g_lex(lx);
    if (!parse_single_attr(lx, &sa, t)) return NULL;
  }
  g_lex(lx); /* '}' */
  return build_single(lx, &sa, open_at);
}

md_sharding *md_parse_gspmd_sharding(sc_arena *a, ir_span text, uint32_t offset, const char **error) {
  glex lx;
  g_init(&lx, a, text, offset);
  md_sharding *s = NULL;
  gtok open = g_peek(&lx);
  if (!g_eat(&lx, '{')) {
    g_fail(&lx, "expected '{' to start sharding attribute");
    goto out;
  }
  gtok t = g_peek(&lx);
  if (!g_is(t, '{') && !g_is(t, '}')) {
    s = parse_single(&lx, true, open.at);
  } else {
    SC_VEC(md_sharding *) elems = {0};
    if (!g_is(t, '}')) {
      do {
        const char *st = g_peek(&lx).at;
        md_sharding *e = parse_single(&lx, false, NULL);
        if (!e) goto out;
        g_skip(&lx);
        e->text = ir_span_of(st, (uint32_t)(lx.p - st));
        SC_PUSH(a, elems, e);
      } while (g_eat(&lx, ','));
    }
    if (!g_expect(&lx, '}', "expected '}' to end sharding attribute")) goto out;
    s = md_sharding_new(a, SC_SHARDING_TUPLE, SC_SHARDING_FROM_GSPMD);
    s->offset = offset;
    s->elements = elems.v;
    s->nelements = (uint32_t)elems.n;
  }
  if (s && g_peek(&lx).kind != G_EOF) {
    g_fail(&lx, "Extra content after sharding");
    s = NULL;
  }
out:
  if (s) {
    s->text = text;
    return s;
  }
  if (error) *error = lx.err ? lx.err : "invalid sharding";
  return NULL;
}

int md_parse_gspmd_mesh_axes(sc_arena *a, ir_span text, uint32_t offset, const char **error) {
  glex lx;
  g_init(&lx, a, text, offset);
  gtok t = g_peek(&lx);
  if (t.kind == G_ATTR && ir_span_eq(t.text, "replica_groups")) g_lex(&lx);
  md_mesh *m;
  md_axis_ref *axes;
  uint32_t n;
  if (!parse_v3_mesh(&lx, &m) || !parse_v3_axis_list(&lx, m, &axes, &n)) goto fail;
  if (g_peek(&lx).kind != G_EOF) {
    g_fail(&lx, "Extra content after replica groups");
    goto fail;
  }
  {
    md_sharding tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.kind = SC_SHARDING_NAMED;
    tmp.source = SC_SHARDING_FROM_GSPMD;
    tmp.tiles = &md_no_tiles;
    tmp.replicated = axes;
    tmp.nreplicated = n;
    const char *e = md_sharding_verify_axes(a, &tmp, m);
    if (e) {
      if (error) *error = e;
      return -1;
    }
  }
  return 0;
fail:
  if (error) *error = lx.err ? lx.err : "invalid replica groups";
  return -1;
}

/* ---- serialized OpSharding protos (mhlo.sharding may hold proto bytes) -------------------------- */

typedef struct {
  const uint8_t *p, *e;
  bool bad;
} pbuf;

static uint64_t pb_varint(pbuf *b) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (b->p >= b->e) {
      b->bad = true;
      return 0;
    }
    uint8_t c = *b->p++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  b->bad = true;
  return 0;
}

typedef struct {
  int64_t type;
  i64vec dims, devices, reshape, perm, ltd;
  bool ltdr;
  SC_VEC(const char *) tuple;
  bool named;
} pb_sharding;

static const char *proto_text(sc_arena *a, const uint8_t *p, size_t n, int depth);

static void pb_push_ints(sc_arena *a, pbuf *b, uint32_t wt, i64vec *v) {
  if (wt == 0) {
    SC_PUSH(a, *v, (int64_t)pb_varint(b));
  } else if (wt == 2) {
    uint64_t len = pb_varint(b);
    if (len > (uint64_t)(b->e - b->p)) {
      b->bad = true;
      return;
    }
    pbuf sub = {b->p, b->p + len, false};
    while (sub.p < sub.e && !sub.bad) SC_PUSH(a, *v, (int64_t)pb_varint(&sub));
    if (sub.bad) b->bad = true;
    b->p += len;
  } else {
    b->bad = true;
  }
}

static const char *join_ints(sc_arena *a, const i64vec *v) {
  ar_str s = SC_ASTR_INIT(a);
  for (size_t i = 0; i < v->n; i++) ar_str_printf(&s, "%s%" PRId64, i ? "," : "", v->v[i]);
  return ar_str_str(&s);
}

static const char *proto_text(sc_arena *a, const uint8_t *p, size_t n, int depth) {
  if (depth > 8) return NULL;
  pbuf b = {p, p + n, false};
  pb_sharding s;
  memset(&s, 0, sizeof s);
  while (b.p < b.e && !b.bad) {
    uint64_t key = pb_varint(&b);
    uint32_t field = (uint32_t)(key >> 3), wt = (uint32_t)(key & 7);
    if (field == 0) return NULL;
    switch (field) {
    case 1: s.type = (int64_t)pb_varint(&b); break;
    case 3: pb_push_ints(a, &b, wt, &s.dims); break;
    case 4: pb_push_ints(a, &b, wt, &s.devices); break;
    case 6: s.ltdr = pb_varint(&b) != 0; break;
    case 8: pb_push_ints(a, &b, wt, &s.ltd); break;
    case 9: pb_push_ints(a, &b, wt, &s.reshape); break;
    case 10: pb_push_ints(a, &b, wt, &s.perm); break;
    case 5: {
      if (wt != 2) return NULL;
      uint64_t len = pb_varint(&b);
      if (b.bad || len > (uint64_t)(b.e - b.p)) return NULL;
      const char *t = proto_text(a, b.p, (size_t)len, depth + 1);
      if (!t) return NULL;
      SC_PUSH(a, s.tuple, t);
      b.p += len;
      break;
    }
    default:
      if (field == 14) s.named = true;
      if (wt == 0) pb_varint(&b);
      else if (wt == 1 || wt == 5 || wt == 2) { /* fixed64, fixed32, length-delimited: skip, in bounds */
        uint64_t len = wt == 1 ? 8 : wt == 5 ? 4 : pb_varint(&b);
        if (b.bad || len > (uint64_t)(b.e - b.p)) return NULL;
        b.p += len;
      } else return NULL;
    }
  }
  if (b.bad || s.named) return NULL;
  switch (s.type) {
  case 0: return "{replicated}";
  case 1: return s.devices.n == 1 ? ar_printf(a, "{maximal device=%" PRId64 "}", s.devices.v[0]) : "{maximal}";
  case 2: { /* one growing buffer: a container may hold many elements */
    ar_str t = SC_ASTR_INIT(a);
    ar_str_puts(&t, "{");
    for (size_t i = 0; i < s.tuple.n; i++) ar_str_printf(&t, "%s%s", i ? ", " : "", s.tuple.v[i]);
    ar_str_puts(&t, "}");
    return ar_str_str(&t);
  }
  case 4: return "{manual}";
  case 5: return "{unknown}";
  case 6: return "{unreduced}";
  case 3: break;
  default: return NULL;
  }
  /* FromProto: one device or an all-1 iota means replicated */
  if (!s.reshape.n && s.devices.n == 1) return "{replicated}";
  if (s.reshape.n) {
    bool all1 = true;
    for (size_t i = 0; i < s.reshape.n; i++) all1 &= s.reshape.v[i] == 1;
    if (all1) return "{replicated}";
  }
  char *t = ar_printf(a, "{devices=[%s]", join_ints(a, &s.dims));
  if (s.reshape.n) {
    t = ar_printf(a, "%s<=[%s]", t, join_ints(a, &s.reshape));
    if (s.reshape.n > 1) t = ar_printf(a, "%sT(%s)", t, join_ints(a, &s.perm));
  } else {
    t = ar_printf(a, "%s%s", t, join_ints(a, &s.devices));
  }
  if (s.ltdr) t = ar_printf(a, "%s last_tile_dim_replicate", t);
  if (s.ltd.n) {
    static const char *names[] = {"replicated", "maximal", "tuple", "other", "manual", "unknown", "unreduced"};
    ar_str l = SC_ASTR_INIT(a);
    for (size_t i = 0; i < s.ltd.n; i++) {
      int64_t k = s.ltd.v[i];
      ar_str_printf(&l, "%s%s", i ? ", " : "", (k >= 0 && k <= 6) ? names[k] : "other");
    }
    t = ar_printf(a, "%s last_tile_dims={%s}", t, ar_str_str(&l));
  }
  return ar_printf(a, "%s}", t);
}

const char *md_gspmd_proto_to_text(sc_arena *a, const void *bytes, size_t n) {
  if (n == 0) return "{replicated}";
  return proto_text(a, bytes, n, 0);
}
