/* Corpus: every XLA HLO module in ../shared/corpus/xla parses, with the structure an independent count
 * of its text gives. The negative tests listed in INDEX.tsv are negative for XLA's verifier/partitioner
 * (expected errors like "Inconsistent while sharding"), never for the parser, so all must parse. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <glob.h>

#include "helpers.h"

#define XLA "../shared/corpus/xla"
#define LLAMA XLA "/real_world/hlo_llama3_8b_cp_bf16_1x4.hlo"
#define MAXTEXT XLA "/real_world/nv_maxtext_1n1g_jit_train_step_before_optimization.hlo"

typedef struct {
  sc_arena *arena;
  char *buf;
  size_t len;
  ir_module *m;
  fe_parse_error err;
} parsed;

static parsed parse_file(const char *path) {
  parsed r = {0};
  r.buf = test_read_file(path, &r.len);
  cr_assert_not_null(r.buf, "cannot read %s (is ../shared/corpus beside the checkout?)", path);
  r.arena = sc_arena_new(0);
  ir_linemap *lines = ar_alloc(r.arena, sizeof *lines);
  *lines = ir_linemap_build(r.arena, r.buf, r.len);
  fe_parse_input in = {r.arena, r.buf, r.len, 0, (uint32_t)r.len, lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
  r.m = fe_parse_hlo(&in, &r.err);
  if (!r.m) {
    ir_pos p = ir_linemap_pos(lines, r.err.offset);
    cr_log_error("%s:%u:%u: %s", path, p.line, p.col, r.err.message);
  }
  return r;
}

static void parsed_free(parsed *r) {
  sc_arena_free(r->arena);
  free(r->buf);
}

/* Independent counts from the text, line by line (every corpus file puts one instruction or
 * computation header per line), as `grep -cE '^\s*(ROOT )?%?[A-Za-z_][A-Za-z0-9_.-]* = '` and
 * `grep -cE '^\s*(ENTRY )?%?[A-Za-z_][A-Za-z0-9_.-]* *(\(.*\) -> .*)?\{\s*$'` would. */
static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-'; }

static void count_lines(const char *buf, size_t len, uint32_t *ncomps, uint32_t *ninstrs) {
  *ncomps = *ninstrs = 0;
  const char *p = buf, *end = buf + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    const char *s = p;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    if (e - s >= 5 && !memcmp(s, "ROOT ", 5)) s += 5;
    if (s < e && *s == '%') s++;
    const char *n = s;
    while (s < e && is_name_char(*s)) s++;
    bool instr = s > n && e - s >= 3 && !memcmp(s, " = ", 3) && isalpha((unsigned char)*n);
    const char *t = e;
    while (t > p && isspace((unsigned char)t[-1])) t--;
    if (instr) {
      (*ninstrs)++;
    } else if (t > p && t[-1] == '{') {
      /* `[ENTRY ][%]name {` or `[ENTRY ][%]name (params) -> shape {` */
      s = p;
      while (s < e && isspace((unsigned char)*s)) s++;
      if (e - s >= 6 && !memcmp(s, "ENTRY ", 6)) s += 6;
      if (s < e && *s == '%') s++;
      n = s;
      while (s < e && is_name_char(*s)) s++;
      while (s < e && *s == ' ') s++;
      bool sig = false;
      for (const char *q = s; q + 5 <= t && !sig; q++) sig = !memcmp(q, ") -> ", 5);
      if (s > n && (s + 1 == t || (*s == '(' && sig))) (*ncomps)++;
    }
    p = e + 1;
  }
}

static uint32_t count_instrs(const ir_module *m) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->nops; i++) n += ir_op_depth(m->ops[i]) == 2;
  return n;
}

/* Structure every parsed module must have. */
static void check_structure(const char *path, const parsed *r) {
  const ir_module *m = r->m;
  cr_assert_not_null(m->entry, "%s", path);
  cr_assert(ir_op_is(m->module, "builtin.module"));
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    cr_assert_eq(op->id, i);
    if (ir_op_depth(op) != 2) continue;
    for (uint32_t k = 0; k < op->noperands; k++) cr_assert_not_null(op->operands[k], "%s: unresolved operand", path);
    if (ir_op_callee(op).n)
      cr_assert_not_null(ir_module_func(m, ir_op_callee(op)), "%s:%u: callee " SC_SPAN_FMT " not found", path, test_op_pos(r->m, op).line,
                         SC_SPAN_ARG(ir_op_callee(op)));
    if (ir_op_is(op, "custom-call")) cr_assert_gt(ir_op_custom_call_target(op).n, 0, "%s:%u", path, test_op_pos(r->m, op).line);
    if (ir_op_is(op, "parameter")) {
      const ir_block *b = ir_op_block(op, NULL, NULL, NULL);
      cr_assert_not_null(b, "%s: parameter outside a block", path);
      bool found = false;
      for (uint32_t k = 0; k < b->nargs; k++) found |= b->args[k] == ir_op_result(op, 0);
      cr_assert(found, "%s:%u: parameter is not a block argument", path, test_op_pos(r->m, op).line);
    }
  }
}

/* Reads INDEX.tsv: the file names (first column) after the header. */
static size_t read_index(char names[][160], size_t cap) {
  size_t len;
  char *idx = test_read_file(XLA "/INDEX.tsv", &len);
  cr_assert_not_null(idx, "missing " XLA "/INDEX.tsv");
  size_t n = 0;
  char *save = NULL;
  bool header = true;
  for (char *line = strtok_r(idx, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (header) {
      header = false;
      continue;
    }
    char *tab = strchr(line, '\t');
    if (!tab || n == cap) continue;
    *tab = '\0';
    snprintf(names[n++], 160, "%.159s", line);
  }
  free(idx);
  return n;
}

Test(hlo_corpus, every_indexed_module_parses) {
  static char names[256][160];
  size_t n = read_index(names, 256);
  cr_assert_geq(n, 60);
  size_t failures = 0;
  for (size_t i = 0; i < n; i++) {
    char path[512];
    snprintf(path, sizeof path, XLA "/hlo/%.159s", names[i]);
    parsed r = parse_file(path);
    if (!r.m) failures++;
    else check_structure(path, &r);
    parsed_free(&r);
  }
  cr_assert_eq(failures, 0, "%zu of %zu INDEX.tsv modules failed to parse", failures, n);

  /* INDEX.tsv lists exactly the files present. */
  glob_t g;
  cr_assert_eq(glob(XLA "/hlo/*.hlo", 0, NULL, &g), 0);
  cr_assert_eq(g.gl_pathc, n, "INDEX.tsv lists %zu files, hlo/ has %zu", n, g.gl_pathc);
  globfree(&g);
}

Test(hlo_corpus, every_module_parses_with_independent_counts) {
  const char *patterns[] = {XLA "/hlo/*.hlo", XLA "/real_world/*.hlo"};
  size_t total = 0;
  for (size_t pi = 0; pi < 2; pi++) {
    glob_t g;
    cr_assert_eq(glob(patterns[pi], 0, NULL, &g), 0, "no files match %s", patterns[pi]);
    for (size_t i = 0; i < g.gl_pathc; i++) {
      parsed r = parse_file(g.gl_pathv[i]);
      cr_assert_not_null(r.m, "%s: %s", g.gl_pathv[i], r.err.message);
      check_structure(g.gl_pathv[i], &r);
      uint32_t comps, instrs;
      count_lines(r.buf, r.len, &comps, &instrs);
      cr_assert_eq(r.m->nfuncs, comps, "%s: %u computations, text has %u", g.gl_pathv[i], r.m->nfuncs, comps);
      cr_assert_eq(count_instrs(r.m), instrs, "%s: %u instructions, text has %u", g.gl_pathv[i], count_instrs(r.m),
                   instrs);
      cr_assert_eq(r.m->nops, 1 + comps + instrs);
      parsed_free(&r);
      total++;
    }
    globfree(&g);
  }
  cr_assert_geq(total, 70);
}

/* Counts from `grep -cE '^\s*(ROOT )?%?[A-Za-z_][A-Za-z0-9_.-]* = '` and of computation headers. */
Test(hlo_corpus, real_world_counts) {
  parsed r = parse_file(LLAMA);
  cr_assert_not_null(r.m);
  cr_assert_eq(r.m->nfuncs, 137);
  cr_assert_eq(count_instrs(r.m), 2325);
  cr_assert(ir_span_eq(ir_op_sym_name(r.m->entry), "main.66_spmd"));
  cr_assert_eq(test_op_pos(r.m, r.m->entry).line, 2002);
  ir_block *b = ir_op_regions(r.m->entry)[0]->blocks[0];
  cr_assert_eq(b->nargs, 43);
  cr_assert(ir_span_eq(b->args[0]->name, "param.4"));   /* parameter(0), listed first */
  cr_assert(ir_span_eq(b->args[42]->name, "param.7"));  /* parameter(42) */
  cr_assert(ir_span_eq(ir_op_attr(ir_value_def(b->args[42]), "sharding")->value, "{devices=[1,4]<=[4]}"));
  cr_assert(ir_span_eq(ir_op_attr(r.m->module, "num_partitions")->value, "4"));
  uint32_t fwd = 0, bwd = 0;
  for (uint32_t i = 0; i < r.m->nops; i++) {
    ir_span t = ir_op_custom_call_target(r.m->ops[i]);
    fwd += ir_span_eq(t, "te_fused_attn_forward_ffi");
    bwd += ir_span_eq(t, "te_fused_attn_backward_ffi");
  }
  cr_assert_eq(fwd, 8);
  cr_assert_eq(bwd, 4);
  parsed_free(&r);

  r = parse_file(MAXTEXT);
  cr_assert_not_null(r.m);
  cr_assert_eq(r.m->nfuncs, 87);
  cr_assert_eq(count_instrs(r.m), 1947);
  cr_assert(ir_span_eq(ir_op_sym_name(r.m->entry), "main.2034"));
  cr_assert_eq(ir_op_regions(r.m->entry)[0]->blocks[0]->nargs, 38);
  cr_assert_null(ir_op_attr(r.m->module, "num_partitions")); /* README: header has NO num_partitions */
  uint32_t sharding = 0;
  for (uint32_t i = 0; i < r.m->nops; i++) sharding += ir_span_eq(ir_op_custom_call_target(r.m->ops[i]), "Sharding");
  cr_assert_eq(sharding, 39);
  /* Line 6: %broadcast.250 = ... metadata={... source_file="/opt/maxtext/MaxText/layers/attentions.py" source_line=211} */
  ir_op *bc = NULL;
  for (uint32_t i = 0; i < r.m->nops && !bc; i++)
    if (ir_span_eq(ir_op_sym_name(r.m->ops[i]), "broadcast.250")) bc = r.m->ops[i];
  cr_assert_not_null(bc);
  cr_assert_eq(test_op_pos(r.m, bc).line, 6);
  cr_assert_eq(test_op_pos(r.m, bc).col, 3);
  cr_assert(ir_op_src(bc).known);
  cr_assert(ir_span_eq(ir_op_src(bc).file, "/opt/maxtext/MaxText/layers/attentions.py"));
  cr_assert_eq(ir_op_src(bc).line, 211);
  cr_assert_eq(ir_op_src(bc).col, 0);
  parsed_free(&r);

  r = parse_file(XLA "/hlo/hlo_verifier__InconsistentWhileSharding.hlo");
  cr_assert_not_null(r.m);
  cr_assert_eq(r.m->nfuncs, 3);
  cr_assert_eq(count_instrs(r.m), 8);
  ir_op *w = NULL;
  for (uint32_t i = 0; i < r.m->nops; i++)
    if (ir_op_is(r.m->ops[i], "while")) w = r.m->ops[i];
  cr_assert_not_null(w);
  cr_assert(ir_span_eq(ir_op_attr(w, "condition")->value, "%condition.v3"));
  cr_assert(ir_span_eq(ir_op_attr(w, "body")->value, "%body.v3"));
  parsed_free(&r);
}

/* End to end: sc_check detects the format and reports no syntax or input-limit diagnostics. */
Test(hlo_corpus, check_reports_no_syntax_errors) {
  const char *patterns[] = {XLA "/hlo/*.hlo", XLA "/real_world/*.hlo"};
  for (size_t pi = 0; pi < 2; pi++) {
    glob_t g;
    cr_assert_eq(glob(patterns[pi], 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
      size_t len = 0;
      char *buf = test_read_file(g.gl_pathv[i], &len);
      cr_assert_not_null(buf, "cannot read %s", g.gl_pathv[i]);
      sc_arena *a = sc_arena_new(0);
      sc_options opt = {0};
      opt.input_name = g.gl_pathv[i];
      sc_report *rep = NULL;
      cr_assert_eq(sc_check(a, buf, len, &opt, &rep), SC_OK, "%s", g.gl_pathv[i]);
      cr_assert_eq(rep->format, SC_FMT_HLO, "%s", g.gl_pathv[i]);
      for (size_t k = 0; k < rep->ndiags; k++)
        cr_assert(strcmp(rep->diags[k].rule, "syntax") && strcmp(rep->diags[k].rule, "input-limit"), "%s:%u:%u: %s",
                  g.gl_pathv[i], rep->diags[k].line, rep->diags[k].col, rep->diags[k].message);
      cr_assert_gt(rep->ops, 0);
      sc_arena_free(a);
      free(buf);
    }
    globfree(&g);
  }
}
