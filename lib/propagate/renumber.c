/* renumber.c — values numbered again as MLIR's printer numbers them (see print.h).
 *
 * MLIR numbers a region's op results first (`%0`, `%1`, ... in order), then the regions nested in its
 * ops, each starting where its parent region stopped (sibling regions start alike), and a name hint
 * (`%cst`, `%c`) gets a `_N` suffix when a name visible from its region already has it. The printed
 * text has one op per line (regions' bodies on their own lines), so regions are found by lines: a line
 * that starts with `}` closes one, a line that ends with `{` opens one. Names are resolved in the
 * region of the line and then its enclosing ones, so an inner `%0` and an outer `%0` stay apart.
 * Two passes over the text, each linear in its length times the nesting depth. */
#include <string.h>

#include "propagate/print.h"
#include "util/hashset.h"

#define NO_REGION UINT32_MAX

typedef struct {
  uint32_t parent;
  uint32_t first_def, last_def;        /* definitions of the region, in text order (linked by def.next) */
  uint32_t first_child, last_child, next_sibling;
} region;

typedef struct {
  const char *name;  /* old name without '%' */
  uint32_t len;
  const char *hint;  /* a constant's name hint, or NULL */
  uint32_t next;     /* the region's next definition */
} definition;

typedef struct {
  sc_arena *a;
  SC_VEC(region) regions;
  SC_VEC(definition) defs;
  SC_VEC(uint32_t) stack; /* open regions, innermost last */
  hs_name_map names;      /* "region/old name" -> index in new_names */
  hs_name_map taken;      /* "region/new hint name": the hint names given (apart from the old names, which
                             they may equal) */
  SC_VEC(const char *) new_names;
  ar_str scratch;         /* a lookup's key, reused */
} renumbering;

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$' ||
         c == '-';
}

static size_t name_len(const char *p, const char *end) {
  const char *q = p;
  while (q < end && is_name_char(*q)) q++;
  return (size_t)(q - p);
}

/* Result names MLIR's printer gives again: all of them (it keeps no name from the text). */
static bool renumbered_name(const char *p, size_t n) {
  (void)p;
  return n > 0;
}

static bool starts_with(const char *p, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - p) > n && !memcmp(p, word, n) && !is_name_char(p[n]);
}

/* The name hint MLIR prints result `index` of the op at `op` with: a stablehlo.constant's is `c` for
 * integers, `cst` otherwise; rng_bit_generator's are its ODS result names. NULL: a number. */
static const char *result_hint(const char *op, const char *end, uint32_t index) {
  if (starts_with(op, end, "stablehlo.rng_bit_generator")) return index == 0 ? "output_state" : index == 1 ? "output" : NULL;
  if (!starts_with(op, end, "stablehlo.constant")) return NULL;
  const char *colon = NULL;
  for (const char *q = op; q < end; q++)
    if (*q == ':') colon = q;
  if (!colon) return "cst";
  const char *lt = memchr(colon, '<', (size_t)(end - colon));
  const char *elem = lt ? lt + 1 : colon + 1;
  while (elem < end && *elem == ' ') elem++;
  if (lt && elem < end) { /* tensor<2x3xi32>: the element type follows the last 'x' of the shape */
    const char *gt = memchr(elem, '>', (size_t)(end - elem));
    const char *q = gt ? gt : end;
    while (q > elem && q[-1] != 'x') q--;
    elem = q > elem ? q : elem;
  }
  return elem < end && (*elem == 'i' || *elem == 'u') ? "c" : "cst";
}

static uint32_t current(const renumbering *r) { return r->stack.v[r->stack.n - 1]; }

static void open_region(renumbering *r) {
  uint32_t parent = current(r), id = (uint32_t)r->regions.n;
  region g = {parent, NO_REGION, NO_REGION, NO_REGION, NO_REGION, NO_REGION};
  SC_PUSH(r->a, r->regions, g);
  region *p = &r->regions.v[parent];
  if (p->last_child == NO_REGION) p->first_child = id;
  else r->regions.v[p->last_child].next_sibling = id;
  p->last_child = id;
  SC_PUSH(r->a, r->stack, id);
}

/* A line's region changes: a leading `}` closes the open region, a trailing `{` opens one. */
static bool line_closes(const char *p, const char *end) { return p < end && *p == '}'; }
static bool line_opens(const char *p, const char *end) {
  while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
  return end > p && end[-1] == '{';
}

static void add_definition(renumbering *r, const char *name, size_t len, const char *hint) {
  uint32_t g = current(r), id = (uint32_t)r->defs.n;
  definition d = {name, (uint32_t)len, hint, NO_REGION};
  SC_PUSH(r->a, r->defs, d);
  region *rg = &r->regions.v[g];
  if (rg->last_def == NO_REGION) rg->first_def = id;
  else r->defs.v[rg->last_def].next = id;
  rg->last_def = id;
}

/* A pretty stablehlo.while's region arguments, declared in its header `(%a = %x, %b = %y)`: MLIR names
 * them iterArg, iterArg_0, ... (StableHLO's getAsmBlockArgumentNames). */
static void collect_while_args(renumbering *r, const char *op, const char *end) {
  static const char head[] = "stablehlo.while(";
  if ((size_t)(end - op) < sizeof head - 1 || memcmp(op, head, sizeof head - 1)) return;
  int depth = 0;
  for (const char *q = op + sizeof head - 1; q < end && depth >= 0; q++) {
    if (*q == '(' || *q == '<' || *q == '[' || *q == '{') depth++;
    else if (*q == ')' || *q == '>' || *q == ']' || *q == '}') depth--;
    else if (*q == '%' && depth == 0) {
      size_t n = name_len(q + 1, end);
      const char *s = q + 1 + n;
      while (s < end && *s == ' ') s++;
      if (n && s + 1 < end && s[0] == '=' && s[1] != '=') add_definition(r, q + 1, n, "iterArg");
      q += n;
    }
  }
}

/* The definitions of a line's result list (`%0 = `, `%a, %b:2 = `). */
static void collect_line_results(renumbering *r, const char *p, const char *end) {
  const char *eq = p;
  while (eq < end && *eq != '=') eq++;
  const char *op = eq + 1;
  while (op < end && *op == ' ') op++;
  const char *q = p;
  for (uint32_t index = 0; q < end && *q == '%'; index++) {
    size_t n = name_len(q + 1, end);
    const char *s = q + 1 + n;
    bool group = s < end && *s == ':'; /* `%0:2` names several results: numbered */
    if (group)
      while (++s < end && *s >= '0' && *s <= '9') {
      }
    while (s < end && *s == ' ') s++;
    if (s >= end || (*s != ',' && *s != '=')) return;
    if (renumbered_name(q + 1, n)) add_definition(r, q + 1, n, group ? NULL : result_hint(op, end, index));
    if (*s == '=') {
      collect_while_args(r, op, end);
      return;
    }
    s++;
    while (s < end && *s == ' ') s++;
    q = s;
  }
}

static const char *key_of(sc_arena *a, uint32_t g, const char *p, size_t n) {
  return ar_printf(a, "%u/%.*s", g, (int)n, p);
}

/* `p` in `map`, keyed in region `g` or the nearest region around it that has it. */
static bool lookup_in(renumbering *r, const hs_name_map *map, uint32_t g, const char *p, size_t n, uint32_t *index) {
  for (uint32_t guard = 0; g != NO_REGION && guard <= r->regions.n; g = r->regions.v[g].parent, guard++) {
    ar_step(r->a, 1);
    r->scratch.n = 0;
    ar_str_printf(&r->scratch, "%u/%.*s", g, (int)n, p);
    if (hs_name_map_get(map, r->scratch.p, (uint32_t)r->scratch.n, index)) return true;
  }
  return false;
}

static bool lookup(renumbering *r, uint32_t g, const char *p, size_t n, uint32_t *index) {
  return lookup_in(r, &r->names, g, p, n, index);
}

/* `hint`, or `hint_N` with MLIR's conflict counter, not taken in `g` or the regions around it. */
static const char *unique_hint(renumbering *r, uint32_t g, const char *hint, uint32_t *conflict) {
  const char *name = hint;
  uint32_t dummy;
  while (lookup_in(r, &r->taken, g, name, strlen(name), &dummy)) name = ar_printf(r->a, "%s_%u", hint, (*conflict)++);
  const char *key = key_of(r->a, g, name, strlen(name));
  hs_name_map_put(&r->taken, key, (uint32_t)strlen(key), 0, NULL);
  return name;
}

typedef struct {
  uint32_t region, next, conflict;
} pending;

/* Each region's results from its start number, then its nested regions from where it stopped. */
static void number_regions(renumbering *r) {
  SC_VEC(pending) todo = {0};
  pending root = {0, 0, 0};
  SC_PUSH(r->a, todo, root);
  while (todo.n) {
    pending w = todo.v[--todo.n];
    region *g = &r->regions.v[w.region];
    for (uint32_t d = g->first_def; d != NO_REGION; d = r->defs.v[d].next) {
      ar_step(r->a, 1);
      const definition *def = &r->defs.v[d];
      const char *name = def->hint ? unique_hint(r, w.region, def->hint, &w.conflict) : ar_printf(r->a, "%u", w.next++);
      const char *key = key_of(r->a, w.region, def->name, def->len);
      SC_PUSH(r->a, r->new_names, name);
      hs_name_map_put(&r->names, key, (uint32_t)strlen(key), (uint32_t)r->new_names.n - 1, NULL);
    }
    for (uint32_t c = g->first_child; c != NO_REGION; c = r->regions.v[c].next_sibling) {
      pending child = {c, w.next, w.conflict};
      SC_PUSH(r->a, todo, child);
    }
  }
}

/* Copies line [p, end) with every renumbered reference resolved in region `g`. */
static void rewrite_line(renumbering *r, uint32_t g, const char *p, const char *end, ar_str *out) {
  const char *run = p;
  for (const char *c = p; c < end; c++) {
    if (*c == '"') {
      c = ir_skip_string(c, end) - 1;
      continue;
    }
    if (*c != '%') continue;
    size_t len = name_len(c + 1, end);
    uint32_t index;
    if (renumbered_name(c + 1, len) && lookup(r, g, c + 1, len, &index)) {
      ar_str_put(out, run, (size_t)(c - run));
      ar_str_printf(out, "%%%s", r->new_names.v[index]);
      run = c + 1 + len;
    }
    c += len;
  }
  ar_str_put(out, run, (size_t)(end - run));
}

/* Walks the lines with the region stack, calling collect (pass 1) or rewriting into out (pass 2). */
static void walk_lines(renumbering *r, const char *text, size_t n, ar_str *out) {
  const char *end = text + n;
  uint32_t opened = 0; /* pass 2 reopens the regions pass 1 created, in the same order */
  r->stack.n = 0;
  SC_PUSH(r->a, r->stack, 0u);
  for (const char *line = text; line < end;) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    const char *line_end = nl ? nl : end, *p = line;
    while (p < line_end && (*p == ' ' || *p == '\t')) p++;
    if (line_closes(p, line_end) && r->stack.n > 1) r->stack.n--;
    if (!out && p < line_end && *p == '%') collect_line_results(r, p, line_end);
    if (out) rewrite_line(r, current(r), line, line_end, out);
    if (line_opens(p, line_end)) {
      if (!out) open_region(r);
      else SC_PUSH(r->a, r->stack, ++opened);
    }
    if (out && nl) ar_str_puts(out, "\n");
    line = nl ? nl + 1 : end;
  }
}

void prop_printer_renumber(sc_arena *a, const char *text, size_t n, ar_str *out) {
  renumbering r;
  memset(&r, 0, sizeof r);
  r.a = a;
  ar_str scratch = SC_ASTR_INIT(a);
  r.scratch = scratch;
  hs_name_map_init(&r.names, a, n / 16 + 1);
  region root = {NO_REGION, NO_REGION, NO_REGION, NO_REGION, NO_REGION, NO_REGION};
  SC_PUSH(a, r.regions, root);
  walk_lines(&r, text, n, NULL);
  size_t hinted = 0; /* the taken hint names: one per definition with a hint */
  for (size_t d = 0; d < r.defs.n; d++) hinted += r.defs.v[d].hint != NULL;
  hs_name_map_init(&r.taken, a, hinted + 1);
  number_regions(&r);
  walk_lines(&r, text, n, out);
}
