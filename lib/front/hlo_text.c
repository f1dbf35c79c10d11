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
 *    block's args are the computation's parameters sorted by parameter number. sc_module.entry = the
 *    ENTRY computation, else the last one (as XLA does).
 *  - Each instruction is an op named by its opcode ("custom-call", "parameter", ...), sym_name = the
 *    instruction name without '%', one result (name = instruction name without '%', type = the shape
 *    text as written, e.g. "(f32[2], s32[])" or "f32[8,16]{1,0:T(8,128)}"), result_types = {shape}.
 *    A `parameter(N)` instruction is an op whose result value is also block argument N of its
 *    computation: that sc_value has def = the parameter op, index = 0, block = the entry block, and
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
 *    A shape-less instruction (`x = add(a, b)`, newer XLA) has an empty type span (never NULL).
 *  - The `FileNames`/`FunctionNames`/`FileLocations`/`StackFrames` sections after the header are
 *    skipped; `stack_frame_id=` in metadata is not resolved (src stays unknown without source_file).
 * Errors: the first one stops the parse (longjmp to sc_parse_hlo) with NULL, err->failed, the byte
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
#include "ir/ir.h"
#include "util/hash.h"

#define CANCEL_POLL_INTERVAL 4096u
#define MAX_NESTED_INSTR_DEPTH 512u

typedef struct {
  sc_op **v;
  uint32_t n, cap;
} opvec;

typedef struct {
  const char *buf;        /* whole input */
  const char *s;          /* cursor */
  const char *beg, *end;  /* this chunk */
  sc_arena *a;
  const sc_linemap *lines;
  sc_linemap own_lines;
  uint32_t max_depth, max_ops;
  const atomic_int *cancel;
  sc_parse_error *err;
  jmp_buf fail_jmp;
  uint32_t ninstr;
  /* Bracket stack for skip_group: expected closer and opener offset per level. */
  char *stk_close;
  uint32_t *stk_off;
  uint32_t stk_cap;
  /* Scratch stacks (instructions nest only through nested operand instructions). */
  sc_span *sc_names, *sc_types;
  sc_value **sc_vals;
  uint32_t sc_n, sc_cap;
  sc_attr *at_v;
  uint32_t at_n, at_cap;
  /* The name-resolution hash table's buffer (see htab_init). */
  struct hslot *ht_v;
  uint32_t ht_cap;
  /* Instructions of the computation being parsed (computations do not nest); copied out exactly. */
  opvec cur_ops;
  uint32_t total_ops;
  /* Output. */
  opvec funcs;
  opvec allops;
  sc_op *module;          /* the module op and its block, parents of every computation */
  sc_block *mblock;
} P;

/* ---------------------------------------------------------------------------------------------
 * Errors and allocation */

#if defined(__GNUC__) || defined(__clang__)
#define SC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SC_PRINTF(a, b)
#endif

static _Noreturn void fail(P *p, const char *at, const char *fmt, ...) SC_PRINTF(3, 4);
static _Noreturn void fail(P *p, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = sc_arena_vprintf(p->a, fmt, ap);
  va_end(ap);
  if (at < p->buf) at = p->buf;
  if (at > p->end) at = p->end;
  p->err->failed = true;
  p->err->offset = (uint32_t)(at - p->buf);
  p->err->message = msg ? msg : "out of memory (request arena limit reached)";
  longjmp(p->fail_jmp, 1);
}

/* A max_depth / max_ops / arena bound was hit: reported as an input limit, not a syntax error. */
static _Noreturn void fail_limit(P *p, const char *at, const char *fmt, ...) SC_PRINTF(3, 4);
static _Noreturn void fail_limit(P *p, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = sc_arena_vprintf(p->a, fmt, ap);
  va_end(ap);
  p->err->limit = true;
  fail(p, at, "%s", msg ? msg : fmt);
}

static _Noreturn void fail_cancelled(P *p, const char *at) {
  p->err->cancelled = true;
  fail(p, at, "cancelled");
}

#define OOM "out of memory (request arena limit reached)"

static void *alloc(P *p, size_t n) {
  void *r = sc_arena_alloc(p->a, n);
  if (!r) fail_limit(p, p->s, OOM);
  return r;
}

static void *alloc_array(P *p, size_t count, size_t size) {
  if (count && size > SIZE_MAX / count) fail_limit(p, p->s, OOM);
  return alloc(p, count * size);
}

static void *grow(P *p, void *old, size_t oldn, size_t newn, size_t size) {
  void *r = sc_arena_grow(p->a, old, oldn, newn, size);
  if (!r) fail_limit(p, p->s, OOM);
  return r;
}

/* The func/call record of an op that has its side record (every instruction and computation). */
static sc_op_decl *decl_of(P *p, sc_op *op) {
  if (!op->extra->decl) op->extra->decl = alloc(p, sizeof *op->extra->decl);
  return op->extra->decl;
}

static void opvec_push(P *p, opvec *v, sc_op *op) {
  if (v->n == v->cap) {
    uint32_t nc = v->cap ? v->cap * 2 : 16;
    v->v = grow(p, v->v, v->n, nc, sizeof *v->v);
    v->cap = nc;
  }
  v->v[v->n++] = op;
}

static uint32_t off(const P *p, const char *at) { return (uint32_t)(at - p->buf); }

static sc_pos pos_at(const P *p, const char *at) { return sc_linemap_pos(p->lines, off(p, at)); }

static uint32_t line_at(const P *p, const char *at) { return pos_at(p, at).line; }

static sc_span span(const char *a, const char *b) { return sc_span_of(a, (uint32_t)(b - a)); }

/* ---------------------------------------------------------------------------------------------
 * Lexing */

enum { C_WS = 1, C_NAME = 2, C_NAME0 = 4, C_GROUP = 8, C_VALSTOP = 16, C_NODASH = 32, C_IDENT = 64, C_DIM = 128 };
#define L (C_NAME | C_NAME0 | C_NODASH | C_IDENT)
#define D (C_NAME | C_NODASH | C_IDENT | C_DIM)
#define W (C_WS | C_VALSTOP)
#define G (C_GROUP | C_VALSTOP)
/* Character classes: name start, name char (C_NODASH: one that is not '-', the only name char that
 * may begin "->"), shape element type char (C_IDENT), dimension or layout list char (C_DIM), white
 * space, group scan stops, value scan stops. */
static const unsigned char ctab[256] = {
    ['a'] = L, ['b'] = L, ['c'] = L, ['d'] = L, ['e'] = L, ['f'] = L, ['g'] = L, ['h'] = L, ['i'] = L,
    ['j'] = L, ['k'] = L, ['l'] = L, ['m'] = L, ['n'] = L, ['o'] = L, ['p'] = L, ['q'] = L, ['r'] = L,
    ['s'] = L, ['t'] = L, ['u'] = L, ['v'] = L, ['w'] = L, ['x'] = L, ['y'] = L, ['z'] = L, ['A'] = L,
    ['B'] = L, ['C'] = L, ['D'] = L, ['E'] = L, ['F'] = L, ['G'] = L, ['H'] = L, ['I'] = L, ['J'] = L,
    ['K'] = L, ['L'] = L, ['M'] = L, ['N'] = L, ['O'] = L, ['P'] = L, ['Q'] = L, ['R'] = L, ['S'] = L,
    ['T'] = L, ['U'] = L, ['V'] = L, ['W'] = L, ['X'] = L, ['Y'] = L, ['Z'] = L, ['_'] = L,
    ['0'] = D, ['1'] = D, ['2'] = D, ['3'] = D, ['4'] = D, ['5'] = D, ['6'] = D, ['7'] = D, ['8'] = D,
    ['9'] = D, ['.'] = C_NAME | C_NODASH, ['-'] = C_NAME,
    [' '] = W, ['\t'] = W, ['\n'] = W, ['\r'] = W, ['\f'] = W, ['\v'] = W,
    ['('] = G, [')'] = G, ['['] = G, [']'] = G, ['{'] = G, ['}'] = G, ['"'] = G, ['/'] = G,
    [','] = C_VALSTOP | C_DIM,
};
#undef L
#undef D
#undef W
#undef G

/* Past the run of bytes of class `cls` from `s` (bounded by `e`): four bytes per bounds check. */
static inline const char *skip_cls(const char *s, const char *e, unsigned cls) {
  while (e - s >= 4) {
    if (!(ctab[(unsigned char)s[0]] & cls)) return s;
    if (!(ctab[(unsigned char)s[1]] & cls)) return s + 1;
    if (!(ctab[(unsigned char)s[2]] & cls)) return s + 2;
    if (!(ctab[(unsigned char)s[3]] & cls)) return s + 3;
    s += 4;
  }
  while (s < e && (ctab[(unsigned char)*s] & cls)) s++;
  return s;
}

/* A span equals a string literal (length known at compile time: no strlen per call). */
#define SPAN_IS(sp, lit) ((sp).n == sizeof(lit) - 1 && memcmp((sp).p, lit, sizeof(lit) - 1) == 0)

static inline bool is_ws(char c) { return ctab[(unsigned char)c] & C_WS; }
static inline bool is_name(char c) { return ctab[(unsigned char)c] & C_NAME; }
static inline bool is_name0(char c) { return ctab[(unsigned char)c] & C_NAME0; }
static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Skips white space and comments from `s`; returns the new position. */
static const char *skip_ws_slow(P *p, const char *s) {
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
        if (!q || q + 1 >= e) fail(p, s, "unterminated /* comment");
        if (q[1] == '/') break;
        q++;
      }
      s = q + 2;
      continue;
    }
    return s;
  }
}

/* The same, inline for the common cases (nothing to skip, or one space before a token): most calls. */
static inline const char *skip_ws_at(P *p, const char *s) {
  const char *e = p->end;
  if (s < e && !is_ws(*s) && *s != '/') return s;
  if (s + 1 < e && *s == ' ' && !is_ws(s[1]) && s[1] != '/') return s + 1;
  return skip_ws_slow(p, s);
}

static void skip_ws(P *p) { p->s = skip_ws_at(p, p->s); }

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
  if (s >= e) fail(p, open, "unterminated string literal");
  for (;;) {
    const char *q = s < e ? memchr(s, '"', (size_t)(e - s)) : NULL;
    if (!q) fail(p, open, "unterminated string literal");
    /* Count the backslashes right before the quote: odd means it is escaped. */
    const char *b = q;
    while (b > s && b[-1] == '\\') b--;
    if (((q - b) & 1) == 0) return q + 1;
    s = q + 1;
  }
}

/* A name: [%]?[A-Za-z_][A-Za-z0-9_.-]* (after '%' a digit may start it). Stops before "->".
 * Returns the end, or `s` if there is no name. `*bare` receives the name without '%'. */
static const char *lex_name_at(const P *p, const char *s, bool allow_percent, sc_span *bare) {
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
  if (bare) *bare = span(nb, s);
  return s;
}

static inline bool at_word_n(const P *p, const char *s, const char *w, size_t n) {
  if ((size_t)(p->end - s) < n || memcmp(s, w, n) != 0) return false;
  return s + n == p->end || !is_name(s[n]);
}
#define at_word(p, s, lit) at_word_n(p, s, lit, sizeof(lit) - 1)

/* What a bracket group is, for messages: "operand list of 'add'", "value of attribute 'sharding'". */
typedef struct {
  const char *what;
  sc_span name;
} gctx;

static const char *gdesc(P *p, gctx g, char open) {
  if (!g.what) return sc_arena_printf(p->a, "'%c'", open);
  if (!g.name.n) return g.what;
  return sc_arena_printf(p->a, "%s '" SC_SPAN_FMT "'", g.what, SC_SPAN_ARG(g.name));
}

static char closer_of(char c) { return c == '(' ? ')' : c == '[' ? ']' : '}'; }

/* At an opener ( [ {: skips to just past its matching closer, over strings and comments.
 * `depth` is the structural depth the group opens at (counts against max_depth). */
static const char *skip_group_at(P *p, const char *s, uint32_t depth, gctx g) {
  const char *e = p->end;
  uint32_t n = 0;
  for (;;) {
    /* s is at a C_GROUP char or at the end. */
    if (s >= e) {
      if (n == 0) return s;
      /* Truncated: name the outermost unclosed group (the one the caller was parsing). */
      const char *open = p->buf + p->stk_off[0];
      fail(p, e, "expected '%c' to close %s opened at line %u", p->stk_close[0], gdesc(p, g, *open),
           line_at(p, open));
    }
    char c = *s;
    switch (c) {
    case '(':
    case '[':
    case '{':
      if (depth + n + 1 > p->max_depth) fail_limit(p, s, "nesting deeper than %u", p->max_depth);
      if (n == p->stk_cap) {
        uint32_t nc = p->stk_cap ? p->stk_cap * 2 : 64;
        p->stk_close = grow(p, p->stk_close, p->stk_cap, nc, 1);
        p->stk_off = grow(p, p->stk_off, p->stk_cap, nc, sizeof *p->stk_off);
        p->stk_cap = nc;
      }
      p->stk_close[n] = closer_of(c);
      p->stk_off[n] = off(p, s);
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
        fail(p, s, "expected '%c' to close %s opened at line %u, found '%c'", p->stk_close[n - 1],
             gdesc(p, gg, *open), line_at(p, open), c);
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
static const char *scan_value_at(P *p, const char *s, uint32_t depth, gctx g) {
  const char *e = p->end;
  for (;;) {
    while (s < e && !(ctab[(unsigned char)*s] & C_VALSTOP)) s++;
    if (s >= e) return s;
    char c = *s;
    if (c == '(' || c == '[' || c == '{') {
      s = skip_group_at(p, s, depth, g);
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

static uint32_t parse_u32_span(sc_span v) {
  uint64_t x = 0;
  for (uint32_t i = 0; i < v.n && is_digit(v.p[i]); i++) {
    x = x * 10 + (uint64_t)(v.p[i] - '0');
    if (x > UINT32_MAX) return UINT32_MAX;
  }
  return (uint32_t)x;
}

/* ---------------------------------------------------------------------------------------------
 * Attributes */

static void attr_push(P *p, sc_attr at) {
  if (p->at_n == p->at_cap) {
    uint32_t nc = p->at_cap ? p->at_cap * 2 : 32;
    p->at_v = grow(p, p->at_v, p->at_n, nc, sizeof *p->at_v);
    p->at_cap = nc;
  }
  p->at_v[p->at_n++] = at;
}

/* One `key=value` of metadata: the source location fields are kept, the others ignored. */
static void metadata_field(sc_srcloc *src, bool *have_file, sc_span key, sc_span val) {
  if (key.n < 11 || key.p[0] != 's') return; /* all three keys start "source_" */
  if (SPAN_IS(key, "source_file")) {
    src->file = val;
    *have_file = val.n > 0;
  } else if (SPAN_IS(key, "source_line")) {
    src->line = parse_u32_span(val);
  } else if (SPAN_IS(key, "source_column")) {
    src->col = parse_u32_span(val);
  }
}

/* At a metadata value's opening '"': the string's contents; *s moves past its closing quote. */
static sc_span metadata_string(P *p, const char **s) {
  const char *q = skip_string_at(p, *s);
  sc_span v = span(*s + 1, q - 1);
  *s = q;
  return v;
}

/* metadata={op_type="..." op_name="..." source_file="x.py" source_line=12 source_column=3 ...} */
static sc_srcloc parse_metadata(P *p, sc_span v) {
  sc_srcloc src = {0};
  const char *s = v.p, *e = v.p + v.n;
  if (s >= e || *s != '{') return src;
  s++;
  e--; /* the closing '}' (the value was balanced-scanned) */
  bool have_file = false;
  while (s < e) {
    while (s < e && (is_ws(*s) || *s == ',')) s++;
    const char *k = s;
    while (s < e && is_name(*s)) s++;
    sc_span key = span(k, s);
    if (s >= e || *s != '=' || key.n == 0) {
      /* Not key=value: skip one token so we always progress. */
      if (s < e && *s == '"') s = skip_string_at(p, s);
      else if (s < e && s == k) s++;
      continue;
    }
    s++;
    sc_span val;
    if (s < e && *s == '"') {
      val = metadata_string(p, &s);
    } else {
      const char *q = s;
      while (q < e && !is_ws(*q) && *q != ',') q++;
      val = span(s, q);
      s = q;
    }
    metadata_field(&src, &have_file, key, val);
  }
  src.known = have_file;
  if (!have_file) src = (sc_srcloc){0};
  return src;
}

/* At the '{' of a metadata value: the usual flat form `{key="string" key=123 ...}` scanned once,
 * giving the value's end and its source location together (scanning the group and then parsing it
 * would read every string twice). Returns NULL on anything else (nested groups, comments, odd
 * tokens): the caller then scans the group generically and parses it with parse_metadata. */
static const char *scan_metadata_at(P *p, const char *s, uint32_t depth, sc_srcloc *out) {
  const char *e = p->end;
  sc_srcloc src = {0};
  bool have_file = false;
  if (depth + 1 > p->max_depth) return NULL;
  s++;
  for (;;) {
    while (s < e && (*s == ' ' || *s == ',')) s++;
    if (s >= e) return NULL;
    if (*s == '}') break;
    const char *k = s;
    s = skip_cls(s, e, C_NAME);
    sc_span key = span(k, s);
    if (!key.n || s >= e || *s != '=') return NULL;
    s++;
    sc_span val;
    if (s < e && *s == '"') {
      val = metadata_string(p, &s);
    } else {
      const char *v = s;
      s = skip_cls(s, e, C_NAME);
      val = span(v, s);
      if (!val.n) return NULL;
    }
    if (s >= e || (*s != ' ' && *s != ',' && *s != '}')) return NULL;
    metadata_field(&src, &have_file, key, val);
  }
  /* The value must end here as scan_value_at would end it (`{...}x` goes on: generic path). */
  s++;
  if (s < e && !is_ws(*s) && *s != ',' && *s != ')' && *s != ']' && *s != '}') return NULL;
  src.known = have_file;
  *out = have_file ? src : (sc_srcloc){0};
  return s;
}

static bool parse_shape(P *p, uint32_t depth, bool layout_adjacent, sc_span *out);
static const char *parse_inline_computation(P *p, const char *open, uint32_t depth, sc_op *owner, sc_span attr);
static bool is_comp_attr(sc_span n);
static bool starts_inline_body(P *p, const char *s);

/* A custom call's `literal=s32[2]{0} {4, 128}`: a shape, then the value (a tuple literal is one
 * parenthesized group and needs nothing special). NULL when no shape starts at `s`. */
static const char *scan_shaped_literal_at(P *p, const char *s, uint32_t depth) {
  const char *save = p->s;
  sc_span shape;
  p->s = s;
  bool shaped = s < p->end && *s != '(' && parse_shape(p, depth + 1, false, &shape);
  const char *q = shaped ? skip_ws_at(p, p->s) : NULL;
  p->s = save;
  if (!q || q >= p->end || *q == ',') return NULL;
  return scan_value_at(p, q, depth, (gctx){"literal of", shape});
}

/* Parses (',' name '=' value)* at the cursor, pushing onto the attr scratch stack. `owner` names
 * what the attributes belong to, for messages. Returns the end of the last value (or `last_end`).
 * With `src` (instructions), each metadata= value sets *src (the last one wins). */
static const char *parse_attrs(P *p, uint32_t depth, const char *last_end, const char *owner_kind,
                               sc_span owner, sc_op *instr, sc_srcloc *src) {
  for (;;) {
    const char *q = skip_ws_at(p, p->s);
    if (q >= p->end || *q != ',') return last_end;
    q = skip_ws_at(p, q + 1);
    sc_span name;
    const char *ne = lex_name_at(p, q, false, &name);
    if (ne == q)
      fail(p, q, "expected attribute name after ',' in %s '" SC_SPAN_FMT "'", owner_kind, SC_SPAN_ARG(owner));
    const char *nstart = q;
    q = skip_ws_at(p, ne);
    if (q >= p->end || *q != '=')
      fail(p, q, "expected '=' after attribute name '" SC_SPAN_FMT "' of %s '" SC_SPAN_FMT "'",
           SC_SPAN_ARG(name), owner_kind, SC_SPAN_ARG(owner));
    q = skip_ws_at(p, q + 1);
    gctx g = {"value of attribute", name};
    const char *ve = NULL;
    bool is_metadata = src && SPAN_IS(name, "metadata");
    if (is_metadata && q < p->end && *q == '{') ve = scan_metadata_at(p, q, depth, src);
    else if (SPAN_IS(name, "literal")) ve = scan_shaped_literal_at(p, q, depth);
    else if (instr && is_comp_attr(name) && starts_inline_body(p, q))
      ve = parse_inline_computation(p, q, depth, instr, name);
    if (!ve) {
      ve = scan_value_at(p, q, depth, g);
      if (is_metadata) *src = parse_metadata(p, span(q, ve));
    }
    if (ve == q)
      fail(p, q, "expected a value for attribute '" SC_SPAN_FMT "' of %s '" SC_SPAN_FMT "'", SC_SPAN_ARG(name),
           owner_kind, SC_SPAN_ARG(owner));
    sc_attr at = {name, span(q, ve), off(p, nstart), off(p, ve)};
    attr_push(p, at);
    p->s = ve;
    last_end = ve;
  }
}

static sc_attrs attrs_take(P *p, uint32_t from) {
  sc_attrs r = {NULL, 0};
  uint32_t n = p->at_n - from;
  if (n) {
    r.v = alloc_array(p, n, sizeof *r.v);
    memcpy(r.v, p->at_v + from, n * sizeof *r.v);
    r.n = n;
  }
  p->at_n = from;
  return r;
}

static sc_span strip_percent(sc_span s) {
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

static bool parse_shape(P *p, uint32_t depth, bool layout_adjacent, sc_span *out) {
  const char *s = p->s, *e = p->end;
  if (s < e && *s == '(') {
    const char *q = skip_group_at(p, s, depth, (gctx){"tuple shape", {0}});
    *out = span(s, q);
    p->s = q;
    return true;
  }
  const char *q = s;
  q = skip_cls(q, e, C_IDENT);
  if (q == s + 1 && *s == 'b' && q < e && *q == '(') {
    /* A buffer shape `b(f32[4,2]{0,1})`: the shape inside a buffer (XLA's verifier tests write them). */
    if (depth + 1 > p->max_depth) fail_limit(p, q, "nesting deeper than %u", p->max_depth);
    const char *inner = skip_ws_at(p, q + 1), *save = p->s;
    sc_span in;
    p->s = inner;
    if (parse_shape(p, depth + 1, false, &in)) {
      const char *close = skip_ws_at(p, p->s);
      if (close < e && *close == ')') {
        *out = span(s, close + 1);
        p->s = close + 1;
        return true;
      }
    }
    p->s = save;
    return false;
  }
  if (q == s || q >= e || *q != '[') return false;
  const char *d = skip_dim_list(p, q, depth, ']');
  q = d ? d : skip_group_at(p, q, depth, (gctx){"dimensions of shape", span(s, q)});
  const char *r = layout_adjacent ? q : skip_ws_at(p, q);
  if (r < e && *r == '{' && layout_follows(p, r)) {
    const char *l = skip_dim_list(p, r, depth, '}');
    q = l ? l : skip_group_at(p, r, depth, (gctx){"layout of shape", span(s, q)});
  }
  *out = span(s, q);
  p->s = q;
  return true;
}

/* ---------------------------------------------------------------------------------------------
 * Instructions */

typedef struct {
  sc_op *func;
  sc_block *block;
  opvec params;
  uint32_t *param_nums; /* parallel to params */
  uint32_t param_cap;
  bool have_root;
} comp;

static void scratch_push(P *p, sc_span name, sc_span type, sc_value *v) {
  if (p->sc_n == p->sc_cap) {
    uint32_t nc = p->sc_cap ? p->sc_cap * 2 : 64;
    p->sc_names = grow(p, p->sc_names, p->sc_n, nc, sizeof *p->sc_names);
    p->sc_types = grow(p, p->sc_types, p->sc_n, nc, sizeof *p->sc_types);
    p->sc_vals = grow(p, p->sc_vals, p->sc_n, nc, sizeof *p->sc_vals);
    p->sc_cap = nc;
  }
  p->sc_names[p->sc_n] = name;
  p->sc_types[p->sc_n] = type;
  p->sc_vals[p->sc_n] = v;
  p->sc_n++;
}

static void count_op(P *p, const char *at) {
  p->ninstr++;
  if (p->ninstr > p->max_ops) fail_limit(p, at, "too many instructions (limit %u)", p->max_ops);
  if (p->ninstr % CANCEL_POLL_INTERVAL == 0 && p->cancel && *p->cancel) fail_cancelled(p, at);
}

/* An instruction's op, its result value and its one-element arrays, in one allocation. */
typedef struct {
  sc_op op;
  sc_value value;
  sc_value *results[1];
  sc_span result_types[1];
  sc_op_extra extra;
} instr_block;

static sc_op *new_instr(P *p, comp *c, const char *start, sc_span opcode, sc_span name, sc_span shape) {
  instr_block *ib = alloc(p, sizeof *ib);
  sc_op *op = &ib->op;
  op->name = opcode;
  op->pos.offset = off(p, start);
  op->extra = &ib->extra; /* every instruction has a name (and most a metadata location) */
  op->extra->sym_name = name;
  op->parent_block = c->block;
  op->parent_op = c->func;
  op->func = c->func;
  op->depth = 2;
  sc_value *v = &ib->value;
  v->name = name;
  v->type = shape;
  v->def = op;
  v->index = 0;
  v->pos = op->pos;
  ib->results[0] = v;
  op->results = ib->results;
  op->nresults = 1;
  if (shape.n) {
    ib->result_types[0] = shape;
    op->result_types = ib->result_types;
    op->nresult_types = 1;
  }
  return op;
}

static sc_op *parse_rhs(P *p, comp *c, const char *start, sc_span name, sc_span preshape, uint32_t depth,
                        bool nested);

/* At '(' after `opcode`: the operand list. Operands go onto the scratch stack. */
static void parse_operands(P *p, comp *c, sc_span opcode, uint32_t depth, uint32_t *param_num) {
  const char *open = p->s, *e = p->end;
  gctx g = {"operand list of", opcode};
  if (depth + 1 > p->max_depth) fail_limit(p, open, "nesting deeper than %u", p->max_depth);
  if (SPAN_IS(opcode, "constant")) {
    p->s = skip_group_at(p, open, depth, g); /* a literal, not operands */
    return;
  }
  p->s++;
  bool first = true;
  for (;;) {
    skip_ws(p);
    const char *s = p->s;
    if (s >= e)
      fail(p, e, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(opcode),
           line_at(p, open));
    if (*s == ')') {
      if (!first) fail(p, s, "expected an operand after ',' in operand list of '" SC_SPAN_FMT "'", SC_SPAN_ARG(opcode));
      p->s++;
      return;
    }
    first = false;
    char c0 = *s;
    if (is_digit(c0) || c0 == '-' || c0 == '+' || c0 == '"' || c0 == '{' || c0 == '.') {
      /* A literal: parameter(0), or a literal operand of some other op. */
      const char *q = scan_value_at(p, s, depth + 1, (gctx){"literal in operand list of", opcode});
      if (param_num && is_digit(c0)) *param_num = parse_u32_span(span(s, q));
      p->s = q;
    } else {
      sc_span shape = {0};
      if (parse_shape(p, depth + 1, false, &shape)) skip_ws(p);
      const char *ns = p->s;
      sc_span bare;
      const char *ne = lex_name_at(p, ns, true, &bare);
      if (ne == ns) {
        if (ns >= e || *ns == '}' || *ns == ']')
          fail(p, ns, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(opcode),
               line_at(p, open));
        fail(p, ns, "expected an operand name in operand list of '" SC_SPAN_FMT "'", SC_SPAN_ARG(opcode));
      }
      const char *after = skip_ws_at(p, ne);
      if (after < e && *after == '(') {
        /* Nested instruction: [shape] opcode(operands). The only recursion on input nesting, so it
         * has a hard bound too, whatever max_depth says (worker threads have small stacks). */
        if (depth + 1 > MAX_NESTED_INSTR_DEPTH)
          fail_limit(p, ns, "nested operand instructions deeper than %u", MAX_NESTED_INSTR_DEPTH);
        p->s = ns;
        sc_op *nested = parse_rhs(p, c, shape.n ? shape.p : ns, (sc_span){ns, 0}, shape, depth + 1, true);
        scratch_push(p, span(ns, ns), shape, nested->results[0]); /* unnamed, already resolved */
      } else {
        /* Compact GTE suffix: %t#1#0. */
        const char *q = ne;
        while (q < e && *q == '#') {
          const char *d = q + 1;
          while (d < e && is_digit(*d)) d++;
          if (d == q + 1) fail(p, q, "expected a tuple index after '#'");
          q = d;
        }
        scratch_push(p, span(bare.p, q), shape, NULL);
        p->s = q;
      }
    }
    skip_ws(p);
    s = p->s;
    if (s < e && *s == ',') {
      p->s++;
      continue;
    }
    if (s < e && *s == ')') {
      p->s++;
      return;
    }
    if (s >= e)
      fail(p, e, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(opcode),
           line_at(p, open));
    if (*s == '}' || *s == ']')
      fail(p, s, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u, found '%c'",
           SC_SPAN_ARG(opcode), line_at(p, open), *s);
    fail(p, s, "expected ',' or ')' after an operand of '" SC_SPAN_FMT "' (operand list opened at line %u)",
         SC_SPAN_ARG(opcode), line_at(p, open));
  }
}

static void add_param(P *p, comp *c, sc_op *op, uint32_t num) {
  if (c->params.n == c->param_cap) {
    uint32_t nc = c->param_cap ? c->param_cap * 2 : 8;
    c->param_nums = grow(p, c->param_nums, c->param_cap, nc, sizeof *c->param_nums);
    c->param_cap = nc;
  }
  c->param_nums[c->params.n] = num;
  opvec_push(p, &c->params, op);
}

/* The right-hand side `[shape] opcode(operands) [, attrs]` at the cursor. For a nested operand
 * instruction no attributes follow. Appends the op to the computation and returns it. */
static sc_op *parse_rhs(P *p, comp *c, const char *start, sc_span name, sc_span preshape, uint32_t depth,
                        bool nested) {
  const char *e = p->end;
  count_op(p, start);
  if (depth > p->max_depth) fail_limit(p, p->s, "nesting deeper than %u", p->max_depth);
  sc_span shape = preshape;
  const char *s = p->s;
  if (shape.n) {
    /* Already parsed by the caller (nested operand instruction). */
  } else if (s < e && *s != '(') {
    /* The shape may be omitted (`x = add(a, b)`): an identifier followed by '(' is the opcode. A
     * shape's element type is followed by '[' instead, so trying the shape first decides the same. */
    if (parse_shape(p, depth, false, &shape)) {
      skip_ws(p);
    } else {
      sc_span ident;
      const char *ie = lex_name_at(p, s, false, &ident);
      const char *after = skip_ws_at(p, ie);
      if (ie == s || after >= e || *after != '(')
        fail(p, s, "expected a shape after '=' in instruction '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
    }
  } else if (!parse_shape(p, depth, false, &shape)) {
    fail(p, s, "expected a shape after '=' in instruction '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  } else {
    skip_ws(p);
  }
  s = p->s;
  if (!shape.n) shape = span(s, s); /* no shape: an empty span at the opcode, never NULL */
  sc_span opcode;
  const char *oe = lex_name_at(p, s, false, &opcode);
  if (oe == s) {
    if (nested) fail(p, s, "expected an opcode");
    fail(p, s, "expected an opcode after the shape of instruction '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  }
  p->s = skip_ws_at(p, oe);
  if (p->s >= e || *p->s != '(')
    fail(p, p->s, "expected '(' after opcode '" SC_SPAN_FMT "'", SC_SPAN_ARG(opcode));
  uint32_t sc_base = p->sc_n;
  uint32_t param_num = UINT32_MAX;
  bool is_param = SPAN_IS(opcode, "parameter");
  parse_operands(p, c, opcode, depth, is_param ? &param_num : NULL);
  const char *last = p->s;
  uint32_t at_base = p->at_n;
  sc_op *op = new_instr(p, c, start, opcode, name, shape);
  if (!nested) last = parse_attrs(p, depth, last, "instruction", name.n ? name : opcode, op, &op->extra->src);
  /* Operands. */
  uint32_t n = p->sc_n - sc_base;
  if (n) {
    /* One allocation for the three parallel arrays (spans first: they need the stronger alignment). */
    char *mem = alloc_array(p, n, 2 * sizeof(sc_span) + sizeof(sc_value *));
    op->operand_names = (sc_span *)mem;
    op->operand_types = (sc_span *)(mem + n * sizeof(sc_span));
    op->operands = (sc_value **)(mem + 2 * n * sizeof(sc_span));
    memcpy(op->operands, p->sc_vals + sc_base, n * sizeof *op->operands);
    memcpy(op->operand_names, p->sc_names + sc_base, n * sizeof *op->operand_names);
    memcpy(op->operand_types, p->sc_types + sc_base, n * sizeof *op->operand_types);
    op->noperands = n;
    op->noperand_types = n;
  }
  p->sc_n = sc_base;
  op->end = off(p, last);
  op->text = span(start, last);
  if (!nested) {
    /* ROOT (if any) was pushed by the caller before at_base-1; attrs_take gets both. */
    op->attrs = attrs_take(p, at_base);
    for (uint32_t i = 0; i < op->attrs.n; i++) {
      const sc_attr *at = &op->attrs.v[i];
      if (!sc_op_callee(op).n && (SPAN_IS(at->name, "to_apply") || SPAN_IS(at->name, "calls"))) {
        sc_span v = at->value;
        if (v.n && v.p[0] == '{') {
          const char *q = skip_ws_at(p, v.p + 1);
          sc_span nm;
          if (lex_name_at(p, q, true, &nm) != q) decl_of(p, op)->callee = nm;
        } else {
          decl_of(p, op)->callee = strip_percent(v);
        }
      }
    }
  }
  if (is_param) {
    if (param_num == UINT32_MAX) fail(p, start, "expected a parameter number in 'parameter(N)'");
    add_param(p, c, op, param_num);
  }
  opvec_push(p, &p->cur_ops, op);
  return op;
}

static void parse_instruction(P *p, comp *c, uint32_t depth) {
  const char *start = p->s, *e = p->end;
  const char *s = start;
  uint32_t at_base = p->at_n;
  if (at_word(p, s, "ROOT")) {
    const char *q = skip_ws_at(p, s + 4);
    if (q < e && *q != '=') {
      if (c->have_root) fail(p, s, "one computation should have only one ROOT");
      c->have_root = true;
      sc_attr root = {span(s, s + 4), span(s + 4, s + 4), off(p, s), off(p, s + 4)};
      attr_push(p, root);
      s = q;
    }
  }
  sc_span name;
  const char *ne = lex_name_at(p, s, true, &name);
  if (ne == s) fail(p, s, "expected an instruction name or '}'");
  const char *q = skip_ws_at(p, ne);
  if (q >= e || *q != '=')
    fail(p, q, "expected '=' after instruction name '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  p->s = skip_ws_at(p, q + 1);
  /* parse_rhs takes the attributes after the operands; the ROOT marker is prepended here. */
  sc_op *op = parse_rhs(p, c, start, name, (sc_span){0}, depth, false);
  if (p->at_n != at_base) {
    /* ROOT attr still on the scratch stack: prepend it. */
    sc_attrs rest = op->attrs;
    sc_attrs all;
    all.n = rest.n + (p->at_n - at_base);
    all.v = alloc_array(p, all.n, sizeof *all.v);
    memcpy(all.v, p->at_v + at_base, (p->at_n - at_base) * sizeof *all.v);
    if (rest.n) memcpy(all.v + (p->at_n - at_base), rest.v, rest.n * sizeof *all.v);
    op->attrs = all;
    p->at_n = at_base;
  }
}

/* ---------------------------------------------------------------------------------------------
 * Name resolution */

typedef struct hslot {
  sc_span key;
  void *val;
} hslot;

typedef struct {
  hslot *v;
  uint32_t mask;
  uint64_t seed; /* the request's hash key (util/hash.h): names cannot be crafted to collide */
} htab;

static uint32_t hash_span(const htab *t, sc_span s) { return (uint32_t)sc_hash_bytes(s.p, s.n, t->seed); }

/* Tables are built one at a time, so they share one buffer (cleared, grown when too small). */
static void htab_init(P *p, htab *t, uint32_t n) {
  uint32_t cap = 16;
  while (cap < 2 * (uint64_t)n + 1 && cap < (1u << 31)) cap <<= 1;
  if (cap > p->ht_cap) {
    p->ht_v = alloc_array(p, cap, sizeof *p->ht_v);
    p->ht_cap = cap;
  } else {
    memset(p->ht_v, 0, cap * sizeof *p->ht_v);
  }
  t->v = p->ht_v;
  t->mask = cap - 1;
  t->seed = sc_arena_hash_seed(p->a);
}

static bool span_same(sc_span a, sc_span b) { return a.n == b.n && memcmp(a.p, b.p, a.n) == 0; }

/* Inserts unless present (first definition wins). */
static void htab_put(htab *t, sc_span key, void *val) {
  for (uint32_t i = hash_span(t, key) & t->mask;; i = (i + 1) & t->mask) {
    if (!t->v[i].val) {
      t->v[i].key = key;
      t->v[i].val = val;
      return;
    }
    if (span_same(t->v[i].key, key)) return;
  }
}

static void *htab_get(const htab *t, sc_span key) {
  for (uint32_t i = hash_span(t, key) & t->mask;; i = (i + 1) & t->mask) {
    if (!t->v[i].val) return NULL;
    if (span_same(t->v[i].key, key)) return t->v[i].val;
  }
}

static void resolve_operands(P *p, comp *c) {
  htab t;
  htab_init(p, &t, c->block->nops);
  for (uint32_t i = 0; i < c->block->nops; i++) {
    sc_value *v = c->block->ops[i]->results[0];
    if (v->name.n) htab_put(&t, v->name, v);
  }
  for (uint32_t i = 0; i < c->block->nops; i++) {
    sc_op *op = c->block->ops[i];
    for (uint32_t k = 0; k < op->noperands; k++) {
      if (!op->operands[k]) {
        sc_span nm = op->operand_names[k];
        sc_span base = nm;
        for (uint32_t j = 0; j < nm.n; j++)
          if (nm.p[j] == '#') {
            base.n = j;
            break;
          }
        sc_value *v = htab_get(&t, base);
        if (!v)
          fail(p, base.p, "unknown operand '" SC_SPAN_FMT "' of '" SC_SPAN_FMT "' in computation '" SC_SPAN_FMT "'",
               SC_SPAN_ARG(base), SC_SPAN_ARG(op->name), SC_SPAN_ARG(sc_op_sym_name(c->func)));
        op->operands[k] = v;
      }
      if (!op->operand_types[k].n) op->operand_types[k] = op->operands[k]->type;
    }
  }
}

/* Attributes whose values name computations. */
static bool is_comp_attr(sc_span n) {
  if (n.n < 4 || n.n > 19) return false; /* "body" .. "called_computations" */
  return SPAN_IS(n, "to_apply") || SPAN_IS(n, "calls") || SPAN_IS(n, "body") || SPAN_IS(n, "condition") ||
         SPAN_IS(n, "true_computation") || SPAN_IS(n, "false_computation") || SPAN_IS(n, "branch_computations") ||
         SPAN_IS(n, "called_computations") || SPAN_IS(n, "select") || SPAN_IS(n, "scatter");
}

static void check_comp_ref(P *p, const htab *t, const sc_attr *at, const char *s, const char *e) {
  sc_span nm;
  const char *ne = lex_name_at(p, s, true, &nm);
  if (ne == s) fail(p, s, "expected a computation name in '" SC_SPAN_FMT "'", SC_SPAN_ARG(at->name));
  if (!htab_get(t, nm))
    fail(p, s, "unknown computation '" SC_SPAN_FMT "' in '" SC_SPAN_FMT "='", SC_SPAN_ARG(nm), SC_SPAN_ARG(at->name));
  (void)e;
}

static void resolve_computations(P *p, sc_op **ops, uint32_t nops) {
  htab t;
  htab_init(p, &t, p->funcs.n);
  for (uint32_t i = 0; i < p->funcs.n; i++) htab_put(&t, sc_op_sym_name(p->funcs.v[i]), p->funcs.v[i]);
  for (uint32_t i = 0; i < nops; i++) {
    sc_op *op = ops[i];
    for (uint32_t k = 0; k < op->attrs.n; k++) {
      const sc_attr *at = &op->attrs.v[k];
      if (!is_comp_attr(at->name)) continue;
      const char *s = at->value.p, *e = at->value.p + at->value.n;
      if (starts_inline_body(p, s)) continue; /* parsed in place as a computation of its own */
      if (s < e && *s == '{') {
        /* {a, b, ...} */
        s = skip_ws_at(p, s + 1);
        e--;
        while (s < e) {
          sc_span nm;
          const char *ne = lex_name_at(p, s, true, &nm);
          check_comp_ref(p, &t, at, s, e);
          s = skip_ws_at(p, ne);
          if (s < e && *s == ',') s = skip_ws_at(p, s + 1);
          else if (s < e) fail(p, s, "expected ',' or '}' in '" SC_SPAN_FMT "='", SC_SPAN_ARG(at->name));
        }
      } else {
        check_comp_ref(p, &t, at, s, e);
        sc_span nm;
        const char *ne = lex_name_at(p, s, true, &nm);
        if (ne != e) fail(p, ne, "unexpected text after computation name in '" SC_SPAN_FMT "='", SC_SPAN_ARG(at->name));
      }
    }
  }
}

/* ---------------------------------------------------------------------------------------------
 * Computations and the module */

static sc_block *new_single_block_region(P *p, sc_op *parent) {
  sc_region *r = alloc(p, sizeof *r);
  sc_block *b = alloc(p, sizeof *b);
  r->parent = parent;
  r->blocks = alloc(p, sizeof *r->blocks);
  r->blocks[0] = b;
  r->nblocks = 1;
  b->parent = r;
  parent->regions = alloc(p, sizeof *parent->regions);
  parent->regions[0] = r;
  parent->nregions = 1;
  return b;
}

static sc_op *new_computation(P *p, const char *start, sc_span name, comp *c) {
  sc_op *f = alloc(p, sizeof *f);
  f->name = sc_span_of("func.func", 9);
  f->pos.offset = off(p, start);
  f->extra = alloc(p, sizeof *f->extra);
  f->extra->sym_name = name;
  f->parent_block = p->mblock;
  f->parent_op = p->module;
  f->depth = 1;
  f->func = NULL;
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
  sc_op **by_num = alloc_array(p, n, sizeof *by_num);
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
  sc_op **ops = alloc_array(p, n, sizeof *ops);
  uint32_t *nums = alloc_array(p, n, sizeof *nums);
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
static void parse_body(P *p, comp *c, sc_span name, uint32_t depth) {
  const char *e = p->end, *open = p->s;
  if (depth + 1 > p->max_depth) fail_limit(p, open, "nesting deeper than %u", p->max_depth);
  p->s++;
  for (;;) {
    skip_ws(p);
    if (p->s >= e)
      fail(p, e, "expected '}' to close computation '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(name),
           line_at(p, open));
    if (*p->s == '}') break;
    parse_instruction(p, c, depth + 1);
  }
  if (p->cur_ops.n == 0) fail(p, p->s, "computation '" SC_SPAN_FMT "' has no instructions", SC_SPAN_ARG(name));
  p->s++;
  c->block->nops = p->cur_ops.n;
  c->block->ops = alloc_array(p, c->block->nops, sizeof *c->block->ops);
  memcpy(c->block->ops, p->cur_ops.v, c->block->nops * sizeof *c->block->ops);
  p->cur_ops.n = 0;
  p->total_ops += c->block->nops;
  resolve_operands(p, c);

  /* Block: ops and parameters, sorted by parameter number (stable: ties keep their order). */
  sort_params(p, c);
  if (c->params.n) {
    c->block->args = alloc_array(p, c->params.n, sizeof *c->block->args);
    for (uint32_t i = 0; i < c->params.n; i++) {
      sc_value *v = c->params.v[i]->results[0];
      v->block = c->block;
      v->attrs = &c->params.v[i]->attrs; /* the parameter op's own (it lives as long) */
      c->block->args[i] = v;
    }
    c->block->nargs = c->params.n;
  }
}

static sc_op *parse_computation(P *p, bool *is_entry) {
  const char *start = p->s, *e = p->end;
  const char *s = start;
  *is_entry = false;
  if (at_word(p, s, "ENTRY")) {
    *is_entry = true;
    s = skip_ws_at(p, s + 5);
  }
  sc_span name = {s, 0};
  const char *ne = lex_name_at(p, s, true, &name);
  if (ne == s && !*is_entry) fail(p, s, "expected a computation name");
  if (ne == s) name = span(s, s);
  p->s = skip_ws_at(p, ne);
  count_op(p, start);
  comp c;
  sc_op *f = new_computation(p, start, name, &c);

  /* Signature: (p: shape, ...) -> shape */
  if (p->s < e && *p->s == '(') {
    p->s = skip_group_at(p, p->s, 1, (gctx){"parameter list of computation", name});
    skip_ws(p);
    if (p->end - p->s < 2 || p->s[0] != '-' || p->s[1] != '>')
      fail(p, p->s, "expected '->' after the parameter list of computation '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
    p->s = skip_ws_at(p, p->s + 2);
    sc_span rt;
    if (!parse_shape(p, 1, true, &rt))
      fail(p, p->s, "expected a result shape after '->' in computation '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
    sc_op_decl *d = decl_of(p, f);
    d->func_result_types = alloc(p, sizeof *d->func_result_types);
    d->func_result_types[0] = rt;
    d->result_attrs = alloc(p, sizeof *d->result_attrs);
    d->nresult_attrs = 1;
    skip_ws(p);
  }
  if (p->s >= e || *p->s != '{')
    fail(p, p->s, "expected '{' to begin the body of computation '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  parse_body(p, &c, name, 1);
  const char *last = p->s;
  uint32_t at_base = p->at_n;
  last = parse_attrs(p, 1, last, "computation", name, NULL, NULL);
  f->attrs = attrs_take(p, at_base);
  f->end = off(p, last);
  f->text = span(start, last);
  return f;
}

/* At '{' of a computation-valued attribute: does an instruction list follow (`to_apply={ p0 = ...`)
 * rather than computation names (`calls={%a, %b}`)? */
static bool starts_inline_body(P *p, const char *s) {
  if (s >= p->end || *s != '{') return false;
  const char *q = skip_ws_at(p, s + 1);
  if (at_word(p, q, "ROOT")) return true;
  sc_span nm;
  const char *ne = lex_name_at(p, q, true, &nm);
  if (ne == q) return false;
  q = skip_ws_at(p, ne);
  return q < p->end && *q == '=';
}

/* An inline called computation `to_apply={ ... }` (XLA's parser accepts one wherever a computation is
 * named): parsed as a computation of its own, named "<instruction>.<attribute>", which becomes the
 * instruction's callee. The enclosing computation's ops are set aside meanwhile. Returns the end of
 * the value. */
static const char *parse_inline_computation(P *p, const char *open, uint32_t depth, sc_op *owner, sc_span attr) {
  if (depth + 1 > MAX_NESTED_INSTR_DEPTH)
    fail_limit(p, open, "inline computations nested deeper than %u", MAX_NESTED_INSTR_DEPTH);
  sc_span owner_name = strip_percent(sc_op_sym_name(owner));
  const char *nm = sc_arena_printf(p->a, SC_SPAN_FMT "." SC_SPAN_FMT, SC_SPAN_ARG(owner_name), SC_SPAN_ARG(attr));
  sc_span name = sc_span_of(nm, (uint32_t)strlen(nm));
  count_op(p, open);
  comp c;
  sc_op *f = new_computation(p, open, name, &c);
  opvec outer = p->cur_ops;
  const char *save = p->s;
  memset(&p->cur_ops, 0, sizeof p->cur_ops);
  p->s = open;
  parse_body(p, &c, name, depth + 1);
  const char *end = p->s;
  p->cur_ops = outer;
  p->s = save;
  f->end = off(p, end);
  f->text = span(open, end);
  opvec_push(p, &p->funcs, f);
  if (!sc_op_callee(owner).n) decl_of(p, owner)->callee = name;
  return end;
}

/* FileNames / FunctionNames / FileLocations / StackFrames sections after the header: skipped. */
static void skip_stack_frame_index(P *p) {
  static const char *const sections[] = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"};
  for (;;) {
    skip_ws(p);
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
        else if (q < p->end && *q == '{') q = skip_group_at(p, q, 1, (gctx){"stack frame entry", {0}});
        else fail(p, q, "expected a string or '{' in the %s section", sections[i]);
        p->s = q;
      }
    }
    if (!found) return;
  }
}

static void preorder(P *p, sc_op *op) {
  op->id = p->allops.n;
  p->allops.v[p->allops.n++] = op;
}

sc_module *sc_parse_hlo(const sc_parse_input *in, sc_parse_error *err) {
  sc_parse_error dummy;
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
  if (len > UINT32_MAX - 1) fail(p, p->buf, "input too large (%zu bytes; limit 4 GiB)", len);
  uint32_t begin = in->begin, end = in->end;
  if (begin > end || end > len) fail(p, p->buf, "invalid chunk [%u, %u) of a %zu-byte input", begin, end, len);
  if (in->lines && in->lines->nlines) {
    p->lines = in->lines;
  } else {
    p->own_lines = sc_linemap_build(p->a, p->buf, len);
    if (!p->own_lines.starts) fail_limit(p, p->buf, OOM);
    p->lines = &p->own_lines;
  }
  p->beg = p->buf + begin;
  p->end = p->buf + end;
  p->s = p->beg;
  if (p->cancel && *p->cancel) fail_cancelled(p, p->s);

  /* Header. */
  skip_ws(p);
  const char *mstart = p->s;
  if (!at_word(p, p->s, "HloModule")) {
    if (p->s >= p->end) fail(p, p->s, "empty input: expected 'HloModule'");
    fail(p, p->s, "expected 'HloModule' at the start of an HLO module");
  }
  sc_op *module = alloc(p, sizeof *module);
  module->name = sc_span_of("builtin.module", 14);
  module->pos.offset = off(p, mstart);
  p->s = skip_ws_at(p, p->s + 9);
  sc_span mname = span(p->s, p->s);
  {
    /* The name may be missing (dumps printed without ids): then what follows is a computation. */
    sc_span nm;
    const char *ne = lex_name_at(p, p->s, true, &nm);
    const char *r = skip_ws_at(p, ne);
    bool comp_next = at_word(p, p->s, "ENTRY") || (r < p->end && (*r == '{' || *r == '('));
    if (ne != p->s && !comp_next) {
      mname = nm;
      p->s = ne;
      if (p->s < p->end && *p->s == ':') p->s++; /* the legacy header `HloModule name:` */
    }
  }
  if (mname.n) {
    if (!module->extra) module->extra = alloc(p, sizeof *module->extra);
    module->extra->sym_name = mname;
  }
  const char *last = p->s;
  last = parse_attrs(p, 0, last, "module", mname, NULL, NULL);
  module->attrs = attrs_take(p, 0);
  sc_block *mblock = new_single_block_region(p, module);
  p->module = module;
  p->mblock = mblock;
  skip_stack_frame_index(p);

  /* Computations. */
  sc_op *entry = NULL;
  for (;;) {
    skip_ws(p);
    if (p->s >= p->end) break;
    bool is_entry;
    const char *cstart = p->s;
    sc_op *f = parse_computation(p, &is_entry);
    if (is_entry) {
      if (entry) fail(p, cstart, "expects only one ENTRY computation");
      entry = f;
    }
    opvec_push(p, &p->funcs, f);
    last = p->buf + f->end;
  }
  if (p->funcs.n == 0) fail(p, p->s, "expected a computation after the HloModule header");
  if (!entry) entry = p->funcs.v[p->funcs.n - 1];
  mblock->ops = p->funcs.v;
  mblock->nops = p->funcs.n;
  module->end = off(p, last);
  module->text = span(mstart, last);

  /* Preorder op list and ids. */
  p->allops.cap = 1 + p->funcs.n + p->total_ops;
  p->allops.v = alloc_array(p, p->allops.cap, sizeof *p->allops.v);
  preorder(p, module);
  for (uint32_t i = 0; i < p->funcs.n; i++) {
    sc_op *f = p->funcs.v[i];
    preorder(p, f);
    sc_block *b = f->regions[0]->blocks[0];
    for (uint32_t k = 0; k < b->nops; k++) preorder(p, b->ops[k]);
  }
  resolve_computations(p, p->allops.v, p->allops.n);
  if (p->cancel && *p->cancel) fail_cancelled(p, p->s);

  sc_module *m = alloc(p, sizeof *m);
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
  sc_module_finalize(m);
  return m;
}
