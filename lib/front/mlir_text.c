/* mlir_text.c — StableHLO/MLIR text front end (pretty and generic form).
 *
 * The parser knows MLIR's token and bracket structure, not each dialect's custom syntax. Ops are
 * delimited structurally: a new op begins only at the first token of a line, at bracket depth 0 of
 * the current block, with a result list followed by '=', a dotted op name, an elided builtin
 * (return/call/module/func), a quoted op name followed by '(' (generic form) or a block label; '}'
 * closes the region. A '{' opens a region when the next token begins an op or block; otherwise it is
 * an attribute dict or a set literal. Everything else between an op's first and last token is
 * classified on the way: results, operands, block-argument definitions, attribute dicts, custom
 * `name=value` pairs, the trailing `: type` list and `loc(...)`.
 *
 * Strings, comments and dense hex blobs are skipped with memchr-class scans and never copied. Nesting
 * is bounded by max_depth, op count by max_ops; the first error stops the parse with a precise
 * offset. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "front/front.h"
#include "ir/ir.h"
#include "util/hash.h"

typedef enum {
  T_EOF = 0,
  T_PERCENT, /* %id, %id#N */
  T_AT,      /* @id, @"quoted" */
  T_HASH,    /* #id */
  T_BANG,    /* !id */
  T_CARET,   /* ^id */
  T_STRING,
  T_WORD,    /* bare identifier, keyword or number */
  T_ARROW,   /* -> */
  T_PUNCT,   /* one character: ( ) [ ] { } < > , : = ? * + - | etc. */
  T_OP2,     /* two-character operator that is not a bracket: <= >= */
  T_RESOURCES, /* {-# ... #-} file-level metadata */
  T_BAD,     /* lexical error; message in the parser */
} tok_kind;

#define LOOKAHEAD 128u /* begins_op() looks at most ~2 tokens per result name, 64 names */

typedef struct {
  uint8_t kind;
  bool bol; /* first token on its line */
  char ch;  /* its first byte (0 at EOF): punctuation tests read no buffer */
  uint32_t off, len;
} tok;

typedef SC_VEC(sc_attr) attr_vec;
typedef SC_VEC(sc_value *) value_vec;
typedef SC_VEC(sc_span) span_vec;
typedef SC_VEC(sc_region *) region_vec;
typedef SC_VEC(sc_op *) op_vec;

/* The head of a one-result op on one line: `%name = op-name` (offsets of both). */
typedef struct {
  uint32_t res, res_end, name, name_end;
} raw_head;

typedef struct {
  const sc_parse_input *in;
  sc_arena *a;
  const char *buf;
  uint32_t begin, end;
  tok la[LOOKAHEAD]; /* ring buffer */
  uint32_t la_head, nla;
  uint32_t lex_off;  /* where lexing continues after the lookahead buffer */
  uint32_t last_end; /* one past the last token next() consumed */
  sc_parse_error *err;
  const char *bad_msg;
  uint32_t bad_off;
  sc_module *m;
  uint32_t nops; /* ops made so far, the implicit root included (m->ops is built once they are all made) */
  SC_VEC(sc_op *) funcs;
  SC_VEC(sc_alias) aliases;
  uint32_t depth; /* region nesting */
  /* Scoped value table: open addressing, with an undo log for region exits. */
  struct slot {
    sc_span name;
    sc_value *v;
  } *slots;
  uint32_t nslots, nused;
  uint64_t seed; /* the request's hash key (util/hash.h): value names come from the input */
  SC_VEC(struct undo { uint32_t slot; sc_value *prev; }) undo;
  /* Scratch stacks for the lists of the op (or block) being parsed: each pushes above what the ops
   * around it pushed, then copies its entries to an exact-size arena array and pops them (take()),
   * so no per-op list grows by doubling or is copied more than once. */
  attr_vec s_attrs;
  value_vec s_values;
  span_vec s_spans;
  op_vec s_ops;
  /* The last `word<...>` unit (a type, #attr<..>, !type<..>) scanned as bytes: modules repeat a few
   * types and shardings thousands of times, and bytes equal to it scan the same way, so a memcmp
   * replaces the scan. One for types in lists (raw_type_at), one for values (skip_unit), so that a
   * sharding between two types does not evict the type. */
  sc_span last_type, last_unit;
  /* The last `<...>` group and `loc(...)` an op's fast pieces scanned (shardings and locations
   * repeat on consecutive ops), as last_unit. */
  sc_span last_group, last_loc;
  /* The op head fast_line() found after the line it ended (valid while lex_off == head_after). */
  raw_head head;
  uint32_t head_after; /* lex_off + 1 when `head` is valid, else 0 */
} P;

/* Copies vec.v[base, n) to an exact-size arena array (NULL when empty) and pops those entries. */
#define TAKE(p, vec, base, out, out_n)                                                \
  do {                                                                                \
    uint32_t n_ = (uint32_t)((vec).n - (base));                                       \
    (out) = NULL;                                                                     \
    if (n_) {                                                                         \
      (out) = sc_arena_alloc((p)->a, n_ * sizeof *(vec).v);                           \
      memcpy((out), (vec).v + (base), n_ * sizeof *(vec).v);                          \
    }                                                                                 \
    (out_n) = n_;                                                                     \
    (vec).n = (base);                                                                 \
  } while (0)

/* ---- errors ---- */

static bool failed(const P *p) { return p->err->failed; }

static void fail_at(P *p, uint32_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_at(P *p, uint32_t off, const char *fmt, ...) {
  if (p->err->failed) return;
  va_list ap;
  va_start(ap, fmt);
  p->err->failed = true;
  p->err->offset = off;
  p->err->message = sc_arena_vprintf(p->a, fmt, ap);
  va_end(ap);
}

static sc_pos pos_of(const P *p, uint32_t off) { return sc_linemap_pos(p->in->lines, off); }

/* ---- lexer ---- */

/* Character classes without locale calls, one table lookup per byte: the lexer's hot loop.
 * WORD = [A-Za-z0-9_$.], ID adds '-'; SPACE is white space other than '\n'; STEP is punctuation a
 * balanced-group scan steps over without looking at its neighbours. */
enum { C_SPACE = 1, C_NL = 2, C_WORD = 4, C_DIGIT = 8, C_STEP = 16, C_STR_STOP = 32 };
#define C_WS (C_SPACE | C_NL)
#define C_PLAIN (C_WS | C_WORD | C_STEP) /* what a balanced-group scan steps over byte by byte */
static const uint8_t k_cls[256] = {
    ['"'] = C_STR_STOP, ['\\'] = C_STR_STOP,
    [','] = C_STEP, [':'] = C_STEP, ['?'] = C_STEP, ['*'] = C_STEP, ['+'] = C_STEP, ['|'] = C_STEP,
    ['&'] = C_STEP, ['~'] = C_STEP, [';'] = C_STEP, ['='] = C_STEP, ['!'] = C_STEP,
    [' '] = C_SPACE, ['\t'] = C_SPACE, ['\r'] = C_SPACE, ['\f'] = C_SPACE, ['\v'] = C_SPACE, ['\n'] = C_NL,
    ['_'] = C_WORD,  ['$'] = C_WORD,   ['.'] = C_WORD,
    ['0'] = C_WORD | C_DIGIT, ['1'] = C_WORD | C_DIGIT, ['2'] = C_WORD | C_DIGIT, ['3'] = C_WORD | C_DIGIT,
    ['4'] = C_WORD | C_DIGIT, ['5'] = C_WORD | C_DIGIT, ['6'] = C_WORD | C_DIGIT, ['7'] = C_WORD | C_DIGIT,
    ['8'] = C_WORD | C_DIGIT, ['9'] = C_WORD | C_DIGIT,
    ['a'] = C_WORD, ['b'] = C_WORD, ['c'] = C_WORD, ['d'] = C_WORD, ['e'] = C_WORD, ['f'] = C_WORD, ['g'] = C_WORD,
    ['h'] = C_WORD, ['i'] = C_WORD, ['j'] = C_WORD, ['k'] = C_WORD, ['l'] = C_WORD, ['m'] = C_WORD, ['n'] = C_WORD,
    ['o'] = C_WORD, ['p'] = C_WORD, ['q'] = C_WORD, ['r'] = C_WORD, ['s'] = C_WORD, ['t'] = C_WORD, ['u'] = C_WORD,
    ['v'] = C_WORD, ['w'] = C_WORD, ['x'] = C_WORD, ['y'] = C_WORD, ['z'] = C_WORD,
    ['A'] = C_WORD, ['B'] = C_WORD, ['C'] = C_WORD, ['D'] = C_WORD, ['E'] = C_WORD, ['F'] = C_WORD, ['G'] = C_WORD,
    ['H'] = C_WORD, ['I'] = C_WORD, ['J'] = C_WORD, ['K'] = C_WORD, ['L'] = C_WORD, ['M'] = C_WORD, ['N'] = C_WORD,
    ['O'] = C_WORD, ['P'] = C_WORD, ['Q'] = C_WORD, ['R'] = C_WORD, ['S'] = C_WORD, ['T'] = C_WORD, ['U'] = C_WORD,
    ['V'] = C_WORD, ['W'] = C_WORD, ['X'] = C_WORD, ['Y'] = C_WORD, ['Z'] = C_WORD,
};
static inline bool is_word_char(unsigned char c) { return k_cls[c] & C_WORD; }

/* Past the word characters from b[i]: four bytes a step while all four are (names are long). */
static inline uint32_t skip_word_chars(const char *b, uint32_t i, uint32_t end) {
  while (i + 4 <= end && (k_cls[(unsigned char)b[i]] & k_cls[(unsigned char)b[i + 1]] & k_cls[(unsigned char)b[i + 2]] &
                          k_cls[(unsigned char)b[i + 3]] & C_WORD))
    i += 4;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_WORD)) i++;
  return i;
}

/* From just after an opening '"': memchr to the closing quote, skipping backslash escapes; linear
 * even for long escape-heavy blobs. Sets *after one past the closing quote; false if unterminated. */
static bool scan_string(const char *b, uint32_t i, uint32_t end, uint32_t *after) {
  /* Most literals are short names ("data", "model.py"): a byte loop ends them before memchr would
   * have started; a long one continues with memchr below. */
  for (uint32_t stop = end - i > 32 ? i + 32 : end; i < stop; i++) {
    if (!(k_cls[(unsigned char)b[i]] & C_STR_STOP)) continue;
    if (b[i] == '\\') break;
    *after = i + 1;
    return true;
  }
  const char *dq = NULL;
  while (i <= end) {
    if (!dq || dq < b + i) dq = memchr(b + i, '"', end - i);
    if (!dq) return false;
    const char *bs = memchr(b + i, '\\', (size_t)(dq - (b + i)));
    if (bs) {
      i = (uint32_t)(bs - b) + 2;
      continue;
    }
    *after = (uint32_t)(dq - b) + 1;
    return true;
  }
  return false;
}

/* Sets *t to a one-character token of `kind` at `off`. */
static inline void tok_one(tok *t, uint8_t kind, uint32_t len) {
  t->kind = kind;
  t->len = len;
}

/* A lexical error at `off`: the token runs to `end` (or is one byte) and carries the message. */
static void tok_bad(P *p, tok *t, uint32_t off, uint32_t len, const char *msg) {
  t->kind = T_BAD;
  t->len = len;
  p->bad_msg = msg;
  p->bad_off = off;
}

/* sigil-id ::= ('%'|'^'|'#'|'!'|'@') [A-Za-z0-9_$.-]*  ('%' id '#' digits)?   '@' string */
static void lex_sigil(P *p, tok *t, uint32_t i) {
  const char *b = p->buf;
  uint32_t off = t->off, end = p->end;
  unsigned char c = (unsigned char)b[off];
  if (c == '@' && i < end && b[i] == '"') {
    uint32_t after;
    if (!scan_string(b, i + 1, end, &after)) {
      tok_bad(p, t, off, end - off, "unterminated symbol name");
      return;
    }
    {
      tok_one(t, T_AT, after - off);
      return;
    }
  }
  for (;;) {
    while (i < end && (k_cls[(unsigned char)b[i]] & C_WORD)) i++;
    /* '-' belongs to an identifier only when followed by more of it (not "->"). */
    if (i + 1 < end && b[i] == '-' && b[i + 1] != '>' && is_word_char((unsigned char)b[i + 1])) {
      i++;
      continue;
    }
    break;
  }
  if (c == '%' && i < end && b[i] == '#') { /* %0#1 */
    i++;
    while (i < end && (k_cls[(unsigned char)b[i]] & C_DIGIT)) i++;
  }
  if (c == '#' && i + 1 < end && b[i] == '-' && b[i + 1] == '}') {
      tok_one(t, T_PUNCT, 1);
      return;
    } /* stray "#-}" */
  uint8_t kind = c == '%' ? T_PERCENT : c == '^' ? T_CARET : c == '#' ? T_HASH : c == '!' ? T_BANG : T_AT;
  tok_one(t, kind, i - off);
  if (t->len == 1 && c != '!' && c != '#') /* a sigil alone is not a token MLIR accepts */
    tok_bad(p, t, off, 1, "expected an identifier after the sigil");
}

/* resources ::= '{-#' ... '#-}' */
static void lex_resources(P *p, tok *t, uint32_t i) {
  const char *b = p->buf;
  uint32_t off = t->off, end = p->end;
  for (const char *q = b + i; q + 3 <= b + end; q++) {
    q = memchr(q, '#', (size_t)(b + end - q));
    if (!q) break;
    if (q + 3 <= b + end && q[1] == '-' && q[2] == '}') {
      tok_one(t, T_RESOURCES, (uint32_t)(q + 3 - (b + off)));
      return;
    }
  }
  tok_bad(p, t, off, end - off, "unterminated '{-#' block (expected '#-}')");
}

/* word ::= [A-Za-z0-9_$.]+ with an exponent sign inside a number (1.0e-05) */
static uint32_t word_end(const char *b, uint32_t off, uint32_t i, uint32_t end) {
  for (;;) {
    i = skip_word_chars(b, i, end);
    if (i + 1 >= end) return i;
    unsigned char d = (unsigned char)b[i];
    if ((d == '-' || d == '+') && (k_cls[(unsigned char)b[off]] & C_DIGIT) && (b[i - 1] == 'e' || b[i - 1] == 'E') &&
        (k_cls[(unsigned char)b[i + 1]] & C_DIGIT)) {
      i++;
      continue;
    }
    return i;
  }
}

/* The token at `off` (after white space and `//` comments) into *t. One table lookup per byte of
 * white space and words; each token is lexed once (peek() keeps it until next() takes it). */
static void lex_at(P *p, uint32_t off, tok *t) {
  const char *b = p->buf;
  uint32_t end = p->end;
  bool bol = off == p->begin;
  for (;;) {
    uint8_t k;
    while (off < end && ((k = k_cls[(unsigned char)b[off]]) & C_WS)) {
      bol |= k == C_NL;
      off++;
    }
    if (off + 1 < end && b[off] == '/' && b[off + 1] == '/') {
      const char *nl = memchr(b + off, '\n', end - off);
      off = nl ? (uint32_t)(nl - b) : end;
      continue;
    }
    break;
  }
  t->bol = bol;
  t->off = off;
  t->ch = 0;
  if (off >= end) {
      tok_one(t, T_EOF, 0);
      return;
    }
  unsigned char c = (unsigned char)b[off];
  t->ch = (char)c;
  uint32_t i = off + 1;
  if (k_cls[c] & C_WORD) {
      tok_one(t, T_WORD, word_end(b, off, i, end) - off);
      return;
    }
  switch (c) {
  case '"':
    if (scan_string(b, i, end, &i)) {
      tok_one(t, T_STRING, i - off);
      return;
    }
    {
      tok_bad(p, t, off, end - off, "unterminated string literal");
      return;
    }
  case '%': case '^': case '#': case '!': case '@':
    {
      lex_sigil(p, t, i);
      return;
    }
  case '-':
    {
      tok_one(t, i < end && b[i] == '>' ? T_ARROW : T_PUNCT, i < end && b[i] == '>' ? 2 : 1);
      return;
    }
  case '<': case '>':
    {
      tok_one(t, i < end && b[i] == '=' ? T_OP2 : T_PUNCT, i < end && b[i] == '=' ? 2 : 1);
      return;
    }
  case '{':
    if (i + 1 < end && b[i] == '-' && b[i + 1] == '#') {
      lex_resources(p, t, i);
      return;
    }
    {
      tok_one(t, T_PUNCT, 1);
      return;
    }
  case '(': case ')': case '[': case ']': case '}': case ',': case ':': case '=': case '?': case '*': case '+':
  case '|': case '/': case '&': case '~': case ';':
    {
      tok_one(t, T_PUNCT, 1);
      return;
    }
  default:
    {
      tok_bad(p, t, off, 1, c >= 0x80 ? "non-ASCII byte outside a string literal" : "unexpected character");
      return;
    }
  }
}

/* Lexes until the lookahead buffer holds k + 1 tokens. Out of line: most peeks hit the buffer. */
static void fill(P *p, uint32_t k) {
  if (k >= LOOKAHEAD) k = LOOKAHEAD - 1;
  while (p->nla <= k) {
    tok *t = &p->la[(p->la_head + p->nla++) & (LOOKAHEAD - 1)];
    lex_at(p, p->lex_off, t);
    p->lex_off = t->off + t->len; /* EOF has length 0: lexing it again yields EOF */
  }
}

static inline tok peek(P *p, uint32_t k) {
  if (k >= p->nla) fill(p, k);
  if (k >= LOOKAHEAD) k = LOOKAHEAD - 1;
  return p->la[(p->la_head + k) & (LOOKAHEAD - 1)];
}

static inline tok next(P *p) {
  if (!p->nla) fill(p, 0);
  tok t = p->la[p->la_head];
  if (t.kind != T_EOF) p->last_end = t.off + t.len;
  p->la_head = (p->la_head + 1) & (LOOKAHEAD - 1);
  p->nla--;
  return t;
}

static inline bool is_punct(tok t, const P *p, char c) {
  (void)p;
  return t.kind == T_PUNCT && t.ch == c;
}
static bool tok_is_word(tok t, const P *p, const char *w) {
  size_t n = strlen(w);
  return t.kind == T_WORD && t.len == n && memcmp(p->buf + t.off, w, n) == 0;
}
static sc_span tspan(const P *p, tok t) { return sc_span_of(p->buf + t.off, t.len); }

static void check_bad(P *p, tok t) {
  if (t.kind == T_BAD) {
    unsigned char c = (unsigned char)p->buf[p->bad_off];
    if (strcmp(p->bad_msg, "unexpected character") == 0 || strcmp(p->bad_msg, "non-ASCII byte outside a string literal") == 0)
      fail_at(p, p->bad_off, "%s 0x%02x%s%c%s", p->bad_msg, c, isprint(c) ? " ('" : "", isprint(c) ? c : ' ',
              isprint(c) ? "')" : "");
    else fail_at(p, p->bad_off, "%s", p->bad_msg);
  }
}

/* ---- value scopes ---- */

static uint32_t hash_span(const P *p, sc_span s) { return (uint32_t)sc_hash_bytes(s.p, s.n, p->seed); }

static void table_grow(P *p) {
  uint32_t old_n = p->nslots;
  struct slot *old = p->slots;
  uint32_t n = old_n ? old_n * 2 : 256;
  p->slots = sc_arena_calloc(p->a, n, sizeof *p->slots);
  p->nslots = n;
  p->nused = 0;
  /* Rehashing moves slots, so the undo log (by slot index) is rebuilt in terms of new slots. */
  uint32_t *remap = sc_arena_calloc(p->a, old_n ? old_n : 1, sizeof *remap);
  for (uint32_t i = 0; i < old_n; i++) {
    if (!old[i].name.p) continue;
    uint32_t h = hash_span(p, old[i].name) & (n - 1);
    while (p->slots[h].name.p) h = (h + 1) & (n - 1);
    p->slots[h] = old[i];
    remap[i] = h;
    p->nused++;
  }
  for (size_t i = 0; i < p->undo.n; i++) p->undo.v[i].slot = remap[p->undo.v[i].slot];
}

/* Probe runs longer than this are charged to the request's work meter, so a table that names turned
 * into a list shows as work (and a step limit or cancel stops it) rather than as silent time. */
#define LONG_PROBE 8u

/* The slot holding `name`, or the empty slot where it would go. */
static uint32_t find_slot(P *p, sc_span name) {
  uint32_t mask = p->nslots - 1, h = hash_span(p, name) & mask, probes = 0;
  while (p->slots[h].name.p &&
         !(p->slots[h].name.n == name.n && memcmp(p->slots[h].name.p, name.p, name.n) == 0)) {
    h = (h + 1) & mask;
    probes++;
  }
  if (probes > LONG_PROBE) sc_arena_step(p->a, probes);
  return h;
}

static void define_value(P *p, sc_value *v) {
  if (!v->name.n) return;
  if ((p->nused + 1) * 2 > p->nslots) table_grow(p);
  uint32_t h = find_slot(p, v->name);
  struct undo u = {h, p->slots[h].v};
  SC_PUSH(p->a, p->undo, u);
  if (!p->slots[h].name.p) p->nused++;
  p->slots[h].name = v->name;
  p->slots[h].v = v;
}

static sc_value *lookup_value(P *p, sc_span name) {
  if (!p->nslots) return NULL;
  sc_span base = name;
  long idx = -1;
  const char *hash_mark = name.n ? memchr(name.p, '#', name.n) : NULL; /* "%0#1": result 1 of group %0 */
  if (hash_mark) {
    base.n = (uint32_t)(hash_mark - name.p);
    idx = 0;
    for (const char *q = hash_mark + 1; q < name.p + name.n && idx <= UINT32_MAX; q++) idx = idx * 10 + (*q - '0');
  }
  struct slot *s = &p->slots[find_slot(p, base)];
  if (!s->name.p) return NULL;
  sc_value *v = s->v;
  if (v && idx >= 0) {
    if (v->def && idx < (long)v->def->nresults && v->def->results[idx]->name.p == v->name.p)
      return v->def->results[idx];
    return idx == 0 ? v : NULL;
  }
  return v;
}

static void scope_pop(P *p, size_t mark) {
  while (p->undo.n > mark) {
    struct undo u = p->undo.v[--p->undo.n];
    p->slots[u.slot].v = u.prev;
  }
}

/* ---- structure ---- */


/* Does `t` (with what follows) begin an op or block? `at_line_start` relaxes nothing; it is used for
 * the dotted-name-before-'}' case (a terminator without operands). */
static bool begins_op(P *p, uint32_t k) {
  tok t = peek(p, k);
  switch (t.kind) {
  case T_CARET:
    return true;
  case T_PERCENT: {
    /* %a(:N)? (, %b(:N)?)* = */
    uint32_t j = k;
    for (int guard = 0; guard < 64; guard++) {
      tok u = peek(p, j);
      if (u.kind != T_PERCENT) return false;
      j++;
      if (is_punct(peek(p, j), p, ':') && peek(p, j + 1).kind == T_WORD && (k_cls[(unsigned char)peek(p, j + 1).ch] & C_DIGIT))
        j += 2;
      tok v = peek(p, j);
      if (is_punct(v, p, '=')) return true;
      if (!is_punct(v, p, ',')) return false;
      j++;
    }
    return false;
  }
  case T_STRING:
    return is_punct(peek(p, k + 1), p, '(');
  case T_WORD: {
    if ((k_cls[(unsigned char)t.ch] & C_DIGIT) || t.ch == '$' || t.ch == '.') return false; /* [A-Za-z_] */
    tok u = peek(p, k + 1);
    if (is_punct(u, p, '=')) return false;
    bool dotted = memchr(p->buf + t.off, '.', t.len) != NULL;
    if (dotted) {
      if (is_punct(u, p, ',')) return false;
      if (is_punct(u, p, '}')) return t.bol;
      return true;
    }
    return tok_is_word(t, p, "return") || tok_is_word(t, p, "call") || tok_is_word(t, p, "module") ||
           tok_is_word(t, p, "func") || tok_is_word(t, p, "call_indirect");
  }
  default:
    return false;
  }
}

static bool begins_toplevel_item(P *p, uint32_t k) {
  tok t = peek(p, k);
  if ((t.kind == T_HASH || t.kind == T_BANG) && is_punct(peek(p, k + 1), p, '=')) return true;
  return t.kind == T_RESOURCES;
}

/* Bracket stack shared by the balanced-group skippers. */
typedef struct {
  char open;
  uint32_t off;
} bracket;

static inline int is_plain(char c) { return (k_cls[(unsigned char)c] & C_PLAIN) != 0; }

static char closer_of(char c) { return c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>'; }

/* The fast path of skip_group: scans the bytes of a group that opens at `open` directly, without
 * making tokens, when every byte is one the token path would merely step over (identifiers, numbers,
 * white space, simple punctuation, string literals, balanced brackets). Anything else (comments,
 * `{-#`, lone sigils, bad characters, mismatched brackets, deep nesting, a string that does not close)
 * returns false, and the token path runs from the start with its precise errors. On success *end is
 * one past the closer, exactly where the token path would stop. */
static bool raw_skip_group(const P *p, uint32_t open, uint32_t *end) {
  const char *b = p->buf;
  uint32_t lim = p->end, i = open + 1;
  char want[32];
  uint32_t n = 0, max = p->in->max_depth < 32 ? p->in->max_depth : 32;
  want[n++] = closer_of(b[open]);
  while (i < lim) {
    unsigned char c = (unsigned char)b[i];
    if (k_cls[c] & C_PLAIN) { /* word characters, white space, plain punctuation */
      i++;
      while (i + 4 <= lim && (is_plain(b[i]) & is_plain(b[i + 1]) & is_plain(b[i + 2]) & is_plain(b[i + 3])))
        i += 4; /* four bytes a step: most of a group is names, numbers and spaces */
      while (i < lim && (k_cls[(unsigned char)b[i]] & C_PLAIN)) i++;
      continue;
    }
    switch (c) {
    case '#':
      if (i + 1 < lim && b[i + 1] == '-') return false; /* "#-}" */
      i++;
      continue;
    case '%': case '^': case '@':
      if (i + 1 < lim && (is_word_char((unsigned char)b[i + 1]) || b[i + 1] == '-')) {
        i++;
        continue;
      }
      if (c != '@' || i + 1 >= lim || b[i + 1] != '"') return false;
      if (!scan_string(b, i + 2, lim, &i)) return false; /* @"quoted" */
      continue;
    case '"':
      if (!scan_string(b, i + 1, lim, &i)) return false;
      continue;
    case '-':
      i += (i + 1 < lim && b[i + 1] == '>') ? 2 : 1;
      continue;
    case '<': case '>':
      if (i + 1 < lim && b[i + 1] == '=') { /* "<=", ">=" are operators, not brackets */
        i += 2;
        continue;
      }
      if (c == '<') goto open_bracket;
      goto close_bracket;
    case '(': case '[': case '{':
    open_bracket:
      if (c == '{' && i + 1 < lim && b[i + 1] == '-') return false; /* "{-#" resources */
      if (n >= max) return false;
      want[n++] = closer_of((char)c);
      i++;
      continue;
    case ')': case ']': case '}':
    close_bracket:
      if (want[n - 1] != (char)c) return false;
      i++;
      if (--n == 0) {
        *end = i;
        return true;
      }
      continue;
    default:
      return false; /* '/', '\\', non-ASCII, control characters: the token path decides */
    }
  }
  return false;
}

/* Do the bytes at b[i] repeat `unit` (a token with its bracket group, or a group, scanned before)?
 * Equal bytes scan the same way, except that a closing '>' followed here by '=' is the `>=` operator
 * and the group would go on. */
static inline bool repeats(const P *p, uint32_t i, sc_span unit) {
  uint32_t n = unit.n;
  if (!n || p->end - i < n || memcmp(p->buf + i, unit.p, n) != 0) return false;
  return unit.p[n - 1] != '>' || i + n >= p->end || p->buf[i + n] != '=';
}

/* Skips one balanced group starting at the opener token (consumed here). Returns the offset one past
 * its closer. */
static uint32_t skip_group(P *p) {
  uint32_t fast_end;
  if (raw_skip_group(p, peek(p, 0).off, &fast_end)) {
    /* Drop the opener and whatever was looked at after it (tokens inside the group, or at most a
     * few after it, lexed again): lexing continues after the closer. */
    p->nla = 0;
    p->lex_off = fast_end;
    p->last_end = fast_end;
    return fast_end;
  }
  tok open = next(p);
  bracket stack[64];
  bracket *st = stack;
  uint32_t cap = 64, n = 0;
  st[n++] = (bracket){p->buf[open.off], open.off};
  uint32_t limit = p->in->max_depth;
  while (n && !failed(p)) {
    tok t = next(p);
    if (t.kind == T_EOF) {
      sc_pos ps = pos_of(p, st[n - 1].off);
      fail_at(p, t.off, "unexpected end of input: '%c' opened at line %u, column %u is not closed", st[n - 1].open,
              ps.line, ps.col);
      break;
    }
    check_bad(p, t);
    if (t.kind != T_PUNCT) continue;
    char c = p->buf[t.off];
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (n >= limit) {
        fail_at(p, t.off, "nesting deeper than %u levels", limit);
        p->err->limit = true;
        break;
      }
      if (n == cap) {
        bracket *grown = sc_arena_calloc(p->a, cap * 2, sizeof *grown);
        memcpy(grown, st, cap * sizeof *st);
        st = grown, cap *= 2;
      }
      st[n++] = (bracket){c, t.off};
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (c != closer_of(st[n - 1].open)) {
        sc_pos ps = pos_of(p, st[n - 1].off);
        fail_at(p, t.off, "expected '%c' to close '%c' opened at line %u, column %u, found '%c'",
                closer_of(st[n - 1].open), st[n - 1].open, ps.line, ps.col, c);
        break;
      }
      n--;
      if (!n) return t.off + 1;
    }
  }
  return open.off + 1;
}

/* A value unit: a token plus a following balanced '<...>' (for #attr<..>, !type<..>, tensor<..>,
 * dense<..>), or a balanced group. Returns the end offset. Consumes. */
static uint32_t skip_unit(P *p) {
  tok t = peek(p, 0);
  if (t.kind == T_PUNCT) {
    char c = p->buf[t.off];
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      uint32_t e = skip_group(p);
      /* A function type (..) -> (..) is one unit. */
      if (c == '(' && peek(p, 0).kind == T_ARROW) {
        next(p);
        return skip_unit(p);
      }
      return e;
    }
  }
  if (t.kind == T_EOF) return t.off;
  next(p);
  check_bad(p, t);
  uint32_t e = t.off + t.len;
  uint32_t fast_end;
  if ((t.kind == T_WORD || t.kind == T_HASH || t.kind == T_BANG) && p->nla == 0 && e + 1 < p->end &&
      p->buf[e] == '<' && p->buf[e + 1] != '=') {
    /* tensor<...>, #attr<...>, !type<...>: scanned as bytes, without making a token of the '<' */
    uint32_t n = p->last_unit.n;
    if (n > t.len && repeats(p, t.off, p->last_unit)) fast_end = t.off + n;
    else if (raw_skip_group(p, e, &fast_end)) p->last_unit = sc_span_of(p->buf + t.off, fast_end - t.off);
    else fast_end = 0;
    if (fast_end) {
      p->lex_off = p->last_end = fast_end;
      return fast_end;
    }
  }
  tok u = peek(p, 0);
  if ((t.kind == T_WORD || t.kind == T_HASH || t.kind == T_BANG) && is_punct(u, p, '<') && u.off == e)
    e = skip_group(p);
  return e;
}

/* Attribute value inside a dict: tokens up to ',' or '}' at this level. `: type` suffixes included. */
static uint32_t skip_attr_value(P *p, uint32_t start) {
  uint32_t e = start;
  for (;;) {
    tok t = peek(p, 0);
    if (t.kind == T_EOF || failed(p)) return e;
    if (is_punct(t, p, ',') || is_punct(t, p, '}') || is_punct(t, p, ')') || is_punct(t, p, ']') || is_punct(t, p, '>'))
      return e;
    e = skip_unit(p);
  }
}

/* Parses '{ name [= value], ... }' (the '{' is next) into `out`. */
static void parse_attr_dict(P *p, attr_vec *out) {
  tok open = next(p);
  for (;;) {
    if (failed(p)) return;
    tok t = peek(p, 0);
    if (is_punct(t, p, '}')) {
      next(p);
      return;
    }
    if (t.kind == T_EOF) {
      sc_pos ps = pos_of(p, open.off);
      fail_at(p, t.off, "unexpected end of input: '{' opened at line %u, column %u is not closed", ps.line, ps.col);
      return;
    }
    check_bad(p, t);
    if (t.kind != T_WORD && t.kind != T_STRING) {
      fail_at(p, t.off, "expected an attribute name in the attribute dictionary");
      return;
    }
    next(p);
    sc_attr a = {tspan(p, t), {0}, t.off, t.off + t.len};
    if (t.kind == T_STRING && t.len >= 2) a.name = sc_span_of(p->buf + t.off + 1, t.len - 2);
    if (is_punct(peek(p, 0), p, '=')) {
      next(p);
      tok v = peek(p, 0);
      uint32_t e = skip_attr_value(p, v.off);
      a.value = sc_span_of(p->buf + v.off, e > v.off ? e - v.off : 0);
      a.end = e;
    }
    SC_PUSH(p->a, *out, a);
    tok sep = peek(p, 0);
    if (is_punct(sep, p, ',')) {
      next(p);
      continue;
    }
    if (!is_punct(sep, p, '}')) {
      if (sep.kind == T_EOF) continue;
      check_bad(p, sep);
      fail_at(p, sep.off, "expected ',' or '}' in the attribute dictionary");
      return;
    }
  }
}

/* One `word<...>` type at b[i] (after spaces), as fast_type() reads it, into *out; returns the
 * offset past it, or 0 when the bytes there are something else. */
static uint32_t raw_type_at(P *p, uint32_t i, sc_span *out) {
  const char *b = p->buf;
  uint32_t end = p->end, close;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
  if (i >= end || !(k_cls[(unsigned char)b[i]] & C_WORD)) return 0;
  uint32_t start = i, n = p->last_type.n;
  if (repeats(p, start, p->last_type)) {
    *out = sc_span_of(b + start, n);
    return start + n;
  }
  i = word_end(b, start, start + 1, end);
  if (i + 1 >= end || b[i] != '<' || b[i + 1] == '=' || !raw_skip_group(p, i, &close)) return 0;
  *out = p->last_type = sc_span_of(b + start, close - start);
  return close;
}

/* type ::= word '<' ... '>'  (tensor<8x16xf32>, the common case): scanned as bytes when no token is
 * buffered, making no token at all. False (nothing consumed) for any other shape, a line break or a
 * group the raw scan leaves to the token path. */
static bool fast_type(P *p, sc_span *out) {
  uint32_t i, close;
  if (p->nla == 1 && p->la[p->la_head].kind == T_WORD) { /* the word is already lexed (peeked) */
    i = p->la[p->la_head].off;
  } else {
    if (p->nla) return false;
    for (i = p->lex_off; i < p->end && (k_cls[(unsigned char)p->buf[i]] & C_SPACE); i++) {}
    if (i == p->begin) return false;
  }
  if (!(close = raw_type_at(p, i, out))) return false;
  p->nla = 0;
  p->lex_off = p->last_end = close;
  return true;
}

/* A type: one unit (tensor<..>, !x.y<..>, i32, (..) -> ..). Returns its span. */
static sc_span parse_type(P *p) {
  sc_span fast;
  if (fast_type(p, &fast)) return fast;
  tok t = peek(p, 0);
  uint32_t e = skip_unit(p);
  return sc_span_of(p->buf + t.off, e > t.off ? e - t.off : 0);
}

/* Types separated by ',' inside '(' ... ')' (the '(' is next). */
static void parse_type_list_parens(P *p, span_vec *out) {
  tok open = next(p);
  if (is_punct(peek(p, 0), p, ')')) {
    next(p);
    return;
  }
  for (int guard = 0; !failed(p); guard++) {
    sc_span ty = parse_type(p);
    SC_PUSH(p->a, *out, ty);
    tok t = peek(p, 0);
    if (is_punct(t, p, ',')) {
      next(p);
      continue;
    }
    if (is_punct(t, p, ')')) {
      next(p);
      return;
    }
    sc_pos ps = pos_of(p, open.off);
    check_bad(p, t);
    fail_at(p, t.off, "expected ',' or ')' in the type list opened at line %u, column %u", ps.line, ps.col);
    return;
  }
}

static sc_value *new_value(P *p, sc_span name, uint32_t off) {
  sc_value *v = sc_arena_alloc(p->a, sizeof *v);
  v->name = name;
  v->pos.offset = off;
  return v;
}

/* `loc(...)`: the 'loc' word is next. Returns its span. */
static sc_span parse_loc(P *p) {
  tok t = next(p);
  uint32_t e;
  if (!p->nla && t.off + 3 < p->end && p->buf[t.off + 3] == '(' && raw_skip_group(p, t.off + 3, &e)) {
    p->lex_off = p->last_end = e; /* loc(...) scanned as bytes: no token for its '(' */
    return sc_span_of(p->buf + t.off, e - t.off);
  }
  e = skip_group(p);
  return sc_span_of(p->buf + t.off, e - t.off);
}

static bool at_loc(P *p) {
  tok t = peek(p, 0);
  if (!tok_is_word(t, p, "loc")) return false;
  if (t.off + 3 < p->end && p->buf[t.off + 3] == '(') return true; /* "loc(": the '(' is the next token */
  return is_punct(peek(p, 1), p, '(');
}

/* Block argument `%x: type {attrs}? loc(..)?` (the %x is next). */
static sc_value *parse_block_arg(P *p) {
  tok name = next(p);
  sc_value *v = new_value(p, tspan(p, name), name.off);
  next(p); /* ':' */
  v->type = parse_type(p);
  if (is_punct(peek(p, 0), p, '{')) {
    attr_vec av = {0};
    parse_attr_dict(p, &av);
    sc_attrs *attrs = sc_arena_alloc(p->a, sizeof *attrs);
    attrs->v = av.v;
    attrs->n = (uint32_t)av.n;
    v->attrs = attrs;
  }
  if (at_loc(p)) parse_loc(p);
  return v;
}

static sc_region *parse_region(P *p, sc_op *parent, value_vec *entry_args);

static bool is_call_like(sc_span name) {
  return sc_span_eq(name, "call") || sc_span_eq(name, "func.call") || sc_span_eq(name, "stablehlo.custom_call") ||
         sc_span_eq(name, "mhlo.custom_call") || sc_span_eq(name, "call_indirect") || sc_span_eq(name, "sdy.named_computation");
}
static bool is_func_like(sc_span name) {
  return sc_span_eq(name, "func.func") || sc_span_eq(name, "func") ||
         (name.n > 5 && memcmp(name.p + name.n - 5, ".func", 5) == 0);
}

/* A func.func result list after '->': `(type {attrs}? loc(..)?, ...)` or a single type. */
static void parse_func_results(P *p, sc_op *op) {
  span_vec types = {0};
  SC_VEC(sc_attrs) attrs = {0};
  if (is_punct(peek(p, 0), p, '(')) {
    tok open = next(p);
    while (!failed(p) && !is_punct(peek(p, 0), p, ')')) {
      sc_span ty = parse_type(p);
      sc_attrs ra = {0};
      if (is_punct(peek(p, 0), p, '{')) {
        attr_vec av = {0};
        parse_attr_dict(p, &av);
        ra.v = av.v;
        ra.n = (uint32_t)av.n;
      }
      if (at_loc(p)) parse_loc(p);
      SC_PUSH(p->a, types, ty);
      SC_PUSH(p->a, attrs, ra);
      tok t = peek(p, 0);
      if (is_punct(t, p, ',')) {
        next(p);
        continue;
      }
      if (!is_punct(t, p, ')')) {
        sc_pos ps = pos_of(p, open.off);
        check_bad(p, t);
        fail_at(p, t.off, "expected ',' or ')' in the result list opened at line %u, column %u", ps.line, ps.col);
        return;
      }
    }
    if (!failed(p)) next(p);
  } else {
    sc_span ty = parse_type(p);
    sc_attrs none = {0};
    SC_PUSH(p->a, types, ty);
    SC_PUSH(p->a, attrs, none);
  }
  sc_op_decl *e = sc_op_decl_of(p->a, op);
  e->func_result_types = types.v;
  e->result_attrs = attrs.v;
  e->nresult_attrs = (uint32_t)attrs.n;
}

/* The trailing `: types` of an op (':' is next). */
/* '(' type (',' type)* ')' of raw types at b[i] (after spaces): pushed on P.s_spans; returns the
 * offset past ')', or 0 (nothing pushed) for any other shape. */
static uint32_t raw_type_list_at(P *p, uint32_t i) {
  const char *b = p->buf;
  uint32_t end = p->end, n = 0;
  sc_span ty[16];
  while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
  if (i >= end || b[i] != '(') return 0;
  i++;
  for (;;) {
    if (n == 16 || !(i = raw_type_at(p, i, &ty[n]))) return 0;
    n++;
    while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
    if (i < end && b[i] == ')') break;
    if (i >= end || b[i] != ',') return 0;
    i++;
  }
  for (uint32_t k = 0; k < n; k++) SC_PUSH(p->a, p->s_spans, ty[k]);
  return i + 1;
}

/* trailer ::= ':' '(' types ')' '->' (type | '(' types ')') on one line with `word<...>` types, the
 * generic form's case: scanned as bytes (the ':' is the only token buffered). False, with nothing
 * consumed, for any other shape; then parse_trailer_types() reads tokens. */
static bool fast_trailer(P *p, sc_op *op) {
  if (p->nla != 1) return false;
  const char *b = p->buf;
  uint32_t end = p->end, base = (uint32_t)p->s_spans.n;
  uint32_t i = raw_type_list_at(p, p->la[p->la_head].off + 1);
  if (!i) return false;
  uint32_t outs = (uint32_t)p->s_spans.n;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
  uint32_t after = 0;
  if (i + 1 < end && b[i] == '-' && b[i + 1] == '>') {
    sc_span ty;
    after = raw_type_list_at(p, i + 2);
    if (!after && (after = raw_type_at(p, i + 2, &ty))) SC_PUSH(p->a, p->s_spans, ty);
  }
  if (!after) {
    p->s_spans.n = base;
    return false;
  }
  TAKE(p, p->s_spans, outs, op->result_types, op->nresult_types);
  TAKE(p, p->s_spans, base, op->operand_types, op->noperand_types);
  p->nla = 0;
  p->lex_off = p->last_end = after;
  return true;
}

/* trailer ::= ':' function-type | ':' type (',' type)*      (the ':' is next)
 * The types are pushed on P.s_spans and taken as exact-size arrays. */
static void parse_trailer_types(P *p, sc_op *op, bool *seen) {
  if (fast_trailer(p, op)) {
    *seen = true;
    return;
  }
  next(p);
  span_vec *st = &p->s_spans;
  size_t base = st->n;
  *seen = true;
  if (is_punct(peek(p, 0), p, '(')) {
    /* Either a function type or a parenthesised type; a function type has '->' after ')'. */
    parse_type_list_parens(p, st);
    if (peek(p, 0).kind == T_ARROW) {
      next(p);
      size_t outs = st->n;
      if (is_punct(peek(p, 0), p, '(')) parse_type_list_parens(p, st);
      else {
        sc_span ty = parse_type(p);
        SC_PUSH(p->a, *st, ty);
      }
      TAKE(p, *st, outs, op->result_types, op->nresult_types);
      TAKE(p, *st, base, op->operand_types, op->noperand_types);
      return;
    }
  } else {
    sc_span ty = parse_type(p);
    SC_PUSH(p->a, *st, ty);
  }
  while (!failed(p) && is_punct(peek(p, 0), p, ',') && !peek(p, 1).bol) {
    next(p);
    sc_span ty = parse_type(p);
    SC_PUSH(p->a, *st, ty);
  }
  /* A plain type list gives result types; with no results it describes the operands. */
  if (op->nresults) TAKE(p, *st, base, op->result_types, op->nresult_types);
  else TAKE(p, *st, base, op->operand_types, op->noperand_types);
}

static void add_region(P *p, sc_op *op, region_vec *regions, value_vec *pending) {
  sc_region *r = parse_region(p, op, pending);
  if (r) SC_PUSH(p->a, *regions, r);
  /* a pretty stablehlo.while declares `%iterArg = %init` once for its cond and do regions alike */
  if (pending->n && regions->n == 1 && !op->generic && sc_span_eq(op->name, "stablehlo.while")) {
    for (size_t i = 0; i < pending->n; i++) {
      sc_value *v = sc_arena_alloc(p->a, sizeof *v);
      *v = *pending->v[i];
      v->block = NULL;
      pending->v[i] = v;
    }
    return;
  }
  pending->n = 0;
}

/* ---- generic form: properties that carry what the pretty form writes inline ---- */

/* Lexer state, saved while a property value (a span already consumed) is parsed again. */
typedef struct {
  tok la[LOOKAHEAD];
  uint32_t la_head, nla, lex_off, end, last_end;
} lex_state;

static void lex_push(P *p, lex_state *save, sc_span s) {
  memcpy(save->la, p->la, sizeof p->la);
  save->la_head = p->la_head, save->nla = p->nla, save->lex_off = p->lex_off, save->end = p->end,
  save->last_end = p->last_end;
  p->la_head = p->nla = 0;
  p->lex_off = (uint32_t)(s.p - p->buf);
  p->end = p->lex_off + s.n;
}

static void lex_pop(P *p, const lex_state *save) {
  memcpy(p->la, save->la, sizeof p->la);
  p->la_head = save->la_head, p->nla = save->nla, p->lex_off = save->lex_off, p->end = save->end,
  p->last_end = save->last_end;
}

/* `[{...}, {...}]` (arg_attrs / res_attrs) into one sc_attrs per entry. Returns the count, or 0 if the
 * value has another shape (then nothing is mapped). */
static uint32_t parse_dict_list(P *p, sc_span value, sc_attrs **out) {
  lex_state save;
  lex_push(p, &save, value);
  SC_VEC(sc_attrs) list = {0};
  bool ok = is_punct(next(p), p, '[');
  while (ok && !failed(p) && is_punct(peek(p, 0), p, '{')) {
    attr_vec av = {0};
    parse_attr_dict(p, &av);
    sc_attrs one = {av.v, (uint32_t)av.n};
    SC_PUSH(p->a, list, one);
    if (is_punct(peek(p, 0), p, ',')) next(p);
  }
  ok = ok && !failed(p) && is_punct(next(p), p, ']');
  lex_pop(p, &save);
  *out = list.v;
  return ok ? (uint32_t)list.n : 0;
}

/* function_type = (args) -> results: the result types. */
static void parse_function_type_results(P *p, sc_span value, sc_op *op) {
  lex_state save;
  lex_push(p, &save, value);
  span_vec ins = {0}, outs = {0};
  if (is_punct(peek(p, 0), p, '(')) parse_type_list_parens(p, &ins);
  if (!failed(p) && peek(p, 0).kind == T_ARROW) {
    next(p);
    if (is_punct(peek(p, 0), p, '(')) parse_type_list_parens(p, &outs);
    else {
      sc_span ty = parse_type(p);
      SC_PUSH(p->a, outs, ty);
    }
  }
  lex_pop(p, &save);
  if (!sc_op_func_result_types(op) && outs.n) sc_op_decl_of(p->a, op)->func_result_types = outs.v;
}

static void map_generic_properties(P *p, sc_op *op, bool func_like) {
  if (sc_span_eq(op->name, "sdy.mesh") && !sc_attrs_find(&op->attrs, "value")) {
    const sc_attr *m = sc_attrs_find(&op->attrs, "mesh");
    if (m && sc_span_starts(m->value, "#sdy.mesh<")) { /* mesh = #sdy.mesh<[...]> -> value = <[...]> */
      sc_attr v = {sc_span_of("value", 5), sc_span_of(m->value.p + 9, m->value.n - 9), m->offset, m->end};
      attr_vec av = {op->attrs.v, op->attrs.n, op->attrs.n};
      SC_PUSH(p->a, av, v);
      op->attrs.v = av.v, op->attrs.n = (uint32_t)av.n;
    }
  }
  if (!func_like) return;
  const sc_attr *ft = sc_attrs_find(&op->attrs, "function_type");
  if (ft) parse_function_type_results(p, ft->value, op);
  const sc_attr *aa = sc_attrs_find(&op->attrs, "arg_attrs");
  if (aa && op->nregions && op->regions[0]->nblocks) {
    sc_attrs *list;
    uint32_t n = parse_dict_list(p, aa->value, &list);
    sc_block *entry = op->regions[0]->blocks[0];
    if (n == entry->nargs)
      for (uint32_t i = 0; i < n; i++)
        if (!sc_value_attrs(entry->args[i])->n) entry->args[i]->attrs = &list[i];
  }
  const sc_attr *ra = sc_attrs_find(&op->attrs, "res_attrs");
  if (ra && !sc_op_nresult_attrs(op)) {
    sc_attrs *list;
    uint32_t n = parse_dict_list(p, ra->value, &list);
    if (n) {
      sc_op_decl *e = sc_op_decl_of(p->a, op);
      e->result_attrs = list, e->nresult_attrs = n;
    }
  }
}

/* result-list ::= result (',' result)* '='    result ::= %name (':' integer)?
 * (begins_op() already checked the shape.) Returns false after an error. */
static bool parse_result_list(P *p, sc_op *op) {
  size_t base = p->s_values.n;
  if (peek(p, 0).kind == T_PERCENT) {
    for (;;) {
      tok r = next(p);
      uint32_t count = 1;
      bool grouped = false;
      if (is_punct(peek(p, 0), p, ':') && peek(p, 1).kind == T_WORD) {
        next(p);
        tok n = next(p);
        count = 0;
        for (uint32_t i = 0; i < n.len && (k_cls[(unsigned char)p->buf[n.off + i]] & C_DIGIT); i++)
          count = count * 10 + (uint32_t)(p->buf[n.off + i] - '0');
        grouped = true;
        if (count > 1u << 20) {
          fail_at(p, n.off, "result group too large");
          return false;
        }
      }
      for (uint32_t i = 0; i < count; i++) {
        sc_value *v = new_value(p, tspan(p, r), r.off);
        if (grouped && i > 0) v->name = sc_span_of(p->buf + r.off, r.len); /* same base; looked up by #i */
        v->def = op;
        v->index = (uint32_t)(p->s_values.n - base);
        SC_PUSH(p->a, p->s_values, v);
      }
      tok sep = next(p);
      if (is_punct(sep, p, '=')) break;
      /* begins_op() already checked the shape. */
    }
  }
  TAKE(p, p->s_values, base, op->results, op->nresults);
  return true;
}

/* operand ::= %name — pushed on the op's operand stacks (P.s_spans names, P.s_values values). */
static void push_operand(P *p, tok t) {
  sc_span nm = tspan(p, t);
  SC_PUSH(p->a, p->s_spans, nm);
  SC_PUSH(p->a, p->s_values, lookup_value(p, nm));
}

/* A parenthesised group in an op: '(' (operand | block-arg | %iter '=' %init | loc(...) | other)* ')'.
 * Operand names, block-argument definitions (for the op's first region) and `%x = %init` pairs are
 * classified; everything else is stepped over. The '(' is next. Returns false after an error. */
/* End of a value name `%id` (id ::= [A-Za-z0-9_$.]+ ('-' [A-Za-z0-9_$.]+)* ('#' digits)?) starting
 * at b[i] == '%', or i when there is none: the lexer's T_PERCENT rule, without making a token. */
static uint32_t value_name_end(const char *b, uint32_t i, uint32_t end) {
  uint32_t j = i + 1;
  for (;;) {
    j = skip_word_chars(b, j, end);
    if (j + 1 < end && b[j] == '-' && is_word_char((unsigned char)b[j + 1])) {
      j++;
      continue;
    }
    break;
  }
  if (j < end && b[j] == '#') {
    j++;
    while (j < end && (k_cls[(unsigned char)b[j]] & C_DIGIT)) j++;
  }
  return j > i + 1 ? j : i;
}

/* operand-list ::= '(' (%name (',' %name)*)? ')' on one line, the common generic-form case: scanned
 * as bytes (the '(' is the only token buffered). False, with nothing consumed, for anything else
 * (block arguments, iter args, nested groups, comments, line breaks), which the token path parses. */
static bool fast_operand_list(P *p) {
  if (p->nla != 1) return false;
  const char *b = p->buf;
  uint32_t i = p->la[p->la_head].off + 1, end = p->end, n = 0;
  uint32_t at[16], len[16];
  for (;;) {
    while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
    if (i < end && b[i] == ')' && n == 0) break;
    if (i >= end || b[i] != '%' || n == 16) return false;
    uint32_t e = value_name_end(b, i, end);
    if (e == i) return false;
    at[n] = i, len[n++] = e - i;
    i = e;
    while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
    if (i < end && b[i] == ')') break;
    if (i >= end || b[i] != ',') return false;
    i++;
  }
  for (uint32_t k = 0; k < n; k++) {
    tok t = {T_PERCENT, false, '%', at[k], len[k]};
    push_operand(p, t);
  }
  p->nla = 0;
  p->lex_off = p->last_end = i + 1;
  return true;
}

static bool parse_paren_group(P *p, value_vec *pending_args) {
  if (fast_operand_list(p)) return true;
  tok open = next(p);
  uint32_t depth = 1;
  bracket stack[32];
  stack[0] = (bracket){'(', open.off};
  while (depth && !failed(p)) {
    tok u = peek(p, 0);
    if (u.kind == T_EOF) {
      sc_pos ps = pos_of(p, stack[depth - 1].off);
      fail_at(p, u.off, "unexpected end of input: '%c' opened at line %u, column %u is not closed",
              stack[depth - 1].open, ps.line, ps.col);
      return false;
    }
    check_bad(p, u);
    if (u.kind == T_PERCENT && depth == 1 && is_punct(peek(p, 1), p, ':')) {
      sc_value *v = parse_block_arg(p);
      SC_PUSH(p->a, *pending_args, v);
      continue;
    }
    if (u.kind == T_PERCENT && depth == 1 && is_punct(peek(p, 1), p, '=')) { /* %iterArg = %init */
      next(p);
      next(p);
      sc_value *v = new_value(p, tspan(p, u), u.off);
      SC_PUSH(p->a, *pending_args, v);
      continue;
    }
    if (u.kind == T_PERCENT) {
      next(p);
      push_operand(p, u);
      continue;
    }
    if (u.kind == T_PUNCT) {
      char d = p->buf[u.off];
      if (d == '{' || d == '[' || d == '<') {
        skip_group(p);
        continue;
      }
      if (d == '(') {
        if (depth == 32) {
          skip_group(p);
          continue;
        }
        next(p);
        stack[depth++] = (bracket){'(', u.off};
        continue;
      }
      if (d == ')') {
        next(p);
        depth--;
        continue;
      }
      if (d == ']' || d == '}' || d == '>') {
        sc_pos ps = pos_of(p, stack[depth - 1].off);
        fail_at(p, u.off, "expected ')' to close '(' opened at line %u, column %u, found '%c'", ps.line, ps.col, d);
        return false;
      }
    }
    if (u.kind == T_WORD && tok_is_word(u, p, "loc") && is_punct(peek(p, 1), p, '(')) {
      parse_loc(p);
      continue;
    }
    next(p);
  }
  return !failed(p);
}

/* Generic form keeps symbols in properties: sym_name = "main", callee = @f, sym_visibility. */
static void complete_symbols(sc_arena *a, sc_op *op, bool call_like, bool func_like) {
  if (!sc_op_sym_name(op).n) {
    const sc_attr *s = sc_attrs_find(&op->attrs, "sym_name");
    if (s && s->value.n >= 2 && s->value.p[0] == '"') sc_op_extra_of(a, op)->sym_name = sc_span_of(s->value.p + 1, s->value.n - 2);
  }
  if (!sc_op_callee(op).n && call_like) {
    const sc_attr *c = sc_attrs_find(&op->attrs, "callee");
    if (c && c->value.n >= 2 && c->value.p[0] == '@') sc_op_decl_of(a, op)->callee = sc_span_of(c->value.p + 1, c->value.n - 1);
  }
  if (!sc_op_visibility(op).n && func_like) {
    const sc_attr *v = sc_attrs_find(&op->attrs, "sym_visibility");
    if (v && v->value.n >= 2) sc_op_decl_of(a, op)->visibility = sc_span_of(v->value.p + 1, v->value.n - 2);
  }
}

/* What the pieces of the op being parsed add to. */
typedef struct {
  sc_op *op;
  bool call_like, func_like, sdy_sharded, seen_trailer;
  size_t attrs, operands, names; /* where the op's entries begin on P.s_attrs, P.s_values, P.s_spans */
  value_vec pending_args; /* block arguments written before the op's first region */
  region_vec regions;
} op_state;

/* A new op at the next token, within the max_ops bound and not cancelled; NULL after an error. */
static sc_op *new_op(P *p, sc_block *block, sc_op *parent_op, uint32_t at) {
  if (p->nops >= p->in->max_ops) {
    fail_at(p, at, "more than %u operations", p->in->max_ops);
    p->err->limit = true;
    return NULL;
  }
  if (p->in->cancel && (p->nops & 1023) == 0 && *p->in->cancel) {
    p->err->cancelled = true;
    fail_at(p, at, "cancelled");
    return NULL;
  }
  sc_op *op = sc_arena_alloc(p->a, sizeof *op);
  op->id = p->nops++;
  op->parent_block = block;
  op->parent_op = parent_op;
  op->depth = p->depth;
  op->func = parent_op ? (is_func_like(parent_op->name) ? parent_op : parent_op->func) : NULL;
  op->pos.offset = at;
  return op;
}

/* op-name ::= string-literal (generic form) | bare-id (custom form)
 * The elided builtins module/return/call/func get their dialect. Returns false after an error. */
static bool parse_op_name(P *p, op_state *st, tok name) {
  sc_op *op = st->op;
  if (name.kind == T_STRING) {
    op->name = sc_span_of(p->buf + name.off + 1, name.len >= 2 ? name.len - 2 : 0);
    op->generic = true;
  } else if (name.kind == T_WORD) {
    op->name = tspan(p, name);
  } else {
    check_bad(p, name);
    fail_at(p, name.off, "expected an operation name after the result list");
    return false;
  }
  if (sc_span_eq(op->name, "module")) op->name = sc_span_of("builtin.module", 14);
  else if (sc_span_eq(op->name, "return")) op->name = sc_span_of("func.return", 11);
  else if (sc_span_eq(op->name, "call")) op->name = sc_span_of("func.call", 9);
  else if (sc_span_eq(op->name, "func")) op->name = sc_span_of("func.func", 9);
  st->call_like = is_call_like(op->name);
  st->func_like = is_func_like(op->name);
  st->sdy_sharded = sc_span_eq(op->name, "sdy.sharding_constraint") || sc_span_eq(op->name, "sdy.reshard");
  if (st->func_like) SC_PUSH(p->a, p->funcs, op);
  return true;
}

/* symbol-piece ::= @name ('=' value)?      (callee of a call, else the op's symbol; sdy.mesh @m = <..>) */
static void parse_op_symbol(P *p, op_state *st, tok t) {
  next(p);
  sc_span s = tspan(p, t);
  s.p++, s.n--;
  if (s.n >= 2 && s.p[0] == '"') s.p++, s.n -= 2;
  if (st->call_like && !sc_op_callee(st->op).n) sc_op_decl_of(p->a, st->op)->callee = s;
  else if (!sc_op_sym_name(st->op).n) sc_op_extra_of(p->a, st->op)->sym_name = s;
  if (!is_punct(peek(p, 0), p, '=')) return;
  tok eq = next(p);
  tok v = peek(p, 0);
  uint32_t e = skip_unit(p);
  sc_attr a = {sc_span_of("value", 5), sc_span_of(p->buf + v.off, e - v.off), eq.off, e};
  SC_PUSH(p->a, p->s_attrs, a);
}

/* word-piece ::= loc(...) | 'attributes' attr-dict | name '=' value | visibility | other-unit */
static void parse_op_word(P *p, op_state *st, tok t) {
  sc_op *op = st->op;
  if (at_loc(p)) {
    sc_span loc = parse_loc(p);
    op->loc_offset = (uint32_t)(loc.p - p->buf);
    op->loc_len = loc.n;
    return;
  }
  if (tok_is_word(t, p, "attributes") && is_punct(peek(p, 1), p, '{')) {
    next(p);
    parse_attr_dict(p, &p->s_attrs);
    return;
  }
  if (is_punct(peek(p, 1), p, '=')) { /* custom `name = value` */
    next(p);
    next(p);
    tok v = peek(p, 0);
    uint32_t e = skip_unit(p);
    sc_attr a = {tspan(p, t), sc_span_of(p->buf + v.off, e > v.off ? e - v.off : 0), t.off, e};
    SC_PUSH(p->a, p->s_attrs, a);
    return;
  }
  if (!sc_op_visibility(op).n && st->func_like &&
      (tok_is_word(t, p, "public") || tok_is_word(t, p, "private") || tok_is_word(t, p, "nested")))
    sc_op_decl_of(p->a, op)->visibility = tspan(p, t);
  skip_unit(p);
}

/* brace-piece ::= region | attr-dict | set-literal        (the '{' is next) */
static void parse_op_brace(P *p, op_state *st, tok t) {
  tok k1 = peek(p, 1), k2 = peek(p, 2);
  /* A '{' ending its line that is not an attribute dict opens a region (then a bad first line is
   * reported as "expected an operation" rather than swallowed as a set literal). */
  if (begins_op(p, 1) || (k1.bol && !is_punct(k1, p, '}') && !is_punct(k2, p, '=') && !is_punct(k2, p, ','))) {
    add_region(p, st->op, &st->regions, &st->pending_args);
  } else if (is_punct(k1, p, '}') || ((k1.kind == T_WORD || k1.kind == T_STRING) && is_punct(k2, p, '=')) ||
             (k1.kind == T_WORD && (is_punct(k2, p, ',') || is_punct(k2, p, '}')))) {
    parse_attr_dict(p, &p->s_attrs);
  } else { /* a set literal in custom syntax: {"x", "y"} */
    uint32_t e = skip_group(p);
    sc_attr a = {{0}, sc_span_of(p->buf + t.off, e - t.off), t.off, e};
    SC_PUSH(p->a, p->s_attrs, a);
  }
}

/* properties ::= '<' attr-dict '>'        (the '<' is next, then '{') */
static bool parse_properties(P *p) {
  next(p);
  parse_attr_dict(p, &p->s_attrs);
  tok close = next(p);
  if (!is_punct(close, p, '>')) {
    check_bad(p, close);
    fail_at(p, close.off, "expected '>' to close the properties '<{'");
    return false;
  }
  return true;
}

/* region-list ::= '(' region (',' region)* ')'        (generic form; the '(' is next, then '{') */
static bool parse_region_list(P *p, op_state *st) {
  next(p);
  for (;;) {
    if (failed(p)) return false;
    if (!is_punct(peek(p, 0), p, '{')) {
      tok u = peek(p, 0);
      check_bad(p, u);
      fail_at(p, u.off, "expected '{' to open a region");
      return false;
    }
    add_region(p, st->op, &st->regions, &st->pending_args);
    tok sep = next(p);
    if (is_punct(sep, p, ',')) continue;
    if (is_punct(sep, p, ')')) return true;
    check_bad(p, sep);
    fail_at(p, sep.off, "expected ',' or ')' after a region");
    return false;
  }
}

/* punct-piece ::= ':' types | brace-piece | properties | region-list | '(' operands-or-args ')'
 *               | '<' ... '>' | '[' ... ']' | other punctuation          Returns false after an error. */
static bool parse_op_punct(P *p, op_state *st, tok t) {
  char c = t.ch;
  if (c == ':') {
    if (st->seen_trailer) next(p); /* a second ':' cannot start another type list; skip it */
    else parse_trailer_types(p, st->op, &st->seen_trailer);
    return true;
  }
  if (c == '{') {
    parse_op_brace(p, st, t);
    return true;
  }
  if (c == '<' && is_punct(peek(p, 1), p, '{')) return parse_properties(p);
  if (c == '(' && fast_operand_list(p)) return true; /* before peeking past the '(' */
  if (c == '(' && is_punct(peek(p, 1), p, '{')) return parse_region_list(p, st);
  /* operand list, block-argument definitions, or custom syntax; '(...) -> ...' outside func signatures:
   * the arrow is stepped over next */
  if (c == '(') return parse_paren_group(p, &st->pending_args);
  if (c == '<' || c == '[') {
    uint32_t e = skip_group(p);
    sc_span name_span = {0};
    if (c == '<' && st->sdy_sharded) name_span = sc_span_of("sharding", 8);
    sc_attr a = {name_span, sc_span_of(p->buf + t.off, e - t.off), t.off, e};
    SC_PUSH(p->a, p->s_attrs, a);
    return true;
  }
  next(p);
  return true;
}

/* One piece of the op at token t. Returns false after an error. */
static bool parse_op_piece(P *p, op_state *st, tok t) {
  switch (t.kind) {
  case T_PERCENT: /* operand */
    next(p);
    push_operand(p, t);
    return true;
  case T_AT:
    parse_op_symbol(p, st, t);
    return true;
  case T_ARROW: /* func.func results, or a function type in custom syntax */
    next(p);
    if (st->func_like) parse_func_results(p, st->op);
    else skip_unit(p);
    return true;
  case T_WORD:
    parse_op_word(p, st, t);
    return true;
  case T_PUNCT:
    return parse_op_punct(p, st, t);
  default:
    skip_unit(p);
    return true;
  }
}

/* ---- byte-level fast path for the pieces of one line of an op ----
 *
 * Most ops are one line of a few common pieces: operands, `(operands)`, properties `<{...}>`, an
 * attribute dict, `<...>` groups, the `: types` trailer and `loc(...)`. fast_line() consumes such
 * pieces as bytes, without making tokens, exactly as the token path would, and stops (having consumed
 * only whole pieces) at the end of the line or at anything else: the token path then takes over with
 * its precise errors. Each fast piece returns 0 without pushing anything when the shape is unusual. */

static uint32_t skip_spaces(const P *p, uint32_t i) {
  while (i < p->end && (k_cls[(unsigned char)p->buf[i]] & C_SPACE)) i++;
  return i;
}

/* One token of an attribute value that the token path steps over (skip_unit), at b[i]: its end, or 0
 * for anything the fast path leaves to the token path (comments, quoted symbols, `%x#N`, bad bytes). */
static uint32_t raw_value_unit(P *p, uint32_t i) {
  const char *b = p->buf;
  uint32_t end = p->end, e;
  unsigned char c = (unsigned char)b[i];
  if ((k_cls[c] & C_WORD || c == '#' || c == '!') && repeats(p, i, p->last_unit))
    return i + p->last_unit.n; /* the same `word<...>` as skip_unit() scanned last */
  if (k_cls[c] & C_WORD) {
    e = word_end(b, i, i + 1, end);
    if (e + 1 < end && b[e] == '<' && b[e + 1] != '=') {
      if (!raw_skip_group(p, e, &e)) return 0;
      p->last_unit = sc_span_of(b + i, e - i);
    }
    return e;
  }
  switch (c) {
  case '"':
    return scan_string(b, i + 1, end, &e) ? e : 0;
  case '(': case '[': case '{':
    if (c == '{' && i + 1 < end && b[i + 1] == '-') return 0;
    return raw_skip_group(p, i, &e) ? e : 0;
  case '<':
    if (i + 1 < end && b[i + 1] == '=') return i + 2;
    return raw_skip_group(p, i, &e) ? e : 0;
  case '#': case '!': case '@': case '^': case '%':
    e = i + 1;
    for (;;) {
      while (e < end && (k_cls[(unsigned char)b[e]] & C_WORD)) e++;
      if (e + 1 < end && b[e] == '-' && is_word_char((unsigned char)b[e + 1])) {
        e++;
        continue;
      }
      break;
    }
    if (e == i + 1 && c != '!' && c != '#') return 0; /* a lone sigil, or @"quoted" */
    if (e < end && (b[e] == '#' || b[e] == '"' || b[e] == '-')) return 0;
    if ((c == '#' || c == '!') && e + 1 < end && b[e] == '<' && b[e + 1] != '=') {
      if (!raw_skip_group(p, e, &e)) return 0;
      p->last_unit = sc_span_of(b + i, e - i);
    }
    return e;
  case '-':
    return i + 1 < end && b[i + 1] == '>' ? i + 2 : i + 1;
  case ':': case '=': case '?': case '*': case '+': case '|': case '&': case '~': case ';':
    return i + 1;
  default:
    return 0;
  }
}

/* attr-dict ::= '{' (name ('=' value)?) (',' ...)* '}' on one line, at b[open] == '{': the attributes
 * pushed on P.s_attrs as parse_attr_dict() makes them; returns the offset past '}', or 0 (nothing
 * pushed) for any other shape. */
static uint32_t raw_attr_dict(P *p, uint32_t open) {
  const char *b = p->buf;
  uint32_t end = p->end, i = skip_spaces(p, open + 1);
  size_t base = p->s_attrs.n;
  if (i < end && b[i] == '}') return i + 1;
  for (;;) {
    if (i >= end) goto give_up;
    sc_attr a;
    uint32_t e;
    if (k_cls[(unsigned char)b[i]] & C_WORD) {
      e = word_end(b, i, i + 1, end);
      a.name = sc_span_of(b + i, e - i);
    } else if (b[i] == '"') {
      if (!scan_string(b, i + 1, end, &e) || e - i < 2) goto give_up;
      a.name = sc_span_of(b + i + 1, e - i - 2);
    } else {
      goto give_up;
    }
    a.offset = i;
    a.end = e;
    a.value = sc_span_of(NULL, 0);
    i = skip_spaces(p, e);
    if (i < end && b[i] == '=') {
      uint32_t v = skip_spaces(p, i + 1), ve = v;
      i = v;
      while (i < end && !strchr(",})]>", b[i])) {
        if (!(ve = raw_value_unit(p, i))) goto give_up;
        i = skip_spaces(p, ve);
      }
      if (ve == v) goto give_up; /* an empty value: the token path words it */
      a.value = sc_span_of(b + v, ve - v);
      a.end = ve;
    }
    if (i >= end || (b[i] != ',' && b[i] != '}')) goto give_up;
    SC_PUSH(p->a, p->s_attrs, a);
    if (b[i] == '}') return i + 1;
    i = skip_spaces(p, i + 1);
  }
give_up:
  p->s_attrs.n = base;
  return 0;
}

/* operand-list ::= '(' (%name (',' %name)*)? ')' at b[open] == '(': the operands pushed; returns the
 * offset past ')', or 0 (nothing pushed). */
static uint32_t raw_operand_list(P *p, uint32_t open) {
  const char *b = p->buf;
  uint32_t i = open + 1, end = p->end, n = 0;
  uint32_t at[16], len[16];
  for (;;) {
    i = skip_spaces(p, i);
    if (i < end && b[i] == ')' && n == 0) break;
    if (i >= end || b[i] != '%' || n == 16) return 0;
    uint32_t e = value_name_end(b, i, end);
    if (e == i) return 0;
    at[n] = i, len[n++] = e - i;
    i = skip_spaces(p, e);
    if (i < end && b[i] == ')') break;
    if (i >= end || b[i] != ',') return 0;
    i++;
  }
  for (uint32_t k = 0; k < n; k++) {
    tok t = {T_PERCENT, false, '%', at[k], len[k]};
    push_operand(p, t);
  }
  return i + 1;
}

/* trailer ::= ':' ( '(' types ')' '->' (type | '(' types ')') | type )   at b[colon] == ':', with
 * `word<...>` types and nothing after a single type that would continue the list. Returns the offset
 * past it, or 0 (nothing taken). */
static uint32_t raw_trailer(P *p, sc_op *op, uint32_t colon) {
  const char *b = p->buf;
  uint32_t end = p->end, base = (uint32_t)p->s_spans.n, i = skip_spaces(p, colon + 1), after = 0;
  sc_span ty;
  if (i < end && b[i] == '(') {
    if (!(i = raw_type_list_at(p, i))) return 0;
    uint32_t outs = (uint32_t)p->s_spans.n;
    i = skip_spaces(p, i);
    if (i + 1 < end && b[i] == '-' && b[i + 1] == '>') {
      after = raw_type_list_at(p, i + 2);
      if (!after && (after = raw_type_at(p, i + 2, &ty))) SC_PUSH(p->a, p->s_spans, ty);
    }
    if (!after) {
      p->s_spans.n = base;
      return 0;
    }
    TAKE(p, p->s_spans, outs, op->result_types, op->nresult_types);
    TAKE(p, p->s_spans, base, op->operand_types, op->noperand_types);
    return after;
  }
  if (!(after = raw_type_at(p, i, &ty))) return 0;
  i = after;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_WS)) i++;
  if (i < end && (b[i] == ',' || b[i] == '/')) return 0; /* a list of types (maybe past a line break) */
  SC_PUSH(p->a, p->s_spans, ty);
  if (op->nresults) TAKE(p, p->s_spans, base, op->result_types, op->nresult_types);
  else TAKE(p, p->s_spans, base, op->operand_types, op->noperand_types);
  return after;
}

/* The piece at b[i] (not white space) of the op being parsed: its end, or 0 (nothing consumed). */
static uint32_t fast_piece(P *p, op_state *st, uint32_t i) {
  const char *b = p->buf;
  uint32_t end = p->end, e;
  unsigned char c = (unsigned char)b[i];
  switch (c) {
  case '%': {
    e = value_name_end(b, i, end);
    if (e == i || (e < end && b[e] == '-')) return 0;
    tok t = {T_PERCENT, false, '%', i, e - i};
    push_operand(p, t);
    return e;
  }
  case ',':
    return i + 1;
  case '(':
    return raw_operand_list(p, i);
  case ':':
    return st->seen_trailer ? 0 : (e = raw_trailer(p, st->op, i)) ? (st->seen_trailer = true, e) : 0;
  case '<':
    for (e = i + 1; e < end && (k_cls[(unsigned char)b[e]] & C_WS); e++) {}
    if (e < end && (b[e] == '/' || (b[e] == '{' && e != i + 1))) return 0;
    if (i + 1 < end && b[i + 1] == '{') { /* properties */
      if (!(e = raw_attr_dict(p, i + 1))) return 0;
      e = skip_spaces(p, e);
      if (e < end && b[e] == '>') return e + 1;
      return 0; /* the dict is pushed; the token path reparses it after dropping them */
    }
    if (i + 1 < end && b[i + 1] == '=') return 0;
    if (repeats(p, i, p->last_group))
      e = i + p->last_group.n; /* the same bytes as the last group scan the same way */
    else if (raw_skip_group(p, i, &e)) p->last_group = sc_span_of(b + i, e - i);
    else return 0;
    sc_attr a = {st->sdy_sharded ? sc_span_of("sharding", 8) : sc_span_of(NULL, 0), sc_span_of(b + i, e - i), i, e};
    SC_PUSH(p->a, p->s_attrs, a);
    return e;
  case '{': {
    /* An attribute dict only when a name and '=' follow on this line (else a region or a set). */
    uint32_t k = skip_spaces(p, i + 1);
    if (k >= end || !((k_cls[(unsigned char)b[k]] & C_WORD) && !(k_cls[(unsigned char)b[k]] & C_DIGIT))) return 0;
    k = skip_spaces(p, word_end(b, k, k + 1, end));
    if (k >= end || b[k] != '=') return 0;
    return raw_attr_dict(p, i);
  }
  case 'l':
    if (end - i <= 4 || memcmp(b + i, "loc(", 4) != 0) return 0;
    if (repeats(p, i, p->last_loc))
      e = i + p->last_loc.n; /* the location of the op before */
    else if (raw_skip_group(p, i + 3, &e)) p->last_loc = sc_span_of(b + i, e - i);
    else return 0;
    st->op->loc_offset = i;
    st->op->loc_len = e - i;
    return e;
  default:
    return 0;
  }
}


/* Fills *h when b[i] begins such a head, which begins_op() accepts too; false for any other shape
 * (result groups, several results, line breaks or comments inside the head), left to the tokens. */
static bool raw_op_head(const P *p, uint32_t i, raw_head *h) {
  const char *b = p->buf;
  uint32_t end = p->end, e;
  if (i >= end || b[i] != '%' || (e = value_name_end(b, i, end)) == i) return false;
  h->res = i, h->res_end = e;
  e = skip_spaces(p, e);
  if (e >= end || b[e] != '=') return false;
  e = skip_spaces(p, e + 1);
  if (e >= end) return false;
  h->name = e;
  if (k_cls[(unsigned char)b[e]] & C_WORD) h->name_end = word_end(b, e, e + 1, end);
  else if (b[e] != '"' || !scan_string(b, e + 1, end, &h->name_end)) return false;
  return true;
}

/* Where the next token would begin, when only white space (no comment) comes before it. */
static uint32_t skip_white(const P *p, uint32_t i) {
  while (i < p->end && (k_cls[(unsigned char)p->buf[i]] & C_WS)) i++;
  return i;
}

/* Consumes the fast pieces from the lexing position (nothing buffered) to the end of the line or the
 * first piece the token path must read. True when the line ended and the next one begins an op with
 * a head raw_op_head() reads: there the token path would end this op too. */
static bool fast_line(P *p, op_state *st) {
  uint32_t i = p->lex_off, e, last = 0;
  for (;;) {
    i = skip_spaces(p, i);
    if (i >= p->end) break;
    if (p->buf[i] == '\n') {
      if (last) p->lex_off = p->last_end = last;
      if (!raw_op_head(p, skip_white(p, i), &p->head)) return false;
      p->head_after = p->lex_off + 1;
      return true;
    }
    size_t attrs = p->s_attrs.n;
    if (!(e = fast_piece(p, st, i))) {
      p->s_attrs.n = attrs; /* drop a properties dict read without its '>' */
      break;
    }
    last = i = e;
  }
  if (last) p->lex_off = p->last_end = last;
  return false;
}

/* operand_names (one per operand, on P.s_spans from `base`) become an array only when some name is not
 * its value's own (unresolved, or `%0#1` for a result of a group): sc_op_operand_name() reads the
 * value's name otherwise, and most ops keep no names at all. */
static void take_operand_names(P *p, sc_op *op, size_t base) {
  bool need = false;
  for (uint32_t i = 0; i < op->noperands && !need; i++) {
    const sc_value *v = op->operands[i];
    sc_span nm = p->s_spans.v[base + i];
    need = !v || v->name.n != nm.n || memcmp(v->name.p, nm.p, nm.n) != 0;
  }
  uint32_t n;
  if (need) TAKE(p, p->s_spans, base, op->operand_names, n);
  else p->s_spans.n = base;
  (void)n;
}

/* Pretty `stablehlo.reduce(%a init: %i), (%b init: %j)` writes (input, init) pairs; the op's operands
 * are its inputs, then their inits (the generic form's order). */
static void order_reduce_operands(P *p, sc_op *op) {
  uint32_t n = op->noperands, half = n / 2;
  if (n < 4 || n % 2) return;
  sc_value **v = sc_arena_alloc(p->a, n * sizeof *v);
  sc_span *names = op->operand_names ? sc_arena_alloc(p->a, n * sizeof *names) : NULL;
  for (uint32_t k = 0; k < half; k++) {
    v[k] = op->operands[2 * k], v[half + k] = op->operands[2 * k + 1];
    if (names) names[k] = op->operand_names[2 * k], names[half + k] = op->operand_names[2 * k + 1];
  }
  op->operands = v;
  if (names) op->operand_names = names;
}

/* The op's lists become exact-size arrays; results get their types; symbols and properties that the
 * generic form keeps in attributes are mapped. */
static void finish_op(P *p, op_state *st, tok first) {
  sc_op *op = st->op;
  /* The op ends at its last consumed token (not at trailing white space or comments). */
  uint32_t end = p->last_end > first.off ? p->last_end : first.off + first.len;
  op->end = end;
  op->text = sc_span_of(p->buf + first.off, end - first.off);
  TAKE(p, p->s_attrs, st->attrs, op->attrs.v, op->attrs.n);
  TAKE(p, p->s_values, st->operands, op->operands, op->noperands);
  take_operand_names(p, op, st->names);
  if (!op->generic && sc_span_eq(op->name, "stablehlo.reduce")) order_reduce_operands(p, op);
  op->regions = st->regions.v;
  op->nregions = (uint32_t)st->regions.n;
  for (uint32_t i = 0; i < op->nresults; i++) {
    if (op->nresult_types == op->nresults) op->results[i]->type = op->result_types[i];
    else if (op->nresult_types == 1) op->results[i]->type = op->result_types[0];
  }
  complete_symbols(p->a, op, st->call_like, st->func_like);
  if (op->generic) map_generic_properties(p, op, st->func_like);
}

/* op ::= result-list? op-name piece*
 * The pieces run until a token that begins the next op (or a top-level item) on a new line, or the
 * '}' that closes the enclosing region. The first token is next and begins an op. */
static sc_op *parse_op(P *p, sc_block *block, sc_op *parent_op, const raw_head *h) {
  tok first = h ? (tok){T_PERCENT, false, '%', h->res, h->res_end - h->res} : peek(p, 0);
  sc_op *op = new_op(p, block, parent_op, first.off);
  if (!op) return NULL;
  op_state st = {op, false, false, false, false, p->s_attrs.n, p->s_values.n, p->s_spans.n, {0}, {0}};
  if (h) { /* read by raw_op_head(): one result, then the name */
    op->results = sc_arena_alloc(p->a, sizeof *op->results);
    op->results[0] = new_value(p, tspan(p, first), first.off);
    op->results[0]->def = op;
    op->nresults = 1;
    tok name = {p->buf[h->name] == '"' ? T_STRING : T_WORD, false, p->buf[h->name], h->name, h->name_end - h->name};
    parse_op_name(p, &st, name);
    p->lex_off = p->last_end = h->name_end;
  } else if (!parse_result_list(p, op) || !parse_op_name(p, &st, next(p))) {
    return NULL;
  }
  st.operands = p->s_values.n;
  uint32_t prev_off = UINT32_MAX;
  for (;;) {
    if (failed(p)) return NULL;
    if (!p->nla && fast_line(p, &st)) break;
    tok t = peek(p, 0);
    if (t.kind == T_EOF) break;
    /* Every pass consumes at least one token; a pass that did not is a parser bug, reported as an
     * error instead of a hang. */
    if (t.off == prev_off) {
      fail_at(p, t.off, "internal parser error: no progress at this token (please report)");
      return NULL;
    }
    prev_off = t.off;
    if (t.bol && (begins_op(p, 0) || begins_toplevel_item(p, 0))) break;
    if (is_punct(t, p, '}') || is_punct(t, p, ')') || is_punct(t, p, ']') || is_punct(t, p, '>')) {
      if (t.ch == '}' && p->depth > 0) break; /* closes the enclosing region */
      if (t.ch == '}') fail_at(p, t.off, "unexpected '}' with no open region");
      else fail_at(p, t.off, "unexpected '%c' with no matching opening bracket", t.ch);
      return NULL;
    }
    check_bad(p, t);
    if (failed(p) || !parse_op_piece(p, &st, t)) return NULL;
  }
  if (failed(p)) return NULL;
  finish_op(p, &st, first);
  if (failed(p)) return NULL;
  return op;
}

/* Ops of one block until '}' (not consumed), a new block label, or EOF at top level. */
static void parse_block_ops(P *p, sc_block *b, sc_op *parent_op) {
  size_t base = p->s_ops.n;
  raw_head h;
  for (;;) {
    if (failed(p)) return;
    sc_op *op;
    if (!p->nla && ((p->head_after == p->lex_off + 1 && (h = p->head, true)) ||
                    raw_op_head(p, skip_white(p, p->lex_off), &h))) {
      p->head_after = 0;
      if (!(op = parse_op(p, b, parent_op, &h))) return;
      goto parsed;
    }
    tok t = peek(p, 0);
    if (t.kind == T_EOF || is_punct(t, p, '}') || t.kind == T_CARET) break;
    if (p->depth == 0 && (begins_toplevel_item(p, 0))) break;
    check_bad(p, t);
    if (failed(p)) return;
    if (!begins_op(p, 0)) {
      fail_at(p, t.off, "expected an operation, found '%.*s'", (int)(t.len > 40 ? 40 : t.len), p->buf + t.off);
      return;
    }
    if (!(op = parse_op(p, b, parent_op, NULL))) return;
  parsed:
    SC_PUSH(p->a, p->s_ops, op);
    for (uint32_t i = 0; i < op->nresults; i++)
      if (i == 0 || op->results[i]->name.p != op->results[i - 1]->name.p) define_value(p, op->results[i]);
  }
  TAKE(p, p->s_ops, base, b->ops, b->nops);
}

/* sc_module.ops: every op under `root` in preorder, numbered by it. Ops are made in preorder, so the
 * array is built once at the end at its exact size (growing it by doubling while parsing cost ~3x the
 * bytes, as the arena keeps every abandoned copy). An explicit stack: nesting is only bounded by
 * max_depth. */
static sc_op **preorder_ops(P *p, sc_op *root, uint32_t nops) {
  typedef struct {
    const sc_op *op;
    uint32_t region, block, index;
  } frame;
  sc_op **ops = sc_arena_calloc(p->a, nops ? nops : 1, sizeof *ops);
  SC_VEC(frame) stack = {0};
  uint32_t n = 0;
  root->id = n;
  ops[n++] = root;
  SC_PUSH(p->a, stack, ((frame){root, 0, 0, 0}));
  while (stack.n) {
    frame *f = &stack.v[stack.n - 1];
    if (f->region >= f->op->nregions) {
      stack.n--;
      continue;
    }
    const sc_region *r = f->op->regions[f->region];
    if (f->block >= r->nblocks) {
      f->region++, f->block = 0;
      continue;
    }
    const sc_block *b = r->blocks[f->block];
    sc_op *nested = NULL; /* the next op with regions: its ops come before the rest of this block's */
    while (f->index < b->nops && !nested) {
      sc_op *op = b->ops[f->index++];
      if (n == nops) continue; /* cannot happen: every op made is in the tree */
      op->id = n;
      ops[n++] = op;
      if (op->nregions) nested = op;
    }
    if (nested) SC_PUSH(p->a, stack, ((frame){nested, 0, 0, 0})); /* may move `f` */
    else f->block++, f->index = 0;
  }
  return ops;
}

static sc_region *parse_region(P *p, sc_op *parent, value_vec *entry_args) {
  tok open = next(p); /* '{' */
  if (p->depth + 1 > p->in->max_depth) {
    fail_at(p, open.off, "nesting deeper than %u levels", p->in->max_depth);
    p->err->limit = true;
    return NULL;
  }
  p->depth++;
  size_t mark = p->undo.n;
  sc_region *r = sc_arena_alloc(p->a, sizeof *r);
  r->parent = parent;
  SC_VEC(sc_block *) blocks = {0};
  bool first = true;
  for (;;) {
    if (failed(p)) break;
    tok t = peek(p, 0);
    if (is_punct(t, p, '}')) {
      next(p);
      break;
    }
    if (t.kind == T_EOF) {
      sc_pos ps = pos_of(p, open.off);
      fail_at(p, t.off, "unexpected end of input: region '{' opened at line %u, column %u is not closed", ps.line,
              ps.col);
      break;
    }
    sc_block *b = sc_arena_alloc(p->a, sizeof *b);
    b->parent = r;
    value_vec args = {0};
    if (t.kind == T_CARET) {
      next(p);
      b->label = tspan(p, t);
      if (is_punct(peek(p, 0), p, '(')) {
        tok po = next(p);
        while (!failed(p) && !is_punct(peek(p, 0), p, ')')) {
          tok u = peek(p, 0);
          if (u.kind != T_PERCENT || !is_punct(peek(p, 1), p, ':')) {
            check_bad(p, u);
            sc_pos ps = pos_of(p, po.off);
            fail_at(p, u.off, "expected a block argument '%%name: type' in the list opened at line %u, column %u", ps.line,
                    ps.col);
            break;
          }
          sc_value *v = parse_block_arg(p);
          SC_PUSH(p->a, args, v);
          if (is_punct(peek(p, 0), p, ',')) next(p);
        }
        if (!failed(p)) next(p);
      }
      tok colon = next(p);
      if (!failed(p) && !is_punct(colon, p, ':')) {
        check_bad(p, colon);
        fail_at(p, colon.off, "expected ':' after the block label");
      }
    } else if (first && entry_args) {
      for (size_t i = 0; i < entry_args->n; i++) SC_PUSH(p->a, args, entry_args->v[i]);
    }
    for (size_t i = 0; i < args.n; i++) {
      args.v[i]->block = b;
      args.v[i]->index = (uint32_t)i;
      define_value(p, args.v[i]);
    }
    b->args = args.v;
    b->nargs = (uint32_t)args.n;
    parse_block_ops(p, b, parent);
    SC_PUSH(p->a, blocks, b);
    first = false;
  }
  scope_pop(p, mark);
  p->depth--;
  r->blocks = blocks.v;
  r->nblocks = (uint32_t)blocks.n;
  return failed(p) ? NULL : r;
}

sc_module *sc_parse_mlir(const sc_parse_input *in, sc_parse_error *err) {
  P p = {0};
  p.in = in;
  p.a = in->arena;
  p.seed = sc_arena_hash_seed(p.a);
  p.buf = in->buf;
  p.begin = in->begin;
  p.end = in->end;
  p.lex_off = in->begin;
  p.err = err;
  memset(err, 0, sizeof *err);

  sc_module *m = sc_arena_alloc(p.a, sizeof *m);
  m->format = SC_FMT_STABLEHLO;
  m->buf = in->buf;
  m->len = in->len;
  m->base_offset = in->begin;
  m->end_offset = in->end;
  p.m = m;

  /* The implicit top-level module holds every top-level op; an explicit lone `module` replaces it. */
  sc_op *root = sc_arena_alloc(p.a, sizeof *root);
  root->name = sc_span_of("builtin.module", 14);
  root->pos.offset = in->begin;
  p.nops = 1;
  sc_region *rr = sc_arena_alloc(p.a, sizeof *rr);
  sc_block *rb = sc_arena_alloc(p.a, sizeof *rb);
  rr->parent = root;
  rb->parent = rr;
  SC_VEC(sc_op *) top = {0};
  p.depth = 0;
  for (;;) {
    if (failed(&p)) break;
    tok t = peek(&p, 0);
    if (t.kind == T_EOF) break;
    check_bad(&p, t);
    if (failed(&p)) break;
    if (t.kind == T_RESOURCES) {
      next(&p);
      continue;
    }
    if ((t.kind == T_HASH || t.kind == T_BANG) && is_punct(peek(&p, 1), &p, '=')) {
      next(&p);
      next(&p);
      tok v = peek(&p, 0);
      uint32_t e = v.off;
      /* The value runs to the next top-level item. */
      while (!failed(&p)) {
        tok u = peek(&p, 0);
        if (u.kind == T_EOF || (u.bol && u.off != v.off && (begins_op(&p, 0) || begins_toplevel_item(&p, 0)))) break;
        if (is_punct(u, &p, ')') || is_punct(u, &p, ']') || is_punct(u, &p, '}') || is_punct(u, &p, '>')) {
          fail_at(&p, u.off, "unexpected '%c' in the definition of '%.*s'", p.buf[u.off], (int)t.len, p.buf + t.off);
          break;
        }
        e = skip_unit(&p);
      }
      sc_alias al = {tspan(&p, t), sc_span_of(p.buf + v.off, e > v.off ? e - v.off : 0)};
      SC_PUSH(p.a, p.aliases, al);
      continue;
    }
    if (is_punct(t, &p, '}')) {
      fail_at(&p, t.off, "unexpected '}' with no open region");
      break;
    }
    if (!begins_op(&p, 0)) {
      fail_at(&p, t.off, "expected an operation or a definition at top level, found '%.*s'",
              (int)(t.len > 40 ? 40 : t.len), p.buf + t.off);
      break;
    }
    /* Parse top-level ops one at a time so `#alias =` lines between them are handled here. */
    sc_op *op = parse_op(&p, rb, root, NULL);
    if (!op) break;
    SC_PUSH(p.a, top, op);
  }
  if (failed(&p)) return NULL;
  if (top.n == 0) {
    fail_at(&p, in->end, "empty input: no module or operation found");
    return NULL;
  }
  rb->ops = top.v;
  rb->nops = (uint32_t)top.n;
  if (top.n == 1 && sc_span_eq(top.v[0]->name, "builtin.module")) {
    /* Drop the implicit root: the explicit module is the root. Renumber ids and re-parent. */
    sc_op *mod = top.v[0];
    mod->parent_block = NULL;
    mod->parent_op = NULL;
    m->module = mod;
  } else {
    rr->blocks = sc_arena_alloc(p.a, sizeof *rr->blocks);
    rr->blocks[0] = rb;
    rr->nblocks = 1;
    root->regions = sc_arena_alloc(p.a, sizeof *root->regions);
    root->regions[0] = rr;
    root->nregions = 1;
    root->end = in->end;
    root->text = sc_span_of(in->buf + in->begin, in->end - in->begin);
    m->module = root;
  }
  m->nops = m->module == root ? p.nops : p.nops - 1;
  m->ops = preorder_ops(&p, m->module, m->nops);
  if (m->module == root)
    for (uint32_t i = 1; i < m->nops; i++) m->ops[i]->depth++; /* ops inside the implicit module */
  m->funcs = p.funcs.v;
  m->nfuncs = (uint32_t)p.funcs.n;
  m->aliases = p.aliases.v;
  m->naliases = (uint32_t)p.aliases.n;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    sc_op *f = m->funcs[i];
    if (sc_span_eq(sc_op_sym_name(f), "main") && !sc_span_eq(sc_op_visibility(f), "private")) m->entry = f;
  }
  if (!m->entry && m->nfuncs) m->entry = m->funcs[0];
  sc_module_index_aliases(p.a, m);
  sc_module_finalize(m);
  return m; /* an op's loc is resolved on demand (sc_op_srcloc): only diagnostics need it */
}
