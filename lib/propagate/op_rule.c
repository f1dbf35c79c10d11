/* op_rule.c — placeholder registry: no op has a rule yet (the registry replaces this file). */
#include "propagate/op_rule.h"

const prop_rule *prop_rule_of(sc_arena *a, const sc_module *m, const sc_op *op, const prop_rule_options *opt,
                              const char **err) {
  (void)a, (void)m, (void)op, (void)opt;
  if (err) *err = NULL;
  return NULL;
}

const prop_rule *prop_rule_parse(sc_arena *a, sc_span text, const char **err) {
  (void)a, (void)text;
  if (err) *err = "sharding rules cannot be parsed yet";
  return NULL;
}

void prop_factor_symbol(sc_astr *out, uint32_t index) {
  if (index < 18) sc_astr_printf(out, "%c", 'i' + (int)index);
  else sc_astr_printf(out, "z_%u", index - 17);
}

const char *prop_rule_str(sc_arena *a, const prop_rule *r) {
  (void)r;
  return sc_arena_strdup(a, "#sdy.op_sharding_rule<()->()>");
}
