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
#include "front/mlir_text.h"
#include "ir/ir.h"
#include "util/hash.h"

/* ---- errors ---- */

void mt_fail_at(P *p, uint32_t off, const char *fmt, ...) {
  if (p->err->failed) return;
  va_list ap;
  va_start(ap, fmt);
  p->err->failed = true;
  p->err->offset = off;
  p->err->message = ar_vprintf(p->a, fmt, ap);
  va_end(ap);
}

ir_pos mt_pos_of(const P *p, uint32_t off) { return ir_linemap_pos(p->in->lines, off); }

/* ---- lexer ---- */

/* From just after an opening '"': memchr to the closing quote, skipping backslash escapes; linear
 * even for long escape-heavy blobs. Sets *after one past the closing quote; false if unterminated. */
bool mt_scan_string(const char *b, uint32_t i, uint32_t end, uint32_t *after) {
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
    if (!mt_scan_string(b, i + 1, end, &after)) {
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
uint32_t mt_word_end(const char *b, uint32_t off, uint32_t i, uint32_t end) {
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
      tok_one(t, T_WORD, mt_word_end(b, off, i, end) - off);
      return;
    }
  switch (c) {
  case '"':
    if (mt_scan_string(b, i, end, &i)) {
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
void mt_fill(P *p, uint32_t k) {
  if (k >= LOOKAHEAD) k = LOOKAHEAD - 1;
  while (p->nla <= k) {
    tok *t = &p->la[(p->la_head + p->nla++) & (LOOKAHEAD - 1)];
    lex_at(p, p->lex_off, t);
    p->lex_off = t->off + t->len; /* EOF has length 0: lexing it again yields EOF */
  }
}

void mt_check_bad(P *p, tok t) {
  if (t.kind == T_BAD) {
    unsigned char c = (unsigned char)p->buf[p->bad_off];
    if (strcmp(p->bad_msg, "unexpected character") == 0 || strcmp(p->bad_msg, "non-ASCII byte outside a string literal") == 0)
      mt_fail_at(p, p->bad_off, "%s 0x%02x%s%c%s", p->bad_msg, c, isprint(c) ? " ('" : "", isprint(c) ? c : ' ',
              isprint(c) ? "')" : "");
    else mt_fail_at(p, p->bad_off, "%s", p->bad_msg);
  }
}

/* ---- value scopes ---- */

static uint32_t hash_span(const P *p, ir_span s) { return (uint32_t)hash_bytes(s.p, s.n, p->seed); }

static void table_grow(P *p) {
  uint32_t old_n = p->nslots;
  struct slot *old = p->slots;
  uint32_t n = old_n ? old_n * 2 : 256;
  p->slots = ar_calloc(p->a, n, sizeof *p->slots);
  p->nslots = n;
  p->nused = 0;
  /* Rehashing moves slots, so the undo log (by slot index) is rebuilt in terms of new slots. */
  uint32_t *remap = ar_calloc(p->a, old_n ? old_n : 1, sizeof *remap);
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
static uint32_t find_slot(P *p, ir_span name) {
  uint32_t mask = p->nslots - 1, h = hash_span(p, name) & mask, probes = 0;
  while (p->slots[h].name.p &&
         !(p->slots[h].name.n == name.n && sc_bytes_eq(p->slots[h].name.p, name.p, name.n))) {
    h = (h + 1) & mask;
    probes++;
  }
  if (probes > LONG_PROBE) ar_step(p->a, probes);
  return h;
}

void mt_define_value(P *p, ir_value *v) {
  if (!v->name.n) return;
  if ((p->nused + 1) * 2 > p->nslots) table_grow(p);
  uint32_t h = find_slot(p, v->name);
  struct undo u = {h, p->slots[h].v};
  SC_PUSH(p->a, p->undo, u);
  if (!p->slots[h].name.p) p->nused++;
  p->slots[h].name = v->name;
  p->slots[h].v = v;
}

ir_value *mt_lookup_value(P *p, ir_span name) {
  if (!p->nslots) return NULL;
  ir_span base = name;
  long idx = -1;
  const char *hash_mark = name.n ? memchr(name.p, '#', name.n) : NULL; /* "%0#1": result 1 of group %0 */
  if (hash_mark) {
    base.n = (uint32_t)(hash_mark - name.p);
    idx = 0;
    for (const char *q = hash_mark + 1; q < name.p + name.n && idx <= UINT32_MAX; q++) idx = idx * 10 + (*q - '0');
  }
  struct slot *s = &p->slots[find_slot(p, base)];
  if (!s->name.p) return NULL;
  ir_value *v = s->v;
  if (v && idx >= 0) {
    const ir_op *def = ir_value_def(v);
    if (def && idx < (long)def->nresults && ir_op_result(def, (uint32_t)idx)->name.p == v->name.p)
      return ir_op_result(def, (uint32_t)idx);
    return idx == 0 ? v : NULL;
  }
  return v;
}

void mt_scope_pop(P *p, size_t mark) {
  while (p->undo.n > mark) {
    struct undo u = p->undo.v[--p->undo.n];
    p->slots[u.slot].v = u.prev;
  }
}

static void take_operand_names(P *p, ir_op *op, size_t base) {
  bool need = false;
  for (uint32_t i = 0; i < op->noperands && !need; i++) {
    const ir_value *v = op->operands[i];
    ir_span nm = p->s_spans.v[base + i];
    need = !v || v->name.n != nm.n || !sc_bytes_eq(v->name.p, nm.p, nm.n);
  }
  uint32_t n;
  if (need) TAKE(p, p->s_spans, base, ir_op_extra_of(p->a, op)->operand_names, n);
  else p->s_spans.n = base;
  (void)n;
}

/* Pretty `stablehlo.reduce(%a init: %i), (%b init: %j)` writes (input, init) pairs; the op's operands
 * are its inputs, then their inits (the generic form's order). */
static void order_reduce_operands(P *p, ir_op *op) {
  uint32_t n = op->noperands, half = n / 2;
  if (n < 4 || n % 2) return;
  ir_value **v = ar_alloc(p->a, n * sizeof *v);
  ir_span *written = op->extra ? op->extra->operand_names : NULL;
  ir_span *names = written ? ar_alloc(p->a, n * sizeof *names) : NULL;
  for (uint32_t k = 0; k < half; k++) {
    v[k] = op->operands[2 * k], v[half + k] = op->operands[2 * k + 1];
    if (names) names[k] = written[2 * k], names[half + k] = written[2 * k + 1];
  }
  op->operands = v;
  if (names) op->extra->operand_names = names;
}

/* The op's lists become exact-size arrays; results get their types; symbols and properties that the
 * generic form keeps in attributes are mapped. */
static void finish_op(P *p, op_state *st, tok first) {
  ir_op *op = st->op;
  /* The op ends at its last consumed token (not at trailing white space or comments). */
  uint32_t end = p->last_end > first.off ? p->last_end : first.off + first.len;
  op->end = end;
  TAKE(p, p->s_attrs, st->attrs, op->attr_v, op->nattrs);
  TAKE(p, p->s_values, st->operands, op->operands, op->noperands);
  take_operand_names(p, op, st->names);
  if (!op->generic && ir_span_eq(ir_op_name(op), "stablehlo.reduce")) order_reduce_operands(p, op);
  if (st->regions.n) ir_op_extra_of(p->a, op)->regions = st->regions.v;
  op->nregions = (uint16_t)st->regions.n; /* mt_add_region stops at IR_MAX_REGIONS */
  mt_complete_symbols(p->a, op, st->call_like, st->func_like);
  if (op->generic) mt_map_generic_properties(p, op, st->func_like);
}

/* op ::= result-list? op-name piece*
 * The pieces run until a token that begins the next op (or a top-level item) on a new line, or the
 * '}' that closes the enclosing region. The first token is next and begins an op. */
static ir_op *parse_op(P *p, ir_op *parent_op, const raw_head *h) {
  tok first = h ? (tok){T_PERCENT, false, '%', h->res, h->res_end - h->res} : peek(p, 0);
  ir_op *op = mt_new_op(p, parent_op, first.off);
  if (!op) return NULL;
  op_state st = {op, false, false, false, false, p->s_attrs.n, p->s_values.n, p->s_spans.n, {0}, {0}};
  if (h) { /* read by mt_raw_op_head(): one result, then the name */
    ir_span result = tspan(p, first);
    mt_set_results(p, op, &result, 1);
    tok name = {p->buf[h->name] == '"' ? T_STRING : T_WORD, false, p->buf[h->name], h->name, h->name_end - h->name};
    mt_parse_op_name(p, &st, name);
    p->lex_off = p->last_end = h->name_end;
  } else if (!mt_parse_result_list(p, op) || !mt_parse_op_name(p, &st, next(p))) {
    return NULL;
  }
  st.operands = p->s_values.n;
  uint32_t prev_off = UINT32_MAX;
  for (;;) {
    if (failed(p)) return NULL;
    if (!p->nla && mt_fast_line(p, &st)) break;
    tok t = peek(p, 0);
    if (t.kind == T_EOF) break;
    /* Every pass consumes at least one token; a pass that did not is a parser bug, reported as an
     * error instead of a hang. */
    if (t.off == prev_off) {
      mt_fail_at(p, t.off, "internal parser error: no progress at this token (please report)");
      return NULL;
    }
    prev_off = t.off;
    if (t.bol && (mt_begins_op(p, 0) || mt_begins_toplevel_item(p, 0))) break;
    if (is_punct(t, p, '}') || is_punct(t, p, ')') || is_punct(t, p, ']') || is_punct(t, p, '>')) {
      if (t.ch == '}' && p->depth > 0) break; /* closes the enclosing region */
      if (t.ch == '}') mt_fail_at(p, t.off, "unexpected '}' with no open region");
      else mt_fail_at(p, t.off, "unexpected '%c' with no matching opening bracket", t.ch);
      return NULL;
    }
    mt_check_bad(p, t);
    if (failed(p) || !mt_parse_op_piece(p, &st, t)) return NULL;
  }
  if (failed(p)) return NULL;
  finish_op(p, &st, first);
  if (failed(p)) return NULL;
  return op;
}

/* Ops of one block until '}' (not consumed), a new block label, or EOF at top level. */
static void parse_block_ops(P *p, ir_block *b, ir_op *parent_op) {
  size_t base = p->s_ops.n;
  raw_head h;
  for (;;) {
    if (failed(p)) return;
    ir_op *op;
    if (!p->nla && ((p->head_after == p->lex_off + 1 && (h = p->head, true)) ||
                    mt_raw_op_head(p, mt_skip_white(p, p->lex_off), &h))) {
      p->head_after = 0;
      if (!(op = parse_op(p, parent_op, &h))) return;
      goto parsed;
    }
    tok t = peek(p, 0);
    if (t.kind == T_EOF || is_punct(t, p, '}') || t.kind == T_CARET) break;
    if (p->depth == 0 && (mt_begins_toplevel_item(p, 0))) break;
    mt_check_bad(p, t);
    if (failed(p)) return;
    if (!mt_begins_op(p, 0)) {
      mt_fail_at(p, t.off, "expected an operation, found '%.*s'", (int)(t.len > 40 ? 40 : t.len), p->buf + t.off);
      return;
    }
    if (!(op = parse_op(p, parent_op, NULL))) return;
  parsed:
    SC_PUSH(p->a, p->s_ops, op);
    for (uint32_t i = 0; i < op->nresults; i++)
      if (i == 0 || ir_op_result(op, i)->name.p != ir_op_result(op, i - 1)->name.p) mt_define_value(p, ir_op_result(op, i));
  }
  TAKE(p, p->s_ops, base, b->ops, b->nops);
}

/* ir_module.ops: every op under `root` in preorder, numbered by it. Ops are made in preorder, so the
 * array is built once at the end at its exact size (growing it by doubling while parsing cost ~3x the
 * bytes, as the arena keeps every abandoned copy). The same walk finishes each op as
 * ir_module_finalize would (its kind, its subtree's end), so the module needs no other walk. An explicit
 * stack: nesting is only bounded by max_depth. */
static ir_op **preorder_ops(P *p, ir_op *root, uint32_t nops) {
  typedef struct {
    ir_op *op;
    uint32_t region, block, index;
  } frame;
  ir_op **ops = ar_calloc(p->a, nops ? nops : 1, sizeof *ops);
  SC_VEC(frame) stack = {0};
  uint32_t n = 0;
  root->id = n;
  ir_op_finish(&p->names, root);
  ops[n++] = root;
  SC_PUSH(p->a, stack, ((frame){root, 0, 0, 0}));
  while (stack.n) {
    frame *f = &stack.v[stack.n - 1];
    if (f->region >= f->op->nregions) {
      f->op->subtree_end = n; /* every op nested in it is numbered */
      stack.n--;
      continue;
    }
    const ir_region *r = ir_op_regions(f->op)[f->region];
    if (f->block >= r->nblocks) {
      f->region++, f->block = 0;
      continue;
    }
    const ir_block *b = r->blocks[f->block];
    ir_op *nested = NULL; /* the next op with regions: its ops come before the rest of this block's */
    while (f->index < b->nops && !nested) {
      ir_op *op = b->ops[f->index++];
      if (n == nops) continue; /* cannot happen: every op made is in the tree */
      op->id = n;
      ir_op_finish(&p->names, op);
      ops[n++] = op;
      op->subtree_end = n; /* an op with regions gets its own when its frame ends */
      if (op->nregions) nested = op;
    }
    if (nested) SC_PUSH(p->a, stack, ((frame){nested, 0, 0, 0})); /* may move `f` */
    else f->block++, f->index = 0;
  }
  return ops;
}

ir_region *mt_parse_region(P *p, ir_op *parent, value_vec *entry_args) {
  tok open = next(p); /* '{' */
  if (p->depth + 1 > p->in->max_depth) {
    mt_fail_at(p, open.off, "nesting deeper than %u levels", p->in->max_depth);
    p->err->limit = true;
    return NULL;
  }
  p->depth++;
  size_t mark = p->undo.n;
  ir_region *r = ar_alloc(p->a, sizeof *r);
  r->parent = parent;
  SC_VEC(ir_block *) blocks = {0};
  bool first = true;
  for (;;) {
    if (failed(p)) break;
    tok t = peek(p, 0);
    if (is_punct(t, p, '}')) {
      next(p);
      break;
    }
    if (t.kind == T_EOF) {
      ir_pos ps = mt_pos_of(p, open.off);
      mt_fail_at(p, t.off, "unexpected end of input: region '{' opened at line %u, column %u is not closed", ps.line,
              ps.col);
      break;
    }
    ir_block *b = ar_alloc(p->a, sizeof *b);
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
            mt_check_bad(p, u);
            ir_pos ps = mt_pos_of(p, po.off);
            mt_fail_at(p, u.off, "expected a block argument '%%name: type' in the list opened at line %u, column %u", ps.line,
                    ps.col);
            break;
          }
          ir_value *v = mt_parse_block_arg(p);
          SC_PUSH(p->a, args, v);
          if (is_punct(peek(p, 0), p, ',')) next(p);
        }
        if (!failed(p)) next(p);
      }
      tok colon = next(p);
      if (!failed(p) && !is_punct(colon, p, ':')) {
        mt_check_bad(p, colon);
        mt_fail_at(p, colon.off, "expected ':' after the block label");
      }
    } else if (first && entry_args) {
      for (size_t i = 0; i < entry_args->n; i++) SC_PUSH(p->a, args, entry_args->v[i]);
    }
    for (size_t i = 0; i < args.n; i++) {
      ir_value_set_block(args.v[i], b);
      args.v[i]->index = (uint32_t)i;
      mt_define_value(p, args.v[i]);
    }
    b->args = args.v;
    b->nargs = (uint32_t)args.n;
    mt_attach_arg_info(p, b);
    parse_block_ops(p, b, parent);
    SC_PUSH(p->a, blocks, b);
    first = false;
  }
  mt_scope_pop(p, mark);
  p->depth--;
  r->blocks = blocks.v;
  r->nblocks = (uint32_t)blocks.n;
  return failed(p) ? NULL : r;
}

ir_module *fe_parse_mlir(const fe_parse_input *in, fe_parse_error *err) {
  P p = {0};
  p.in = in;
  p.a = in->arena;
  p.seed = ar_hash_seed(p.a);
  ir_name_table_init(&p.names, p.a);
  p.buf = in->buf;
  p.begin = in->begin;
  p.end = in->end;
  p.lex_off = in->begin;
  p.err = err;
  memset(err, 0, sizeof *err);

  ir_module *m = ar_alloc(p.a, sizeof *m);
  m->format = SC_FMT_STABLEHLO;
  m->buf = in->buf;
  m->len = in->len;
  m->base_offset = in->begin;
  m->end_offset = in->end;
  p.m = m;

  /* The implicit top-level module holds every top-level op; an explicit lone `module` replaces it. */
  ir_op *root = ar_alloc(p.a, sizeof *root);
  ir_op_set_name(root, ir_span_of("builtin.module", 14));
  root->pos.offset = in->begin;
  p.nops = 1;
  ir_region *rr = ar_alloc(p.a, sizeof *rr);
  ir_block *rb = ar_alloc(p.a, sizeof *rb);
  rr->parent = root;
  rb->parent = rr;
  SC_VEC(ir_op *) top = {0};
  p.depth = 0;
  for (;;) {
    if (failed(&p)) break;
    tok t = peek(&p, 0);
    if (t.kind == T_EOF) break;
    mt_check_bad(&p, t);
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
        if (u.kind == T_EOF || (u.bol && u.off != v.off && (mt_begins_op(&p, 0) || mt_begins_toplevel_item(&p, 0)))) break;
        if (is_punct(u, &p, ')') || is_punct(u, &p, ']') || is_punct(u, &p, '}') || is_punct(u, &p, '>')) {
          mt_fail_at(&p, u.off, "unexpected '%c' in the definition of '%.*s'", p.buf[u.off], (int)t.len, p.buf + t.off);
          break;
        }
        e = mt_skip_unit(&p);
      }
      ir_alias al = {tspan(&p, t), ir_span_of(p.buf + v.off, e > v.off ? e - v.off : 0)};
      SC_PUSH(p.a, p.aliases, al);
      continue;
    }
    if (is_punct(t, &p, '}')) {
      mt_fail_at(&p, t.off, "unexpected '}' with no open region");
      break;
    }
    if (!mt_begins_op(&p, 0)) {
      mt_fail_at(&p, t.off, "expected an operation or a definition at top level, found '%.*s'",
              (int)(t.len > 40 ? 40 : t.len), p.buf + t.off);
      break;
    }
    /* Parse top-level ops one at a time so `#alias =` lines between them are handled here. */
    ir_op *op = parse_op(&p, root, NULL);
    if (!op) break;
    SC_PUSH(p.a, top, op);
  }
  if (failed(&p)) return NULL;
  rb->ops = top.v;
  rb->nops = (uint32_t)top.n;
  /* no op at all (empty, or only comments and definitions) is an empty module, as MLIR reads it */
  if (top.n == 1 && ir_span_eq(ir_op_name(top.v[0]), "builtin.module")) {
    /* Drop the implicit root: the explicit module is the root. Renumber ids and re-parent. */
    ir_op *mod = top.v[0];
    mod->parent_op = NULL;
    m->module = mod;
  } else {
    rr->blocks = ar_alloc(p.a, sizeof *rr->blocks);
    rr->blocks[0] = rb;
    rr->nblocks = 1;
    ir_region **regions = ir_op_extra_of(p.a, root)->regions = ar_alloc(p.a, sizeof *regions);
    regions[0] = rr;
    root->nregions = 1;
    root->end = in->end;
    m->module = root;
    m->implicit_module = true;
  }
  m->nops = m->module == root ? p.nops : p.nops - 1;
  m->ops = preorder_ops(&p, m->module, m->nops);
  m->funcs = p.funcs.v;
  m->nfuncs = (uint32_t)p.funcs.n;
  m->aliases = p.aliases.v;
  m->naliases = (uint32_t)p.aliases.n;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    ir_op *f = m->funcs[i];
    if (ir_span_eq(ir_op_sym_name(f), "main") && !ir_span_eq(ir_op_visibility(f), "private")) m->entry = f;
  }
  if (!m->entry && m->nfuncs) m->entry = m->funcs[0];
  ir_module_index_aliases(p.a, m);
  ir_module_resolve_type_aliases(m);
  ir_module_set_names(m, &p.names);
  m->finalized = true; /* preorder_ops finished every op */
  return m; /* an op's loc is resolved on demand (ir_op_srcloc): only diagnostics need it */
}
