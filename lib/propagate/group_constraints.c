/* group_constraints.c — open constraints for conflicting sharding groups (group_constraints.h). */
#include "propagate/group_constraints.h"

#include <string.h>

#include "util/hashset.h"

/* `sdy.sharding_constraint NAME <@mesh, [{?}, ...]> : TYPE` for member `v`, or NULL when its type has no
 * known rank. */
static const char *open_constraint(sc_arena *a, const prop_sharding *like, const ir_value *v, const char *result) {
  ir_tensor_type tt;
  if (!ir_value_type(v).n || !ir_parse_tensor_type(a, ir_value_type(v), &tt) || tt.rank < 0 || !like->mesh_name.n) return NULL;
  ar_str s = SC_ASTR_INIT(a);
  ar_str_printf(&s, "%s = sdy.sharding_constraint %.*s <@%.*s, [", result, SC_SPAN_ARG(v->name), SC_SPAN_ARG(like->mesh_name));
  for (int32_t d = 0; d < tt.rank; d++) ar_str_puts(&s, d ? ", {?}" : "{?}");
  ar_str_printf(&s, "]> : %.*s", SC_SPAN_ARG(ir_value_type(v)));
  return ar_str_str(&s);
}

/* The op a member's constraint goes next to: after its definition, or first in its block. */
static bool place(const ir_value *v, const ir_op **at, bool *first) {
  if (ir_value_def(v)) {
    *at = ir_value_def(v), *first = false;
    return true;
  }
  if (!ir_value_block(v) || !ir_value_block(v)->nops) return false;
  *at = ir_value_block(v)->ops[0], *first = true;
  return true;
}

int prop_open_group_constraints(sc_arena *a, const ir_module *m, prop_group_conflicts conflicts, uint32_t begin,
                                uint32_t end, ar_str *out) {
  if (!conflicts.n) return -1;
  prop_printer pr;
  prop_printer_init(&pr, a, m);
  hs_name_map renamed; /* member (pointer bytes) -> index into `names` */
  hs_name_map_init(&renamed, a, 16);
  SC_VEC(const char *) names = {0};
  int added = 0;
  for (uint32_t g = 0; g < conflicts.n; g++)
    for (uint32_t k = 0; k < conflicts.v[g].nmembers; k++) {
      const ir_value *const *v = &conflicts.v[g].members[k];
      const ir_op *at;
      bool first;
      uint32_t seen;
      if (hs_name_map_get(&renamed, (const char *)v, sizeof *v, &seen)) continue;
      const char *name = prop_printer_fresh_name(&pr);
      const char *text = open_constraint(a, conflicts.v[g].sharding, *v, name);
      if (!text || !place(*v, &at, &first)) return -1;
      if (first) prop_printer_insert_first(&pr, at, text);
      else prop_printer_insert_after(&pr, at, text);
      SC_PUSH(a, names, name);
      hs_name_map_make_room(&renamed, a);
      hs_name_map_put(&renamed, (const char *)v, sizeof *v, (uint32_t)names.n - 1, NULL);
      added++;
    }
  /* every use of a member reads its constraint instead (the sharding group's too); each renaming reads
   * its op's text, so an op with many member operands is bounded: past 4 x the chunk + 1 MiB of reading,
   * the groups stay as written */
  uint64_t budget = 4 * (uint64_t)(end - begin) + (1u << 20);
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    for (uint32_t k = 0; k < op->noperands; k++) {
      uint32_t index;
      if (!op->operands[k] || !hs_name_map_get(&renamed, (const char *)&op->operands[k], sizeof op->operands[k], &index))
        continue;
      if (budget < ir_op_text_len(op)) return -1;
      budget -= ir_op_text_len(op);
      ar_step(a, 1 + ir_op_text_len(op) / 64);
      if (!prop_printer_replace_operand(&pr, op, k, names.v[index])) return -1;
    }
  }
  prop_printer_emit(&pr, begin, end, out);
  return added;
}
