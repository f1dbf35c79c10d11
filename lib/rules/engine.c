/* rules.c — the rule registry: one table row per rule, selection by globs, and the reporting API.
 *
 * Rows come from one .def file per family (lib/rules/<family>.def, listed in lib/rules/all.def), each
 *   RULE(name, family, code, default severity, summary, check function)
 * or ENGINE_RULE(name, family, code, severity, summary) for codes the engine reports itself.
 * so a family's rules, check functions and tests stay together. Codes are append-only. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "rules/rules.h"

/* Declarations of every check function named in the tables. */
#define RULE(name, family, code, sev, summary, fn) void fn(sc_ctx *ctx);
#define ENGINE_RULE(name, family, code, sev, summary)
#include "rules/all.def"
#undef RULE
#undef ENGINE_RULE

const sc_rule sc_rule_table[] = {
#define RULE(name, family, code, sev, summary, fn) {name, family, code, sev, summary, fn},
#define ENGINE_RULE(name, family, code, sev, summary) {name, family, code, sev, summary, NULL},
#include "rules/all.def"
#undef RULE
#undef ENGINE_RULE
};
const size_t sc_rule_table_len = sizeof sc_rule_table / sizeof sc_rule_table[0];

const sc_rule *sc_rule_by_name(const char *name) {
  for (size_t i = 0; i < sc_rule_table_len; i++)
    if (strcmp(sc_rule_table[i].name, name) == 0) return &sc_rule_table[i];
  return NULL;
}

const sc_rule *sc_rule_by_code(const char *code) {
  for (size_t i = 0; i < sc_rule_table_len; i++)
    if (strcmp(sc_rule_table[i].code, code) == 0) return &sc_rule_table[i];
  return NULL;
}

size_t sc_rule_count(void) { return sc_rule_table_len; }

void sc_rule_info(size_t i, const char **name, const char **family, const char **code, sc_severity *severity,
                  const char **summary) {
  const sc_rule *r = &sc_rule_table[i < sc_rule_table_len ? i : 0];
  if (name) *name = r->name;
  if (family) *family = r->family;
  if (code) *code = r->code;
  if (severity) *severity = r->severity;
  if (summary) *summary = r->summary;
}

/* A glob matches a rule by name, code or family ("kernel" selects the whole family). */
static bool glob_matches(const char *glob, const sc_rule *r) {
  return fnmatch(glob, r->name, 0) == 0 || fnmatch(glob, r->code, 0) == 0 || strcmp(glob, r->family) == 0;
}

int sc_rule_select(sc_arena *a, const char *globs, sc_rule_selection *out, const char **error) {
  out->enabled = sc_arena_calloc(a, sc_rule_table_len, sizeof *out->enabled);
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
  for (size_t i = 0; i < sc_rule_table_len; i++) out->enabled[i] = !any_positive;
  if (!globs) return 0;
  for (const char *p = globs; *p;) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    while (n && p[n - 1] == ' ') n--;
    bool negate = *p == '-';
    char *g = sc_arena_strndup(a, p + negate, n - negate);
    bool matched = false;
    for (size_t i = 0; i < sc_rule_table_len; i++) {
      if (glob_matches(g, &sc_rule_table[i])) {
        out->enabled[i] = !negate;
        matched = true;
      }
    }
    if (!matched) {
      *error = sc_arena_printf(a, "rule selector '%s' matches no rule (see `shardcheck rules`)", g);
      return -1;
    }
    p += n;
  }
  return 0;
}

void sc_rules_run(sc_ctx *ctx, const sc_rule_selection *sel) {
  for (size_t i = 0; i < sc_rule_table_len; i++) {
    const sc_rule *r = &sc_rule_table[i];
    if (!r->check || (sel && sel->enabled && !sel->enabled[i])) continue;
    if (ctx->options && ctx->options->cancel && *ctx->options->cancel) return;
    ctx->rule = r;
    r->check(ctx);
  }
  ctx->rule = NULL;
}

static sc_diag *report_v(sc_ctx *ctx, sc_severity sev, uint32_t offset, const sc_op *op, const char *fmt, va_list ap) {
  sc_diag d;
  memset(&d, 0, sizeof d);
  const sc_rule *r = ctx->rule;
  d.code = r ? r->code : "SC0000";
  d.rule = r ? r->name : "internal";
  d.severity = sev;
  d.message = sc_arena_vprintf(ctx->arena, fmt, ap);
  d.offset = offset;
  if (ctx->lines) {
    sc_pos pos = sc_linemap_pos(ctx->lines, offset);
    d.line = pos.line;
    d.col = pos.col;
  }
  if (op) {
    if (op->func && op->func->sym_name.n) d.function = sc_span_dup(ctx->arena, op->func->sym_name);
    else if (op->kind == SC_OP_FUNC && op->sym_name.n)
      d.function = sc_span_dup(ctx->arena, op->sym_name);
    d.op = sc_span_dup(ctx->arena, op->name);
    sc_span target = sc_op_custom_call_target(op);
    if (target.n) d.target = sc_span_dup(ctx->arena, target);
    if (op->src.known) {
      d.has_source = true;
      d.source_file = sc_span_dup(ctx->arena, op->src.file);
      d.source_line = op->src.line;
      d.source_col = op->src.col;
    }
  }
  SC_PUSH(ctx->arena, ctx->diags, d);
  return &ctx->diags.v[ctx->diags.n - 1];
}

sc_diag *sc_emit(sc_ctx *ctx, const sc_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_diag *d = report_v(ctx, ctx->rule ? ctx->rule->severity : SC_SEV_ERROR, op ? op->pos.offset : 0, op, fmt, ap);
  va_end(ap);
  return d;
}

sc_diag *sc_emit_at(sc_ctx *ctx, uint32_t offset, const sc_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_diag *d = report_v(ctx, ctx->rule ? ctx->rule->severity : SC_SEV_ERROR, offset, op, fmt, ap);
  va_end(ap);
  return d;
}

sc_diag *sc_emit_sev(sc_ctx *ctx, sc_severity sev, uint32_t offset, const sc_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_diag *d = report_v(ctx, sev, offset, op, fmt, ap);
  va_end(ap);
  return d;
}

void sc_diag_context(sc_ctx *ctx, sc_diag *d, const char *key, const char *value) {
  sc_context_entry *grown = sc_arena_grow(ctx->arena, d->context, d->ncontext, d->ncontext + 1, sizeof *grown);
  sc_context_entry *e = &grown[d->ncontext];
  e->key = key;
  e->values = sc_arena_alloc(ctx->arena, sizeof *e->values);
  e->values[0] = value;
  e->nvalues = 1;
  e->is_list = false;
  d->context = grown;
  d->ncontext++;
}

void sc_diag_context_list(sc_ctx *ctx, sc_diag *d, const char *key, const char *const *values, size_t n) {
  sc_context_entry *grown = sc_arena_grow(ctx->arena, d->context, d->ncontext, d->ncontext + 1, sizeof *grown);
  sc_context_entry *e = &grown[d->ncontext];
  e->key = key;
  e->values = sc_arena_calloc(ctx->arena, n ? n : 1, sizeof *e->values);
  for (size_t i = 0; i < n; i++) e->values[i] = values[i];
  e->nvalues = n;
  e->is_list = true;
  d->context = grown;
  d->ncontext++;
}

sc_fix *sc_diag_fix(sc_ctx *ctx, sc_diag *d, const char *title, const char *snippet) {
  sc_fix *grown = sc_arena_grow(ctx->arena, d->fixes, d->nfixes, d->nfixes + 1, sizeof *grown);
  sc_fix *f = &grown[d->nfixes];
  f->title = title;
  f->snippet = snippet;
  d->fixes = grown;
  d->nfixes++;
  return f;
}

size_t sc_diag_supersede(sc_ctx *ctx, const char *code, uint32_t begin, uint32_t end, const char *needle) {
  size_t kept = 0, dropped = 0;
  for (size_t i = 0; i < ctx->diags.n; i++) {
    sc_diag *d = &ctx->diags.v[i];
    if (strcmp(d->code, code) == 0 && d->offset >= begin && d->offset < end &&
        (!needle || (d->message && strstr(d->message, needle)))) {
      dropped++;
      continue;
    }
    if (kept != i) ctx->diags.v[kept] = *d;
    kept++;
  }
  ctx->diags.n = kept;
  return dropped;
}

void sc_fix_edit(sc_ctx *ctx, sc_fix *f, uint32_t offset, uint32_t length, const char *replacement) {
  sc_edit *grown = sc_arena_grow(ctx->arena, f->edits, f->nedits, f->nedits + 1, sizeof *grown);
  sc_edit *e = &grown[f->nedits];
  e->offset = offset;
  e->length = length;
  e->replacement = replacement;
  if (ctx->lines) {
    sc_pos a = sc_linemap_pos(ctx->lines, offset), b = sc_linemap_pos(ctx->lines, offset + length);
    e->line = a.line, e->col = a.col, e->end_line = b.line, e->end_col = b.col;
  }
  f->edits = grown;
  f->nedits++;
  f->machine = true;
}
