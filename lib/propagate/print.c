/* print.c — the module text with the attributes a pass set, comments dropped (see print.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "propagate/print.h"
#include "util/hashset.h"

struct prop_edit {
  const ir_op *op;
  const char *name, *value;
  uint32_t seq; /* order of set calls: a later value for the same name wins */
};

/* A replacement of buf[begin, end) by text (comment-free). */
struct prop_replacement {
  uint32_t begin, end;
  const char *text;
  uint8_t order; /* at one offset: ops inserted before an op, then edits, then ops inserted after one */
  uint32_t seq;  /* then in call order */
};
enum { ORDER_FIRST = 0, ORDER_BEFORE = 1, ORDER_EDIT = 2, ORDER_AFTER = 3 };
typedef struct prop_replacement replacement;

void prop_printer_init(prop_printer *p, sc_arena *a, const ir_module *m) {
  memset(p, 0, sizeof *p);
  p->arena = a;
  p->module = m;
}

void prop_printer_set_attr(prop_printer *p, const ir_op *op, const char *name, const char *value) {
  prop_edit e = {op, name, value, (uint32_t)p->edits.n};
  SC_PUSH(p->arena, p->edits, e);
}

static void add_replacement(prop_printer *p, uint32_t begin, uint32_t end, const char *text, uint8_t order) {
  replacement r = {begin, end, text, order, p->next_seq++};
  SC_PUSH(p->arena, p->replacements, r);
}

void prop_printer_replace(prop_printer *p, uint32_t begin, uint32_t end, const char *text) {
  add_replacement(p, begin, end, text, ORDER_EDIT);
}

/* Where a pretty op written with the name `name` has it in its own text. */
static bool written_name_at(const ir_module *m, const ir_op *op, const char *name, uint32_t *at) {
  if (op->generic || !ir_span_eq(ir_op_name(op), name) || ir_op_name(op).p < m->buf + op->pos.offset || ir_op_name(op).p >= m->buf + op->end)
    return false;
  *at = (uint32_t)(ir_op_name(op).p - m->buf);
  return true;
}

bool prop_printer_rename_op(prop_printer *p, const ir_op *op, const char *from, const char *to) {
  uint32_t at;
  if (!written_name_at(p->module, op, from, &at)) return false;
  add_replacement(p, at, at + (uint32_t)strlen(from), to, ORDER_EDIT);
  return true;
}

static int edit_cmp(const void *x, const void *y) {
  const prop_edit *a = x, *b = y;
  if (a->op->pos.offset != b->op->pos.offset) return a->op->pos.offset < b->op->pos.offset ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$' ||
         c == '-';
}

static const char *skip_blank(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* After a '{': an attribute dictionary starts with `}`, `name =` or `"name" =`; a region with an op. */
static bool opens_dict(const char *p, const char *end) {
  p = skip_blank(p, end);
  if (p < end && *p == '}') return true;
  if (p < end && *p == '"') p = ir_skip_string(p, end);
  else
    while (p < end && is_name_char(*p)) p++;
  p = skip_blank(p, end);
  return p < end && *p == '=';
}

/* Where an op's attributes go: the depth-0 `{...}` dictionary right before its type trailer (`: `),
 * or, without one, the trailer itself (insert there). Regions and nested ops sit deeper, or (pretty
 * `cond {` regions) are not dictionaries. */
typedef struct {
  uint32_t dict_begin, dict_end; /* [begin, end) of an existing dictionary, or both 0 */
  uint32_t insert_at;            /* where a new dictionary goes when there is none */
  const char *keyword;           /* written before a new dictionary (" attributes" for a pretty while) */
} attr_slot;

/* A pretty `stablehlo.while(...) : types cond {...} do {...}` takes `attributes {...}` before `cond`. */
static bool while_slot(const ir_module *m, const ir_op *op, attr_slot *s) {
  if (op->generic || op->kind != SC_OP_WHILE) return false;
  const char *buf = m->buf, *p = buf + op->pos.offset, *end = buf + op->end;
  int depth = 0;
  for (; p < end; p++) {
    if (*p == '"') {
      p = ir_skip_string(p, end) - 1;
      continue;
    }
    if (*p == '(' || *p == '[' || *p == '{' || *p == '<') depth++;
    else if ((*p == ')' || *p == ']' || *p == '}' || *p == '>') && depth > 0 && !(*p == '>' && p[-1] == '-')) depth--;
    else if (depth == 0 && end - p > 4 && !memcmp(p, "cond", 4) && (p[-1] == ' ' || p[-1] == '\n') &&
             (p[4] == ' ' || p[4] == '{' || p[4] == '\n')) {
      const char *q = p;
      while (q > buf + op->pos.offset && (q[-1] == ' ' || q[-1] == '\n' || q[-1] == '\t')) q--;
      s->dict_begin = s->dict_end = 0;
      s->insert_at = (uint32_t)(q - buf);
      s->keyword = " attributes";
      return true;
    }
  }
  return false;
}

/* A pretty `stablehlo.constant` / `sdy.constant` prints its attributes right after its name, before the
 * literal: `stablehlo.constant {sdy.sharding = ...} dense<...> : type`; so does a pretty
 * `stablehlo.optimization_barrier {...} %0, %1 : ...` (attr-dict first in its assembly format). */
static bool constant_slot(const ir_module *m, const ir_op *op, attr_slot *s) {
  if (op->generic || !(ir_span_eq(ir_op_name(op), "stablehlo.constant") || ir_span_eq(ir_op_name(op), "sdy.constant") ||
                       ir_span_eq(ir_op_name(op), "stablehlo.optimization_barrier")))
    return false;
  const char *buf = m->buf, *p = buf + op->pos.offset, *end = buf + op->end;
  const char *name = ir_op_name(op).p;
  if (name < p || name + ir_op_name(op).n > end) return false;
  p = name + ir_op_name(op).n;
  const char *q = skip_blank(p, end);
  s->keyword = "";
  s->insert_at = (uint32_t)(p - buf);
  s->dict_begin = s->dict_end = 0;
  if (q < end && *q == '{' && opens_dict(q + 1, end)) {
    const char *close = q;
    int depth = 0;
    for (; close < end; close++) {
      if (*close == '"') {
        close = ir_skip_string(close, end) - 1;
        continue;
      }
      if (*close == '{' || *close == '<' || *close == '[' || *close == '(') depth++;
      else if ((*close == '}' || *close == '>' || *close == ']' || *close == ')') && --depth == 0) break;
    }
    if (close >= end) return false;
    s->dict_begin = (uint32_t)(q - buf);
    s->dict_end = (uint32_t)(close + 1 - buf);
  }
  return true;
}

static attr_slot find_slot(const ir_module *m, const ir_op *op) {
  attr_slot ws;
  if (while_slot(m, op, &ws) || constant_slot(m, op, &ws)) return ws;
  const char *buf = m->buf, *p = buf + op->pos.offset, *end = buf + op->end;
  int depth = 0;
  const char *colon = NULL, *group_open = NULL, *open0 = NULL, *group_close = NULL;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = ir_skip_string(p, end);
      continue;
    }
    if (c == '/' && p + 1 < end && p[1] == '/') {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl : end;
      continue;
    }
    if (c == '-' && p + 1 < end && p[1] == '>') {
      p += 2;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (depth == 0 && c == '{') open0 = p;
      depth++;
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (depth > 0) depth--;
      if (depth == 0 && c == '}' && open0) {
        group_open = open0;
        group_close = p + 1;
      }
    } else if (c == ':' && depth == 0 && p + 1 < end && !(p[1] >= '0' && p[1] <= '9') && p[1] != ':' &&
               (p == buf || p[-1] != ':')) {
      /* a type trailer; not `%0:2` (a result count) nor `a::b` */
      colon = p;
    }
    p++;
  }
  attr_slot s = {0, 0, op->end, ""};
  if (!colon) {
    /* no type trailer: before a trailing loc(...) if any, else at the end */
    if (op->loc_offset && op->loc_offset > op->pos.offset) s.insert_at = op->loc_offset;
    while (s.insert_at > op->pos.offset && (buf[s.insert_at - 1] == ' ' || buf[s.insert_at - 1] == '\n')) s.insert_at--;
    return s;
  }
  const char *q = colon;
  while (q > buf + op->pos.offset && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n' || q[-1] == '\r')) q--;
  if (group_close == q && opens_dict(group_open + 1, end)) {
    s.dict_begin = (uint32_t)(group_open - buf);
    s.dict_end = (uint32_t)(group_close - buf);
  }
  s.insert_at = (uint32_t)(q - buf);
  return s;
}

typedef struct {
  ir_span name; /* unquoted, for sorting */
  const char *text;
} dict_entry;
typedef SC_VEC(dict_entry) dict_entries;

static int entry_cmp(const void *x, const void *y) {
  const dict_entry *a = x, *b = y;
  uint32_t n = a->name.n < b->name.n ? a->name.n : b->name.n;
  int c = memcmp(a->name.p, b->name.p, n);
  return c ? c : (a->name.n > b->name.n) - (a->name.n < b->name.n);
}

/* An entry's text without comments, its white-space runs folded to one space. */
static const char *fold_entry(sc_arena *a, const char *p, const char *end) {
  ar_str s = SC_ASTR_INIT(a);
  bool space = false;
  while (p < end) {
    if (*p == '"') {
      const char *q = ir_skip_string(p, end);
      if (space && s.n) ar_str_put(&s, " ", 1);
      space = false;
      ar_str_put(&s, p, (size_t)(q - p));
      p = q;
      continue;
    }
    if (*p == '/' && p + 1 < end && p[1] == '/') {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl : end;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      space = true;
      p++;
      continue;
    }
    if (space && s.n) ar_str_put(&s, " ", 1);
    space = false;
    ar_str_put(&s, p, 1);
    p++;
  }
  return ar_str_str(&s);
}

static ir_span entry_name(const char *text) {
  const char *p = text;
  if (*p == '"') {
    const char *q = strchr(p + 1, '"');
    return ir_span_of(p + 1, q ? (uint32_t)(q - p - 1) : 0);
  }
  while (is_name_char(*p)) p++;
  return ir_span_of(text, (uint32_t)(p - text));
}

/* The entries of the dictionary buf[begin, end) ('{' ... '}'), split at its top-level commas. */
static void split_dict(sc_arena *a, const char *buf, uint32_t begin, uint32_t end, dict_entries *out) {
  const char *p = buf + begin + 1, *stop = buf + end - 1, *start = p;
  int depth = 0;
  while (p <= stop) {
    if (p < stop && *p == '"') {
      p = ir_skip_string(p, stop);
      continue;
    }
    if (p < stop && *p == '/' && p + 1 < stop && p[1] == '/') {
      const char *nl = memchr(p, '\n', (size_t)(stop - p));
      p = nl ? nl : stop;
      continue;
    }
    if (p < stop && (*p == '(' || *p == '[' || *p == '{' || *p == '<')) depth++;
    else if (p < stop && (*p == ')' || *p == ']' || *p == '}' || (*p == '>' && p[-1] != '-'))) depth--;
    if (p == stop || (*p == ',' && depth == 0)) {
      const char *text = fold_entry(a, start, p);
      if (*text) {
        dict_entry e = {entry_name(text), text};
        SC_PUSH(a, *out, e);
      }
      start = p + 1;
    }
    p++;
  }
}

/* The replacement that writes the attributes of edits[0, n) (all of one op). */
static replacement op_replacement(prop_printer *p, const prop_edit *edits, size_t n) {
  sc_arena *a = p->arena;
  const ir_module *m = p->module;
  attr_slot slot = find_slot(m, edits[0].op);
  dict_entries entries = {0};
  if (slot.dict_end) split_dict(a, m->buf, slot.dict_begin, slot.dict_end, &entries);
  for (size_t i = 0; i < n; i++) {
    const char *text = ar_printf(a, "%s = %s", edits[i].name, edits[i].value);
    dict_entry e = {entry_name(text), text};
    size_t k = 0;
    while (k < entries.n && entry_cmp(&entries.v[k], &e) != 0) k++;
    if (k < entries.n) entries.v[k] = e;
    else SC_PUSH(a, entries, e);
  }
  if (entries.n > 1) qsort(entries.v, entries.n, sizeof *entries.v, entry_cmp);
  ar_str s = SC_ASTR_INIT(a);
  if (!slot.dict_end) ar_str_puts(&s, slot.keyword);
  /* a generic op's dictionary as MLIR reprints it: its own (undotted) attributes as properties `<{...}>`,
   * dialect attributes (`sdy.sharding`) in `{...}` */
  size_t inherent = 0;
  for (size_t i = 0; i < entries.n && edits[0].op->generic; i++) inherent += !memchr(entries.v[i].name.p, '.', entries.v[i].name.n);
  if (slot.dict_end && inherent && inherent < entries.n && !(slot.dict_begin && m->buf[slot.dict_begin - 1] == '<')) {
    ar_str_puts(&s, "<{");
    for (size_t i = 0, k = 0; i < entries.n; i++)
      if (!memchr(entries.v[i].name.p, '.', entries.v[i].name.n)) ar_str_printf(&s, "%s%s", k++ ? ", " : "", entries.v[i].text);
    ar_str_puts(&s, "}> {");
    for (size_t i = 0, k = 0; i < entries.n; i++)
      if (memchr(entries.v[i].name.p, '.', entries.v[i].name.n)) ar_str_printf(&s, "%s%s", k++ ? ", " : "", entries.v[i].text);
    ar_str_puts(&s, "}");
  } else {
    ar_str_puts(&s, slot.dict_end ? "{" : " {");
    for (size_t i = 0; i < entries.n; i++) ar_str_printf(&s, "%s%s", i ? ", " : "", entries.v[i].text);
    ar_str_puts(&s, "}");
  }
  /* `%0 = op %a: type`; an op that ends the input has nothing after it */
  if (!slot.dict_end && slot.insert_at < m->len && m->buf[slot.insert_at] == ':') ar_str_puts(&s, " ");
  replacement r = {slot.dict_end ? slot.dict_begin : slot.insert_at, slot.dict_end ? slot.dict_end : slot.insert_at,
                   ar_str_str(&s), ORDER_EDIT, p->next_seq++};
  return r;
}

/* Copies buf[begin, end) without `//` comments (strings are skipped, so "a//b" stays). */
static void put_without_comments(ar_str *out, const char *buf, uint32_t begin, uint32_t end) {
  const char *p = buf + begin, *stop = buf + end, *run = p;
  while (p < stop) {
    const char *hit = p;
    while (hit < stop && *hit != '"' && *hit != '/') hit++;
    if (hit >= stop) break;
    if (*hit == '"') {
      p = ir_skip_string(hit, stop);
      continue;
    }
    if (hit + 1 < stop && hit[1] == '/') {
      ar_str_put(out, run, (size_t)(hit - run));
      const char *nl = memchr(hit, '\n', (size_t)(stop - hit));
      p = run = nl ? nl : stop;
      continue;
    }
    p = hit + 1;
  }
  ar_str_put(out, run, (size_t)(stop - run));
}

/* Drops the lines of out->p[from, n) that hold only white space, and white space at line ends, in
 * place (the text only shrinks). */
static void drop_blank_lines(ar_str *out, size_t from) {
  char *p = out->p + from, *end = out->p + out->n, *w = p;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *line_end = nl ? nl : end, *t = line_end;
    while (t > p && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r')) t--;
    if (t > p) {
      memmove(w, p, (size_t)(t - p));
      w += t - p;
      *w++ = '\n';
    }
    p = nl ? nl + 1 : end;
  }
  out->n = (size_t)(w - out->p);
  if (out->p) out->p[out->n] = '\0';
}

/* ---- one op per line ------------------------------------------------------------------------------ */

typedef SC_VEC(uint32_t) offsets;

/* [begin, end) of the ops (and block labels) inside region `r`, or false when it holds none. */
static bool region_body(const ir_module *m, const ir_region *r, uint32_t *begin, uint32_t *end) {
  bool any = false;
  for (uint32_t b = 0; b < r->nblocks; b++) {
    const ir_block *blk = r->blocks[b];
    uint32_t first = UINT32_MAX, last = 0;
    if (blk->label.n) first = (uint32_t)(blk->label.p - m->buf), last = first + blk->label.n;
    if (blk->nops) {
      if (blk->ops[0]->pos.offset < first) first = blk->ops[0]->pos.offset;
      if (blk->ops[blk->nops - 1]->end > last) last = blk->ops[blk->nops - 1]->end;
    }
    if (first == UINT32_MAX) continue;
    if (!any || first < *begin) *begin = first;
    if (!any || last > *end) *end = last;
    any = true;
  }
  return any;
}

/* After an op's type trailer arrow: `(T)` with one type T that is not itself parenthesised, which
 * MLIR prints as `T`; false otherwise. */
static bool single_result_parens(const char *buf, uint32_t at, uint32_t end, uint32_t *open, uint32_t *close) {
  while (at < end && (buf[at] == ' ' || buf[at] == '\n' || buf[at] == '\t')) at++;
  if (at >= end || buf[at] != '(' || at + 1 >= end || buf[at + 1] == '(' || buf[at + 1] == ')') return false;
  int depth = 0;
  for (uint32_t p = at; p < end; p++) {
    char c = buf[p];
    if (c == '"') {
      p = (uint32_t)(ir_skip_string(buf + p, buf + end) - buf) - 1;
      continue;
    }
    if (c == '-' && p + 1 < end && buf[p + 1] == '>') {
      p++;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') depth++;
    else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (--depth == 0) {
        *open = at;
        *close = p;
        return c == ')';
      }
    } else if (c == ',' && depth == 1)
      return false;
  }
  return false;
}

/* MLIR prints a float as %.6e when that reads back as the same value of its type, else as its bits in
 * hex. Returns the text for `lit` (a decimal float literal) of element type f32 or f64, or NULL. */
static const char *canonical_float(sc_arena *a, const char *lit, size_t n, bool f64) {
  char tmp[64];
  if (!n || n >= sizeof tmp || !memchr(lit, '.', n)) return NULL;
  memcpy(tmp, lit, n);
  tmp[n] = 0;
  char *stop;
  double v = strtod(tmp, &stop);
  if (*stop) return NULL;
  char canon[64];
  snprintf(canon, sizeof canon, "%.6e", v);
  double back = strtod(canon, NULL);
  if (f64 ? back == v : (float)back == (float)v) return ar_strdup(a, canon);
  if (f64) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return ar_printf(a, "0x%016llX", (unsigned long long)bits);
  }
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return ar_printf(a, "0x%08X", bits);
}

/* A pretty constant's splat `dense<1.0>` of f32/f64 elements, printed as MLIR prints it. */
static bool canonical_splat(sc_arena *a, const ir_module *m, const ir_op *op, replacement *out) {
  if (op->generic || op->nresults != 1 || !(ir_span_eq(ir_op_name(op), "stablehlo.constant") || ir_span_eq(ir_op_name(op), "sdy.constant")))
    return false;
  ir_span t = ir_value_type(ir_op_result(op, 0));
  bool f64 = t.n > 5 && !memcmp(t.p + t.n - 5, "xf64>", 5), f32 = t.n > 5 && !memcmp(t.p + t.n - 5, "xf32>", 5);
  if (!f64 && !f32) return false;
  const char *buf = m->buf, *p = buf + op->pos.offset, *end = buf + op->end;
  static const char dense[] = "dense<";
  for (; p + sizeof dense - 1 < end && memcmp(p, dense, sizeof dense - 1); p++)
    if (*p == '"' || *p == '[') return false;
  if (p + sizeof dense - 1 >= end) return false;
  const char *lit = p + sizeof dense - 1, *close = lit;
  while (close < end && *close != '>' && *close != '[' && *close != ',') close++;
  if (close >= end || *close != '>') return false;
  const char *text = canonical_float(a, lit, (size_t)(close - lit), f64);
  if (!text) return false;
  replacement r = {(uint32_t)(lit - buf), (uint32_t)(close - buf), text, ORDER_EDIT, 0};
  *out = r;
  return true;
}

/* StableHLO ops whose assembly prints their types with custom<SameOperandsAndResultType>: one type when
 * every operand's and the result's are the same, the function type otherwise (StablehloOps.td). */
static const char *const SAME_TYPE_OPS[] = {
    "abs", "add", "and", "atan2", "cbrt", "ceil", "cholesky", "clamp", "complex", "convert", "cosine",
    "count_leading_zeros", "divide", "exponential", "exponential_minus_one", "floor", "imag", "is_finite", "log",
    "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real",
    "reduce_precision", "remainder", "reverse", "round_nearest_afz", "round_nearest_even", "rsqrt", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh",
    "uniform_dequantize", "uniform_quantize", "xor"};

static bool same_type_op(ir_span name) {
  if (name.n <= 10 || memcmp(name.p, "stablehlo.", 10)) return false;
  ir_span rest = {name.p + 10, name.n - 10};
  for (size_t i = 0; i < sizeof SAME_TYPE_OPS / sizeof *SAME_TYPE_OPS; i++)
    if (ir_span_eq(rest, SAME_TYPE_OPS[i])) return true;
  return false;
}

/* The types a pretty op written with a function type `: (T, T) -> T` prints instead when they agree:
 * an op of SAME_TYPE_OPS prints `: T`; stablehlo.select (custom<SelectOpType>) prints `: P, T` when its
 * two branches and its result share T. NULL when MLIR keeps the function type. */
static const char *collapsed_types(sc_arena *a, const ir_op *op) {
  if (op->generic || op->nregions || op->nresults != 1 || !op->noperands) return NULL;
  ir_span t = ir_span_trim(ir_value_type(ir_op_result(op, 0)));
  uint32_t first = 0;
  if (ir_span_eq(ir_op_name(op), "stablehlo.select") && op->noperands == 3 && op->operands[0])
    first = 1;
  else if (!same_type_op(ir_op_name(op)))
    return NULL;
  for (uint32_t i = first; i < op->noperands; i++)
    if (!op->operands[i] || !ir_span_same(ir_span_trim(ir_value_type(op->operands[i])), t)) return NULL;
  if (!first) return ar_printf(a, " %.*s", SC_SPAN_ARG(t));
  ir_span pred = ir_span_trim(ir_value_type(op->operands[0]));
  return ar_printf(a, " %.*s, %.*s", SC_SPAN_ARG(pred), SC_SPAN_ARG(t));
}

/* The replacement of a pretty op's function-type trailer by its collapsed_types. */
static bool collapsed_function_type(sc_arena *a, const ir_module *m, const ir_op *op, replacement *out) {
  const char *text = collapsed_types(a, op);
  if (!text) return false;
  ir_span t = ir_span_trim(ir_value_type(ir_op_result(op, 0)));
  const char *buf = m->buf;
  uint32_t colon = 0, arrow = 0;
  int depth = 0;
  for (uint32_t at = op->pos.offset; at < op->end; at++) { /* the depth-0 `:` and `->` of the trailer */
    char c = buf[at];
    if (c == '"') {
      at = (uint32_t)(ir_skip_string(buf + at, buf + op->end) - buf) - 1;
      continue;
    }
    if (c == '-' && at + 1 < op->end && buf[at + 1] == '>') {
      if (!depth) arrow = at;
      at++;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      depth++;
    } else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0) {
      depth--;
    } else if (c == ':' && !depth && at > op->pos.offset && buf[at - 1] != ':' &&
               (at + 1 >= op->end || buf[at + 1] != ':')) {
      colon = at, arrow = 0;
    }
  }
  if (!colon || !arrow) return false;
  const char *r = skip_blank(buf + arrow + 2, buf + op->end);
  if ((size_t)(buf + op->end - r) < t.n || memcmp(r, t.p, t.n)) return false;
  replacement x = {colon + 1, (uint32_t)(r + t.n - buf), text, ORDER_EDIT, 0};
  *out = x;
  return true;
}

/* A pretty stablehlo.custom_call written `@target (` : MLIR prints the operand list right after the callee. */
static bool custom_call_callee_space(const ir_module *m, const ir_op *op, replacement *out) {
  if (op->generic || !ir_span_eq(ir_op_name(op), "stablehlo.custom_call")) return false;
  const char *buf = m->buf, *end = buf + op->end, *p = skip_blank(ir_op_name(op).p + ir_op_name(op).n, end);
  if (p >= end || *p != '@') return false;
  if (++p < end && *p == '"')
    p = ir_skip_string(p, end);
  else
    while (p < end && (isalnum((unsigned char)*p) || strchr("_.$-", *p))) p++;
  const char *paren = skip_blank(p, end);
  if (paren == p || paren >= end || *paren != '(') return false;
  replacement r = {(uint32_t)(p - buf), (uint32_t)(paren - buf), "", ORDER_EDIT, 0};
  *out = r;
  return true;
}

/* What sdy_opt prints differently in an op's own text (not its regions' bodies): line breaks (every
 * op is on one line; the breaks that open and close a body stay) become spaces, and a single result
 * type loses its parentheses. Joins are offsets; dropped parentheses go to `parens`. */
static void collect_op_normalizations(sc_arena *a, const ir_module *m, const ir_op *op, offsets *joins, offsets *parens,
                                      offsets *spaces) {
  uint32_t nb = 0, *bb = ar_alloc(a, (op->nregions + 1) * sizeof *bb), *be = ar_alloc(a, (op->nregions + 1) * sizeof *be);
  for (uint32_t r = 0; r < op->nregions; r++)
    if (region_body(m, ir_op_regions(op)[r], &bb[nb], &be[nb])) nb++;
  const char *buf = m->buf;
  uint32_t at = op->pos.offset, k = 0, arrow = 0, colon = 0;
  int depth = 0;
  while (at < op->end) {
    if (k < nb && at >= bb[k]) {
      at = be[k++];
      continue;
    }
    char c = buf[at];
    if (c == '"') {
      at = (uint32_t)(ir_skip_string(buf + at, buf + op->end) - buf);
      continue;
    }
    if (c == '/' && at + 1 < op->end && buf[at + 1] == '/') {
      while (at < op->end && buf[at] != '\n') at++;
      continue;
    }
    if (c == '-' && at + 1 < op->end && buf[at + 1] == '>') {
      if (depth == 0) arrow = at + 2;
      at += 2;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') depth++;
    else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0) depth--;
    else if (c == ':' && depth == 0 && at > op->pos.offset && at + 1 < op->end && buf[at - 1] != ':' &&
             buf[at + 1] != ':' && !(buf[at + 1] >= '0' && buf[at + 1] <= '9'))
      colon = at;
    if (c == '\n') {
      uint32_t q = at, r = at;
      while (q > op->pos.offset && (buf[q - 1] == ' ' || buf[q - 1] == '\t' || buf[q - 1] == '\r' || buf[q - 1] == '\n')) q--;
      while (r < op->end && (buf[r] == ' ' || buf[r] == '\t' || buf[r] == '\r' || buf[r] == '\n')) r++;
      bool opens = k < nb && r == bb[k], closes = k > 0 && q == be[k - 1];
      if (!opens && !closes) SC_PUSH(a, *joins, at);
    }
    at++;
  }
  if (colon && buf[colon - 1] != ' ' && buf[colon - 1] != '\n' && buf[colon - 1] != '\t') SC_PUSH(a, *spaces, colon);
  uint32_t open, close, stop = nb && bb[nb - 1] > arrow ? bb[nb - 1] : op->end;
  if (arrow && op->kind != SC_OP_FUNC && single_result_parens(buf, arrow, stop, &open, &close)) {
    SC_PUSH(a, *parens, open);
    SC_PUSH(a, *parens, close);
  }
}

static int offset_cmp(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return (a > b) - (a < b);
}

static int replacement_cmp(const void *x, const void *y) {
  const replacement *a = x, *b = y;
  if (a->begin != b->begin) return (a->begin > b->begin) - (a->begin < b->begin);
  if (a->order != b->order) return (a->order > b->order) - (a->order < b->order);
  /* text inserted at X goes before a replacement of [X, ...) (attributes before a joined line break) */
  bool ai = a->end == a->begin, bi = b->end == b->begin;
  if (ai != bi) return ai ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

void prop_printer_emit(prop_printer *p, uint32_t begin, uint32_t end, ar_str *out) {
  sc_arena *a = p->arena;
  if (p->edits.n > 1) qsort(p->edits.v, p->edits.n, sizeof *p->edits.v, edit_cmp);
  SC_VEC(replacement) reps = {0};
  for (size_t i = 0; i < p->replacements.n; i++)
    if (p->replacements.v[i].begin >= begin && p->replacements.v[i].end <= end) SC_PUSH(a, reps, p->replacements.v[i]);
  for (size_t i = 0; i < p->edits.n;) {
    size_t j = i + 1;
    while (j < p->edits.n && p->edits.v[j].op == p->edits.v[i].op) j++;
    const ir_op *op = p->edits.v[i].op;
    if (op->pos.offset >= begin && op->end <= end) {
      replacement r = op_replacement(p, p->edits.v + i, j - i);
      SC_PUSH(a, reps, r);
    }
    i = j;
  }
  /* line breaks inside ops become replacements by a space (the text after them loses its indent) */
  offsets joins = {0}, parens = {0}, spaces = {0};
  for (uint32_t i = 0; i < p->module->nops; i++) {
    const ir_op *op = p->module->ops[i];
    if (op->kind == SC_OP_MODULE || op->pos.offset < begin || op->end > end) continue;
    collect_op_normalizations(a, p->module, op, &joins, &parens, &spaces);
    replacement lit;
    if (canonical_splat(a, p->module, op, &lit)) SC_PUSH(a, reps, lit);
    if (collapsed_function_type(a, p->module, op, &lit)) SC_PUSH(a, reps, lit);
    if (custom_call_callee_space(p->module, op, &lit)) SC_PUSH(a, reps, lit);
    uint32_t at;
    if (written_name_at(p->module, op, "func.return", &at)) { /* MLIR elides the func dialect's return */
      replacement r = {at, at + ir_op_name(op).n, "return", ORDER_EDIT, 0};
      SC_PUSH(a, reps, r);
    }
  }
  for (size_t i = 0; i < spaces.n; i++) {
    replacement r = {spaces.v[i], spaces.v[i], " ", ORDER_EDIT, 0};
    SC_PUSH(a, reps, r);
  }
  for (size_t i = 0; i < parens.n; i++) {
    replacement r = {parens.v[i], parens.v[i] + 1, "", ORDER_EDIT, 0};
    SC_PUSH(a, reps, r);
  }
  if (joins.n > 1) qsort(joins.v, joins.n, sizeof *joins.v, offset_cmp);
  for (size_t i = 0; i < joins.n; i++) {
    uint32_t j = joins.v[i], e = j + 1;
    while (e < end && (p->module->buf[e] == ' ' || p->module->buf[e] == '\t')) e++;
    replacement r = {j, e, " ", ORDER_EDIT, 0};
    SC_PUSH(a, reps, r);
  }
  if (reps.n > 1) qsort(reps.v, reps.n, sizeof *reps.v, replacement_cmp);
  size_t grow = end - begin + 2;
  for (size_t i = 0; i < reps.n; i++) grow += strlen(reps.v[i].text);
  ar_str_reserve(out, grow);
  size_t from = out->n;
  ar_str *text = out;
  uint32_t at = begin;
  for (size_t i = 0; i < reps.n; i++) {
    if (reps.v[i].begin < at) continue; /* a join inside a replaced signature: the signature wins */
    put_without_comments(text, p->module->buf, at, reps.v[i].begin);
    if (reps.v[i].text[0] == ' ' && !reps.v[i].text[1] && reps.v[i].end > reps.v[i].begin) { /* a join */
      while (text->n > from && (text->p[text->n - 1] == ' ' || text->p[text->n - 1] == '\t')) text->n--;
      /* MLIR prints no space inside brackets: `[\n{}` joins as `[{}` */
      char prev = text->n > from ? text->p[text->n - 1] : '\n', next = reps.v[i].end < end ? p->module->buf[reps.v[i].end] : ' ';
      bool tight = strchr("[(<{", prev) || strchr("])>,}", next);
      if (prev != '\n' && !tight) ar_str_puts(text, " ");
    } else {
      ar_str_puts(text, reps.v[i].text);
    }
    at = reps.v[i].end;
  }
  put_without_comments(text, p->module->buf, at, end);
  drop_blank_lines(out, from);
  if (p->renumber) {
    ar_str numbered = SC_ASTR_INIT(a);
    prop_printer_renumber(a, out->p + from, out->n - from, &numbered);
    out->n = from;
    ar_str_put(out, numbered.p ? numbered.p : "", numbered.n);
  }
}

/* ---- ops added, removed and rewired ----------------------------------------------------------------- */

const char *prop_printer_fresh_name(prop_printer *p) { return ar_printf(p->arena, "%%_sc%u", p->fresh_names++); }

/* The white space before `op` on its line, or two spaces per nesting level when the op does not start
 * its line. */
static const char *indent_of(prop_printer *p, const ir_op *op) {
  const char *buf = p->module->buf;
  uint32_t at = op->pos.offset;
  while (at > 0 && (buf[at - 1] == ' ' || buf[at - 1] == '\t')) at--;
  if (at == 0 || buf[at - 1] == '\n') return ar_printf(p->arena, "%.*s", (int)(op->pos.offset - at), buf + at);
  uint32_t depth = ir_op_depth(op);
  return ar_printf(p->arena, "%*s", (int)(2 * (depth > 0 ? depth - 1 : 0)), "");
}

void prop_printer_insert_before(prop_printer *p, const ir_op *op, const char *text) {
  add_replacement(p, op->pos.offset, op->pos.offset, ar_printf(p->arena, "%s\n%s", text, indent_of(p, op)),
                  ORDER_BEFORE);
}

void prop_printer_insert_first(prop_printer *p, const ir_op *op, const char *text) {
  replacement r = {op->pos.offset, op->pos.offset, ar_printf(p->arena, "%s\n%s", text, indent_of(p, op)), ORDER_FIRST,
                   UINT32_MAX - p->next_seq++};
  SC_PUSH(p->arena, p->replacements, r);
}

void prop_printer_insert_after(prop_printer *p, const ir_op *op, const char *text) {
  add_replacement(p, op->end, op->end, ar_printf(p->arena, "\n%s%s", indent_of(p, op), text), ORDER_AFTER);
}

void prop_printer_erase(prop_printer *p, const ir_op *op) { add_replacement(p, op->pos.offset, op->end, "", ORDER_EDIT); }

static bool is_value_char(char c) { return is_name_char(c) || c == '#'; }

/* The end of the op's result list (`%0 = `, `%0:2 = `, `%a, %b = `): the offset after its `=`, or
 * the op's start when it has none. */
static uint32_t after_results(const char *buf, const ir_op *op) {
  uint32_t at = op->pos.offset;
  if (!op->nresults || buf[at] != '%') return at;
  while (at < op->end && buf[at] != '=' && buf[at] != '"' && buf[at] != '(' && buf[at] != '{') at++;
  return at < op->end && buf[at] == '=' ? at + 1 : op->pos.offset;
}

/* [begin, end) of the index-th value reference of buf[from, to) (strings skipped; a reference
 * followed by `=` or `:` declares a block argument, not a use); with `name`, only references to it
 * count. */
static bool find_value_ref(const char *buf, uint32_t from, uint32_t to, uint32_t index, bool uses_only, ir_span name,
                           uint32_t *begin, uint32_t *end) {
  uint32_t k = 0;
  for (uint32_t at = from; at < to; at++) {
    char c = buf[at];
    if (c == '"') {
      at = (uint32_t)(ir_skip_string(buf + at, buf + to) - buf) - 1;
      continue;
    }
    if (c != '%') continue;
    uint32_t e = at + 1;
    while (e < to && is_value_char(buf[e])) e++;
    uint32_t q = e;
    while (q < to && (buf[q] == ' ' || buf[q] == '\t' || buf[q] == '\n')) q++;
    /* `%iterArg = %arg0` and `%arg1: type` declare block arguments; `return %0 : type` uses %0 */
    bool declares = (q < to && buf[q] == '=') || (e < to && buf[e] == ':' && (e + 1 >= to || buf[e + 1] != ':'));
    bool named = !name.n || (e - at == name.n && !memcmp(buf + at, name.p, name.n));
    if ((!uses_only || !declares) && named) {
      if (k++ == index) {
        *begin = at;
        *end = e;
        return true;
      }
    }
    at = e - 1;
  }
  return false;
}

bool prop_printer_replace_operand(prop_printer *p, const ir_op *op, uint32_t index, const char *name) {
  const char *buf = p->module->buf;
  uint32_t stop = op->end;
  for (uint32_t r = 0; r < op->nregions; r++) {
    uint32_t b, e;
    if (region_body(p->module, ir_op_regions(op)[r], &b, &e) && b < stop) stop = b;
  }
  /* the operand by its name: the op's text may list operands in another order than the op (a pretty
   * reduce writes `(%input init: %init), ...`); a name used twice counts its earlier operands */
  ir_span written = ir_op_operand_name(op, index), none = {0};
  uint32_t occurrence = 0, begin, end;
  for (uint32_t k = 0; k < index; k++) {
    ir_span other = ir_op_operand_name(op, k);
    occurrence += other.n == written.n && written.n && !memcmp(other.p, written.p, written.n);
  }
  if (index >= op->noperands) return false;
  if (!(written.n && find_value_ref(buf, after_results(buf, op), stop, occurrence, true, written, &begin, &end)) &&
      !find_value_ref(buf, after_results(buf, op), stop, index, true, none, &begin, &end))
    return false;
  add_replacement(p, begin, end, name, ORDER_EDIT);
  return true;
}

bool prop_printer_rename_result(prop_printer *p, const ir_op *op, uint32_t index, const char *name) {
  const char *buf = p->module->buf;
  uint32_t stop = after_results(buf, op), begin, end;
  ir_span none = {0};
  if (stop == op->pos.offset || !find_value_ref(buf, op->pos.offset, stop, index, false, none, &begin, &end)) return false;
  uint32_t colon = begin;
  while (colon < end && buf[colon] != ':') colon++;
  add_replacement(p, begin, colon, name, ORDER_EDIT);
  return true;
}

/* ---- MLIR's value numbers ------------------------------------------------------------------------- */
