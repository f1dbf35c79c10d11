/* hlo_instr.c — the XLA HLO text front end's instructions and name resolution (see hlo_text.c): an
 * instruction's name, shape, opcode, operands (nested instructions included) and attributes onto one
 * op, parameters numbered, then operands and called computations resolved by name. Part of one parse:
 * every function takes the parser state `P` (hlo_text.h), owned by the thread running the parse; a
 * syntax error longjmps out through hlo_fail. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "front/hlo_text.h"
#include "util/hash.h"

/* ---------------------------------------------------------------------------------------------
 * Instructions */

static void scratch_push(P *p, ir_span name, ir_span type, ir_value *v) {
  if (p->scratch_n == p->scratch_cap) {
    uint32_t nc = p->scratch_cap ? p->scratch_cap * 2 : 64;
    p->scratch_names = hlo_grow(p, p->scratch_names, p->scratch_n, nc, sizeof *p->scratch_names);
    p->scratch_types = hlo_grow(p, p->scratch_types, p->scratch_n, nc, sizeof *p->scratch_types);
    p->scratch_vals = hlo_grow(p, p->scratch_vals, p->scratch_n, nc, sizeof *p->scratch_vals);
    p->scratch_cap = nc;
  }
  p->scratch_names[p->scratch_n] = name;
  p->scratch_types[p->scratch_n] = type;
  p->scratch_vals[p->scratch_n] = v;
  p->scratch_n++;
}

void hlo_count_op(P *p, const char *at) {
  p->ninstr++;
  if (p->ninstr > p->max_ops) hlo_fail_limit(p, at, "too many instructions (limit %u)", p->max_ops);
  if (p->ninstr % CANCEL_POLL_INTERVAL == 0 && p->cancel && *p->cancel) hlo_fail_cancelled(p, at);
}

/* An instruction's op, its result value and its one-element arrays, in one allocation. */
typedef struct {
  ir_op op;
  ir_value value;
  ir_span result_types[1];
  ir_op_types types; /* its own: an instruction's operand shapes are written per instruction */
  ir_op_extra extra;
} instr_block;

static ir_op *new_instr(P *p, comp *c, const char *start, ir_span opcode, ir_span name, ir_span shape) {
  instr_block *ib = hlo_alloc(p, sizeof *ib);
  ir_op *op = &ib->op;
  if (!ir_op_set_name(op, opcode)) hlo_fail(p, opcode.p, "opcode longer than %u bytes", (unsigned)UINT16_MAX);
  op->pos.offset = hlo_off(p, start);
  op->extra = &ib->extra; /* every instruction has a name (and most a metadata location) */
  op->extra->sym_name = name;
  op->parent_op = c->func;
  ir_value *v = &ib->value;
  v->name = name;
  ir_value_set_def(v, op);
  v->index = 0;
  v->pos = op->pos;
  op->result_values = v;
  op->nresults = 1;
  op->types = &ib->types;
  if (shape.n) {
    ib->result_types[0] = shape;
    ib->types.result_types = ib->result_types;
    ib->types.nresult_types = 1;
  }
  return op;
}

static ir_op *parse_rhs(P *p, comp *c, const char *start, ir_span name, ir_span preshape, uint32_t depth,
                        bool nested);

/* At '(' after `opcode`: the operand list. Operands go onto the scratch stack. */
static void parse_operands(P *p, comp *c, ir_span opcode, uint32_t depth, uint32_t *param_num) {
  const char *open = p->s, *e = p->end;
  gctx g = {"operand list of", opcode};
  if (depth + 1 > p->max_depth) hlo_fail_limit(p, open, "nesting deeper than %u", p->max_depth);
  if (SPAN_IS(opcode, "constant")) {
    p->s = hlo_skip_group_at(p, open, depth, g); /* a literal, not operands */
    return;
  }
  p->s++;
  bool first = true;
  for (;;) {
    hlo_skip_ws(p);
    const char *s = p->s;
    if (s >= e)
      hlo_fail(p, e, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(opcode),
           hlo_line_at(p, open));
    if (*s == ')') {
      if (!first) hlo_fail(p, s, "expected an operand after ',' in operand list of '" SC_SPAN_FMT "'", SC_SPAN_ARG(opcode));
      p->s++;
      return;
    }
    first = false;
    char c0 = *s;
    if (is_digit(c0) || c0 == '-' || c0 == '+' || c0 == '"' || c0 == '{' || c0 == '.') {
      /* A literal: parameter(0), or a literal operand of some other op. */
      const char *q = hlo_scan_value_at(p, s, depth + 1, (gctx){"literal in operand list of", opcode});
      if (param_num && is_digit(c0)) *param_num = hlo_parse_u32_span(hlo_span(s, q));
      p->s = q;
    } else {
      ir_span shape = {0};
      if (hlo_parse_shape(p, depth + 1, false, &shape)) hlo_skip_ws(p);
      const char *ns = p->s;
      ir_span bare;
      const char *ne = hlo_lex_name_at(p, ns, true, &bare);
      if (ne == ns) {
        if (ns >= e || *ns == '}' || *ns == ']')
          hlo_fail(p, ns, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(opcode),
               hlo_line_at(p, open));
        hlo_fail(p, ns, "expected an operand name in operand list of '" SC_SPAN_FMT "'", SC_SPAN_ARG(opcode));
      }
      const char *after = skip_ws_at(p, ne);
      if (after < e && *after == '(') {
        /* Nested instruction: [shape] opcode(operands). The only recursion on input nesting, so it
         * has a hard bound too, whatever max_depth says (worker threads have small stacks). */
        if (depth + 1 > MAX_NESTED_INSTR_DEPTH)
          hlo_fail_limit(p, ns, "nested operand instructions deeper than %u", MAX_NESTED_INSTR_DEPTH);
        p->s = ns;
        ir_op *nested = parse_rhs(p, c, shape.n ? shape.p : ns, (ir_span){ns, 0}, shape, depth + 1, true);
        scratch_push(p, hlo_span(ns, ns), shape, ir_op_result(nested, 0)); /* unnamed, already resolved */
      } else {
        /* Compact GTE suffix: %t#1#0. */
        const char *q = ne;
        while (q < e && *q == '#') {
          const char *d = q + 1;
          while (d < e && is_digit(*d)) d++;
          if (d == q + 1) hlo_fail(p, q, "expected a tuple index after '#'");
          q = d;
        }
        scratch_push(p, hlo_span(bare.p, q), shape, NULL);
        p->s = q;
      }
    }
    hlo_skip_ws(p);
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
      hlo_fail(p, e, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u", SC_SPAN_ARG(opcode),
           hlo_line_at(p, open));
    if (*s == '}' || *s == ']')
      hlo_fail(p, s, "expected ')' to close operand list of '" SC_SPAN_FMT "' opened at line %u, found '%c'",
           SC_SPAN_ARG(opcode), hlo_line_at(p, open), *s);
    hlo_fail(p, s, "expected ',' or ')' after an operand of '" SC_SPAN_FMT "' (operand list opened at line %u)",
         SC_SPAN_ARG(opcode), hlo_line_at(p, open));
  }
}

static void add_param(P *p, comp *c, ir_op *op, uint32_t num) {
  if (c->params.n == c->param_cap) {
    uint32_t nc = c->param_cap ? c->param_cap * 2 : 8;
    c->param_nums = hlo_grow(p, c->param_nums, c->param_cap, nc, sizeof *c->param_nums);
    c->param_cap = nc;
  }
  c->param_nums[c->params.n] = num;
  hlo_opvec_push(p, &c->params, op);
}

/* The right-hand side `[shape] opcode(operands) [, attrs]` at the cursor. For a nested operand
 * instruction no attributes follow. Appends the op to the computation and returns it. */
static ir_op *parse_rhs(P *p, comp *c, const char *start, ir_span name, ir_span preshape, uint32_t depth,
                        bool nested) {
  const char *e = p->end;
  hlo_count_op(p, start);
  if (depth > p->max_depth) hlo_fail_limit(p, p->s, "nesting deeper than %u", p->max_depth);
  ir_span shape = preshape;
  const char *s = p->s;
  if (shape.n) {
    /* Already parsed by the caller (nested operand instruction). */
  } else if (s < e && *s != '(') {
    /* The shape may be omitted (`x = add(a, b)`): an identifier followed by '(' is the opcode. A
     * shape's element type is followed by '[' instead, so trying the shape first decides the same. */
    if (hlo_parse_shape(p, depth, false, &shape)) {
      hlo_skip_ws(p);
    } else {
      ir_span ident;
      const char *ie = hlo_lex_name_at(p, s, false, &ident);
      const char *after = skip_ws_at(p, ie);
      if (ie == s || after >= e || *after != '(')
        hlo_fail(p, s, "expected a shape after '=' in instruction '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
    }
  } else if (!hlo_parse_shape(p, depth, false, &shape)) {
    hlo_fail(p, s, "expected a shape after '=' in instruction '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  } else {
    hlo_skip_ws(p);
  }
  s = p->s;
  if (!shape.n) shape = hlo_span(s, s); /* no shape: an empty span at the opcode, never NULL */
  ir_span opcode;
  const char *oe = hlo_lex_name_at(p, s, false, &opcode);
  if (oe == s) {
    if (nested) hlo_fail(p, s, "expected an opcode");
    hlo_fail(p, s, "expected an opcode after the shape of instruction '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  }
  p->s = skip_ws_at(p, oe);
  if (p->s >= e || *p->s != '(')
    hlo_fail(p, p->s, "expected '(' after opcode '" SC_SPAN_FMT "'", SC_SPAN_ARG(opcode));
  uint32_t scratch_base = p->scratch_n;
  uint32_t param_num = UINT32_MAX;
  bool is_param = SPAN_IS(opcode, "parameter");
  parse_operands(p, c, opcode, depth, is_param ? &param_num : NULL);
  const char *last = p->s;
  uint32_t at_base = p->at_n;
  ir_op *op = new_instr(p, c, start, opcode, name, shape);
  if (!nested) last = hlo_parse_attrs(p, depth, last, "instruction", name.n ? name : opcode, op, &op->extra->src);
  /* Operands. */
  uint32_t n = p->scratch_n - scratch_base;
  if (n) {
    /* One allocation for the three parallel arrays (spans first: they need the stronger alignment). */
    char *mem = hlo_alloc_array(p, n, 2 * sizeof(ir_span) + sizeof(ir_value *));
    ir_span *names = ir_op_extra_of(p->a, op)->operand_names = (ir_span *)mem;
    op->types->operand_types = (ir_span *)(mem + n * sizeof(ir_span));
    op->operands = (ir_value **)(mem + 2 * n * sizeof(ir_span));
    memcpy(op->operands, p->scratch_vals + scratch_base, n * sizeof *op->operands);
    memcpy(names, p->scratch_names + scratch_base, n * sizeof *names);
    memcpy(op->types->operand_types, p->scratch_types + scratch_base, n * sizeof(ir_span));
    op->noperands = n;
    op->types->noperand_types = n;
  }
  p->scratch_n = scratch_base;
  op->end = hlo_off(p, last);
  if (!nested) {
    /* ROOT (if any) was pushed by the caller before at_base-1; attrs_take gets both. */
    ir_op_set_attrs(op, hlo_attrs_take(p, at_base));
    for (uint32_t i = 0; i < ir_op_attrs(op)->n; i++) {
      const ir_attr *at = &ir_op_attrs(op)->v[i];
      if (!ir_op_callee(op).n && (SPAN_IS(at->name, "to_apply") || SPAN_IS(at->name, "calls"))) {
        ir_span v = at->value;
        if (v.n && v.p[0] == '{') {
          const char *q = skip_ws_at(p, v.p + 1);
          ir_span nm;
          if (hlo_lex_name_at(p, q, true, &nm) != q) hlo_decl_of(p, op)->callee = nm;
        } else {
          hlo_decl_of(p, op)->callee = hlo_strip_percent(v);
        }
      }
    }
  }
  if (is_param) {
    if (param_num == UINT32_MAX) hlo_fail(p, start, "expected a parameter number in 'parameter(N)'");
    add_param(p, c, op, param_num);
  }
  hlo_opvec_push(p, &p->cur_ops, op);
  return op;
}

void hlo_parse_instruction(P *p, comp *c, uint32_t depth) {
  const char *start = p->s, *e = p->end;
  const char *s = start;
  uint32_t at_base = p->at_n;
  if (at_word(p, s, "ROOT")) {
    const char *q = skip_ws_at(p, s + 4);
    if (q < e && *q != '=') {
      if (c->have_root) hlo_fail(p, s, "one computation should have only one ROOT");
      c->have_root = true;
      ir_attr root = {hlo_span(s, s + 4), hlo_span(s + 4, s + 4), hlo_off(p, s), hlo_off(p, s + 4)};
      hlo_attr_push(p, root);
      s = q;
    }
  }
  ir_span name;
  const char *ne = hlo_lex_name_at(p, s, true, &name);
  if (ne == s) hlo_fail(p, s, "expected an instruction name or '}'");
  const char *q = skip_ws_at(p, ne);
  if (q >= e || *q != '=')
    hlo_fail(p, q, "expected '=' after instruction name '" SC_SPAN_FMT "'", SC_SPAN_ARG(name));
  p->s = skip_ws_at(p, q + 1);
  /* parse_rhs takes the attributes after the operands; the ROOT marker is prepended here. */
  ir_op *op = parse_rhs(p, c, start, name, (ir_span){0}, depth, false);
  if (p->at_n != at_base) {
    /* ROOT attr still on the scratch stack: prepend it. */
    ir_attrs rest = {op->attr_v, op->nattrs};
    ir_attrs all;
    all.n = rest.n + (p->at_n - at_base);
    all.v = hlo_alloc_array(p, all.n, sizeof *all.v);
    memcpy(all.v, p->at_v + at_base, (p->at_n - at_base) * sizeof *all.v);
    if (rest.n) memcpy(all.v + (p->at_n - at_base), rest.v, rest.n * sizeof *all.v);
    ir_op_set_attrs(op, all);
    p->at_n = at_base;
  }
}

/* ---------------------------------------------------------------------------------------------
 * Name resolution */

typedef struct hslot {
  ir_span key;
  void *val;
} hslot;

typedef struct {
  hslot *v;
  uint32_t mask;
  uint64_t seed; /* the request's hash key (util/hash.h): names cannot be crafted to collide */
} htab;

static uint32_t hash_span(const htab *t, ir_span s) { return (uint32_t)hash_bytes(s.p, s.n, t->seed); }

/* Tables are built one at a time, so they share one buffer (cleared, grown when too small). */
static void htab_init(P *p, htab *t, uint32_t n) {
  uint32_t cap = 16;
  while (cap < 2 * (uint64_t)n + 1 && cap < (1u << 31)) cap <<= 1;
  if (cap > p->ht_cap) {
    p->ht_v = hlo_alloc_array(p, cap, sizeof *p->ht_v);
    p->ht_cap = cap;
  } else {
    memset(p->ht_v, 0, cap * sizeof *p->ht_v);
  }
  t->v = p->ht_v;
  t->mask = cap - 1;
  t->seed = ar_hash_seed(p->a);
}


/* Inserts unless present (first definition wins). */
static void htab_put(htab *t, ir_span key, void *val) {
  for (uint32_t i = hash_span(t, key) & t->mask;; i = (i + 1) & t->mask) {
    if (!t->v[i].val) {
      t->v[i].key = key;
      t->v[i].val = val;
      return;
    }
    if (ir_span_same(t->v[i].key, key)) return;
  }
}

static void *htab_get(const htab *t, ir_span key) {
  for (uint32_t i = hash_span(t, key) & t->mask;; i = (i + 1) & t->mask) {
    if (!t->v[i].val) return NULL;
    if (ir_span_same(t->v[i].key, key)) return t->v[i].val;
  }
}

void hlo_resolve_operands(P *p, comp *c) {
  htab t;
  htab_init(p, &t, c->block->nops);
  for (uint32_t i = 0; i < c->block->nops; i++) {
    ir_value *v = ir_op_result(c->block->ops[i], 0);
    if (v->name.n) htab_put(&t, v->name, v);
  }
  for (uint32_t i = 0; i < c->block->nops; i++) {
    ir_op *op = c->block->ops[i];
    for (uint32_t k = 0; k < op->noperands; k++) {
      if (!op->operands[k]) {
        ir_span nm = ir_op_operand_name(op, k);
        ir_span base = nm;
        for (uint32_t j = 0; j < nm.n; j++)
          if (nm.p[j] == '#') {
            base.n = j;
            break;
          }
        ir_value *v = htab_get(&t, base);
        if (!v)
          hlo_fail(p, base.p, "unknown operand '" SC_SPAN_FMT "' of '" SC_SPAN_FMT "' in computation '" SC_SPAN_FMT "'",
               SC_SPAN_ARG(base), SC_SPAN_ARG(ir_op_name(op)), SC_SPAN_ARG(ir_op_sym_name(c->func)));
        op->operands[k] = v;
      }
      if (!op->types->operand_types[k].n) op->types->operand_types[k] = ir_value_type(op->operands[k]);
    }
  }
}

/* Attributes whose values name computations. */
bool hlo_is_comp_attr(ir_span n) {
  if (n.n < 4 || n.n > 19) return false; /* "body" .. "called_computations" */
  return SPAN_IS(n, "to_apply") || SPAN_IS(n, "calls") || SPAN_IS(n, "body") || SPAN_IS(n, "condition") ||
         SPAN_IS(n, "true_computation") || SPAN_IS(n, "false_computation") || SPAN_IS(n, "branch_computations") ||
         SPAN_IS(n, "called_computations") || SPAN_IS(n, "select") || SPAN_IS(n, "scatter");
}

static void check_comp_ref(P *p, const htab *t, const ir_attr *at, const char *s, const char *e) {
  ir_span nm;
  const char *ne = hlo_lex_name_at(p, s, true, &nm);
  if (ne == s) hlo_fail(p, s, "expected a computation name in '" SC_SPAN_FMT "'", SC_SPAN_ARG(at->name));
  if (!htab_get(t, nm))
    hlo_fail(p, s, "unknown computation '" SC_SPAN_FMT "' in '" SC_SPAN_FMT "='", SC_SPAN_ARG(nm), SC_SPAN_ARG(at->name));
  (void)e;
}

void hlo_resolve_computations(P *p, ir_op **ops, uint32_t nops) {
  htab t;
  htab_init(p, &t, p->funcs.n);
  for (uint32_t i = 0; i < p->funcs.n; i++) htab_put(&t, ir_op_sym_name(p->funcs.v[i]), p->funcs.v[i]);
  for (uint32_t i = 0; i < nops; i++) {
    ir_op *op = ops[i];
    for (uint32_t k = 0; k < ir_op_attrs(op)->n; k++) {
      const ir_attr *at = &ir_op_attrs(op)->v[k];
      if (!hlo_is_comp_attr(at->name)) continue;
      const char *s = at->value.p, *e = at->value.p + at->value.n;
      if (hlo_starts_inline_body(p, s)) continue; /* parsed in place as a computation of its own */
      if (s < e && *s == '{') {
        /* {a, b, ...} */
        s = skip_ws_at(p, s + 1);
        e--;
        while (s < e) {
          ir_span nm;
          const char *ne = hlo_lex_name_at(p, s, true, &nm);
          check_comp_ref(p, &t, at, s, e);
          s = skip_ws_at(p, ne);
          if (s < e && *s == ',') s = skip_ws_at(p, s + 1);
          else if (s < e) hlo_fail(p, s, "expected ',' or '}' in '" SC_SPAN_FMT "='", SC_SPAN_ARG(at->name));
        }
      } else {
        check_comp_ref(p, &t, at, s, e);
        ir_span nm;
        const char *ne = hlo_lex_name_at(p, s, true, &nm);
        if (ne != e) hlo_fail(p, ne, "unexpected text after computation name in '" SC_SPAN_FMT "='", SC_SPAN_ARG(at->name));
      }
    }
  }
}
