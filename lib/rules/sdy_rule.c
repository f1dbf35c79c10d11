/* sdy_rule.c — `#sdy.op_sharding_rule<([i, j])->([ij]) {i=2, j=4} reduction={..} ..., custom>` and
 * `#sdy.propagation_edges<[{step-N = [{"x" = operand-0 -> [result-0]}]}]>`: parsers with Shardy's
 * parser messages (sdy/ir/parsers.cc) and the checks of its verifier (sdy/ir/verifiers.cc). */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "rules/rule_util.h"
#include "model/sdy_lex.h"
#include "rules/sdy_rule.h"

/* ---- op sharding rules -------------------------------------------------------------------------- */

#define K_START_AT_Z 17

typedef SC_VEC(int64_t) ivec;
typedef struct {
  ivec factors; /* factor indices of one dim mapping */
} dim_map;
typedef SC_VEC(dim_map) dimvec;
typedef SC_VEC(dimvec) tensorvec;

static const char *sym_name(sc_arena *a, int64_t idx) {
  if (idx < K_START_AT_Z + 1 && idx >= 0) return ar_printf(a, "%c", (char)('i' + idx));
  return ar_printf(a, "z_%" PRId64, idx - K_START_AT_Z);
}

/* Splits a keyword like "ijz_1k" into factor indices. */
static bool parse_symbols(sdy_lex *lx, const sdy_tok *t, ivec *out) {
  const char *p = t->text.p, *e = t->text.p + t->text.n;
  while (p < e) {
    char c = *p;
    if (c < 'i' || c > 'z') return sdy_fail_at(lx, t->at, "expecting symbol from 'i' to 'z'. Received: '%c'", c);
    if (c == 'z' && p + 1 < e && p[1] == '_') {
      const char *q = p + 2;
      if (q >= e || !isdigit((unsigned char)*q))
        return sdy_fail_at(lx, t->at, "expecting integer after 'z_'. Received: '%.*s'", (int)(e - p), p);
      const char *r = q;
      while (r < e && isdigit((unsigned char)*r)) r++;
      if (*q == '0')
        return sdy_fail_at(lx, t->at, "expecting positive integer without leading zeros. Received: '%.*s'", (int)(r - p), p);
      uint64_t v = 0;
      for (const char *d = q; d < r; d++) {
        unsigned dv = (unsigned)(*d - '0');
        if (v > (UINT64_C(9223372036854775807) - dv) / 10)
          return sdy_fail_at(lx, t->at, "expecting symbol index <=2^63-1. Received: '%.*s'", (int)(r - p), p);
        v = v * 10 + dv;
      }
      int64_t idx = (v > (uint64_t)(INT64_MAX - K_START_AT_Z)) ? INT64_MAX : (int64_t)v + K_START_AT_Z;
      SC_PUSH(lx->a, *out, idx);
      p = r;
      continue;
    }
    SC_PUSH(lx->a, *out, (int64_t)(c - 'i'));
    p++;
  }
  return true;
}

static bool parse_tensor_mapping(sdy_lex *lx, dimvec *dims, const char *param) {
  if (!sdy_eat(lx, '['))
    return sdy_fail(lx, "failed to parse Sdy_OpShardingRule parameter '%s': expected '['", param);
  if (sdy_eat(lx, ']')) return true;
  for (;;) {
    dim_map dm;
    memset(&dm, 0, sizeof dm);
    sdy_tok t = sdy_peek(lx);
    if (t.kind == SDY_IDENT) {
      sdy_next(lx);
      if (!parse_symbols(lx, &t, &dm.factors)) {
        const char *why = lx->err;
        lx->err = NULL;
        return sdy_fail_at(lx, t.at,
                           "failed to parse Sdy_TensorMapping parameter 'dim_mappings': failed to parse "
                           "Sdy_OpShardingRule parameter '%s': %s",
                           param, why);
      }
    }
    SC_PUSH(lx->a, *dims, dm);
    if (sdy_eat(lx, ',')) continue;
    if (!sdy_eat(lx, ']'))
      return sdy_fail(lx, "failed to parse Sdy_TensorMapping parameter 'dim_mappings': expected ',' or ']'");
    return true;
  }
}

static bool parse_mappings(sdy_lex *lx, tensorvec *out, const char *param) {
  if (!sdy_expect(lx, '(')) return false;
  for (;;) {
    dimvec dims = {0};
    if (!parse_tensor_mapping(lx, &dims, param)) return false;
    SC_PUSH(lx->a, *out, dims);
    if (sdy_eat(lx, ',')) continue;
    return sdy_expect(lx, ')');
  }
}

static bool parse_symbol_set(sdy_lex *lx, ivec *out) {
  if (!sdy_expect(lx, '=')) return false;
  if (!sdy_expect(lx, '{')) return false;
  if (sdy_eat(lx, '}')) return true;
  for (;;) {
    sdy_tok t = sdy_next(lx);
    if (t.kind != SDY_IDENT) return sdy_fail_at(lx, t.at, "expected a factor symbol");
    ivec one = {0};
    if (!parse_symbols(lx, &t, &one)) return false;
    if (one.n != 1) return sdy_fail_at(lx, t.at, "expecting single factor symbol: %.*s", SC_SPAN_ARG(t.text));
    SC_PUSH(lx->a, *out, one.v[0]);
    if (sdy_eat(lx, ',')) continue;
    return sdy_expect(lx, '}');
  }
}

typedef struct {
  tensorvec ins, outs;
  ivec sizes;
  ivec special[4]; /* reduction, need_replication, permutation, blocked_propagation */
  bool custom;
} op_rule;

static bool parse_rule(sdy_lex *lx, op_rule *r) {
  sdy_tok h = sdy_next(lx);
  if (h.kind != SDY_HASH || !ir_span_eq(h.text, "#sdy.op_sharding_rule"))
    return sdy_fail_at(lx, h.at,
                       "should have a sharding rule attribute of type OpShardingRuleAttr for attr named "
                       "'sdy.sharding_rule'");
  if (!sdy_expect(lx, '<')) return false;
  if (!parse_mappings(lx, &r->ins, "operand_mappings")) return false;
  if (sdy_next(lx).kind != SDY_ARROW) return sdy_fail(lx, "expected '->'");
  if (!parse_mappings(lx, &r->outs, "result_mappings")) return false;
  if (!sdy_expect(lx, '{')) return false;
  if (!sdy_eat(lx, '}')) {
    for (int64_t expect = 0;; expect++) {
      sdy_tok t = sdy_next(lx);
      if (t.kind != SDY_IDENT) return sdy_fail_at(lx, t.at, "expected a factor symbol");
      ivec one = {0};
      if (!parse_symbols(lx, &t, &one)) return false;
      if (one.n != 1) return sdy_fail_at(lx, t.at, "expecting single factor symbol: %.*s", SC_SPAN_ARG(t.text));
      if (one.v[0] != expect)
        return sdy_fail_at(lx, t.at,
                           "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). "
                           "Expecting factor index symbol '%s', received: '%.*s'",
                           sym_name(lx->a, expect), SC_SPAN_ARG(t.text));
      if (!sdy_expect(lx, '=')) return false;
      sdy_tok v = sdy_next(lx);
      if (v.kind != SDY_INT) return sdy_fail_at(lx, v.at, "expected integer factor size");
      SC_PUSH(lx->a, r->sizes, v.ival);
      if (sdy_eat(lx, ',')) continue;
      if (!sdy_expect(lx, '}')) return false;
      break;
    }
  }
  static const char *const kws[4] = {"reduction", "need_replication", "permutation", "blocked_propagation"};
  for (int i = 0; i < 4; i++)
    if (sdy_eat_kw(lx, kws[i]) && !parse_symbol_set(lx, &r->special[i])) return false;
  if (sdy_eat(lx, ',')) {
    if (!sdy_eat_kw(lx, "custom")) return sdy_fail(lx, "expected 'custom'");
    r->custom = true;
  }
  return sdy_expect(lx, '>');
}

static const char *tensor_what(sc_arena *a, bool operand, uint32_t i, uint32_t n) {
  if (n == 1) return operand ? "operand" : "result";
  return ar_printf(a, "%s %u", operand ? "operand" : "result", i);
}

static const char *verify_tensors(sc_arena *a, const ir_op *op, const op_rule *r, bool operand, uint8_t *used) {
  const tensorvec *tv = operand ? &r->ins : &r->outs;
  uint32_t nvals = operand ? op->noperands : op->nresults;
  int64_t nf = (int64_t)r->sizes.n;
  for (uint32_t i = 0; i < tv->n; i++) {
    const char *w = tensor_what(a, operand, i, (uint32_t)tv->n);
    ir_span type = operand ? ru_operand_type(op, i) : ru_result_type(op, i);
    md_shape sh;
    if (type.n && md_parse_shape(a, type, &sh)) {
      bool ok = sh.kind == SC_SHAPE_ARRAY;
      for (int32_t d = 0; ok && d < sh.rank; d++) ok = sh.dims[d] >= 0;
      if (!ok) return ar_printf(a, "%s - expected a ranked tensor with a static shape. type: %.*s", w, SC_SPAN_ARG(type));
      if ((size_t)sh.rank != tv->v[i].n)
        return ar_printf(a, "%s - mapping rank must match: %zu != %d", w, tv->v[i].n, sh.rank);
    }
    (void)nvals;
    uint8_t *seen = ar_calloc(a, (size_t)nf + 1, 1);
    for (size_t d = 0; d < tv->v[i].n; d++) {
      const ivec *f = &tv->v[i].v[d].factors;
      if (f->n == 0) return ar_printf(a, "%s - dim mapping must have at least one factor", w);
      for (size_t k = 0; k < f->n; k++) {
        int64_t x = f->v[k];
        if (x < 0 || x >= nf)
          return ar_printf(a,
                                 "%s - expecting factor indices to be within 0<=...<num_factors; received: %" PRId64
                                 ", num_factors: %" PRId64,
                                 w, x, nf);
        if (seen[x]) return ar_printf(a, "%s - cannot reuse factors for the same tensor value", w);
        seen[x] = 1;
        used[x] = 1;
        if (f->n > 1 && r->sizes.v[x] == 1)
          return ar_printf(a, "%s - dim mapping can't have a factor of size 1 if there are multiple factors", w);
      }
    }
  }
  return NULL;
}

const char *ru_sdy_rule_check(sc_arena *a, const ir_op *op, ir_span value) {
  sdy_lex lx;
  sdy_lex_init(&lx, a, ir_span_trim(value), 0);
  op_rule r;
  memset(&r, 0, sizeof r);
  if (!parse_rule(&lx, &r)) return lx.err ? lx.err : "failed to parse Sdy_OpShardingRule";
  if (r.ins.n != op->noperands)
    return ar_printf(a, "number of operands and mappings must match: %u != %zu", op->noperands, r.ins.n);
  if (r.outs.n != op->nresults)
    return ar_printf(a, "number of results and mappings must match: %u != %zu", op->nresults, r.outs.n);
  uint8_t *used = ar_calloc(a, r.sizes.n + 1, 1);
  const char *e = verify_tensors(a, op, &r, true, used);
  if (!e) e = verify_tensors(a, op, &r, false, used);
  if (e) return e;
  for (size_t i = 0; i < r.sizes.n; i++)
    if (!used[i])
      return ar_printf(a, "has factor %s=%" PRId64 " that isn't used in operand and result mappings",
                             sym_name(a, (int64_t)i), r.sizes.v[i]);
  int64_t nf = (int64_t)r.sizes.n;
  uint8_t *inset = ar_calloc(a, (size_t)nf + 1, 1);
  for (int s = 0; s < 4; s++) {
    const ivec *v = &r.special[s];
    for (size_t i = 0; i < v->n; i++) {
      if (v->v[i] < 0) return "index must be non-negative";
      if (v->v[i] >= nf) return ar_printf(a, "index must be less than %" PRId64 ", got: %" PRId64, nf, v->v[i]);
      if (i && v->v[i] < v->v[i - 1]) return "indices of special factors must be sorted";
      if (i && v->v[i] == v->v[i - 1]) return "indices of special factors must be unique";
    }
  }
  for (int s = 0; s < 3; s++) {
    const ivec *v = &r.special[s];
    for (size_t i = 0; i < v->n; i++) {
      if (inset[v->v[i]])
        return "a factor can only be in one of the reduction, need replication, or permutation factor sets";
      inset[v->v[i]] = 1;
    }
  }
  for (size_t i = 0; i < r.special[0].n; i++) {
    int64_t f = r.special[0].v[i];
    for (size_t t = 0; t < r.outs.n; t++)
      for (size_t d = 0; d < r.outs.v[t].n; d++)
        for (size_t k = 0; k < r.outs.v[t].v[d].factors.n; k++)
          if (r.outs.v[t].v[d].factors.v[k] == f) return "reduction factor cannot be in result mappings";
  }
  return NULL;
}

/* ---- propagation edges -------------------------------------------------------------------------- */

typedef struct {
  bool result;
  int64_t index;
} vref;

static bool parse_index_after(sdy_lex *lx, int64_t *out) {
  sdy_tok t = sdy_next(lx);
  if (t.kind == SDY_INT) {
    *out = -t.ival;
    return true;
  }
  if (t.kind == SDY_PUNCT && t.ch == '-') {
    sdy_tok v = sdy_next(lx);
    if (v.kind != SDY_INT) return sdy_fail_at(lx, v.at, "expected an integer index");
    *out = v.ival;
    return true;
  }
  return sdy_fail_at(lx, t.at, "expected '-' and an index");
}

static bool parse_vref(sdy_lex *lx, vref *r) {
  sdy_tok t = sdy_next(lx);
  if (t.kind != SDY_IDENT || !(ir_span_eq(t.text, "operand") || ir_span_eq(t.text, "result")))
    return sdy_fail_at(lx, t.at, "expected operand-<i> or result-<i>");
  r->result = ir_span_eq(t.text, "result");
  return parse_index_after(lx, &r->index);
}

static void add_mesh(const md_mesh **ms, uint32_t *n, const md_mesh *m) {
  if (!m || *n >= 32) return;
  for (uint32_t i = 0; i < *n; i++)
    if (ms[i] == m) return;
  ms[(*n)++] = m;
}

static const char *edges_one(sc_arena *a, const md_model *model, const ir_op *op, sdy_lex *lx, const char *attr) {
  sdy_tok h = sdy_next(lx);
  if (h.kind != SDY_HASH || !ir_span_eq(h.text, "#sdy.propagation_edges")) return attr;
  if (!sdy_expect(lx, '<') || !sdy_expect(lx, '[')) return lx->err;
  bool data_flow = op->kind == SC_OP_SDY_DATA_FLOW_EDGE || op->kind == SC_OP_SDY_FUNC_DATA_FLOW_EDGE;
  /* meshes of the shardings the op touches */
  const md_mesh *ms[32];
  uint32_t nms = 0;
  for (uint32_t i = 0; i < op->nresults; i++) add_mesh(ms, &nms, md_model_sharding_mesh(model, md_model_result_sharding(model, op, i)));
  for (uint32_t i = 0; i < op->noperands; i++)
    add_mesh(ms, &nms, md_model_sharding_mesh(model, md_model_value_sharding(model, op->operands[i])));
  if (!nms) return "expected propagation edges attr to reference a sharding: none of the op's operands or results has one";
  for (uint32_t i = 1; i < nms; i++)
    if (!ru_meshes_match(ms[0], ms[i]))
      return ar_printf(a, "expected a common mesh for propagation edges attr: the op's shardings use %s and %s",
                             ru_mesh_str(a, ms[0]), ru_mesh_str(a, ms[i]));
  SC_VEC(int64_t) steps = {0};
  if (sdy_eat(lx, ']')) return NULL;
  for (;;) {
    if (!sdy_expect(lx, '{')) return lx->err;
    sdy_tok st = sdy_next(lx);
    if (st.kind != SDY_IDENT || !ir_span_eq(st.text, "step")) return "expected step-<index>";
    int64_t step;
    if (!parse_index_after(lx, &step)) return lx->err;
    if (step < 0) return ar_printf(a, "propagation edges have negative step index: %" PRId64, step);
    for (size_t i = 0; i < steps.n; i++)
      if (steps.v[i] == step) return ar_printf(a, "propagation edges have duplicate step index: %" PRId64, step);
    SC_PUSH(a, steps, step);
    if (!sdy_expect(lx, '=') || !sdy_expect(lx, '[')) return lx->err;
    if (!sdy_eat(lx, ']')) {
      for (;;) {
        if (!sdy_expect(lx, '{')) return lx->err;
        md_axis_ref ax;
        if (!sdy_parse_axis_ref(lx, &ax)) return lx->err;
        if (!sdy_expect(lx, '=')) return lx->err;
        vref src;
        if (!parse_vref(lx, &src)) return lx->err;
        if (sdy_next(lx).kind != SDY_ARROW) return "expected '->'";
        if (!sdy_expect(lx, '[')) return lx->err;
        SC_VEC(vref) tg = {0};
        if (!sdy_eat(lx, ']')) {
          for (;;) {
            vref t;
            if (!parse_vref(lx, &t)) return lx->err;
            SC_PUSH(a, tg, t);
            if (sdy_eat(lx, ',')) continue;
            if (!sdy_expect(lx, ']')) return lx->err;
            break;
          }
        }
        if (!sdy_expect(lx, '}')) return lx->err;
        /* checks */
        vref all[64];
        size_t nall = 0;
        all[nall++] = src;
        for (size_t i = 0; i < tg.n && nall < 64; i++) all[nall++] = tg.v[i];
        for (size_t i = 0; i < nall; i++) {
          if (all[i].result && (all[i].index < 0 || all[i].index >= (int64_t)op->nresults))
            return ar_printf(a, "'%.*s' op expected a value ref to have a result index in range [0, %u), got: %" PRId64,
                                   SC_SPAN_ARG(ir_op_name(op)), op->nresults, all[i].index);
          if (!all[i].result && !data_flow && (all[i].index < 0 || all[i].index >= (int64_t)op->noperands))
            return ar_printf(a, "'%.*s' op expected a value ref to have an operand index in range [0, %u), got: %" PRId64,
                                   SC_SPAN_ARG(ir_op_name(op)), op->noperands, all[i].index);
        }
        for (size_t i = 0; i < tg.n; i++) {
          if (tg.v[i].result == src.result && tg.v[i].index == src.index)
            return "propagation edges have a source that is the same as a target";
          for (size_t j = 0; j < i; j++)
            if (tg.v[j].result == tg.v[i].result && tg.v[j].index == tg.v[i].index)
              return ar_printf(a, "propagation edges have duplicate targets for step index: %" PRId64 " and axis: %.*s",
                                     step, SC_SPAN_ARG(ax.name));
        }
        if (nms) {
          bool found = false;
          for (uint32_t i = 0; i < nms && !found; i++) found = md_mesh_axis_index(ms[i], ax.name) >= 0;
          if (!found)
            return ar_printf(a, "expected axis ref to be in one of the meshes: \"%.*s\" is not an axis of %s",
                                   SC_SPAN_ARG(ax.name), ru_mesh_str(a, ms[0]));
        }
        if (sdy_eat(lx, ',')) continue;
        if (!sdy_expect(lx, ']')) return lx->err;
        break;
      }
    }
    if (!sdy_expect(lx, '}')) return lx->err;
    if (sdy_eat(lx, ',')) continue;
    if (!sdy_expect(lx, ']')) return lx->err;
    break;
  }
  if (!sdy_expect(lx, '>')) return lx->err;
  return NULL;
}

const char *ru_sdy_edges_check(sc_arena *a, const md_model *model, const ir_op *op, ir_span value, bool array) {
  sdy_lex lx;
  sdy_lex_init(&lx, a, ir_span_trim(value), 0);
  if (!array)
    return edges_one(a, model, op, &lx,
                     "should have a propagation edges attribute of type PropagationEdgesAttr for attr named "
                     "'sdy.propagation_edges'");
  const char *bad = "should have a propagation edges attribute of type ArrayAttr<PropagationEdgesAttr> for attr named "
                    "'sdy.result_propagation_edges' or 'sdy.block_arg_propagation_edges'";
  if (!sdy_eat(&lx, '[')) return bad;
  if (sdy_eat(&lx, ']')) return NULL;
  for (;;) {
    const char *e = edges_one(a, model, op, &lx, bad);
    if (e) return e;
    if (sdy_eat(&lx, ',')) continue;
    if (!sdy_eat(&lx, ']')) return bad;
    return NULL;
  }
}
