/* mlir_structure.c — the MLIR text front end's structure pieces (see mlir_text.c): what begins an op,
 * balanced groups stepped over (a byte scan first, the token path when it gives up), types and type
 * lists, attribute dicts, block arguments, function results and `loc(...)`. Part of one parse: every
 * function takes the parser state `P` (mlir_text.h), owned by the thread running the parse; nothing
 * here keeps state. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "front/mlir_text.h"
#include "util/hash.h"

/* ---- structure ---- */

/* Does `t` (with what follows) begin an op or block? `at_line_start` relaxes nothing; it is used for
 * the dotted-name-before-'}' case (a terminator without operands). */
bool mt_begins_op(P *p, uint32_t k) {
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

bool mt_begins_toplevel_item(P *p, uint32_t k) {
  tok t = peek(p, k);
  if ((t.kind == T_HASH || t.kind == T_BANG) && is_punct(peek(p, k + 1), p, '=')) return true;
  return t.kind == T_RESOURCES;
}

static inline int is_plain(char c) { return (k_cls[(unsigned char)c] & C_PLAIN) != 0; }

static char closer_of(char c) { return c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>'; }

/* The fast path of mt_skip_group: scans the bytes of a group that opens at `open` directly, without
 * making tokens, when every byte is one the token path would merely step over (identifiers, numbers,
 * white space, simple punctuation, string literals, balanced brackets). Anything else (comments,
 * `{-#`, lone sigils, bad characters, mismatched brackets, deep nesting, a string that does not close)
 * returns false, and the token path runs from the start with its precise errors. On success *end is
 * one past the closer, exactly where the token path would stop. */
bool mt_raw_skip_group(const P *p, uint32_t open, uint32_t *end) {
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
      if (!mt_scan_string(b, i + 2, lim, &i)) return false; /* @"quoted" */
      continue;
    case '"':
      if (!mt_scan_string(b, i + 1, lim, &i)) return false;
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

/* Skips one balanced group starting at the opener token (consumed here). Returns the offset one past
 * its closer. */
uint32_t mt_skip_group(P *p) {
  uint32_t fast_end;
  if (mt_raw_skip_group(p, peek(p, 0).off, &fast_end)) {
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
      ir_pos ps = mt_pos_of(p, st[n - 1].off);
      mt_fail_at(p, t.off, "unexpected end of input: '%c' opened at line %u, column %u is not closed", st[n - 1].open,
              ps.line, ps.col);
      break;
    }
    mt_check_bad(p, t);
    if (t.kind != T_PUNCT) continue;
    char c = p->buf[t.off];
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (n >= limit) {
        mt_fail_at(p, t.off, "nesting deeper than %u levels", limit);
        p->err->limit = true;
        break;
      }
      if (n == cap) {
        bracket *grown = ar_calloc(p->a, cap * 2, sizeof *grown);
        memcpy(grown, st, cap * sizeof *st);
        st = grown, cap *= 2;
      }
      st[n++] = (bracket){c, t.off};
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (c != closer_of(st[n - 1].open)) {
        ir_pos ps = mt_pos_of(p, st[n - 1].off);
        mt_fail_at(p, t.off, "expected '%c' to close '%c' opened at line %u, column %u, found '%c'",
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
uint32_t mt_skip_unit(P *p) {
  tok t = peek(p, 0);
  if (t.kind == T_PUNCT) {
    char c = p->buf[t.off];
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      uint32_t e = mt_skip_group(p);
      /* A function type (..) -> (..) is one unit. */
      if (c == '(' && peek(p, 0).kind == T_ARROW) {
        next(p);
        return mt_skip_unit(p);
      }
      return e;
    }
  }
  if (t.kind == T_EOF) return t.off;
  next(p);
  mt_check_bad(p, t);
  uint32_t e = t.off + t.len;
  uint32_t fast_end;
  if ((t.kind == T_WORD || t.kind == T_HASH || t.kind == T_BANG) && p->nla == 0 && e + 1 < p->end &&
      p->buf[e] == '<' && p->buf[e + 1] != '=') {
    /* tensor<...>, #attr<...>, !type<...>: scanned as bytes, without making a token of the '<' */
    uint32_t n = p->last_unit.n;
    if (n > t.len && repeats(p, t.off, p->last_unit)) fast_end = t.off + n;
    else if (mt_raw_skip_group(p, e, &fast_end)) p->last_unit = ir_span_of(p->buf + t.off, fast_end - t.off);
    else fast_end = 0;
    if (fast_end) {
      p->lex_off = p->last_end = fast_end;
      return fast_end;
    }
  }
  tok u = peek(p, 0);
  if ((t.kind == T_WORD || t.kind == T_HASH || t.kind == T_BANG) && is_punct(u, p, '<') && u.off == e)
    e = mt_skip_group(p);
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
    e = mt_skip_unit(p);
  }
}

/* Parses '{ name [= value], ... }' (the '{' is next) into `out`. */
void mt_parse_attr_dict(P *p, attr_vec *out) {
  tok open = next(p);
  for (;;) {
    if (failed(p)) return;
    tok t = peek(p, 0);
    if (is_punct(t, p, '}')) {
      next(p);
      return;
    }
    if (t.kind == T_EOF) {
      ir_pos ps = mt_pos_of(p, open.off);
      mt_fail_at(p, t.off, "unexpected end of input: '{' opened at line %u, column %u is not closed", ps.line, ps.col);
      return;
    }
    mt_check_bad(p, t);
    if (t.kind != T_WORD && t.kind != T_STRING) {
      mt_fail_at(p, t.off, "expected an attribute name in the attribute dictionary");
      return;
    }
    next(p);
    ir_attr a = {tspan(p, t), {0}, t.off, t.off + t.len};
    if (t.kind == T_STRING && t.len >= 2) a.name = ir_span_of(p->buf + t.off + 1, t.len - 2);
    if (is_punct(peek(p, 0), p, '=')) {
      next(p);
      tok v = peek(p, 0);
      uint32_t e = skip_attr_value(p, v.off);
      a.value = ir_span_of(p->buf + v.off, e > v.off ? e - v.off : 0);
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
      mt_check_bad(p, sep);
      mt_fail_at(p, sep.off, "expected ',' or '}' in the attribute dictionary");
      return;
    }
  }
}

/* One `word<...>` type at b[i] (after spaces), as fast_type() reads it, into *out; returns the
 * offset past it, or 0 when the bytes there are something else. */
uint32_t mt_raw_type_at(P *p, uint32_t i, ir_span *out) {
  const char *b = p->buf;
  uint32_t end = p->end, close;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
  if (i >= end || !(k_cls[(unsigned char)b[i]] & C_WORD)) return 0;
  uint32_t start = i, n = p->last_type.n;
  if (repeats(p, start, p->last_type)) {
    *out = ir_span_of(b + start, n);
    return start + n;
  }
  i = mt_word_end(b, start, start + 1, end);
  if (i + 1 >= end || b[i] != '<' || b[i + 1] == '=' || !mt_raw_skip_group(p, i, &close)) return 0;
  *out = p->last_type = ir_span_of(b + start, close - start);
  return close;
}

/* type ::= word '<' ... '>'  (tensor<8x16xf32>, the common case): scanned as bytes when no token is
 * buffered, making no token at all. False (nothing consumed) for any other shape, a line break or a
 * group the raw scan leaves to the token path. */
static bool fast_type(P *p, ir_span *out) {
  uint32_t i, close;
  if (p->nla == 1 && p->la[p->la_head].kind == T_WORD) { /* the word is already lexed (peeked) */
    i = p->la[p->la_head].off;
  } else {
    if (p->nla) return false;
    for (i = p->lex_off; i < p->end && (k_cls[(unsigned char)p->buf[i]] & C_SPACE); i++) {}
    if (i == p->begin) return false;
  }
  if (!(close = mt_raw_type_at(p, i, out))) return false;
  p->nla = 0;
  p->lex_off = p->last_end = close;
  return true;
}

/* A type: one unit (tensor<..>, !x.y<..>, i32, (..) -> ..). Returns its span. */
ir_span mt_parse_type(P *p) {
  ir_span fast;
  if (fast_type(p, &fast)) return fast;
  tok t = peek(p, 0);
  uint32_t e = mt_skip_unit(p);
  return ir_span_of(p->buf + t.off, e > t.off ? e - t.off : 0);
}

/* Types separated by ',' inside '(' ... ')' (the '(' is next). */
void mt_parse_type_list_parens(P *p, span_vec *out) {
  tok open = next(p);
  if (is_punct(peek(p, 0), p, ')')) {
    next(p);
    return;
  }
  for (int guard = 0; !failed(p); guard++) {
    ir_span ty = mt_parse_type(p);
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
    ir_pos ps = mt_pos_of(p, open.off);
    mt_check_bad(p, t);
    mt_fail_at(p, t.off, "expected ',' or ')' in the type list opened at line %u, column %u", ps.line, ps.col);
    return;
  }
}

ir_value *mt_new_value(P *p, ir_span name, uint32_t off) {
  ir_value *v = ar_alloc(p->a, sizeof *v);
  v->name = name;
  v->pos.offset = off;
  return v;
}

/* `loc(...)`: the 'loc' word is next. Returns its span. */
ir_span mt_parse_loc(P *p) {
  tok t = next(p);
  uint32_t e;
  if (!p->nla && t.off + 3 < p->end && p->buf[t.off + 3] == '(' && mt_raw_skip_group(p, t.off + 3, &e)) {
    p->lex_off = p->last_end = e; /* loc(...) scanned as bytes: no token for its '(' */
    return ir_span_of(p->buf + t.off, e - t.off);
  }
  e = mt_skip_group(p);
  return ir_span_of(p->buf + t.off, e - t.off);
}

bool mt_at_loc(P *p) {
  tok t = peek(p, 0);
  if (!tok_is_word(t, p, "loc")) return false;
  if (t.off + 3 < p->end && p->buf[t.off + 3] == '(') return true; /* "loc(": the '(' is the next token */
  return is_punct(peek(p, 1), p, '(');
}

/* Block argument `%x: type {attrs}? loc(..)?` (the %x is next). */
ir_value *mt_parse_block_arg(P *p) {
  tok name = next(p);
  ir_value *v = mt_new_value(p, tspan(p, name), name.off);
  next(p); /* ':' */
  ir_span type = mt_parse_type(p);
  ir_attrs *attrs = NULL;
  if (is_punct(peek(p, 0), p, '{')) {
    attr_vec av = {0};
    mt_parse_attr_dict(p, &av);
    attrs = ar_alloc(p->a, sizeof *attrs);
    attrs->v = av.v;
    attrs->n = (uint32_t)av.n;
  }
  SC_PUSH(p->a, p->s_arg_info, ((struct arg_info){v, attrs, type}));
  if (mt_at_loc(p)) mt_parse_loc(p);
  return v;
}

void mt_attach_arg_info(P *p, ir_block *b) {
  /* this block's arguments were the last parsed: their entries are on top (older ones are of
   * signatures without a body) */
  while (p->s_arg_info.n && ir_value_block(p->s_arg_info.v[p->s_arg_info.n - 1].arg) == b) {
    const struct arg_info *e = &p->s_arg_info.v[--p->s_arg_info.n];
    if (e->attrs) ir_block_set_arg_attrs(p->a, b, e->arg->index, e->attrs);
    ir_block_set_arg_type(p->a, b, e->arg->index, e->type);
  }
}

bool mt_is_call_like(ir_span name) {
  return ir_span_eq(name, "call") || ir_span_eq(name, "func.call") || ir_span_eq(name, "stablehlo.custom_call") ||
         ir_span_eq(name, "mhlo.custom_call") || ir_span_eq(name, "call_indirect") || ir_span_eq(name, "sdy.named_computation");
}
bool mt_is_func_like(ir_span name) {
  return ir_span_eq(name, "func.func") || ir_span_eq(name, "func") ||
         (name.n > 5 && memcmp(name.p + name.n - 5, ".func", 5) == 0);
}

/* A func.func result list after '->': `(type {attrs}? loc(..)?, ...)` or a single type. */
void mt_parse_func_results(P *p, ir_op *op) {
  span_vec types = {0};
  SC_VEC(ir_attrs) attrs = {0};
  if (is_punct(peek(p, 0), p, '(')) {
    tok open = next(p);
    while (!failed(p) && !is_punct(peek(p, 0), p, ')')) {
      ir_span ty = mt_parse_type(p);
      ir_attrs ra = {0};
      if (is_punct(peek(p, 0), p, '{')) {
        attr_vec av = {0};
        mt_parse_attr_dict(p, &av);
        ra.v = av.v;
        ra.n = (uint32_t)av.n;
      }
      if (mt_at_loc(p)) mt_parse_loc(p);
      SC_PUSH(p->a, types, ty);
      SC_PUSH(p->a, attrs, ra);
      tok t = peek(p, 0);
      if (is_punct(t, p, ',')) {
        next(p);
        continue;
      }
      if (!is_punct(t, p, ')')) {
        ir_pos ps = mt_pos_of(p, open.off);
        mt_check_bad(p, t);
        mt_fail_at(p, t.off, "expected ',' or ')' in the result list opened at line %u, column %u", ps.line, ps.col);
        return;
      }
    }
    if (!failed(p)) next(p);
  } else {
    ir_span ty = mt_parse_type(p);
    ir_attrs none = {0};
    SC_PUSH(p->a, types, ty);
    SC_PUSH(p->a, attrs, none);
  }
  ir_op_decl *e = ir_op_decl_of(p->a, op);
  e->func_result_types = types.v;
  e->result_attrs = attrs.v;
  e->nresult_attrs = (uint32_t)attrs.n;
}

/* '(' type (',' type)* ')' of raw types at b[i] (after spaces): pushed on P.s_spans; returns the
 * offset past ')', or 0 (nothing pushed) for any other shape. */
uint32_t mt_raw_type_list_at(P *p, uint32_t i) {
  const char *b = p->buf;
  uint32_t end = p->end, n = 0;
  ir_span ty[16];
  while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
  if (i >= end || b[i] != '(') return 0;
  i++;
  for (;;) {
    if (n == 16 || !(i = mt_raw_type_at(p, i, &ty[n]))) return 0;
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
 * consumed, for any other shape; then mt_parse_trailer_types() reads tokens. */
static bool fast_trailer(P *p, ir_op *op) {
  if (p->nla != 1) return false;
  const char *b = p->buf;
  uint32_t end = p->end, base = (uint32_t)p->s_spans.n;
  uint32_t i = mt_raw_type_list_at(p, p->la[p->la_head].off + 1);
  if (!i) return false;
  uint32_t outs = (uint32_t)p->s_spans.n;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_SPACE)) i++;
  uint32_t after = 0;
  if (i + 1 < end && b[i] == '-' && b[i + 1] == '>') {
    ir_span ty;
    after = mt_raw_type_list_at(p, i + 2);
    if (!after && (after = mt_raw_type_at(p, i + 2, &ty))) SC_PUSH(p->a, p->s_spans, ty);
  }
  if (!after) {
    p->s_spans.n = base;
    return false;
  }
  mt_take_op_types(p, op, base, outs);
  p->nla = 0;
  p->lex_off = p->last_end = after;
  return true;
}

void mt_take_op_types(P *p, ir_op *op, size_t base, size_t outs) {
  uint32_t nres, nops;
  ir_span *res = mt_take_types(p, outs, &nres);
  ir_span *ops = mt_take_types(p, base, &nops);
  op->types = ir_op_types_share(p->a, &p->op_types, ops, nops, res, nres);
}

void mt_take_type_list(P *p, ir_op *op, size_t base) {
  mt_take_op_types(p, op, base, op->nresults ? base : p->s_spans.n);
}

ir_span *mt_take_types(P *p, size_t base, uint32_t *n) {
  span_vec *st = &p->s_spans;
  *n = (uint32_t)(st->n - base);
  if (!*n) return NULL;
  ir_span first = st->v[base], last = st->v[st->n - 1], key = {0};
  if (first.p && last.p >= first.p) key = ir_span_of(first.p, (uint32_t)(last.p + last.n - first.p));
  for (uint32_t k = 0; key.n && k < 4; k++) {
    const struct type_list *t = &p->type_lists[k];
    if (t->n == *n && ir_span_same(t->key, key)) {
      st->n = base;
      return t->v;
    }
  }
  ir_span *v = ar_alloc(p->a, *n * sizeof *v);
  memcpy(v, st->v + base, *n * sizeof *v);
  st->n = base;
  if (key.n) p->type_lists[p->type_list_next++ & 3] = (struct type_list){key, v, *n};
  return v;
}

/* trailer ::= ':' function-type | ':' type (',' type)*      (the ':' is next)
 * The types are pushed on P.s_spans and taken as exact-size arrays. */
void mt_parse_trailer_types(P *p, ir_op *op, bool *seen) {
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
    mt_parse_type_list_parens(p, st);
    if (peek(p, 0).kind == T_ARROW) {
      next(p);
      size_t outs = st->n;
      if (is_punct(peek(p, 0), p, '(')) mt_parse_type_list_parens(p, st);
      else {
        ir_span ty = mt_parse_type(p);
        SC_PUSH(p->a, *st, ty);
      }
      mt_take_op_types(p, op, base, outs);
      return;
    }
  } else {
    ir_span ty = mt_parse_type(p);
    SC_PUSH(p->a, *st, ty);
  }
  while (!failed(p) && is_punct(peek(p, 0), p, ',') && !peek(p, 1).bol) {
    next(p);
    ir_span ty = mt_parse_type(p);
    SC_PUSH(p->a, *st, ty);
  }
  mt_take_type_list(p, op, base);
}

void mt_add_region(P *p, ir_op *op, region_vec *regions, value_vec *pending) {
  if (regions->n >= IR_MAX_REGIONS) {
    mt_fail_at(p, peek(p, 0).off, "an operation with more than %u regions", (unsigned)IR_MAX_REGIONS);
    return;
  }
  ir_region *r = mt_parse_region(p, op, pending);
  if (r) SC_PUSH(p->a, *regions, r);
  /* a pretty stablehlo.while declares `%iterArg = %init` once for its cond and do regions alike */
  if (pending->n && regions->n == 1 && !op->generic && ir_span_eq(ir_op_name(op), "stablehlo.while")) {
    for (size_t i = 0; i < pending->n; i++) {
      ir_value *v = ar_alloc(p->a, sizeof *v);
      *v = *pending->v[i];
      ir_value_set_block(v, NULL);
      pending->v[i] = v;
    }
    return;
  }
  pending->n = 0;
}
