/* sdy_sharding.c — Shardy attribute text: the tokenizer (sdy_lex.h) and the parsers of meshes
 * (`<["x"=2, "y"=4], device_ids=[...]>`), tensor shardings (`#sdy.sharding<@mesh, [{"x"}, {"y", ?}p1],
 * replicated={...}, unreduced=max{...}>`), per-value sharding lists and axis lists.
 *
 * Parse errors carry Shardy's own parser messages where it has one (sdy/ir/parsers.cc), so users can
 * search them. Semantic checks (unknown axes, sizes, ordering) are not done here: the parsers keep what
 * is written and the `sharding` rules verify it against the mesh. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "model/model.h"
#include "model/quoted.h"
#include "model/sdy_lex.h"

/* ---- tokenizer ---------------------------------------------------------------------------------- */

void sdy_lex_init(sdy_lex *lx, sc_arena *a, ir_span text, uint32_t offset) {
  static const char nothing[1] = "";
  if (!text.p) text = ir_span_of(nothing, 0); /* an empty value may have no bytes at all */
  memset(lx, 0, sizeof *lx);
  lx->a = a;
  lx->start = lx->p = text.p;
  lx->end = text.p + text.n;
  lx->base = offset;
}

/* What the parsers of one module (a chunk of the input) may read of alias definitions in all. */
static uint64_t alias_budget(const ir_module *m) {
  uint64_t len = m->end_offset > m->base_offset ? m->end_offset - m->base_offset : m->len;
  return 4 * len + 4096;
}

md_aliases md_aliases_of(const ir_module *m) {
  md_aliases al = {m, m ? alias_budget(m) : 0};
  return al;
}

void sdy_lex_use_aliases(sdy_lex *lx, md_aliases *aliases) {
  lx->aliases = aliases && aliases->module && aliases->module->naliases ? aliases : NULL;
}

uint32_t sdy_offset(const sdy_lex *lx, const char *at) {
  /* a token of an alias definition is where that definition is */
  const ir_module *m = lx->aliases ? lx->aliases->module : NULL;
  if (m && at >= m->buf && at <= m->buf + m->len) return (uint32_t)(at - m->buf);
  if (at < lx->start) at = lx->start;
  if (at > lx->end) at = lx->end;
  return lx->base + (uint32_t)(at - lx->start);
}

static sdy_frame frame_of(const sdy_lex *lx) { return (sdy_frame){lx->start, lx->p, lx->end, lx->base}; }

static void enter_frame(sdy_lex *lx, sdy_frame f) {
  lx->start = f.start;
  lx->p = f.p;
  lx->end = f.end;
  lx->base = f.base;
}

/* The whole reading position (a peek or a failed eat goes back to it): with aliases, the frames it
 * would return through and the budget too, since a peek may leave a definition and enter another. */
typedef struct {
  sdy_frame at;
  uint8_t depth;
  uint64_t budget;
  sdy_frame outer[SDY_ALIAS_DEPTH];
} lex_mark;

static void mark(const sdy_lex *lx, lex_mark *m) {
  m->at = frame_of(lx);
  m->depth = lx->depth;
  m->budget = 0;
  if (!lx->aliases) return; /* the common case: a position in one text */
  m->budget = lx->aliases->budget;
  memcpy(m->outer, lx->outer, lx->depth * sizeof *lx->outer);
}

static void go_back(sdy_lex *lx, const lex_mark *m) {
  enter_frame(lx, m->at);
  lx->depth = m->depth;
  if (!lx->aliases) return;
  lx->aliases->budget = m->budget;
  memcpy(lx->outer, m->outer, m->depth * sizeof *lx->outer);
}

/* The text read from `from` up to the lexer's position when both lie in the same text; a value that
 * began in an alias's definition and ended after its reference has no one text: empty then. */
static ir_span read_since(const sdy_lex *lx, const char *from) {
  return ir_span_of(from, from >= lx->start && from <= lx->p ? (uint32_t)(lx->p - from) : 0);
}

/* Descends into the definition of the alias `name` (whose reference ends at lx->p) if the module has
 * one, nesting allows and the aliases' budget holds it; false leaves the reference a token. */
static bool enter_alias(sdy_lex *lx, ir_span name) {
  ir_span value;
  const ir_module *m = lx->aliases->module;
  if (lx->depth >= SDY_ALIAS_DEPTH || !ir_alias_value(m, name, &value) || !value.n) return false;
  if (value.n > lx->aliases->budget)
    return sdy_fail_at(lx, name.p, "aliases read in place of their references exceed %" PRIu64 " bytes (4 times the "
                                   "module's size); %.*s is not read",
                       alias_budget(m), SC_SPAN_ARG(name));
  lx->aliases->budget -= value.n;
  lx->outer[lx->depth++] = frame_of(lx);
  enter_frame(lx, (sdy_frame){value.p, value.p, value.p + value.n, (uint32_t)(value.p - m->buf)});
  return true;
}

/* The C locale's classes (lib/ never sets a locale), inline: these run for every byte lexed. */
static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static bool is_alpha(char c) { return (unsigned char)((c | 0x20) - 'a') < 26; }
static bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

static void skip_space(sdy_lex *lx) {
  for (;;) {
    while (lx->p < lx->end && is_space(*lx->p)) lx->p++;
    if (lx->p + 1 < lx->end && lx->p[0] == '/' && lx->p[1] == '/') {
      while (lx->p < lx->end && *lx->p != '\n') lx->p++;
      continue;
    }
    if (lx->p >= lx->end && lx->depth) { /* the end of an alias's definition: back to its reference */
      enter_frame(lx, lx->outer[--lx->depth]);
      continue;
    }
    return;
  }
}

static bool is_id_start(char c) { return is_alpha(c) || c == '_'; }
static bool is_id_char(char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c == '.'; }

static sdy_tok lex_one(sdy_lex *lx) {
  sdy_tok t;
  memset(&t, 0, sizeof t);
  skip_space(lx);
  const char *p = lx->p, *e = lx->end;
  t.at = p;
  if (p >= e) {
    t.kind = SDY_EOF;
    t.text = ir_span_of(p, 0);
    return t;
  }
  char c = *p;
  if (c == '"') {
    const char *q = md_quoted_end(p, e);
    if (!q) {
      t.kind = SDY_BAD;
      t.text = ir_span_of(p, (uint32_t)(e - p));
      lx->p = e;
      return t;
    }
    t.kind = SDY_STR;
    t.text = ir_span_of(p + 1, (uint32_t)(q - p - 1));
    lx->p = q + 1;
    return t;
  }
  if (isdigit((unsigned char)c) || (c == '-' && p + 1 < e && isdigit((unsigned char)p[1]))) {
    const char *q = p;
    bool neg = false;
    if (*q == '-') {
      neg = true;
      q++;
    }
    uint64_t v = 0;
    bool ovf = false;
    while (q < e && isdigit((unsigned char)*q)) {
      unsigned d = (unsigned)(*q - '0');
      if (v > (UINT64_C(9223372036854775807) - d) / 10) ovf = true;
      else v = v * 10 + d;
      q++;
    }
    t.kind = SDY_INT;
    t.overflow = ovf;
    t.ival = neg ? -(int64_t)v : (int64_t)v;
    t.text = ir_span_of(p, (uint32_t)(q - p));
    lx->p = q;
    return t;
  }
  if (c == '-' && p + 1 < e && p[1] == '>') {
    t.kind = SDY_ARROW;
    t.text = ir_span_of(p, 2);
    lx->p = p + 2;
    return t;
  }
  if (is_id_start(c) || c == '#' || c == '!') { /* an identifier, or #attr / !type with its sigil */
    const char *q = p + 1;
    while (q < e && is_id_char(*q)) q++;
    t.kind = is_id_start(c) ? SDY_IDENT : SDY_HASH;
    t.text = ir_span_of(p, (uint32_t)(q - p));
    lx->p = q;
    /* `#name` not followed by `<` (a dialect attribute's body) may be an alias to read instead */
    if (c == '#' && lx->aliases && !(q < e && *q == '<') && enter_alias(lx, t.text)) return lex_one(lx);
    return t;
  }
  if (c == '@') {
    const char *q = p + 1;
    if (q < e && *q == '"') { /* @"quoted name"; an unclosed one runs to the end */
      const char *r = md_quoted_end(q, e);
      t.kind = SDY_SYM;
      t.text = ir_span_of(q + 1, (uint32_t)((r ? r : e) - q - 1));
      lx->p = r ? r + 1 : e;
      return t;
    }
    while (q < e && (is_id_char(*q) || *q == '-')) q++;
    t.kind = SDY_SYM;
    t.text = ir_span_of(p + 1, (uint32_t)(q - p - 1));
    lx->p = q;
    return t;
  }
  if (c == '%') {
    const char *q = p + 1;
    while (q < e && (is_id_char(*q) || *q == '#')) q++;
    t.kind = SDY_VALUE;
    t.text = ir_span_of(p, (uint32_t)(q - p));
    lx->p = q;
    return t;
  }
  t.kind = SDY_PUNCT;
  t.ch = c;
  t.text = ir_span_of(p, 1);
  lx->p = p + 1;
  return t;
}

sdy_tok sdy_next(sdy_lex *lx) { return lex_one(lx); }

sdy_tok sdy_peek(sdy_lex *lx) {
  lex_mark m;
  mark(lx, &m);
  sdy_tok t = lex_one(lx);
  go_back(lx, &m);
  return t;
}

bool sdy_at_end(sdy_lex *lx) { return sdy_peek(lx).kind == SDY_EOF; }

bool sdy_eat(sdy_lex *lx, char c) {
  if (!lx->aliases && c != '-' && c != '"' && c != '@' && c != '%' && c != '#' && c != '!' && c != '_' &&
      !isalnum((unsigned char)c)) {
    /* `c` can only be a one-character token: compare the next byte instead of lexing it twice (an alias
     * reference next would need lexing: not with aliases). */
    const char *save = lx->p;
    skip_space(lx);
    if (lx->p < lx->end && *lx->p == c) {
      lx->p++;
      return true;
    }
    lx->p = save;
    return false;
  }
  sdy_tok t = sdy_peek(lx);
  if (t.kind == SDY_PUNCT && t.ch == c) {
    lex_one(lx);
    return true;
  }
  return false;
}

bool sdy_eat_kw(sdy_lex *lx, const char *kw) {
  sdy_tok t = sdy_peek(lx);
  if (t.kind == SDY_IDENT && ir_span_eq(t.text, kw)) {
    lex_one(lx);
    return true;
  }
  return false;
}

static bool vfail_at(sdy_lex *lx, const char *at, const char *fmt, va_list ap) {
  if (lx->err) return false;
  lx->err = ar_vprintf(lx->a, fmt, ap);
  lx->err_offset = sdy_offset(lx, at);
  return false;
}

bool sdy_fail_at(sdy_lex *lx, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail_at(lx, at, fmt, ap);
  va_end(ap);
  return false;
}

bool sdy_fail(sdy_lex *lx, const char *fmt, ...) {
  sdy_tok t = sdy_peek(lx);
  va_list ap;
  va_start(ap, fmt);
  vfail_at(lx, t.at, fmt, ap);
  va_end(ap);
  return false;
}

bool sdy_expect(sdy_lex *lx, char c) {
  if (sdy_eat(lx, c)) return true;
  return sdy_fail(lx, "expected '%c'", c);
}

/* Where the token starting at `p` (not space) ends, without building it: the same branches as lex_one.
 * *punct is the character of a one-character punctuation token, else 0; NULL for an unterminated string
 * (SDY_BAD, which ends a skip). */
static const char *token_end(const char *p, const char *e, char *punct) {
  char c = *p;
  *punct = 0;
  if (c == '"') {
    const char *q = md_quoted_end(p, e);
    return q ? q + 1 : NULL;
  }
  if (isdigit((unsigned char)c) || (c == '-' && p + 1 < e && isdigit((unsigned char)p[1]))) {
    const char *q = p + 1;
    while (q < e && isdigit((unsigned char)*q)) q++;
    return q;
  }
  if (c == '-' && p + 1 < e && p[1] == '>') return p + 2;
  if (is_id_start(c)) {
    const char *q = p + 1;
    while (q < e && is_id_char(*q)) q++;
    return q;
  }
  if (c == '@') {
    const char *q = p + 1;
    if (q < e && *q == '"') {
      const char *r = md_quoted_end(q, e);
      return r ? r + 1 : e;
    }
    while (q < e && (is_id_char(*q) || *q == '-')) q++;
    return q;
  }
  if (c == '%' || c == '#' || c == '!') {
    const char *q = p + 1;
    while (q < e && (is_id_char(*q) || (c == '%' && *q == '#'))) q++;
    return q;
  }
  *punct = c;
  return p + 1;
}

/* The end of the bracket group whose opening bracket ends just before `p` (depth 1 there): the token
 * loop of lex_one reduced to bytes. Only strings, `@`symbols (which may hold '-'), `->` and `//`
 * comments need care: no other token holds a bracket. NULL if a string is not closed (SDY_BAD). */
static const char *group_end(const char *p, const char *e) {
  int depth = 1;
  while (p < e) {
    char c = *p;
    switch (c) {
    case '<': case '[': case '{': case '(': depth++, p++; break;
    case '>': case ']': case '}': case ')':
      p++;
      if (--depth == 0) return p;
      break;
    case '"':
      p = md_quoted_end(p, e);
      if (!p) return NULL;
      p++;
      break;
    case '-': p += p + 1 < e && p[1] == '>' ? 2 : 1; break;
    case '@': {
      char punct;
      p = token_end(p, e, &punct);
      break;
    }
    case '/':
      if (p + 1 < e && p[1] == '/') {
        while (p < e && *p != '\n') p++;
      } else {
        p++;
      }
      break;
    default: p++;
    }
  }
  return e;
}

/* Runs once per item of every sdy op's custom syntax, so it steps over tokens without making them. */
void sdy_skip_value(sdy_lex *lx) {
  skip_space(lx);
  if (lx->p >= lx->end) return;
  char c;
  const char *q = token_end(lx->p, lx->end, &c);
  if (q && (c == '<' || c == '[' || c == '{' || c == '(')) q = group_end(q, lx->end);
  lx->p = q ? q : lx->end; /* an unterminated string: lex_one stops at the end */
}

/* ---- lists -------------------------------------------------------------------------------------- */

/* What a list item parser returns: the item failed (error recorded), parsed, or parsed and must be the
 * last one (the `?` of a dimension sharding). */
enum { ITEM_FAIL = -1, ITEM_OK = 0, ITEM_LAST = 1 };
typedef int (*item_fn)(sdy_lex *lx, void *user);

/* list ::= `close` | item (`,` item)* `close`   (the opening bracket already consumed) */
static bool parse_list(sdy_lex *lx, char close, item_fn item, void *user) {
  if (sdy_eat(lx, close)) return true;
  for (;;) {
    int r = item(lx, user);
    if (r == ITEM_FAIL) return false;
    if (r == ITEM_OK && sdy_eat(lx, ',')) continue;
    return sdy_expect(lx, close);
  }
}

/* ---- meshes ------------------------------------------------------------------------------------- */

typedef SC_VEC(md_axis) axis_vec;
typedef SC_VEC(int64_t) id_vec;

/* mesh-axis ::= string `=` int */
static int mesh_axis_item(sdy_lex *lx, void *user) {
  sdy_tok name = sdy_next(lx);
  if (name.kind != SDY_STR) {
    sdy_fail_at(lx, name.at, "failed to parse Sdy_Mesh parameter 'axes': expected a quoted axis name");
    return ITEM_FAIL;
  }
  if (!sdy_expect(lx, '=')) return ITEM_FAIL;
  sdy_tok size = sdy_next(lx);
  if (size.kind != SDY_INT) {
    sdy_fail_at(lx, size.at, "failed to parse Sdy_Mesh parameter 'axes': expected an integer axis size");
    return ITEM_FAIL;
  }
  md_axis ax = {name.text, size.overflow ? INT64_MAX : size.ival, SC_AXIS_AUTO};
  SC_PUSH(lx->a, *(axis_vec *)user, ax);
  return ITEM_OK;
}

/* device-id ::= int */
static int device_id_item(sdy_lex *lx, void *user) {
  sdy_tok v = sdy_next(lx);
  if (v.kind != SDY_INT) {
    sdy_fail_at(lx, v.at, "expected integer device id");
    return ITEM_FAIL;
  }
  SC_PUSH(lx->a, *(id_vec *)user, v.overflow ? INT64_MAX : v.ival);
  return ITEM_OK;
}

md_mesh *sdy_parse_mesh_body(sdy_lex *lx) {
  sdy_tok first = sdy_peek(lx); /* `#sdy.mesh<...>` where an alias gave the attribute */
  if (first.kind == SDY_HASH && ir_span_eq(first.text, "#sdy.mesh")) sdy_next(lx);
  const char *at = sdy_peek(lx).at;
  if (!sdy_expect(lx, '<')) return NULL;
  if (!sdy_expect(lx, '[')) return NULL;
  md_mesh *m = ar_alloc(lx->a, sizeof *m);
  m->offset = sdy_offset(lx, at);
  axis_vec axes = {0};
  if (!parse_list(lx, ']', mesh_axis_item, &axes)) return NULL;
  m->axes = axes.v;
  m->naxes = (uint32_t)axes.n;
  if (sdy_eat(lx, ',')) {
    if (!sdy_eat_kw(lx, "device_ids")) {
      sdy_fail(lx, "expected 'device_ids'");
      return NULL;
    }
    if (!sdy_expect(lx, '=') || !sdy_expect(lx, '[')) return NULL;
    id_vec ids = {0};
    if (!parse_list(lx, ']', device_id_item, &ids)) return NULL;
    m->device_ids = ids.v;
    m->ndevice_ids = (uint32_t)ids.n;
  }
  if (!sdy_expect(lx, '>')) return NULL;
  int64_t prod = 1;
  for (uint32_t i = 0; i < m->naxes; i++) {
    int64_t s = m->axes[i].size;
    if (s <= 0) {
      prod = 0;
      continue;
    }
    if (prod > INT64_MAX / s) prod = INT64_MAX;
    else prod *= s;
  }
  m->devices = prod;
  m->maximal = m->naxes == 0 && m->ndevice_ids == 1;
  md_mesh_index_axes(lx->a, m);
  return m;
}

md_mesh *md_parse_sdy_mesh(sc_arena *a, ir_span text, uint32_t offset, const char **error) {
  sdy_lex lx;
  sdy_lex_init(&lx, a, text, offset);
  sdy_tok t = sdy_peek(&lx);
  if (t.kind == SDY_IDENT && ir_span_eq(t.text, "mesh")) sdy_next(&lx); /* sdy_parse_mesh_body takes `#sdy.mesh` */
  md_mesh *m = sdy_parse_mesh_body(&lx);
  if (m && !sdy_at_end(&lx)) {
    sdy_fail(&lx, "unexpected text after the mesh");
    m = NULL;
  }
  if (!m && error) *error = lx.err ? lx.err : "failed to parse MeshAttr";
  if (m) m->offset = offset;
  return m;
}

/* ---- axis refs ---------------------------------------------------------------------------------- */

bool sdy_parse_axis_ref(sdy_lex *lx, md_axis_ref *out) {
  memset(out, 0, sizeof *out);
  sdy_tok name = sdy_next(lx);
  if (name.kind != SDY_STR) {
    return sdy_fail_at(lx, name.at,
                       "failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`: "
                       "expected string, got '%.*s'",
                       SC_SPAN_ARG(name.text));
  }
  out->name = name.text;
  if (sdy_eat(lx, ':')) {
    if (!sdy_expect(lx, '(')) return false;
    sdy_tok pre = sdy_next(lx);
    if (pre.kind != SDY_INT) return sdy_fail_at(lx, pre.at, "expected integer sub-axis pre-size");
    if (!sdy_expect(lx, ')')) return false;
    sdy_tok size = sdy_next(lx);
    if (size.kind != SDY_INT) return sdy_fail_at(lx, size.at, "expected integer sub-axis size");
    out->sub = true;
    out->pre_size = pre.overflow ? INT64_MAX : pre.ival;
    out->size = size.overflow ? INT64_MAX : size.ival;
  }
  return true;
}

typedef struct {
  SC_VEC(md_axis_ref) refs;
  bool *open; /* NULL: `?` is not allowed */
} axes_list;

/* axis-item ::= axis-ref | `?` (last, only in a dimension sharding) */
static int axis_item(sdy_lex *lx, void *user) {
  axes_list *l = user;
  if (l->open && sdy_eat(lx, '?')) {
    *l->open = true;
    return ITEM_LAST;
  }
  md_axis_ref r;
  if (!sdy_parse_axis_ref(lx, &r)) return ITEM_FAIL;
  SC_PUSH(lx->a, l->refs, r);
  return ITEM_OK;
}

/* The axis refs after a `{`, up to and including the `}`. With `open`, a `?` ends the list too (a
 * dimension sharding's `{"x", ?}`) and sets *open; without it, `?` is not an axis ref. */
static bool parse_axes_to_brace(sdy_lex *lx, bool *open, md_axis_ref **out, uint32_t *n) {
  axes_list l = {{0}, open};
  if (!parse_list(lx, '}', axis_item, &l)) return false;
  *out = l.refs.v;
  *n = (uint32_t)l.refs.n;
  return true;
}

bool sdy_parse_axis_list(sdy_lex *lx, md_axis_ref **out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  if (!sdy_eat(lx, '{')) return sdy_fail(lx, "expected '{'");
  return parse_axes_to_brace(lx, NULL, out, n);
}

/* ---- tensor shardings --------------------------------------------------------------------------- */

static bool parse_priority(sdy_lex *lx, int64_t *prio) {
  sdy_tok t = sdy_next(lx);
  ir_span s = t.text;
  if (t.kind != SDY_IDENT || s.n < 2 || s.p[0] != 'p') {
    return sdy_fail_at(lx, t.at, "expecting priority in format 'p<number>', got: %.*s", SC_SPAN_ARG(s));
  }
  for (uint32_t i = 1; i < s.n; i++)
    if (!isdigit((unsigned char)s.p[i]))
      return sdy_fail_at(lx, t.at, "expecting priority in format 'p<number>', got: %.*s", SC_SPAN_ARG(s));
  if (s.n > 2 && s.p[1] == '0')
    return sdy_fail_at(lx, t.at, "priorities with leading zeros are not allowed, got: %.*s", SC_SPAN_ARG(s));
  uint64_t v = 0;
  for (uint32_t i = 1; i < s.n; i++) {
    unsigned d = (unsigned)(s.p[i] - '0');
    if (v > (UINT64_C(9223372036854775807) - d) / 10)
      return sdy_fail_at(lx, t.at, "expecting integer priority, got: %.*s", SC_SPAN_ARG(s));
    v = v * 10 + d;
  }
  *prio = (int64_t)v;
  return true;
}

static bool parse_dim(sdy_lex *lx, md_dim_sharding *d) {
  memset(d, 0, sizeof *d);
  d->priority = -1;
  if (!sdy_eat(lx, '{')) {
    return sdy_fail(lx,
                    "failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a "
                    "`::llvm::ArrayRef<DimensionShardingAttr>`: expected '{'");
  }
  if (!parse_axes_to_brace(lx, &d->open, &d->axes, &d->naxes)) return false;
  if (sdy_peek(lx).kind == SDY_IDENT) {
    if (!parse_priority(lx, &d->priority)) return false;
  }
  return true;
}

typedef SC_VEC(md_dim_sharding) dim_vec;

/* dim-item ::= dimension sharding */
static int dim_item(sdy_lex *lx, void *user) {
  md_dim_sharding d;
  if (!parse_dim(lx, &d)) return ITEM_FAIL;
  SC_PUSH(lx->a, *(dim_vec *)user, d);
  return ITEM_OK;
}

const md_tiles md_no_tiles;

md_sharding *md_sharding_new(sc_arena *a, md_sharding_kind kind, md_sharding_source source) {
  md_sharding *s = ar_alloc(a, sizeof *s);
  s->kind = kind;
  s->source = source;
  s->maximal_device = -1;
  s->shard_group = -1;
  s->tiles = &md_no_tiles;
  return s;
}

md_sharding *sdy_parse_tensor_sharding(sdy_lex *lx) {
  sdy_tok first = sdy_peek(lx);
  if (first.kind == SDY_HASH) {
    if (!ir_span_eq(first.text, "#sdy.sharding")) {
      sdy_fail(lx, "expected #sdy.sharding, got %.*s", SC_SPAN_ARG(first.text));
      return NULL;
    }
    sdy_next(lx);
  }
  const char *start = sdy_peek(lx).at;
  if (!sdy_expect(lx, '<')) return NULL;
  md_sharding *s = md_sharding_new(lx->a, SC_SHARDING_NAMED, SC_SHARDING_FROM_SDY);
  s->offset = sdy_offset(lx, first.at);
  sdy_tok t = sdy_peek(lx);
  if (t.kind == SDY_SYM) {
    sdy_next(lx);
    s->mesh_name = t.text;
  } else if (t.kind == SDY_IDENT && ir_span_eq(t.text, "mesh")) {
    sdy_next(lx);
    md_mesh *m = sdy_parse_mesh_body(lx);
    if (!m) {
      const char *why = lx->err;
      lx->err = NULL;
      sdy_fail_at(lx, t.at, "failed to parse MeshAttr%s%s", why ? ": " : "", why ? why : "");
      return NULL;
    }
    s->mesh = m;
  } else {
    sdy_fail(lx, "expecting MeshAttr or FlatSymbolRefAttr, got: %.*s", SC_SPAN_ARG(t.text));
    return NULL;
  }
  if (!sdy_expect(lx, ',')) return NULL;
  if (!sdy_eat(lx, '[')) {
    sdy_fail(lx, "expected '['");
    return NULL;
  }
  dim_vec dims = {0};
  if (!parse_list(lx, ']', dim_item, &dims)) return NULL;
  s->dims = dims.v;
  s->rank = (uint32_t)dims.n;
  bool seen_repl = false, seen_unred = false;
  /* `, replicated={...}` and `, unreduced=[sum|max|min]{...}`, each at most once */
  while (sdy_eat(lx, ',')) {
    sdy_tok kw = sdy_peek(lx);
    bool repl = kw.kind == SDY_IDENT && ir_span_eq(kw.text, "replicated") && !seen_repl;
    bool unred = kw.kind == SDY_IDENT && ir_span_eq(kw.text, "unreduced") && !seen_unred;
    if (!repl && !unred) {
      sdy_fail(lx, "failed to parse Sdy_TensorSharding, expected valid named axis list after comma");
      return NULL;
    }
    const char *param = repl ? "replicated_axes" : "unreduced_axes";
    sdy_next(lx);
    seen_repl |= repl;
    seen_unred |= unred;
    if (!sdy_eat(lx, '=')) {
      sdy_fail(lx, "failed to parse Sdy_TensorSharding parameter '%s': expected '='", param);
      return NULL;
    }
    sdy_tok op = sdy_peek(lx);
    if (unred && op.kind == SDY_IDENT) {
      if (ir_span_eq(op.text, "sum")) s->unreduced_op = SC_REDUCE_SUM;
      else if (ir_span_eq(op.text, "max")) s->unreduced_op = SC_REDUCE_MAX;
      else if (ir_span_eq(op.text, "min")) s->unreduced_op = SC_REDUCE_MIN;
      else {
        sdy_fail(lx, "failed to parse Sdy_TensorSharding parameter 'unreduced_axes': expected sum, max or min, got %.*s",
                 SC_SPAN_ARG(op.text));
        return NULL;
      }
      sdy_next(lx);
    }
    if (!sdy_parse_axis_list(lx, repl ? &s->replicated : &s->unreduced, repl ? &s->nreplicated : &s->nunreduced)) {
      const char *why = lx->err;
      lx->err = NULL;
      sdy_fail_at(lx, kw.at, "failed to parse Sdy_TensorSharding parameter '%s': %s", param, why);
      return NULL;
    }
  }
  if (!sdy_expect(lx, '>')) return NULL;
  s->text = read_since(lx, first.at);
  (void)start;
  return s;
}

/* Starts lexing `text` (at `offset` in the input) without its surrounding white space. */
static ir_span lex_trimmed(sdy_lex *lx, sc_arena *a, ir_span text, uint32_t offset) {
  ir_span t = ir_span_trim(text);
  sdy_lex_init(lx, a, t, offset + (uint32_t)(t.p - text.p));
  return t;
}

md_sharding *md_parse_sdy_sharding(sc_arena *a, md_aliases *aliases, ir_span text, uint32_t offset,
                                   const char **error) {
  sdy_lex lx;
  ir_span t = lex_trimmed(&lx, a, text, offset);
  sdy_lex_use_aliases(&lx, aliases);
  if (ir_span_starts(t, "#sdy.sharding_per_value")) {
    if (error) *error = "should have a sharding attribute of type TensorShardingAttr, got #sdy.sharding_per_value";
    return NULL;
  }
  md_sharding *s = sdy_parse_tensor_sharding(&lx);
  if (s && !sdy_at_end(&lx)) {
    sdy_fail(&lx, "unexpected text after the sharding");
    s = NULL;
  }
  if (!s && error) *error = lx.err ? lx.err : "failed to parse Sdy_TensorSharding";
  return s;
}

typedef SC_VEC(md_sharding *) sharding_vec;

/* sharding-item ::= tensor sharding (its error rewritten as Shardy words it for a per-value list) */
static int sharding_item(sdy_lex *lx, void *user) {
  md_sharding *s = sdy_parse_tensor_sharding(lx);
  if (!s) {
    const char *why = lx->err;
    uint32_t off = lx->err_offset;
    lx->err = NULL;
    sdy_fail(lx,
             "failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a "
             "`::llvm::ArrayRef<TensorShardingAttr>`: %s",
             why ? why : "invalid sharding");
    lx->err_offset = off;
    return ITEM_FAIL;
  }
  SC_PUSH(lx->a, *(sharding_vec *)user, s);
  return ITEM_OK;
}

bool sdy_parse_sharding_list(sdy_lex *lx, md_sharding ***out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  if (!sdy_eat(lx, '[')) return sdy_fail(lx, "expected '['");
  sharding_vec v = {0};
  if (!parse_list(lx, ']', sharding_item, &v)) return false;
  *out = v.v;
  *n = (uint32_t)v.n;
  return true;
}

int md_parse_sdy_sharding_per_value(sc_arena *a, md_aliases *aliases, ir_span text, uint32_t offset,
                                    md_sharding ***out, uint32_t *n, const char **error) {
  sdy_lex lx;
  lex_trimmed(&lx, a, text, offset);
  sdy_lex_use_aliases(&lx, aliases);
  sdy_tok first = sdy_peek(&lx);
  bool wrapped = false;
  if (first.kind == SDY_HASH) {
    if (!ir_span_eq(first.text, "#sdy.sharding_per_value")) {
      if (error) *error = "should have a sharding attribute of type TensorShardingPerValueAttr";
      return -1;
    }
    sdy_next(&lx);
    wrapped = true;
    if (!sdy_expect(&lx, '<')) goto fail;
  }
  if (!sdy_parse_sharding_list(&lx, out, n)) goto fail;
  if (wrapped && !sdy_expect(&lx, '>')) goto fail;
  if (!sdy_at_end(&lx)) {
    sdy_fail(&lx, "unexpected text after the sharding list");
    goto fail;
  }
  return 0;
fail:
  if (error) *error = lx.err ? lx.err : "failed to parse Sdy_TensorShardingPerValue";
  return -1;
}

int md_parse_sdy_axis_names(sc_arena *a, ir_span text, uint32_t offset, md_axis_ref **out, uint32_t *n,
                            const char **error) {
  sdy_lex lx;
  lex_trimmed(&lx, a, text, offset);
  sdy_tok first = sdy_peek(&lx);
  bool wrapped = false;
  /* #sdy<manual_axes{"a"}> (round-trip strings) */
  if (first.kind == SDY_HASH && ir_span_eq(first.text, "#sdy")) {
    sdy_next(&lx);
    if (!sdy_expect(&lx, '<') || !sdy_eat_kw(&lx, "manual_axes")) {
      if (error) *error = lx.err ? lx.err : "expected #sdy<manual_axes{...}>";
      return -1;
    }
    wrapped = true;
  }
  if (!sdy_parse_axis_list(&lx, out, n) || (wrapped && !sdy_expect(&lx, '>'))) {
    if (error) *error = lx.err ? lx.err : "failed to parse the axis list";
    return -1;
  }
  if (!sdy_at_end(&lx)) {
    if (error) *error = "unexpected text after the axis list";
    return -1;
  }
  return 0;
}

/* ---- rendering ---------------------------------------------------------------------------------- */

const char *md_sharding_partition_spec(sc_arena *a, const md_sharding *s) {
  ar_str b = SC_ASTR_INIT(a);
  ar_str_puts(&b, "P(");
  if (!s || s->kind == SC_SHARDING_REPLICATED || s->kind == SC_SHARDING_MAXIMAL || !s->dims) {
    if (s && s->kind == SC_SHARDING_NAMED) {
      for (uint32_t i = 0; i < s->rank; i++) ar_str_puts(&b, i ? ", None" : "None");
    }
    ar_str_puts(&b, ")");
    return ar_str_str(&b);
  }
  for (uint32_t i = 0; i < s->rank; i++) {
    const md_dim_sharding *d = &s->dims[i];
    if (i) ar_str_puts(&b, ", ");
    if (d->naxes == 0) {
      ar_str_puts(&b, d->open ? "P.UNCONSTRAINED" : "None");
      continue;
    }
    if (d->naxes > 1) ar_str_puts(&b, "(");
    uint32_t shown = d->naxes < SC_LIST_SHOWN ? d->naxes : SC_LIST_SHOWN; /* hostile lists: bounded text */
    for (uint32_t j = 0; j < shown; j++) {
      if (j) ar_str_puts(&b, ", ");
      ar_str_puts(&b, "'");
      ar_str_put(&b, d->axes[j].name.p, d->axes[j].name.n);
      ar_str_puts(&b, "'");
    }
    if (shown < d->naxes) ar_str_puts(&b, ", ...");
    if (d->naxes > 1) ar_str_puts(&b, ")");
  }
  ar_str_puts(&b, ")");
  return ar_str_str(&b);
}
