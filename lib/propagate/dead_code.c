/* dead_code.c — trivially dead ops erased as MLIR's canonicalizer erases them (see dead_code.h). */
#include <stdlib.h>
#include <string.h>

#include "propagate/dead_code.h"

/* StableHLO ops without memory effects (sorted for bsearch). */
static const char *const PURE_STABLEHLO[] = {
    "abs", "add", "after_all", "and", "atan2", "batch_norm_grad", "batch_norm_inference", "batch_norm_training",
    "bitcast_convert", "broadcast", "broadcast_in_dim", "cbrt", "ceil", "cholesky", "clamp", "compare", "complex",
    "concatenate", "constant", "convert", "convolution", "cosine", "count_leading_zeros", "create_token", "divide",
    "dot", "dot_general", "dynamic_broadcast_in_dim", "dynamic_conv", "dynamic_gather", "dynamic_iota",
    "dynamic_pad", "dynamic_reshape", "dynamic_slice", "dynamic_update_slice", "einsum", "exponential",
    "exponential_minus_one", "fft", "floor", "gather", "get_dimension_size", "get_tuple_element", "imag", "iota",
    "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate", "not",
    "optimization_barrier", "or", "pad", "partition_id", "popcnt", "power", "real", "real_dynamic_slice",
    "reduce_precision", "remainder", "replica_id", "reshape", "return", "reverse", "rng_bit_generator",
    "round_nearest_afz", "round_nearest_even", "rsqrt", "select", "set_dimension_size", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "slice", "sqrt", "subtract", "tan", "tanh",
    "torch_index_select", "transpose", "triangular_solve", "tuple", "unary_einsum", "uniform_dequantize",
    "uniform_quantize", "xor"};

/* StableHLO ops whose effects are their regions' (RecursiveMemoryEffects). */
static const char *const RECURSIVE_STABLEHLO[] = {"case",    "if",        "map",          "reduce",
                                                  "reduce_window", "scatter", "select_and_scatter", "sort",
                                                  "while"};

static int compare_name(const void *key, const void *entry) {
  const ir_span *k = key;
  const char *e = *(const char *const *)entry;
  size_t n = strlen(e);
  int c = memcmp(k->p, e, k->n < n ? k->n : n);
  return c ? c : (k->n > n) - (k->n < n);
}

static bool listed(ir_span name, const char *const *table, size_t n) {
  return bsearch(&name, table, n, sizeof *table, compare_name) != NULL;
}

/* The op's name without `prefix` (false when it lacks it). */
static bool name_in(const ir_op *op, const char *prefix, ir_span *rest) {
  ir_span n = ir_op_bare_name(op);
  size_t k = strlen(prefix);
  if (n.n <= k || memcmp(n.p, prefix, k)) return false;
  rest->p = n.p + k, rest->n = n.n - k;
  return true;
}

typedef enum { EFFECTS, PURE, RECURSIVE } effects;

static effects effects_of(const ir_op *op) {
  ir_span rest;
  if (name_in(op, "stablehlo.", &rest)) {
    if (listed(rest, PURE_STABLEHLO, sizeof PURE_STABLEHLO / sizeof *PURE_STABLEHLO)) return PURE;
    if (listed(rest, RECURSIVE_STABLEHLO, sizeof RECURSIVE_STABLEHLO / sizeof *RECURSIVE_STABLEHLO)) return RECURSIVE;
    return EFFECTS;
  }
  if (name_in(op, "sdy.", &rest)) {
    if (ir_span_eq(rest, "reshard") || ir_span_eq(rest, "constant") || ir_span_eq(rest, "propagation_barrier") ||
        ir_span_eq(rest, "return"))
      return PURE;
    if (ir_span_eq(rest, "manual_computation") || ir_span_eq(rest, "named_computation")) return RECURSIVE;
  }
  return op->kind == SC_OP_RETURN ? PURE : EFFECTS;
}

static bool terminator(const ir_op *op) {
  ir_span rest;
  return op->kind == SC_OP_RETURN || (name_in(op, "stablehlo.", &rest) && ir_span_eq(rest, "return")) ||
         (name_in(op, "sdy.", &rest) && ir_span_eq(rest, "return"));
}

uint32_t prop_erase_dead_ops(sc_arena *a, const ir_module *m, prop_printer *pr, const uint8_t *erased) {
  uint32_t n = m->nops, count = 0;
  uint32_t *uses = ar_calloc(a, n + 1, sizeof *uses);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < m->ops[i]->noperands; k++) {
      const ir_value *v = m->ops[i]->operands[k];
      if (v && ir_value_def(v) && ir_value_def(v)->id < n) uses[ir_value_def(v)->id]++;
    }
  /* next_effect[i]: the first op at or after i (in preorder) with effects of its own; a subtree
   * [i, subtree_end) is pure when that lies past its end */
  uint32_t *next_effect = ar_alloc(a, (n + 1) * sizeof *next_effect);
  next_effect[n] = n;
  for (uint32_t i = n; i-- > 0;) next_effect[i] = effects_of(m->ops[i]) == EFFECTS ? i : next_effect[i + 1];
  bool *gone = ar_calloc(a, n + 1, sizeof *gone);
  uint32_t *stack = ar_alloc(a, (2 * (size_t)n + 1) * sizeof *stack), nstack = 0; /* each op: once, then once more
                                                                                  when its last use goes */
  for (uint32_t i = n; i-- > 0;) stack[nstack++] = i; /* first ops on top: the printed order does not matter */
  while (nstack) {
    uint32_t i = stack[--nstack];
    const ir_op *op = m->ops[i];
    ar_step(a, 1);
    if (gone[i] || (erased && erased[i]) || uses[i] || !op->nresults || terminator(op) || op->kind == SC_OP_FUNC || op->kind == SC_OP_MODULE)
      continue;
    effects e = effects_of(op);
    if (e == EFFECTS || (e == RECURSIVE && next_effect[i] < op->subtree_end)) continue;
    prop_printer_erase(pr, op);
    count++;
    for (uint32_t j = i; j < op->subtree_end; j++) {
      gone[j] = true;
      for (uint32_t k = 0; k < m->ops[j]->noperands; k++) { /* values from outside the erased subtree lose a use */
        const ir_value *v = m->ops[j]->operands[k];
        uint32_t d = v && ir_value_def(v) ? ir_value_def(v)->id : UINT32_MAX;
        if (d < n && (d < i || d >= op->subtree_end) && uses[d] && !--uses[d]) stack[nstack++] = d;
      }
    }
  }
  return count;
}
