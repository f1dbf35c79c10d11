/* propagate.c — sc_propagate(): parse, run the requested propagation passes, print the module as
 * sdy_opt prints it after them (the `shardcheck propagate` command, Shardy's FileCheck tests). */
#include <ctype.h>
#include <setjmp.h>
#include <string.h>

#include "front/front.h"
#include "ir/ir.h"
#include "model/model.h"
#include "propagate/collectives.h"
#include "propagate/call_graph.h"
#include "propagate/constants.h"
#include "propagate/group_constraints.h"
#include "propagate/lift_meshes.h"
#include "propagate/dead_code.h"
#include "propagate/engine.h"
#include "propagate/op_rule.h"
#include "propagate/print.h"
#include "propagate/reshard.h"
#include "shardcheck.h"
#include "util/hashset.h"

typedef SC_VEC(sc_propagate_message) message_vec;

typedef struct {
  sc_arena *arena;
  const char *buf;
  size_t len;
  const sc_propagate_options *opt;
  sc_propagate_result *out;
  bool warned_custom_call, warned_op; /* Shardy warns once per process about each kind of unknown op */
  sc_status status;                   /* propagate_body's, when it returned */
} propagate_run;

static void add_message(propagate_run *run, const ir_linemap *lines, message_vec *msgs, sc_severity sev,
                        uint32_t offset, const char *text) {
  ir_pos pos = ir_linemap_pos(lines, offset);
  sc_propagate_message m = {sev, pos.line, pos.col, text};
  SC_PUSH(run->arena, *msgs, m);
}

/* -sdy-populate-op-sharding-rules: every op Shardy has a rule for gets `sdy.sharding_rule`; an op
 * that keeps a rule written on it keeps that one. */
static void annotate_rules(propagate_run *run, const ir_module *m, const ir_linemap *lines, prop_printer *pr,
                           message_vec *msgs) {
  prop_rule_options ro = {run->opt->conservative, prop_rule_facts_build(run->arena, m)};
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    ar_step(run->arena, 1);
    if (ir_op_attr(op, "sdy.sharding_rule")) continue;
    const char *err = NULL;
    const prop_rule *rule = prop_rule_of(run->arena, m, op, &ro, &err);
    if (rule) prop_printer_set_attr(pr, op, "sdy.sharding_rule", prop_rule_str(run->arena, rule));
    else if (err) add_message(run, lines, msgs, SC_SEV_WARNING, op->pos.offset, err);
    const char *unknown = rule || err ? NULL : prop_rule_warning(run->arena, op);
    bool *warned = op->kind == SC_OP_CUSTOM_CALL ? &run->warned_custom_call : &run->warned_op;
    if (unknown && !*warned) {
      *warned = true;
      add_message(run, lines, msgs, SC_SEV_WARNING, op->pos.offset, unknown);
    }
  }
}

/* Indexed by sc_propagate_strategy. */
static const char *const strategy_names[] = {"pipeline", "none", "basic", "aggressive", "op-priority",
                                             "user-priority"};

const char *sc_propagate_strategy_name(sc_propagate_strategy s) {
  return (unsigned)s < sizeof strategy_names / sizeof *strategy_names ? strategy_names[s] : "pipeline";
}

int sc_propagate_strategy_parse(const char *s, sc_propagate_strategy *out) {
  for (size_t i = 0; i < sizeof strategy_names / sizeof *strategy_names; i++)
    if (!strcmp(s, strategy_names[i])) {
      *out = (sc_propagate_strategy)i;
      return 0;
    }
  return -1;
}

/* The strategy asked for. The pipeline runs its propagation core as XLA's does: user priorities, through
 * calls into their callees, and prints every sharding closed as its export passes leave them (its
 * other import and export passes are not run: docs/propagation.md). */
static prop_engine *run_strategy(propagate_run *run, const ir_module *m, const md_model *model) {
  const sc_propagate_options *opt = run->opt;
  prop_strategy st = opt->strategy == SC_PROPAGATE_BASIC         ? PROP_BASIC
                     : opt->strategy == SC_PROPAGATE_AGGRESSIVE  ? PROP_AGGRESSIVE
                     : opt->strategy == SC_PROPAGATE_OP_PRIORITY ? PROP_OP_PRIORITY
                                                                 : PROP_USER_PRIORITY;
  bool pipeline = opt->strategy == SC_PROPAGATE_PIPELINE;
  prop_engine_options eo = {.strategy = st, .conservative = opt->conservative,
                            .keep_sharding_rules = opt->keep_sharding_rules, .through_calls = pipeline,
                            .close_shardings = pipeline, .apply_constraints = pipeline,
                            .split_constants = pipeline, .manual_axes_cleanup = pipeline,
                            .remove_size_one_axes = pipeline, .results_from_returns = pipeline};
  return prop_engine_run(run->arena, m, model, &eo);
}

/* `n` bytes at `p` as a JSON string (runs of plain bytes copied at once). */
static void put_json_string(ar_str *out, const char *p, size_t n) {
  ar_str_put(out, "\"", 1);
  if (!n) { /* an empty span's pointer may be NULL */
    ar_str_put(out, "\"", 1);
    return;
  }
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c != '"' && c != '\\' && c >= 0x20) continue;
    ar_str_put(out, p + run, i - run);
    run = i + 1;
    if (c < 0x20) ar_str_printf(out, "\\u%04x", c);
    else ar_str_put(out, c == '"' ? "\\\"" : "\\\\", 2);
  }
  ar_str_put(out, p + run, n - run);
  ar_str_put(out, "\"", 1);
}

/* "line": L, "col": C of byte `offset` (text inputs), or nothing. */
static void put_position(ar_str *out, const ir_linemap *lines, uint32_t offset) {
  if (!lines) return;
  ir_pos pos = ir_linemap_pos(lines, offset);
  ar_str_printf(out, ", \"line\": %u, \"col\": %u", pos.line, pos.col);
}

static void put_value_json(propagate_run *run, ar_str *out, const ir_value *v, const ir_op *owner,
                           const prop_engine *e, const ir_linemap *lines, bool *first) {
  const prop_sharding *s = prop_engine_value_sharding(e, v);
  const ir_value *origin = prop_engine_value_origin(e, v);
  ar_str_puts(out, *first ? "\n      {\"value\": " : ",\n      {\"value\": ");
  *first = false;
  put_json_string(out, v->name.p, v->name.n);
  ar_str_puts(out, ir_value_def(v) ? ", \"result_of\": " : ", \"argument_of\": ");
  put_json_string(out, ir_op_name(owner).p, ir_op_name(owner).n);
  put_position(out, lines, v->pos.offset);
  ar_str_puts(out, ", \"sharding\": ");
  if (s) {
    ar_str text = SC_ASTR_INIT(run->arena);
    if (run->opt->strategy == SC_PROPAGATE_PIPELINE) prop_sharding_put_closed(&text, s); /* as the text prints it */
    else prop_sharding_put(&text, s);
    put_json_string(out, text.p, text.n);
  } else {
    ar_str_puts(out, "null");
  }
  ar_str_puts(out, ", \"origin\": ");
  if (origin) {
    ar_str_puts(out, "{\"value\": ");
    put_json_string(out, origin->name.p, origin->name.n);
    put_position(out, lines, origin->pos.offset);
    ar_str_put(out, "}", 1);
  } else {
    ar_str_puts(out, "null");
  }
  ar_str_put(out, "}", 1);
}

/* One module's values in program order (each op's results, then its regions' block arguments) with
 * the sharding propagation leaves on each and the written sharding it came from. */
static void put_shardings_json(propagate_run *run, ar_str *out, size_t chunk, const ir_module *m, const prop_engine *e,
                               const ir_linemap *lines) {
  ar_str_printf(out, "%s\n    {\"chunk\": %zu, \"values\": [", chunk ? "," : "", chunk);
  bool first = true;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    ar_step(run->arena, 1);
    for (uint32_t r = 0; r < op->nresults; r++) put_value_json(run, out, ir_op_result(op, r), op, e, lines, &first);
    for (uint32_t r = 0; r < op->nregions; r++)
      for (uint32_t b = 0; b < ir_op_regions(op)[r]->nblocks; b++)
        for (uint32_t k = 0; k < ir_op_regions(op)[r]->blocks[b]->nargs; k++) {
          const ir_value *arg = ir_op_regions(op)[r]->blocks[b]->args[k];
          if (!ir_value_def(arg)) put_value_json(run, out, arg, op, e, lines, &first); /* HLO: listed as its parameter op's */
        }
  }
  ar_str_puts(out, first ? "]}" : "\n    ]}");
}

/* Parses buf[begin, end) in `format` under the request's limits; NULL (why in *perr) when it does not. */
static ir_module *parse_chunk(propagate_run *run, sc_format format, const char *buf, size_t len, uint32_t begin,
                              uint32_t end, const ir_linemap *lines, fe_parse_error *perr) {
  const sc_propagate_options *opt = run->opt;
  fe_parse_input in = {run->arena, buf, len, begin, end, lines, opt->max_depth ? opt->max_depth : SC_DEFAULT_MAX_DEPTH,
                       opt->max_ops ? opt->max_ops : SC_DEFAULT_MAX_OPS, opt->cancel};
  memset(perr, 0, sizeof *perr);
  ir_module *m = fe_parse_format(format, &in, perr);
  if (m) ir_module_finalize(run->arena, m);
  return m;
}

/* Parses `text` (a module this file printed) as a chunk of its own; NULL when it does not parse. */
static ir_module *reparse(propagate_run *run, const char *text, size_t n, const ir_linemap **lines_out) {
  ir_linemap *lines = ar_alloc(run->arena, sizeof *lines);
  *lines = ir_linemap_build(run->arena, text, n);
  if (lines_out) *lines_out = lines;
  fe_parse_error perr;
  return parse_chunk(run, SC_FMT_STABLEHLO, text, n, 0, (uint32_t)n, lines, &perr);
}

/* The written module's functions by name, for the export's errors (built once, when there are any). */
typedef struct {
  const ir_module *written;
  hs_name_map by_name;
} written_funcs;

static void index_written_funcs(sc_arena *a, const ir_module *written, written_funcs *w) {
  w->written = written;
  hs_name_map_init(&w->by_name, a, written->nfuncs + 1);
  for (uint32_t i = 0; i < written->nfuncs; i++) {
    ir_span name = ir_op_sym_name(written->funcs[i]);
    hs_name_map_put(&w->by_name, name.p, name.n, i, NULL); /* the first of a name wins, as ir_module_func */
  }
}

/* The function written in the input under the name of the printed function at `offset` (ops are in
 * preorder, so their offsets ascend: a binary search), or NULL. */
static const ir_op *written_func_at(const written_funcs *w, const ir_module *printed, uint32_t offset) {
  uint32_t lo = 0, hi = printed->nops;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (printed->ops[mid]->pos.offset < offset) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < printed->nops && printed->ops[lo]->pos.offset == offset; lo++) /* an implicit module shares it */
    if (printed->ops[lo]->kind == SC_OP_FUNC) {
      ir_span name = ir_op_sym_name(printed->ops[lo]);
      uint32_t i;
      return hs_name_map_get(&w->by_name, name.p, name.n, &i) ? w->written->funcs[i] : NULL;
    }
  return NULL;
}

/* True for a signature error whose argument or result the input gave a GSPMD sharding (`mhlo.sharding`):
 * the import turned it into a Shardy one, but a GSPMD single-device sharding on a signature is what JAX
 * writes for single-device placement, and GSPMD partitions it. */
static bool written_in_gspmd(const ir_op *w, const prop_pass_error *e) {
  if (!e->signature_kind || !w) return false;
  const ir_attrs *attrs = NULL;
  ir_attrs param; /* an HLO parameter's, while attrs points at them */
  if (e->signature_kind == 'a') {
    const ir_block *entry = w->nregions && ir_op_regions(w)[0]->nblocks ? ir_op_regions(w)[0]->blocks[0] : NULL;
    if (entry && e->signature_index < entry->nargs) attrs = ir_value_attrs_in(entry->args[e->signature_index], &param);
  } else if (e->signature_index < ir_op_nresult_attrs(w)) {
    attrs = &ir_op_result_attrs(w)[e->signature_index];
  }
  return attrs && ir_attrs_find(attrs, "mhlo.sharding") && !ir_attrs_find(attrs, "sdy.sharding");
}

/* The pipeline's export after propagation, on the module as printed so far (`text`): the explicit
 * reshards Shardy's partial version inserts (-sdy-insert-explicit-reshards), the call graph unflattened,
 * then the canonicalizer's erasure of trivially dead ops. Appends the result to `out`; false (nothing
 * appended) when the pass reports errors, which go to `msgs` at `at`. */
static bool pipeline_export(propagate_run *run, const char *text, size_t n, const sc_options *mo,
                            const prop_func_copies *copies, const ir_module *written, const ir_linemap *lines,
                            message_vec *msgs, uint32_t at, ar_str *out) {
  sc_arena *a = run->arena;
  ir_module *m = reparse(run, text, n, NULL);
  if (!m) { /* cannot happen for a printed module; printed as it is rather than lost */
    ar_str_put(out, text, n);
    return true;
  }
  prop_printer pr;
  prop_printer_init(&pr, a, m);
  pr.renumber = true;
  prop_pass_errors errors = prop_insert_explicit_reshards(a, m, md_model_build(a, m, mo), &pr, true);
  uint32_t nerrors = 0;
  written_funcs funcs;
  if (errors.n) index_written_funcs(a, written, &funcs);
  for (uint32_t k = 0; k < errors.n; k++) {
    const ir_op *w = written_func_at(&funcs, m, errors.v[k].offset);
    if (written_in_gspmd(w, &errors.v[k])) continue;
    add_message(run, lines, msgs, SC_SEV_ERROR, w ? w->pos.offset : at, errors.v[k].message);
    nerrors++;
  }
  if (nerrors) return false;
  ar_str resharded = SC_ASTR_INIT(a);
  prop_printer_emit(&pr, 0, (uint32_t)m->len, &resharded);
  ir_module *r = reparse(run, resharded.p, resharded.n, NULL);
  if (!r) {
    ar_str_put(out, resharded.p, resharded.n);
    return true;
  }
  prop_printer_init(&pr, a, r);
  pr.renumber = true;
  const uint8_t *unflattened = prop_unflatten_call_graph(a, r, copies, &pr);
  uint8_t *erased = ar_calloc(a, r->nops + 1, 1);
  for (uint32_t i = 0; i < r->nops; i++) { /* -sdy-remove-sharding-groups */
    erased[r->ops[i]->id] = unflattened && unflattened[r->ops[i]->id];
    if (!erased[r->ops[i]->id] && ir_span_eq(ir_op_name(r->ops[i]), "sdy.sharding_group")) {
      prop_printer_erase(&pr, r->ops[i]);
      erased[r->ops[i]->id] = 1;
    }
  }
  prop_merge_constants(a, r, &pr, erased); /* -sdy-constant-or-scalar-merger */
  prop_erase_dead_ops(a, r, &pr, erased);
  prop_printer_emit(&pr, 0, (uint32_t)r->len, out);
  return true;
}

static bool has_sharding_groups(const ir_module *m) {
  for (uint32_t i = 0; i < m->nops; i++)
    if (ir_span_eq(ir_op_name(m->ops[i]), "sdy.sharding_group")) return true;
  return false;
}

/* The pipeline's handling of sharding groups whose members were written with different shardings: its
 * warning, and an open constraint after each member (group_constraints.h). On a change, *m and the
 * range to print become the edited module's; returns whether there was one. */
static bool open_group_constraints(propagate_run *run, ir_module **m, uint32_t *begin, uint32_t *end,
                                   const sc_options *mo, const ir_linemap **lines, message_vec *msgs,
                                   uint32_t line_shift) {
  if (!has_sharding_groups(*m)) return false;
  prop_engine_options eo = {.strategy = PROP_USER_PRIORITY, .through_calls = true, .apply_constraints = true,
                            .import_only = true};
  prop_engine *e = prop_engine_run(run->arena, *m, md_model_build(run->arena, *m, mo), &eo);
  ar_str edited = SC_ASTR_INIT(run->arena);
  const ir_linemap *edited_lines;
  ir_module *r;
  if (prop_open_group_constraints(run->arena, *m, prop_engine_group_conflicts(e), *begin, *end, &edited) < 0 ||
      !(r = reparse(run, edited.p, edited.n, &edited_lines)))
    return false; /* the propagation that follows warns */
  prop_engine_messages warnings = prop_engine_warnings(e);
  for (uint32_t k = 0; k < warnings.n; k++) {
    add_message(run, *lines, msgs, SC_SEV_WARNING, warnings.v[k].offset, warnings.v[k].text);
    msgs->v[msgs->n - 1].line += line_shift;
  }
  *m = r;
  *begin = 0, *end = (uint32_t)edited.n;
  *lines = edited_lines;
  return true;
}


/* What `text` holds from `from` on, moved to a copy of its own (`*n` bytes) and cut from `text`: the
 * printed module a post-pass rewrites into `text`. */
static const char *take_printed(sc_arena *a, ar_str *text, size_t from, size_t *n) {
  *n = text->n - from;
  char *copy = ar_alloc(a, *n + 1);
  memcpy(copy, text->p + from, *n);
  text->n = from;
  return copy;
}

/* Past the `)` closing the `(` at `p` (strings skipped), or NULL if none does. */
static const char *paren_end(const char *p, const char *e) {
  const char *close = ir_match_paren(p, e);
  return close < e ? close + 1 : NULL;
}

/* Drops what sdy_opt prints only with debug info: every ` loc(...)` trailer and every line that
 * defines a location alias (`#loc3 = loc(...)`), from `from` on. String literals are left alone. */
static void drop_locations(sc_arena *a, ar_str *text, size_t from) {
  size_t n;
  const char *in = take_printed(a, text, from, &n);
  const char *p = in, *e = in + n, *copied = in;
  bool line_start = true;
  while (p < e) {
    if (line_start && *p == '#' && e - p > 4 && !memcmp(p, "#loc", 4)) { /* `#loc... = loc(...)` */
      const char *q = p + 4, *nl = memchr(p, '\n', (size_t)(e - p));
      while (q < e && (isalnum((unsigned char)*q) || *q == '_')) q++;
      const char *close = e - q > 7 && !memcmp(q, " = loc(", 7) ? paren_end(q + 6, e) : NULL;
      if (close) { /* the definition may span lines: up to its closing ')', then its line's end */
        nl = memchr(close, '\n', (size_t)(e - close));
        ar_str_put(text, copied, (size_t)(p - copied));
        p = copied = nl ? nl + 1 : e;
        continue;
      }
    }
    line_start = false;
    if (*p == '"') { /* a string: copied as it is */
      p = ir_skip_string(p, e);
      continue;
    }
    if (*p == ' ' && e - p > 5 && !memcmp(p + 1, "loc(", 4)) {
      const char *close = paren_end(p + 4, e);
      if (close) {
        ar_str_put(text, copied, (size_t)(p - copied));
        p = copied = close;
        continue;
      }
    }
    line_start = *p == '\n';
    p++;
  }
  ar_str_put(text, copied, (size_t)(e - copied));
}

/* True if the line at `p` (`n` bytes) begins an alias definition (`#name = ...`, `!name = ...`). */
static bool alias_definition_line(const char *p, size_t n) {
  if (n < 2 || (p[0] != '#' && p[0] != '!')) return false;
  size_t i = 1;
  while (i < n && (isalnum((unsigned char)p[i]) || p[i] == '_' || p[i] == '$' || p[i] == '.' || p[i] == '-')) i++;
  while (i < n && p[i] == ' ') i++;
  return i > 1 && i < n && p[i] == '=';
}

/* Where the alias definition starting at `p` ends: past the line on which its brackets balance again
 * (a definition may span lines), strings and `->` aside. */
static const char *alias_definition_end(const char *p, const char *e) {
  int depth = 0;
  while (p < e) {
    char c = *p;
    if (c == '"') {
      p = ir_skip_string(p, e);
      continue;
    }
    if (c == '-' && p + 1 < e && p[1] == '>') p++;
    else if (c == '(' || c == '[' || c == '{' || c == '<') depth++;
    else if (c == ')' || c == ']' || c == '}' || c == '>') depth--;
    else if (c == '\n' && depth <= 0) return p + 1;
    p++;
  }
  return e;
}

/* Puts what `text` holds from `from` on inside `module { ... }`, indented one level, as MLIR prints
 * ops that the input gave without a module; alias definitions stay before it (MLIR allows them at the
 * top level only). Empty lines stay empty. */
static void wrap_in_module(sc_arena *a, ar_str *text, size_t from) {
  size_t n;
  const char *body = take_printed(a, text, from, &n);
  ar_str ops = SC_ASTR_INIT(a);
  ar_str_reserve(&ops, n + n / 8 + 16);
  for (const char *p = body, *e = body + n; p < e;) {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
    if (alias_definition_line(p, len)) {
      const char *end = alias_definition_end(p, e);
      ar_str_put(text, p, (size_t)(end - p));
      if (end == e && end > p && end[-1] != '\n') ar_str_puts(text, "\n");
      p = end;
      continue;
    }
    if (len) ar_str_puts(&ops, "  ");
    ar_str_put(&ops, p, len);
    ar_str_puts(&ops, "\n");
    p += len + 1;
  }
  ar_str_puts(text, "module {\n");
  ar_str_put(text, ops.p ? ops.p : "", ops.n);
  ar_str_puts(text, "}\n");
}

static sc_status propagate_body(propagate_run *run) {
  sc_arena *a = run->arena;
  const sc_propagate_options *opt = run->opt;
  sc_propagate_result *out = run->out;
  ar_set_hash_seed(a, opt->hash_seed);
  sc_format format = opt->input_format != SC_FMT_AUTO ? opt->input_format : fe_detect_format(run->buf, run->len);
  if (format != SC_FMT_STABLEHLO && !opt->json) {
    out->failure = ar_printf(a, "propagate prints MLIR text modules; this input is %s (--format json reads "
                                   "every format)", sc_format_name(format));
    return SC_ERR_INVALID;
  }
  if (opt->json && (opt->annotate_rules || opt->strategy == SC_PROPAGATE_NONE)) {
    out->failure = "--format json prints propagated shardings: use it with a propagation strategy";
    return SC_ERR_INVALID;
  }
  if ((opt->insert_reshards || opt->reshards_to_collectives || opt->propagate_to_func_results) &&
      (opt->annotate_rules || opt->strategy != SC_PROPAGATE_NONE ||
       opt->insert_reshards + opt->reshards_to_collectives + opt->propagate_to_func_results > 1)) {
    out->failure = "--insert-reshards, --reshards-to-collectives and --propagate-to-func-results each run alone (with "
                   "--strategy none)";
    return SC_ERR_INVALID;
  }
  if (run->len > UINT32_MAX - 1) {
    out->failure = "inputs larger than 4 GiB are not supported";
    return SC_ERR_INVALID;
  }
  ir_linemap lines = ir_linemap_build(a, run->buf, run->len);
  fe_chunk *chunks;
  size_t nchunks = fe_split_chunks(a, run->buf, run->len, opt->split_input_file, &chunks);
  ar_str text = SC_ASTR_INIT(a);
  ar_str_reserve(&text, run->len + run->len / 2 + 4096); /* the printed module is about the input's size */
  message_vec msgs = {0};
  sc_options mo;
  memset(&mo, 0, sizeof mo);
  mo.mesh = opt->mesh;
  if (opt->json)
    ar_str_printf(&text, "{\n  \"schema\": \"shardcheck.propagation.v1\",\n  \"strategy\": \"%s\",\n  \"modules\": [",
                   sc_propagate_strategy_name(opt->strategy));
  for (size_t i = 0; i < nchunks; i++) {
    if (i && !opt->json) ar_str_puts(&text, "// -----\n");
    if (opt->split_input_file && fe_chunk_is_blank(run->buf, chunks[i])) continue;
    fe_parse_error perr;
    ir_module *m = parse_chunk(run, format, run->buf, run->len, chunks[i].begin, chunks[i].end, &lines, &perr);
    if (!m) {
      if (perr.cancelled) return SC_ERR_CANCELLED;
      ir_pos pos = ir_linemap_pos(&lines, perr.failed ? perr.offset : chunks[i].begin);
      out->failure = ar_printf(a, "%u:%u: %s", pos.line, pos.col,
                                     perr.message ? perr.message : "the module could not be parsed");
      return SC_ERR_INVALID;
    }
    const ir_module *written = m; /* m is replaced by each stage's printed module below */
    /* the default pipeline gives each call site its own copy of the function it calls */
    prop_func_copies copies;
    memset(&copies, 0, sizeof copies);
    uint32_t emit_begin = chunks[i].begin, emit_end = chunks[i].end, line_shift = 0;
    const ir_linemap *msg_lines = &lines;
    bool pipeline = opt->strategy == SC_PROPAGATE_PIPELINE && !opt->annotate_rules && !opt->json;
    ar_str lifted = SC_ASTR_INIT(a);
    int added_lines = pipeline ? prop_lift_inlined_meshes(a, m, chunks[i].begin, chunks[i].end, &lifted) : -1;
    if (added_lines >= 0) { /* the import names every inline mesh by a symbol */
      const ir_linemap *lifted_lines;
      ir_module *lifted_m = reparse(run, lifted.p, lifted.n, &lifted_lines);
      if (lifted_m) {
        m = lifted_m;
        emit_begin = 0, emit_end = (uint32_t)lifted.n;
        msg_lines = lifted_lines;
        line_shift = ir_linemap_pos(&lines, chunks[i].begin).line - 1 - (uint32_t)added_lines;
      }
    }
    ar_str split = SC_ASTR_INIT(a);
    if (pipeline && prop_split_constants(a, m, emit_begin, emit_end, &split) > 0) { /* a copy per use */
      const ir_linemap *split_lines;
      ir_module *split_m = reparse(run, split.p, split.n, &split_lines);
      if (split_m) {
        m = split_m;
        emit_begin = 0, emit_end = (uint32_t)split.n;
        msg_lines = split_lines;
      }
    }
    if (pipeline) open_group_constraints(run, &m, &emit_begin, &emit_end, &mo, &msg_lines, &msgs, line_shift);
    ar_str flat = SC_ASTR_INIT(a);
    if (pipeline && !opt->dedup_functions_fully && prop_flatten_call_graph(a, m, emit_begin, emit_end, &flat, &copies)) {
      const ir_linemap *flat_lines;
      ir_module *flat_m = reparse(run, flat.p, flat.n, &flat_lines);
      if (flat_m) { /* the functions written keep their lines: messages about them point at the input */
        m = flat_m;
        emit_begin = 0, emit_end = (uint32_t)flat.n;
        msg_lines = flat_lines;
        if (added_lines < 0) line_shift = ir_linemap_pos(&lines, chunks[i].begin).line - 1;
      } else {
        memset(&copies, 0, sizeof copies);
      }
    }
    prop_printer pr;
    prop_printer_init(&pr, a, m);
    pr.renumber = true; /* as sdy_opt prints: values numbered again, constants named %cst / %c */
    if (opt->annotate_rules) annotate_rules(run, m, &lines, &pr, &msgs);
    else if (opt->strategy != SC_PROPAGATE_NONE) {
      const md_model *model = md_model_build(a, m, &mo);
      prop_engine *e = run_strategy(run, m, model);
      prop_engine_messages warnings = prop_engine_warnings(e);
      for (uint32_t k = 0; k < warnings.n; k++) {
        add_message(run, msg_lines, &msgs, SC_SEV_WARNING, warnings.v[k].offset, warnings.v[k].text);
        msgs.v[msgs.n - 1].line += line_shift;
      }
      if (opt->json) put_shardings_json(run, &text, i, m, e, format == SC_FMT_BYTECODE ? NULL : &lines);
      else prop_engine_print(e, &pr);
    } else if (opt->insert_reshards) {
      prop_pass_errors errors = prop_insert_explicit_reshards(a, m, md_model_build(a, m, &mo), &pr, opt->insert_reshards_partial);
      for (uint32_t k = 0; k < errors.n; k++)
        add_message(run, &lines, &msgs, SC_SEV_ERROR, errors.v[k].offset, errors.v[k].message);
      if (errors.n) continue; /* a failed pass prints nothing, as sdy_opt does */
    } else if (opt->reshards_to_collectives) {
      prop_reshards_to_collectives(a, m, md_model_build(a, m, &mo), &pr, opt->keep_redundant_reshards);
    } else if (opt->propagate_to_func_results) { /* the shardings as written, results from the returns */
      prop_engine_options eo = {.strategy = PROP_BASIC, .seed_only = true, .results_from_returns = true};
      prop_engine_print(prop_engine_run(a, m, md_model_build(a, m, &mo), &eo), &pr);
    }
    if (opt->json) continue;
    size_t printed_from = text.n;
    if (opt->strategy != SC_PROPAGATE_PIPELINE || opt->annotate_rules) {
      prop_printer_emit(&pr, chunks[i].begin, chunks[i].end, &text);
    } else {
      ar_str propagated = SC_ASTR_INIT(a);
      prop_printer_emit(&pr, emit_begin, emit_end, &propagated);
      pipeline_export(run, propagated.p, propagated.n, &mo, &copies, written, &lines, &msgs, chunks[i].begin, &text);
    }
    drop_locations(a, &text, printed_from);
    if (m->implicit_module) wrap_in_module(a, &text, printed_from);
  }
  if (opt->json) ar_str_puts(&text, nchunks ? "\n  ]\n}\n" : "]\n}\n");
  out->text = ar_str_str(&text);
  out->len = text.n;
  out->messages = msgs.v;
  out->nmessages = msgs.n;
  return SC_OK;
}

static void run_propagate_body(void *arg) {
  propagate_run *run = arg;
  run->status = propagate_body(run);
}

static sc_status propagate_guarded(propagate_run *run) {
  int why = ar_guarded(run->arena, run->opt->cancel, run_propagate_body, run);
  if (!why) return run->status;
  run->out->failure = why == AR_CANCELLED ? "cancelled" : "the request needs more memory or work than its limit allows";
  return why == AR_CANCELLED ? SC_ERR_CANCELLED : SC_ERR_LIMIT;
}

sc_status sc_propagate(sc_arena *arena, const char *buf, size_t len, const sc_propagate_options *options,
                       sc_propagate_result *out) {
  static const sc_propagate_options defaults;
  memset(out, 0, sizeof *out);
  out->text = "";
  propagate_run run = {arena, buf, len, options ? options : &defaults, out, false, false, SC_OK};
  return propagate_guarded(&run);
}
