/* mlir_fast.c — the MLIR text front end's byte-level fast path (see mlir_text.c): one-line op heads,
 * operand lists, attribute dicts, value units and type trailers scanned as bytes. Each piece gives up
 * without consuming anything on an unusual shape, so the token path keeps its exact errors and
 * offsets. Part of one parse: every function takes the parser state `P` (mlir_text.h), owned by the
 * thread running the parse; nothing here keeps state. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "front/mlir_text.h"
#include "util/hash.h"

/* ---- byte-level fast path for the pieces of one line of an op ----
 *
 * Most ops are one line of a few common pieces: operands, `(operands)`, properties `<{...}>`, an
 * attribute dict, `<...>` groups, the `: types` trailer and `loc(...)`. mt_fast_line() consumes such
 * pieces as bytes, without making tokens, exactly as the token path would, and stops (having consumed
 * only whole pieces) at the end of the line or at anything else: the token path then takes over with
 * its precise errors. Each fast piece returns 0 without pushing anything when the shape is unusual. */

static uint32_t skip_spaces(const P *p, uint32_t i) {
  while (i < p->end && (k_cls[(unsigned char)p->buf[i]] & C_SPACE)) i++;
  return i;
}

/* One token of an attribute value that the token path steps over (mt_skip_unit), at b[i]: its end, or 0
 * for anything the fast path leaves to the token path (comments, quoted symbols, `%x#N`, bad bytes). */
static uint32_t raw_value_unit(P *p, uint32_t i) {
  const char *b = p->buf;
  uint32_t end = p->end, e;
  unsigned char c = (unsigned char)b[i];
  if ((k_cls[c] & C_WORD || c == '#' || c == '!') && repeats(p, i, p->last_unit))
    return i + p->last_unit.n; /* the same `word<...>` as mt_skip_unit() scanned last */
  if (k_cls[c] & C_WORD) {
    e = mt_word_end(b, i, i + 1, end);
    if (e + 1 < end && b[e] == '<' && b[e + 1] != '=') {
      if (!mt_raw_skip_group(p, e, &e)) return 0;
      p->last_unit = ir_span_of(b + i, e - i);
    }
    return e;
  }
  switch (c) {
  case '"':
    return mt_scan_string(b, i + 1, end, &e) ? e : 0;
  case '(': case '[': case '{':
    if (c == '{' && i + 1 < end && b[i + 1] == '-') return 0;
    return mt_raw_skip_group(p, i, &e) ? e : 0;
  case '<':
    if (i + 1 < end && b[i + 1] == '=') return i + 2;
    return mt_raw_skip_group(p, i, &e) ? e : 0;
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
      if (!mt_raw_skip_group(p, e, &e)) return 0;
      p->last_unit = ir_span_of(b + i, e - i);
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
 * pushed on P.s_attrs as mt_parse_attr_dict() makes them; returns the offset past '}', or 0 (nothing
 * pushed) for any other shape. */
static uint32_t raw_attr_dict(P *p, uint32_t open) {
  const char *b = p->buf;
  uint32_t end = p->end, i = skip_spaces(p, open + 1);
  size_t base = p->s_attrs.n;
  if (i < end && b[i] == '}') return i + 1;
  for (;;) {
    if (i >= end) goto give_up;
    ir_attr a;
    uint32_t e;
    if (k_cls[(unsigned char)b[i]] & C_WORD) {
      e = mt_word_end(b, i, i + 1, end);
      a.name = ir_span_of(b + i, e - i);
    } else if (b[i] == '"') {
      if (!mt_scan_string(b, i + 1, end, &e) || e - i < 2) goto give_up;
      a.name = ir_span_of(b + i + 1, e - i - 2);
    } else {
      goto give_up;
    }
    a.offset = i;
    a.end = e;
    a.value = ir_span_of(NULL, 0);
    i = skip_spaces(p, e);
    if (i < end && b[i] == '=') {
      uint32_t v = skip_spaces(p, i + 1), ve = v;
      i = v;
      while (i < end && !strchr(",})]>", b[i])) {
        if (!(ve = raw_value_unit(p, i))) goto give_up;
        i = skip_spaces(p, ve);
      }
      if (ve == v) goto give_up; /* an empty value: the token path words it */
      a.value = ir_span_of(b + v, ve - v);
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
    uint32_t e = mt_value_name_end(b, i, end);
    if (e == i) return 0;
    at[n] = i, len[n++] = e - i;
    i = skip_spaces(p, e);
    if (i < end && b[i] == ')') break;
    if (i >= end || b[i] != ',') return 0;
    i++;
  }
  for (uint32_t k = 0; k < n; k++) {
    tok t = {T_PERCENT, false, '%', at[k], len[k]};
    mt_push_operand(p, t);
  }
  return i + 1;
}

/* trailer ::= ':' ( '(' types ')' '->' (type | '(' types ')') | type )   at b[colon] == ':', with
 * `word<...>` types and nothing after a single type that would continue the list. Returns the offset
 * past it, or 0 (nothing taken). */
static uint32_t raw_trailer(P *p, ir_op *op, uint32_t colon) {
  const char *b = p->buf;
  uint32_t end = p->end, base = (uint32_t)p->s_spans.n, i = skip_spaces(p, colon + 1), after = 0;
  ir_span ty;
  if (i < end && b[i] == '(') {
    if (!(i = mt_raw_type_list_at(p, i))) return 0;
    uint32_t outs = (uint32_t)p->s_spans.n;
    i = skip_spaces(p, i);
    if (i + 1 < end && b[i] == '-' && b[i + 1] == '>') {
      after = mt_raw_type_list_at(p, i + 2);
      if (!after && (after = mt_raw_type_at(p, i + 2, &ty))) SC_PUSH(p->a, p->s_spans, ty);
    }
    if (!after) {
      p->s_spans.n = base;
      return 0;
    }
    mt_take_op_types(p, op, base, outs);
    return after;
  }
  if (!(after = mt_raw_type_at(p, i, &ty))) return 0;
  i = after;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_WS)) i++;
  if (i < end && (b[i] == ',' || b[i] == '/')) return 0; /* a list of types (maybe past a line break) */
  SC_PUSH(p->a, p->s_spans, ty);
  mt_take_type_list(p, op, base);
  return after;
}

/* The piece at b[i] (not white space) of the op being parsed: its end, or 0 (nothing consumed). */
static uint32_t fast_piece(P *p, op_state *st, uint32_t i) {
  const char *b = p->buf;
  uint32_t end = p->end, e;
  unsigned char c = (unsigned char)b[i];
  switch (c) {
  case '%': {
    e = mt_value_name_end(b, i, end);
    if (e == i || (e < end && b[e] == '-')) return 0;
    tok t = {T_PERCENT, false, '%', i, e - i};
    mt_push_operand(p, t);
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
    else if (mt_raw_skip_group(p, i, &e)) p->last_group = ir_span_of(b + i, e - i);
    else return 0;
    ir_attr a = {st->sdy_sharded ? ir_span_of("sharding", 8) : ir_span_of(NULL, 0), ir_span_of(b + i, e - i), i, e};
    SC_PUSH(p->a, p->s_attrs, a);
    return e;
  case '{': {
    /* An attribute dict only when a name and '=' follow on this line (else a region or a set). */
    uint32_t k = skip_spaces(p, i + 1);
    if (k >= end || !((k_cls[(unsigned char)b[k]] & C_WORD) && !(k_cls[(unsigned char)b[k]] & C_DIGIT))) return 0;
    k = skip_spaces(p, mt_word_end(b, k, k + 1, end));
    if (k >= end || b[k] != '=') return 0;
    return raw_attr_dict(p, i);
  }
  case 'l':
    if (end - i <= 4 || memcmp(b + i, "loc(", 4) != 0) return 0;
    if (repeats(p, i, p->last_loc))
      e = i + p->last_loc.n; /* the location of the op before */
    else if (mt_raw_skip_group(p, i + 3, &e)) p->last_loc = ir_span_of(b + i, e - i);
    else return 0;
    st->op->loc_offset = i;
    return e;
  default:
    return 0;
  }
}

/* Fills *h when b[i] begins such a head, which mt_begins_op() accepts too; false for any other shape
 * (result groups, several results, line breaks or comments inside the head), left to the tokens. */
bool mt_raw_op_head(const P *p, uint32_t i, raw_head *h) {
  const char *b = p->buf;
  uint32_t end = p->end, e;
  if (i >= end || b[i] != '%' || (e = mt_value_name_end(b, i, end)) == i) return false;
  h->res = i, h->res_end = e;
  e = skip_spaces(p, e);
  if (e >= end || b[e] != '=') return false;
  e = skip_spaces(p, e + 1);
  if (e >= end) return false;
  h->name = e;
  if (k_cls[(unsigned char)b[e]] & C_WORD) h->name_end = mt_word_end(b, e, e + 1, end);
  else if (b[e] != '"' || !mt_scan_string(b, e + 1, end, &h->name_end)) return false;
  return true;
}

/* Where the next token would begin, when only white space (no comment) comes before it. */
uint32_t mt_skip_white(const P *p, uint32_t i) {
  while (i < p->end && (k_cls[(unsigned char)p->buf[i]] & C_WS)) i++;
  return i;
}

/* Consumes the fast pieces from the lexing position (nothing buffered) to the end of the line or the
 * first piece the token path must read. True when the line ended and the next one begins an op with
 * a head mt_raw_op_head() reads: there the token path would end this op too. */
bool mt_fast_line(P *p, op_state *st) {
  uint32_t i = p->lex_off, e, last = 0;
  for (;;) {
    i = skip_spaces(p, i);
    if (i >= p->end) break;
    if (p->buf[i] == '\n') {
      if (last) p->lex_off = p->last_end = last;
      if (!mt_raw_op_head(p, mt_skip_white(p, i), &p->head)) return false;
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
 * its value's own (unresolved, or `%0#1` for a result of a group): ir_op_operand_name() reads the
 * value's name otherwise, and most ops keep no names at all. */
