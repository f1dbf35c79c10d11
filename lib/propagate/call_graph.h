/* call_graph.h — the pipeline's call-graph flattening and unflattening (Shardy's default, conservative mode).
 *
 * Shardy's -sdy-propagation-pipeline gives every call site its own copy of the function it calls
 * (-sdy-flatten-call-graph, then -sdy-import-func-calls turns each call into a named computation),
 * propagates, turns each named computation back into a private function named by the module's symbol
 * table (the callee's name, or `name_N` with one counter for the whole module; the innermost first), and
 * finally keeps one function per callee and shardings (-sdy-unflatten-call-graph: the first called, in
 * program order); functions no call reaches are dropped (-sdy-symbol-dce).
 *
 * Here the copies are made in the text before propagation, each named as the export will name it, so
 * that propagation sees one call site per function; the unflattening and the dead functions are handled
 * on the printed module. Everything lives in the caller's arena; one thread per call. */
#ifndef SC_PROPAGATE_CALL_GRAPH_H
#define SC_PROPAGATE_CALL_GRAPH_H

#include "propagate/print.h"

/* The export name of each function copy and the function it copies (spans into the arena). */
typedef struct {
  ir_span *names, *originals;
  uint32_t n;
  ir_span *copied; /* the functions copied, renamed out of the way (no call reaches them) */
  uint32_t ncopied;
} prop_func_copies;

/* Writes into `out` the text of `m` (its buffer's [begin, end)) with a copy of the called function for
 * every call site, when some function is called from more than one (through the copies); returns false
 * (nothing written) when no copy is needed, or when the calls recurse, nest deeper than 64, would make
 * more than max(4096, 4 x the ops) copies or repeat more than 4 x the chunk's bytes + 1 MiB of text, or a
 * function is named other than by calls — propagation then shares one function among its call sites. */
bool prop_flatten_call_graph(sc_arena *a, const ir_module *m, uint32_t begin, uint32_t end, ar_str *out,
                             prop_func_copies *copies);

/* On the printed module `m`: each call of a copy goes to the first copy (by call order) of the same
 * function with the same argument and result shardings, and the functions no call reaches
 * among the copies and the functions copied are erased from `pr`. Returns, per op id, whether the op
 * went with an erased function. */
const uint8_t *prop_unflatten_call_graph(sc_arena *a, const ir_module *m, const prop_func_copies *copies,
                                         prop_printer *pr);

#endif
