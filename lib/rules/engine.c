/* engine.c — the rule registry: one table row per rule, selection by globs, the walk that dispatches
 * ops to rules, and the reporting API.
 *
 * Rows come from one .def file per family (lib/rules/<family>.def, listed in lib/rules/all.def), each
 *   OP_RULE(name, family, code, default severity, summary, op kinds, custom call classes, scope, visit)
 *   OP_RULE_FINISH(name, family, code, severity, summary, op kinds, custom call classes, scope, visit, finish)
 *   RULE(name, family, code, severity, summary, finish function)   -- whole-module facts only
 * or ENGINE_RULE(name, family, code, severity, summary) for codes the engine reports itself,
 * so a family's rules, functions and tests stay together. Codes are append-only. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "rules/rules.h"

_Static_assert(SC_OP_KIND_COUNT <= 64, "op kinds must fit sc_rule.kinds");
_Static_assert(SC_CC_CLASS_COUNT <= 32, "custom call classes must fit sc_rule.ccs");

/* Declarations of every function named in the tables. */
#define RULE(name, family, code, sev, summary, fn) void fn(ru_ctx *ctx);
#define OP_RULE(name, family, code, sev, summary, kinds, ccs, within, fn) void fn(ru_ctx *ctx, const ir_op *op);
#define OP_RULE_FINISH(name, family, code, sev, summary, kinds, ccs, within, fn, finish_fn) \
  void fn(ru_ctx *ctx, const ir_op *op);                                            \
  void finish_fn(ru_ctx *ctx);
#define ENGINE_RULE(name, family, code, sev, summary)
#include "rules/all.def"
#undef RULE
#undef OP_RULE
#undef OP_RULE_FINISH
#undef ENGINE_RULE

const sc_rule ru_rule_table[] = {
#define RULE(name, family, code, sev, summary, fn) {name, family, code, sev, summary, 0, 0, SC_ANYWHERE, NULL, fn},
#define OP_RULE(name, family, code, sev, summary, kinds, ccs, within, fn) {name, family, code, sev, summary, kinds, ccs, within, fn, NULL},
#define OP_RULE_FINISH(name, family, code, sev, summary, kinds, ccs, within, fn, finish_fn) \
  {name, family, code, sev, summary, kinds, ccs, within, fn, finish_fn},
#define ENGINE_RULE(name, family, code, sev, summary) {name, family, code, sev, summary, 0, 0, SC_ANYWHERE, NULL, NULL},
#include "rules/all.def"
#undef RULE
#undef OP_RULE
#undef OP_RULE_FINISH
#undef ENGINE_RULE
};
const size_t ru_rule_table_len = sizeof ru_rule_table / sizeof ru_rule_table[0];
#define MAX_RULES 512 /* the walk's per-request scratch; codes are append-only, so this grows with them */
_Static_assert(sizeof ru_rule_table / sizeof ru_rule_table[0] <= MAX_RULES, "raise MAX_RULES");

const sc_rule *ru_rule_by_name(const char *name) {
  for (size_t i = 0; i < ru_rule_table_len; i++)
    if (strcmp(ru_rule_table[i].name, name) == 0) return &ru_rule_table[i];
  return NULL;
}

const sc_rule *ru_rule_by_code(const char *code) {
  for (size_t i = 0; i < ru_rule_table_len; i++)
    if (strcmp(ru_rule_table[i].code, code) == 0) return &ru_rule_table[i];
  return NULL;
}

size_t sc_rule_count(void) { return ru_rule_table_len; }

void sc_rule_info(size_t i, const char **name, const char **family, const char **code, sc_severity *severity,
                  const char **summary) {
  const sc_rule *r = &ru_rule_table[i < ru_rule_table_len ? i : 0];
  if (name) *name = r->name;
  if (family) *family = r->family;
  if (code) *code = r->code;
  if (severity) *severity = r->severity;
  if (summary) *summary = r->summary;
}

/* A glob matches a rule by name, code or family ("kernel" selects the whole family), in any case
 * ("sc0301", as `explain` takes it). */
static void lower_copy(char *out, size_t cap, const char *s) {
  size_t i = 0;
  for (; s[i] && i + 1 < cap; i++) out[i] = (char)tolower((unsigned char)s[i]);
  out[i] = 0;
}

static bool glob_matches(const char *lower_glob, const sc_rule *r) {
  char code[32];
  lower_copy(code, sizeof code, r->code); /* names and families are lowercase already */
  return fnmatch(lower_glob, r->name, 0) == 0 || fnmatch(lower_glob, code, 0) == 0 ||
         strcmp(lower_glob, r->family) == 0;
}

int ru_rule_select(sc_arena *a, const char *globs, ru_rule_selection *out, const char **error) {
  out->enabled = ar_calloc(a, ru_rule_table_len, sizeof *out->enabled);
  bool any_positive = false;
  if (globs) {
    for (const char *p = globs; *p;) {
      const char *e = strchr(p, ',');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      while (n && (*p == ' ')) p++, n--;
      while (n && p[n - 1] == ' ') n--;
      if (n && *p != '-') any_positive = true;
      p += n;
      while (*p == ' ' || *p == ',') p++;
    }
  }
  for (size_t i = 0; i < ru_rule_table_len; i++) out->enabled[i] = !any_positive;
  if (!globs) return 0;
  for (const char *p = globs; *p;) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    while (n && p[n - 1] == ' ') n--;
    bool negate = *p == '-';
    char *g = ar_strndup(a, p + negate, n - negate);
    for (char *c = g; *c; c++) *c = (char)tolower((unsigned char)*c);
    bool matched = false;
    for (size_t i = 0; i < ru_rule_table_len; i++) {
      if (glob_matches(g, &ru_rule_table[i])) {
        out->enabled[i] = !negate;
        matched = true;
      }
    }
    if (!matched) {
      *error = ar_printf(a, "rule selector '%s' matches no rule (see `shardcheck rules`)", g);
      return -1;
    }
    p += n;
  }
  return 0;
}

int sc_rules_validate(sc_arena *a, const char *globs, const char **error) {
  ru_rule_selection sel;
  return ru_rule_select(a, globs, &sel, error);
}

/* ---- The walk ---------------------------------------------------------------------------------- */

/* Dispatch slots: one per op kind, and for custom calls one per custom call class. */
#define SLOT_COUNT (SC_OP_KIND_COUNT + SC_CC_CLASS_COUNT)
static unsigned slot_of(const ir_op *op) {
  return op->kind == SC_OP_CUSTOM_CALL && op->cc < SC_CC_CLASS_COUNT ? SC_OP_KIND_COUNT + op->cc : op->kind;
}

static bool rule_sees(const sc_rule *r, unsigned slot) {
  if (slot < SC_OP_KIND_COUNT) return slot != SC_OP_CUSTOM_CALL && (r->kinds & SC_KIND(slot));
  return (r->kinds & SC_KIND(SC_OP_CUSTOM_CALL)) && (!r->ccs || (r->ccs & SC_CC(slot - SC_OP_KIND_COUNT)));
}

/* Per slot, enabled rules subscribed to it (table indices, in table order). */
typedef struct {
  uint16_t *rules;
  uint32_t start[SLOT_COUNT + 1];
} rule_lists;

/* Rules that visit anywhere, and rules scoped to ops nested in some kind (looked at only while an op
 * of such a kind is open, so a scoped rule costs nothing on the rest of the module). */
typedef struct {
  rule_lists anywhere, scoped;
  bool opens_scope[SC_OP_KIND_COUNT]; /* the kinds some enabled rule is scoped to */
} dispatch;

static bool listed(const bool *enabled, size_t i, bool scoped) {
  const sc_rule *r = &ru_rule_table[i];
  return enabled[i] && r->visit && (r->within != SC_ANYWHERE) == scoped;
}

/* A counting sort of (slot, rule) pairs: one pass counts per slot, a second fills, both over the
 * visiting rules only, so the table is built in O(rules x slots they see), not O(rules x all slots)
 * per request (it was most of the engine's cost on a small module). */
static void build_lists(sc_arena *a, const bool *enabled, bool scoped, rule_lists *l) {
  uint32_t count[SLOT_COUNT] = {0};
  uint16_t visiting[MAX_RULES];
  size_t nvisiting = 0;
  for (size_t i = 0; i < ru_rule_table_len; i++)
    if (listed(enabled, i, scoped)) visiting[nvisiting++] = (uint16_t)i;
  for (size_t k = 0; k < nvisiting; k++)
    for (unsigned s = 0; s < SLOT_COUNT; s++) count[s] += rule_sees(&ru_rule_table[visiting[k]], s);
  uint32_t n = 0;
  for (unsigned s = 0; s < SLOT_COUNT; s++) {
    l->start[s] = n;
    n += count[s];
  }
  l->start[SLOT_COUNT] = n;
  l->rules = ar_alloc(a, (n ? n : 1) * sizeof *l->rules);
  uint32_t fill[SLOT_COUNT];
  memcpy(fill, l->start, sizeof fill);
  for (size_t k = 0; k < nvisiting; k++) /* rules in table order within each slot */
    for (unsigned s = 0; s < SLOT_COUNT; s++)
      if (rule_sees(&ru_rule_table[visiting[k]], s)) l->rules[fill[s]++] = visiting[k];
}

static void build_dispatch(sc_arena *a, const bool *enabled, dispatch *d) {
  build_lists(a, enabled, false, &d->anywhere);
  build_lists(a, enabled, true, &d->scoped);
  memset(d->opens_scope, 0, sizeof d->opens_scope);
  for (size_t i = 0; i < ru_rule_table_len; i++)
    if (enabled[i] && ru_rule_table[i].visit && ru_rule_table[i].within != SC_ANYWHERE &&
        ru_rule_table[i].within < SC_OP_KIND_COUNT)
      d->opens_scope[ru_rule_table[i].within] = true;
}

/* What one rule call reported: its diagnostics [diag, diag_end) and links [cause, cause_end). */
typedef struct {
  uint32_t rule;
  uint32_t diag, diag_end;
  uint32_t cause, cause_end;
} segment;
typedef SC_VEC(segment) segment_vec;

/* Notes that rule i reported diagnostics [d0, diags.n) and links [c0, causes.n) in its last call. */
static void note_segment(ru_ctx *ctx, uint32_t i, uint32_t d0, uint32_t c0, segment_vec *segs) {
  segment *last = segs->n ? &segs->v[segs->n - 1] : NULL;
  if (last && last->rule == i && last->diag_end == d0 && last->cause_end == c0) {
    last->diag_end = (uint32_t)ctx->diags.n; /* the same rule again: extend its run */
    last->cause_end = (uint32_t)ctx->causes.n;
    return;
  }
  segment s = {i, d0, (uint32_t)ctx->diags.n, c0, (uint32_t)ctx->causes.n};
  SC_PUSH(ctx->arena, *segs, s);
}

static bool cancelled(const ru_ctx *ctx) { return ctx->options && ctx->options->cancel && *ctx->options->cancel; }

/* Ops between polls of the cancel flag and charges to the work meter (the request's CPU budget). */
#define WALK_POLL_OPS 1024u

/* Calls rule i's visit on op, noting what it reported. */
static inline void visit_one(ru_ctx *ctx, uint32_t i, const ir_op *op, segment_vec *segs) {
  size_t d0 = ctx->diags.n, c0 = ctx->causes.n;
  ctx->rule = &ru_rule_table[i];
  ru_rule_table[i].visit(ctx, op);
  if (ctx->diags.n != d0 || ctx->causes.n != c0) note_segment(ctx, i, (uint32_t)d0, (uint32_t)c0, segs);
}

/* An open scope: an op of a kind some rule is scoped to, whose subtree the walk is in. */
typedef struct {
  uint32_t end; /* its subtree_end */
  uint8_t kind;
} open_scope;

/* The walk: module->ops is the preorder, so an op's subtree is ops[id + 1, subtree_end) and open
 * scopes nest (a stack). Returns false when the request was cancelled. */
static bool walk(ru_ctx *ctx, const dispatch *d, segment_vec *segs) {
  const ir_module *m = ctx->module;
  uint32_t open[SC_OP_KIND_COUNT] = {0};
  SC_VEC(open_scope) scopes = {0};
  for (uint32_t k = 0; k < m->nops; k++) {
    if (k % WALK_POLL_OPS == WALK_POLL_OPS - 1 && (ar_step(ctx->arena, WALK_POLL_OPS) || cancelled(ctx)))
      return false;
    while (scopes.n && scopes.v[scopes.n - 1].end <= k) open[scopes.v[--scopes.n].kind]--;
    const ir_op *op = m->ops[k];
    unsigned s = slot_of(op);
    for (uint32_t j = d->anywhere.start[s], end = d->anywhere.start[s + 1]; j < end; j++)
      visit_one(ctx, d->anywhere.rules[j], op, segs);
    for (uint32_t j = scopes.n ? d->scoped.start[s] : 0, end = scopes.n ? d->scoped.start[s + 1] : 0; j < end; j++)
      if (open[ru_rule_table[d->scoped.rules[j]].within]) visit_one(ctx, d->scoped.rules[j], op, segs);
    if (op->kind < SC_OP_KIND_COUNT && d->opens_scope[op->kind] && op->subtree_end > k + 1) {
      open_scope o = {op->subtree_end, op->kind};
      SC_PUSH(ctx->arena, scopes, o);
      open[op->kind]++;
    }
  }
  return true;
}

/* Reorders what this run reported into table order (each rule's diagnostics in the order it reported
 * them), as when the rules ran one after another: folding and the report's order of equal keys depend
 * on it. Links are reordered the same way and renumbered. */
static void restore_rule_order(ru_ctx *ctx, const segment_vec *segs, uint32_t diag0, uint32_t cause0) {
  uint32_t nd = (uint32_t)ctx->diags.n - diag0, nc = (uint32_t)ctx->causes.n - cause0;
  if (segs->n < 2 || !nd) return;
  sc_arena *a = ctx->arena;
  /* stable counting sort of the segments by rule */
  uint32_t *count = ar_calloc(a, ru_rule_table_len + 1, sizeof *count);
  for (size_t i = 0; i < segs->n; i++) count[segs->v[i].rule + 1]++;
  for (size_t r = 0; r < ru_rule_table_len; r++) count[r + 1] += count[r];
  const segment **order = ar_alloc(a, segs->n * sizeof *order);
  for (size_t i = 0; i < segs->n; i++) order[count[segs->v[i].rule]++] = &segs->v[i];
  sc_diag *diags = ar_alloc(a, nd * sizeof *diags);
  uint32_t *anchors = ar_alloc(a, nd * sizeof *anchors);
  uint32_t *moved_to = ar_alloc(a, nd * sizeof *moved_to);
  ru_cause *causes = ar_alloc(a, (nc ? nc : 1) * sizeof *causes);
  uint32_t dn = 0, cn = 0;
  for (size_t i = 0; i < segs->n; i++) {
    const segment *s = order[i];
    for (uint32_t k = s->diag; k < s->diag_end; k++, dn++) {
      diags[dn] = ctx->diags.v[k];
      anchors[dn] = ctx->anchors.v[k];
      moved_to[k - diag0] = diag0 + dn;
    }
    for (uint32_t k = s->cause; k < s->cause_end; k++) causes[cn++] = ctx->causes.v[k];
  }
  memcpy(ctx->diags.v + diag0, diags, nd * sizeof *diags);
  memcpy(ctx->anchors.v + diag0, anchors, nd * sizeof *anchors);
  for (uint32_t k = 0; k < cn; k++) {
    if (causes[k].diag >= diag0) causes[k].diag = moved_to[causes[k].diag - diag0];
    ctx->causes.v[cause0 + k] = causes[k];
  }
}

void **ru_rule_state(ru_ctx *ctx) {
  return ctx->rule && ctx->rule_state ? &ctx->rule_state[ctx->rule - ru_rule_table] : NULL;
}

void ru_rules_run(ru_ctx *ctx, const ru_rule_selection *sel) {
  if (cancelled(ctx)) return;
  sc_arena *a = ctx->arena;
  bool *enabled = ar_alloc(a, ru_rule_table_len * sizeof *enabled);
  for (size_t i = 0; i < ru_rule_table_len; i++) enabled[i] = !sel || !sel->enabled || sel->enabled[i];
  ctx->rule_state = ar_calloc(a, ru_rule_table_len, sizeof *ctx->rule_state);
  ctx->rule_cache = NULL; /* per module: a split-input-file chunk's verdicts are not the next one's */
  uint32_t diag0 = (uint32_t)ctx->diags.n, cause0 = (uint32_t)ctx->causes.n;
  segment_vec segs = {0};
  dispatch d;
  build_dispatch(a, enabled, &d);
  bool done = walk(ctx, &d, &segs);
  for (size_t i = 0; done && i < ru_rule_table_len; i++) {
    if (!enabled[i] || !ru_rule_table[i].finish) continue;
    if (cancelled(ctx)) break;
    size_t d0 = ctx->diags.n, c0 = ctx->causes.n;
    ctx->rule = &ru_rule_table[i];
    ru_rule_table[i].finish(ctx);
    if (ctx->diags.n != d0 || ctx->causes.n != c0) note_segment(ctx, (uint32_t)i, (uint32_t)d0, (uint32_t)c0, &segs);
  }
  restore_rule_order(ctx, &segs, diag0, cause0);
  ctx->rule = NULL;
  ctx->rule_state = NULL;
  ctx->rule_cache = NULL;
}

/* A token's end: identifiers, numbers, %values, @symbols, "strings" (up to the closing quote). */
static uint32_t token_end(const char *buf, size_t len, uint32_t at) {
  if (at >= len) return at;
  if (buf[at] == '"') {
    uint32_t e = at + 1;
    while (e < len && buf[e] != '"' && buf[e] != '\n') e += buf[e] == '\\' ? 2 : 1;
    return e < len ? e + 1 : (uint32_t)len;
  }
  uint32_t e = at;
  while (e < len && (isalnum((unsigned char)buf[e]) || strchr("_.$%@#-:", buf[e])) && buf[e] != '\0') e++;
  return e > at ? e : at + 1;
}

static void default_span(ru_ctx *ctx, sc_diag *d) {
  if (!ctx->buf || d->offset >= ctx->len) return;
  ru_diag_span(ctx, d, d->offset, token_end(ctx->buf, ctx->len, d->offset));
}

static sc_diag *report_v(ru_ctx *ctx, sc_severity sev, uint32_t offset, const ir_op *op, const char *fmt, va_list ap) {
  sc_diag d;
  memset(&d, 0, sizeof d);
  const sc_rule *r = ctx->rule;
  d.code = r ? r->code : "SC0000";
  d.rule = r ? r->name : "internal";
  d.severity = sev;
  d.message = ar_vprintf(ctx->arena, fmt, ap);
  d.offset = offset;
  if (ctx->lines) {
    ir_pos pos = ir_linemap_pos(ctx->lines, offset);
    d.line = pos.line;
    d.col = pos.col;
  }
  if (op) {
    if (ir_op_func(op) && ir_op_sym_name(ir_op_func(op)).n) d.function = ir_span_dup(ctx->arena, ir_op_sym_name(ir_op_func(op)));
    else if (op->kind == SC_OP_FUNC && ir_op_sym_name(op).n)
      d.function = ir_span_dup(ctx->arena, ir_op_sym_name(op));
    d.op = ir_span_dup(ctx->arena, ir_op_name(op));
    ir_span target = ir_op_custom_call_target(op);
    if (target.n) d.target = ir_span_dup(ctx->arena, target);
    ir_srcloc src = ir_op_srcloc(ctx->module, op); /* resolved here, not per op while parsing */
    if (src.known) {
      d.has_source = true;
      d.source_file = ir_span_dup(ctx->arena, src.file);
      d.source_line = src.line;
      d.source_col = src.col;
    }
  }
  SC_PUSH(ctx->arena, ctx->diags, d);
  SC_PUSH(ctx->arena, ctx->anchors, offset);
  sc_diag *out = &ctx->diags.v[ctx->diags.n - 1];
  /* An op's culprit token: its custom call target (with the '@'), else its name. */
  uint32_t at = op && op->pos.offset == offset ? ru_ctx_offset_of(ctx, ir_op_custom_call_target(op)) : UINT32_MAX;
  if (at != UINT32_MAX && at > offset && (ctx->buf[at - 1] == '@' || ctx->buf[at - 1] == '"')) {
    uint32_t end = at + ir_op_custom_call_target(op).n;
    if (end < ctx->len && ctx->buf[end] == '"') end++; /* @"quoted" / "quoted" */
    ru_diag_span(ctx, out, at - 1, end);
  } else if (op && op->pos.offset == offset && ir_span_eq(ir_op_name(op), "sdy.mesh") && op->end > offset) {
    ru_diag_span(ctx, out, offset, op->end); /* a mesh's problem: its declaration */
  } else if (!(op && op->pos.offset == offset && ru_diag_span_text(ctx, out, ir_op_name(op)))) {
    default_span(ctx, out);
  }
  return out;
}

sc_diag *ru_emit(ru_ctx *ctx, const ir_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_diag *d = report_v(ctx, ctx->rule ? ctx->rule->severity : SC_SEV_ERROR, op ? op->pos.offset : 0, op, fmt, ap);
  va_end(ap);
  return d;
}

sc_diag *ru_emit_at(ru_ctx *ctx, uint32_t offset, const ir_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_diag *d = report_v(ctx, ctx->rule ? ctx->rule->severity : SC_SEV_ERROR, offset, op, fmt, ap);
  va_end(ap);
  return d;
}

sc_diag *ru_emit_sev(ru_ctx *ctx, sc_severity sev, uint32_t offset, const ir_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_diag *d = report_v(ctx, sev, offset, op, fmt, ap);
  va_end(ap);
  return d;
}

void ru_diag_context(ru_ctx *ctx, sc_diag *d, const char *key, const char *value) {
  sc_context_entry *grown = ar_grow(ctx->arena, d->context, d->ncontext, d->ncontext + 1, sizeof *grown);
  sc_context_entry *e = &grown[d->ncontext];
  e->key = key;
  e->values = ar_alloc(ctx->arena, sizeof *e->values);
  e->values[0] = value;
  e->nvalues = 1;
  e->is_list = false;
  d->context = grown;
  d->ncontext++;
}

void ru_diag_context_list(ru_ctx *ctx, sc_diag *d, const char *key, const char *const *values, size_t n) {
  sc_context_entry *grown = ar_grow(ctx->arena, d->context, d->ncontext, d->ncontext + 1, sizeof *grown);
  sc_context_entry *e = &grown[d->ncontext];
  e->key = key;
  e->values = ar_calloc(ctx->arena, n ? n : 1, sizeof *e->values);
  for (size_t i = 0; i < n; i++) e->values[i] = values[i];
  e->nvalues = n;
  e->is_list = true;
  d->context = grown;
  d->ncontext++;
}

/* True if `name` is used in Python code of `snippet` (not in imports or comments), as a whole name:
 * "jnp." is not a use of "np.". */
static bool snippet_uses(const char *snippet, const char *name) {
  size_t n = strlen(name);
  for (const char *line = snippet; *line;) {
    const char *nl = strchr(line, '\n');
    const char *end = nl ? nl : line + strlen(line);
    bool import = !strncmp(line, "import ", 7) || !strncmp(line, "from ", 5);
    const char *hash = memchr(line, '#', (size_t)(end - line)); /* comments use nothing */
    if (hash) end = hash;
    for (const char *p = line; !import && p + n <= end; p++)
      if (!memcmp(p, name, n) && (p == line || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.')))
        return true;
    line = nl ? nl + 1 : line + strlen(line);
  }
  return false;
}

/* A Python snippet with the imports it needs and the JAX version its newer APIs need, so it runs
 * when pasted (a user's file may import jax.numpy as something else, but this is what JAX's docs use). */
static const char *with_imports(sc_arena *a, const char *snippet) {
  static const struct {
    const char *use, *line;
  } imports[] = {
      {"jax.", "import jax"},
      {"jnp.", "import jax.numpy as jnp"},
      {"np.", "import numpy as np"},
      {"pl.", "from jax.experimental import pallas as pl"},
  };
  ar_str head = SC_ASTR_INIT(a);
  for (size_t i = 0; i < sizeof imports / sizeof *imports; i++)
    if (snippet_uses(snippet, imports[i].use) && !strstr(snippet, imports[i].line))
      ar_str_printf(&head, "%s\n", imports[i].line);
  bool named = snippet_uses(snippet, "NamedSharding"), spec = snippet_uses(snippet, "P(");
  if (named || spec)
    ar_str_printf(&head, "from jax.sharding import %s%s%s\n", named ? "NamedSharding" : "", named && spec ? ", " : "",
                   spec ? "PartitionSpec as P" : "");
  if (snippet_uses(snippet, "jax.shard_map"))
    ar_str_puts(&head, "# jax.shard_map needs JAX 0.7 or newer (before: jax.experimental.shard_map.shard_map)\n");
  if (snippet_uses(snippet, "jax.set_mesh")) ar_str_puts(&head, "# jax.set_mesh needs JAX 0.7 or newer (before: `with mesh:`)\n");
  if (!head.n) return snippet;
  ar_str_puts(&head, snippet);
  return ar_str_str(&head);
}

sc_fix *ru_diag_fix(ru_ctx *ctx, sc_diag *d, const char *title, const char *snippet) {
  sc_fix *grown = ar_grow(ctx->arena, d->fixes, d->nfixes, d->nfixes + 1, sizeof *grown);
  sc_fix *f = &grown[d->nfixes];
  f->title = title;
  f->snippet = snippet ? with_imports(ctx->arena, snippet) : NULL;
  d->fixes = grown;
  d->nfixes++;
  return f;
}

uint32_t ru_ctx_offset_of(const ru_ctx *ctx, ir_span text) {
  if (!ctx->buf || !text.p) return UINT32_MAX;
  uintptr_t b = (uintptr_t)ctx->buf, p = (uintptr_t)text.p;
  if (p < b || p + text.n > b + ctx->len) return UINT32_MAX;
  return (uint32_t)(p - b);
}

void ru_diag_span(ru_ctx *ctx, sc_diag *d, uint32_t begin, uint32_t end) {
  if (end <= begin || (ctx->buf && end > ctx->len)) return;
  d->offset = begin;
  d->end_offset = end;
  if (ctx->lines) {
    ir_pos a = ir_linemap_pos(ctx->lines, begin), b = ir_linemap_pos(ctx->lines, end);
    d->line = a.line, d->col = a.col, d->end_line = b.line, d->end_col = b.col;
  }
}

bool ru_diag_span_text(ru_ctx *ctx, sc_diag *d, ir_span text) {
  uint32_t at = ru_ctx_offset_of(ctx, text);
  if (at == UINT32_MAX || !text.n) return false;
  ru_diag_span(ctx, d, at, at + text.n);
  return true;
}

bool ru_diag_span_name(ru_ctx *ctx, sc_diag *d, ir_span name) {
  uint32_t at = ru_ctx_offset_of(ctx, name);
  if (at == UINT32_MAX || !name.n) return false;
  uint32_t b = at, e = at + name.n;
  if (b > 0 && ctx->buf[b - 1] == '"' && e < ctx->len && ctx->buf[e] == '"') b--, e++;
  ru_diag_span(ctx, d, b, e);
  return true;
}

static void add_link(ru_ctx *ctx, const sc_diag *d, const char *code, uint32_t site, bool claims) {
  if (!d || d < ctx->diags.v || d >= ctx->diags.v + ctx->diags.n) return;
  ru_cause c = {(uint32_t)(d - ctx->diags.v), code, site, claims};
  SC_PUSH(ctx->arena, ctx->causes, c);
}

void ru_diag_caused_by(ru_ctx *ctx, const sc_diag *d, const char *code, uint32_t site) { add_link(ctx, d, code, site, false); }
void ru_diag_claims(ru_ctx *ctx, const sc_diag *root, const char *code, uint32_t site) { add_link(ctx, root, code, site, true); }

/* Diagnostics keyed by (code, site): a chained hash, one entry per diagnostic plus, under SC_SITE_ANY,
 * one per kept root candidate (the earliest of a code is found first). */
typedef struct {
  uint32_t *head; /* bucket -> first entry + 1 (0 = empty) */
  uint32_t *next; /* entry -> next entry + 1 in the bucket */
  uint32_t *diag; /* entry -> diagnostic index */
  uint32_t *site; /* entry -> key site */
  size_t mask, n;
} diag_index;

static size_t key_hash(const char *code, uint32_t site) {
  size_t h = 1469598103934665603u;
  for (const char *p = code; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
  return (h ^ site) * 1099511628211u;
}

static void index_add(diag_index *x, const char *code, uint32_t site, uint32_t diag) {
  size_t b = key_hash(code, site) & x->mask;
  x->diag[x->n] = diag, x->site[x->n] = site, x->next[x->n] = x->head[b];
  x->head[b] = (uint32_t)++x->n;
}

/* Calls back every diagnostic (code, site); stops when fn returns false. */
static void index_each(const ru_ctx *ctx, const diag_index *x, const char *code, uint32_t site,
                       bool (*fn)(void *u, uint32_t diag), void *u) {
  for (uint32_t e = x->head[key_hash(code, site) & x->mask]; e; e = x->next[e - 1]) {
    uint32_t i = x->diag[e - 1];
    if (x->site[e - 1] == site && strcmp(ctx->diags.v[i].code, code) == 0 && !fn(u, i)) return;
  }
}

typedef struct {
  uint32_t *parent;
  const bool *keep;
  const bool *follows; /* the diagnostic itself follows from another: a root only if nothing else is */
  uint32_t self, found, fallback;
  bool claims;
} link_job;

/* The index lists, per key, diagnostics that follow from another after those that do not (see
 * ru_diags_fold), so a lookup stops at the first candidate: linear overall. */
static bool link_one(void *u, uint32_t i) {
  link_job *j = u;
  if (i == j->self) return true;
  if (j->claims) {
    if (j->parent[i] == UINT32_MAX) j->parent[i] = j->self;
    return true; /* claims every diagnostic at the site */
  }
  if (!j->keep[i]) return true;
  if (j->follows[i]) j->fallback = i; /* no root candidate at this site: link to a fellow consequence */
  else j->found = i;
  return false;
}

void ru_diag_related(ru_ctx *ctx, sc_diag *d, uint32_t offset, const ir_op *op, const char *message) {
  sc_related r;
  memset(&r, 0, sizeof r);
  r.message = message;
  r.offset = r.end_offset = offset;
  if (ctx->lines) {
    ir_pos pos = ir_linemap_pos(ctx->lines, offset);
    r.line = r.end_line = pos.line;
    r.col = r.end_col = pos.col;
  }
  if (op) {
    const ir_op *fn = op->kind == SC_OP_FUNC ? op : ir_op_func(op);
    if (fn && ir_op_sym_name(fn).n) r.function = ir_span_dup(ctx->arena, ir_op_sym_name(fn));
    r.op = ir_span_dup(ctx->arena, ir_op_name(op));
    ir_srcloc src = ir_op_srcloc(ctx->module, op);
    if (src.known) {
      r.has_source = true;
      r.source_file = ir_span_dup(ctx->arena, src.file);
      r.source_line = src.line;
      r.source_col = src.col;
    }
  }
  d->related = ar_grow(ctx->arena, d->related, d->nrelated, d->nrelated + 1, sizeof *d->related);
  d->related[d->nrelated++] = r;
}

static void relate(ru_ctx *ctx, sc_diag *root, const sc_diag *c) {
  sc_related r = {c->message, c->code, c->line, c->col, c->offset, c->end_line, c->end_col, c->end_offset,
                  c->function, c->op, c->has_source, c->source_file, c->source_line, c->source_col};
  root->related = ar_grow(ctx->arena, root->related, root->nrelated, root->nrelated + 1, sizeof *root->related);
  root->related[root->nrelated++] = r;
  if (c->severity > root->severity) root->severity = c->severity; /* a mistake is as severe as its worst consequence */
  /* the root's machine fix fixes the whole mistake: the same fix's edits of a folded site join it */
  for (size_t k = 0; k < c->nfixes; k++) {
    const sc_fix *cf = &c->fixes[k];
    for (size_t m = 0; cf->machine && m < root->nfixes; m++) {
      sc_fix *rf = &root->fixes[m];
      if (!rf->machine || !rf->title || !cf->title || strcmp(rf->title, cf->title) != 0) continue;
      rf->edits = ar_grow(ctx->arena, rf->edits, rf->nedits, rf->nedits + cf->nedits, sizeof *rf->edits);
      if (cf->nedits) memcpy(rf->edits + rf->nedits, cf->edits, cf->nedits * sizeof *cf->edits);
      rf->nedits += cf->nedits;
      break;
    }
  }
  /* a folded diagnostic's own related sites stay with the mistake */
  for (size_t k = 0; k < c->nrelated; k++) {
    root->related = ar_grow(ctx->arena, root->related, root->nrelated, root->nrelated + 1, sizeof *root->related);
    root->related[root->nrelated++] = c->related[k];
  }
}

/* Adds the diagnostics whose "follows" flag is `follows` to the index; SC_SITE_ANY names the first kept
 * root candidate of each code. Buckets are LIFO: the pass added last is visited first. */
static void index_pass(const ru_ctx *ctx, diag_index *x, const bool *follows, const bool *keep, bool pass_follows) {
  for (uint32_t i = (uint32_t)ctx->diags.n; i-- > 0;) { /* backwards: the earliest is visited first */
    if (follows[i] != pass_follows) continue;
    index_add(x, ctx->diags.v[i].code, ctx->anchors.v[i], i);
  }
  if (pass_follows) return;
  for (uint32_t i = (uint32_t)ctx->diags.n; i-- > 0;) {
    if (follows[i] || !keep[i]) continue;
    index_add(x, ctx->diags.v[i].code, SC_SITE_ANY, i);
  }
}

void ru_diags_fold(ru_ctx *ctx, bool *keep) {
  size_t n = ctx->diags.n;
  if (!ctx->causes.n || n < 2) return;
  sc_arena *a = ctx->arena;
  bool *follows = ar_calloc(a, n, sizeof *follows);
  for (size_t k = 0; k < ctx->causes.n; k++)
    if (!ctx->causes.v[k].claims) follows[ctx->causes.v[k].diag] = true;
  diag_index x = {0};
  size_t buckets = 1;
  while (buckets < 4 * n) buckets <<= 1;
  x.mask = buckets - 1;
  x.head = ar_calloc(a, buckets, sizeof *x.head);
  x.next = ar_calloc(a, 2 * n, sizeof *x.next);
  x.diag = ar_calloc(a, 2 * n, sizeof *x.diag);
  x.site = ar_calloc(a, 2 * n, sizeof *x.site);
  index_pass(ctx, &x, follows, keep, true);
  index_pass(ctx, &x, follows, keep, false);
  uint32_t *parent = ar_alloc(a, n * sizeof *parent);
  for (size_t i = 0; i < n; i++) parent[i] = UINT32_MAX;
  for (size_t k = 0; k < ctx->causes.n; k++) {
    const ru_cause *c = &ctx->causes.v[k];
    if (!keep[c->diag] && c->claims) continue;
    link_job j = {parent, keep, follows, c->diag, UINT32_MAX, UINT32_MAX, c->claims};
    index_each(ctx, &x, c->code, c->site, link_one, &j);
    uint32_t to = j.found != UINT32_MAX ? j.found : j.fallback;
    if (!c->claims && to != UINT32_MAX && parent[c->diag] == UINT32_MAX) parent[c->diag] = to;
  }
  /* Roots: follow parents, memoized (each diagnostic is walked once); in a cycle, the member the walk
   * reaches again is the root. */
  uint32_t *root = ar_alloc(a, n * sizeof *root), *stack = ar_alloc(a, n * sizeof *stack);
  uint8_t *state = ar_calloc(a, n, 1); /* 0 new, 1 on this walk, 2 resolved */
  for (uint32_t i = 0; i < n; i++) {
    if (state[i] == 2) continue;
    size_t depth = 0;
    uint32_t r = i;
    while (state[r] == 0) {
      state[r] = 1;
      stack[depth++] = r;
      if (parent[r] == UINT32_MAX || !keep[parent[r]]) break;
      r = parent[r];
    }
    uint32_t top = state[r] == 2 ? root[r] : r;
    while (depth) {
      uint32_t k = stack[--depth];
      state[k] = 2;
      root[k] = top;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!keep[i] || root[i] == i) continue;
    relate(ctx, &ctx->diags.v[root[i]], &ctx->diags.v[i]);
    keep[i] = false;
  }
  for (size_t i = 0; i < n; i++) {
    sc_diag *d = &ctx->diags.v[i];
    if (keep[i] && d->nrelated) ru_diag_context(ctx, d, "related", ar_printf(a, "%zu", d->nrelated));
  }
}

void ru_fix_edit(ru_ctx *ctx, sc_fix *f, uint32_t offset, uint32_t length, const char *replacement) {
  sc_edit *grown = ar_grow(ctx->arena, f->edits, f->nedits, f->nedits + 1, sizeof *grown);
  sc_edit *e = &grown[f->nedits];
  e->offset = offset;
  e->length = length;
  e->replacement = replacement;
  if (ctx->lines) {
    ir_pos a = ir_linemap_pos(ctx->lines, offset), b = ir_linemap_pos(ctx->lines, offset + length);
    e->line = a.line, e->col = a.col, e->end_line = b.line, e->end_col = b.col;
  }
  f->edits = grown;
  f->nedits++;
  f->machine = true;
}
