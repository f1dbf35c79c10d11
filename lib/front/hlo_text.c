/* hlo_text.c — the XLA HLO text front end.
 *
 * Grammar (../shared/reference/hlo-text.md, xla/hlo/parser/hlo_parser.cc):
 *   module      ::= 'HloModule' name? (',' attr)* stack_frames? computation+
 *   computation ::= 'ENTRY'? name? ('(' params ')' '->' shape)? '{' instruction+ '}' (',' attr)*
 *   instruction ::= 'ROOT'? name '=' shape? opcode '(' operands ')' (',' attr)*
 *   operand     ::= shape? name ('#' int)* | shape? opcode '(' operands ')' | literal
 *   attr        ::= name '=' value        (value: raw text; balanced over ( [ { and "strings")
 * Line breaks are insignificant; `//` line and slash-star block comments are skipped anywhere outside strings.
 *
 * Mapping onto the IR (lib/ir/ir.h):
 *  - The module is a "builtin.module" op: sym_name = module name, attrs = header `key=value`s, one
 *    region with one block whose ops are the computations in text order.
 *  - Each computation is a "func.func" op: sym_name = name without '%', attrs = the attributes after
 *    its closing '}' (execution_thread=...), func_result_types[0] = the `-> shape` of its signature
 *    (nresult_attrs = 1, with an empty result_attrs entry) when it has one. One region, one block; the
 *    block's args are the computation's parameters sorted by parameter number. ir_module.entry = the
 *    ENTRY computation, else the last one (as XLA does).
 *  - Each instruction is an op named by its opcode ("custom-call", "parameter", ...), sym_name = the
 *    instruction name without '%', one result (name = instruction name without '%', type = the shape
 *    text as written, e.g. "(f32[2], s32[])" or "f32[8,16]{1,0:T(8,128)}"), result_types = {shape}.
 *    A `parameter(N)` instruction is an op whose result value is also block argument N of its
 *    computation: that ir_value has def = the parameter op, index = 0, block = the entry block, and
 *    attrs = the parameter op's attrs (so `sharding` is found as an argument attribute too).
 *  - Operands: operand_names = names without '%' (a compact GTE `%t#1` keeps its `#1`), operands[i] =
 *    the value with that name in the same computation (the `#1` suffix is ignored for the lookup),
 *    operand_types[i] = the shape written in the operand list, else the operand value's type. An
 *    unknown operand name is a syntax error, as in XLA. Literal operands (`parameter(0)`, `constant(...)`)
 *    are not operands. A nested operand instruction (`add(f32[] max(x, y), z)`) becomes an op of its
 *    own with an unnamed result, placed just before the instruction that uses it.
 *  - attrs = every `key=value` after the operand list, value text exactly as written (quotes kept).
 *    A `ROOT` prefix is recorded as an attribute named "ROOT" (name span = the keyword, empty value)
 *    placed first; a computation without ROOT has its last instruction as root and no such attribute.
 *  - callee = the first of `to_apply=` / `calls=` (first name of a `{a, b}` list), without '%'.
 *    Every computation reference (to_apply, calls, body, condition, true_computation, false_computation,
 *    branch_computations, called_computations, select, scatter) must name a computation of the module.
 *  - pos = the instruction's first token (`ROOT` if present); text/end cover the instruction through
 *    its last attribute. src = metadata={... source_file="f.py" source_line=12 source_column=3 ...}
 *    (file span without quotes, col 0 when no source_column).
 *  - depth: module 0, computation 1, instruction 2. module->ops is the preorder; op ids index it.
 *    A shape-less instruction (`x = add(a, b)`, newer XLA) has an empty type hlo_span (never NULL).
 *  - The `FileNames`/`FunctionNames`/`FileLocations`/`StackFrames` sections after the header are
 *    skipped; `stack_frame_id=` in metadata is not resolved (src stays unknown without source_file).
 * Errors: the first one stops the parse (longjmp to fe_parse_hlo) with NULL, err->failed, the byte
 * offset and a message naming what was open where ("expected ')' to close operand list of 'add'
 * opened at line 3"). Bracket nesting beyond max_depth ("nesting deeper than N"), more than max_ops
 * instructions+computations and arena exhaustion set err->limit too; *cancel, polled every 4096
 * instructions, sets err->cancelled ("cancelled"). Nothing recurses on input nesting except nested
 * operand instructions, which count against max_depth and a hard MAX_NESTED_INSTR_DEPTH.
 * Strings are spans into the input; everything else is allocated from in->arena. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "front/front.h"
#include "front/hlo_text.h"
#include "ir/ir.h"
#include "util/hash.h"

/* ---------------------------------------------------------------------------------------------
 * Errors and allocation */

_Noreturn void hlo_fail(P *p, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = ar_vprintf(p->a, fmt, ap);
  va_end(ap);
  if (at < p->buf) at = p->buf;
  if (at > p->end) at = p->end;
  p->err->failed = true;
  p->err->offset = (uint32_t)(at - p->buf);
  p->err->message = msg ? msg : "out of memory (request arena limit reached)";
  longjmp(p->fail_jmp, 1);
}

/* A max_depth / max_ops / arena bound was hit: reported as an input limit, not a syntax error. */
_Noreturn void hlo_fail_limit(P *p, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = ar_vprintf(p->a, fmt, ap);
  va_end(ap);
  p->err->limit = true;
  hlo_fail(p, at, "%s", msg ? msg : fmt);
}

_Noreturn void hlo_fail_cancelled(P *p, const char *at) {
  p->err->cancelled = true;
  hlo_fail(p, at, "cancelled");
}

void *hlo_alloc(P *p, size_t n) {
  void *r = ar_alloc(p->a, n);
  if (!r) hlo_fail_limit(p, p->s, OOM);
  return r;
}

void *hlo_alloc_array(P *p, size_t count, size_t size) {
  if (count && size > SIZE_MAX / count) hlo_fail_limit(p, p->s, OOM);
  return hlo_alloc(p, count * size);
}

void *hlo_grow(P *p, void *old, size_t oldn, size_t newn, size_t size) {
  void *r = ar_grow(p->a, old, oldn, newn, size);
  if (!r) hlo_fail_limit(p, p->s, OOM);
  return r;
}

/* The func/call record of an op that has its side record (every instruction and computation). */
ir_op_decl *hlo_decl_of(P *p, ir_op *op) {
  if (!op->extra->decl) op->extra->decl = hlo_alloc(p, sizeof *op->extra->decl);
  return op->extra->decl;
}

void hlo_opvec_push(P *p, opvec *v, ir_op *op) {
  if (v->n == v->cap) {
    uint32_t nc = v->cap ? v->cap * 2 : 16;
    v->v = hlo_grow(p, v->v, v->n, nc, sizeof *v->v);
    v->cap = nc;
  }
  v->v[v->n++] = op;
}

uint32_t hlo_off(const P *p, const char *at) { return (uint32_t)(at - p->buf); }

static ir_pos pos_at(const P *p, const char *at) { return ir_linemap_pos(p->lines, hlo_off(p, at)); }

uint32_t hlo_line_at(const P *p, const char *at) { return pos_at(p, at).line; }

ir_span hlo_span(const char *a, const char *b) { return ir_span_of(a, (uint32_t)(b - a)); }

/* ---------------------------------------------------------------------------------------------
 * Lexing */

/* Skips white space and comments from `s`; returns the new position. */
const char *hlo_skip_ws_slow(P *p, const char *s) {
  const char *e = p->end;
  for (;;) {
    while (s < e && is_ws(*s)) s++;
    if (s + 1 < e && s[0] == '/' && s[1] == '/') {
      const char *nl = memchr(s, '\n', (size_t)(e - s));
      s = nl ? nl + 1 : e;
      continue;
    }
    if (s + 1 < e && s[0] == '/' && s[1] == '*') {
      const char *q = s + 2;
      for (;;) {
        q = q < e ? memchr(q, '*', (size_t)(e - q)) : NULL;
        if (!q || q + 1 >= e) hlo_fail(p, s, "unterminated /* comment");
        if (q[1] == '/') break;
        q++;
      }
      s = q + 2;
      continue;
    }
    return s;
  }
}

void hlo_skip_ws(P *p) { p->s = skip_ws_at(p, p->s); }

/* The first '"' or '\\' in [s, e), or e. Eight bytes a step where loads may be unaligned and the
 * byte order is known (the lowest flagged byte of the zero-byte test is exact). */
static inline const char *find_quote_or_backslash(const char *s, const char *e) {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  while (e - s >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t m = (((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
    if (m) return s + (__builtin_ctzll(m) >> 3);
    s += 8;
  }
#endif
  while (s < e && *s != '"' && *s != '\\') s++;
  return s;
}

/* At '"': returns the position just past the closing quote. The first SHORT_STRING bytes (most
 * strings end there) are scanned here; longer ones (backend_config, long op_names) by memchr. */
#define SHORT_STRING 32
static const char *skip_string_at(P *p, const char *s) {
  const char *open = s, *e = p->end;
  s++;
  const char *stop = e - s > SHORT_STRING ? s + SHORT_STRING : e;
  for (;;) {
    s = find_quote_or_backslash(s, stop);
    if (s >= stop) break;
    if (*s == '"') return s + 1;
    s += 2; /* a backslash escapes the next byte */
  }
  if (s >= e) hlo_fail(p, open, "unterminated string literal");
  for (;;) {
    const char *q = s < e ? memchr(s, '"', (size_t)(e - s)) : NULL;
    if (!q) hlo_fail(p, open, "unterminated string literal");
    /* Count the backslashes right before the quote: odd means it is escaped. */
    const char *b = q;
    while (b > s && b[-1] == '\\') b--;
    if (((q - b) & 1) == 0) return q + 1;
    s = q + 1;
  }
}

/* A name: [%]?[A-Za-z_][A-Za-z0-9_.-]* (after '%' a digit may start it). Stops before "->".
 * Returns the end, or `s` if there is no name. `*bare` receives the name without '%'. */
const char *hlo_lex_name_at(const P *p, const char *s, bool allow_percent, ir_span *bare) {
  const char *e = p->end, *start = s;
  if (allow_percent && s < e && *s == '%') {
    s++;
    if (s >= e || !is_name(*s)) return start;
  } else if (s >= e || !is_name0(*s)) {
    return start;
  }
  const char *nb = s;
  for (;;) {
    s = skip_cls(s, e, C_NODASH);
    if (s < e && *s == '-' && !(s + 1 < e && s[1] == '>')) {
      s++;
      continue;
    }
    break;
  }
  if (s == nb) return start;
  if (bare) *bare = hlo_span(nb, s);
  return s;
}

static const char *gdesc(P *p, gctx g, char open) {
  if (!g.what) return ar_printf(p->a, "'%c'", open);
  if (!g.name.n) return g.what;
  return ar_printf(p->a, "%s '" SC_SPAN_FMT "'", g.what, SC_SPAN_ARG(g.name));
}

static char closer_of(char c) { return c == '(' ? ')' : c == '[' ? ']' : '}'; }

/* At an opener ( [ {: skips to just past its matching closer, over strings and comments.
 * `depth` is the structural depth the group opens at (counts against max_depth). */
const char *hlo_skip_group_at(P *p, const char *s, uint32_t depth, gctx g) {
  const char *e = p->end;
  uint32_t n = 0;
  for (;;) {
    /* s is at a C_GROUP char or at the end. */
    if (s >= e) {
      if (n == 0) return s;
      /* Truncated: name the outermost unclosed group (the one the caller was parsing). */
      const char *open = p->buf + p->stk_off[0];
      hlo_fail(p, e, "expected '%c' to close %s opened at line %u", p->stk_close[0], gdesc(p, g, *open),
           hlo_line_at(p, open));
    }
    char c = *s;
    switch (c) {
    case '(':
    case '[':
    case '{':
      if (depth + n + 1 > p->max_depth) hlo_fail_limit(p, s, "nesting deeper than %u", p->max_depth);
      if (n == p->stk_cap) {
        uint32_t nc = p->stk_cap ? p->stk_cap * 2 : 64;
        p->stk_close = hlo_grow(p, p->stk_close, p->stk_cap, nc, 1);
        p->stk_off = hlo_grow(p, p->stk_off, p->stk_cap, nc, sizeof *p->stk_off);
        p->stk_cap = nc;
      }
      p->stk_close[n] = closer_of(c);
      p->stk_off[n] = hlo_off(p, s);
      n++;
      s++;
      break;
    case ')':
    case ']':
    case '}':
      if (n == 0) return s; /* not reached: callers start at an opener */
      if (c != p->stk_close[n - 1]) {
        const char *open = p->buf + p->stk_off[n - 1];
        gctx gg = n == 1 ? g : (gctx){0};
        hlo_fail(p, s, "expected '%c' to close %s opened at line %u, found '%c'", p->stk_close[n - 1],
             gdesc(p, gg, *open), hlo_line_at(p, open), c);
      }
      n--;
      s++;
      if (n == 0) return s;
      break;
    case '"':
      s = skip_string_at(p, s);
      break;
    case '/':
      if (s + 1 < e && (s[1] == '/' || s[1] == '*')) s = skip_ws_at(p, s);
      else s++;
      break;
    default:
      s++;
      break;
    }
    while (e - s >= 4 && !((ctab[(unsigned char)s[0]] | ctab[(unsigned char)s[1]] | ctab[(unsigned char)s[2]] |
                            ctab[(unsigned char)s[3]]) & C_GROUP))
      s += 4; /* four bytes a step: group contents are mostly names, numbers and ',' */
    while (s < e && !(ctab[(unsigned char)*s] & C_GROUP)) s++;
  }
}

/* A bare or bracketed value: balanced groups, strings and other characters up to ',' or an
 * unmatched closer or white space at depth 0. `mesh[...] {axes}` (replica groups) is one value. */
const char *hlo_scan_value_at(P *p, const char *s, uint32_t depth, gctx g) {
  const char *e = p->end;
  for (;;) {
    while (s < e && !(ctab[(unsigned char)*s] & C_VALSTOP)) s++;
    if (s >= e) return s;
    char c = *s;
    if (c == '(' || c == '[' || c == '{') {
      s = hlo_skip_group_at(p, s, depth, g);
    } else if (c == '"') {
      s = skip_string_at(p, s);
    } else if (c == '/') {
      if (s + 1 < e && (s[1] == '/' || s[1] == '*')) return s;
      s++;
    } else if (is_ws(c)) {
      /* `mesh['x'=2] {x}`: a ']' followed by '{' continues the value. */
      const char *q = skip_ws_at(p, s);
      if (s[-1] == ']' && q < e && *q == '{') s = q;
      else return s;
    } else {
      return s; /* , ) ] } */
    }
  }
}

uint32_t hlo_parse_u32_span(ir_span v) {
  uint64_t x = 0;
  for (uint32_t i = 0; i < v.n && is_digit(v.p[i]); i++) {
    x = x * 10 + (uint64_t)(v.p[i] - '0');
    if (x > UINT32_MAX) return UINT32_MAX;
  }
  return (uint32_t)x;
}

/* ---------------------------------------------------------------------------------------------
 * Attributes */

void hlo_attr_push(P *p, ir_attr at) {
  if (p->at_n == p->at_cap) {
    uint32_t nc = p->at_cap ? p->at_cap * 2 : 32;
    p->at_v = hlo_grow(p, p->at_v, p->at_n, nc, sizeof *p->at_v);
    p->at_cap = nc;
  }
  p->at_v[p->at_n++] = at;
}

/* One `key=value` of metadata: the source location fields are kept, the others ignored. */
static void metadata_field(ir_srcloc *src, bool *have_file, ir_span key, ir_span val) {
  if (key.n < 11 || key.p[0] != 's') return; /* all three keys start "source_" */
  if (SPAN_IS(key, "source_file")) {
    src->file = val;
    *have_file = val.n > 0;
  } else if (SPAN_IS(key, "source_line")) {
    src->line = hlo_parse_u32_span(val);
  } else if (SPAN_IS(key, "source_column")) {
    src->col = hlo_parse_u32_span(val);
  }
}

/* At a metadata value's opening '"': the string's contents; *s moves past its closing quote. */
static ir_span metadata_string(P *p, const char **s) {
  const char *q = skip_string_at(p, *s);
  ir_span v = hlo_span(*s + 1, q - 1);
  *s = q;
  return v;
}

/* metadata={op_type="..." op_name="..." source_file="x.py" source_line=12 source_column=3 ...} */
static ir_srcloc parse_metadata(P *p, ir_span v) {
  ir_srcloc src = {0};
  const char *s = v.p, *e = v.p + v.n;
  if (s >= e || *s != '{') return src;
  s++;
  e--; /* the closing '}' (the value was balanced-scanned) */
  bool have_file = false;
  while (s < e) {
    while (s < e && (is_ws(*s) || *s == ',')) s++;
    const char *k = s;
    while (s < e && is_name(*s)) s++;
    ir_span key = hlo_span(k, s);
    if (s >= e || *s != '=' || key.n == 0) {
      /* Not key=value: skip one token so we always progress. */
      if (s < e && *s == '"') s = skip_string_at(p, s);
      else if (s < e && s == k) s++;
      continue;
    }
    s++;
    ir_span val;
    if (s < e && *s == '"') {
      val = metadata_string(p, &s);
    } else {
      const char *q = s;
      while (q < e && !is_ws(*q) && *q != ',') q++;
      val = hlo_span(s, q);
      s = q;
    }
    metadata_field(&src, &have_file, key, val);
  }
  src.known = have_file;
  if (!have_file) src = (ir_srcloc){0};
  return src;
}

/* At the '{' of a metadata value: the usual flat form `{key="string" key=123 ...}` scanned once,
 * giving the value's end and its source location together (scanning the group and then parsing it
 * would read every string twice). Returns NULL on anything else (nested groups, comments, odd
 * tokens): the caller then scans the group generically and parses it with parse_metadata. */
static const char *scan_metadata_at(P *p, const char *s, uint32_t depth, ir_srcloc *out) {
  const char *e = p->end;
  ir_srcloc src = {0};
  bool have_file = false;
  if (depth + 1 > p->max_depth) return NULL;
  s++;
  for (;;) {
    while (s < e && (*s == ' ' || *s == ',')) s++;
    if (s >= e) return NULL;
    if (*s == '}') break;
    const char *k = s;
    s = skip_cls(s, e, C_NAME);
    ir_span key = hlo_span(k, s);
    if (!key.n || s >= e || *s != '=') return NULL;
    s++;
    ir_span val;
    if (s < e && *s == '"') {
      val = metadata_string(p, &s);
    } else {
      const char *v = s;
      s = skip_cls(s, e, C_NAME);
      val = hlo_span(v, s);
      if (!val.n) return NULL;
    }
    if (s >= e || (*s != ' ' && *s != ',' && *s != '}')) return NULL;
    metadata_field(&src, &have_file, key, val);
  }
  /* The value must end here as scan_value_at would end it (`{...}x` goes on: generic path). */
  s++;
  if (s < e && !is_ws(*s) && *s != ',' && *s != ')' && *s != ']' && *s != '}') return NULL;
  src.known = have_file;
  *out = have_file ? src : (ir_srcloc){0};
  return s;
}

static const char *parse_inline_computation(P *p, const char *open, uint32_t depth, ir_op *owner, ir_span attr);

/* A custom call's `literal=s32[2]{0} {4, 128}`: a shape, then the value (a tuple literal is one
 * parenthesized group and needs nothing special). NULL when no shape starts at `s`. */
static const char *scan_shaped_literal_at(P *p, const char *s, uint32_t depth) {
  const char *save = p->s;
  ir_span shape;
  p->s = s;
  bool shaped = s < p->end && *s != '(' && hlo_parse_shape(p, depth + 1, false, &shape);
  const char *q = shaped ? skip_ws_at(p, p->s) : NULL;
  p->s = save;
  if (!q || q >= p->end || *q == ',') return NULL;
  return hlo_scan_value_at(p, q, depth, (gctx){"literal of", shape});
}

/* Parses (',' name '=' value)* at the cursor, pushing onto the attr scratch stack. `owner` names
 * what the attributes belong to, for messages. Returns the end of the last value (or `last_end`).
 * With `src` (instructions), each metadata= value sets *src (the last one wins). */
const char *hlo_parse_attrs(P *p, uint32_t depth, const char *last_end, const char *owner_kind,
                               ir_span owner, ir_op *instr, ir_srcloc *src) {
  for (;;) {
    const char *q = skip_ws_at(p, p->s);
    if (q >= p->end || *q != ',') return last_end;
    q = skip_ws_at(p, q + 1);
    ir_span name;
    const char *ne = hlo_lex_name_at(p, q, false, &name);
    if (ne == q)
      hlo_fail(p, q, "expected attribute name after ',' in %s '" SC_SPAN_FMT "'", owner_kind, SC_SPAN_ARG(owner));
    const char *nstart = q;
    q = skip_ws_at(p, ne);
    if (q >= p->end || *q != '=')
      hlo_fail(p, q, "expected '=' after attribute name '" SC_SPAN_FMT "' of %s '" SC_SPAN_FMT "'",
           SC_SPAN_ARG(name), owner_kind, SC_SPAN_ARG(owner));
    q = skip_ws_at(p, q + 1);
    gctx g = {"value of attribute", name};
    const char *ve = NULL;
    bool is_metadata = src && SPAN_IS(name, "metadata");
    if (is_metadata && q < p->end && *q == '{') ve = scan_metadata_at(p, q, depth, src);
    else if (SPAN_IS(name, "literal")) ve = scan_shaped_literal_at(p, q, depth);
    else if (instr && hlo_is_comp_attr(name) && hlo_starts_inline_body(p, q))
      ve = parse_inline_computation(p, q, depth, instr, name);
    if (!ve) {
      ve = hlo_scan_value_at(p, q, depth, g);
      if (is_metadata) *src = parse_metadata(p, hlo_span(q, ve));
    }
    if (ve == q)
      hlo_fail(p, q, "expected a value for attribute '" SC_SPAN_FMT "' of %s '" SC_SPAN_FMT "'", SC_SPAN_ARG(name),
           owner_kind, SC_SPAN_ARG(owner));
    ir_attr at = {name, hlo_span(q, ve), hlo_off(p, nstart), hlo_off(p, ve)};
    hlo_attr_push(p, at);
    p->s = ve;
    last_end = ve;
  }
}

ir_attrs hlo_attrs_take(P *p, uint32_t from) {
  ir_attrs r = {NULL, 0};
  uint32_t n = p->at_n - from;
  if (n) {
    r.v = hlo_alloc_array(p, n, sizeof *r.v);
    memcpy(r.v, p->at_v + from, n * sizeof *r.v);
    r.n = n;
  }
  p->at_n = from;
  return r;
}

ir_span hlo_strip_percent(ir_span s) {
  if (s.n && s.p[0] == '%') s.p++, s.n--;
  return s;
}

/* ---------------------------------------------------------------------------------------------
 * Shapes */

/* At '[' or '{': the common plain dimension or layout list `[256,1024]` / `{1,0}` (digits and commas
 * only) in one table-driven pass. Returns just past `close`, or NULL when the list holds anything
 * else (dynamic dims, tiles, comments...): skip_group_at then scans it and reports any error. */
static inline const char *skip_dim_list(const P *p, const char *s, uint32_t depth, char close) {
  const char *e = p->end;
  if (depth + 1 > p->max_depth) return NULL;
  s++;
  s = skip_cls(s, e, C_DIM);
  return s < e && *s == close ? s + 1 : NULL;
}

/* A shape at the cursor: a tuple `( ... )` or `elem[dims]` with an optional `{layout}`. When
 * `layout_adjacent`, the layout brace must follow ']' directly (computation signatures, where a
 * following ' {' opens the body). Returns false (cursor unchanged) if no shape starts here. */
/* A '{' after a shape's dimensions begins its layout only when a dimension number, ':' (a layout
 * without minor-to-major) or '}' follows; otherwise it opens a body (`-> f32[4]{` then a newline). */
static bool layout_follows(const P *p, const char *brace) {
  const char *q = brace + 1;
  while (q < p->end && (*q == ' ' || *q == '\t')) q++;
  return q < p->end && (is_digit(*q) || *q == ':' || *q == '}');
}

bool hlo_parse_shape(P *p, uint32_t depth, bool layout_adjacent, ir_span *out) {
  const char *s = p->s, *e = p->end;
  if (s < e && *s == '(') {
    const char *q = hlo_skip_group_at(p, s, depth, (gctx){"tuple shape", {0}});
    *out = hlo_span(s, q);
    p->s = q;
    return true;
  }
  const char *q = s;
  q = skip_cls(q, e, C_IDENT);
  if (q == s + 1 && *s == 'b' && q < e && *q == '(') {
    /* A buffer shape `b(f32[4,2]{0,1})`: the shape inside a buffer (XLA's verifier tests write them). */
    if (depth + 1 > p->max_depth) hlo_fail_limit(p, q, "nesting deeper than %u", p->max_depth);
    const char *inner = skip_ws_at(p, q + 1), *save = p->s;
    ir_span in;
    p->s = inner;
    if (hlo_parse_shape(p, depth + 1, false, &in)) {
      const char *close = skip_ws_at(p, p->s);
      if (close < e && *close == ')') {
        *out = hlo_span(s, close + 1);
        p->s = close + 1;
        return true;
      }
    }
    p->s = save;
    return false;
  }
  if (q == s) return false;
  q = skip_ws_at(p, q); /* XLA's lexer reads `s32 [8]` as `s32[8]` */
  if (q >= e || *q != '[') return false;
  const char *d = skip_dim_list(p, q, depth, ']');
  q = d ? d : hlo_skip_group_at(p, q, depth, (gctx){"dimensions of shape", hlo_span(s, q)});
  const char *r = layout_adjacent ? q : skip_ws_at(p, q);
  if (r < e && *r == '{' && layout_follows(p, r)) {
    const char *l = skip_dim_list(p, r, depth, '}');
    q = l ? l : hlo_skip_group_at(p, r, depth, (gctx){"layout of shape", hlo_span(s, q)});
  }
  *out = hlo_span(s, q);
  p->s = q;
  return true;
}

/* ---------------------------------------------------------------------------------------------
 * Computations and the module */

static ir_block *new_single_block_region(P *p, ir_op *parent) {
  ir_region *r = hlo_alloc(p, sizeof *r);
  ir_block *b = hlo_alloc(p, sizeof *b);
  r->parent = parent;
  r->blocks = hlo_alloc(p, sizeof *r->blocks);
  r->blocks[0] = b;
  r->nblocks = 1;
  b->parent = r;
  ir_region **regions = hlo_alloc(p, sizeof *regions);
  if (!parent->extra) parent->extra = hlo_alloc(p, sizeof *parent->extra);
  parent->extra->regions = regions;
  regions[0] = r;
  parent->nregions = 1;
  return b;
}

static ir_op *new_computation(P *p, const char *start, ir_span name, comp *c) {
  ir_op *f = hlo_alloc(p, sizeof *f);
  ir_op_set_name(f, ir_span_of("func.func", 9));
  f->pos.offset = hlo_off(p, start);
  f->extra = hlo_alloc(p, sizeof *f->extra);
  f->extra->sym_name = name;
  f->parent_op = p->module;
  f->func_like = true;
  memset(c, 0, sizeof *c);
  c->func = f;
  c->block = new_single_block_region(p, f);
  return f;
}

/* Parameters by number in linear time when the numbers are 0..n-1 each once (what XLA writes, in any
 * order); otherwise a stable merge sort (hostile or broken text: the verifier-style rules report it). */
static void sort_params(P *p, comp *c) {
  uint32_t n = (uint32_t)c->params.n;
  if (n < 2) return;
  ir_op **by_num = hlo_alloc_array(p, n, sizeof *by_num);
  bool direct = true;
  for (uint32_t i = 0; i < n && direct; i++) {
    uint32_t num = c->param_nums[i];
    direct = num < n && !by_num[num];
    if (direct) by_num[num] = c->params.v[i];
  }
  if (direct) {
    for (uint32_t i = 0; i < n; i++) {
      c->params.v[i] = by_num[i];
      c->param_nums[i] = i;
    }
    return;
  }
  ir_op **ops = hlo_alloc_array(p, n, sizeof *ops);
  uint32_t *nums = hlo_alloc_array(p, n, sizeof *nums);
  for (uint32_t width = 1; width < n; width *= 2) { /* bottom-up merge: params <-> scratch, copied back */
    for (uint32_t lo = 0; lo < n; lo += 2 * width) {
      uint32_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      uint32_t i = lo, j = mid, k = lo;
      while (i < mid || j < hi) {
        bool left = j >= hi || (i < mid && c->param_nums[i] <= c->param_nums[j]);
        uint32_t from = left ? i++ : j++;
        ops[k] = c->params.v[from];
        nums[k++] = c->param_nums[from];
      }
    }
    memcpy(c->params.v, ops, n * sizeof *ops);
    memcpy(c->param_nums, nums, n * sizeof *nums);
  }
}

/* The body `{ instructions }` at the cursor (at '{'): its ops, operands resolved, and the parameters
 * as block arguments. Leaves the cursor after '}'. `p->cur_ops` must be empty. */
static void parse_body(P *p, comp *c, ir_span name, uint32_t depth) {
  const char *e = p->end, *open = p->s;
  if (depth + 1 > p->max_depth) hlo_fail_limit(p, open, "nesting deeper than %u", p->max_depth);
  p->s++;
  for (;;) {
    hlo_skip_ws(p);
    if (p->s >= e)
      hlo_fail(p, e, "expected '}' to close computation '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(name),
           hlo_line_at(p, open));
    if (*p->s == '}') break;
    hlo_parse_instruction(p, c, depth + 1);
  }
  if (p->cur_ops.n == 0) hlo_fail(p, p->s, "computation '" SC_SPAN_FMT "' has no instructions", SC_SPAN_ARG(name));
  p->s++;
  c->block->nops = p->cur_ops.n;
  c->block->ops = hlo_alloc_array(p, c->block->nops, sizeof *c->block->ops);
  memcpy(c->block->ops, p->cur_ops.v, c->block->nops * sizeof *c->block->ops);
  p->cur_ops.n = 0;
  p->total_ops += c->block->nops;
  hlo_resolve_operands(p, c);

  /* Block: ops and parameters, sorted by parameter number (stable: ties keep their order). */
  sort_params(p, c);
  if (c->params.n) {
    c->block->args = hlo_alloc_array(p, c->params.n, sizeof *c->block->args);
    for (uint32_t i = 0; i < c->params.n; i++) {
      ir_value *v = ir_op_result(c->params.v[i], 0);
      ir_value_set_param(v); /* its block: c->block, its computation's only one */
      c->block->args[i] = v;
    }
    c->block->nargs = c->params.n;
  }
}

static ir_op *parse_computation(P *p, bool *is_entry) {
  const char *start = p->s, *e = p->end;
  const char *s = start;
  *is_entry = false;
  if (at_word(p, s, "ENTRY")) {
    *is_entry = true;
    s = skip_ws_at(p, s + 5);
  }
  ir_span name = {s, 0};
  const char *ne = hlo_lex_name_at(p, s, true, &name);
  if (ne == s && !*is_entry) hlo_fail(p, s, "expected a computation name");
  if (ne == s) name = hlo_span(s, s);
  p->s = skip_ws_at(p, ne);
  hlo_count_op(p, start);
  comp c;
  ir_op *f = new_computation(p, start, name, &c);

  /* Signature: (p: shape, ...) -> shape */
  if (p->s < e && *p->s == '(') {
    p->s = hlo_skip_group_at(p, p->s, 1, (gctx){"parameter list of computation", name});
    hlo_skip_ws(p);
    if (p->end - p->s < 2 || p->s[0] != '-' || p->s[1] != '>')
      hlo_fail(p, p->s, "expected '->' after the parameter list of computation '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
    p->s = skip_ws_at(p, p->s + 2);
    ir_span rt;
    if (!hlo_parse_shape(p, 1, true, &rt))
      hlo_fail(p, p->s, "expected a result shape after '->' in computation '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
    ir_op_decl *d = hlo_decl_of(p, f);
    d->func_result_types = hlo_alloc(p, sizeof *d->func_result_types);
    d->func_result_types[0] = rt;
    d->result_attrs = hlo_alloc(p, sizeof *d->result_attrs);
    d->nresult_attrs = 1;
    hlo_skip_ws(p);
  }
  if (p->s >= e || *p->s != '{')
    hlo_fail(p, p->s, "expected '{' to begin the body of computation '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  parse_body(p, &c, name, 1);
  const char *last = p->s;
  uint32_t at_base = p->at_n;
  last = hlo_parse_attrs(p, 1, last, "computation", name, NULL, NULL);
  ir_op_set_attrs(f, hlo_attrs_take(p, at_base));
  f->end = hlo_off(p, last);
  return f;
}

/* At '{' of a computation-valued attribute: does an instruction list follow (`to_apply={ p0 = ...`)
 * rather than computation names (`calls={%a, %b}`)? */
bool hlo_starts_inline_body(P *p, const char *s) {
  if (s >= p->end || *s != '{') return false;
  const char *q = skip_ws_at(p, s + 1);
  if (at_word(p, q, "ROOT")) return true;
  ir_span nm;
  const char *ne = hlo_lex_name_at(p, q, true, &nm);
  if (ne == q) return false;
  q = skip_ws_at(p, ne);
  return q < p->end && *q == '=';
}

/* An inline called computation `to_apply={ ... }` (XLA's parser accepts one wherever a computation is
 * named): parsed as a computation of its own, named "<instruction>.<attribute>", which becomes the
 * instruction's callee. The enclosing computation's ops are set aside meanwhile. Returns the end of
 * the value. */
static const char *parse_inline_computation(P *p, const char *open, uint32_t depth, ir_op *owner, ir_span attr) {
  if (depth + 1 > MAX_NESTED_INSTR_DEPTH)
    hlo_fail_limit(p, open, "inline computations nested deeper than %u", MAX_NESTED_INSTR_DEPTH);
  ir_span owner_name = hlo_strip_percent(ir_op_sym_name(owner));
  const char *nm = ar_printf(p->a, SC_SPAN_FMT "." SC_SPAN_FMT, SC_SPAN_ARG(owner_name), SC_SPAN_ARG(attr));
  ir_span name = ir_span_of(nm, (uint32_t)strlen(nm));
  hlo_count_op(p, open);
  comp c;
  ir_op *f = new_computation(p, open, name, &c);
  opvec outer = p->cur_ops;
  const char *save = p->s;
  memset(&p->cur_ops, 0, sizeof p->cur_ops);
  p->s = open;
  parse_body(p, &c, name, depth + 1);
  const char *end = p->s;
  p->cur_ops = outer;
  p->s = save;
  f->end = hlo_off(p, end);
  hlo_opvec_push(p, &p->funcs, f);
  if (!ir_op_callee(owner).n) hlo_decl_of(p, owner)->callee = name;
  return end;
}

/* FileNames / FunctionNames / FileLocations / StackFrames sections after the header: skipped. */
static void skip_stack_frame_index(P *p) {
  static const char *const sections[] = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"};
  for (;;) {
    hlo_skip_ws(p);
    bool found = false;
    for (size_t i = 0; i < 4 && !found; i++) {
      if (!at_word_n(p, p->s, sections[i], strlen(sections[i]))) continue;
      const char *r = skip_ws_at(p, p->s + strlen(sections[i]));
      if (r < p->end && (*r == '{' || *r == '(')) continue; /* a computation with that name */
      found = true;
      p->s += strlen(sections[i]);
      for (;;) {
        const char *q = skip_ws_at(p, p->s);
        if (q >= p->end || !is_digit(*q)) break;
        while (q < p->end && is_digit(*q)) q++;
        q = skip_ws_at(p, q);
        if (q < p->end && *q == '"') q = skip_string_at(p, q);
        else if (q < p->end && *q == '{') q = hlo_skip_group_at(p, q, 1, (gctx){"stack frame entry", {0}});
        else hlo_fail(p, q, "expected a string or '{' in the %s section", sections[i]);
        p->s = q;
      }
    }
    if (!found) return;
  }
}

static void preorder(P *p, ir_op *op) {
  op->id = p->allops.n;
  p->allops.v[p->allops.n++] = op;
}

/* How HLO without its header starts (front.h): the sniffer and the header-less parse below agree. */
bool fe_starts_hlo_computation(const char *p, const char *end) {
  const char *q = p;
  if (q < end && *q == '%') q++;
  const char *name = q;
  while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '.' || *q == '-')) q++;
  if (q == name || !isalpha((unsigned char)*name)) return false;
  size_t n = (size_t)(q - name);
  if (n == 5 && !memcmp(name, "ENTRY", 5)) return true;
  if ((n == 6 && !memcmp(name, "module", 6)) || (n == 14 && !memcmp(name, "builtin.module", 14))) return false;
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  return q < end && (*q == '{' || *q == '(');
}

ir_module *fe_parse_hlo(const fe_parse_input *in, fe_parse_error *err) {
  fe_parse_error dummy;
  if (!err) err = &dummy;
  memset(err, 0, sizeof *err);
  if (!in || !in->arena || (!in->buf && in->len)) {
    err->failed = true;
    err->message = "invalid parser input";
    return NULL;
  }
  P pst;
  memset(&pst, 0, sizeof pst);
  P *p = &pst;
  static const char empty_buf[1] = {0};
  p->buf = in->buf ? in->buf : empty_buf;
  p->a = in->arena;
  p->err = err;
  p->cancel = in->cancel;
  p->max_depth = in->max_depth ? in->max_depth : SC_DEFAULT_MAX_DEPTH;
  p->max_ops = in->max_ops ? in->max_ops : SC_DEFAULT_MAX_OPS;
  if (setjmp(p->fail_jmp)) return NULL;
  size_t len = in->buf ? in->len : 0;
  p->end = p->buf + len;
  p->s = p->buf;
  if (len > UINT32_MAX - 1) hlo_fail(p, p->buf, "input too large (%zu bytes; limit 4 GiB)", len);
  uint32_t begin = in->begin, end = in->end;
  if (begin > end || end > len) hlo_fail(p, p->buf, "invalid chunk [%u, %u) of a %zu-byte input", begin, end, len);
  if (in->lines && in->lines->nlines) {
    p->lines = in->lines;
  } else {
    p->own_lines = ir_linemap_build(p->a, p->buf, len);
    if (!p->own_lines.samples) hlo_fail_limit(p, p->buf, OOM);
    p->lines = &p->own_lines;
  }
  p->beg = p->buf + begin;
  p->end = p->buf + end;
  p->s = p->beg;
  if (p->cancel && *p->cancel) hlo_fail_cancelled(p, p->s);

  /* Header: XLA also reads computations without one (hlo files written by hand, runner inputs). */
  hlo_skip_ws(p);
  const char *mstart = p->s;
  if (p->s >= p->end) hlo_fail(p, p->s, "empty input: expected 'HloModule' or a computation");
  bool header = at_word(p, p->s, "HloModule");
  if (!header && !fe_starts_hlo_computation(p->s, p->end))
    hlo_fail(p, p->s, "expected 'HloModule' at the start of an HLO module");
  ir_op *module = hlo_alloc(p, sizeof *module);
  ir_op_set_name(module, ir_span_of("builtin.module", 14));
  module->pos.offset = hlo_off(p, mstart);
  if (header) p->s = skip_ws_at(p, p->s + 9);
  ir_span mname = hlo_span(p->s, p->s);
  if (header) {
    /* The name may be missing (dumps printed without ids): then what follows is a computation. */
    ir_span nm;
    const char *ne = hlo_lex_name_at(p, p->s, true, &nm);
    const char *r = skip_ws_at(p, ne);
    bool comp_next = at_word(p, p->s, "ENTRY") || (r < p->end && (*r == '{' || *r == '('));
    if (ne != p->s && !comp_next) {
      mname = nm;
      p->s = ne;
      if (p->s < p->end && *p->s == ':') p->s++; /* the legacy header `HloModule name:` */
    }
  }
  if (mname.n) {
    if (!module->extra) module->extra = hlo_alloc(p, sizeof *module->extra);
    module->extra->sym_name = mname;
  }
  const char *last = p->s;
  if (header) last = hlo_parse_attrs(p, 0, last, "module", mname, NULL, NULL);
  ir_op_set_attrs(module, hlo_attrs_take(p, 0));
  ir_block *mblock = new_single_block_region(p, module);
  p->module = module;
  p->mblock = mblock;
  skip_stack_frame_index(p);

  /* Computations. */
  ir_op *entry = NULL;
  for (;;) {
    hlo_skip_ws(p);
    if (p->s >= p->end) break;
    bool is_entry;
    const char *cstart = p->s;
    ir_op *f = parse_computation(p, &is_entry);
    if (is_entry) {
      if (entry) hlo_fail(p, cstart, "expects only one ENTRY computation");
      entry = f;
    }
    hlo_opvec_push(p, &p->funcs, f);
    last = p->buf + f->end;
  }
  if (p->funcs.n == 0) hlo_fail(p, p->s, "expected a computation after the HloModule header");
  if (!entry) entry = p->funcs.v[p->funcs.n - 1];
  mblock->ops = p->funcs.v;
  mblock->nops = p->funcs.n;
  module->end = hlo_off(p, last);

  /* Preorder op list and ids. */
  p->allops.cap = 1 + p->funcs.n + p->total_ops;
  p->allops.v = hlo_alloc_array(p, p->allops.cap, sizeof *p->allops.v);
  preorder(p, module);
  for (uint32_t i = 0; i < p->funcs.n; i++) {
    ir_op *f = p->funcs.v[i];
    preorder(p, f);
    ir_block *b = ir_op_regions(f)[0]->blocks[0];
    for (uint32_t k = 0; k < b->nops; k++) preorder(p, b->ops[k]);
  }
  hlo_resolve_computations(p, p->allops.v, p->allops.n);
  if (p->cancel && *p->cancel) hlo_fail_cancelled(p, p->s);

  ir_module *m = hlo_alloc(p, sizeof *m);
  m->format = SC_FMT_HLO;
  m->buf = p->buf;
  m->len = len;
  m->base_offset = begin;
  m->end_offset = end;
  m->module = module;
  m->ops = p->allops.v;
  m->nops = p->allops.n;
  m->funcs = p->funcs.v;
  m->nfuncs = p->funcs.n;
  m->entry = entry;
  ir_module_finalize(p->a, m);
  return m;
}
