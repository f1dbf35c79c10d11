/* mlir_op.c — the MLIR text front end's op pieces (see mlir_text.c): the generic form's properties
 * `<{...}>` mapped onto what the pretty form writes inline, result lists, operand lists, op names,
 * symbols, attribute dicts and region lists of the op being parsed, and the symbol table entries.
 * Part of one parse: every function takes the parser state `P` (mlir_text.h), owned by the thread
 * running the parse; nothing here keeps state. */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "front/mlir_text.h"
#include "util/hash.h"

/* ---- generic form: properties that carry what the pretty form writes inline ---- */

/* Lexer state, saved while a property value (a span already consumed) is parsed again. */
typedef struct {
  tok la[LOOKAHEAD];
  uint32_t la_head, nla, lex_off, end, last_end;
} lex_state;

static void lex_push(P *p, lex_state *save, ir_span s) {
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

/* `[{...}, {...}]` (arg_attrs / res_attrs) into one ir_attrs per entry. Returns the count, or 0 if the
 * value has another shape (then nothing is mapped). */
static uint32_t parse_dict_list(P *p, ir_span value, ir_attrs **out) {
  lex_state save;
  lex_push(p, &save, value);
  SC_VEC(ir_attrs) list = {0};
  bool ok = is_punct(next(p), p, '[');
  while (ok && !failed(p) && is_punct(peek(p, 0), p, '{')) {
    attr_vec av = {0};
    mt_parse_attr_dict(p, &av);
    ir_attrs one = {av.v, (uint32_t)av.n};
    SC_PUSH(p->a, list, one);
    if (is_punct(peek(p, 0), p, ',')) next(p);
  }
  ok = ok && !failed(p) && is_punct(next(p), p, ']');
  lex_pop(p, &save);
  *out = list.v;
  return ok ? (uint32_t)list.n : 0;
}

/* function_type = (args) -> results: the result types. Returns how many there are. */
static uint32_t parse_function_type_results(P *p, ir_span value, ir_op *op) {
  lex_state save;
  lex_push(p, &save, value);
  span_vec ins = {0}, outs = {0};
  if (is_punct(peek(p, 0), p, '(')) mt_parse_type_list_parens(p, &ins);
  if (!failed(p) && peek(p, 0).kind == T_ARROW) {
    next(p);
    if (is_punct(peek(p, 0), p, '(')) mt_parse_type_list_parens(p, &outs);
    else {
      ir_span ty = mt_parse_type(p);
      SC_PUSH(p->a, outs, ty);
    }
  }
  lex_pop(p, &save);
  if (!ir_op_func_result_types(op) && outs.n) ir_op_decl_of(p->a, op)->func_result_types = outs.v;
  return (uint32_t)outs.n;
}

void mt_map_generic_properties(P *p, ir_op *op, bool func_like) {
  if (ir_span_eq(ir_op_name(op), "sdy.mesh") && !ir_op_attr(op, "value")) {
    const ir_attr *m = ir_op_attr(op, "mesh");
    if (m && ir_span_starts(m->value, "#sdy.mesh<")) { /* mesh = #sdy.mesh<[...]> -> value = <[...]> */
      ir_attr v = {ir_span_of("value", 5), ir_span_of(m->value.p + 9, m->value.n - 9), m->offset, m->end};
      attr_vec av = {op->attr_v, op->nattrs, op->nattrs};
      SC_PUSH(p->a, av, v);
      op->attr_v = av.v, op->nattrs = (uint32_t)av.n;
    }
  }
  if (!func_like) return;
  const ir_attr *ft = ir_op_attr(op, "function_type");
  uint32_t nresults = ft ? parse_function_type_results(p, ft->value, op) : 0;
  const ir_attr *aa = ir_op_attr(op, "arg_attrs");
  if (aa && op->nregions && ir_op_regions(op)[0]->nblocks) {
    ir_attrs *list;
    uint32_t n = parse_dict_list(p, aa->value, &list);
    ir_block *entry = ir_op_regions(op)[0]->blocks[0];
    if (n == entry->nargs)
      for (uint32_t i = 0; i < n; i++)
        if (!ir_value_attrs(entry->args[i])->n) ir_block_set_arg_attrs(p->a, entry, i, &list[i]);
  }
  const ir_attr *ra = ir_op_attr(op, "res_attrs");
  if (ra && !ir_op_nresult_attrs(op)) {
    ir_attrs *list;
    uint32_t n = parse_dict_list(p, ra->value, &list);
    if (n && n == nresults) { /* a dict per declared result: readers index the result types by it */
      ir_op_decl *e = ir_op_decl_of(p->a, op);
      e->result_attrs = list, e->nresult_attrs = n;
    }
  }
}

/* result-list ::= result (',' result)* '='    result ::= %name (':' integer)?
 * (mt_begins_op() already checked the shape.) Returns false after an error. */
bool mt_parse_result_list(P *p, ir_op *op) {
  size_t base = p->s_spans.n; /* the results' names, until their count is known */
  if (peek(p, 0).kind == T_PERCENT) {
    for (;;) {
      tok r = next(p);
      uint32_t count = 1;
      if (is_punct(peek(p, 0), p, ':') && peek(p, 1).kind == T_WORD) {
        next(p);
        tok n = next(p);
        count = 0;
        for (uint32_t i = 0; i < n.len && (k_cls[(unsigned char)p->buf[n.off + i]] & C_DIGIT); i++)
          count = count * 10 + (uint32_t)(p->buf[n.off + i] - '0');
        if (count > 1u << 20) {
          mt_fail_at(p, n.off, "result group too large");
          return false;
        }
      }
      for (uint32_t i = 0; i < count; i++) SC_PUSH(p->a, p->s_spans, tspan(p, r)); /* a group's: looked up by #i */
      tok sep = next(p);
      if (is_punct(sep, p, '=')) break;
      /* mt_begins_op() already checked the shape. */
    }
  }
  uint32_t n = (uint32_t)(p->s_spans.n - base);
  mt_set_results(p, op, n ? p->s_spans.v + base : NULL, n); /* no names: the stack may be unallocated */
  p->s_spans.n = base;
  return true;
}

void mt_set_results(P *p, ir_op *op, const ir_span *names, uint32_t n) {
  op->result_values = n ? ar_alloc(p->a, n * sizeof *op->result_values) : NULL;
  for (uint32_t i = 0; i < n; i++) {
    ir_value *v = &op->result_values[i];
    v->name = names[i];
    v->pos.offset = (uint32_t)(names[i].p - p->buf);
    ir_value_set_def(v, op);
    v->index = i;
  }
  op->nresults = n;
}

/* operand ::= %name — pushed on the op's operand stacks (P.s_spans names, P.s_values values). */
void mt_push_operand(P *p, tok t) {
  ir_span nm = tspan(p, t);
  SC_PUSH(p->a, p->s_spans, nm);
  SC_PUSH(p->a, p->s_values, mt_lookup_value(p, nm));
}

/* A parenthesised group in an op: '(' (operand | block-arg | %iter '=' %init | loc(...) | other)* ')'.
 * Operand names, block-argument definitions (for the op's first region) and `%x = %init` pairs are
 * classified; everything else is stepped over. The '(' is next. Returns false after an error. */
/* End of a value name `%id` (id ::= [A-Za-z0-9_$.]+ ('-' [A-Za-z0-9_$.]+)* ('#' digits)?) starting
 * at b[i] == '%', or i when there is none: the lexer's T_PERCENT rule, without making a token. */
uint32_t mt_value_name_end(const char *b, uint32_t i, uint32_t end) {
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
    uint32_t e = mt_value_name_end(b, i, end);
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
    mt_push_operand(p, t);
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
      ir_pos ps = mt_pos_of(p, stack[depth - 1].off);
      mt_fail_at(p, u.off, "unexpected end of input: '%c' opened at line %u, column %u is not closed",
              stack[depth - 1].open, ps.line, ps.col);
      return false;
    }
    mt_check_bad(p, u);
    if (u.kind == T_PERCENT && depth == 1 && is_punct(peek(p, 1), p, ':')) {
      ir_value *v = mt_parse_block_arg(p);
      SC_PUSH(p->a, *pending_args, v);
      continue;
    }
    if (u.kind == T_PERCENT && depth == 1 && is_punct(peek(p, 1), p, '=')) { /* %iterArg = %init */
      next(p);
      next(p);
      ir_value *v = mt_new_value(p, tspan(p, u), u.off);
      SC_PUSH(p->a, *pending_args, v);
      continue;
    }
    if (u.kind == T_PERCENT) {
      next(p);
      mt_push_operand(p, u);
      continue;
    }
    if (u.kind == T_PUNCT) {
      char d = p->buf[u.off];
      if (d == '{' || d == '[' || d == '<') {
        mt_skip_group(p);
        continue;
      }
      if (d == '(') {
        if (depth == 32) {
          mt_skip_group(p);
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
        ir_pos ps = mt_pos_of(p, stack[depth - 1].off);
        mt_fail_at(p, u.off, "expected ')' to close '(' opened at line %u, column %u, found '%c'", ps.line, ps.col, d);
        return false;
      }
    }
    if (u.kind == T_WORD && tok_is_word(u, p, "loc") && is_punct(peek(p, 1), p, '(')) {
      mt_parse_loc(p);
      continue;
    }
    next(p);
  }
  return !failed(p);
}

/* Generic form keeps symbols in properties: sym_name = "main", callee = @f, sym_visibility. */
void mt_complete_symbols(sc_arena *a, ir_op *op, bool call_like, bool func_like) {
  if (!ir_op_sym_name(op).n) {
    const ir_attr *s = ir_op_attr(op, "sym_name");
    if (s && s->value.n >= 2 && s->value.p[0] == '"') ir_op_extra_of(a, op)->sym_name = ir_span_of(s->value.p + 1, s->value.n - 2);
  }
  if (!ir_op_callee(op).n && call_like) {
    const ir_attr *c = ir_op_attr(op, "callee");
    if (c && c->value.n >= 2 && c->value.p[0] == '@') ir_op_decl_of(a, op)->callee = ir_span_of(c->value.p + 1, c->value.n - 1);
  }
  if (!ir_op_visibility(op).n && func_like) {
    const ir_attr *v = ir_op_attr(op, "sym_visibility");
    if (v && v->value.n >= 2) ir_op_decl_of(a, op)->visibility = ir_span_of(v->value.p + 1, v->value.n - 2);
  }
}

/* A new op at the next token, within the max_ops bound and not cancelled; NULL after an error. */
ir_op *mt_new_op(P *p, ir_op *parent_op, uint32_t at) {
  if (p->nops >= p->in->max_ops) {
    mt_fail_at(p, at, "more than %u operations", p->in->max_ops);
    p->err->limit = true;
    return NULL;
  }
  if (p->in->cancel && (p->nops & 1023) == 0 && *p->in->cancel) {
    p->err->cancelled = true;
    mt_fail_at(p, at, "cancelled");
    return NULL;
  }
  ir_op *op = ar_alloc(p->a, sizeof *op);
  op->id = p->nops++;
  op->parent_op = parent_op;
  op->pos.offset = at;
  return op;
}

/* op-name ::= string-literal (generic form) | bare-id (custom form)
 * The elided builtins module/return/call/func get their dialect. Returns false after an error. */
bool mt_parse_op_name(P *p, op_state *st, tok name) {
  ir_op *op = st->op;
  ir_span text;
  if (name.kind == T_STRING) {
    text = ir_span_of(p->buf + name.off + 1, name.len >= 2 ? name.len - 2 : 0);
    op->generic = true;
  } else if (name.kind == T_WORD) {
    text = tspan(p, name);
  } else {
    mt_check_bad(p, name);
    mt_fail_at(p, name.off, "expected an operation name after the result list");
    return false;
  }
  if (ir_span_eq(text, "module")) text = ir_span_of("builtin.module", 14);
  else if (ir_span_eq(text, "return")) text = ir_span_of("func.return", 11);
  else if (ir_span_eq(text, "call")) text = ir_span_of("func.call", 9);
  else if (ir_span_eq(text, "func")) text = ir_span_of("func.func", 9);
  if (!ir_op_set_name(op, text)) {
    mt_fail_at(p, name.off, "operation name longer than %u bytes", (unsigned)UINT16_MAX);
    return false;
  }
  ir_op_name_intern(&p->names, op); /* the name's text is at hand now */
  st->call_like = mt_is_call_like(ir_op_name(op));
  st->func_like = mt_is_func_like(ir_op_name(op));
  op->func_like = st->func_like;
  st->sdy_sharded = ir_span_eq(ir_op_name(op), "sdy.sharding_constraint") || ir_span_eq(ir_op_name(op), "sdy.reshard");
  if (st->func_like) SC_PUSH(p->a, p->funcs, op);
  return true;
}

/* symbol-piece ::= @name ('=' value)?      (callee of a call, else the op's symbol; sdy.mesh @m = <..>) */
static void parse_op_symbol(P *p, op_state *st, tok t) {
  next(p);
  ir_span s = tspan(p, t);
  s.p++, s.n--;
  if (s.n >= 2 && s.p[0] == '"') s.p++, s.n -= 2;
  if (st->call_like && !ir_op_callee(st->op).n) ir_op_decl_of(p->a, st->op)->callee = s;
  else if (!ir_op_sym_name(st->op).n) ir_op_extra_of(p->a, st->op)->sym_name = s;
  if (!is_punct(peek(p, 0), p, '=')) return;
  tok eq = next(p);
  tok v = peek(p, 0);
  uint32_t e = mt_skip_unit(p);
  ir_attr a = {ir_span_of("value", 5), ir_span_of(p->buf + v.off, e - v.off), eq.off, e};
  SC_PUSH(p->a, p->s_attrs, a);
}

/* word-piece ::= loc(...) | 'attributes' attr-dict | name '=' value | visibility | other-unit */
static void parse_op_word(P *p, op_state *st, tok t) {
  ir_op *op = st->op;
  if (mt_at_loc(p)) {
    ir_span loc = mt_parse_loc(p);
    op->loc_offset = (uint32_t)(loc.p - p->buf);
    return;
  }
  if (tok_is_word(t, p, "attributes") && is_punct(peek(p, 1), p, '{')) {
    next(p);
    mt_parse_attr_dict(p, &p->s_attrs);
    return;
  }
  if (is_punct(peek(p, 1), p, '=')) { /* custom `name = value` */
    next(p);
    next(p);
    tok v = peek(p, 0);
    uint32_t e = mt_skip_unit(p);
    ir_attr a = {tspan(p, t), ir_span_of(p->buf + v.off, e > v.off ? e - v.off : 0), t.off, e};
    SC_PUSH(p->a, p->s_attrs, a);
    return;
  }
  if (!ir_op_visibility(op).n && st->func_like &&
      (tok_is_word(t, p, "public") || tok_is_word(t, p, "private") || tok_is_word(t, p, "nested")))
    ir_op_decl_of(p->a, op)->visibility = tspan(p, t);
  mt_skip_unit(p);
}

/* brace-piece ::= region | attr-dict | set-literal        (the '{' is next) */
static void parse_op_brace(P *p, op_state *st, tok t) {
  tok k1 = peek(p, 1), k2 = peek(p, 2);
  /* A '{' ending its line that is not an attribute dict opens a region (then a bad first line is
   * reported as "expected an operation" rather than swallowed as a set literal). */
  if (mt_begins_op(p, 1) || (k1.bol && !is_punct(k1, p, '}') && !is_punct(k2, p, '=') && !is_punct(k2, p, ','))) {
    mt_add_region(p, st->op, &st->regions, &st->pending_args);
  } else if (is_punct(k1, p, '}') || ((k1.kind == T_WORD || k1.kind == T_STRING) && is_punct(k2, p, '=')) ||
             (k1.kind == T_WORD && (is_punct(k2, p, ',') || is_punct(k2, p, '}')))) {
    mt_parse_attr_dict(p, &p->s_attrs);
  } else { /* a set literal in custom syntax: {"x", "y"} */
    uint32_t e = mt_skip_group(p);
    ir_attr a = {{0}, ir_span_of(p->buf + t.off, e - t.off), t.off, e};
    SC_PUSH(p->a, p->s_attrs, a);
  }
}

/* properties ::= '<' attr-dict '>'        (the '<' is next, then '{') */
static bool parse_properties(P *p) {
  next(p);
  mt_parse_attr_dict(p, &p->s_attrs);
  tok close = next(p);
  if (!is_punct(close, p, '>')) {
    mt_check_bad(p, close);
    mt_fail_at(p, close.off, "expected '>' to close the properties '<{'");
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
      mt_check_bad(p, u);
      mt_fail_at(p, u.off, "expected '{' to open a region");
      return false;
    }
    mt_add_region(p, st->op, &st->regions, &st->pending_args);
    tok sep = next(p);
    if (is_punct(sep, p, ',')) continue;
    if (is_punct(sep, p, ')')) return true;
    mt_check_bad(p, sep);
    mt_fail_at(p, sep.off, "expected ',' or ')' after a region");
    return false;
  }
}

/* punct-piece ::= ':' types | brace-piece | properties | region-list | '(' operands-or-args ')'
 *               | '<' ... '>' | '[' ... ']' | other punctuation          Returns false after an error. */
static bool parse_op_punct(P *p, op_state *st, tok t) {
  char c = t.ch;
  if (c == ':') {
    if (st->seen_trailer) next(p); /* a second ':' cannot start another type list; skip it */
    else mt_parse_trailer_types(p, st->op, &st->seen_trailer);
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
    uint32_t e = mt_skip_group(p);
    ir_span name_span = {0};
    if (c == '<' && st->sdy_sharded) name_span = ir_span_of("sharding", 8);
    ir_attr a = {name_span, ir_span_of(p->buf + t.off, e - t.off), t.off, e};
    SC_PUSH(p->a, p->s_attrs, a);
    return true;
  }
  next(p);
  return true;
}

/* One piece of the op at token t. Returns false after an error. */
bool mt_parse_op_piece(P *p, op_state *st, tok t) {
  switch (t.kind) {
  case T_PERCENT: /* operand */
    next(p);
    mt_push_operand(p, t);
    return true;
  case T_AT:
    parse_op_symbol(p, st, t);
    return true;
  case T_ARROW: /* func.func results, or a function type in custom syntax */
    next(p);
    if (st->func_like) mt_parse_func_results(p, st->op);
    else mt_skip_unit(p);
    return true;
  case T_WORD:
    parse_op_word(p, st, t);
    return true;
  case T_PUNCT:
    return parse_op_punct(p, st, t);
  default:
    mt_skip_unit(p);
    return true;
  }
}
