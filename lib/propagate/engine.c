/* engine.c — basic sharding propagation over a module (see engine.h). */
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "propagate/engine_state.h"
#include "util/hash.h"

/* An sdy.sharding_constraint, or a GSPMD `@Sharding` custom call (one operand, one result), which XLA's
 * Shardy import turns into one (import_sdy_custom_calls.cc): the result's sharding is asked of the
 * operand, and propagates through it both ways. */
static bool is_constraint(const ir_op *op) {
  if (op->kind == SC_OP_SDY_SHARDING_CONSTRAINT) return true;
  return op->kind == SC_OP_CUSTOM_CALL && op->cc == SC_CC_SHARDING && op->noperands == 1 && op->nresults == 1;
}

/* Whether `op` can make data flow other than through its own rule: regions, calls, data-flow edges,
 * sharding groups, optimization barriers (build_edges looks at these ops alone). */
static bool flows(const ir_op *op) {
  return op->nregions || op->kind == SC_OP_CALL || op->kind == SC_OP_SDY_DATA_FLOW_EDGE ||
         op->kind == SC_OP_SDY_FUNC_DATA_FLOW_EDGE || op->kind == SC_OP_SDY_OTHER || is_optimization_barrier(op);
}

/* Whether `op` starts an expression split_constant_uses() may copy (constant_kind). */
static bool starts_constant(prop_engine *e, const ir_op *op);

/* Sets entry i of a prefix table of n entries to v (entries set in order, v not below the one before). */
static void prefix_set(sc_arena *a, prefix_table *t, uint32_t n, uint32_t i, uint32_t v) {
  if (!t->base && !t->wide) {
    t->base = ar_alloc(a, (n / 64 + 1) * sizeof *t->base);
    t->off = ar_alloc(a, (n + 1) * sizeof *t->off);
  }
  if (!t->wide && i % 64 == 0) t->base[i / 64] = v;
  if (!t->wide && v - t->base[i / 64] > UINT16_MAX) { /* widen: once; the narrow table is left */
    t->wide = ar_alloc(a, (n + 1) * sizeof *t->wide);
    for (uint32_t j = 0; j < i; j++) t->wide[j] = t->base[j / 64] + t->off[j];
  }
  if (t->wide) t->wide[i] = v;
  else t->off[i] = (uint16_t)(v - t->base[i / 64]);
}

/* Slots: every op's results, then the arguments of the blocks of its regions. The same walk over the ops
 * notes what later steps look for, so they need not walk every op again: the ops data flows through
 * besides their rules, the operand count, whether any constant expression starts. */
static void number_values(prop_engine *e) {
  const ir_module *m = e->m;
  uint32_t n = 0, nblocks = 0;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    prefix_set(e->a, &e->result_base, m->nops, op->id, n); /* an op's id is its position */
    n += op->nresults;
    e->noperands += op->noperands;
    if (flows(op)) SC_PUSH(e->a, e->flow_ops, op);
    if (e->opt.split_constants && !e->constant_starts) e->constant_starts = starts_constant(e, op);
    for (uint32_t r = 0; r < op->nregions; r++)
      for (uint32_t b = 0; b < ir_op_regions(op)[r]->nblocks; b++) n += ir_op_regions(op)[r]->blocks[b]->nargs, nblocks++;
  }
  e->nslots = n;
  /* the blocks' first slots, in a map made at its final size (a map grown from small left its abandoned
   * tables): an op's blocks' arguments follow its results, and every op with regions is a flow op */
  hs_name_map_init(&e->block_base, e->a, nblocks);
  for (size_t i = 0; i < e->flow_ops.n; i++) {
    const ir_op *op = e->flow_ops.v[i];
    uint32_t base = prefix_at(&e->result_base, op->id) + op->nresults;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (uint32_t b = 0; b < ir_op_regions(op)[r]->nblocks; b++) { /* keyed by the block pointer's bytes, in place */
        hs_name_map_put(&e->block_base, (const char *)&ir_op_regions(op)[r]->blocks[b], sizeof(ir_block *), base, NULL);
        base += ir_op_regions(op)[r]->blocks[b]->nargs;
      }
  }
}


/* ---- data-flow edges ----------------------------------------------------------------------------- */

static const ir_op *region_terminator(const ir_region *r) {
  if (!r || !r->nblocks) return NULL;
  const ir_block *b = r->blocks[r->nblocks - 1];
  return b->nops ? b->ops[b->nops - 1] : NULL;
}


static void add_edge(prop_engine *e, const ir_op *op, const ir_value *owner, ir_value *const *sources, uint32_t n,
                     uint32_t index, edge_kind kind) {
  uint32_t o = raw_slot(e, owner);
  if (o >= e->nslots) return;
  prop_edge edge = {op, owner, o, ar_alloc(e->a, (n ? n : 1) * sizeof(uint32_t)),
                    ar_alloc(e->a, (n ? n : 1) * sizeof(ir_value *)), 0, index, (uint8_t)kind, false, NULL};
  for (uint32_t k = 0; k < n; k++) {
    uint32_t src = raw_slot(e, sources[k]);
    if (src >= e->nslots) continue;
    edge.source_values[edge.nsources] = sources[k];
    edge.sources[edge.nsources++] = src;
  }
  SC_PUSH(e->a, e->edges, edge);
}


/* The root of slot `s`'s alias class (s itself while nothing is aliased: no table yet). */
static uint32_t find_alias(prop_engine *e, uint32_t s) {
  uint32_t *alias = e->alias, root = s;
  if (!alias) return s;
  while (alias[root] != root) root = alias[root];
  while (alias[s] != root) { /* path compression: later lookups are direct */
    uint32_t next = alias[s];
    alias[s] = root;
    s = next;
  }
  return root;
}

/* Joins the class of root `from` to root `to`. The table is made at the first join: most modules alias no
 * slot (a while's block arguments, sharding groups and data-flow edges do), and it is a word per slot. */
static void join_alias(prop_engine *e, uint32_t from, uint32_t to) {
  if (!e->alias) {
    e->alias = ar_alloc(e->a, (e->nslots + 1) * sizeof *e->alias);
    for (uint32_t k = 0; k < e->nslots; k++) e->alias[k] = k;
  }
  e->alias[from] = to;
}

/* The edges of one data-flow op (Shardy's while, case, optimization_barrier, named and manual
 * computations); a while's block arguments share their result's sharding (aliases). */
static void op_edges(prop_engine *e, const ir_op *op) {
  ir_value *src[2];
  if (op->kind == SC_OP_WHILE && op->nregions == 2) {
    const ir_op *ret = region_terminator(ir_op_regions(op)[1]);
    for (uint32_t i = 0; i < op->nresults; i++) {
      uint32_t n = 0;
      if (i < op->noperands) src[n++] = op->operands[i];
      if (ret && i < ret->noperands) src[n++] = ret->operands[i];
      add_edge(e, op, ir_op_result(op, i), src, n, i, EDGE_PLAIN);
      uint32_t owner = raw_slot(e, ir_op_result(op, i));
      for (uint32_t r = 0; r < 2; r++) {
        uint32_t t = raw_slot(e, block_arg(ir_op_regions(op)[r], i));
        if (t < e->nslots && owner < e->nslots && find_alias(e, t) != find_alias(e, owner))
          join_alias(e, find_alias(e, t), find_alias(e, owner));
      }
    }
  } else if (op->kind == SC_OP_CASE) {
    ir_value **srcs = ar_alloc(e->a, (op->nregions + 1) * sizeof *srcs);
    for (uint32_t i = 0; i < op->nresults; i++) {
      uint32_t n = 0;
      for (uint32_t r = 0; r < op->nregions; r++) {
        const ir_op *ret = region_terminator(ir_op_regions(op)[r]);
        if (ret && i < ret->noperands) srcs[n++] = ret->operands[i];
      }
      add_edge(e, op, ir_op_result(op, i), srcs, n, i, EDGE_PLAIN);
    }
  } else if (is_optimization_barrier(op)) {
    for (uint32_t i = 0; i < op->nresults && i < op->noperands; i++) add_edge(e, op, ir_op_result(op, i), &op->operands[i], 1, i, EDGE_PLAIN);
  } else if ((op->kind == SC_OP_SDY_MANUAL_COMPUTATION || op->kind == SC_OP_SDY_NAMED_COMPUTATION) && op->nregions) {
    bool manual = op->kind == SC_OP_SDY_MANUAL_COMPUTATION;
    const ir_op *ret = region_terminator(ir_op_regions(op)[0]);
    for (uint32_t i = 0; i < op->noperands; i++)
      add_edge(e, op, block_arg(ir_op_regions(op)[0], i), &op->operands[i], 1, i, manual ? EDGE_MANUAL_ARG : EDGE_PLAIN);
    for (uint32_t i = 0; ret && i < op->nresults && i < ret->noperands; i++)
      add_edge(e, op, ir_op_result(op, i), &ret->operands[i], 1, i, manual ? EDGE_MANUAL_RESULT : EDGE_PLAIN);
  }
}

/* How many edges op_edges(), call_edges() and func_edges() may make for `op` (at least as many as they do). */
static size_t edges_at_most(const prop_engine *e, const ir_op *op) {
  if (op->kind == SC_OP_WHILE || op->kind == SC_OP_CASE) return op->nresults;
  if (op->kind == SC_OP_SDY_MANUAL_COMPUTATION || op->kind == SC_OP_SDY_NAMED_COMPUTATION ||
      (op->kind == SC_OP_CALL && e->opt.through_calls))
    return (size_t)op->noperands + op->nresults;
  if (op->kind == SC_OP_SDY_FUNC_DATA_FLOW_EDGE) return 1;
  return is_optimization_barrier(op) ? op->nresults : 0;
}

/* A call's operands flow into the callee's arguments, the callee's returned values into its results. */
static void call_edges(prop_engine *e, const ir_op *op) {
  if (op->kind != SC_OP_CALL) return;
  const ir_op *callee = md_model_func(e->model, ir_op_callee(op));
  if (!callee || !callee->nregions) return;
  const ir_op *ret = region_terminator(ir_op_regions(callee)[0]);
  for (uint32_t i = 0; i < op->noperands; i++) add_edge(e, op, block_arg(ir_op_regions(callee)[0], i), &op->operands[i], 1, i, EDGE_PLAIN);
  for (uint32_t i = 0; ret && i < op->nresults && i < ret->noperands; i++)
    add_edge(e, op, ir_op_result(op, i), &ret->operands[i], 1, i, EDGE_PLAIN);
}

/* The call ops of each function (by the callee's op id), for func_data_flow_edge's sources: a counting
 * sort of the module's calls, linear in the ops. start[id]..start[id + 1] index calls. */
typedef struct {
  uint32_t *start;
  const ir_op **calls;
} call_index;

static call_index index_calls(prop_engine *e) {
  call_index x = {ar_calloc(e->a, e->m->nops + 2, sizeof(uint32_t)), NULL};
  const ir_op **callee = ar_calloc(e->a, e->m->nops + 1, sizeof *callee);
  uint32_t ncalls = 0;
  for (uint32_t i = 0; i < e->m->nops; i++) {
    const ir_op *op = e->m->ops[i];
    if (op->kind != SC_OP_CALL) continue;
    callee[i] = md_model_func(e->model, ir_op_callee(op));
    if (callee[i] && callee[i]->id < e->m->nops) x.start[callee[i]->id + 2]++, ncalls++;
  }
  for (uint32_t i = 0; i < e->m->nops; i++) x.start[i + 2] += x.start[i + 1];
  x.calls = ar_alloc(e->a, (ncalls + 1) * sizeof *x.calls);
  for (uint32_t i = 0; i < e->m->nops; i++)
    if (callee[i] && callee[i]->id < e->m->nops) x.calls[x.start[callee[i]->id + 1]++] = e->m->ops[i];
  return x;
}

/* `sdy.func_data_flow_edge` (Shardy's -sdy-add-func-data-flow-edges form, a flat call graph): the edge's
 * result holds the sharding of the data crossing a call. On a function argument its sources are that
 * operand of every call to the function; on a call's result, the callee's returned value. */
static void func_edges(prop_engine *e) {
  call_index calls = {NULL, NULL};
  for (size_t i = 0; i < e->flow_ops.n; i++) {
    const ir_op *op = e->flow_ops.v[i];
    if (op->kind != SC_OP_SDY_FUNC_DATA_FLOW_EDGE || op->noperands != 1 || op->nresults != 1) continue;
    const ir_value *in = op->operands[0];
    if (!in) continue;
    if (!ir_value_def(in) && ir_value_block(in) && ir_value_block(in)->parent && ir_value_block(in)->parent->parent) { /* a function's argument */
      const ir_op *fn = ir_value_block(in)->parent->parent;
      if (fn->kind != SC_OP_FUNC || fn->id >= e->m->nops) continue;
      if (!calls.start) calls = index_calls(e);
      uint32_t from = calls.start[fn->id], to = calls.start[fn->id + 1];
      ir_value **src = ar_alloc(e->a, (to - from + 1) * sizeof *src);
      uint32_t n = 0;
      for (uint32_t k = from; k < to; k++)
        if (in->index < calls.calls[k]->noperands) src[n++] = calls.calls[k]->operands[in->index];
      if (n) add_edge(e, op, ir_op_result(op, 0), src, n, in->index, EDGE_PLAIN);
    } else if (ir_value_def(in) && ir_value_def(in)->kind == SC_OP_CALL) { /* a call's result */
      const ir_op *callee = md_model_func(e->model, ir_op_callee(ir_value_def(in)));
      const ir_op *ret = callee && callee->nregions ? region_terminator(ir_op_regions(callee)[0]) : NULL;
      if (ret && in->index < ret->noperands) add_edge(e, op, ir_op_result(op, 0), &ret->operands[in->index], 1, in->index, EDGE_PLAIN);
    }
  }
}

/* The values of one `sdy.sharding_group` (any function of the module) hold one sharding: one slot. */
static void share_sharding_groups(prop_engine *e) {
  hs_name_map first; /* group id (its 8 bytes) -> the raw slot of its first value */
  bool ready = false;
  for (size_t i = 0; i < e->flow_ops.n; i++) {
    const ir_op *op = e->flow_ops.v[i];
    int64_t id;
    if (op->noperands != 1 || !ir_span_eq(ir_op_name(op), "sdy.sharding_group") || !md_model_sharding_group_id(e->model, op, &id))
      continue;
    uint32_t s = raw_slot(e, op->operands[0]);
    if (s >= e->nslots) continue;
    if (!ready) {
      hs_name_map_init(&first, e->a, e->m->nops + 1);
      e->grouped = ar_calloc(e->a, e->nslots + 1, 1);
      ready = true;
    }
    e->grouped[s] = 1;
    uint32_t root;
    if (!hs_name_map_get(&first, (const char *)&id, sizeof id, &root)) {
      int64_t *key = ar_alloc(e->a, sizeof *key);
      *key = id;
      hs_name_map_put(&first, (const char *)key, sizeof *key, s, NULL);
    } else if (find_alias(e, s) != find_alias(e, root)) {
      join_alias(e, find_alias(e, s), find_alias(e, root));
    }
  }
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

/* The (slot, edge) pairs of every edge's owner and sources, sorted (slot_edges() reads them). */
static void index_edges(prop_engine *e) {
  uint32_t n = 0;
  for (size_t k = 0; k < e->edges.n; k++) n += 1 + e->edges.v[k].nsources;
  e->edge_slot_bits = ar_calloc(e->a, e->nslots / 64 + 1, sizeof *e->edge_slot_bits);
  e->edge_slots = ar_alloc(e->a, (n + 1) * sizeof *e->edge_slots);
  e->edge_ids = ar_alloc(e->a, (n + 1) * sizeof *e->edge_ids);
  ar_mark_t mark = ar_mark(e->a);
  uint64_t *pairs = ar_alloc(e->a, (n + 1) * sizeof *pairs), i = 0;
  for (size_t k = 0; k < e->edges.n; k++) {
    const prop_edge *edge = &e->edges.v[k];
    pairs[i++] = (uint64_t)edge->owner << 32 | k;
    for (uint32_t j = 0; j < edge->nsources; j++) pairs[i++] = (uint64_t)edge->sources[j] << 32 | k;
  }
  ar_step(e->a, n);
  qsort(pairs, n, sizeof *pairs, cmp_u64);
  for (uint32_t r = 0; r < n; r++) {
    e->edge_slots[r] = (uint32_t)(pairs[r] >> 32);
    e->edge_ids[r] = (uint32_t)pairs[r];
    sc_bit_set(e->edge_slot_bits, e->edge_slots[r]);
  }
  e->nedge_refs = n;
  ar_rewind(e->a, mark);
}

static void build_edges(prop_engine *e) {
  if (!e->flow_ops.n) return; /* data flows through op rules alone: no aliases, no edges */
  /* an explicit `sdy.data_flow_edge %owner` (Shardy's -sdy-add-data-flow-edges form) holds its owner's
   * sharding: the owner's uses are the edge's */
  for (size_t i = 0; i < e->flow_ops.n; i++) {
    const ir_op *op = e->flow_ops.v[i];
    if (op->kind != SC_OP_SDY_DATA_FLOW_EDGE || op->noperands != 1 || op->nresults != 1) continue;
    uint32_t in = raw_slot(e, op->operands[0]), out = raw_slot(e, ir_op_result(op, 0));
    if (in < e->nslots && out < e->nslots && find_alias(e, out) != in) join_alias(e, find_alias(e, in), find_alias(e, out));
  }
  share_sharding_groups(e);
  /* room for every edge at once, not an array grown by doubling (as much again in abandoned copies) */
  size_t most = 0;
  for (size_t i = 0; i < e->flow_ops.n; i++) most += edges_at_most(e, e->flow_ops.v[i]);
  e->edges.v = ar_calloc(e->a, most + 1, sizeof *e->edges.v);
  e->edges.cap = most + 1;
  for (size_t i = 0; i < e->flow_ops.n; i++) op_edges(e, e->flow_ops.v[i]);
  func_edges(e);
  if (e->opt.through_calls)
    for (size_t i = 0; i < e->flow_ops.n; i++) call_edges(e, e->flow_ops.v[i]);
  for (uint32_t s = 0; e->alias && s < e->nslots; s++) {
    e->alias[s] = find_alias(e, s);
    e->aliased |= e->alias[s] != s;
  }
  /* sources and owners through aliases, then the slot -> edges index */
  for (size_t k = 0; k < e->edges.n; k++) {
    prop_edge *edge = &e->edges.v[k];
    edge->owner = alias_of(e, edge->owner);
    for (uint32_t j = 0; j < edge->nsources; j++) edge->sources[j] = alias_of(e, edge->sources[j]);
  }
  index_edges(e);
}

/* ---- manual axes --------------------------------------------------------------------------------- */

static bool axis_is_manual(const md_sdy_op_info *x, const prop_sharding *s, uint32_t axis) {
  ir_span name = s->mesh->axes[axis].name;
  for (uint32_t i = 0; i < x->nmanual_axes; i++)
    if (x->manual_axes[i].name.n == name.n && !memcmp(x->manual_axes[i].name.p, name.p, name.n)) return true;
  return false;
}

static prop_axes filter_free(sc_arena *a, const md_sdy_op_info *x, const prop_sharding *s, prop_axes in) {
  prop_axes out = {ar_alloc(a, (in.n ? in.n : 1) * sizeof *out.v), 0};
  for (uint32_t i = 0; i < in.n; i++)
    if (!axis_is_manual(x, s, in.v[i].axis)) out.v[out.n++] = in.v[i];
  return out;
}

/* Shardy's eraseManualAxes: each dimension without its leading manual axes; free replicated/unreduced. */
static sharding_ref erase_manual(sc_arena *a, const ir_op *op, const md_model *model, sharding_ref s) {
  const md_sdy_op_info *x = md_info_sdy_op(md_model_op(model, op));
  if (!s || !x->nmanual_axes) return s;
  prop_sharding *r = prop_sharding_open(a, s->mesh, s->mesh_name, s->rank);
  for (uint32_t d = 0; d < s->rank; d++) {
    uint32_t k = 0;
    while (k < s->dims[d].axes.n && axis_is_manual(x, s, s->dims[d].axes.v[k].axis)) k++;
    r->dims[d] = s->dims[d];
    if (k) {
      r->dims[d].axes.v += k;
      r->dims[d].axes.n -= k;
    }
  }
  r->replicated = filter_free(a, x, s, s->replicated);
  r->unreduced = filter_free(a, x, s, s->unreduced);
  r->unreduced_op = s->unreduced_op;
  return r;
}

/* A tensor value (Shardy's ShapedType; tokens and tuples have no sharding of their own to clean up). */
static bool is_tensor(const ir_value *v) { return v && ir_span_starts(ir_value_type(v), "tensor<"); }

/* Whether axis `x` comes before `y` in mesh order (axis, then sub-axis pre-size). */
static bool axis_before(prop_axis x, prop_axis y) {
  return x.axis < y.axis || (x.axis == y.axis && (x.pre ? x.pre : 1) < (y.pre ? y.pre : 1));
}

static int cmp_axis(const void *x, const void *y) {
  const prop_axis *a = x, *b = y;
  return axis_before(*a, *b) ? -1 : axis_before(*b, *a) ? 1 : 0;
}

/* The pieces of mesh axis `k` (size `full`) that none of `on_k` (the axes on `k` a sharding uses, in
 * mesh order) covers, appended to `out` as sub-axes (the whole axis when nothing covers any of it). */
static uint32_t uncovered_pieces(const prop_axis *on_k, uint32_t n, uint32_t k, int64_t full, prop_axis *out) {
  uint32_t npieces = 0;
  int64_t at = 1;
  for (uint32_t i = 0; i <= n; i++) {
    if (i < n && !on_k[i].pre) return 0; /* the whole axis is used */
    int64_t next = i < n ? on_k[i].pre : full;
    if (next > at && next % at == 0) out[npieces++] = (prop_axis){k, next / at == full ? 0 : at, next / at};
    if (i < n && on_k[i].pre * on_k[i].size > at) at = on_k[i].pre * on_k[i].size;
  }
  return npieces;
}

/* Shardy's -sdy-manual-axes-cleanup (the pipeline's import): a manual axis an in/out sharding of a
 * manual computation does not use becomes one of its replicated axes (in mesh order), so propagation
 * cannot move it into a dimension from outside. A sharding on the empty mesh moves to `common`'s mesh
 * (the computation's other shardings') first. */
static sharding_ref add_unused_manual_axes(sc_arena *a, const ir_op *op, const md_model *model, sharding_ref s,
                                           sharding_ref common) {
  const md_sdy_op_info *x = md_info_sdy_op(md_model_op(model, op));
  if (!s || !x->nmanual_axes || !s->mesh) return s;
  if (!s->mesh->naxes && !s->mesh->maximal && common && common->mesh->naxes) { /* on the empty mesh: */
    prop_sharding *moved = prop_sharding_copy(a, s); /* no axes, so the computation's mesh takes it */
    moved->mesh = common->mesh;
    moved->mesh_name = common->mesh_name;
    s = moved;
  }
  uint32_t nused = s->replicated.n + s->unreduced.n, nrep = s->replicated.n;
  for (uint32_t d = 0; d < s->rank; d++) nused += s->dims[d].axes.n;
  prop_axis *used = ar_alloc(a, (nused + 1) * sizeof *used); /* every axis the sharding uses, in mesh order */
  nused = 0;
  for (uint32_t d = 0; d < s->rank; d++)
    for (uint32_t i = 0; i < s->dims[d].axes.n; i++) used[nused++] = s->dims[d].axes.v[i];
  for (uint32_t i = 0; i < s->replicated.n; i++) used[nused++] = s->replicated.v[i];
  for (uint32_t i = 0; i < s->unreduced.n; i++) used[nused++] = s->unreduced.v[i];
  qsort(used, nused, sizeof *used, cmp_axis);
  /* each manual axis once: at most (its used sub-axes + 1) pieces, so nused + naxes bounds them all */
  prop_axis *rep = ar_alloc(a, (s->replicated.n + nused + s->mesh->naxes + 1) * sizeof *rep);
  if (s->replicated.n) memcpy(rep, s->replicated.v, s->replicated.n * sizeof *rep);
  bool *done = ar_calloc(a, s->mesh->naxes + 1, sizeof *done);
  for (uint32_t i = 0; i < x->nmanual_axes; i++) {
    int k = md_mesh_axis_index(s->mesh, x->manual_axes[i].name);
    if (k < 0 || done[k]) continue;
    done[k] = true;
    uint32_t lo = 0, hi = nused; /* the first used axis on k or after it */
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (used[mid].axis < (uint32_t)k) lo = mid + 1;
      else hi = mid;
    }
    uint32_t n = 0;
    while (lo + n < nused && used[lo + n].axis == (uint32_t)k) n++;
    nrep += uncovered_pieces(used + lo, n, (uint32_t)k, s->mesh->axes[k].size, rep + nrep);
  }
  if (nrep == s->replicated.n) return s;
  qsort(rep, nrep, sizeof *rep, cmp_axis); /* mesh order */
  uint32_t n = 0; /* adjacent pieces of one axis merge ("x":(1)2, "x":(2)2 -> "x" of size 4) */
  for (uint32_t i = 0; i < nrep; i++) {
    prop_axis *last = n ? &rep[n - 1] : NULL;
    if (last && last->axis == rep[i].axis && last->pre && rep[i].pre && last->pre * last->size == rep[i].pre) {
      last->size *= rep[i].size;
      if (last->pre == 1 && last->size == s->mesh->axes[last->axis].size) last->pre = 0;
    } else {
      rep[n++] = rep[i];
    }
  }
  prop_sharding *r = prop_sharding_copy(a, s);
  r->replicated.v = rep;
  r->replicated.n = n;
  return r;
}

/* Shardy's addFreeAxesToManualComputationSharding: `outer`'s leading manual axes, then `inner`'s axes,
 * open/closed and priority as `inner`, replicated/unreduced as `outer`. */
sharding_ref prop_engine_add_free(sc_arena *a, const ir_op *op, const md_model *model, sharding_ref outer, sharding_ref inner) {
  const md_sdy_op_info *x = md_info_sdy_op(md_model_op(model, op));
  if (!inner) return outer;
  if (!outer || outer->rank != inner->rank) return inner;
  prop_sharding *r = prop_sharding_open(a, inner->mesh, inner->mesh_name, inner->rank);
  for (uint32_t d = 0; d < inner->rank; d++) {
    uint32_t k = 0;
    while (k < outer->dims[d].axes.n && axis_is_manual(x, outer, outer->dims[d].axes.v[k].axis)) k++;
    uint32_t n = k + inner->dims[d].axes.n;
    prop_axis *v = ar_alloc(a, (n ? n : 1) * sizeof *v);
    if (k) memcpy(v, outer->dims[d].axes.v, k * sizeof *v);
    if (inner->dims[d].axes.n) memcpy(v + k, inner->dims[d].axes.v, inner->dims[d].axes.n * sizeof *v);
    r->dims[d].axes.v = v;
    r->dims[d].axes.n = n;
    r->dims[d].closed = inner->dims[d].closed;
    r->dims[d].priority = inner->dims[d].priority;
  }
  r->replicated = outer->replicated;
  r->unreduced = outer->unreduced;
  r->unreduced_op = outer->unreduced_op;
  return r;
}

/* ---- the pipeline import's constant splitter ----------------------------------------------------
 * Shardy copies every constant expression (a constant or iota, or a pure element-wise op, broadcast,
 * reshape or slice of constant expressions) and every broadcast of a scalar once per use, so uses never
 * share a sharding through them. Here the first use reads the expression itself and every later use of
 * a non-scalar one gets a slot of its own for its copy, seeded with the expression's written sharding.
 * Ops whose operands flow along data-flow edges or calls (regions, terminators, calls, optimization
 * barriers) read the expression itself. */
enum { CE_NONE = 0, CE_CONSTANT, CE_SCALAR_EXPANSION };

static bool elementwise_kind(prop_engine *e, const ir_op *op);
static bool is_scalar_tensor(sc_arena *a, ir_span type);
/* What name_class() says of an op's name (bare, without the generic form's quotes; mhlo. and HLO opcodes
 * as the StableHLO ops XLA's import makes of them). */
enum {
  NC_KNOWN = 1,
  NC_ELEMENTWISE = 2,      /* a stablehlo Elementwise / BroadcastingElementwise op */
  NC_BITCAST_CONVERT = 4,  /* element-wise when its shapes agree */
  NC_RESHAPE = 8,
  NC_TRANSPOSE = 16,
  NC_DYNAMIC_SLICE = 32,   /* dynamic_slice, dynamic_update_slice */
  NC_BROADCAST = 64,       /* broadcast_in_dim */
  NC_SLICE = 128,
  NC_CONSTANT = 256        /* stablehlo.constant, sdy.constant, stablehlo.iota */
};

static uint16_t classify_name(ir_span n) {
  static const char *const elementwise[] = {
      "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex", "convert", "cosine",
      "count_leading_zeros", "divide", "exponential", "exponential_minus_one", "floor", "imag", "is_finite", "log",
      "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real",
      "reduce_precision", "remainder", "round_nearest_afz", "round_nearest_even", "rsqrt", "select", "shift_left",
      "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor"};
  if (ir_span_eq(n, "sdy.constant")) return NC_CONSTANT;
  if (!ir_span_starts(n, "stablehlo.")) return 0;
  ir_span op = ir_span_of(n.p + 10, n.n - 10);
  static const struct {
    const char *name;
    uint16_t bits;
  } others[] = {{"bitcast_convert", NC_BITCAST_CONVERT}, {"reshape", NC_RESHAPE}, {"transpose", NC_TRANSPOSE},
                {"dynamic_slice", NC_DYNAMIC_SLICE},      {"dynamic_update_slice", NC_DYNAMIC_SLICE},
                {"broadcast_in_dim", NC_BROADCAST},        {"slice", NC_SLICE},
                {"constant", NC_CONSTANT},                 {"iota", NC_CONSTANT}};
  for (size_t i = 0; i < sizeof others / sizeof *others; i++)
    if (ir_span_eq(op, others[i].name)) return others[i].bits;
  for (size_t i = 0; i < sizeof elementwise / sizeof *elementwise; i++)
    if (ir_span_eq(op, elementwise[i])) return NC_ELEMENTWISE;
  return 0;
}

/* The NC_* bits of `op`'s name, classified once per distinct name. */
static uint16_t name_class(prop_engine *e, const ir_op *op) {
  uint16_t *known = op->name_id && op->name_id <= e->m->nop_names ? &e->name_bits[op->name_id] : NULL;
  if (known && *known) return *known & (uint16_t)~NC_KNOWN;
  if (!ir_op_bare_name(op).n) return 0;
  char buf[96];
  uint16_t bits = classify_name(prop_stablehlo_name(op, buf, sizeof buf)); /* mhlo and HLO ops as XLA imports them */
  if (known) *known = bits | NC_KNOWN;
  return bits;
}

static bool constant_preserving(prop_engine *e, const ir_op *op) {
  if (op->nregions || ir_op_kind_is_sdy(op->kind)) return false;
  return (name_class(e, op) & (NC_BROADCAST | NC_RESHAPE | NC_SLICE)) || elementwise_kind(e, op);
}

static bool starts_constant(prop_engine *e, const ir_op *op) {
  return (name_class(e, op) & (NC_CONSTANT | NC_BROADCAST)) || (!op->noperands && constant_preserving(e, op));
}

static uint8_t constant_kind(prop_engine *e, const ir_op *op, const uint8_t *kinds) {
  uint16_t c = name_class(e, op);
  if (c & NC_CONSTANT) return CE_CONSTANT;
  if (constant_preserving(e, op)) {
    bool all = true;
    for (uint32_t k = 0; k < op->noperands && all; k++)
      all = op->operands[k] && ir_value_def(op->operands[k]) && kinds[ir_value_def(op->operands[k])->id] == CE_CONSTANT;
    if (all) return CE_CONSTANT;
  }
  if ((c & NC_BROADCAST) && op->noperands == 1 && op->operands[0] &&
      is_scalar_tensor(e->a, ir_value_type(op->operands[0])))
    return CE_SCALAR_EXPANSION;
  return CE_NONE;
}

/* Whether `op`'s operands reach it through propagate_op, or as the returned values of a function no call
 * reads (propagate_func_results), not along data-flow edges or calls. */
static bool reads_by_rule(const ir_op *op, const uint8_t *called) {
  if (op->kind == SC_OP_RETURN)
    return op->parent_op && op->parent_op->kind == SC_OP_FUNC && !called[op->parent_op->id];
  return !op->nregions && op->kind != SC_OP_CALL && !is_optimization_barrier(op) && op->nresults &&
         !ir_span_eq(ir_op_name(op), "sdy.sharding_group");
}

/* Per op id: a function some call names. */
static uint8_t *called_funcs(prop_engine *e) {
  uint8_t *called = ar_calloc(e->a, e->m->nops + 1, 1);
  for (uint32_t i = 0; i < e->m->nops; i++) {
    const ir_op *callee = e->m->ops[i]->kind == SC_OP_CALL ? md_model_func(e->model, ir_op_callee(e->m->ops[i])) : NULL;
    if (callee && callee->id < e->m->nops) called[callee->id] = 1;
  }
  return called;
}

static void split_constant_uses(prop_engine *e) {
  const ir_module *m = e->m;
  /* an expression to split starts at a constant, a broadcast (of a scalar) or an element-wise op without
   * operands (constant_kind): without one there is nothing to split */
  if (!e->constant_starts) return; /* number_values looked */
  ar_mark_t mark = ar_mark(e->a);
  uint8_t *kinds = ar_calloc(e->a, m->nops + 1, 1), *used = ar_calloc(e->a, e->nslots + 1, 1), *called = called_funcs(e);
  uint32_t ncopies = 0, nops_with = 0, noperands_with = 0;
  for (uint32_t pass = 0; pass < 2; pass++) { /* count, then assign */
    memset(used, 0, e->nslots + 1);
    uint32_t next_slot = e->nslots, at = 0;
    for (uint32_t i = 0; i < m->nops; i++) {
      const ir_op *op = m->ops[i];
      if (!pass) kinds[op->id] = op->kind == SC_OP_FUNC ? CE_NONE : constant_kind(e, op, kinds);
      if (kinds[op->id] != CE_NONE && kinds[op->id] != CE_CONSTANT) continue; /* a scalar broadcast's operand stays */
      bool own = false;
      for (uint32_t k = 0; k < op->noperands; k++) {
        const ir_value *v = op->operands[k];
        if (!v || !ir_value_def(v) || !kinds[ir_value_def(v)->id] || is_scalar_tensor(e->a, ir_value_type(v))) continue;
        uint32_t s = raw_slot(e, v);
        if (s >= e->nslots) continue;
        if (!used[s] || !reads_by_rule(op, called)) {
          used[s] = 1;
          continue;
        }
        if (!pass) {
          ncopies++;
          own = true;
          continue;
        }
        if (e->own_copy_at[op->id] == UINT32_MAX) {
          e->own_copy_at[op->id] = at;
          for (uint32_t j = 0; j < op->noperands; j++) e->own_copy[at + j] = UINT32_MAX;
          at += op->noperands;
        }
        e->own_copy[e->own_copy_at[op->id] + k] = next_slot;
        e->own_copy_value[next_slot - e->nslots] = v;
        next_slot++;
      }
      if (own) nops_with++, noperands_with += op->noperands;
    }
    if (pass || !ncopies) break;
    e->own_copy_at = ar_alloc(e->a, (m->nops + 1) * sizeof *e->own_copy_at);
    memset(e->own_copy_at, 0xff, (m->nops + 1) * sizeof *e->own_copy_at);
    e->own_copy = ar_alloc(e->a, (noperands_with + 1) * sizeof *e->own_copy);
    e->own_copy_value = ar_alloc(e->a, (ncopies + 1) * sizeof *e->own_copy_value);
    (void)nops_with;
  }
  if (!ncopies) {
    ar_rewind(e->a, mark);
    return;
  }
  e->ncopy_slots = ncopies;
  e->nslots += ncopies;
}

/* Every operand's slot (operand_slots, per op from operand_start: visits read them from there), and per
 * slot the ops reading it (CSR, counted from that table without walking the ops again). */
static void index_uses(prop_engine *e) {
  const ir_module *m = e->m;
  prefix_table start = {NULL, NULL, NULL};
  uint32_t *slots = ar_alloc(e->a, (e->noperands + 1) * sizeof *slots);
  e->users = ar_alloc(e->a, (e->noperands + 1) * sizeof *e->users); /* at most one per operand */
  prefix_set(e->a, &e->use_start, e->nslots + 1, 0, 0); /* the tables, before the scratch */
  prefix_set(e->a, &start, m->nops + 1, 0, 0);
  ar_mark_t scratch = ar_mark(e->a); /* the per-slot counts, then fill positions */
  uint32_t *at = ar_calloc(e->a, e->nslots + 2, sizeof *at);
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    prefix_set(e->a, &start, m->nops + 1, i, n);
    for (uint32_t k = 0; k < op->noperands && n < e->noperands; k++) {
      uint32_t s = operand_slot(e, op, k);
      slots[n++] = s;
      if (s < e->nslots) at[s + 2]++;
    }
  }
  prefix_set(e->a, &start, m->nops + 1, m->nops, n);
  for (uint32_t s = 0; s < e->nslots; s++) {
    at[s + 2] += at[s + 1];
    prefix_set(e->a, &e->use_start, e->nslots + 1, s + 1, at[s + 2]);
  }
  for (uint32_t i = 0, j = 0; i < m->nops; i++)
    for (uint32_t end = prefix_at(&start, i + 1); j < end; j++)
      if (slots[j] < e->nslots) e->users[at[slots[j] + 1]++] = i; /* an op's id is its position */
  if (!start.wide && !e->use_start.wide) ar_rewind(e->a, scratch); /* a table widened after the mark stays */
  e->operand_start = start;
  e->operand_slots = slots;
}

static const ir_op *value_owner(const ir_value *v) {
  return v && ir_value_def(v) ? ir_value_def(v) : v && ir_value_block(v) && ir_value_block(v)->parent ? ir_value_block(v)->parent->parent : NULL;
}

/* The op whose results or region arguments hold raw slot `s` (not a copy's): op i holds
 * [result_base[i], result_base[i + 1]), so it is the last op whose first slot is at or before `s`. */
static uint32_t slot_op(const prop_engine *e, uint32_t s) {
  uint32_t lo = 0, hi = e->m->nops;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (prefix_at(&e->result_base, mid) <= s) lo = mid;
    else hi = mid;
  }
  return lo;
}

static uint32_t first_copy_slot(const prop_engine *e) { return e->nslots - e->ncopy_slots; }

/* The value raw slot `s` was made for: a result, a region's argument, or a copied expression's value. */
static const ir_value *slot_value(const prop_engine *e, uint32_t s) {
  if (s >= e->nslots || !e->m->nops) return NULL;
  if (s >= first_copy_slot(e)) return e->own_copy_value[s - first_copy_slot(e)];
  const ir_op *op = e->m->ops[slot_op(e, s)];
  uint32_t k = s - prefix_at(&e->result_base, op->id);
  if (k < op->nresults) return ir_op_result(op, k);
  k -= op->nresults;
  for (uint32_t r = 0; r < op->nregions; r++)
    for (uint32_t b = 0; b < ir_op_regions(op)[r]->nblocks; k -= ir_op_regions(op)[r]->blocks[b]->nargs, b++)
      if (k < ir_op_regions(op)[r]->blocks[b]->nargs) return ir_op_regions(op)[r]->blocks[b]->args[k];
  return NULL;
}

/* The op that defines raw slot `s`'s value or owns its block (value_owner of slot_value). */
static uint32_t slot_owner(const prop_engine *e, uint32_t s) {
  if (s >= first_copy_slot(e)) {
    const ir_op *def = value_owner(slot_value(e, s));
    return def ? def->id : UINT32_MAX;
  }
  return slot_op(e, s);
}

/* Per slot, the ops that define its values or own their blocks (when slots are aliased). */
static void index_owners(prop_engine *e) {
  if (!e->aliased) return; /* a slot's one value's owner: slot_owner() (queue_readers) */
  e->owner_start = ar_calloc(e->a, e->nslots + 2, sizeof *e->owner_start);
  e->owners = ar_alloc(e->a, (e->nslots + 1) * sizeof *e->owners);
  uint32_t *owner = ar_alloc(e->a, (e->nslots + 1) * sizeof *owner);
  for (uint32_t i = 0; i < e->m->nops; i++) { /* op i holds [result_base[i], result_base[i + 1]) */
    uint32_t end = i + 1 < e->m->nops ? prefix_at(&e->result_base, i + 1) : first_copy_slot(e);
    for (uint32_t raw = prefix_at(&e->result_base, i); raw < end; raw++) owner[raw] = i;
  }
  for (uint32_t raw = first_copy_slot(e); raw < e->nslots; raw++) owner[raw] = slot_owner(e, raw);
  for (uint32_t raw = 0; raw < e->nslots; raw++)
    if (owner[raw] != UINT32_MAX) e->owner_start[e->alias[raw] + 2]++;
  for (uint32_t s = 0; s < e->nslots; s++) e->owner_start[s + 2] += e->owner_start[s + 1];
  for (uint32_t raw = 0; raw < e->nslots; raw++)
    if (owner[raw] != UINT32_MAX) e->owners[e->owner_start[e->alias[raw] + 1]++] = owner[raw];
}

/* `s` (built since `mark`) as the engine keeps it: an equal sharding kept before, with `s` forgotten, or
 * `s` itself, now kept. */
static sharding_ref keep_shared(prop_engine *e, ar_mark_t mark, sharding_ref s) {
  sharding_ref kept = prop_sharding_set_find(&e->shardings, s);
  if (!kept) return prop_sharding_set_add(&e->shardings, s);
  ar_rewind(e->a, mark);
  return kept;
}

/* The engine's sharding for a written one. Occurrences of one text share their model parse (`same_as`),
 * so each distinct text is converted once. */
static sharding_ref seed_of(prop_engine *e, const md_sharding *s) {
  if (!s) return NULL;
  uint32_t k;
  const char *key = (const char *)&s->same_as; /* the first occurrence's address, as bytes */
  if (s->same_as && hs_name_map_get(&e->seeds, key, sizeof s->same_as, &k)) return e->seeded.v[k];
  ar_mark_t mark = ar_mark(e->a);
  const prop_sharding *p = prop_sharding_from_model(e->a, s, md_model_sharding_mesh(e->model, s));
  if (e->opt.remove_size_one_axes) p = prop_sharding_without_size_one_axes(e->a, p);
  sharding_ref kept = keep_shared(e, mark, p);
  if (s->same_as) {
    hs_name_map_make_room(&e->seeds, e->a);
    SC_PUSH(e->a, e->seeded, kept);
    hs_name_map_put(&e->seeds, key, sizeof s->same_as, (uint32_t)e->seeded.n - 1, NULL);
  }
  return kept;
}

/* The functions whose results are propagated from their return values: @main, or the only function,
 * or else every public one. */
static void find_entry_funcs(prop_engine *e) {
  const ir_module *m = e->m;
  e->entry_funcs = ar_alloc(e->a, (m->nfuncs ? m->nfuncs : 1) * sizeof *e->entry_funcs);
  e->entry_func_index = ar_alloc(e->a, (m->nfuncs ? m->nfuncs : 1) * sizeof *e->entry_func_index);
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (ir_span_eq(ir_op_sym_name(m->funcs[i]), "main")) {
      e->entry_func_index[e->nentry_funcs] = i;
      e->entry_funcs[e->nentry_funcs++] = m->funcs[i];
      return;
    }
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (m->nfuncs == 1 || !ir_span_eq(ir_op_visibility(m->funcs[i]), "private")) {
      e->entry_func_index[e->nentry_funcs] = i;
      e->entry_funcs[e->nentry_funcs++] = m->funcs[i];
    }
}

/* The first of a computation's in/out shardings on a mesh with axes (Shardy's getCommonMeshOrRef). */
static sharding_ref common_mesh_sharding(prop_engine *e, const md_annotation *in, const md_annotation *out) {
  for (uint32_t side = 0; side < 2; side++) {
    const md_annotation *list = side ? out : in;
    for (uint32_t k = 0; k < list->nvalues; k++) {
      sharding_ref s = seed_of(e, list->values[k]);
      if (s && s->mesh && s->mesh->naxes) return s;
    }
  }
  return NULL;
}

/* The rank of the tensor type `type`, -1 when it is not one or unranked. Constraints repeat a few types
 * thousands of times: the last type's text answers again without parsing (and parsing keeps no memory). */
static int32_t type_rank(prop_engine *e, ir_span type) {
  if (e->last_type.n && ir_span_same(e->last_type, type)) return e->last_type_rank;
  ir_tensor_type tt;
  ar_mark_t mark = ar_mark(e->a);
  int32_t rank = ir_parse_tensor_type(e->a, type, &tt) && tt.rank >= 0 ? tt.rank : -1;
  ar_rewind(e->a, mark);
  e->last_type = type;
  e->last_type_rank = rank;
  return rank;
}

/* A GSPMD `{replicated}` or `{manual}` sharding as XLA's import reads it: on the module's mesh, every
 * dimension replicated and closed (the value's rank: the text has none). NULL without a mesh, and in a
 * Shardy round trip, whose `{replicated}` may stand for an open sharding. */
static sharding_ref gspmd_replicated(prop_engine *e, ir_span type) {
  const md_mesh *mesh = e->model->effective;
  int32_t rank = type.n ? type_rank(e, type) : -1;
  if (!mesh || mesh->maximal || rank < 0 || e->model->sdy_round_trip) return NULL;
  ar_mark_t mark = ar_mark(e->a);
  prop_sharding *p = ar_calloc(e->a, 1, sizeof *p);
  p->mesh = mesh;
  p->mesh_name = mesh->name;
  p->rank = (uint32_t)rank;
  p->dims = ar_calloc(e->a, rank ? (uint32_t)rank : 1, sizeof *p->dims);
  for (int32_t d = 0; d < rank; d++) p->dims[d].closed = true, p->dims[d].priority = -1;
  return keep_shared(e, mark, p);
}

/* The engine's sharding for `s` written on a value of `type`: NULL when its rank is not the type's (an
 * invalid sharding, which the rules report, places nothing; a maximal mesh's rank-0 sharding fits any). */
static sharding_ref seed_fitting(prop_engine *e, const md_sharding *s, ir_span type) {
  if (s && s->source == SC_SHARDING_FROM_GSPMD && (s->kind == SC_SHARDING_REPLICATED || s->kind == SC_SHARDING_MANUAL))
    return gspmd_replicated(e, type);
  sharding_ref p = seed_of(e, s);
  if (!p || !type.n || !p->mesh || p->mesh->maximal) return p;
  int32_t rank = type_rank(e, type);
  return rank >= 0 && (uint32_t)rank != p->rank ? NULL : p;
}

/* A GSPMD `@Sharding` custom call's sharding with the dimensions its backend_config lists as
 * `unspecified_dims=[i,...]` open, as XLA's import makes them; `s` itself otherwise. */
static sharding_ref open_unspecified_dims(prop_engine *e, const ir_op *op, sharding_ref s) {
  ar_mark_t mark = ar_mark(e->a);
  uint32_t *dims, n;
  if (!s || !md_sharding_op_unspecified_dims(e->a, op, &dims, &n) || !n) {
    ar_rewind(e->a, mark);
    return s;
  }
  prop_sharding *open = prop_sharding_copy(e->a, s);
  for (uint32_t k = 0; k < n; k++)
    if (dims[k] < open->rank) open->dims[dims[k]].closed = false;
  return keep_shared(e, mark, open);
}

/* The seeded shardings (initial_of). */
static void keep_initial(prop_engine *e) {
  uint32_t nwords = e->nslots / 64 + 1;
  e->initial_bits = ar_calloc(e->a, nwords, sizeof *e->initial_bits);
  e->initial_rank = ar_alloc(e->a, nwords * sizeof *e->initial_rank);
  for (uint32_t k = 0; k < e->nslots; k++)
    if (e->sh[k]) sc_bit_set(e->initial_bits, k);
  uint32_t n = sc_bit_counts(e->initial_bits, nwords, e->initial_rank);
  e->initial_sh = ar_alloc(e->a, (n + 1) * sizeof *e->initial_sh);
  for (uint32_t k = 0, i = 0; k < e->nslots; k++)
    if (e->sh[k]) e->initial_sh[i++] = e->sh[k];
}

/* A manual or named computation with a body (its written shardings are kept: e->globals). */
static bool is_computation(const ir_op *op) {
  return (op->kind == SC_OP_SDY_MANUAL_COMPUTATION || op->kind == SC_OP_SDY_NAMED_COMPUTATION) && op->nregions;
}

static void seed(prop_engine *e) {
  const ir_module *m = e->m;
  e->sh = ar_calloc(e->a, e->nslots + 1, sizeof *e->sh);
  e->origin = ar_alloc(e->a, (e->nslots + 1) * sizeof *e->origin);
  for (md_annotated it = md_annotated_first(e->model); it.op; md_annotated_next(e->model, &it)) {
    const ir_op *op = it.op; /* only annotated ops have result shardings */
    for (uint32_t r = 0; r < op->nresults; r++) {
      e->sh[prefix_at(&e->result_base, op->id) + r] = seed_fitting(e, md_model_result_sharding(e->model, op, r), ir_value_type(ir_op_result(op, r)));
      if (op->cc == SC_CC_SHARDING && is_constraint(op))
        e->sh[prefix_at(&e->result_base, op->id) + r] = open_unspecified_dims(e, op, e->sh[prefix_at(&e->result_base, op->id) + r]);
    }
  }
  size_t ncomputations = 0; /* the globals' table and index at their final size */
  for (size_t i = 0; i < e->flow_ops.n; i++) ncomputations += is_computation(e->flow_ops.v[i]);
  hs_name_map_init(&e->globals_index, e->a, ncomputations);
  e->globals.v = ar_alloc(e->a, (ncomputations + 1) * sizeof *e->globals.v);
  e->globals.cap = ncomputations + 1;
  for (size_t i = 0; i < e->flow_ops.n; i++) { /* computations have regions: flow ops */
    const ir_op *op = e->flow_ops.v[i];
    if (!is_computation(op)) continue;
    const md_annotation *in = &md_info_sdy_op(md_model_op(e->model, op))->in_shardings;
    const md_annotation *out = &md_info_sdy_op(md_model_op(e->model, op))->out_shardings;
    computation_globals g = {ar_calloc(e->a, op->noperands + 1, sizeof *g.in), ar_calloc(e->a, op->nresults + 1, sizeof *g.out)};
    bool cleanup = e->opt.manual_axes_cleanup && op->kind == SC_OP_SDY_MANUAL_COMPUTATION;
    sharding_ref common = cleanup ? common_mesh_sharding(e, in, out) : NULL;
    for (uint32_t r = 0; r < op->nresults && r < out->nvalues; r++) {
      g.out[r] = seed_of(e, out->values[r]);
      if (cleanup && g.out[r] && is_tensor(ir_op_result(op, r))) {
        ar_mark_t mark = ar_mark(e->a);
        g.out[r] = keep_shared(e, mark, add_unused_manual_axes(e->a, op, e->model, g.out[r], common));
        if (e->sh[prefix_at(&e->result_base, op->id) + r]) e->sh[prefix_at(&e->result_base, op->id) + r] = g.out[r];
      }
    }
    for (uint32_t k = 0; k < op->noperands; k++) {
      sharding_ref sg = k < in->nvalues ? seed_of(e, in->values[k]) : NULL;
      if (cleanup && sg && is_tensor(op->operands[k])) {
        ar_mark_t mark = ar_mark(e->a);
        sg = keep_shared(e, mark, add_unused_manual_axes(e->a, op, e->model, sg, common));
      }
      g.in[k] = sg;
      uint32_t slot = raw_slot(e, block_arg(ir_op_regions(op)[0], k));
      ar_mark_t mark = ar_mark(e->a);
      if (slot < e->nslots) e->sh[slot] = keep_shared(e, mark, erase_manual(e->a, op, e->model, sg));
    }
    SC_PUSH(e->a, e->globals, g);
    hs_name_map_put(&e->globals_index, (const char *)&op->id, sizeof op->id, (uint32_t)e->globals.n - 1, NULL);
  }
  e->func_results = ar_calloc(e->a, m->nfuncs + 1, sizeof *e->func_results);
  e->func_results_initial = ar_calloc(e->a, m->nfuncs + 1, sizeof *e->func_results_initial);
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    const ir_op *fn = m->funcs[f];
    if (fn->nregions && ir_op_regions(fn)[0]->nblocks) {
      const ir_block *entry = ir_op_regions(fn)[0]->blocks[0];
      for (uint32_t k = 0; k < entry->nargs; k++) { /* HLO: an argument is its parameter op's result */
        sharding_ref arg = seed_fitting(e, md_model_arg_sharding(e->model, fn, k), ir_value_type(entry->args[k]));
        if (arg) e->sh[slot_of(e, entry->args[k])] = arg;
      }
    }
    uint32_t nres = ir_op_nresult_attrs(fn);
    e->func_results[f] = ar_calloc(e->a, nres + 1, sizeof **e->func_results);
    e->func_results_initial[f] = ar_calloc(e->a, nres + 1, sizeof **e->func_results_initial);
    const ir_span *types = ir_op_func_result_types(fn); /* nres of them (the front ends' invariant) */
    for (uint32_t k = 0; k < nres; k++)
      e->func_results[f][k] = e->func_results_initial[f][k] =
          seed_fitting(e, md_model_func_result_sharding(e->model, fn, k), types ? types[k] : ir_span_of(NULL, 0));
  }
  for (uint32_t c = 0; c < e->ncopy_slots; c++) { /* a copy of an expression has its written sharding */
    const ir_value *v = e->own_copy_value[c];
    uint32_t slot = e->nslots - e->ncopy_slots + c;
    e->sh[slot] = seed_of(e, md_model_result_sharding(e->model, ir_value_def(v), v->index));
  }
  keep_initial(e);
  e->written = ar_calloc(e->a, e->nslots / 64 + 1, sizeof *e->written);
  for (uint32_t k = 0; k < e->nslots; k++) e->origin[k] = e->sh[k] ? k : UINT32_MAX;
}

/* ---- sharding groups: one sharding for every member ---------------------------------------------- */

static bool replicated_and_open(sharding_ref s) {
  if (s->replicated.n || s->unreduced.n) return false;
  for (uint32_t d = 0; d < s->rank; d++)
    if (s->dims[d].closed || s->dims[d].axes.n) return false;
  return true;
}

/* The sharding a group member is written with (function arguments share the group's slot from the
 * start, so theirs is read from the model). */
static sharding_ref written_member_sharding(prop_engine *e, const ir_value *v, uint32_t raw) {
  const ir_op *owner = value_owner(v);
  if (!ir_value_def(v) && owner && owner->kind == SC_OP_FUNC)
    return seed_of(e, md_model_arg_sharding(e->model, owner, v->index));
  return initial_of(e, raw);
}

/* Shardy's ShardingGroupMap::syncGroupMemberShardings, before propagation: a group's members take the
 * sharding of the first one (in program order) that has one not replicated and open; when another has a
 * different one, Shardy warns at the first member's op (and constrains every member with an open
 * sharding; here they keep the group's first sharding as written). */
/* The sharding-group ops of the module in order: each one's value, its slot and its group. */
typedef struct {
  const ir_value *v;
  uint32_t raw, group; /* group: index into the ids met, then its class; (v, raw, group) keys a member */
  int64_t id;
  uint32_t at;         /* the sharding_group op */
} group_member;

static uint32_t find_class(uint32_t *parent, uint32_t g) {
  while (parent[g] != g) g = parent[g] = parent[parent[g]];
  return g;
}

/* Shardy's sharding-group import: ids whose groups share a value are one group, and groups are numbered
 * 0, 1, ... in the order of their smallest id. Fills each member's `group` with its class's number;
 * returns the number of classes. */
static uint32_t unify_groups(prop_engine *e, group_member *members, size_t n) {
  hs_name_map by_id, by_slot; /* id -> index; raw slot -> the first index with a member there */
  hs_name_map_init(&by_id, e->a, 16);
  hs_name_map_init(&by_slot, e->a, 16);
  SC_VEC(int64_t) ids = {0};
  SC_VEC(uint32_t) parent = {0};
  for (size_t k = 0; k < n; k++) {
    uint32_t g, first;
    if (!hs_name_map_get(&by_id, (const char *)&members[k].id, sizeof members[k].id, &g)) {
      g = (uint32_t)ids.n;
      SC_PUSH(e->a, ids, members[k].id);
      SC_PUSH(e->a, parent, g);
      hs_name_map_make_room(&by_id, e->a);
      hs_name_map_put(&by_id, (const char *)&members[k].id, sizeof members[k].id, g, NULL);
    }
    members[k].group = g;
    if (!hs_name_map_get(&by_slot, (const char *)&members[k].raw, sizeof members[k].raw, &first)) {
      hs_name_map_make_room(&by_slot, e->a);
      hs_name_map_put(&by_slot, (const char *)&members[k].raw, sizeof members[k].raw, g, NULL);
    } else if (find_class(parent.v, first) != find_class(parent.v, g)) { /* the smaller id leads */
      uint32_t x = find_class(parent.v, first), y = find_class(parent.v, g);
      if (ids.v[y] < ids.v[x]) parent.v[x] = y;
      else parent.v[y] = x;
    }
  }
  /* leaders in id order get 0, 1, ... */
  uint32_t *order = ar_alloc(e->a, (ids.n + 1) * sizeof *order), nleaders = 0;
  for (uint32_t g = 0; g < ids.n; g++)
    if (find_class(parent.v, g) == g) order[nleaders++] = g;
  for (uint32_t i = 1; i < nleaders; i++) /* insertion sort by id: few groups, and nearly in order */
    for (uint32_t j = i; j > 0 && ids.v[order[j]] < ids.v[order[j - 1]]; j--) {
      uint32_t t = order[j];
      order[j] = order[j - 1], order[j - 1] = t;
    }
  uint32_t *number = ar_alloc(e->a, (ids.n + 1) * sizeof *number);
  for (uint32_t i = 0; i < nleaders; i++) number[order[i]] = i;
  for (size_t k = 0; k < n; k++) members[k].group = number[find_class(parent.v, members[k].group)];
  return nleaders;
}

/* Each sharding group's members take the sharding of the first member (in program order) that has one
 * not replicated and open; when another has a different one, Shardy warns at the first member's op and
 * (prop_engine_group_conflicts) constrains every member with an open sharding. */
static void sync_sharding_groups(prop_engine *e) {
  if (!e->grouped) return;
  SC_VEC(group_member) members = {0};
  for (uint32_t i = 0; i < e->m->nops; i++) {
    const ir_op *op = e->m->ops[i];
    int64_t id;
    if (op->noperands != 1 || !ir_span_eq(ir_op_name(op), "sdy.sharding_group") || !md_model_sharding_group_id(e->model, op, &id))
      continue;
    group_member x = {op->operands[0], raw_slot(e, op->operands[0]), 0, id, op->pos.offset};
    if (x.raw < e->nslots) SC_PUSH(e->a, members, x);
  }
  uint32_t ngroups = unify_groups(e, members.v, members.n);
  typedef struct {
    const ir_value *first;
    sharding_ref common;
    bool conflict;
    SC_VEC(const ir_value *) members;
  } group;
  group *groups = ar_calloc(e->a, ngroups + 1, sizeof *groups);
  hs_name_map member_seen; /* (group, value) pairs met: a value is a group's member once */
  hs_name_map_init(&member_seen, e->a, 16);
  for (size_t k = 0; k < members.n; k++) {
    group_member *x = &members.v[k];
    group *g = &groups[x->group];
    if (!g->first) g->first = x->v;
    hs_name_map_make_room(&member_seen, e->a);
    if (!hs_name_map_put(&member_seen, (const char *)&x->v, offsetof(group_member, id), 0, NULL))
      continue; /* the same value in the same group again: the import erased that op */
    SC_PUSH(e->a, g->members, x->v);
    sharding_ref written = written_member_sharding(e, x->v, x->raw);
    if (g->conflict || !written || replicated_and_open(written)) continue;
    if (!g->common) {
      g->common = written;
    } else if (!prop_sharding_eq(g->common, written)) {
      g->conflict = true;
      const ir_op *owner = value_owner(g->first);
      prop_engine_message m = {owner ? owner->pos.offset : x->at,
                               ar_printf(e->a, "The initial operand shardings on the sharding groups of groupID: %u do "
                                               "not match. Inserting an open sharding constraint to all constrained "
                                               "values. This can be caused when shardings from different values are "
                                               "grouped (e.g. from jax.shard_alike) but have separate inconsistent "
                                               "sharding constraints on them.", x->group)};
      SC_PUSH(e->a, e->messages, m);
    }
  }
  for (uint32_t k = 0; k < ngroups; k++) {
    if (groups[k].conflict) {
      prop_group_conflict c = {groups[k].common, groups[k].members.v, (uint32_t)groups[k].members.n};
      SC_PUSH(e->a, e->conflicts, c);
    } else if (groups[k].common) {
      uint32_t root = alias_of(e, raw_slot(e, groups[k].first));
      e->sh[root] = groups[k].common;
      mark_written(e, root);
    }
  }
}

prop_group_conflicts prop_engine_group_conflicts(const prop_engine *e) {
  return (prop_group_conflicts){e->conflicts.v, (uint32_t)e->conflicts.n};
}

/* A tensor that grew takes the origin of the first other tensor of the visit that had a sharding. */
static void set_origin(prop_engine *e, uint32_t slot, const uint32_t *slots, const sharding_ref *before, uint32_t n) {
  if (e->origin[slot] != UINT32_MAX) return; /* written on the value itself, or the first origin found */
  for (uint32_t j = 0; j < n; j++)
    if (slots[j] != slot && before[j] && slots[j] < e->nslots && e->origin[slots[j]] != UINT32_MAX) {
      e->origin[slot] = e->origin[slots[j]];
      return;
    }
}

/* A rule of one factor per dimension between `n` operands and one result of `rank` dims of `dims`. */
static const prop_rule *identity_rule(sc_arena *a, const int64_t *dims, uint32_t rank, uint32_t noperands) {
  prop_rule *r = ar_calloc(a, 1, sizeof *r);
  r->nfactors = rank;
  r->factors = ar_calloc(a, rank ? rank : 1, sizeof *r->factors);
  uint32_t *ids = ar_alloc(a, (rank ? rank : 1) * sizeof *ids);
  prop_dim *dmap = ar_calloc(a, rank ? rank : 1, sizeof *dmap);
  for (uint32_t d = 0; d < rank; d++) {
    r->factors[d].size = dims[d];
    ids[d] = d;
    dmap[d].factors = &ids[d];
    dmap[d].nfactors = 1;
  }
  prop_tensor t = {dmap, rank};
  r->noperands = noperands;
  r->operands = ar_alloc(a, (noperands ? noperands : 1) * sizeof *r->operands);
  for (uint32_t i = 0; i < noperands; i++) r->operands[i] = t;
  r->nresults = 1;
  r->results = ar_alloc(a, sizeof *r->results);
  r->results[0] = t;
  return r;
}

/* ---- the worklist -------------------------------------------------------------------------------- */

/* A pass visits items (ops by id, then data-flow edges as nops + k) as Shardy's does: every item once
 * in program order, and an item whose tensor grew is pushed on top (visited next) unless it is still
 * queued. A visit is a function of the item's tensors' shardings and the round, so an item none of
 * whose slots was written since its last visit in the same round would change nothing: such items are
 * not queued at all. The program-order part is a cursor plus a bitmap of the positions ahead of it
 * that may have changed (seeded from the change log); the order of the visits that do something is
 * the full pass's, and a pass costs what changed since that round last ran, not the module's size. */


/* Marks program position `pos` (>= the cursor) as waiting for its turn. */
static void mark_pending(worklist *w, uint32_t pos) {
  uint64_t bit = 1ull << (pos & 63);
  if (w->pending[pos >> 6] & bit) return;
  w->pending[pos >> 6] |= bit;
  w->npending++;
}

/* The lowest waiting position (there is one), unmarked. Positions below the cursor are never waiting,
 * so the scan only moves forward: a pass scans the bitmap once. */
static uint32_t take_pending(worklist *w) {
  uint32_t word = w->cursor >> 6;
  while (!w->pending[word]) word++;
  uint32_t pos = word << 6 | (uint32_t)__builtin_ctzll(w->pending[word]);
  w->pending[word] &= w->pending[word] - 1;
  w->npending--;
  return pos;
}

/* Queues `item`: ahead of the cursor it waits for its program-order turn, behind it goes on top. */
static void push(worklist *w, uint32_t item) {
  uint32_t pos = item; /* an op's id is its program position (ir_op.id) */
  if (pos >= w->cursor) mark_pending(w, pos);
  else if (!sc_bit_test(w->on_stack, item)) {
    sc_bit_set(w->on_stack, item);
    if (w->n == w->cap) { /* an item is on the stack at most once: it never holds more than all of them */
      uint32_t cap = w->cap ? 2 * w->cap : 64;
      w->stack = ar_grow(w->a, w->stack, w->n, cap, sizeof *w->stack);
      w->cap = cap;
    }
    w->stack[w->n++] = item;
  }
}

/* The next item to visit, or UINT32_MAX when the pass is over. */
static uint32_t next_item(worklist *w) {
  if (w->n) {
    uint32_t item = w->stack[--w->n];
    sc_bit_clear(w->on_stack, item);
    return item;
  }
  if (!w->npending) return UINT32_MAX;
  uint32_t pos = take_pending(w);
  w->cursor = pos + 1;
  return pos;
}

/* The items that read or own slot `slot` (of value `v`), except `current`. */
/* The id of the op that defines `v` or owns its block, or UINT32_MAX. */
static uint32_t owner_id(const ir_value *v) {
  const ir_op *owner = value_owner(v);
  return owner ? owner->id : UINT32_MAX;
}

/* The edges slot `slot` is a source or owner of: edge_ids[*from .. return value), in the order they were
 * made. Most slots have none (their bit says so at once); the others are found by binary search. */
static uint32_t slot_edges(const prop_engine *e, uint32_t slot, uint32_t *from) {
  *from = 0;
  if (!e->edges.n || slot >= e->nslots || !sc_bit_test(e->edge_slot_bits, slot)) return 0;
  uint32_t lo = 0, hi = e->nedge_refs;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (e->edge_slots[mid] < slot) lo = mid + 1;
    else hi = mid;
  }
  *from = lo;
  while (hi < e->nedge_refs && e->edge_slots[hi] == slot) hi++;
  return hi;
}

static void notify(prop_engine *e, worklist *w, uint32_t owner, uint32_t slot, uint32_t current) {
  for (uint32_t k = prefix_at(&e->use_start, slot); k < prefix_at(&e->use_start, slot + 1); k++)
    if (e->users[k] != current) push(w, e->users[k]);
  uint32_t from, to = slot_edges(e, slot, &from);
  for (uint32_t k = from; k < to; k++)
    if (e->m->nops + e->edge_ids[k] != current) push(w, e->m->nops + e->edge_ids[k]);
  if (owner != UINT32_MAX && owner != current) push(w, owner);
}

/* Queues every item whose tensors include `slot` (a pass's start: only items ahead of the cursor). */
static void queue_readers(prop_engine *e, worklist *w, uint32_t slot) {
  for (uint32_t k = prefix_at(&e->use_start, slot); k < prefix_at(&e->use_start, slot + 1); k++) push(w, e->users[k]);
  uint32_t from, to = slot_edges(e, slot, &from);
  for (uint32_t k = from; k < to; k++) push(w, e->m->nops + e->edge_ids[k]);
  if (!e->aliased && slot_owner(e, slot) != UINT32_MAX) push(w, slot_owner(e, slot));
  for (uint32_t k = e->aliased ? e->owner_start[slot] : 0; k < (e->aliased ? e->owner_start[slot + 1] : 0); k++)
    push(w, e->owners[k]);
}

#define CHANGE_BLOCK 1024u

/* Appends `slot` to the log of writes. */
static void log_change(prop_engine *e, uint32_t slot) {
  if (e->nchanges / CHANGE_BLOCK == e->change_blocks.n) {
    uint32_t *block = ar_alloc(e->a, CHANGE_BLOCK * sizeof *block);
    SC_PUSH(e->a, e->change_blocks, block);
  }
  e->change_blocks.v[e->nchanges / CHANGE_BLOCK][e->nchanges % CHANGE_BLOCK] = slot;
  e->nchanges++;
}

/* The slot of log entry `i` (below nchanges). */
static uint32_t change_at(const prop_engine *e, uint32_t i) { return e->change_blocks.v[i / CHANGE_BLOCK][i % CHANGE_BLOCK]; }

/* Every write of a slot's sharding during propagation goes through here: logged, and with a worklist
 * the items that read it are queued. `s` is one the set of kept shardings holds (set_slot keeps it). */
static void set_kept_slot(prop_engine *e, worklist *w, uint32_t slot, sharding_ref s, uint32_t owner, uint32_t current) {
  e->sh[slot] = s;
  mark_written(e, slot);
  log_change(e, slot);
  e->last_change[slot] = e->nchanges;
  if (w) notify(e, w, owner, slot, current);
}

static void set_slot(prop_engine *e, worklist *w, uint32_t slot, sharding_ref s, uint32_t owner, uint32_t current) {
  set_kept_slot(e, w, slot, prop_sharding_set_add(&e->shardings, s), owner, current);
}

/* Besides its tensors' shardings, a visit depends on the factor strategy and its per-factor directions
 * (the round): one key for both, 0 when there are too many factors to encode. */
static uint32_t visit_key(const prop_engine *e, const prop_direction *directions, uint32_t nfactors) {
  if (directions && nfactors > 14) return 0;
  uint32_t key = 1u << 31 | (uint32_t)e->aggressive << 30 | (uint32_t)(directions != NULL) << 29;
  for (uint32_t f = 0; directions && f < nfactors; f++) key |= (uint32_t)directions[f] << (2 * f);
  return key;
}

/* Whether `item` was visited with `key` and none of its slots was written since: visiting it again
 * would change nothing. Otherwise records this visit. */
static bool visit_is_redundant(prop_engine *e, uint32_t item, const uint32_t *slots, uint32_t n, uint32_t key) {
  uint32_t seen = e->visited[item];
  bool same = seen && key && e->visit_key[item] == key;
  for (uint32_t i = 0; same && i < n; i++) same = slots[i] >= e->nslots || e->last_change[slots[i]] < seen;
  if (same) return true;
  e->visited[item] = e->nchanges + 1;
  e->visit_key[item] = key;
  return false;
}

static bool propagate_tensors(prop_engine *e, const prop_rule *rule, sharding_ref *all, bool *changed,
                              const prop_direction *directions, bool elementwise);

static bool span_has(ir_span s, const char *word) {
  size_t n = strlen(word);
  for (uint32_t i = 0; i + n <= s.n; i++)
    if (!memcmp(s.p + i, word, n)) return true;
  return false;
}

/* A static tensor type's dimensions, or false. */
static bool static_dims(sc_arena *a, ir_span type, int64_t **dims, uint32_t *rank) {
  ir_tensor_type tt;
  if (!ir_parse_tensor_type(a, type, &tt) || tt.rank < 0) return false;
  for (int32_t d = 0; d < tt.rank; d++)
    if (tt.dims[d] < 0) return false;
  *dims = tt.dims;
  *rank = (uint32_t)tt.rank;
  return true;
}

/* An edge's rule: the identity over its owner's static dims (NULL: none). Edges of one source whose owners
 * are written with one type share it (a module has thousands of edges of a few types). */
static const prop_rule *edge_rule(prop_engine *e, const prop_edge *edge) {
  ir_span type = ir_value_type(edge->owner_value);
  bool shared = edge->nsources == 1 && type.n;
  uint32_t k;
  if (shared && e->edge_rules.slots && hs_name_map_get(&e->edge_rules, type.p, type.n, &k)) return e->edge_rule_list.v[k];
  int64_t *dims;
  uint32_t rank;
  if (!static_dims(e->a, type, &dims, &rank)) return NULL;
  const prop_rule *rule = identity_rule(e->a, dims, rank, edge->nsources);
  if (shared) {
    if (!e->edge_rules.slots) hs_name_map_init(&e->edge_rules, e->a, 16);
    SC_PUSH(e->a, e->edge_rule_list, rule);
    hs_name_map_make_room(&e->edge_rules, e->a);
    hs_name_map_put(&e->edge_rules, type.p, type.n, (uint32_t)e->edge_rule_list.n - 1, NULL);
  }
  return rule;
}

/* Propagates along a data-flow edge: its sources and its owner, as an op with an identity rule. A
 * manual computation's owners see the other side through its manual axes (Shardy's
 * transformTargetSharding): a body argument is compared in the global view of its in_sharding, a
 * result in the local view of the body. */
static void propagate_edge(prop_engine *e, worklist *w, uint32_t k) {
  prop_edge *edge = &e->edges.v[k];
  if (!edge->rule_known) { /* kept: before the visit's mark */
    edge->rule_known = true;
    edge->rule = edge_rule(e, edge);
  }
  if (!edge->rule) return;
  ar_mark_t mark = ar_mark(e->a);
  uint32_t n = edge->nsources + 1;
  uint32_t *slots = ar_alloc(e->a, n * sizeof *slots);
  memcpy(slots, edge->sources, edge->nsources * sizeof *slots);
  slots[n - 1] = edge->owner;
  if (visit_is_redundant(e, e->m->nops + k, slots, n, visit_key(e, NULL, 0))) {
    ar_rewind(e->a, mark);
    return;
  }
  sharding_ref *all = ar_alloc(e->a, n * sizeof *all);
  for (uint32_t j = 0; j < edge->nsources; j++) all[j] = e->sh[edge->sources[j]];
  sharding_ref target = e->sh[edge->owner];
  /* the in_sharding as written gives the manual axes (the op's attribute changes only when edges sink) */
  const computation_globals *globals = written_globals(e, edge->op);
  sharding_ref in_global = edge->kind == EDGE_MANUAL_ARG && globals ? globals->in[edge->index] : NULL;
  if (edge->kind == EDGE_MANUAL_ARG) target = prop_engine_add_free(e->a, edge->op, e->model, in_global, target);
  else if (edge->kind == EDGE_MANUAL_RESULT) target = erase_manual(e->a, edge->op, e->model, target);
  all[n - 1] = target;
  bool *changed = ar_alloc(e->a, n * sizeof *changed);
  if (!propagate_tensors(e, edge->rule, all, changed, NULL, false)) {
    ar_rewind(e->a, mark);
    return;
  }
  for (uint32_t j = 0; j < edge->nsources; j++)
    if (changed[j]) {
      if (e->origin[edge->sources[j]] == UINT32_MAX) e->origin[edge->sources[j]] = e->origin[edge->owner];
      set_slot(e, w, edge->sources[j], all[j], owner_id(edge->source_values[j]), e->m->nops + k);
    }
  if (!changed[n - 1]) return;
  sharding_ref owner = all[n - 1];
  if (edge->kind == EDGE_MANUAL_ARG) {
    owner = erase_manual(e->a, edge->op, e->model, owner);
  } else if (edge->kind == EDGE_MANUAL_RESULT) { /* the out_sharding as written gives the manual axes */
    sharding_ref out_global = globals ? globals->out[edge->index] : NULL;
    owner = prop_engine_add_free(e->a, edge->op, e->model, out_global ? out_global : e->sh[edge->owner], owner);
  }
  if (prop_sharding_eq(owner, e->sh[edge->owner])) return;
  for (uint32_t j = 0; j < edge->nsources && e->origin[edge->owner] == UINT32_MAX; j++)
    e->origin[edge->owner] = e->origin[edge->sources[j]];
  set_slot(e, w, edge->owner, owner, owner_id(edge->owner_value), e->m->nops + k);
}

/* sdy.propagation_barrier: an identity rule that lets shardings through in one direction only. */
static const prop_rule *barrier_rule(prop_engine *e, const ir_op *op, prop_direction **directions) {
  int64_t *dims;
  uint32_t rank;
  if (op->nresults != 1 || op->noperands != 1 || !static_dims(e->a, ir_value_type(ir_op_result(op, 0)), &dims, &rank)) return NULL;
  const md_sdy_item *item = md_model_sdy_item(e->model, op, "allowed_direction");
  const ir_attr *attr = item ? NULL : ir_op_attr(op, "allowed_direction");
  ir_span v = item ? item->value : attr ? attr->value : (ir_span){0};
  prop_direction dir = PROP_DIR_NONE;
  if (span_has(v, "BOTH")) dir = PROP_DIR_BOTH;
  else if (span_has(v, "FORWARD")) dir = PROP_DIR_FORWARD;
  else if (span_has(v, "BACKWARD")) dir = PROP_DIR_BACKWARD;
  *directions = ar_alloc(e->a, (rank ? rank : 1) * sizeof **directions);
  for (uint32_t d = 0; d < rank; d++) (*directions)[d] = dir;
  return identity_rule(e->a, dims, rank, 1);
}

static bool mesh_empty(const md_mesh *m) { return !m->naxes && !m->ndevice_ids; }

/* Meshes that are the same under two names: the same axes (names, sizes, order) and devices. */
static bool mesh_equal(const md_mesh *a, const md_mesh *b) {
  if (a == b) return true;
  if (a->naxes != b->naxes || a->ndevice_ids != b->ndevice_ids || a->maximal != b->maximal) return false;
  for (uint32_t i = 0; i < a->naxes; i++)
    if (a->axes[i].size != b->axes[i].size || a->axes[i].name.n != b->axes[i].name.n ||
        memcmp(a->axes[i].name.p, b->axes[i].name.p, a->axes[i].name.n) != 0)
      return false;
  for (uint32_t i = 0; i < a->ndevice_ids; i++)
    if (a->device_ids[i] != b->device_ids[i]) return false;
  return true;
}

/* Shardy's getCommonMeshOrRef: the first non-empty mesh of the shardings present; empty meshes go
 * along with any; two different meshes, or none, or a maximal one: no propagation. */
static bool common_mesh(const sharding_ref *all, uint32_t n, const md_mesh **mesh, ir_span *name) {
  *mesh = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (!all[i]) continue;
    if (!*mesh || mesh_empty(*mesh)) {
      *mesh = all[i]->mesh;
      *name = all[i]->mesh_name;
    } else if (!mesh_empty(all[i]->mesh) && !mesh_equal(all[i]->mesh, *mesh))
      return false;
  }
  return *mesh != NULL && !(*mesh)->maximal;
}

static bool ranks_fit(const prop_rule *rule, const sharding_ref *all) {
  for (uint32_t i = 0; i < rule->noperands + rule->nresults; i++) {
    const prop_tensor *t = i < rule->noperands ? &rule->operands[i] : &rule->results[i - rule->noperands];
    if (all[i] && all[i]->rank != t->rank) return false;
  }
  return true;
}

/* After a visit that changed the tensors flagged in `changed`: keeps copies of their new shardings and
 * forgets the rest of the visit's scratch (allocated since `mark`). */
static void keep_changed(prop_engine *e, ar_mark_t mark, sharding_ref *all, const bool *changed, uint32_t n) {
  ar_mark_t keep = ar_mark(e->a);
  prop_sharding **copies = ar_alloc(e->a, n * sizeof *copies);
  for (uint32_t i = 0; i < n; i++) copies[i] = changed[i] ? prop_sharding_copy(e->a, all[i]) : NULL;
  size_t delta = ar_rewind_keep(e->a, mark, keep);
  if (delta) copies = REBASE_PTR(copies, delta);
  for (uint32_t i = 0; i < n; i++) {
    if (!changed[i]) continue;
    prop_sharding *c = delta ? REBASE_PTR(copies[i], delta) : copies[i];
    if (delta) prop_sharding_rebase(c, delta);
    all[i] = c;
  }
}

/* Whether every tensor of `rule` maps dimension d to factor d alone (element-wise ops, data-flow edges). */
static bool identity_shaped(const prop_rule *rule) {
  for (uint32_t i = 0; i < rule->noperands + rule->nresults; i++) {
    const prop_tensor *t = i < rule->noperands ? &rule->operands[i] : &rule->results[i - rule->noperands];
    if (t->rank != rule->nfactors) return false;
    for (uint32_t d = 0; d < t->rank; d++)
      if (t->dims[d].nfactors != 1 || t->dims[d].factors[0] != d) return false;
  }
  return true;
}

/* Tensors that all have one and the same sharding across an identity-shaped rule: every factor already
 * holds the same axes in every tensor, so no strategy can add any (the common case once a value's
 * neighbours have caught up with it). */
bool prop_tensors_agree(const prop_rule *rule, const prop_sharding *const *all, uint32_t n, bool layout_only) {
  for (uint32_t i = 0; i < n; i++)
    if (!all[i] || !(layout_only ? prop_sharding_same_layout(all[i], all[0]) : prop_sharding_eq(all[i], all[0])))
      return false;
  return identity_shaped(rule);
}

/* Propagates across one op whose tensors' shardings are `all` (operands then results); writes the ones
 * that grew into `all` and sets changed[i]. Returns whether any changed. */
static bool propagate_tensors(prop_engine *e, const prop_rule *rule, sharding_ref *all, bool *changed,
                              const prop_direction *directions, bool elementwise) {
  uint32_t n = rule->noperands + rule->nresults;
  if (n && prop_tensors_agree(rule, all, n, true)) return false;
  const md_mesh *mesh;
  ir_span mesh_name = {0};
  if (!common_mesh(all, n, &mesh, &mesh_name) || !ranks_fit(rule, all)) return false;
  prop_projection p;
  prop_project(e->a, &p, rule, mesh, all, all + rule->noperands, false);
  bool *updated = ar_alloc(e->a, (n ? n : 1) * sizeof *updated);
  if (e->aggressive) prop_aggressive_factor_propagation(e->a, &p, directions, e->opt.conservative, elementwise, updated);
  else prop_basic_factor_propagation(e->a, &p, directions, e->opt.conservative, updated);
  bool any = false;
  for (uint32_t i = 0; i < n; i++) {
    changed[i] = false;
    if (!updated[i]) continue;
    prop_sharding *s = prop_unproject(e->a, &p, i, mesh_name);
    if ((!all[i] && prop_sharding_empty_axes(s)) || prop_sharding_eq(s, all[i])) continue;
    all[i] = s;
    changed[i] = any = true;
  }
  return any;
}

static bool same_shape(sc_arena *a, const ir_value *x, const ir_value *y) {
  ir_tensor_type tx, ty;
  if (!x || !y || !ir_parse_tensor_type(a, ir_value_type(x), &tx) || !ir_parse_tensor_type(a, ir_value_type(y), &ty) || tx.rank != ty.rank)
    return false;
  for (int32_t d = 0; d < tx.rank; d++)
    if (tx.dims[d] != ty.dims[d]) return false;
  return true;
}

/* StableHLO's Elementwise and BroadcastingElementwise ops, and the sdy ops Shardy treats as such. */
static bool elementwise_kind(prop_engine *e, const ir_op *op) {
  if (op->kind == SC_OP_SDY_PROPAGATION_BARRIER || op->kind == SC_OP_SDY_RESHARD || is_constraint(op)) return true;
  uint16_t c = name_class(e, op);
  if (c & NC_BITCAST_CONVERT) /* element-wise when the shapes agree (equal bit widths) */
    return op->noperands == 1 && op->nresults == 1 && same_shape(e->a, op->operands[0], ir_op_result(op, 0));
  return c & NC_ELEMENTWISE;
}

static prop_direction dir_union(prop_direction a, prop_direction b) {
  return a == b ? a : a == PROP_DIR_NONE ? b : b == PROP_DIR_NONE ? a : PROP_DIR_BOTH;
}
static prop_direction dir_intersection(prop_direction a, prop_direction b) {
  return a == b ? a : a == PROP_DIR_BOTH ? b : b == PROP_DIR_BOTH ? a : PROP_DIR_NONE;
}

/* A rank-0 tensor type: `tensor<` then the element type, with no dimension (digits, `?`, `*`) first. */
static bool is_scalar_tensor(sc_arena *a, ir_span type) {
  if (type.n > 7 && !memcmp(type.p, "tensor<", 7)) return ir_type_is_scalar_tensor(type);
  ir_tensor_type tt;
  return ir_parse_tensor_type(a, type, &tt) && tt.rank == 0;
}

static bool has_shared_operand(prop_engine *e, const ir_op *op) {
  for (uint32_t i = 0; i < op->noperands; i++) {
    uint32_t s = operand_slot(e, op, i);
    if (s >= e->nslots || prefix_at(&e->use_start, s + 1) - prefix_at(&e->use_start, s) <= 1) continue;
    if (!is_scalar_tensor(e->a, ir_value_type(op->operands[i]))) return true;
  }
  return false;
}

/* What the schedule asks of an op, computed once per op (the rounds ask again and again). */
enum {
  OPF_KNOWN = 1,
  OPF_ELEMENTWISE = 2,
  OPF_SHARED_OPERAND = 4,  /* an operand that is not a scalar has several uses */
  OPF_PASS_THROUGH = 8,    /* element-wise, reshape, transpose, MoveToDevice/MoveToHost: rounds 0 and 1 */
  OPF_DYNAMIC_SLICE = 16,  /* dynamic_slice, dynamic_update_slice: rounds 0 and 1, forward only */
  OPF_BROADCAST = 32       /* broadcast_in_dim: backward only until the last round */
};

static uint8_t schedule_class(prop_engine *e, const ir_op *op) {
  if (elementwise_kind(e, op))
    return OPF_ELEMENTWISE | OPF_PASS_THROUGH;
  uint16_t c = name_class(e, op);
  ir_span target = op->kind == SC_OP_CUSTOM_CALL ? ir_op_custom_call_target(op) : ir_span_of(NULL, 0);
  if ((c & (NC_RESHAPE | NC_TRANSPOSE)) || ir_span_eq(target, "MoveToDevice") || ir_span_eq(target, "MoveToHost"))
    return OPF_PASS_THROUGH;
  if (c & NC_DYNAMIC_SLICE) return OPF_DYNAMIC_SLICE;
  return c & NC_BROADCAST ? OPF_BROADCAST : 0;
}

static uint8_t op_flags(prop_engine *e, const ir_op *op) {
  uint8_t *f = &e->op_flags[op->id];
  if (!*f) {
    ar_mark_t mark = ar_mark(e->a);
    *f = (uint8_t)(OPF_KNOWN | schedule_class(e, op) | (has_shared_operand(e, op) ? OPF_SHARED_OPERAND : 0));
    ar_rewind(e->a, mark);
  }
  return *f;
}


/* Single use: BOTH unless an operand that is not a scalar has several uses (Shardy's
 * getDirectionBasedOnUses). */
static prop_direction direction_by_uses(uint8_t flags, bool multi_use) {
  return multi_use || !(flags & OPF_SHARED_OPERAND) ? PROP_DIR_BOTH : PROP_DIR_NONE;
}

/* What round r of the schedule opens along factor f of an op with `flags`. */
static prop_direction round_opens(uint8_t flags, const prop_rule *rule, uint32_t f, int r) {
  bool broadcast = flags & OPF_BROADCAST;
  if (r <= 1) { /* pass-through ops: single use, then any */
    if (flags & OPF_PASS_THROUGH) return direction_by_uses(flags, r == 1);
    if (flags & OPF_DYNAMIC_SLICE) return dir_intersection(direction_by_uses(flags, r == 1), PROP_DIR_FORWARD);
    return PROP_DIR_NONE;
  }
  if (r == 2) /* only pass-through factors; broadcasts backward */
    return rule->factors[f].type != PROP_FACTOR_PASS_THROUGH ? PROP_DIR_NONE : broadcast ? PROP_DIR_BACKWARD : PROP_DIR_BOTH;
  if (r == 3) return broadcast ? PROP_DIR_BACKWARD : PROP_DIR_BOTH;
  return PROP_DIR_BOTH;
}

/* The directions open along factor f in round `round`: what it and every earlier round open. */
static prop_direction scheduled_direction(uint8_t flags, const prop_rule *rule, uint32_t f, int round) {
  prop_direction d = PROP_DIR_NONE;
  for (int r = 0; r <= round; r++) d = dir_union(d, round_opens(flags, rule, f, r));
  return d;
}

/* The bits of e->op_bits that hold round_steps(): bit 7 (computed) and bits 1 .. OP_SCHEDULE_LEN - 1. */
#define ROUND_STEP_BITS (0x80u | ((1u << OP_SCHEDULE_LEN) - 2u))
_Static_assert(OP_SCHEDULE_LEN <= 5, "the visit bits (VB_*) use bits 0, 5 and 6 of e->op_bits");

/* Per op: bit r set when its directions in schedule round r differ from round r-1's, so its visit key
 * does too (bit 7: computed). An op whose rule is not built yet, or whose key cannot encode its
 * directions, counts as changing every round. */
static uint8_t round_steps(prop_engine *e, const ir_op *op) {
  uint8_t *steps = &e->op_bits[op->id];
  if (*steps & 0x80) return *steps & ROUND_STEP_BITS;
  const prop_rule *rule = op->kind != SC_OP_SDY_PROPAGATION_BARRIER ? known_rule(e, op->id) : NULL;
  if (op->kind == SC_OP_SDY_PROPAGATION_BARRIER) { /* its own directions, every round */
    *steps |= 0x80;
    return 0x80;
  }
  if (!rule_known(e, op->id) || (rule && rule->nfactors > 14)) return 0xff; /* not kept: may change */
  uint8_t bits = 0x80, flags = op_flags(e, op);
  for (uint32_t f = 0; rule && f < rule->nfactors; f++) {
    prop_direction d = round_opens(flags, rule, f, 0);
    for (int r = 1; r < OP_SCHEDULE_LEN; r++) {
      prop_direction next = dir_union(d, round_opens(flags, rule, f, r));
      if (next != d) bits |= (uint8_t)(1u << r);
      d = next;
    }
  }
  *steps |= bits;
  return bits;
}

/* An element-wise op's rule depends only on its name and its operands' and results' types: ops that
 * agree on those share one rule (a module repeats a few such ops thousands of times). The table maps a
 * hash of them to the first such op; a hit is confirmed span by span. */
static const ir_value *tensor_of(const ir_op *op, uint32_t i) {
  return i < op->noperands ? op->operands[i] : ir_op_result(op, i - op->noperands);
}

static uint64_t signature_hash(const prop_engine *e, const ir_op *op) {
  uint64_t h = op->noperands;
  if (op->name_id) h ^= hash_fold(op->name_id, SC_HASH_K2);
  else h ^= hash_bytes(ir_op_bare_name(op).p, ir_op_bare_name(op).n, e->share.seed);
  for (uint32_t i = 0; i < op->noperands + op->nresults; i++) {
    const ir_value *v = tensor_of(op, i);
    h = hash_fold(h ^ (v ? hash_bytes(ir_value_type(v).p, ir_value_type(v).n, e->share.seed) : 0), SC_HASH_K2);
  }
  return h | 1;
}

static bool same_signature(const ir_op *x, const ir_op *y) {
  if (x->noperands != y->noperands || x->nresults != y->nresults) return false;
  if (x->name_id && y->name_id ? x->name_id != y->name_id : !ir_span_same(ir_op_bare_name(x), ir_op_bare_name(y)))
    return false;
  for (uint32_t i = 0; i < x->noperands + x->nresults; i++) {
    const ir_value *a = tensor_of(x, i), *b = tensor_of(y, i);
    if (!a || !b ? a != b : !ir_span_same(ir_value_type(a), ir_value_type(b))) return false;
  }
  return true;
}

static void share_grow(rule_share_table *t) {
  uint32_t cap = t->cap ? 2 * t->cap : 64;
  const ir_op **ops = ar_calloc(t->a, cap, sizeof *ops);
  uint64_t *hashes = ar_alloc(t->a, cap * sizeof *hashes);
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!t->ops[i]) continue;
    uint32_t j = (uint32_t)t->hashes[i] & (cap - 1);
    while (ops[j]) j = (j + 1) & (cap - 1);
    ops[j] = t->ops[i], hashes[j] = t->hashes[i];
  }
  t->ops = ops, t->hashes = hashes, t->cap = cap;
}

/* A built rule's number in e->rule_of (see there). */
static uint32_t rule_number(prop_engine *e, const prop_rule *rule) {
  if (!rule) return 1;
  SC_PUSH(e->a, e->rule_list, rule);
  return (uint32_t)e->rule_list.n + 1;
}

static uint32_t shared_elementwise_rule(prop_engine *e, const ir_op *op, const prop_rule_options *ro) {
  rule_share_table *t = &e->share;
  if (2 * (t->n + 1) > t->cap) share_grow(t);
  uint64_t h = signature_hash(e, op);
  uint32_t i = (uint32_t)h & (t->cap - 1);
  for (; t->ops[i]; i = (i + 1) & (t->cap - 1))
    if (t->hashes[i] == h && same_signature(t->ops[i], op)) return e->rule_of[t->ops[i]->id];
  uint32_t number = rule_number(e, prop_rule_of(e->a, e->m, op, ro, NULL));
  e->rule_of[op->id] = number; /* before the op is kept, so a hit always finds a built rule */
  t->ops[i] = op, t->hashes[i] = h, t->n++;
  return number;
}

const prop_rule *prop_engine_rule(prop_engine *e, const ir_op *op) {
  if (!rule_known(e, op->id)) {
    prop_rule_options ro = {e->opt.conservative, e->facts};
    e->rule_of[op->id] = (op_flags(e, op) & OPF_ELEMENTWISE) && !ir_op_attr(op, "sdy.sharding_rule")
                             ? shared_elementwise_rule(e, op, &ro)
                             : rule_number(e, prop_rule_of(e->a, e->m, op, &ro, NULL));
  }
  return known_rule(e, op->id);
}

/* Whether `op` shares its rule with every element-wise op of its name and types (shared_elementwise_rule):
 * its visits are worth remembering. */
static bool rule_is_shared(prop_engine *e, const ir_op *op) {
  return (op_flags(e, op) & OPF_ELEMENTWISE) && !ir_op_attr(op, "sdy.sharding_rule");
}

/* Writes a visit's outcome: the slots whose sharding changed, with their origins. Tensors [0, nin) are
 * operands (their defining ops are told), the rest results (of op `id` itself). */
static void apply_visit(prop_engine *e, worklist *w, uint32_t id, uint32_t nin, const uint32_t *slots,
                        sharding_ref const *before, sharding_ref const *after, uint32_t n, bool kept) {
  for (uint32_t i = 0; i < n; i++) {
    if (after[i] == before[i]) continue;
    if (n <= 8) set_origin(e, slots[i], slots, before, n);
    uint32_t owner = i < nin ? owner_id(e->m->ops[id]->operands[i]) : id;
    if (kept) set_kept_slot(e, w, slots[i], after[i], owner, id);
    else set_slot(e, w, slots[i], after[i], owner, id);
  }
}

/* What a visit of an op needs of the op itself, noted at its first visit (in e->op_bits, beside
 * ROUND_STEP_BITS) so that later visits read only the engine's tables: the op's struct is cold by then,
 * and touching it was most of a revisit's cost. */
enum {
  VB_KNOWN = 1,
  VB_BY_RULE = 0x20, /* no barrier, and its rule has the op's operand and result counts */
  VB_SHARED = 0x40   /* its rule is shared (rule_is_shared): visits are remembered */
};

static uint8_t first_visit_bits(prop_engine *e, const ir_op *op) {
  uint8_t b = VB_KNOWN;
  if (op->kind != SC_OP_SDY_PROPAGATION_BARRIER) { /* a barrier's rule is made at each visit (barrier_rule) */
    const prop_rule *rule = prop_engine_rule(e, op);
    if (rule && rule->noperands == op->noperands && rule->nresults == op->nresults) b |= VB_BY_RULE;
  }
  if (rule_is_shared(e, op)) b |= VB_SHARED; /* also computes op_flags, which visits read */
  (void)round_steps(e, op); /* run_pass reads them at each round's start */
  e->op_bits[op->id] |= b;
  return b;
}

static void propagate_op(prop_engine *e, worklist *w, uint32_t id) {
  const ir_op *op = e->m->ops[id]; /* read through only where the tables do not say */
  uint8_t vb = e->op_bits[id] & VB_KNOWN ? e->op_bits[id] : first_visit_bits(e, op);
  prop_direction *directions = NULL;
  const prop_rule *rule = vb & VB_BY_RULE ? known_rule(e, id) : NULL;
  /* what a visit allocates is scratch unless a sharding grows: forgotten when none does, so revisits
   * (5 rounds per priority) cost no memory */
  ar_mark_t mark = ar_mark(e->a);
  if (!rule && op->kind == SC_OP_SDY_PROPAGATION_BARRIER) {
    rule = barrier_rule(e, op, &directions);
    if (!rule || rule->noperands != op->noperands || rule->nresults != op->nresults) return;
  }
  if (!rule) return;
  uint32_t nin = rule->noperands, n = rule->noperands + rule->nresults;
  sharding_ref *all = ar_alloc(e->a, (n ? n : 1) * sizeof *all);
  uint32_t *slots = ar_alloc(e->a, (n ? n : 1) * sizeof *slots);
  for (uint32_t i = 0; i < n; i++) {
    slots[i] = i < nin ? indexed_operand_slot(e, id, i) : alias_of(e, prefix_at(&e->result_base, id) + i - nin);
    if (slots[i] >= e->nslots) return;
    all[i] = e->sh[slots[i]];
  }
  bool *changed = ar_alloc(e->a, (n ? n : 1) * sizeof *changed);
  uint8_t flags = e->op_flags[id]; /* known since the first visit (first_visit_bits) */
  if (!directions && e->schedule >= 0) {
    directions = ar_alloc(e->a, (rule->nfactors ? rule->nfactors : 1) * sizeof *directions);
    for (uint32_t f = 0; f < rule->nfactors; f++) directions[f] = scheduled_direction(flags, rule, f, e->schedule);
  }
  uint32_t key = visit_key(e, directions, rule->nfactors);
  if (visit_is_redundant(e, id, slots, n, key)) {
    ar_rewind(e->a, mark);
    return;
  }
  bool elementwise = e->aggressive && (flags & OPF_ELEMENTWISE);
  if (n > PROP_MEMO_MAX_TENSORS) { /* kept as they are: nothing is rewound */
    sharding_ref *before = ar_alloc(e->a, n * sizeof *before);
    memcpy(before, all, n * sizeof *all);
    if (propagate_tensors(e, rule, all, changed, directions, elementwise)) apply_visit(e, w, id, nin, slots, before, all, n, false);
    return;
  }
  sharding_ref before[PROP_MEMO_MAX_TENSORS], after[PROP_MEMO_MAX_TENSORS];
  uint32_t kslots[PROP_MEMO_MAX_TENSORS];
  memcpy(before, all, n * sizeof *all);
  memcpy(kslots, slots, n * sizeof *slots);
  bool memo = key && (vb & VB_SHARED);
  const sharding_ref *known = memo ? prop_visit_memo_get(&e->memo, rule, key, before, n) : NULL;
  if (known) {
    ar_rewind(e->a, mark);
    apply_visit(e, w, id, nin, kslots, before, known, n, true); /* the memo holds kept shardings */
    return;
  }
  if (!propagate_tensors(e, rule, all, changed, directions, elementwise)) {
    ar_rewind(e->a, mark);
    if (memo) prop_visit_memo_put(&e->memo, rule, key, before, before, n);
    return;
  }
  /* new shardings already kept elsewhere are shared; the rest are copied down over the scratch */
  bool fresh[PROP_MEMO_MAX_TENSORS];
  memcpy(after, all, n * sizeof *all);
  for (uint32_t i = 0; i < n; i++) {
    sharding_ref kept = changed[i] ? prop_sharding_set_find(&e->shardings, after[i]) : NULL;
    if (kept) after[i] = kept;
    fresh[i] = changed[i] && !kept;
  }
  keep_changed(e, mark, after, fresh, n);
  for (uint32_t i = 0; i < n; i++)
    if (fresh[i]) after[i] = prop_sharding_set_add(&e->shardings, after[i]);
  if (memo) prop_visit_memo_put(&e->memo, rule, key, before, after, n);
  apply_visit(e, w, id, nin, kslots, before, after, n, true);
}

static const ir_op *body_terminator(const ir_op *fn) {
  if (!fn->nregions || !ir_op_regions(fn)[0]->nblocks) return NULL;
  const ir_block *b = ir_op_regions(fn)[0]->blocks[0];
  return b->nops ? b->ops[b->nops - 1] : NULL;
}

/* The entry functions' results follow their return values and back (identity rule); a result's
 * sharding is the function's, so changing it notifies no op. */
static void propagate_func_results(prop_engine *e, worklist *w) {
  for (uint32_t i = 0; i < e->nentry_funcs; i++) {
    const ir_op *fn = e->entry_funcs[i];
    uint32_t f = e->entry_func_index[i];
    const ir_op *ret = body_terminator(fn);
    if (!ret) continue;
    for (uint32_t k = 0; k < ret->noperands && k < ir_op_nresult_attrs(fn); k++) {
      ir_tensor_type tt;
      const ir_value *v = ret->operands[k];
      uint32_t slot = operand_slot(e, ret, k);
      if (slot >= e->nslots || !ir_parse_tensor_type(e->a, ir_value_type(v), &tt) || tt.rank < 0) continue;
      bool dynamic = false;
      for (int32_t d = 0; d < tt.rank; d++) dynamic |= tt.dims[d] < 0;
      if (dynamic) continue;
      const prop_rule *rule = identity_rule(e->a, tt.dims, (uint32_t)tt.rank, 1);
      sharding_ref all[2] = {e->sh[slot], e->func_results[f][k]};
      bool changed[2];
      if (!propagate_tensors(e, rule, all, changed, NULL, false)) continue;
      if (changed[0]) set_slot(e, w, slot, all[0], owner_id(v), UINT32_MAX);
      if (changed[1]) e->func_results[f][k] = all[1];
    }
  }
}

/* One propagation pass to its fixed point (Shardy's BasicPropagationPassImpl::propagate with the
 * engine's factor strategy and schedule round): the first pass of a round queues every item; a later
 * one only the items whose slots were written since that round's previous pass began. */
static void run_pass(prop_engine *e) {
  const ir_module *m = e->m;
  uint32_t nitems = m->nops + (uint32_t)e->edges.n, round = (uint32_t)(e->schedule + 1);
  if (!e->work.on_stack) { /* one for every pass: each ends with it empty */
    worklist empty = {e->a, NULL, 0, 0, ar_calloc(e->a, nitems / 64 + 1, sizeof *empty.on_stack),
                      ar_calloc(e->a, nitems / 64 + 1, sizeof *empty.pending),
                      0, 0};
    e->work = empty;
  }
  worklist w = e->work;
  propagate_func_results(e, NULL);
  if (!e->round_seen[round] && e->schedule >= 1 && e->last_schedule == e->schedule - 1) {
    /* the previous round just reached its fixed point: only ops whose directions open up now, and the
     * readers of what changed since, can do something */
    e->round_seen[round] = true;
    for (uint32_t pos = 0; pos < m->nops; pos++) {
      uint8_t steps = e->op_bits[pos] & ROUND_STEP_BITS; /* cached: most ops are not looked at again */
      if (!e->visited[pos] || ((steps ? steps : round_steps(e, m->ops[pos])) & 1u << e->schedule)) mark_pending(&w, pos);
    }
    for (uint32_t i = e->pass_end_log; i < e->nchanges; i++) queue_readers(e, &w, change_at(e, i));
  } else if (!e->round_seen[round]) { /* other directions than before: every item may do something */
    e->round_seen[round] = true;
    for (uint32_t pos = 0; pos < nitems; pos++) mark_pending(&w, pos);
  } else {
    for (uint32_t i = e->round_log_pos[round]; i < e->nchanges; i++) queue_readers(e, &w, change_at(e, i));
  }
  e->round_log_pos[round] = e->nchanges;
  for (uint32_t item; (item = next_item(&w)) != UINT32_MAX;) {
    ar_step(e->a, 1);
    if (item < m->nops) propagate_op(e, &w, item);
    else propagate_edge(e, &w, item - m->nops);
  }
  e->work.stack = w.stack, e->work.cap = w.cap; /* grown during the pass */
  e->last_schedule = e->schedule;
  e->pass_end_log = e->nchanges;
  propagate_func_results(e, NULL);
}

static void run_op_priority(prop_engine *e) {
  for (int round = 0; round < OP_SCHEDULE_LEN; round++) {
    e->schedule = round;
    run_pass(e);
  }
  e->schedule = -1;
}

/* ---- user priorities ----------------------------------------------------------------------------- */

/* Every sharding the engine holds, for the priority rounds: value slots, function results, the
 * in_shardings of manual/named computations. */
typedef struct {
  sharding_ref *at;
  sharding_ref original;
  uint32_t slot; /* the value slot `at` is, or UINT32_MAX (a function result) */
} sharding_site;
typedef SC_VEC(sharding_site) sharding_sites;

/* Whether getInitializedSharding changes `s`: a dimension has a priority, or its replicated axes are not
 * in mesh order. */
static bool needs_initializing(sharding_ref s) {
  for (uint32_t d = 0; d < s->rank; d++)
    if (s->dims[d].priority >= 0) return true;
  for (uint32_t i = 1; i < s->replicated.n; i++)
    if (axis_before(s->replicated.v[i], s->replicated.v[i - 1])) return true;
  return false;
}

/* The sites whose sharding the priority rounds change (most have no priority: they are only marked
 * written, as setting them to themselves would). */
static void collect_sites(prop_engine *e, sharding_sites *sites) {
  size_t n = 0; /* counted first: one array of the right size, however many values are sharded */
  for (uint32_t s = 0; s < e->nslots; s++) n += e->sh[s] && alias_of(e, s) == s && needs_initializing(e->sh[s]);
  for (uint32_t f = 0; f < e->m->nfuncs; f++)
    for (uint32_t k = 0; k < ir_op_nresult_attrs(e->m->funcs[f]); k++)
      n += e->func_results[f][k] && needs_initializing(e->func_results[f][k]);
  sites->v = ar_alloc(e->a, (n + 1) * sizeof *sites->v);
  sites->cap = n + 1;
  for (uint32_t s = 0; s < e->nslots; s++) {
    if (!e->sh[s] || alias_of(e, s) != s) continue;
    if (needs_initializing(e->sh[s])) sites->v[sites->n++] = (sharding_site){&e->sh[s], e->sh[s], s};
    else mark_written(e, s);
  }
  for (uint32_t f = 0; f < e->m->nfuncs; f++)
    for (uint32_t k = 0; k < ir_op_nresult_attrs(e->m->funcs[f]); k++)
      if (e->func_results[f][k] && needs_initializing(e->func_results[f][k]))
        sites->v[sites->n++] = (sharding_site){&e->func_results[f][k], e->func_results[f][k], UINT32_MAX};
}

/* Shardy's getInitializedSharding: p0 dimensions keep their axes (priority dropped); higher ones
 * start closed and empty, their axes replicated until their round. */
static sharding_ref initialized(sc_arena *a, const prop_sharding *s) {
  prop_sharding *r = prop_sharding_open(a, s->mesh, s->mesh_name, s->rank);
  uint32_t nrep = s->replicated.n;
  for (uint32_t d = 0; d < s->rank; d++) nrep += s->dims[d].priority > 0 ? s->dims[d].axes.n : 0;
  prop_axis *rep = ar_alloc(a, (nrep ? nrep : 1) * sizeof *rep);
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->replicated.n; i++) rep[n++] = s->replicated.v[i];
  for (uint32_t d = 0; d < s->rank; d++) {
    r->dims[d] = s->dims[d];
    r->dims[d].priority = -1;
    if (s->dims[d].priority > 0) {
      for (uint32_t i = 0; i < s->dims[d].axes.n; i++) rep[n++] = s->dims[d].axes.v[i];
      r->dims[d].axes.n = 0;
      r->dims[d].closed = true;
    }
  }
  qsort(rep, n, sizeof *rep, cmp_axis); /* replicated axes in mesh order */
  r->replicated.v = rep;
  r->replicated.n = n;
  r->unreduced = s->unreduced;
  r->unreduced_op = s->unreduced_op;
  return r;
}

/* Shardy's getUpdatedShardingForPriority: the dimensions written with priority p get their axes back. */
static sharding_ref with_priority(sc_arena *a, const prop_sharding *cur, const prop_sharding *orig, int64_t p) {
  if (!cur || cur->rank != orig->rank) return cur;
  prop_sharding *r = prop_sharding_open(a, cur->mesh, cur->mesh_name, cur->rank);
  *r = *cur;
  r->dims = ar_alloc(a, (cur->rank ? cur->rank : 1) * sizeof *r->dims);
  prop_axis *rep = ar_alloc(a, (cur->replicated.n ? cur->replicated.n : 1) * sizeof *rep);
  uint32_t n = 0;
  for (uint32_t d = 0; d < cur->rank; d++) {
    r->dims[d] = cur->dims[d];
    if (orig->dims[d].priority == p) {
      r->dims[d] = orig->dims[d];
      r->dims[d].priority = -1;
    }
  }
  for (uint32_t i = 0; i < cur->replicated.n; i++) {
    bool seen = false;
    for (uint32_t d = 0; d < orig->rank && !seen; d++)
      if (orig->dims[d].priority == p)
        for (uint32_t k = 0; k < orig->dims[d].axes.n && !seen; k++) {
          prop_axis x = orig->dims[d].axes.v[k], y = cur->replicated.v[i];
          seen = x.axis == y.axis && x.pre == y.pre && x.size == y.size;
        }
    if (!seen) rep[n++] = cur->replicated.v[i];
  }
  r->replicated.v = rep;
  r->replicated.n = n;
  return r;
}

static void set_site(prop_engine *e, const sharding_site *site, sharding_ref s) {
  if (site->slot == UINT32_MAX) *site->at = s;
  else set_slot(e, NULL, site->slot, s, UINT32_MAX, UINT32_MAX);
}

/* A priority some dimension of a site was written with, for the rounds (sorted by priority). */
typedef struct {
  int64_t priority;
  uint32_t site;
} site_priority;

static int cmp_site_priority(const void *x, const void *y) {
  const site_priority *a = x, *b = y;
  if (a->priority != b->priority) return a->priority < b->priority ? -1 : 1;
  return a->site < b->site ? -1 : a->site > b->site;
}

/* Shardy's user-priority propagation: op priority with every p0 sharding (higher priorities held back),
 * then once more per priority, ascending, with that priority's dimensions restored. Each round touches
 * only the sites written with its priority. */
static void run_user_priority(prop_engine *e) {
  sharding_sites sites = {0};
  collect_sites(e, &sites);
  SC_VEC(site_priority) rounds = {0};
  for (size_t i = 0; i < sites.n; i++) {
    const prop_sharding *s = sites.v[i].original;
    for (uint32_t d = 0; d < s->rank; d++)
      if (s->dims[d].priority > 0) {
        site_priority x = {s->dims[d].priority, (uint32_t)i};
        SC_PUSH(e->a, rounds, x);
      }
    ar_mark_t mark = ar_mark(e->a);
    set_site(e, &sites.v[i], keep_shared(e, mark, initialized(e->a, s)));
  }
  if (rounds.n) qsort(rounds.v, rounds.n, sizeof *rounds.v, cmp_site_priority);
  run_op_priority(e);
  for (size_t k = 0; k < rounds.n;) {
    int64_t p = rounds.v[k].priority;
    for (; k < rounds.n && rounds.v[k].priority == p; k++) {
      if (k && rounds.v[k - 1].priority == p && rounds.v[k - 1].site == rounds.v[k].site) continue;
      const sharding_site *site = &sites.v[rounds.v[k].site];
      set_site(e, site, with_priority(e->a, *site->at, site->original, p));
    }
    run_op_priority(e);
  }
}

static bool any_seed(const prop_engine *e) {
  for (uint32_t s = 0; s < e->nslots; s++)
    if (e->sh[s]) return true;
  for (uint32_t f = 0; f < e->m->nfuncs; f++)
    for (uint32_t k = 0; k < ir_op_nresult_attrs(e->m->funcs[f]); k++)
      if (e->func_results[f][k]) return true;
  return false;
}

/* ---- the pipeline's -sdy-apply-sharding-constraints ----------------------------------------------- */

static bool fully_closed(sharding_ref s) {
  for (uint32_t d = 0; d < s->rank; d++)
    if (!s->dims[d].closed) return false;
  return true;
}

/* A value data-flow edges own or feed (a while's, case's, barrier's or computation's result, an edge's,
 * a region's argument): the pass keeps a constraint on it as an op instead. */
static bool edge_value(const ir_value *v) {
  if (ir_value_def(v))
    return ir_value_def(v)->kind == SC_OP_SDY_DATA_FLOW_EDGE || ir_value_def(v)->kind == SC_OP_WHILE || ir_value_def(v)->kind == SC_OP_CASE ||
           ir_value_def(v)->kind == SC_OP_SDY_MANUAL_COMPUTATION || ir_value_def(v)->kind == SC_OP_SDY_NAMED_COMPUTATION ||
           is_optimization_barrier(ir_value_def(v));
  const ir_op *owner = value_owner(v);
  return !owner || owner->kind != SC_OP_FUNC;
}

/* Another constraint (or a manual computation's in_sharding) asks `input` for another sharding than `s`. */
static bool other_constraint_differs(const prop_engine *e, uint32_t slot, const ir_value *input, sharding_ref s) {
  for (uint32_t u = prefix_at(&e->use_start, slot); u < prefix_at(&e->use_start, slot + 1); u++) {
    const ir_op *user = e->m->ops[e->users[u]];
    if (is_constraint(user) && user->nresults == 1) {
      if (!prop_sharding_eq(initial_of(e, prefix_at(&e->result_base, user->id)), s)) return true;
    } else if (user->kind == SC_OP_SDY_MANUAL_COMPUTATION && written_globals(e, user)) {
      for (uint32_t k = 0; k < user->noperands; k++)
        if (user->operands[k] == input && !prop_sharding_eq(written_globals(e, user)->in[k], s)) return true;
    }
  }
  return false;
}

/* `input` without a sharding takes the fully closed sharding `s` a constraint asks of it, unless another
 * constraint asks for a different one (Shardy's applyConstraint; constraints on data-flow values stay). */
static void apply_constraint(prop_engine *e, const ir_value *input, sharding_ref s, uint32_t origin) {
  if (!input || !s || !fully_closed(s) || edge_value(input)) return;
  int32_t rank = type_rank(e, ir_value_type(input));
  if (rank < 0 || (uint32_t)rank != s->rank) return;
  uint32_t slot = slot_of(e, input);
  if (slot >= e->nslots || e->sh[slot] || other_constraint_differs(e, slot, input, s)) return;
  e->sh[slot] = s;
  mark_written(e, slot);
  e->origin[slot] = origin;
}

static void apply_sharding_constraints(prop_engine *e) {
  for (md_annotated it = md_annotated_first(e->model); it.op; md_annotated_next(e->model, &it)) {
    const ir_op *op = it.op; /* a constraint without a sharding asks for none */
    if (is_constraint(op) && op->noperands == 1 && op->nresults == 1) {
      uint32_t r = prefix_at(&e->result_base, op->id);
      apply_constraint(e, op->operands[0], initial_of(e, r), r);
    } else if (op->kind == SC_OP_SDY_MANUAL_COMPUTATION && written_globals(e, op)) {
      for (uint32_t k = 0; k < op->noperands; k++) apply_constraint(e, op->operands[k], written_globals(e, op)->in[k], UINT32_MAX);
    }
  }
}

/* What only the fixed point reads (when each item was visited and with what, when each slot last changed)
 * goes back to the system once it is reached: the cost model and the rules that run next allocate into
 * it, so a large module's peak is the end of propagation, not the sum. (The ops' flags stay: building a
 * rule after the run, as keep-sharding-rules printing does, reads them.) */
static void end_fixed_point(prop_engine *e) {
  ar_release(e->a, e->visited), e->visited = NULL;
  ar_release(e->a, e->visit_key), e->visit_key = NULL;
  ar_release(e->a, e->last_change), e->last_change = NULL;
}

prop_engine *prop_engine_run(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine_options *o) {
  prop_engine *e = ar_calloc(a, 1, sizeof *e);
  e->a = a;
  e->m = m;
  e->model = model;
  e->opt = *o;
  e->schedule = -1;
  prop_sharding_set_init(&e->shardings, a);
  hs_name_map_init(&e->seeds, a, 16);
  prop_visit_memo_init(&e->memo, a, 4096 + m->nops / 16);
  e->name_bits = ar_calloc(a, m->nop_names + 1, sizeof *e->name_bits);
  number_values(e);
  if (o->split_constants) split_constant_uses(e);
  build_edges(e);
  index_uses(e);
  find_entry_funcs(e);
  seed(e);
  index_owners(e);
  e->last_change = ar_calloc(a, e->nslots + 1, sizeof *e->last_change);
  e->op_flags = ar_calloc(a, m->nops + 1, 1);
  e->op_bits = ar_calloc(a, m->nops + 1, 1);
  e->last_schedule = -2;
  e->visited = ar_calloc(a, m->nops + e->edges.n + 1, sizeof *e->visited);
  e->visit_key = ar_calloc(a, m->nops + e->edges.n + 1, sizeof *e->visit_key);
  e->rule_of = ar_calloc(a, m->nops + 1, sizeof *e->rule_of);
  e->share = (rule_share_table){a, ar_hash_seed(a), NULL, NULL, 0, 0};
  e->facts = prop_rule_facts_build(a, m);
  if (o->apply_constraints && !o->seed_only) apply_sharding_constraints(e);
  if (!o->seed_only) sync_sharding_groups(e); /* at propagation's start, after the import's constraints */
  if (!o->import_only && !o->seed_only && any_seed(e)) { /* else nothing written: nothing to propagate */
    e->aggressive = o->strategy != PROP_BASIC;
    if (o->strategy == PROP_USER_PRIORITY) run_user_priority(e);
    else if (o->strategy == PROP_OP_PRIORITY) run_op_priority(e);
    else run_pass(e);
  }
  end_fixed_point(e);
  return e;
}

const ir_value *prop_engine_value_origin(const prop_engine *e, const ir_value *v) {
  uint32_t s = slot_of(e, v);
  if (s >= e->nslots || e->origin[s] == UINT32_MAX) return NULL;
  return slot_value(e, e->origin[s]) ? slot_value(e, e->origin[s]) : v;
}

const prop_sharding *prop_engine_local_sharding(const prop_engine *e, const ir_op *op, const prop_sharding *s) {
  return op->kind == SC_OP_SDY_MANUAL_COMPUTATION ? erase_manual(e->a, op, e->model, s) : s;
}

prop_engine_messages prop_engine_warnings(const prop_engine *e) {
  return (prop_engine_messages){e->messages.v, (uint32_t)e->messages.n};
}

const prop_rule_facts *prop_engine_facts(const prop_engine *e) { return e->facts; }

const prop_rule *prop_engine_built_rule(const prop_engine *e, const ir_op *op, bool conservative, bool *known) {
  *known = rule_known(e, op->id) && e->opt.conservative == conservative && op->kind != SC_OP_SDY_PROPAGATION_BARRIER;
  return *known ? known_rule(e, op->id) : NULL;
}

bool prop_engine_operand_is_copy(const prop_engine *e, const ir_op *op, uint32_t k) {
  return k < op->noperands && e->own_copy_at && e->own_copy_at[op->id] != UINT32_MAX &&
         e->own_copy[e->own_copy_at[op->id] + k] != UINT32_MAX;
}

const prop_sharding *prop_engine_operand_sharding(const prop_engine *e, const ir_op *op, uint32_t k) {
  uint32_t s = k < op->noperands ? operand_slot(e, op, k) : UINT32_MAX;
  return s < e->nslots ? e->sh[s] : NULL;
}

const prop_sharding *prop_engine_result_sharding(const prop_engine *e, const ir_op *op, uint32_t r) {
  if (r >= op->nresults || op->id >= e->m->nops || e->m->ops[op->id] != op) return NULL; /* not this module's */
  uint32_t s = alias_of(e, prefix_at(&e->result_base, op->id) + r);
  return s < e->nslots ? e->sh[s] : NULL;
}

const prop_sharding *prop_engine_value_sharding(const prop_engine *e, const ir_value *v) {
  uint32_t s = slot_of(e, v);
  return s < e->nslots ? e->sh[s] : NULL;
}

