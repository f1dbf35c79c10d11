/* print.h — a module printed back as sdy_opt prints it after a pass, with the attributes a pass set.
 *
 * The printer works on the module's own text (MLIR text inputs): ops are copied as written, comments
 * and the blank lines they leave are dropped (FileCheck patterns live in comments: an echoed comment
 * would match itself), every op's own text is joined onto one line (its regions' bodies keep theirs),
 * and each attribute a pass set is written into the op's attribute dictionary,
 * which keeps MLIR's order (sorted by name), or into a new `{...}` before the op's type trailer.
 * Edits are collected first, then the text is emitted in one pass: linear in the input plus the edits.
 * Everything lives in the caller's arena; one thread at a time per printer. */
#ifndef SC_PROPAGATE_PRINT_H
#define SC_PROPAGATE_PRINT_H

#include "ir/ir.h"
#include "util/arena.h"

typedef struct prop_edit prop_edit;

typedef struct prop_replacement prop_replacement;

typedef struct {
  sc_arena *arena;
  const sc_module *module;
  SC_VEC(prop_edit) edits;
  SC_VEC(prop_replacement) replacements;
} prop_printer;

void prop_printer_init(prop_printer *p, sc_arena *a, const sc_module *m);

/* Sets attribute `name` (e.g. "sdy.sharding_rule") of `op` to `value` (its text, e.g.
 * "#sdy.op_sharding_rule<...>"), replacing a value written on the op. Both strings must outlive the
 * printer (arena). */
void prop_printer_set_attr(prop_printer *p, const sc_op *op, const char *name, const char *value);

/* Replaces buf[begin, end) (e.g. a function's signature) by `text` (no comments; outlives the printer).
 * Replacements must not overlap each other or an op's attribute slot. */
void prop_printer_replace(prop_printer *p, uint32_t begin, uint32_t end, const char *text);

/* Appends module text [begin, end) with the edits applied and comments dropped. */
void prop_printer_emit(prop_printer *p, uint32_t begin, uint32_t end, sc_astr *out);

#endif
