/* lift_meshes.c — inline meshes lifted into mesh symbols (lift_meshes.h). */
#include "propagate/lift_meshes.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashset.h"

typedef struct {
  uint32_t begin, end; /* the inline `mesh<...>` in the buffer */
  const char *symbol;  /* what replaces it: "@name" */
} lift_edit;

typedef struct {
  sc_arena *a;
  const ir_module *m;
  hs_name_map symbols;  /* every symbol the module defines, and the new ones */
  hs_name_map by_body;  /* a mesh's normalized `<...>` -> index into names */
  hs_name_map renamed;  /* a duplicate mesh's name -> index into names (the first identical mesh) */
  SC_VEC(const char *) names;
  SC_VEC(lift_edit) edits;
  ar_str added;         /* the new `sdy.mesh` lines */
  int nadded;
  uint32_t counter;     /* the symbol table's one uniquing counter */
  const ir_op *last_mesh; /* the last declared mesh that stays */
  ir_span indent;
} lifter;

/* The position just past the `>` closing the `<` at `p` (strings and nested brackets skipped), or NULL. */
static const char *close_angle(const char *p, const char *end) {
  int depth = 0;
  for (; p < end; p++) {
    if (*p == '"') {
      p = ir_skip_string(p, end) - 1;
      continue;
    }
    if (*p == '<' || *p == '[' || *p == '{' || *p == '(') depth++;
    else if (*p == '>' || *p == ']' || *p == '}' || *p == ')') {
      if (--depth == 0) return *p == '>' ? p + 1 : NULL;
      if (depth < 0) return NULL;
    }
  }
  return NULL;
}

/* A mesh attribute's `<...>` as MLIR prints it: no spaces but one after each comma (strings kept). */
static const char *normalized(sc_arena *a, const char *p, const char *end) {
  ar_str s = SC_ASTR_INIT(a);
  for (; p < end; p++) {
    if (*p == '"') {
      const char *q = ir_skip_string(p, end);
      ar_str_put(&s, p, (size_t)(q - p));
      p = q - 1;
    } else if (*p == ',') {
      ar_str_puts(&s, ", ");
    } else if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      ar_str_put(&s, p, 1);
    }
  }
  return ar_str_str(&s);
}

/* Shardy's name for a new mesh op: maximal_mesh_K, empty_mesh or mesh, made unique as MLIR's symbol
 * table does (`_N` with one counter for every name it inserts). */
static const char *new_symbol(lifter *l, const char *body) {
  const char *base = "mesh";
  const char *ids = strstr(body, "device_ids=[");
  if (!strncmp(body, "<[]", 3) && ids) {
    const char *k = ids + 12, *close = strchr(k, ']');
    if (close && !memchr(k, ',', (size_t)(close - k))) base = ar_printf(l->a, "maximal_mesh_%.*s", (int)(close - k), k);
  } else if (!strcmp(body, "<[]>")) {
    base = "empty_mesh";
  }
  const char *name = base;
  for (uint32_t v; hs_name_map_get(&l->symbols, name, (uint32_t)strlen(name), &v);) {
    ar_step(l->a, 1);
    name = ar_printf(l->a, "%s_%u", base, l->counter++);
  }
  hs_name_map_make_room(&l->symbols, l->a);
  hs_name_map_put(&l->symbols, name, (uint32_t)strlen(name), 0, NULL);
  return name;
}

static uint32_t mesh_index(lifter *l, const char *body, const char *name) {
  uint32_t index;
  if (hs_name_map_get(&l->by_body, body, (uint32_t)strlen(body), &index)) return index;
  SC_PUSH(l->a, l->names, name);
  hs_name_map_make_room(&l->by_body, l->a);
  hs_name_map_put(&l->by_body, body, (uint32_t)strlen(body), (uint32_t)l->names.n - 1, NULL);
  return (uint32_t)l->names.n - 1;
}

/* The text of `op` and the line break after it, when nothing else is on its lines. */
static bool whole_lines(const ir_module *m, const ir_op *op, uint32_t *begin, uint32_t *end) {
  ir_span text = ir_op_text(m, op);
  const char *b = text.p, *e = text.p + text.n, *stop = m->buf + m->len;
  while (b > m->buf && (b[-1] == ' ' || b[-1] == '\t')) b--;
  while (e < stop && (*e == ' ' || *e == '\t')) e++;
  if ((b > m->buf && b[-1] != '\n') || (e < stop && *e != '\n')) return false;
  *begin = (uint32_t)(b - m->buf), *end = (uint32_t)(e < stop ? e + 1 - m->buf : e - m->buf);
  return true;
}

/* The declared meshes: an inline mesh identical to one takes its name, and a later mesh identical to an
 * earlier one is erased, its references renamed. Every symbol is indexed. */
static void index_symbols(lifter *l) {
  const ir_module *m = l->m;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    ir_span name = ir_op_sym_name(op);
    if (name.n) {
      hs_name_map_make_room(&l->symbols, l->a);
      hs_name_map_put(&l->symbols, name.p, name.n, 0, NULL);
    }
    if (op->kind != SC_OP_SDY_MESH || !name.n) continue;
    ir_span text = ir_op_text(m, op);
    const char *end = text.p + text.n, *body = NULL;
    for (const char *p = text.p; p + 1 < end && !body; p++) /* `= <[...]>` or `#sdy.mesh<[...]>` */
      if (p[0] == '<' && p[1] == '[') body = p;
    const char *close = body ? close_angle(body, end) : NULL;
    if (!close) continue;
    const char *key = normalized(l->a, body, close);
    uint32_t first, begin, stop;
    if (!hs_name_map_get(&l->by_body, key, (uint32_t)strlen(key), &first)) {
      mesh_index(l, key, ar_strndup(l->a, name.p, name.n));
      l->last_mesh = op;
    } else if (whole_lines(m, op, &begin, &stop)) {
      hs_name_map_make_room(&l->renamed, l->a);
      hs_name_map_put(&l->renamed, name.p, name.n, first, NULL);
      lift_edit erase = {begin, stop, ""};
      SC_PUSH(l->a, l->edits, erase);
    }
  }
}

/* Where new mesh lines go: after the last declared mesh that stays, else before the first op of the
 * module body; with that op's indentation. */
static uint32_t insertion_point(lifter *l, uint32_t begin) {
  const ir_module *m = l->m;
  const ir_op *first = NULL;
  for (uint32_t i = 0; i < m->nops && !first; i++)
    if (m->ops[i]->kind != SC_OP_MODULE) first = m->ops[i];
  const ir_op *at = l->last_mesh ? l->last_mesh : first;
  if (!at) return begin;
  const char *line = m->buf + at->pos.offset;
  while (line > m->buf + begin && line[-1] != '\n') line--;
  const char *text = line;
  while (*text == ' ' || *text == '\t') text++;
  l->indent = (ir_span){line, (uint32_t)(text - line)};
  if (!l->last_mesh) return (uint32_t)(line - m->buf);
  const char *nl = memchr(m->buf + at->end, '\n', m->len - at->end);
  return nl ? (uint32_t)(nl + 1 - m->buf) : (uint32_t)m->len;
}

static bool symbol_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.' ||
         c == '-';
}

/* `@name` at `p`: renamed when `name` is a duplicate mesh. Returns where the scan goes on. */
static const char *rename_ref(lifter *l, const char *p, const char *stop) {
  const char *q = p + 1;
  while (q < stop && symbol_char(*q)) q++;
  uint32_t index;
  if (q > p + 1 && l->renamed.count && hs_name_map_get(&l->renamed, p + 1, (uint32_t)(q - p - 1), &index)) {
    lift_edit e = {(uint32_t)(p - l->m->buf), (uint32_t)(q - l->m->buf), ar_printf(l->a, "@%s", l->names.v[index])};
    SC_PUSH(l->a, l->edits, e);
  }
  return q - 1;
}

/* An inline mesh starts at `p` (`mesh<`) when the last other character before it opens a sharding (`<`). */
static bool inline_mesh_at(const char *p, const char *start, const char *end) {
  if (end - p < 6 || memcmp(p, "mesh<", 5)) return false;
  const char *q = p;
  while (q > start && (q[-1] == ' ' || q[-1] == '\n' || q[-1] == '\t')) q--;
  return q > start && q[-1] == '<';
}

static void lift_at(lifter *l, const char *p, const char *close) {
  const char *body = normalized(l->a, p + 4, close);
  uint32_t index;
  if (!hs_name_map_get(&l->by_body, body, (uint32_t)strlen(body), &index)) {
    index = mesh_index(l, body, new_symbol(l, body));
    ar_str_printf(&l->added, "%.*ssdy.mesh @%s = %s\n", (int)l->indent.n, l->indent.p, l->names.v[index], body);
    l->nadded++;
  }
  lift_edit e = {(uint32_t)(p - l->m->buf), (uint32_t)(close - l->m->buf), ar_printf(l->a, "@%s", l->names.v[index])};
  SC_PUSH(l->a, l->edits, e);
}

static int edit_order(const void *x, const void *y) {
  const lift_edit *a = x, *b = y;
  if (a->begin != b->begin) return (a->begin > b->begin) - (a->begin < b->begin);
  return (a->end > b->end) - (a->end < b->end); /* the insertion (empty) before an erasure there */
}

int prop_lift_inlined_meshes(sc_arena *a, const ir_module *m, uint32_t begin, uint32_t end, ar_str *out) {
  lifter l;
  memset(&l, 0, sizeof l);
  l.a = a, l.m = m;
  hs_name_map_init(&l.symbols, a, 16);
  hs_name_map_init(&l.by_body, a, 16);
  hs_name_map_init(&l.renamed, a, 4);
  l.added = (ar_str)SC_ASTR_INIT(a);
  index_symbols(&l);
  uint32_t insert_at = insertion_point(&l, begin);
  for (const char *p = m->buf + begin, *stop = m->buf + end; p < stop; p++) {
    ar_step(a, 1);
    if (*p == '/' && p + 1 < stop && p[1] == '/') { /* a comment */
      const char *nl = memchr(p, '\n', (size_t)(stop - p));
      p = nl ? nl : stop - 1;
    } else if (*p == '"') {
      p = ir_skip_string(p, stop) - 1;
    } else if (*p == '@') {
      p = rename_ref(&l, p, stop);
    } else if (*p == 'm' && inline_mesh_at(p, m->buf + begin, stop)) {
      const char *close = close_angle(p + 4, stop);
      if (!close) return -1; /* not a mesh after all (the parser accepted the module): left as written, and
                                no second scan to the end, so the pass stays linear */
      lift_at(&l, p, close);
      p = close - 1;
    }
  }
  if (!l.edits.n) return -1;
  lift_edit insertion = {insert_at, insert_at, ar_str_str(&l.added)};
  SC_PUSH(a, l.edits, insertion);
  qsort(l.edits.v, l.edits.n, sizeof *l.edits.v, edit_order);
  uint32_t at = begin;
  for (size_t i = 0; i < l.edits.n; i++) {
    if (l.edits.v[i].begin < at) continue; /* inside an erased mesh */
    ar_str_put(out, m->buf + at, l.edits.v[i].begin - at);
    ar_str_puts(out, l.edits.v[i].symbol);
    at = l.edits.v[i].end;
  }
  ar_str_put(out, m->buf + at, end - at);
  return l.nadded;
}
