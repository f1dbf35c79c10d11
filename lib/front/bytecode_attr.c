/* bytecode_attr.c — MLIR bytecode primitives, the text pool, and the attribute/type encodings of the
 * dialects JAX artifacts use: builtin (MLIR's BuiltinDialectBytecode), vhlo (StableHLO's portable
 * dialect, every version in the corpus) and sdy (Shardy). Entries written in the assembly-format
 * fallback arrive as their text. Each entry is decoded once (memoized by index) with a nesting bound
 * and a cycle guard; its MLIR text is rendered on demand into the text pool. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/bytecode.h"

#define BC_MAX_NESTING 64u

static void render_list(bc *s, bc_attr *const *v, uint32_t n, const char *sep);
static int64_t *read_svarint_list(bc *s, bc_rd *r, uint32_t *n);

/* ---- reading ------------------------------------------------------------------------------------ */

bool bc_ok(const bc *s) { return !s->err->failed; }

void bc_fail(bc *s, const uint8_t *at, const char *fmt, ...) {
  if (s->err->failed) return;
  va_list ap;
  va_start(ap, fmt);
  const char *msg = ar_vprintf(s->a, fmt, ap);
  va_end(ap);
  uint32_t off = s->base_off + (uint32_t)(at && at >= s->base && at <= s->base + s->len ? at - s->base : 0);
  s->err->failed = true;
  s->err->offset = off;
  s->err->message = ar_printf(s->a, "MLIR bytecode: %s (at byte offset %u)", msg, off);
}

uint8_t bc_byte(bc *s, bc_rd *r) {
  if (!bc_ok(s)) return 0;
  if (r->p >= r->end) {
    bc_fail(s, r->p, "unexpected end of data");
    return 0;
  }
  return *r->p++;
}

uint64_t bc_varint(bc *s, bc_rd *r) {
  if (!bc_ok(s)) return 0;
  if (r->p >= r->end) {
    bc_fail(s, r->p, "unexpected end of data in a varint");
    return 0;
  }
  uint8_t first = r->p[0];
  if (first & 1) {
    r->p++;
    return first >> 1;
  }
  unsigned extra = first ? (unsigned)__builtin_ctz(first) : 8;
  if ((size_t)(r->end - r->p) < extra + 1) {
    bc_fail(s, r->p, "varint runs past the end of its section");
    return 0;
  }
  uint64_t v = 0;
  if (!first) {
    for (unsigned i = 0; i < 8; i++) v |= (uint64_t)r->p[1 + i] << (8 * i);
  } else {
    for (unsigned i = 0; i <= extra; i++) v |= (uint64_t)r->p[i] << (8 * i);
    v >>= extra + 1;
  }
  r->p += extra + 1;
  return v;
}

int64_t bc_svarint(bc *s, bc_rd *r) {
  uint64_t v = bc_varint(s, r);
  return (int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

uint64_t bc_varint_flag(bc *s, bc_rd *r, bool *flag) {
  uint64_t v = bc_varint(s, r);
  *flag = v & 1;
  return v >> 1;
}

const uint8_t *bc_bytes(bc *s, bc_rd *r, uint64_t n) {
  if (!bc_ok(s)) return NULL;
  if (n > (uint64_t)(r->end - r->p)) {
    if (r->end == s->base + s->len) /* reading up to the end of the input: the input ends early */
      bc_fail(s, r->p, "the file looks truncated: %" PRIu64 " bytes requested where %zu remain before its end", n,
              (size_t)(r->end - r->p));
    else
      bc_fail(s, r->p, "%" PRIu64 " bytes requested where %zu remain in the section (corrupt bytecode)", n,
              (size_t)(r->end - r->p));
    return NULL;
  }
  const uint8_t *p = r->p;
  r->p += n;
  return p;
}

uint64_t bc_count(bc *s, bc_rd *r) {
  const uint8_t *at = r->p;
  uint64_t n = bc_varint(s, r);
  if (bc_ok(s) && n > (uint64_t)(r->end - r->p)) {
    bc_fail(s, at, "count %" PRIu64 " exceeds the %zu bytes that remain", n, (size_t)(r->end - r->p));
    return 0;
  }
  return n;
}

ir_span bc_string(bc *s, bc_rd *r) {
  const uint8_t *at = r->p;
  uint64_t i = bc_varint(s, r);
  if (!bc_ok(s)) return ir_span_of("", 0);
  if (i >= s->nstrs) {
    bc_fail(s, at, "string index %" PRIu64 " out of range (%u strings)", i, s->nstrs);
    return ir_span_of("", 0);
  }
  return s->strs[i];
}

/* ---- text pool ---------------------------------------------------------------------------------- */

ir_span bc_put(bc *s, const char *p, size_t n) {
  if (s->pool_full || n > s->pool_cap - s->pool_used) {
    s->pool_full = true;
    return ir_span_of("", 0);
  }
  char *d = s->pool + s->pool_used;
  if (n) memcpy(d, p, n);
  s->pool_used += n;
  return ir_span_of(d, (uint32_t)n);
}

ir_span bc_puts(bc *s, const char *str) { return bc_put(s, str, strlen(str)); }

ir_span bc_printf(bc *s, const char *fmt, ...) {
  if (s->pool_full) return ir_span_of("", 0);
  size_t room = s->pool_cap - s->pool_used;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(s->pool + s->pool_used, room, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= room) {
    s->pool_full = true;
    return ir_span_of("", 0);
  }
  char *d = s->pool + s->pool_used;
  s->pool_used += (size_t)n;
  return ir_span_of(d, (uint32_t)n);
}

void bc_put_quoted(bc *s, ir_span raw) {
  static const char hex[] = "0123456789ABCDEF";
  bc_put(s, "\"", 1);
  if (!raw.n) { /* an empty string may have no bytes at all (p NULL) */
    bc_put(s, "\"", 1);
    return;
  }
  const char *run = raw.p;
  for (uint32_t i = 0; i < raw.n; i++) {
    unsigned char c = (unsigned char)raw.p[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') continue;
    bc_put(s, run, (size_t)(raw.p + i - run));
    char esc[3] = {'\\', hex[c >> 4], hex[c & 15]};
    if (c == '\\') esc[1] = '\\';
    bc_put(s, esc, c == '\\' ? 2 : 3);
    run = raw.p + i + 1;
  }
  bc_put(s, run, (size_t)(raw.p + raw.n - run));
  bc_put(s, "\"", 1);
}

/* ---- types -------------------------------------------------------------------------------------- */

static bc_type *new_type(bc *s, ir_span text) {
  bc_type *t = ar_alloc(s->a, sizeof *t);
  t->text = text;
  t->nelems = -1;
  t->rank = -1;
  return t;
}

static bc_type *scalar(bc *s, const char *text, uint8_t kind, uint32_t bits) {
  bc_type *t = new_type(s, bc_puts(s, text));
  t->elem_kind = kind;
  t->elem_bits = bits;
  return t;
}

static void put_type_list(bc *s, const bc_type *const *v, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    if (i) bc_put(s, ", ", 2);
    bc_put(s, v[i]->text.p, v[i]->text.n);
  }
}

static const bc_type **read_type_list(bc *s, bc_rd *r, uint64_t *n) {
  *n = bc_count(s, r);
  const bc_type **v = ar_calloc(s->a, *n ? *n : 1, sizeof *v);
  for (uint64_t i = 0; i < *n && bc_ok(s); i++) v[i] = bc_read_type(s, r);
  if (!bc_ok(s)) *n = 0;
  return v;
}

static bc_type *function_type(bc *s, bc_rd *r) {
  uint64_t ni, no;
  const bc_type **in = read_type_list(s, r, &ni);
  const bc_type **out = read_type_list(s, r, &no);
  size_t m = bc_mark(s);
  bc_put(s, "(", 1);
  put_type_list(s, in, ni);
  bc_put(s, ") -> ", 5);
  if (no == 1 && !(out[0]->text.n && out[0]->text.p[0] == '(')) put_type_list(s, out, no);
  else {
    bc_put(s, "(", 1);
    put_type_list(s, out, no);
    bc_put(s, ")", 1);
  }
  bc_type *t = new_type(s, bc_since(s, m));
  t->ins = in, t->nins = (uint32_t)ni, t->outs = out, t->nouts = (uint32_t)no;
  return t;
}

/* tensor<4x?xf32[, encoding]> */
static bc_type *ranked_tensor(bc *s, bc_rd *r, bool with_encoding) {
  const bc_attr *enc = with_encoding ? bc_read_attr(s, r) : NULL;
  uint64_t rank = bc_count(s, r);
  int64_t *dims = ar_calloc(s->a, rank ? rank : 1, sizeof *dims);
  int64_t total = 1;
  for (uint64_t i = 0; i < rank && bc_ok(s); i++) {
    dims[i] = bc_svarint(s, r);
    if (dims[i] < 0) total = -1;
    else if (total >= 0 && dims[i] && total > INT64_MAX / dims[i]) total = -1;
    else if (total >= 0) total *= dims[i];
  }
  const bc_type *elem = bc_read_type(s, r);
  if (!bc_ok(s)) return NULL;
  size_t m = bc_mark(s);
  bc_put(s, "tensor<", 7);
  for (uint64_t i = 0; i < rank; i++) {
    if (dims[i] < 0) bc_put(s, "?x", 2);
    else bc_printf(s, "%" PRId64 "x", dims[i]);
  }
  bc_put(s, elem->text.p, elem->text.n);
  if (enc) {
    bc_put(s, ", ", 2);
    bc_render(s, enc);
  }
  bc_put(s, ">", 1);
  bc_type *t = new_type(s, bc_since(s, m));
  t->nelems = total;
  t->rank = (int32_t)rank;
  t->dims = dims;
  t->elem = elem;
  t->elem_kind = elem->elem_kind;
  t->elem_bits = elem->elem_bits;
  return t;
}

static bc_type *wrap_type(bc *s, const char *open, const bc_type *inner, const char *close) {
  if (!inner) return NULL;
  size_t m = bc_mark(s);
  bc_puts(s, open);
  bc_put(s, inner->text.p, inner->text.n);
  bc_puts(s, close);
  return new_type(s, bc_since(s, m));
}

static bc_type *tuple_type(bc *s, bc_rd *r) {
  uint64_t n;
  const bc_type **v = read_type_list(s, r, &n);
  size_t m = bc_mark(s);
  bc_put(s, "tuple<", 6);
  put_type_list(s, v, n);
  bc_put(s, ">", 1);
  return new_type(s, bc_since(s, m));
}

static bc_type *builtin_type(bc *s, bc_rd *r, uint64_t code) {
  switch (code) {
  case 0: { /* IntegerType: width << 2 | signedness */
    uint64_t ws = bc_varint(s, r);
    uint32_t w = (uint32_t)(ws >> 2);
    unsigned sign = ws & 3;
    char buf[32];
    snprintf(buf, sizeof buf, "%s%u", sign == 1 ? "si" : sign == 2 ? "ui" : "i", w);
    return scalar(s, buf, w == 1 ? 4 : sign == 2 ? 2 : 1, w);
  }
  case 1: return scalar(s, "index", 1, 64);
  case 2: return function_type(s, r);
  case 3: return scalar(s, "bf16", 3, 16);
  case 4: return scalar(s, "f16", 3, 16);
  case 5: return scalar(s, "f32", 3, 32);
  case 6: return scalar(s, "f64", 3, 64);
  case 7: return scalar(s, "f80", 3, 80);
  case 8: return scalar(s, "f128", 3, 128);
  case 9: {
    bc_type *t = wrap_type(s, "complex<", bc_read_type(s, r), ">");
    if (t) t->elem_kind = 5;
    return bc_ok(s) ? t : NULL;
  }
  case 12: return scalar(s, "none", 0, 0);
  case 13: return ranked_tensor(s, r, false);
  case 14: return ranked_tensor(s, r, true);
  case 15: return tuple_type(s, r);
  case 18: {
    const bc_type *e = bc_read_type(s, r);
    return bc_ok(s) ? wrap_type(s, "tensor<*x", e, ">") : NULL;
  }
  default: /* memrefs and vectors do not occur in StableHLO artifacts */
    bc_fail(s, r->p, "unsupported builtin type code %" PRIu64, code);
    return NULL;
  }
}

/* An APFloat of IEEE double semantics (MLIR: the 64 bits as a signed varint). */
static double read_double(bc *s, bc_rd *r) {
  uint64_t bits = (uint64_t)bc_svarint(s, r);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* UniformQuantizedV1 / UniformQuantizedPerAxisV1: flags, storage and expressed types, [axis], storage
 * bounds, scale(s) and zero point(s); rendered as `!quant.uniform<i8:f32[:axis], ...>`, storing as its
 * storage type. */
static bc_type *quantized_type(bc *s, bc_rd *r, bool per_axis) {
  bc_varint(s, r); /* flags: signedness of the storage type */
  const bc_type *storage = bc_read_type(s, r), *expressed = bc_read_type(s, r);
  if (!bc_ok(s)) return NULL;
  size_t m = bc_mark(s);
  bc_puts(s, "!quant.uniform<");
  bc_put(s, storage->text.p, storage->text.n);
  bc_put(s, ":", 1);
  bc_put(s, expressed->text.p, expressed->text.n);
  if (per_axis) {
    uint64_t axis = bc_varint(s, r);
    bc_svarint(s, r), bc_svarint(s, r); /* storage min, max */
    uint64_t nscales = bc_count(s, r);
    bc_printf(s, ":%" PRIu64 ", {", axis);
    for (uint64_t i = 0; i < nscales && bc_ok(s); i++) bc_printf(s, "%s%g", i ? ", " : "", read_double(s, r));
    uint64_t nzero = bc_count(s, r);
    for (uint64_t i = 0; i < nzero && bc_ok(s); i++) bc_svarint(s, r);
    bc_put(s, "}>", 2);
  } else {
    double scale = read_double(s, r);
    int64_t zero = bc_svarint(s, r);
    bc_svarint(s, r), bc_svarint(s, r); /* storage min, max */
    bc_printf(s, ", %g:%" PRId64 ">", scale, zero);
  }
  if (!bc_ok(s)) return NULL;
  bc_type *t = new_type(s, bc_since(s, m));
  t->elem_kind = storage->elem_kind;
  t->elem_bits = storage->elem_bits;
  return t;
}

/* RankedBufferV1: shape, element type; `memref<4x?xf32>`. */
static bc_type *buffer_type(bc *s, bc_rd *r) {
  uint32_t rank;
  int64_t *dims = read_svarint_list(s, r, &rank);
  const bc_type *elem = bc_read_type(s, r);
  if (!bc_ok(s)) return NULL;
  size_t m = bc_mark(s);
  bc_puts(s, "memref<");
  for (uint32_t i = 0; i < rank; i++) {
    if (dims[i] < 0) bc_put(s, "?x", 2);
    else bc_printf(s, "%" PRId64 "x", dims[i]);
  }
  bc_put(s, elem->text.p, elem->text.n);
  bc_put(s, ">", 1);
  return new_type(s, bc_since(s, m));
}

static bc_type *vhlo_type(bc *s, bc_rd *r, uint64_t code) {
  static const struct {
    const char *text;
    uint8_t kind;
    uint8_t bits;
  } scalars[] = {
      [0] = {"i1", 4, 1},           [2] = {"bf16", 3, 16},      [3] = {"f16", 3, 16},
      [4] = {"f32", 3, 32},         [5] = {"f64", 3, 64},       [6] = {"f8E4M3FN", 3, 8},
      [7] = {"f8E5M2", 3, 8},       [9] = {"index", 1, 64},     [10] = {"i4", 1, 4},
      [11] = {"i8", 1, 8},          [12] = {"i16", 1, 16},      [13] = {"i32", 1, 32},
      [14] = {"i64", 1, 64},        [15] = {"ui4", 2, 4},       [16] = {"ui8", 2, 8},
      [17] = {"ui16", 2, 16},       [18] = {"ui32", 2, 32},     [19] = {"ui64", 2, 64},
      [22] = {"!stablehlo.token", 0, 0},                        [26] = {"!shape.witness", 0, 0},
      [27] = {"f8E4M3FNUZ", 3, 8},  [28] = {"f8E5M2FNUZ", 3, 8}, [29] = {"f8E4M3B11FNUZ", 3, 8},
      [31] = {"i2", 1, 2},          [32] = {"ui2", 2, 2},       [33] = {"none", 0, 0},
      [34] = {"tf32", 3, 19},       [35] = {"f8E4M3", 3, 8},    [36] = {"f8E3M4", 3, 8},
      [37] = {"f4E2M1FN", 3, 4},    [38] = {"f6E2M3FN", 3, 6},  [39] = {"f6E3M2FN", 3, 6},
      [40] = {"f8E8M0FNU", 3, 8},
  };
  if (code < sizeof scalars / sizeof *scalars && scalars[code].text)
    return scalar(s, scalars[code].text, scalars[code].kind, scalars[code].bits);
  switch (code) {
  case 1: {
    bc_type *t = wrap_type(s, "complex<", bc_read_type(s, r), ">");
    if (t) t->elem_kind = 5;
    return bc_ok(s) ? t : NULL;
  }
  case 8: return function_type(s, r);
  case 20: return ranked_tensor(s, r, false);
  case 21: return ranked_tensor(s, r, true);
  case 23: return tuple_type(s, r);
  case 25: {
    const bc_type *e = bc_read_type(s, r);
    return bc_ok(s) ? wrap_type(s, "tensor<*x", e, ">") : NULL;
  }
  case 24: case 30: return quantized_type(s, r, code == 30);
  case 41: return buffer_type(s, r);
  case 42: { /* FutureV1: the values an async_start hands to its async_done */
    uint64_t n;
    const bc_type **v = read_type_list(s, r, &n);
    size_t m = bc_mark(s);
    bc_puts(s, "!stablehlo.future<");
    put_type_list(s, v, n);
    bc_put(s, ">", 1);
    return bc_ok(s) ? new_type(s, bc_since(s, m)) : NULL;
  }
  default:
    bc_fail(s, r->p,
            "VHLO type code %" PRIu64 " is not one StableHLO v%u.%u defines (the newest this reader knows); the artifact "
            "(producer '%.*s') needs a shardcheck that knows its StableHLO version",
            code, BC_NEWEST_STABLEHLO_MAJOR, BC_NEWEST_STABLEHLO_MINOR, SC_SPAN_ARG(s->producer));
    return NULL;
  }
}

/* Decodes entry `index` of an attribute or type table once: range check, memo, cycle guard and
 * nesting bound; `fn` gets the assembly-format text (fallback entries) or a reader (custom ones). */
typedef void *(*entry_decoder)(bc *s, const bc_entry *e, bc_rd *r, ir_span asm_text);

static void *decode_entry(bc *s, bc_entry *entries, uint32_t n, uint64_t index, const char *what, entry_decoder fn) {
  if (!bc_ok(s)) return NULL;
  if (index >= n) {
    bc_fail(s, NULL, "%s index %" PRIu64 " out of range (%u entries)", what, index, n);
    return NULL;
  }
  bc_entry *e = &entries[index];
  if (e->state == 2) return e->val;
  if (e->state == 1) {
    bc_fail(s, e->p, "%s %" PRIu64 " refers to itself", what, index);
    return NULL;
  }
  if (s->depth >= BC_MAX_NESTING) {
    bc_fail(s, e->p, "%ss nested deeper than %u levels", what, BC_MAX_NESTING);
    return NULL;
  }
  e->state = 1;
  s->depth++;
  bc_rd r = {e->p, e->p + e->n};
  void *v = NULL;
  if (!e->custom) {
    const uint8_t *nul = memchr(r.p, 0, e->n);
    if (!nul) bc_fail(s, e->p, "%s text is not NUL-terminated", what);
    else v = fn(s, e, NULL, bc_put(s, (const char *)r.p, (size_t)(nul - r.p)));
  } else {
    v = fn(s, e, &r, ir_span_of("", 0));
  }
  s->depth--;
  if (!bc_ok(s) || !v) {
    if (bc_ok(s)) bc_fail(s, e->p, "could not decode %s %" PRIu64, what, index);
    return NULL;
  }
  e->state = 2;
  e->val = v;
  return v;
}

static void *decode_type(bc *s, const bc_entry *e, bc_rd *r, ir_span asm_text) {
  if (!r) return new_type(s, asm_text);
  uint64_t code = bc_varint(s, r);
  uint8_t dk = s->dialect_kind[e->dialect];
  if (dk == BC_D_BUILTIN) return builtin_type(s, r, code);
  if (dk == BC_D_VHLO) return vhlo_type(s, r, code);
  bc_fail(s, e->p, "custom-encoded type of dialect '%.*s' is not supported", SC_SPAN_ARG(s->dialects[e->dialect]));
  return NULL;
}

const bc_type *bc_type_at(bc *s, uint64_t index) { return decode_entry(s, s->types, s->ntypes, index, "type", decode_type); }

const bc_type *bc_read_type(bc *s, bc_rd *r) {
  uint64_t i = bc_varint(s, r);
  return bc_ok(s) ? bc_type_at(s, i) : NULL;
}

/* ---- attributes: decoding ----------------------------------------------------------------------- */

static bc_attr *new_attr(bc *s, uint8_t kind) {
  bc_attr *a = ar_alloc(s->a, sizeof *a);
  a->kind = kind;
  a->j = -1;
  return a;
}

static bc_attr **read_attr_list(bc *s, bc_rd *r, uint32_t *n) {
  uint64_t c = bc_count(s, r);
  bc_attr **v = ar_calloc(s->a, c ? c : 1, sizeof *v);
  for (uint64_t i = 0; i < c && bc_ok(s); i++) v[i] = (bc_attr *)bc_read_attr(s, r);
  *n = bc_ok(s) ? (uint32_t)c : 0;
  return v;
}

static int64_t *read_svarint_list(bc *s, bc_rd *r, uint32_t *n) {
  uint64_t c = bc_count(s, r);
  int64_t *v = ar_calloc(s->a, c ? c : 1, sizeof *v);
  for (uint64_t i = 0; i < c && bc_ok(s); i++) v[i] = bc_svarint(s, r);
  *n = bc_ok(s) ? (uint32_t)c : 0;
  return v;
}

/* An APInt of `bits` (MLIR: <= 8 bits one byte, <= 64 a signed varint, wider: active words). */
static int64_t read_apint(bc *s, bc_rd *r, uint32_t bits, bool *wide) {
  *wide = false;
  if (bits <= 8) {
    uint8_t b = bc_byte(s, r);
    if (bits == 1) return b & 1;
    return bits == 8 ? (int64_t)(int8_t)b : (int64_t)b;
  }
  if (bits <= 64) return bc_svarint(s, r);
  uint64_t words = bc_count(s, r);
  int64_t low = 0;
  for (uint64_t i = 0; i < words && bc_ok(s); i++) {
    int64_t w = bc_svarint(s, r);
    if (i == 0) low = w;
  }
  *wide = true;
  return low;
}

static double bits_to_double(uint64_t v, uint32_t bits) {
  if (bits == 64) {
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
  }
  if (bits == 32) {
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  if (bits == 16) { /* f16 (bf16 is told apart by the caller's type text) */
    unsigned e = (v >> 10) & 31, m = v & 1023;
    double x = e == 0 ? m / 1024.0 / 16384.0 : e == 31 ? (m ? 0.0 / 0.0 : 1.0 / 0.0) : (1 + m / 1024.0) * (double)(1u << e) / 32768.0;
    return (v & 0x8000) ? -x : x;
  }
  return 0;
}

static double float_value(const bc_type *t, uint64_t raw) {
  if (t && t->text.n == 4 && !memcmp(t->text.p, "bf16", 4)) {
    uint32_t u = (uint32_t)(raw & 0xffff) << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  return bits_to_double(raw, t ? t->elem_bits : 64);
}

static bc_attr *enum_attr(bc *s, const char *what, const char *const *names, size_t nnames, uint64_t v) {
  bc_attr *a = new_attr(s, BA_ENUM);
  size_t m = bc_mark(s);
  if (v < nnames && names[v]) bc_printf(s, "#stablehlo<%s %s>", what, names[v]);
  else bc_printf(s, "#stablehlo<%s %" PRIu64 ">", what, v);
  a->s = bc_since(s, m);
  return a;
}

/* Encodings builtin and VHLO share: dictionaries ((name, value) attribute pairs), integers/floats
 * (type, APInt of the type's width) and dense elements (shaped type, raw blob). */
static bc_attr *read_dict(bc *s, bc_rd *r) {
  bc_attr *a = new_attr(s, BA_DICT);
  uint64_t n = bc_count(s, r);
  a->k = ar_calloc(s->a, n ? n : 1, sizeof *a->k);
  a->v = ar_calloc(s->a, n ? n : 1, sizeof *a->v);
  for (uint64_t i = 0; i < n && bc_ok(s); i++) {
    a->k[i] = (bc_attr *)bc_read_attr(s, r);
    a->v[i] = (bc_attr *)bc_read_attr(s, r);
  }
  a->n = bc_ok(s) ? (uint32_t)n : 0;
  return a;
}

static bc_attr *read_number(bc *s, bc_rd *r, bool integer) {
  bc_attr *a = new_attr(s, integer ? BA_INT : BA_FLOAT);
  a->t = bc_read_type(s, r);
  if (!bc_ok(s)) return NULL;
  if (integer && a->t->elem_kind == 4) a->kind = BA_BOOL;
  a->i = read_apint(s, r, a->t->elem_bits ? a->t->elem_bits : 64, &a->wide);
  if (!integer) a->f = float_value(a->t, (uint64_t)a->i);
  return a;
}

static bc_attr *read_dense(bc *s, bc_rd *r) {
  bc_attr *a = new_attr(s, BA_DENSE);
  a->t = bc_read_type(s, r);
  uint64_t n = bc_varint(s, r);
  a->blob = bc_bytes(s, r, n);
  a->nblob = (uint32_t)n;
  return a;
}

static bc_attr *builtin_attr(bc *s, bc_rd *r, uint64_t code) {
  bc_attr *a;
  switch (code) {
  case 0: a = new_attr(s, BA_ARRAY); a->v = read_attr_list(s, r, &a->n); return a;
  case 1: return read_dict(s, r); /* DictionaryAttr: (StringAttr name, Attribute value)[] */
  case 2: a = new_attr(s, BA_STRING); a->s = bc_string(s, r); return a;
  case 3: a = new_attr(s, BA_STRING); a->s = bc_string(s, r); a->t = bc_read_type(s, r); return a;
  case 4: a = new_attr(s, BA_SYMREF); a->s = bc_attr_str(bc_read_attr(s, r)); return a;
  case 5: a = new_attr(s, BA_SYMREF); a->s = bc_attr_str(bc_read_attr(s, r)); a->v = read_attr_list(s, r, &a->n); return a;
  case 6: a = new_attr(s, BA_TYPE); a->t = bc_read_type(s, r); return a;
  case 7: return new_attr(s, BA_UNIT);
  case 8: case 9: return read_number(s, r, code == 8);
  case 10: a = new_attr(s, BA_LOC_CALLSITE); a->n = 2; a->v = ar_calloc(s->a, 2, sizeof *a->v);
    a->v[0] = (bc_attr *)bc_read_attr(s, r); a->v[1] = (bc_attr *)bc_read_attr(s, r); return a;
  case 11: a = new_attr(s, BA_LOC_FILE); a->s = bc_attr_str(bc_read_attr(s, r));
    a->i = (int64_t)bc_varint(s, r); a->j = (int64_t)bc_varint(s, r); return a;
  case 12: case 13: a = new_attr(s, BA_LOC_FUSED); a->v = read_attr_list(s, r, &a->n);
    if (code == 13) bc_read_attr(s, r);
    return a;
  case 14: a = new_attr(s, BA_LOC_NAME); a->s = bc_attr_str(bc_read_attr(s, r)); a->n = 1;
    a->v = ar_calloc(s->a, 1, sizeof *a->v); a->v[0] = (bc_attr *)bc_read_attr(s, r); return a;
  case 15: return new_attr(s, BA_LOC_UNKNOWN);
  case 16: { /* DenseResourceElementsAttr: type, resource handle (blob kept out of the IR) */
    a = new_attr(s, BA_ASM);
    const bc_type *t = bc_read_type(s, r);
    bc_varint(s, r);
    if (!bc_ok(s)) return NULL;
    size_t m = bc_mark(s);
    bc_printf(s, "dense_resource<__elided__> : %.*s", SC_SPAN_ARG(t->text));
    a->s = bc_since(s, m);
    return a;
  }
  case 17: { /* DenseArrayAttr: element type, count, blob */
    a = new_attr(s, BA_DENSE_ARRAY);
    a->t = bc_read_type(s, r);
    a->i = (int64_t)bc_varint(s, r);
    uint64_t n = bc_varint(s, r);
    a->blob = bc_bytes(s, r, n);
    a->nblob = (uint32_t)n;
    return a;
  }
  case 18: return read_dense(s, r);
  case 19: { /* DenseStringElementsAttr: type, isSplat, strings */
    a = new_attr(s, BA_DENSE_STRING);
    a->t = bc_read_type(s, r);
    uint64_t splat = bc_varint(s, r);
    uint64_t n = splat ? 1 : (a->t && a->t->nelems >= 0 ? (uint64_t)a->t->nelems : 0);
    if (n > (uint64_t)(r->end - r->p)) {
      bc_fail(s, r->p, "dense string count exceeds its data");
      return NULL;
    }
    a->v = ar_calloc(s->a, n ? n : 1, sizeof *a->v);
    for (uint64_t i = 0; i < n && bc_ok(s); i++) {
      a->v[i] = new_attr(s, BA_STRING);
      a->v[i]->s = bc_string(s, r);
    }
    a->n = (uint32_t)n;
    return a;
  }
  case 21: a = new_attr(s, BA_ASM); bc_read_attr(s, r); a->s = ir_span_of("distinct[0]<>", 13); return a;
  case 22: { /* FileLineColRange: filename, [line, col, ...] */
    a = new_attr(s, BA_LOC_FILE);
    a->s = bc_attr_str(bc_read_attr(s, r));
    uint64_t n = bc_count(s, r);
    a->i = a->j = 0;
    for (uint64_t i = 0; i < n && bc_ok(s); i++) {
      uint64_t v = bc_varint(s, r);
      if (i == 0) a->i = (int64_t)v;
      else if (i == 1) a->j = (int64_t)v;
    }
    return a;
  }
  default:
    bc_fail(s, r->p, "unsupported builtin attribute code %" PRIu64, code);
    return NULL;
  }
}

static const char *const k_cmp_dir[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
static const char *const k_cmp_type[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
static const char *const k_precision[] = {"DEFAULT", "HIGH", "HIGHEST"};
static const char *const k_fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
static const char *const k_rng_alg[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
static const char *const k_rng_dist[] = {"UNSPECIFIED", "UNIFORM", "NORMAL"};
static const char *const k_transpose[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
static const char *const k_accuracy_mode[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};

static void put_i64_list(bc *s, const int64_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (v[i] == INT64_MIN) bc_printf(s, "%s?", i ? ", " : "");
    else bc_printf(s, "%s%" PRId64, i ? ", " : "", v[i]);
  }
}

/* VHLO's struct-like attributes of StableHLO 1.9 (result accuracy) and 1.16 (meshes and axes of mesh
 * replica groups), as StableHLO prints them: `#stablehlo.mesh_axis<name = "x", size = 2>`. Their parts
 * are decoded first, then the text is written in one piece. */
static bc_attr *vhlo_struct_attr(bc *s, bc_rd *r, uint64_t code) {
  const bc_attr *x = NULL, *y = NULL;
  int64_t n1 = 0, n2 = 0;
  double atol = 0, rtol = 0;
  bool present = true;
  switch (code) {
  case 20: atol = read_double(s, r), rtol = read_double(s, r), n1 = bc_svarint(s, r), x = bc_read_attr(s, r); break;
  case 21: n1 = bc_svarint(s, r), n2 = bc_svarint(s, r); break;
  case 22: x = bc_read_attr(s, r), present = bc_varint(s, r) != 0, y = present ? bc_read_attr(s, r) : NULL; break;
  case 23: x = bc_read_attr(s, r), y = bc_read_attr(s, r); break;
  case 24: x = bc_read_attr(s, r), n1 = bc_svarint(s, r); break;
  default: { /* 25: MeshV1, axes and optional device ids */
    x = bc_read_attr(s, r);
    uint64_t idx = bc_varint_flag(s, r, &present);
    y = present && bc_ok(s) ? bc_attr_at(s, idx) : NULL;
  }
  }
  if (!bc_ok(s)) return NULL;
  bc_attr *a = new_attr(s, BA_ASM);
  size_t m = bc_mark(s);
  switch (code) {
  case 20:
    bc_printf(s, "#stablehlo.result_accuracy<atol = %g, rtol = %g, ulps = %" PRId64 ", mode = ", atol, rtol, n1);
    bc_render(s, x);
    break;
  case 21: bc_printf(s, "#stablehlo.sub_axis_info<(%" PRId64 ")%" PRId64, n1, n2); break;
  case 22:
    bc_puts(s, "#stablehlo.axis_ref<name = ");
    bc_render(s, x);
    if (y) bc_puts(s, ", sub_axis_info = "), bc_render(s, y);
    break;
  case 23:
    bc_puts(s, "#stablehlo.replica_group_mesh_axes<mesh = ");
    bc_render(s, x);
    bc_puts(s, ", axes = ");
    bc_render(s, y);
    break;
  case 24:
    bc_puts(s, "#stablehlo.mesh_axis<name = ");
    bc_render(s, x);
    bc_printf(s, ", size = %" PRId64, n1);
    break;
  default:
    bc_puts(s, "#stablehlo.mesh<axes = ");
    bc_render(s, x);
    if (y) bc_puts(s, ", device_ids = "), bc_render(s, y);
  }
  bc_put(s, ">", 1);
  a->s = bc_since(s, m);
  return a;
}

static bc_attr *vhlo_attr(bc *s, bc_rd *r, uint64_t code) {
  bc_attr *a;
  switch (code) {
  case 0: case 10: { /* ArgResultAlias / OutputOperandAlias: rendered, not read by rules */
    uint32_t n1, n2;
    int64_t *l1 = read_svarint_list(s, r, &n1);
    int64_t idx = bc_svarint(s, r);
    int64_t *l2 = read_svarint_list(s, r, &n2);
    if (code == 0) bc_varint(s, r);
    if (!bc_ok(s)) return NULL;
    a = new_attr(s, BA_ASM);
    size_t m = bc_mark(s);
    bc_puts(s, code == 0 ? "#stablehlo.result_alias<[" : "#stablehlo.output_operand_alias<output_tuple_indices = [");
    put_i64_list(s, l1, n1);
    bc_printf(s, "], %s = %" PRId64 ", %s = [", code == 0 ? "result_index" : "operand_index", idx,
              code == 0 ? "result_tuple_indices" : "operand_tuple_indices");
    put_i64_list(s, l2, n2);
    bc_puts(s, "]>");
    a->s = bc_since(s, m);
    return a;
  }
  case 1: a = new_attr(s, BA_ARRAY); a->v = read_attr_list(s, r, &a->n); return a;
  case 2: a = new_attr(s, BA_BOOL); a->i = bc_varint(s, r) != 0; return a;
  case 3: return enum_attr(s, "comparison_direction", k_cmp_dir, 6, bc_varint(s, r));
  case 4: return enum_attr(s, "comparison_type", k_cmp_type, 5, bc_varint(s, r));
  case 5: { /* CustomCallApiVersion: StableHLO keeps it as `api_version = N : i32` */
    a = new_attr(s, BA_ENUM);
    uint64_t v = bc_varint(s, r);
    size_t m = bc_mark(s);
    bc_printf(s, "%" PRIu64 " : i32", v);
    a->s = bc_since(s, m);
    a->i = (int64_t)v;
    return a;
  }
  case 6: return read_dict(s, r); /* DictionaryV1: (Attribute, Attribute)[] */
  case 7: return enum_attr(s, "fft_type", k_fft, 4, bc_varint(s, r));
  case 8: case 9: return read_number(s, r, code == 9);
  case 11: return enum_attr(s, "precision", k_precision, 3, bc_varint(s, r));
  case 12: return enum_attr(s, "rng_algorithm", k_rng_alg, 3, bc_varint(s, r));
  case 13: return enum_attr(s, "rng_distribution", k_rng_dist, 3, bc_varint(s, r));
  case 14: a = new_attr(s, BA_STRING); a->s = bc_string(s, r); return a;
  case 15: return read_dense(s, r);
  case 16: return enum_attr(s, "transpose", k_transpose, 4, bc_varint(s, r));
  case 17: a = new_attr(s, BA_TYPE); a->t = bc_read_type(s, r); return a;
  case 18: {
    uint32_t n;
    int64_t *b = read_svarint_list(s, r, &n);
    if (!bc_ok(s)) return NULL;
    a = new_attr(s, BA_ASM);
    size_t m = bc_mark(s);
    bc_puts(s, "#stablehlo.bounds<");
    put_i64_list(s, b, n);
    bc_puts(s, ">");
    a->s = bc_since(s, m);
    return a;
  }
  case 19: return enum_attr(s, "result_accuracy_mode", k_accuracy_mode, 3, bc_varint(s, r));
  case 20: case 21: case 22: case 23: case 24: case 25: return vhlo_struct_attr(s, r, code);
  default:
    bc_fail(s, r->p,
            "VHLO attribute code %" PRIu64 " is not one StableHLO v%u.%u defines (the newest this reader knows); the "
            "artifact (producer '%.*s') needs a shardcheck that knows its StableHLO version",
            code, BC_NEWEST_STABLEHLO_MAJOR, BC_NEWEST_STABLEHLO_MINOR, SC_SPAN_ARG(s->producer));
    return NULL;
  }
}

/* Shardy's factor symbols: i..z, then z_1, z_2, ... */
static void put_factor(bc *s, int64_t f) {
  if (f >= 0 && f < 18) bc_printf(s, "%c", (char)('i' + f));
  else bc_printf(s, "z_%" PRId64, f - 17);
}

static void put_factor_set(bc *s, const char *what, const int64_t *v, uint32_t n) {
  if (!n) return;
  bc_printf(s, " %s={", what);
  for (uint32_t i = 0; i < n; i++) {
    if (i) bc_put(s, ", ", 2);
    put_factor(s, v[i]);
  }
  bc_put(s, "}", 1);
}

static void put_mappings(bc *s, bc_attr *const *v, uint32_t n) {
  bc_put(s, "(", 1);
  render_list(s, v, n, ", ");
  bc_put(s, ")", 1);
}

/* OpShardingRuleAttr (10) and its TensorMapping (9) / DimMapping (8) parts, as text:
 * `#sdy.op_sharding_rule<([i, j])->([i]) {i=4, j=8} reduction={j}, custom>`. */
static bc_attr *sdy_rule_part(bc *s, bc_rd *r, uint64_t code) {
  bc_attr *a = new_attr(s, BA_ASM);
  if (code == 8) {
    uint32_t n;
    int64_t *f = read_svarint_list(s, r, &n);
    size_t m = bc_mark(s);
    for (uint32_t i = 0; i < n; i++) put_factor(s, f[i]);
    if (!n) bc_put(s, "1", 1);
    a->s = bc_since(s, m);
    return a;
  }
  if (code == 9) {
    uint32_t n;
    bc_attr **dims = read_attr_list(s, r, &n);
    size_t m = bc_mark(s);
    bc_put(s, "[", 1);
    render_list(s, dims, n, ", ");
    bc_put(s, "]", 1);
    a->s = bc_since(s, m);
    return a;
  }
  uint32_t nsizes, nin, nout, nred = 0, nrep = 0, nperm = 0, nblk = 0;
  int64_t *sizes = read_svarint_list(s, r, &nsizes);
  bc_attr **in = read_attr_list(s, r, &nin), **out = read_attr_list(s, r, &nout);
  int64_t *red = read_svarint_list(s, r, &nred), *rep = read_svarint_list(s, r, &nrep);
  int64_t *perm = r->p < r->end ? read_svarint_list(s, r, &nperm) : NULL;
  int64_t *blk = r->p + 1 < r->end ? read_svarint_list(s, r, &nblk) : NULL;
  bool custom = r->p < r->end && bc_byte(s, r);
  if (!bc_ok(s)) return NULL;
  size_t m = bc_mark(s);
  bc_puts(s, "#sdy.op_sharding_rule<");
  put_mappings(s, in, nin);
  bc_put(s, "->", 2);
  put_mappings(s, out, nout);
  bc_put(s, " {", 2);
  for (uint32_t i = 0; i < nsizes; i++) {
    if (i) bc_put(s, ", ", 2);
    put_factor(s, (int64_t)i);
    bc_printf(s, "=%" PRId64, sizes[i]);
  }
  bc_put(s, "}", 1);
  put_factor_set(s, "reduction", red, nred);
  put_factor_set(s, "need_replication", rep, nrep);
  put_factor_set(s, "permutation", perm, nperm);
  put_factor_set(s, "blocked_propagation", blk, nblk);
  if (custom) bc_puts(s, ", custom");
  bc_put(s, ">", 1);
  a->s = bc_since(s, m);
  return a;
}

static bc_attr *sdy_attr(bc *s, bc_rd *r, uint64_t code) {
  bc_attr *a;
  switch (code) {
  case 0: a = new_attr(s, BA_SDY_MANUAL_AXES); a->v = read_attr_list(s, r, &a->n); return a;
  case 1: a = new_attr(s, BA_SDY_MESH_AXIS); a->s = bc_string(s, r); a->i = bc_svarint(s, r); return a;
  case 2: {
    a = new_attr(s, BA_SDY_MESH);
    a->v = read_attr_list(s, r, &a->n);
    a->ids = read_svarint_list(s, r, &a->nids);
    return a;
  }
  case 3: a = new_attr(s, BA_SDY_SUB_AXIS); a->i = bc_svarint(s, r); a->j = bc_svarint(s, r); return a;
  case 4: {
    a = new_attr(s, BA_SDY_AXIS_REF);
    a->s = bc_string(s, r);
    bool present;
    uint64_t idx = bc_varint_flag(s, r, &present);
    a->n = 1;
    a->v = ar_calloc(s->a, 1, sizeof *a->v);
    if (present && bc_ok(s)) a->v[0] = (bc_attr *)bc_attr_at(s, idx);
    return a;
  }
  case 5: {
    a = new_attr(s, BA_SDY_DIM);
    a->v = read_attr_list(s, r, &a->n);
    a->i = bc_byte(s, r) != 0;
    bool present;
    uint64_t p = bc_varint_flag(s, r, &present);
    a->j = present ? (int64_t)p : -1;
    return a;
  }
  case 6: case 15: case 17: {
    a = new_attr(s, BA_SDY_SHARDING);
    a->n = 1;
    a->v = ar_calloc(s->a, 1, sizeof *a->v);
    a->v[0] = (bc_attr *)bc_read_attr(s, r);
    uint32_t nd;
    a->k = read_attr_list(s, r, &nd);
    a->w = read_attr_list(s, r, &a->nw);
    if (code != 6) a->x = read_attr_list(s, r, &a->nx);
    a->i = code == 17 ? bc_svarint(s, r) : 0;
    a->nids = nd; /* number of dimension shardings */
    return a;
  }
  case 7: case 16: a = new_attr(s, BA_SDY_PER_VALUE); a->v = read_attr_list(s, r, &a->n); return a;
  case 11: a = new_attr(s, BA_SDY_AXIS_LIST); a->v = read_attr_list(s, r, &a->n); return a;
  case 12: a = new_attr(s, BA_SDY_AXIS_LISTS); a->v = read_attr_list(s, r, &a->n); return a;
  case 8: case 9: case 10: return sdy_rule_part(s, r, code);
  case 13: case 14: /* all-to-all params: not read by any rule; keep a marker */
    a = new_attr(s, BA_ASM);
    r->p = r->end;
    a->s = bc_printf(s, "#sdy.all_to_all_param<%" PRIu64 ">", code);
    return a;
  default:
    bc_fail(s, r->p,
            "sdy attribute code %" PRIu64 " is not one the sdy dialect %u.%u.%u defines (the newest this reader knows); "
            "the artifact needs a shardcheck that knows its Shardy version",
            code, BC_SDY_VERSION_MAJOR, BC_SDY_VERSION_MINOR, BC_SDY_VERSION_PATCH);
    return NULL;
  }
}

static void *decode_attr(bc *s, const bc_entry *e, bc_rd *r, ir_span asm_text) {
  if (!r) {
    bc_attr *a = new_attr(s, BA_ASM);
    a->s = asm_text;
    return a;
  }
  uint64_t code = bc_varint(s, r);
  uint8_t dk = s->dialect_kind[e->dialect];
  if (dk == BC_D_BUILTIN) return builtin_attr(s, r, code);
  if (dk == BC_D_VHLO) return vhlo_attr(s, r, code);
  if (dk == BC_D_SDY) return sdy_attr(s, r, code);
  bc_fail(s, e->p, "custom-encoded attribute of dialect '%.*s' is not supported", SC_SPAN_ARG(s->dialects[e->dialect]));
  return NULL;
}

const bc_attr *bc_attr_at(bc *s, uint64_t index) {
  return decode_entry(s, s->attrs, s->nattrs, index, "attribute", decode_attr);
}

const bc_attr *bc_read_attr(bc *s, bc_rd *r) {
  uint64_t i = bc_varint(s, r);
  return bc_ok(s) ? bc_attr_at(s, i) : NULL;
}

ir_span bc_attr_str(const bc_attr *a) { return a && a->kind == BA_STRING ? a->s : ir_span_of("", 0); }

/* ---- attributes: text --------------------------------------------------------------------------- */

static bool is_bare_identifier(ir_span n) {
  if (!n.n || !(isalpha((unsigned char)n.p[0]) || n.p[0] == '_')) return false;
  for (uint32_t i = 1; i < n.n; i++)
    if (!(isalnum((unsigned char)n.p[i]) || n.p[i] == '_' || n.p[i] == '$' || n.p[i] == '.')) return false;
  return true;
}

static void put_symbol(bc *s, ir_span name) {
  bc_put(s, "@", 1);
  if (is_bare_identifier(name)) bc_put(s, name.p, name.n);
  else bc_put_quoted(s, name);
}

static void put_int(bc *s, int64_t v, const bc_type *t) {
  if (t && t->elem_kind == 2 && t->elem_bits < 64) v &= (int64_t)((1ull << t->elem_bits) - 1);
  if (t && t->elem_kind == 2) bc_printf(s, "%" PRIu64, (uint64_t)v);
  else bc_printf(s, "%" PRId64, v);
}

/* As MLIR prints a float: `%e` with 6 digits when that reads back to the same double (1.000000e+00),
 * else enough significant digits for the type to round-trip (0.95f prints 0.949999988). */
static void put_float(bc *s, double v, const bc_type *t) {
  char buf[64];
  bool single = t && t->elem_bits <= 32;
  snprintf(buf, sizeof buf, "%.6e", v);
  if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", v);
  bc_puts(s, buf);
}

static uint64_t load_le(const uint8_t *p, uint32_t bytes) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < bytes && i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void put_element(bc *s, const bc_type *et, const uint8_t *blob, uint64_t i) {
  if (et->elem_kind == 4) {
    bc_puts(s, (blob[i / 8] >> (i % 8)) & 1 ? "true" : "false");
    return;
  }
  uint32_t bytes = (et->elem_bits + 7) / 8;
  uint64_t raw = load_le(blob + i * bytes, bytes);
  if (et->elem_kind == 3) {
    put_float(s, float_value(et, raw), et);
    return;
  }
  int64_t v = (int64_t)raw;
  if (et->elem_kind == 1 && et->elem_bits < 64 && et->elem_bits > 0 && (raw >> (et->elem_bits - 1)) & 1)
    v = (int64_t)(raw | ~((1ull << et->elem_bits) - 1));
  put_int(s, v, et);
}

/* dense<...> : type — nested lists for small tensors, a splat value, or hex for large/complex ones. */
static void render_dense(bc *s, const bc_attr *a) {
  const bc_type *t = a->t;
  const bc_type *et = t ? t->elem : NULL;
  uint64_t n = t && t->nelems >= 0 ? (uint64_t)t->nelems : 0;
  uint32_t bytes = et ? (et->elem_bits + 7) / 8 : 0;
  bool known = et && (et->elem_kind >= 1 && et->elem_kind <= 4) && bytes <= 8 && t->rank >= 0;
  bool boolean = known && et->elem_kind == 4;
  if (n > 4096) known = known && a->nblob == (boolean ? 1u : bytes); /* only a splat is spelled out */
  uint64_t need = n > 4096 ? UINT64_MAX : boolean ? (n + 7) / 8 : n * bytes;
  bool splat = known && n != 1 && a->nblob == (boolean ? 1u : bytes);
  bc_put(s, "dense<", 6);
  if (known && splat) {
    if (boolean) bc_puts(s, a->blob[0] ? "true" : "false");
    else put_element(s, et, a->blob, 0);
  } else if (known && a->nblob >= need && n <= 4096) {
    /* Row-major with a bracket per dimension: block[d] = elements under one index of dimension d-1. */
    uint64_t block[65];
    int32_t rank = t->rank > 64 ? 64 : t->rank;
    block[rank] = 1;
    for (int32_t d = rank - 1; d >= 0; d--) block[d] = block[d + 1] * (uint64_t)(t->dims[d] > 0 ? t->dims[d] : 1);
    if (rank == 0) put_element(s, et, a->blob, 0);
    for (uint64_t i = 0; i < n && rank > 0; i++) {
      for (int32_t d = 0; d < rank; d++)
        if (i % block[d] == 0) bc_put(s, "[", 1);
      put_element(s, et, a->blob, i);
      for (int32_t d = rank - 1; d >= 0; d--)
        if ((i + 1) % block[d] == 0) bc_put(s, "]", 1);
      if (i + 1 < n) bc_put(s, ", ", 2);
    }
  } else {
    static const char hex[] = "0123456789ABCDEF";
    bc_put(s, "\"0x", 3);
    for (uint32_t i = 0; i < a->nblob; i++) {
      char h[2] = {hex[a->blob[i] >> 4], hex[a->blob[i] & 15]};
      bc_put(s, h, 2);
    }
    bc_put(s, "\"", 1);
  }
  bc_put(s, "> : ", 4);
  if (t) bc_put(s, t->text.p, t->text.n);
}

static void render_list(bc *s, bc_attr *const *v, uint32_t n, const char *sep) {
  for (uint32_t i = 0; i < n; i++) {
    if (i) bc_puts(s, sep);
    bc_render(s, v[i]);
  }
}

static void render_sdy_axis(bc *s, const bc_attr *a) {
  if (!a) return;
  bc_put_quoted(s, a->s);
  const bc_attr *sub = a->n ? a->v[0] : NULL;
  if (sub && sub->kind == BA_SDY_SUB_AXIS) bc_printf(s, ":(%" PRId64 ")%" PRId64, sub->i, sub->j);
}

static void render_sdy_axes(bc *s, bc_attr *const *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i) bc_put(s, ", ", 2);
    render_sdy_axis(s, v[i]);
  }
}

static void render_sdy_mesh_body(bc *s, const bc_attr *a) {
  bc_put(s, "<[", 2);
  for (uint32_t i = 0; i < a->n; i++) {
    if (i) bc_put(s, ", ", 2);
    if (!a->v[i]) continue;
    bc_put_quoted(s, a->v[i]->s);
    bc_printf(s, "=%" PRId64, a->v[i]->i);
  }
  bc_put(s, "]", 1);
  if (a->nids) {
    bc_put(s, ", device_ids=[", 14);
    put_i64_list(s, a->ids, a->nids);
    bc_put(s, "]", 1);
  }
  bc_put(s, ">", 1);
}

/* `<@mesh, [{"a"}, {}], replicated={"b"}>` as Shardy prints a TensorShardingAttr (prefix outside). */
static void render_sdy_sharding_body(bc *s, const bc_attr *a) {
  bc_put(s, "<", 1);
  const bc_attr *m = a->v[0];
  if (m && m->kind == BA_SYMREF) put_symbol(s, m->s);
  else if (m && m->kind == BA_SDY_MESH) {
    bc_put(s, "mesh", 4);
    render_sdy_mesh_body(s, m);
  } else if (m) bc_render(s, m);
  bc_put(s, ", [", 3);
  for (uint32_t d = 0; d < a->nids; d++) {
    const bc_attr *dim = a->k[d];
    if (d) bc_put(s, ", ", 2);
    bc_put(s, "{", 1);
    if (dim) {
      render_sdy_axes(s, dim->v, dim->n);
      if (!dim->i) bc_puts(s, dim->n ? ", ?" : "?");
    }
    bc_put(s, "}", 1);
    if (dim && dim->j >= 0) bc_printf(s, "p%" PRId64, dim->j);
  }
  bc_put(s, "]", 1);
  if (a->nw) {
    bc_put(s, ", replicated={", 14);
    render_sdy_axes(s, a->w, a->nw);
    bc_put(s, "}", 1);
  }
  if (a->nx) {
    static const char *const ops[] = {"sum", "max", "min"};
    bc_put(s, ", unreduced=", 12);
    if (a->i > 0 && a->i < 3) bc_puts(s, ops[a->i]);
    bc_put(s, "{", 1);
    render_sdy_axes(s, a->x, a->nx);
    bc_put(s, "}", 1);
  }
  bc_put(s, ">", 1);
}

static void render_one(bc *s, const bc_attr *a);

void bc_render(bc *s, const bc_attr *a) {
  if (!a || s->pool_full) return;
  if (s->render_depth >= BC_MAX_NESTING) {
    bc_fail(s, NULL, "attributes nested deeper than %u levels", BC_MAX_NESTING);
    return;
  }
  s->render_depth++;
  render_one(s, a);
  s->render_depth--;
}

static void render_one(bc *s, const bc_attr *a) {
  switch (a->kind) {
  case BA_ASM:
  case BA_ENUM: bc_put(s, a->s.p, a->s.n); return;
  case BA_STRING:
    bc_put_quoted(s, a->s);
    if (a->t) bc_printf(s, " : %.*s", SC_SPAN_ARG(a->t->text));
    return;
  case BA_SYMREF:
    put_symbol(s, a->s);
    for (uint32_t i = 0; i < a->n; i++) {
      bc_put(s, "::", 2);
      if (a->v[i]) put_symbol(s, a->v[i]->s);
    }
    return;
  case BA_TYPE: if (a->t) bc_put(s, a->t->text.p, a->t->text.n); return;
  case BA_UNIT: bc_puts(s, "unit"); return;
  case BA_BOOL: bc_puts(s, a->i ? "true" : "false"); return;
  case BA_INT:
    put_int(s, a->i, a->t);
    if (a->t) bc_printf(s, " : %.*s", SC_SPAN_ARG(a->t->text));
    return;
  case BA_FLOAT:
    put_float(s, a->f, a->t);
    bc_printf(s, " : %.*s", SC_SPAN_ARG(a->t->text));
    return;
  case BA_ARRAY:
    bc_put(s, "[", 1);
    render_list(s, a->v, a->n, ", ");
    bc_put(s, "]", 1);
    return;
  case BA_DICT:
    bc_put(s, "{", 1);
    for (uint32_t i = 0; i < a->n; i++) {
      if (i) bc_put(s, ", ", 2);
      ir_span name = bc_attr_str(a->k[i]);
      if (is_bare_identifier(name)) bc_put(s, name.p, name.n);
      else bc_put_quoted(s, name);
      if (a->v[i] && a->v[i]->kind == BA_UNIT) continue;
      bc_put(s, " = ", 3);
      bc_render(s, a->v[i]);
    }
    bc_put(s, "}", 1);
    return;
  case BA_DENSE: render_dense(s, a); return;
  case BA_DENSE_ARRAY: {
    bc_printf(s, "array<%.*s", SC_SPAN_ARG(a->t->text));
    uint32_t bytes = (a->t->elem_bits + 7) / 8;
    for (int64_t i = 0; i < a->i && bytes && (uint64_t)(i + 1) * bytes <= a->nblob; i++) {
      bc_put(s, i ? ", " : ": ", 2);
      put_element(s, a->t, a->blob, (uint64_t)i);
    }
    bc_put(s, ">", 1);
    return;
  }
  case BA_DENSE_STRING:
    bc_put(s, "dense<", 6);
    if (a->n > 1) bc_put(s, "[", 1);
    render_list(s, a->v, a->n, ", ");
    if (a->n > 1) bc_put(s, "]", 1);
    bc_printf(s, "> : %.*s", SC_SPAN_ARG(a->t->text));
    return;
  case BA_SDY_MESH:
    bc_puts(s, "#sdy.mesh");
    render_sdy_mesh_body(s, a);
    return;
  case BA_SDY_SHARDING:
    bc_puts(s, "#sdy.sharding");
    render_sdy_sharding_body(s, a);
    return;
  case BA_SDY_PER_VALUE:
    bc_puts(s, "#sdy.sharding_per_value<[");
    for (uint32_t i = 0; i < a->n; i++) {
      if (i) bc_put(s, ", ", 2);
      if (a->v[i] && a->v[i]->kind == BA_SDY_SHARDING) render_sdy_sharding_body(s, a->v[i]);
    }
    bc_puts(s, "]>");
    return;
  case BA_SDY_MANUAL_AXES:
    bc_puts(s, "#sdy<manual_axes{");
    for (uint32_t i = 0; i < a->n; i++) {
      if (i) bc_put(s, ", ", 2);
      bc_put_quoted(s, bc_attr_str(a->v[i]));
    }
    bc_puts(s, "}>");
    return;
  case BA_SDY_AXIS_REF: render_sdy_axis(s, a); return;
  case BA_SDY_AXIS_LIST:
    bc_put(s, "{", 1);
    render_sdy_axes(s, a->v, a->n);
    bc_put(s, "}", 1);
    return;
  case BA_SDY_AXIS_LISTS:
    bc_put(s, "[", 1);
    render_list(s, a->v, a->n, ", ");
    bc_put(s, "]", 1);
    return;
  default: bc_puts(s, "loc(unknown)"); return;
  }
}

/* ---- locations ---------------------------------------------------------------------------------- */

static ir_srcloc resolve(bc *s, bc_attr *a, int budget) {
  ir_srcloc none = {0};
  if (!a || budget <= 0) return none;
  if (a->loc_state == 2) return a->loc;
  if (a->loc_state == 1) return none;
  a->loc_state = 1;
  ir_srcloc r = none;
  switch (a->kind) {
  case BA_LOC_FILE:
    r.known = true;
    r.file = a->s;
    r.line = (uint32_t)a->i;
    r.col = a->j > 0 ? (uint32_t)a->j : 0;
    break;
  case BA_LOC_NAME: r = resolve(s, a->v[0], budget - 1); break;
  case BA_LOC_CALLSITE:
    r = resolve(s, a->v[0], budget - 1);
    if (!r.known) r = resolve(s, a->v[1], budget - 1);
    break;
  case BA_LOC_FUSED:
    for (uint32_t i = 0; i < a->n && !r.known; i++) r = resolve(s, a->v[i], budget - 1);
    break;
  default: break;
  }
  a->loc = r;
  a->loc_state = 2;
  return r;
}

ir_srcloc bc_resolve_loc(bc *s, const bc_attr *loc) { return resolve(s, (bc_attr *)loc, 64); }
