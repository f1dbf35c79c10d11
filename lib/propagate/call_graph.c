/* call_graph.c — call-graph flattening before the pipeline, unflattening after it (see call_graph.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "propagate/call_graph.h"
#include "util/hashset.h"

#define MAX_CALL_DEPTH 64

/* One call site's copy of a function: its export name and the copies its own calls go to. */
typedef struct {
  uint32_t func;      /* index in m->funcs */
  const char *name;   /* as the export names it */
  uint32_t *children; /* per call of the function, in program order: the copy it calls */
  uint32_t nchildren;
} copy_node;

typedef struct {
  sc_arena *a;
  const ir_module *m;
  hs_name_map funcs;   /* function name -> index in m->funcs */
  hs_name_map symbols; /* the symbol table at export: every name taken */
  uint32_t counter;    /* MLIR's uniquing counter, one for the module */
  SC_VEC(copy_node) nodes;
  uint32_t *copies_of; /* per function: how many copies */
  uint8_t *on_path;    /* per function: being expanded (a recursion) */
  uint32_t limit;
  uint64_t bytes, byte_limit; /* text the copies repeat, and its bound (linear in the chunk) */
  bool failed;
} flattener;

static bool plain_symbol_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

static bool plain_symbol(ir_span s, const ir_module *m) {
  if (!s.n || s.p <= m->buf || s.p + s.n > m->buf + m->len || s.p[-1] != '@') return false;
  for (size_t i = 0; i < s.n; i++)
    if (!plain_symbol_char(s.p[i])) return false;
  return true;
}

static bool is_private(const ir_op *fn) { return ir_span_eq(ir_op_visibility(fn), "private"); }

static bool has_body(const ir_op *fn) { return fn->nregions && ir_op_regions(fn)[0]->nblocks; }

/* The function a call op calls (an index in m->funcs), or UINT32_MAX. */
static uint32_t callee_of(const flattener *fl, const ir_op *op) {
  uint32_t f;
  ir_span c = ir_op_callee(op);
  if (op->kind != SC_OP_CALL || !c.n || !hs_name_map_get(&fl->funcs, c.p, (uint32_t)c.n, &f)) return UINT32_MAX;
  return has_body(fl->m->funcs[f]) ? f : UINT32_MAX;
}

/* `name`, or `name_N` with the module's counter, whichever the symbol table does not hold yet; taken.
 * (The table starts with room for the module's own symbols and doubles as copies add names: a failed
 * insertion only marks the flattening failed, it never loops.) */
static const char *unique_symbol(flattener *fl, ir_span name) {
  const char *s = ar_printf(fl->a, "%.*s", SC_SPAN_ARG(name));
  uint32_t v;
  while (hs_name_map_get(&fl->symbols, s, (uint32_t)strlen(s), &v)) {
    ar_step(fl->a, 1);
    s = ar_printf(fl->a, "%.*s_%u", SC_SPAN_ARG(name), fl->counter++);
  }
  hs_name_map_make_room(&fl->symbols, fl->a);
  if (!hs_name_map_put(&fl->symbols, s, (uint32_t)strlen(s), 0, NULL)) fl->failed = true;
  return s;
}

static uint32_t expand(flattener *fl, uint32_t f, uint32_t depth);

/* The copies the calls in function `f`'s body go to, in program order (expanded first: post-order). */
static uint32_t *expand_calls(flattener *fl, uint32_t f, uint32_t depth, uint32_t *n) {
  const ir_op *fn = fl->m->funcs[f];
  SC_VEC(uint32_t) children = {0};
  for (uint32_t i = fn->id + 1; i < fn->subtree_end && !fl->failed; i++) {
    ar_step(fl->a, 1);
    uint32_t callee = callee_of(fl, fl->m->ops[i]);
    if (callee != UINT32_MAX) SC_PUSH(fl->a, children, expand(fl, callee, depth + 1));
  }
  *n = (uint32_t)children.n;
  return children.v;
}

/* A call site's copy of function `f`, after the copies of the calls inside it. */
static uint32_t expand(flattener *fl, uint32_t f, uint32_t depth) {
  const ir_op *fn = fl->m->funcs[f];
  fl->bytes += fn->end - fn->pos.offset;
  if (depth > MAX_CALL_DEPTH || fl->on_path[f] || fl->nodes.n >= fl->limit || fl->bytes > fl->byte_limit) {
    fl->failed = true;
    return 0;
  }
  fl->on_path[f] = 1;
  copy_node node = {f, NULL, NULL, 0};
  node.children = expand_calls(fl, f, depth, &node.nchildren);
  fl->on_path[f] = 0;
  if (fl->failed) return 0;
  node.name = unique_symbol(fl, ir_op_sym_name(fn));
  fl->copies_of[f]++;
  SC_PUSH(fl->a, fl->nodes, node);
  return (uint32_t)fl->nodes.n - 1;
}

typedef struct {
  uint32_t begin, end;
  const char *text;
} edit;

static int edit_order(const void *x, const void *y) {
  const edit *a = x, *b = y;
  return (a->begin > b->begin) - (a->begin < b->begin);
}

/* buf[begin, end) with `edits` (sorted here, disjoint) applied, appended to `out`. */
static void put_edited(ar_str *out, const char *buf, uint32_t begin, uint32_t end, edit *edits, size_t n) {
  qsort(edits, n, sizeof *edits, edit_order);
  uint32_t at = begin;
  for (size_t i = 0; i < n; i++) {
    ar_str_put(out, buf + at, edits[i].begin - at);
    ar_str_puts(out, edits[i].text);
    at = edits[i].end;
  }
  ar_str_put(out, buf + at, end - at);
}

static edit span_edit(const ir_module *m, ir_span s, const char *text) {
  edit e = {(uint32_t)(s.p - m->buf), (uint32_t)(s.p - m->buf + s.n), text};
  return e;
}

/* Every symbol the calls and functions involved name is plain (`@name`, no quotes), and no function is
 * named anywhere but by its definition and by calls (a custom call's `called_computations` would be
 * left naming a function the copies replace). */
static bool plain_symbols(const flattener *fl, uint32_t begin, uint32_t end) {
  const ir_module *m = fl->m;
  hs_name_map known; /* offsets of the function names and callees (4 bytes each) */
  hs_name_map_init(&known, fl->a, 2 * (size_t)m->nops + 1);
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    ir_span s = op->kind == SC_OP_FUNC ? ir_op_sym_name(op) : op->kind == SC_OP_CALL ? ir_op_callee(op) : (ir_span){0};
    if (op->kind != SC_OP_FUNC && op->kind != SC_OP_CALL) continue;
    if (!plain_symbol(s, m)) return false;
    uint32_t *at = ar_alloc(fl->a, sizeof *at);
    *at = (uint32_t)(s.p - m->buf);
    hs_name_map_put(&known, (const char *)at, sizeof *at, 0, NULL);
  }
  for (const char *p = m->buf + begin, *stop = m->buf + end; p < stop; p++) {
    if (*p == '/' && p + 1 < stop && p[1] == '/') { /* a comment (FileCheck lines name functions too) */
      const char *nl = memchr(p, '\n', (size_t)(stop - p));
      p = nl ? nl : stop - 1;
      continue;
    }
    if (*p == '"') {
      p = ir_skip_string(p, stop) - 1;
      continue;
    }
    if (*p != '@') continue;
    ar_step(fl->a, 1);
    uint32_t at = (uint32_t)(p + 1 - m->buf), f, v;
    size_t n = 0;
    while (p + 1 + n < stop && plain_symbol_char(p[1 + n])) n++;
    if (n && hs_name_map_get(&fl->funcs, p + 1, (uint32_t)n, &f) && !hs_name_map_get(&known, (const char *)&at, sizeof at, &v))
      return false;
  }
  return true;
}

/* Where the copies go: before the closing brace of an explicit module, else at the end. */
static uint32_t copies_at(const ir_module *m, uint32_t begin, uint32_t end) {
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    if (op->kind != SC_OP_MODULE || op->pos.offset < begin || op->end > end || op->end - op->pos.offset < 7) continue;
    const char *text = m->buf + op->pos.offset;
    if (memcmp(text, "module", 6) && memcmp(text, "builtin.module", 14 > op->end - op->pos.offset ? 6 : 14)) continue;
    for (uint32_t at = op->end; at > op->pos.offset; at--)
      if (m->buf[at - 1] == '}') return at - 1;
  }
  return end;
}

static void put_copy(const flattener *fl, const copy_node *node, ar_str *out) {
  const ir_module *m = fl->m;
  const ir_op *fn = m->funcs[node->func];
  SC_VEC(edit) edits = {0};
  SC_PUSH(fl->a, edits, span_edit(m, ir_op_sym_name(fn), node->name));
  uint32_t k = 0;
  for (uint32_t i = fn->id + 1; i < fn->subtree_end && k < node->nchildren; i++)
    if (callee_of(fl, m->ops[i]) != UINT32_MAX)
      SC_PUSH(fl->a, edits, span_edit(m, ir_op_callee(m->ops[i]), fl->nodes.v[node->children[k++]].name));
  ar_str_puts(out, "\n");
  put_edited(out, m->buf, fn->pos.offset, fn->end, edits.v, edits.n);
  ar_str_puts(out, "\n");
}

bool prop_flatten_call_graph(sc_arena *a, const ir_module *m, uint32_t begin, uint32_t end, ar_str *out,
                             prop_func_copies *copies) {
  memset(copies, 0, sizeof *copies);
  if (!m->nfuncs) return false;
  flattener fl;
  memset(&fl, 0, sizeof fl);
  fl.a = a, fl.m = m;
  fl.limit = m->nops * 4 > 4096 ? m->nops * 4 : 4096;
  fl.byte_limit = 4 * (uint64_t)(end - begin) + (1u << 20);
  hs_name_map_init(&fl.funcs, a, m->nfuncs + 1);
  /* the module's symbols (copies add theirs as they are made: a chunk without copies stays small) */
  hs_name_map_init(&fl.symbols, a, (size_t)m->nops + 1);
  fl.copies_of = ar_calloc(a, m->nfuncs + 1, sizeof *fl.copies_of);
  fl.on_path = ar_calloc(a, m->nfuncs + 1, 1);
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    ir_span name = ir_op_sym_name(m->funcs[f]);
    hs_name_map_put(&fl.funcs, name.p, (uint32_t)name.n, f, NULL);
  }
  if (!plain_symbols(&fl, begin, end)) return false;
  for (uint32_t i = 0; i < m->nops; i++) { /* what the symbol table holds once the callees are inlined */
    const ir_op *op = m->ops[i];
    ir_span name = ir_op_sym_name(op);
    if (name.n && !(op->kind == SC_OP_FUNC && is_private(op))) hs_name_map_put(&fl.symbols, name.p, (uint32_t)name.n, 0, NULL);
  }
  /* the calls of every function that stays (main and the other public ones), in module order */
  uint32_t **root_children = ar_calloc(a, m->nfuncs + 1, sizeof *root_children);
  uint32_t *nroot_children = ar_calloc(a, m->nfuncs + 1, sizeof *nroot_children);
  for (uint32_t f = 0; f < m->nfuncs && !fl.failed; f++)
    if (!is_private(m->funcs[f]) && has_body(m->funcs[f])) {
      fl.on_path[f] = 1;
      root_children[f] = expand_calls(&fl, f, 0, &nroot_children[f]);
      fl.on_path[f] = 0;
    }
  bool shared = false;
  for (uint32_t f = 0; f < m->nfuncs; f++) shared |= fl.copies_of[f] > 1;
  if (fl.failed || !shared) return false;
  /* the roots' calls go to their copies, the functions copied are renamed out of the way (nothing calls
   * them any more: the unflattening drops them), the copies follow */
  SC_VEC(edit) edits = {0};
  SC_VEC(ir_span) copied = {0};
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    const ir_op *fn = m->funcs[f];
    if (root_children[f]) {
      uint32_t k = 0;
      for (uint32_t i = fn->id + 1; i < fn->subtree_end && k < nroot_children[f]; i++)
        if (callee_of(&fl, m->ops[i]) != UINT32_MAX)
          SC_PUSH(a, edits, span_edit(m, ir_op_callee(m->ops[i]), fl.nodes.v[root_children[f][k++]].name));
    } else if (fl.copies_of[f]) {
      ir_span name = ir_op_sym_name(fn);
      const char *renamed = unique_symbol(&fl, ir_span_of(ar_printf(a, "%.*s_copied", SC_SPAN_ARG(name)), name.n + 7));
      SC_PUSH(a, edits, span_edit(m, name, renamed));
      SC_PUSH(a, copied, ir_span_of(renamed, strlen(renamed)));
    }
  }
  if (fl.failed) return false;
  uint32_t at = copies_at(m, begin, end);
  ar_str tail = SC_ASTR_INIT(a);
  for (size_t k = 0; k < fl.nodes.n; k++) put_copy(&fl, &fl.nodes.v[k], &tail);
  edit insert = {at, at, ar_str_str(&tail)};
  SC_PUSH(a, edits, insert);
  put_edited(out, m->buf, begin, end, edits.v, edits.n);
  copies->n = (uint32_t)fl.nodes.n;
  copies->names = ar_alloc(a, (copies->n + 1) * sizeof *copies->names);
  copies->originals = ar_alloc(a, (copies->n + 1) * sizeof *copies->originals);
  for (uint32_t k = 0; k < copies->n; k++) {
    copies->names[k] = ir_span_of(fl.nodes.v[k].name, strlen(fl.nodes.v[k].name));
    ir_span original = ir_op_sym_name(m->funcs[fl.nodes.v[k].func]);
    copies->originals[k] = ir_span_of(ar_strndup(a, original.n ? original.p : "", original.n), original.n);
  }
  copies->copied = copied.v;
  copies->ncopied = (uint32_t)copied.n;
  return true;
}

/* ---- after propagation ----------------------------------------------------------------------------- */

static void put_sharding_text(ar_str *key, const ir_attrs *attrs) {
  const ir_attr *s = attrs ? ir_attrs_find(attrs, "sdy.sharding") : NULL;
  if (s) ar_str_put(key, s->value.p, s->value.n);
  ar_str_puts(key, "\x1f");
}

/* What the unflattening compares: the function copied, its arguments' and its results' shardings. */
static const char *func_key(sc_arena *a, const ir_op *fn, ir_span original) {
  ar_str key = SC_ASTR_INIT(a);
  ar_str_put(&key, original.p, original.n);
  ar_str_puts(&key, "\x1e");
  const ir_block *entry = ir_op_regions(fn)[0]->blocks[0];
  for (uint32_t k = 0; k < entry->nargs; k++) put_sharding_text(&key, ir_value_attrs(entry->args[k]));
  ar_str_puts(&key, "\x1e");
  const ir_attrs *results = ir_op_result_attrs(fn);
  for (uint32_t k = 0; k < ir_op_nresult_attrs(fn); k++) put_sharding_text(&key, results ? &results[k] : NULL);
  return ar_str_str(&key);
}

const uint8_t *prop_unflatten_call_graph(sc_arena *a, const ir_module *m, const prop_func_copies *copies, prop_printer *pr) {
  flattener fl;
  memset(&fl, 0, sizeof fl);
  fl.a = a, fl.m = m;
  hs_name_map_init(&fl.funcs, a, m->nfuncs + 1);
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    ir_span name = ir_op_sym_name(m->funcs[f]);
    hs_name_map_put(&fl.funcs, name.p, (uint32_t)name.n, f, NULL);
  }
  hs_name_map copy_index, first_by_key;
  hs_name_map_init(&copy_index, a, copies->n + 1);
  hs_name_map_init(&first_by_key, a, copies->n + 1);
  for (uint32_t k = 0; k < copies->n; k++) hs_name_map_put(&copy_index, copies->names[k].p, (uint32_t)copies->names[k].n, k, NULL);
  /* each call's target after the unflattening: the first copy called with the same key */
  uint32_t *target = ar_alloc(a, (m->nops + 1) * sizeof *target);
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    uint32_t f = target[i] = callee_of(&fl, op), k;
    if (f == UINT32_MAX) continue;
    ir_span name = ir_op_sym_name(m->funcs[f]);
    if (!hs_name_map_get(&copy_index, name.p, (uint32_t)name.n, &k)) continue;
    const char *key = func_key(a, m->funcs[f], copies->originals[k]);
    uint32_t first;
    if (!hs_name_map_put(&first_by_key, key, (uint32_t)strlen(key), f, &first) && first != f) {
      target[i] = first;
      ir_span to = ir_op_sym_name(m->funcs[first]);
      prop_printer_replace(pr, (uint32_t)(ir_op_callee(op).p - m->buf), (uint32_t)(ir_op_callee(op).p - m->buf + ir_op_callee(op).n),
                           ar_printf(a, "%.*s", SC_SPAN_ARG(to)));
    }
  }
  /* the functions calls reach from the others stay (Shardy's symbol DCE), among the copies and the
   * functions they copy */
  hs_name_map droppable;
  hs_name_map_init(&droppable, a, copies->n + copies->ncopied + 1);
  for (uint32_t k = 0; k < copies->n; k++) hs_name_map_put(&droppable, copies->names[k].p, (uint32_t)copies->names[k].n, 0, NULL);
  for (uint32_t k = 0; k < copies->ncopied; k++)
    hs_name_map_put(&droppable, copies->copied[k].p, (uint32_t)copies->copied[k].n, 0, NULL);
  uint8_t *live = ar_calloc(a, m->nfuncs + 1, 1);
  uint32_t *stack = ar_alloc(a, (m->nfuncs + 1) * sizeof *stack), nstack = 0;
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    ir_span name = ir_op_sym_name(m->funcs[f]);
    uint32_t v;
    if (!hs_name_map_get(&droppable, name.p, (uint32_t)name.n, &v)) live[f] = 1, stack[nstack++] = f;
  }
  while (nstack) {
    const ir_op *fn = m->funcs[stack[--nstack]];
    for (uint32_t i = fn->id + 1; i < fn->subtree_end; i++) {
      ar_step(a, 1);
      uint32_t t = target[i];
      if (t != UINT32_MAX && !live[t]) live[t] = 1, stack[nstack++] = t;
    }
  }
  uint8_t *erased = ar_calloc(a, m->nops + 1, 1);
  for (uint32_t f = 0; f < m->nfuncs; f++)
    if (!live[f]) {
      prop_printer_erase(pr, m->funcs[f]);
      memset(erased + m->funcs[f]->id, 1, m->funcs[f]->subtree_end - m->funcs[f]->id);
    }
  return erased;
}
