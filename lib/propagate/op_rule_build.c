/* op_rule_build.c — the rule builder and attribute readers the registry (op_rule.c) is written with. */
#include "propagate/op_rule_build.h"

#include <ctype.h>
#include <string.h>

void pb_fail(pb_builder *b, const char *msg) {
  if (!b->err) b->err = msg;
}

void pb_init(pb_builder *b, sc_arena *a, const pb_shape *operands, uint32_t noperands, const pb_shape *results,
             uint32_t nresults) {
  memset(b, 0, sizeof *b);
  b->a = a;
  b->noperands = noperands;
  b->ntensors = noperands + nresults;
  b->rank = ar_calloc(a, b->ntensors ? b->ntensors : 1, sizeof *b->rank);
  b->map = ar_calloc(a, b->ntensors ? b->ntensors : 1, sizeof *b->map);
  for (uint32_t t = 0; t < b->ntensors; t++) {
    const pb_shape *s = t < noperands ? &operands[t] : &results[t - noperands];
    if (s->tensor && s->rank < 0) {
      pb_fail(b, t < noperands ? "an operand is an unranked tensor" : "a result is an unranked tensor");
      continue;
    }
    b->rank[t] = s->rank > 0 ? s->rank : 0; /* non-tensors (tokens) have rank 0, as in Shardy */
    b->map[t] = ar_calloc(a, b->rank[t] ? (size_t)b->rank[t] : 1, sizeof *b->map[t]);
  }
}

static uint32_t reserve_factor(pb_builder *b, int64_t size, prop_factor_type type, bool blocked) {
  if (b->nfactors == b->cap) {
    uint32_t nc = b->cap ? b->cap * 2 : 8;
    b->factors = ar_grow(b->a, b->factors, b->nfactors, nc, sizeof *b->factors);
    b->cap = nc;
  }
  prop_factor *f = &b->factors[b->nfactors];
  f->size = size;
  f->type = (uint8_t)type;
  f->blocked = blocked;
  return b->nfactors++;
}

static void push_factor(pb_builder *b, pb_dimvec *d, uint32_t factor) {
  if (d->n == d->cap) {
    uint32_t nc = d->cap ? d->cap * 2 : 2;
    d->v = ar_grow(b->a, d->v, d->n, nc, sizeof *d->v);
    d->cap = nc;
  }
  d->v[d->n++] = factor;
}

/* Maps factor `f` onto dimension `dim` of tensor `t`; a dimension outside the tensor fails the rule. */
static void map_dim(pb_builder *b, uint32_t t, int64_t dim, uint32_t f, bool skip_if_size_one) {
  if (dim == PB_NULL_DIM) return;
  if (dim < 0 || dim >= b->rank[t]) {
    pb_fail(b, "a dimension the rule names is outside its tensor's rank");
    return;
  }
  pb_dimvec *d = &b->map[t][dim];
  if (skip_if_size_one && b->factors[f].size == 1 && d->n) return;
  push_factor(b, d, f);
}

void pb_add(pb_builder *b, const int64_t *operand_dims, uint32_t noperand_dims, const int64_t *result_dims,
            uint32_t nresult_dims, int64_t size, prop_factor_type type, bool blocked) {
  if (b->err) return;
  uint32_t f = reserve_factor(b, size, type, blocked);
  for (uint32_t t = 0; t < b->noperands && t < noperand_dims; t++) map_dim(b, t, operand_dims[t], f, true);
  for (uint32_t t = 0; t + b->noperands < b->ntensors && t < nresult_dims; t++)
    map_dim(b, t + b->noperands, result_dims[t], f, true);
}

void pb_add1(pb_builder *b, int64_t operand_dim, int64_t result_dim, int64_t size, prop_factor_type type, bool blocked) {
  if (b->err) return;
  if (b->noperands != 1 || b->ntensors != 2) {
    pb_fail(b, "the rule expects one operand and one result");
    return;
  }
  pb_add(b, &operand_dim, 1, &result_dim, 1, size, type, blocked);
}

/* A factor on `dim` of every tensor of rank > 0 in [from, to). */
static void add_same(pb_builder *b, uint32_t from, uint32_t to, int64_t dim, int64_t size, prop_factor_type type,
                     bool blocked) {
  if (b->err) return;
  uint32_t f = reserve_factor(b, size, type, blocked);
  for (uint32_t t = from; t < to; t++)
    if (b->rank[t] > 0) map_dim(b, t, dim, f, false);
}

void pb_add_operands(pb_builder *b, int64_t dim, int64_t size, prop_factor_type type, bool blocked) {
  add_same(b, 0, b->noperands, dim, size, type, blocked);
}
void pb_add_results(pb_builder *b, int64_t dim, int64_t size, prop_factor_type type, bool blocked) {
  add_same(b, b->noperands, b->ntensors, dim, size, type, blocked);
}
void pb_add_all(pb_builder *b, int64_t dim, int64_t size, prop_factor_type type, bool blocked) {
  add_same(b, 0, b->ntensors, dim, size, type, blocked);
}

prop_rule *pb_build(pb_builder *b) {
  if (b->err) return NULL;
  prop_rule *r = ar_calloc(b->a, 1, sizeof *r);
  r->noperands = b->noperands;
  r->nresults = b->ntensors - b->noperands;
  prop_tensor *tensors = ar_calloc(b->a, b->ntensors ? b->ntensors : 1, sizeof *tensors);
  r->operands = tensors;
  r->results = tensors + b->noperands;
  /* Every dimension without a factor gets its own size-1 factor, in tensor order. */
  for (uint32_t t = 0; t < b->ntensors; t++)
    for (int32_t d = 0; d < b->rank[t]; d++)
      if (b->map[t][d].n == 0) push_factor(b, &b->map[t][d], reserve_factor(b, 1, PROP_FACTOR_PASS_THROUGH, false));
  for (uint32_t t = 0; t < b->ntensors; t++) {
    tensors[t].rank = (uint32_t)b->rank[t];
    tensors[t].dims = ar_calloc(b->a, b->rank[t] ? (size_t)b->rank[t] : 1, sizeof *tensors[t].dims);
    for (int32_t d = 0; d < b->rank[t]; d++) {
      tensors[t].dims[d].factors = b->map[t][d].v;
      tensors[t].dims[d].nfactors = b->map[t][d].n;
    }
  }
  r->factors = b->factors;
  r->nfactors = b->nfactors;
  return r;
}

/* ---- attribute text ---- */

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$'; }

/* The end of a field value starting at p: the first ',' ':' or '{' at depth 0, or an unmatched closer. */
static const char *value_end(const char *p, const char *end) {
  int depth = 0;
  const char *start = p;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = ir_skip_string(p, end);
      continue;
    }
    if (c == '-' && p + 1 < end && p[1] == '>') { /* `->` is not a closing '>' */
      p += 2;
      continue;
    }
    if (c == '[' || c == '(' || c == '<') depth++;
    else if (c == '{') {
      if (depth == 0 && p > start) break;
      depth++;
    } else if (c == ']' || c == ')' || c == '>' || c == '}') {
      if (depth == 0) break;
      depth--;
    } else if (depth == 0 && (c == ',' || c == ':')) break;
    p++;
  }
  return p;
}

bool pb_find_field(ir_span text, const char *name, ir_span *value) {
  size_t n = strlen(name);
  const char *p = text.p, *end = text.p + text.n;
  if (!p || n == 0) return false;
  while (p < end) {
    if (*p == '"') {
      p = ir_skip_string(p, end);
      continue;
    }
    if ((size_t)(end - p) > n && memcmp(p, name, n) == 0 && (p == text.p || !ident_char(p[-1])) && !ident_char(p[n])) {
      const char *q = p + n;
      while (q < end && isspace((unsigned char)*q)) q++;
      if (q < end && *q == '=' && !(q + 1 < end && q[1] == '=')) {
        q++;
        while (q < end && isspace((unsigned char)*q)) q++;
        const char *e = value_end(q, end);
        *value = ir_span_trim(ir_span_of(q, (uint32_t)(e - q)));
        return true;
      }
    }
    p++;
  }
  return false;
}

/* Reads an optionally signed decimal integer at *pp (saturating); false if there is none. */
static bool read_int(const char **pp, const char *end, int64_t *out) {
  const char *p = *pp;
  bool neg = false;
  if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
  if (p >= end || !isdigit((unsigned char)*p)) return false;
  int64_t v = 0;
  while (p < end && isdigit((unsigned char)*p)) {
    if (v < INT64_MAX / 10) v = v * 10 + (*p - '0');
    p++;
  }
  *out = neg ? -v : v;
  *pp = p;
  return true;
}

bool pb_int(ir_span text, int64_t *out) {
  const char *p = text.p, *end = text.p + text.n;
  while (p < end && (isspace((unsigned char)*p) || *p == '{' || *p == '[')) p++; /* also HLO's `{1}` */
  return read_int(&p, end, out);
}

/* Integers in [p, end) separated by ',', brackets and spaces (nested lists flattened). */
static int32_t ints_between(sc_arena *a, const char *p, const char *end, int64_t **out) {
  SC_VEC(int64_t) v = {0};
  while (p < end) {
    char c = *p;
    if (c == '[' || c == ']' || c == '{' || c == '}' || c == ',' || isspace((unsigned char)c)) {
      p++;
      continue;
    }
    int64_t x;
    if (!read_int(&p, end, &x)) return -1;
    if (v.n == PB_MAX_LIST) return -1;
    SC_PUSH(a, v, x);
  }
  *out = v.v ? v.v : ar_calloc(a, 1, sizeof **out);
  return (int32_t)v.n;
}

/* The matching closer of the bracket at p, or NULL. */
static const char *match_close(const char *p, const char *end) {
  int depth = 0;
  for (; p < end; p++) {
    if (*p == '"') {
      p = ir_skip_string(p, end) - 1;
      continue;
    }
    if (*p == '[' || *p == '<' || *p == '(' || *p == '{') depth++;
    else if (*p == ']' || *p == '>' || *p == ')' || *p == '}') {
      if (--depth == 0) return p;
    }
  }
  return NULL;
}

/* Element count of a `tensor<AxBxi64>` type text (1 for rank 0); -1 if it is not one. */
static int64_t tensor_elements(sc_arena *a, ir_span type) {
  ir_tensor_type t;
  if (!ir_parse_tensor_type(a, type, &t) || t.rank < 0) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; i++) {
    if (t.dims[i] < 0 || (t.dims[i] && n > INT32_MAX / t.dims[i])) return -1;
    n *= t.dims[i];
  }
  return n;
}

int32_t pb_int_list(sc_arena *a, ir_span text, int64_t **out) {
  ir_span t = ir_span_trim(text);
  const char *p = t.p, *end = t.p + t.n;
  if (!p || t.n == 0) return -1;
  if (ir_span_starts(t, "array<")) {
    const char *close = match_close(p + 5, end);
    if (!close) return -1;
    const char *colon = memchr(p, ':', (size_t)(close - p));
    return ints_between(a, colon ? colon + 1 : close, close, out);
  }
  if (ir_span_starts(t, "dense<")) {
    const char *close = match_close(p + 5, end);
    if (!close) return -1;
    const char *q = p + 6;
    while (q < close && isspace((unsigned char)*q)) q++;
    if (q == close || (q < close && *q == '[')) return ints_between(a, q, close, out); /* `dense<>`: none */
    int64_t x; /* a splat: one value repeated over the type's elements */
    if (!read_int(&q, close, &x)) return -1;
    const char *colon = memchr(close, ':', (size_t)(end - close));
    int64_t n = colon ? tensor_elements(a, ir_span_trim(ir_span_of(colon + 1, (uint32_t)(end - colon - 1)))) : 1;
    if (n < 0 || n > PB_MAX_LIST) return -1;
    int64_t *v = ar_calloc(a, n ? (size_t)n : 1, sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = x;
    *out = v;
    return (int32_t)n;
  }
  if (*p == '[' || *p == '{') { /* MLIR `[1, 0]`, HLO `{1,0}` */
    const char *close = match_close(p, end);
    if (!close) return -1;
    return ints_between(a, p, close + 1, out);
  }
  int64_t x;
  if (!pb_int(t, &x)) return -1;
  int64_t *v = ar_alloc(a, sizeof *v);
  *v = x;
  *out = v;
  return 1;
}
