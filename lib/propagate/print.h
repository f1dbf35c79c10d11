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
  const ir_module *module;
  SC_VEC(prop_edit) edits;
  SC_VEC(prop_replacement) replacements;
  uint32_t next_seq;     /* order of replacements at one offset (ops inserted before one op) */
  uint32_t fresh_names;  /* counter of prop_printer_fresh_name */
  bool renumber;         /* number the values of every function again, as MLIR prints them */
} prop_printer;

void prop_printer_init(prop_printer *p, sc_arena *a, const ir_module *m);

/* Sets attribute `name` (e.g. "sdy.sharding_rule") of `op` to `value` (its text, e.g.
 * "#sdy.op_sharding_rule<...>"), replacing a value written on the op. Both strings must outlive the
 * printer (arena). */
void prop_printer_set_attr(prop_printer *p, const ir_op *op, const char *name, const char *value);

/* Replaces buf[begin, end) (e.g. a function's signature) by `text` (no comments; outlives the printer).
 * Replacements must not overlap each other or an op's attribute slot. */
void prop_printer_replace(prop_printer *p, uint32_t begin, uint32_t end, const char *text);

/* ---- ops added, removed and rewired (explicit reshards, collectives) ----------------------------
 * New op texts are one op each, without a line break or indentation (the printer indents them as
 * the op they are placed beside); they and every string passed here must outlive the printer. */

/* A value name unique in the module (`%_scN`), for an op the printer inserts; prop_printer.renumber
 * makes the output use MLIR's numbers instead. Arena string. */
const char *prop_printer_fresh_name(prop_printer *p);
/* Puts the op `text` on its own line before `op` (several: in call order). */
void prop_printer_insert_before(prop_printer *p, const ir_op *op, const char *text);
/* Puts the op `text` on its own line before `op`, ahead of everything put there so far (MLIR's
 * insertion at the start of a block: several come out in reverse call order). */
void prop_printer_insert_first(prop_printer *p, const ir_op *op, const char *text);
/* Puts the op `text` on its own line after `op` (several: in call order). */
void prop_printer_insert_after(prop_printer *p, const ir_op *op, const char *text);
/* Prints a pretty op written as `from` under the name `to` (a generic op, or one written otherwise, is
 * left alone); returns whether it did. */
bool prop_printer_rename_op(prop_printer *p, const ir_op *op, const char *from, const char *to);
/* Drops `op` (and its regions) from the output. */
void prop_printer_erase(prop_printer *p, const ir_op *op);
/* Writes `name` (e.g. "%3") for operand `index` of `op`: the index-th value reference of the op's own
 * text (after its result list; a pretty while's `%iterArg = ` block-argument names are skipped).
 * Returns false when the op's text has no such reference (nothing is changed). */
bool prop_printer_replace_operand(prop_printer *p, const ir_op *op, uint32_t index, const char *name);
/* Writes `name` for result `index` of `op` where the op defines it (`%0 = ...`, `%0:2 = ...` only
 * for index 0 of a result group; `%a, %b = ...`). False when the op's result list has no such name. */
bool prop_printer_rename_result(prop_printer *p, const ir_op *op, uint32_t index, const char *name);

/* Appends module text [begin, end) with the edits applied and comments dropped. */
void prop_printer_emit(prop_printer *p, uint32_t begin, uint32_t end, ar_str *out);

/* Renumbers text[0, n) into `out` as MLIR prints values (renumber.c): each op result named by digits or
 * by prop_printer_fresh_name gets a number (`%0`, `%1`, ...; a constant `%cst` / `%c`), a region's results
 * before those of the regions nested in it (which start where it stopped), and every reference follows,
 * resolved from its line's region outwards. Other names (`%arg0`, `%iterArg`) are kept. Linear in `n`
 * times the nesting depth; counts steps on `a`. */
void prop_printer_renumber(sc_arena *a, const char *text, size_t n, ar_str *out);

#endif
