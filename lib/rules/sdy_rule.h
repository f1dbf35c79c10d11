/* sdy_rule.h — internal: Shardy's `#sdy.op_sharding_rule<...>` and `#sdy.propagation_edges<...>`
 * attributes, parsed and verified against their op (lib/rules/sdy_rule.c). */
#ifndef SC_SDY_RULE_H
#define SC_SDY_RULE_H

#include "model/model.h"

/* The first problem of `sdy.sharding_rule = <value>` on `op` (parse or verify), or NULL. */
const char *ru_sdy_rule_check(sc_arena *a, const ir_op *op, ir_span value);
/* The first problem of a propagation-edges attribute (`array` for the result/block-arg variants). */
const char *ru_sdy_edges_check(sc_arena *a, const md_model *model, const ir_op *op, ir_span value, bool array);

#endif
