/* constants.c — constants copied per use and merged again (constants.h). */
#include "propagate/constants.h"

#include <string.h>

#include "util/hashset.h"

static bool scalar(const ir_value *v) { return v && ir_type_is_scalar_tensor(ir_value_type(v)); }

/* A constant, iota or broadcast of a scalar whose (one) result is not a scalar. */
static bool copied_per_use(const ir_op *op) {
  if (op->nresults != 1 || !ir_op_result(op, 0) || !ir_value_type(ir_op_result(op, 0)).n || scalar(ir_op_result(op, 0))) return false;
  ir_span n = ir_op_bare_name(op);
  if (ir_span_eq(n, "stablehlo.constant") || ir_span_eq(n, "sdy.constant") || ir_span_eq(n, "stablehlo.iota"))
    return !op->noperands;
  return ir_span_eq(n, "stablehlo.broadcast_in_dim") && op->noperands == 1 && scalar(op->operands[0]);
}

/* A prefix for new value names that no name of buf[begin, end) starts with. */
static const char *fresh_prefix(sc_arena *a, const char *buf, uint32_t begin, uint32_t end) {
  const char *prefix = "%_copy";
  for (uint32_t tries = 0;; tries++) {
    size_t n = strlen(prefix);
    bool found = false;
    for (uint32_t i = begin; i + n <= end && !found; i++) {
      const char *p = memchr(buf + i, '%', end - i);
      if (!p) break;
      i = (uint32_t)(p - buf);
      found = i + n <= end && !memcmp(p, prefix, n);
    }
    ar_step(a, 1 + (end - begin) / 64);
    if (!found || tries > 8) return prefix;
    prefix = ar_printf(a, "%s_", prefix);
  }
}

/* The op's text with its result named `name`: `name = ...` (NULL when it has no `... =` result list). */
static const char *renamed_copy(sc_arena *a, const ir_module *m, const ir_op *op, const char *name) {
  const char *p = m->buf + op->pos.offset, *end = m->buf + op->end, *eq = memchr(p, '=', (size_t)(end - p));
  if (!eq || *p != '%') return NULL;
  return ar_printf(a, "%s %.*s", name, (int)(end - eq), eq);
}

int prop_split_constants(sc_arena *a, const ir_module *m, uint32_t begin, uint32_t end, ar_str *out) {
  uint8_t *used = ar_calloc(a, m->nops + 1, 1); /* per defining op id: its first use was met */
  prop_printer pr;
  prop_printer_init(&pr, a, m);
  const char *prefix = NULL;
  uint64_t budget = 4 * (uint64_t)(end - begin) + (1u << 20);
  int copies = 0;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    if (ir_span_eq(ir_op_name(op), "sdy.sharding_group")) continue; /* Shardy copies those along; left as written */
    for (uint32_t k = 0; k < op->noperands; k++) {
      const ir_value *v = op->operands[k];
      const ir_op *def = v ? ir_value_def(v) : NULL;
      if (!def || def->id >= m->nops || !copied_per_use(def)) continue;
      if (!used[def->id]) {
        used[def->id] = 1;
        continue;
      }
      if (!prefix) prefix = fresh_prefix(a, m->buf, begin, end);
      const char *name = ar_printf(a, "%s%d", prefix, copies);
      const char *text = renamed_copy(a, m, def, name);
      if (!text || budget < ir_op_text_len(op)) return -1;
      budget -= ir_op_text_len(op);
      ar_step(a, 1 + ir_op_text_len(op) / 64);
      if (!prop_printer_replace_operand(&pr, op, k, name)) return -1;
      prop_printer_insert_after(&pr, def, text);
      copies++;
    }
  }
  if (!copies) return -1;
  prop_printer_emit(&pr, begin, end, out);
  return copies;
}

/* The text identifying a constant or scalar broadcast within its block: its block, then everything after
 * its `=` but its location. */
static const char *merge_key(sc_arena *a, const ir_module *m, const ir_op *op, uint32_t block, uint32_t *len) {
  const char *p = m->buf + op->pos.offset, *end = m->buf + op->end, *eq = memchr(p, '=', (size_t)(end - p));
  if (!eq) return NULL;
  if (op->loc_offset && op->loc_offset > (uint32_t)(eq - m->buf) && op->loc_offset < op->end) end = m->buf + op->loc_offset;
  while (end > eq && (end[-1] == ' ' || end[-1] == '\n')) end--;
  ar_str key = SC_ASTR_INIT(a);
  ar_str_put(&key, (const char *)&block, sizeof block);
  ar_str_put(&key, eq, (size_t)(end - eq));
  *len = (uint32_t)key.n;
  return key.p;
}

/* Each op's block, numbered in one walk (ops do not record their block). */
static uint32_t *block_numbers(sc_arena *a, const ir_module *m) {
  uint32_t *number = ar_calloc(a, m->nops + 1, sizeof *number), next = 0;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    for (uint32_t r = 0; r < op->nregions; r++)
      for (uint32_t k = 0; k < ir_op_regions(op)[r]->nblocks; k++, next++) {
        const ir_block *b = ir_op_regions(op)[r]->blocks[k];
        for (uint32_t j = 0; j < b->nops; j++) number[b->ops[j]->id] = next;
      }
  }
  return number;
}

uint32_t prop_merge_constants(sc_arena *a, const ir_module *m, prop_printer *pr, uint8_t *erased) {
  hs_name_map first; /* key -> the op id of the first such op */
  hs_name_map_init(&first, a, 16);
  const char **into = NULL; /* per op id of a merged op: the name its uses read now */
  const uint32_t *block = NULL; /* per op id, from the first constant on */
  uint32_t merged = 0;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    if (erased[op->id] || !copied_per_use(op)) continue;
    uint32_t len, id;
    if (!block) block = block_numbers(a, m);
    const char *key = merge_key(a, m, op, block[op->id], &len);
    if (!key) continue;
    hs_name_map_make_room(&first, a);
    if (hs_name_map_put(&first, key, len, op->id, &id)) continue;
    if (!into) into = ar_calloc(a, m->nops + 1, sizeof *into);
    const ir_value *kept = ir_op_result(m->ops[id], 0); /* ids are positions in m->ops */
    into[op->id] = ar_strndup(a, kept->name.p, kept->name.n);
    prop_printer_erase(pr, op);
    erased[op->id] = 1;
    merged++;
  }
  if (!merged) return 0;
  uint64_t budget = 4 * (uint64_t)m->len + (1u << 20); /* each renaming reads its op's text */
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    for (uint32_t k = 0; !erased[op->id] && k < op->noperands; k++) {
      const ir_value *v = op->operands[k];
      if (!v || !ir_value_def(v) || !into[ir_value_def(v)->id]) continue;
      budget -= budget < ir_op_text_len(op) ? budget : ir_op_text_len(op);
      ar_step(a, 1 + ir_op_text_len(op) / 64);
      if (budget) prop_printer_replace_operand(pr, op, k, into[ir_value_def(v)->id]);
    }
  }
  return merged;
}
