/* rules.h — the rule registry and what a rule sees.
 *
 * A rule is one row of sc_rule_table (lib/rules/engine.c): name, family, code, default severity, summary and
 * a check function. Its code has an entry in the catalog (lib/rules/catalog.c) and tests with a failing and
 * a passing module. Codes are append-only: never renumber or reuse one.
 *
 * Code ranges: SC00xx syntax/input, SC01xx mesh, SC02xx sharding, SC03xx kernel, SC04xx callback,
 * SC05xx manual, SC06xx collective, SC07xx export (what a jax.export container records).
 *
 * Check functions run on the request's worker thread and allocate only from ctx->arena. */
#ifndef SC_RULES_H
#define SC_RULES_H

#include <stdarg.h>

#include "ir/ir.h"
#include "shardcheck.h"

typedef struct sc_model sc_model; /* the sharding model, lib/model/model.h */

typedef struct sc_ctx {
  sc_arena *arena;
  const sc_options *options;
  sc_module *module;
  const sc_linemap *lines;
  sc_model *model;          /* built before any rule runs; NULL for rule-less runs */
  const sc_rule *rule;      /* the rule currently running */
  SC_VEC(sc_diag) diags;    /* everything reported so far */
  const char *buf;          /* the whole input, for spans (may be NULL) */
  size_t len;
  SC_VEC(uint32_t) anchors; /* per diagnostic: the offset it was reported at (its site) */
  SC_VEC(struct sc_cause) causes;
} sc_ctx;

/* A link between two diagnostics of one mistake (see sc_diag_caused_by). */
typedef struct sc_cause {
  uint32_t diag;    /* index in ctx->diags */
  const char *code; /* the other diagnostic's code */
  uint32_t site;    /* its site (the offset it was reported at), or SC_SITE_ANY */
  bool claims;      /* diag is the root and claims the other one (else diag follows from it) */
} sc_cause;
#define SC_SITE_ANY UINT32_MAX

typedef void (*sc_check_fn)(sc_ctx *ctx);

struct sc_rule {
  const char *name;     /* "kernel-outside-manual" */
  const char *family;   /* "syntax", "mesh", "sharding", "manual", "kernel", "callback", "collective" */
  const char *code;     /* "SC0301" */
  sc_severity severity; /* default */
  const char *summary;  /* one line */
  sc_check_fn check;    /* NULL for codes reported by the engine itself (syntax) */
};

extern const sc_rule sc_rule_table[];
extern const size_t sc_rule_table_len;
const sc_rule *sc_rule_by_name(const char *name);
const sc_rule *sc_rule_by_code(const char *code);

/* Reports a diagnostic of ctx->rule at `op` (its location, function, op name, custom call target and
 * source location are filled in). The message is printf-formatted into the arena. Returns the
 * diagnostic so the caller can add context and fixes; the pointer is valid until the next report. */
sc_diag *sc_emit(sc_ctx *ctx, const sc_op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Same at a byte offset (for things that are not ops: attributes, func args, mesh specs). `op` may be
 * NULL; it gives the function/op fields. */
sc_diag *sc_emit_at(sc_ctx *ctx, uint32_t offset, const sc_op *op, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same with an explicit severity instead of the rule's default. */
sc_diag *sc_emit_sev(sc_ctx *ctx, sc_severity sev, uint32_t offset, const sc_op *op, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

void sc_diag_context(sc_ctx *ctx, sc_diag *d, const char *key, const char *value);
void sc_diag_context_list(sc_ctx *ctx, sc_diag *d, const char *key, const char *const *values, size_t n);
/* Adds a fix; with no edits it is "manual". */
sc_fix *sc_diag_fix(sc_ctx *ctx, sc_diag *d, const char *title, const char *snippet);
/* Adds a text edit to a fix and makes it "machine" applicable. */
void sc_fix_edit(sc_ctx *ctx, sc_fix *f, uint32_t offset, uint32_t length, const char *replacement);

/* One mistake, one diagnostic. `d` follows from the diagnostic of `code` reported at `site` (the
 * offset passed to sc_emit*, or the op's offset for sc_emit; SC_SITE_ANY: the first of that code).
 * After every rule ran, sc_diags_fold() folds d into that root as a related site; if there is no such
 * root, d stays. Rules may run in any order. */
void sc_diag_caused_by(sc_ctx *ctx, const sc_diag *d, const char *code, uint32_t site);
/* The converse: every diagnostic of `code` at `site` follows from `root`. */
void sc_diag_claims(sc_ctx *ctx, const sc_diag *root, const char *code, uint32_t site);
/* Folds consequences into their roots: each root gets the folded sites as `related` and the context
 * entry `related` (their count); folded diagnostics get keep[i] = false. Roots with keep[i] false do
 * not take consequences. Linear in the diagnostics and links (a hash on (code, site)). */
void sc_diags_fold(sc_ctx *ctx, bool *keep);

/* The byte span [begin, end) of what is wrong (an axis name inside a sharding, an attribute, a mesh
 * declaration): the diagnostic's location moves to its start and its end position is filled. Every
 * diagnostic starts with the span of the token at its offset (the op name for sc_emit). */
void sc_diag_span(sc_ctx *ctx, sc_diag *d, uint32_t begin, uint32_t end);
/* Same for a span of the module text; returns false (and changes nothing) if `text` is not in it. */
bool sc_diag_span_text(sc_ctx *ctx, sc_diag *d, sc_span text);
/* Same for a name written quoted ("x", @"x") or bare: the quotes are part of the span. */
bool sc_diag_span_name(sc_ctx *ctx, sc_diag *d, sc_span name);
/* The byte offset of `text` in the input, or UINT32_MAX if it does not point into it. */
uint32_t sc_ctx_offset_of(const sc_ctx *ctx, sc_span text);

/* Runs the enabled rules over ctx->module. `selection` is the parsed --rules list. */
typedef struct {
  bool *enabled; /* per sc_rule_table row */
} sc_rule_selection;
/* Parses globs ("sharding-*,-sharding-priority", codes allowed too); NULL/"" = all. Returns 0 or -1
 * with a message in *error. */
int sc_rule_select(sc_arena *a, const char *globs, sc_rule_selection *out, const char **error);
void sc_rules_run(sc_ctx *ctx, const sc_rule_selection *sel);

#endif
