/* engine_print.c — the engine's result as text: every changed sharding written back into the module
 * (see engine.c). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "propagate/engine_state.h"

/* ---- printing ------------------------------------------------------------------------------------ */

/* A final sharding as printed: closed after the pipeline (its export passes close every sharding). */
static void put_final(const prop_engine *e, ar_str *out, const prop_sharding *s) {
  if (e->opt.close_shardings) prop_sharding_put_closed(out, s);
  else prop_sharding_put(out, s);
}

static void put_sharding_attr(const prop_engine *e, ar_str *out, const prop_sharding *s) {
  ar_str_puts(out, "#sdy.sharding");
  put_final(e, out, s);
}

/* `#sdy.sharding_per_value<[...]>` of an op's results; results without a sharding print open and
 * empty on the mesh of the others. */
/* The slot a result is printed from: a sharding group's shared one; otherwise its own (a value aliased
 * to an explicit data-flow edge or a while's block arguments shows only what was written on it). */
static uint32_t print_slot(const prop_engine *e, const ir_op *op, uint32_t r) {
  uint32_t raw = prefix_at(&e->result_base, op->id) + r;
  return e->grouped && e->grouped[raw] ? slot_of(e, ir_op_result(op, r)) : raw;
}

static sharding_ref result_sharding(const prop_engine *e, const ir_op *op, uint32_t r) {
  return e->sh[print_slot(e, op, r)];
}

static const char *per_value_text(prop_engine *e, const ir_op *op) {
  sharding_ref *v = ar_alloc(e->a, (op->nresults ? op->nresults : 1) * sizeof *v);
  for (uint32_t r = 0; r < op->nresults; r++) v[r] = result_sharding(e, op, r);
  return prop_per_value_text(e->a, op, v, e->opt.close_shardings);
}

static bool result_sharding_known(const prop_engine *e, const ir_op *op) {
  for (uint32_t r = 0; r < op->nresults; r++)
    if (result_sharding(e, op, r)) return true;
  return false;
}

static bool results_changed(const prop_engine *e, const ir_op *op) {
  for (uint32_t r = 0; r < op->nresults; r++) {
    uint32_t raw = prefix_at(&e->result_base, op->id) + r, s = print_slot(e, op, r);
    if (was_written(e, s)) return true;
    /* a sharding group shares its members' slot: one written on another member is new on this op */
    if (e->sh[s] && e->grouped && e->grouped[raw] &&
        (!md_model_result_sharding(e->model, op, r) || !prop_sharding_eq(initial_of(e, raw), e->sh[s])))
      return true;
  }
  return false;
}

/* The op's `sdy.sharding` is written with each value's `#sdy.sharding<...>` in full, which MLIR prints
 * as `<...>` inside `#sdy.sharding_per_value`: the attribute is printed again. */
static bool written_long_form(const ir_op *op) {
  const ir_attr *at = ir_op_attr(op, "sdy.sharding");
  if (!at || at->value.n < 30 || memcmp(at->value.p, "#sdy.sharding_per_value<", 24)) return false;
  for (const char *c = at->value.p + 24, *end = at->value.p + at->value.n; c + 14 <= end; c++)
    if (*c == '#' && !memcmp(c, "#sdy.sharding<", 14)) return true;
  return false;
}

/* A generic op whose dictionary mixes its own attributes with `sdy.sharding`: MLIR prints the former as
 * properties (`<{...}>`) and the latter in `{...}`, so the dictionary is printed again. */
static bool generic_mixed_dict(const ir_op *op) {
  if (!op->generic || !ir_op_attr(op, "sdy.sharding")) return false;
  for (uint32_t i = 0; i < ir_op_attrs(op)->n; i++)
    if (!memchr(ir_op_attrs(op)->v[i].name.p, '.', ir_op_attrs(op)->v[i].name.n)) return true;
  return false;
}

/* Appends ` {name = value, ...}` for an argument or result: its attributes as written with
 * sdy.sharding set to `s` (when non-NULL; dropped when `clear`), sorted by name as MLIR prints them. */
static void put_value_attrs(const prop_engine *e, ar_str *out, sc_arena *a, const ir_attrs *attrs, const prop_sharding *s,
                            bool clear) {
  uint32_t n = attrs ? attrs->n : 0;
  const char **names = ar_alloc(a, (n + 1) * sizeof *names);
  const char **texts = ar_alloc(a, (n + 1) * sizeof *texts);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    ir_span name = attrs->v[i].name;
    bool is_sharding = ir_span_eq(name, "sdy.sharding");
    if (is_sharding && (s || clear)) continue;
    names[k] = ir_span_dup(a, name);
    texts[k] = ar_printf(a, "%.*s = %.*s", SC_SPAN_ARG(name), SC_SPAN_ARG(attrs->v[i].value));
    k++;
  }
  if (s) {
    ar_str t = SC_ASTR_INIT(a);
    ar_str_puts(&t, "sdy.sharding = ");
    put_sharding_attr(e, &t, s);
    names[k] = "sdy.sharding";
    texts[k] = ar_str_str(&t);
    k++;
  }
  /* insertion sort: a value has a handful of attributes */
  for (uint32_t i = 1; i < k; i++)
    for (uint32_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      const char *tn = names[j], *tt = texts[j];
      names[j] = names[j - 1], texts[j] = texts[j - 1];
      names[j - 1] = tn, texts[j - 1] = tt;
    }
  if (!k) return;
  ar_str_puts(out, " {");
  for (uint32_t i = 0; i < k; i++) ar_str_printf(out, "%s%s", i ? ", " : "", texts[i]);
  ar_str_puts(out, "}");
}

/* Where a function's body region opens: the first depth-0 `{` after its argument list that does not
 * follow `attributes`. */
static uint32_t body_open(const ir_module *m, const ir_op *fn, uint32_t *attributes_at) {
  const char *buf = m->buf, *p = buf + fn->pos.offset, *end = buf + fn->end;
  int depth = 0;
  bool seen_args = false;
  *attributes_at = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = ir_skip_string(p, end);
      continue;
    }
    if (c == '-' && p + 1 < end && p[1] == '>') {
      p += 2;
      continue;
    }
    if (depth == 0 && seen_args && end - p > 10 && !memcmp(p, "attributes", 10)) *attributes_at = (uint32_t)(p - buf);
    if (c == '{' && depth == 0 && seen_args) {
      const char *q = p;
      while (q > buf && (q[-1] == ' ' || q[-1] == '\n' || q[-1] == '\t')) q--;
      if (!(q - buf >= 10 && !memcmp(q - 10, "attributes", 10))) return (uint32_t)(p - buf);
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') depth++;
    else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (depth > 0) depth--;
      if (depth == 0 && c == ')') seen_args = true;
    }
    p++;
  }
  return UINT32_MAX;
}

/* The function the pipeline treats as the module's main: the only one, or the one named `main`. */
static bool is_main_func(const ir_module *m, uint32_t f) {
  return m->nfuncs == 1 || ir_span_eq(ir_op_sym_name(m->funcs[f]), "main");
}

/* The sharding of the value function `fn` returns as its result `k`, which the pipeline's
 * -sdy-propagate-to-func-results writes on every function but main (NULL: none). */
static const prop_sharding *returned_sharding(const prop_engine *e, const ir_op *fn, uint32_t k) {
  if (!fn->nregions || !ir_op_regions(fn)[0]->nblocks) return NULL;
  const ir_block *b = ir_op_regions(fn)[0]->blocks[0];
  const ir_op *ret = b->nops ? b->ops[b->nops - 1] : NULL;
  if (!ret || ret->kind != SC_OP_RETURN || k >= ret->noperands || !ret->operands[k]) return NULL;
  uint32_t slot = operand_slot(e, ret, k);
  return slot < e->nslots ? e->sh[slot] : NULL;
}

/* Whether a function's body ends in func.return (the pass leaves any other function alone). */
static bool ends_in_return(const ir_op *fn) {
  const ir_block *b = fn->nregions && ir_op_regions(fn)[0]->nblocks ? ir_op_regions(fn)[0]->blocks[0] : NULL;
  return b && b->nops && b->ops[b->nops - 1]->kind == SC_OP_RETURN;
}

/* Reprints a function's signature on one line with its arguments' and results' shardings (the pipeline
 * gives every function but main its returned values' shardings). */
static void print_signature(prop_engine *e, prop_printer *pr, uint32_t f) {
  const ir_op *fn = e->m->funcs[f];
  if (!fn->nregions || !ir_op_regions(fn)[0]->nblocks || fn->generic) return;
  uint32_t attributes_at, open = body_open(e->m, fn, &attributes_at);
  if (open == UINT32_MAX) return;
  const ir_block *entry = ir_op_regions(fn)[0]->blocks[0];
  ar_str s = SC_ASTR_INIT(e->a);
  ir_span vis = ir_op_visibility(fn);
  ar_str_puts(&s, "func.func ");
  if (vis.n) ar_str_printf(&s, "%.*s ", SC_SPAN_ARG(vis));
  ar_str_printf(&s, "@%.*s(", SC_SPAN_ARG(ir_op_sym_name(fn)));
  for (uint32_t k = 0; k < entry->nargs; k++) {
    const ir_value *v = entry->args[k];
    ar_str_printf(&s, "%s%.*s: %.*s", k ? ", " : "", SC_SPAN_ARG(v->name), SC_SPAN_ARG(ir_value_type(v)));
    put_value_attrs(e, &s, e->a, ir_value_attrs(v), e->sh[slot_of(e, v)], false);
  }
  ar_str_puts(&s, ")");
  uint32_t nres = ir_op_nresult_attrs(fn);
  const ir_span *types = ir_op_func_result_types(fn);
  const ir_attrs *rattrs = ir_op_result_attrs(fn);
  const prop_sharding **results = ar_alloc(e->a, (nres + 1) * sizeof *results);
  bool callee = e->opt.results_from_returns && !is_main_func(e->m, f) && ends_in_return(fn), any_attrs = false;
  for (uint32_t k = 0; k < nres; k++) {
    results[k] = callee ? returned_sharding(e, fn, k) : e->func_results[f][k];
    any_attrs |= results[k] || (rattrs && rattrs[k].n && !(callee && rattrs[k].n == 1 && ir_attrs_find(&rattrs[k], "sdy.sharding")));
  }
  if (nres == 1 && !any_attrs) ar_str_printf(&s, " -> %.*s", SC_SPAN_ARG(types[0]));
  else if (nres) {
    ar_str_puts(&s, " -> (");
    for (uint32_t k = 0; k < nres; k++) {
      ar_str_printf(&s, "%s%.*s", k ? ", " : "", SC_SPAN_ARG(types[k]));
      put_value_attrs(e, &s, e->a, rattrs ? &rattrs[k] : NULL, results[k], callee);
    }
    ar_str_puts(&s, ")");
  }
  if (attributes_at) {
    ar_str_puts(&s, " ");
    ar_str_put(&s, e->m->buf + attributes_at, open - attributes_at);
  }
  while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\n')) s.n--;
  ar_str_puts(&s, " ");
  prop_printer_replace(pr, fn->pos.offset, open, ar_str_str(&s));
}

/* `[<...>, ...]` of op's `n` operand or result shardings (NULL ones open on the others' mesh, of the rank of
 * their values' types). */
static const char *sharding_list(prop_engine *e, const sharding_ref *v, uint32_t n, const ir_op *op, bool results) {
  const prop_sharding *any = NULL;
  for (uint32_t i = 0; i < n && !any; i++) any = v[i];
  if (!any) return "[]";
  ar_str s = SC_ASTR_INIT(e->a);
  ar_str_puts(&s, "[");
  for (uint32_t i = 0; i < n; i++) {
    const prop_sharding *x = v[i];
    if (!x) {
      ir_tensor_type tt;
      const ir_value *value = results ? ir_op_result(op, i) : op->operands[i];
      int32_t rank = value && ir_parse_tensor_type(e->a, ir_value_type(value), &tt) && tt.rank > 0 ? tt.rank : 0;
      x = prop_sharding_open(e->a, any->mesh, any->mesh_name, (uint32_t)rank);
    }
    if (i) ar_str_puts(&s, ", ");
    put_final(e, &s, x);
  }
  ar_str_puts(&s, "]");
  return ar_str_str(&s);
}

/* Whether an explicit `sdy.data_flow_edge` (-sdy-add-data-flow-edges' form) reads `v`: the edge then holds
 * the sharding, and the computation's own in/out sharding for it stays as written. */
static bool has_explicit_edge(const prop_engine *e, const ir_value *v) {
  uint32_t s = slot_of(e, v);
  if (!v || s >= e->nslots) return false;
  for (uint32_t u = prefix_at(&e->use_start, s); u < prefix_at(&e->use_start, s + 1); u++) {
    const ir_op *user = e->m->ops[e->users[u]];
    if (user->kind == SC_OP_SDY_DATA_FLOW_EDGE && user->noperands == 1 && user->operands[0] == v) return true;
  }
  return false;
}

static int cmp_int(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* The pipeline's import lists a manual computation's manual axes in mesh order (-sdy-manual-axes-cleanup):
 * `{"b", "a"}` on mesh ["a", "b"] prints as `{"a", "b"}`. */
static void print_sorted_manual_axes(prop_engine *e, prop_printer *pr, const ir_op *op) {
  const md_sdy_op_info *x = md_info_sdy_op(md_model_op(e->model, op));
  const computation_globals *g = written_globals(e, op);
  const md_mesh *mesh = NULL;
  for (uint32_t k = 0; g && k < op->noperands && !mesh; k++) mesh = g->in[k] ? g->in[k]->mesh : NULL;
  for (uint32_t r = 0; g && r < op->nresults && !mesh; r++) mesh = g->out[r] ? g->out[r]->mesh : NULL;
  if (!mesh || x->nmanual_axes < 2 || x->manual_axes_offset >= e->m->len) return;
  int *index = ar_alloc(e->a, x->nmanual_axes * sizeof *index); /* mesh axis of each, as written */
  bool sorted = true;
  for (uint32_t i = 0; i < x->nmanual_axes; i++) {
    if (x->manual_axes[i].sub || (index[i] = md_mesh_axis_index(mesh, x->manual_axes[i].name)) < 0) return;
    sorted &= !i || index[i - 1] < index[i];
  }
  if (sorted) return;
  qsort(index, x->nmanual_axes, sizeof *index, cmp_int);
  const char *buf = e->m->buf, *end = buf + e->m->len, *p = buf + x->manual_axes_offset;
  while (p < end && *p != '{' && *p != '}' && *p != '"') p++; /* past `#sdy<manual_axes` in the generic form */
  if (p >= end || *p != '{') return;
  const char *close = p + 1;
  while (close < end && *close != '}') close = *close == '"' ? ir_skip_string(close, end) : close + 1;
  if (close >= end) return;
  ar_str text = SC_ASTR_INIT(e->a);
  for (uint32_t i = 0; i < x->nmanual_axes; i++)
    ar_str_printf(&text, "%s\"%.*s\"", i ? ", " : "{", SC_SPAN_ARG(mesh->axes[index[i]].name));
  ar_str_puts(&text, "}");
  prop_printer_replace(pr, (uint32_t)(p - buf), (uint32_t)(close + 1 - buf), ar_str_str(&text));
}

/* A manual or named computation keeps its shardings in in_shardings=[...] / out_shardings=[...]. */
static void print_computation(prop_engine *e, prop_printer *pr, const ir_op *op) {
  const md_sdy_op_info *x = md_info_sdy_op(md_model_op(e->model, op));
  if (!op->nregions) return;
  if (e->opt.manual_axes_cleanup && op->kind == SC_OP_SDY_MANUAL_COMPUTATION) print_sorted_manual_axes(e, pr, op);
  bool in_changed = false;
  sharding_ref *in = ar_alloc(e->a, (op->noperands + 1) * sizeof *in);
  for (uint32_t k = 0; k < op->noperands; k++) {
    uint32_t slot = slot_of(e, block_arg(ir_op_regions(op)[0], k));
    in[k] = written_globals(e, op) ? written_globals(e, op)->in[k] : NULL;
    if (slot < e->nslots && was_written(e, slot) && !has_explicit_edge(e, block_arg(ir_op_regions(op)[0], k))) {
      in[k] = op->kind == SC_OP_SDY_MANUAL_COMPUTATION ? prop_engine_add_free(e->a, op, e->model, in[k], e->sh[slot]) : e->sh[slot];
      in_changed = true;
    }
  }
  if (in_changed && x->in_shardings.present && md_annotation_text(&x->in_shardings).n)
    prop_printer_replace(pr, x->in_shardings.offset, x->in_shardings.offset + md_annotation_text(&x->in_shardings).n,
                         sharding_list(e, in, op->noperands, op, false));
  if (results_changed(e, op) && x->out_shardings.present && md_annotation_text(&x->out_shardings).n) {
    sharding_ref *out = ar_alloc(e->a, (op->nresults + 1) * sizeof *out);
    bool out_changed = false;
    for (uint32_t r = 0; r < op->nresults; r++) {
      uint32_t raw = prefix_at(&e->result_base, op->id) + r;
      bool keep = has_explicit_edge(e, ir_op_result(op, r));
      out[r] = keep ? initial_of(e, raw) : e->sh[raw];
      out_changed |= !keep && was_written(e, raw);
    }
    if (out_changed)
      prop_printer_replace(pr, x->out_shardings.offset, x->out_shardings.offset + md_annotation_text(&x->out_shardings).n,
                           sharding_list(e, out, op->nresults, op, true));
  }
}

/* `sdy.data_flow_edge %v : type` written without a sharding gets ` sharding=<...>` after its operand,
 * as sdy_opt prints it (custom syntax only: the generic form keeps its attribute dictionary). */
static void insert_edge_sharding(prop_printer *pr, const ir_module *m, const ir_op *op, const char *sharding) {
  const char *p = m->buf + op->pos.offset, *end = m->buf + m->len;
  static const char name[] = "sdy.data_flow_edge";
  while (p < end && *p != '\n' && (size_t)(end - p) >= sizeof name - 1 && memcmp(p, name, sizeof name - 1)) p++;
  if ((size_t)(end - p) < sizeof name - 1 || memcmp(p, name, sizeof name - 1)) return;
  p += sizeof name - 1;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (p >= end || *p != '%') return;
  p++;
  while (p < end && (isalnum((unsigned char)*p) || (*p && strchr("_#.$-", *p)))) p++;
  uint32_t at = (uint32_t)(p - m->buf);
  prop_printer_replace(pr, at, at, ar_printf(pr->arena, " sharding=%s", sharding));
}

/* The pipeline's -sdy-sink-data-flow-edges: a while's, case's or optimization barrier's results hold
 * their data-flow edges' shardings, written on the op (all of its results, open and empty where one has
 * none, closed when printed) when any result has one. */
static void sink_edge_owner(prop_engine *e, prop_printer *pr, const ir_op *op) {
  sharding_ref *v = ar_alloc(e->a, op->nresults * sizeof *v);
  bool any = false;
  for (uint32_t r = 0; r < op->nresults; r++) {
    uint32_t s = slot_of(e, ir_op_result(op, r));
    v[r] = s < e->nslots ? e->sh[s] : NULL;
    any |= v[r] != NULL;
  }
  if (any) prop_printer_set_attr(pr, op, "sdy.sharding", prop_per_value_text(e->a, op, v, true));
}

void prop_engine_print(prop_engine *e, prop_printer *pr) {
  const ir_module *m = e->m;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    if (op->kind == SC_OP_FUNC || op->kind == SC_OP_MODULE) continue;
    if (op->kind == SC_OP_SDY_MANUAL_COMPUTATION || op->kind == SC_OP_SDY_NAMED_COMPUTATION) {
      print_computation(e, pr, op);
      continue;
    }
    if (e->opt.close_shardings && op->nresults && (op->kind == SC_OP_WHILE || op->kind == SC_OP_CASE || is_optimization_barrier(op))) {
      sink_edge_owner(e, pr, op);
    } else if (!op->nresults || (!results_changed(e, op) && !written_long_form(op))) {
      if (generic_mixed_dict(op))
        prop_printer_set_attr(pr, op, "sdy.sharding", ir_span_dup(e->a, ir_op_attr(op, "sdy.sharding")->value));
    } else if (op->kind == SC_OP_SDY_SHARDING_CONSTRAINT || op->kind == SC_OP_SDY_RESHARD ||
               op->kind == SC_OP_SDY_DATA_FLOW_EDGE) {
      /* the op's own sharding is its result's: rewrite the `<...>` it is written with */
      const md_annotation *ann = md_info_sharding(md_model_op(e->model, op));
      ar_str t = SC_ASTR_INIT(e->a);
      put_final(e, &t, result_sharding(e, op, 0));
      if (ann->present && md_annotation_text(ann).n) prop_printer_replace(pr, ann->offset, ann->offset + md_annotation_text(ann).n, ar_str_str(&t));
      else if (op->kind == SC_OP_SDY_DATA_FLOW_EDGE) insert_edge_sharding(pr, e->m, op, ar_str_str(&t));
    } else if (result_sharding_known(e, op)) { /* else: written in a form the model could not read; left as written */
      prop_printer_set_attr(pr, op, "sdy.sharding", per_value_text(e, op));
    }
    /* the pipeline's export turns constraints into reshards (-sdy-sharding-constraint-to-reshard); its
     * import made every constant an sdy.constant (the constant splitter; one per constant here, not one
     * per use) */
    if (e->opt.close_shardings) {
      prop_printer_rename_op(pr, op, "sdy.sharding_constraint", "sdy.reshard");
      prop_printer_rename_op(pr, op, "stablehlo.constant", "sdy.constant");
    }
    if (e->opt.keep_sharding_rules && prop_engine_rule(e, op) && !ir_op_attr(op, "sdy.sharding_rule"))
      prop_printer_set_attr(pr, op, "sdy.sharding_rule", prop_rule_str(e->a, known_rule(e, op->id)));
  }
  for (uint32_t f = 0; f < m->nfuncs; f++) print_signature(e, pr, f);
}
