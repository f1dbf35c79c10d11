/* rules.h — the rule registry and what a rule sees.
 *
 * A rule is one row of ru_rule_table (a line of lib/rules/<family>.def): name, family, code, default
 * severity, summary, the op kinds it visits and its functions. The engine walks the module ONCE, in
 * preorder, and calls each enabled rule's `visit` on the ops of the kinds it subscribed to (clang-tidy
 * matchers, ESLint visitors); after the walk it calls each rule's `finish` for whole-module facts
 * (meshes, the export record, checks not worth converting). A rule has a visit, a finish or both.
 * Adding a rule: a table row (with its op kinds), an entry in the catalog (lib/rules/catalog/) and tests
 * with a failing and a passing module. Codes are append-only: never renumber or reuse one.
 *
 * Code ranges: SC00xx syntax/input, SC01xx mesh, SC02xx sharding, SC03xx kernel, SC04xx callback,
 * SC05xx manual, SC06xx collective, SC07xx export (what a jax.export container records), SC08xx memory
 * (per-device bytes, lib/cost).
 *
 * Rule functions run on the request's worker thread and allocate only from ctx->arena. A rule may run
 * interleaved with other rules' visits; the engine still reports each rule's diagnostics in table
 * order, as if the rules had run one after another. */
#ifndef SC_RULES_H
#define SC_RULES_H

#include <stdarg.h>

#include "cost/cost.h"
#include "ir/ir.h"
#include "model/model.h"
#include "propagate/engine.h"
#include "shardcheck.h"


typedef struct ru_ctx {
  sc_arena *arena;
  const sc_options *options;
  ir_module *module;
  const ir_linemap *lines;
  md_model *model;          /* built before any rule runs; NULL for rule-less runs */
  const sc_rule *rule;      /* the rule currently running */
  SC_VEC(sc_diag) diags;    /* everything reported so far */
  const char *buf;          /* the whole input, for spans (may be NULL) */
  size_t len;
  SC_VEC(uint32_t) anchors; /* per diagnostic: the offset it was reported at (its site) */
  SC_VEC(struct ru_cause) causes;
  void **rule_state;        /* per ru_rule_table row, NULL-initialized by ru_rules_run; see ru_rule_state */
  struct ru_use_index *uses; /* who uses what in `module`, built on first need (rule_util.h, ru_uses) */
  const prop_engine *propagation; /* the shardings propagation derives (sc_options.propagate), or NULL */
  const cost_analysis *cost;       /* the module's per-device cost (lib/cost), or NULL (the memory rules then say nothing) */
  void *rule_cache;          /* the sharding rules' verdicts on this module (rule_util.c): made on first
                                need, dropped by ru_rules_run when the module's rules are done */
} ru_ctx;

/* Adds a related site to `d`: `op` (or, with op NULL, only the offset) and what is there. */
void ru_diag_related(ru_ctx *ctx, sc_diag *d, uint32_t offset, const ir_op *op, const char *message);

/* A link between two diagnostics of one mistake (see ru_diag_caused_by). */
typedef struct ru_cause {
  uint32_t diag;    /* index in ctx->diags */
  const char *code; /* the other diagnostic's code */
  uint32_t site;    /* its site (the offset it was reported at), or SC_SITE_ANY */
  bool claims;      /* diag is the root and claims the other one (else diag follows from it) */
} ru_cause;
#define SC_SITE_ANY UINT32_MAX

typedef void (*ru_visit_fn)(ru_ctx *ctx, const ir_op *op);
typedef void (*ru_finish_fn)(ru_ctx *ctx);

/* Op kind subscriptions: SC_KIND(SC_OP_CUSTOM_CALL) | SC_KIND(SC_OP_SEND), SC_KINDS_ALL; custom call
 * classes likewise (SC_CC(SC_CC_TRITON)), 0 = every class. */
#define SC_KIND(k) (UINT64_C(1) << (k))
#define SC_KINDS_ALL ((UINT64_C(1) << SC_OP_KIND_COUNT) - 1)
#define SC_KINDS_SDY_COLLECTIVE \
  (SC_KIND(SC_OP_SDY_ALL_GATHER) | SC_KIND(SC_OP_SDY_ALL_SLICE) | SC_KIND(SC_OP_SDY_ALL_TO_ALL) |            \
   SC_KIND(SC_OP_SDY_COLLECTIVE_PERMUTE) | SC_KIND(SC_OP_SDY_ALL_REDUCE) | SC_KIND(SC_OP_SDY_REDUCE_SCATTER) | \
   SC_KIND(SC_OP_SDY_SHARDED_TO_UNREDUCED) | SC_KIND(SC_OP_SDY_REPLICATED_TO_UNREDUCED))
#define SC_CC(c) (UINT32_C(1) << (c))
/* A rule's scope: it visits only ops nested (at any depth) in an op of this kind; SC_ANYWHERE: all. */
#define SC_ANYWHERE SC_OP_OTHER
#define SC_CC_CLASS_COUNT (SC_CC_OTHER + 1)

struct sc_rule {
  const char *name;     /* "kernel-outside-manual" */
  const char *family;   /* "syntax", "mesh", "sharding", "manual", "kernel", "callback", "collective" */
  const char *code;     /* "SC0301" */
  sc_severity severity; /* default */
  const char *summary;  /* one line */
  uint64_t kinds;       /* the ir_op_kind values `visit` sees (SC_KIND bits) */
  uint32_t ccs;         /* of SC_OP_CUSTOM_CALL ops, the ir_cc_class values `visit` sees (SC_CC bits); 0 = all */
  uint8_t within;       /* ir_op_kind: only ops nested in one of this kind (not the op itself); SC_ANYWHERE */
  ru_visit_fn visit;    /* per op, in module preorder; NULL: none */
  ru_finish_fn finish;  /* once, after the walk; NULL: none. Both NULL: reported by the engine (syntax) */
};

extern const sc_rule ru_rule_table[];
extern const size_t ru_rule_table_len;
const sc_rule *ru_rule_by_name(const char *name);
const sc_rule *ru_rule_by_code(const char *code);

/* Reports a diagnostic of ctx->rule at `op` (its location, function, op name, custom call target and
 * source location are filled in). The message is printf-formatted into the arena. Returns the
 * diagnostic so the caller can add context and fixes; the pointer is valid until the next report. */
sc_diag *ru_emit(ru_ctx *ctx, const ir_op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Same at a byte offset (for things that are not ops: attributes, func args, mesh specs). `op` may be
 * NULL; it gives the function/op fields. */
sc_diag *ru_emit_at(ru_ctx *ctx, uint32_t offset, const ir_op *op, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same with an explicit severity instead of the rule's default. */
sc_diag *ru_emit_sev(ru_ctx *ctx, sc_severity sev, uint32_t offset, const ir_op *op, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

void ru_diag_context(ru_ctx *ctx, sc_diag *d, const char *key, const char *value);
void ru_diag_context_list(ru_ctx *ctx, sc_diag *d, const char *key, const char *const *values, size_t n);
/* Adds a fix; with no edits it is "manual". */
sc_fix *ru_diag_fix(ru_ctx *ctx, sc_diag *d, const char *title, const char *snippet);
/* Adds a text edit to a fix and makes it "machine" applicable. */
void ru_fix_edit(ru_ctx *ctx, sc_fix *f, uint32_t offset, uint32_t length, const char *replacement);

/* One mistake, one diagnostic. `d` follows from the diagnostic of `code` reported at `site` (the
 * offset passed to ru_emit*, or the op's offset for ru_emit; SC_SITE_ANY: the first of that code).
 * After every rule ran, ru_diags_fold() folds d into that root as a related site; if there is no such
 * root, d stays. Rules may run in any order. */
void ru_diag_caused_by(ru_ctx *ctx, const sc_diag *d, const char *code, uint32_t site);
/* The converse: every diagnostic of `code` at `site` follows from `root`. */
void ru_diag_claims(ru_ctx *ctx, const sc_diag *root, const char *code, uint32_t site);
/* Folds consequences into their roots: each root gets the folded sites as `related` and the context
 * entry `related` (their count); folded diagnostics get keep[i] = false. Roots with keep[i] false do
 * not take consequences. Linear in the diagnostics and links (a hash on (code, site)). */
void ru_diags_fold(ru_ctx *ctx, bool *keep);

/* The byte span [begin, end) of what is wrong (an axis name inside a sharding, an attribute, a mesh
 * declaration): the diagnostic's location moves to its start and its end position is filled. Every
 * diagnostic starts with the span of the token at its offset (the op name for ru_emit). */
void ru_diag_span(ru_ctx *ctx, sc_diag *d, uint32_t begin, uint32_t end);
/* Same for a span of the module text; returns false (and changes nothing) if `text` is not in it. */
bool ru_diag_span_text(ru_ctx *ctx, sc_diag *d, ir_span text);
/* Same for a name written quoted ("x", @"x") or bare: the quotes are part of the span. */
bool ru_diag_span_name(ru_ctx *ctx, sc_diag *d, ir_span name);
/* The byte offset of `text` in the input, or UINT32_MAX if it does not point into it. */
uint32_t ru_ctx_offset_of(const ru_ctx *ctx, ir_span text);

/* Runs the enabled rules over ctx->module. `selection` is the parsed --rules list. */
typedef struct {
  bool *enabled; /* per ru_rule_table row */
} ru_rule_selection;
/* Parses globs ("sharding-*,-sharding-priority", codes allowed too); NULL/"" = all. Returns 0 or -1
 * with a message in *error. */
int ru_rule_select(sc_arena *a, const char *globs, ru_rule_selection *out, const char **error);
/* Walks ctx->module once, dispatching each op to the enabled rules subscribed to its kind, then runs
 * the finish steps in table order. Polls the cancel flag and the work meter every few ops. */
void ru_rules_run(ru_ctx *ctx, const ru_rule_selection *sel);
/* The running rule's state slot for this run (holding NULL at first): a rule that carries facts from
 * one visit to the next (the first site of a mistake, a module-wide precondition) keeps them here.
 * NULL outside ru_rules_run. */
void **ru_rule_state(ru_ctx *ctx);
/* Reported by the engine itself (no visit, no finish): kept whatever the selection. */
static inline bool ru_rule_is_engine(const sc_rule *r) { return !r->visit && !r->finish; }

#endif
