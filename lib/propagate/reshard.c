/* reshard.c — explicit reshards (see reshard.h; the semantics are those of Shardy's
 * insert_explicit_reshards.cc and explicit_reshards_util.cc). */
#include <string.h>

#include "propagate/engine.h"
#include "propagate/op_rule.h"
#include "propagate/reshard.h"
#include "propagate/sharding.h"
#include "util/hashset.h"

typedef const prop_sharding *sharding_ref;

/* ---- axis lists ------------------------------------------------------------------------------------ */

static int64_t axes_size(prop_axes x) {
  int64_t s = 1;
  for (uint32_t i = 0; i < x.n; i++) s *= x.v[i].size;
  return s;
}

static bool axes_equal(prop_axes a, prop_axes b) {
  if (a.n != b.n) return false;
  for (uint32_t i = 0; i < a.n; i++)
    if (!prop_axis_eq(a.v[i], b.v[i])) return false;
  return true;
}

static prop_axes axes_copy(sc_arena *a, prop_axes x, uint32_t extra) {
  prop_axes r = {ar_alloc(a, (x.n + extra + 1) * sizeof *r.v), x.n};
  if (x.n) memcpy(r.v, x.v, x.n * sizeof *r.v);
  return r;
}

static bool lists_overlap(prop_axes a, prop_axes b) {
  for (uint32_t i = 0; i < a.n; i++)
    for (uint32_t j = 0; j < b.n; j++)
      if (prop_axis_overlaps(a.v[i], b.v[j])) return true;
  return false;
}

/* Shardy's getPrefixWithoutOverlap against a list: false when nothing is left. */
static bool prefix_without_overlap_list(prop_axis x, prop_axes others, prop_axis *out) {
  for (uint32_t i = 0; i < others.n; i++)
    if (!prop_axis_prefix_without_overlap(x, others.v[i], &x)) return false;
  *out = x;
  return true;
}

/* Shardy's truncateAxesByRemovingOverlaps / AxisListRef::truncateWithoutOverlap: the longest prefix of
 * `x` (its last axis possibly cut to a sub-axis prefix) that overlaps nothing of `others`. True when
 * `x` changed. */
static bool truncate_without_overlap(prop_axes *x, prop_axes others) {
  for (uint32_t i = 0; i < x->n; i++) {
    prop_axis prefix;
    bool has = prefix_without_overlap_list(x->v[i], others, &prefix);
    if (has && prop_axis_eq(prefix, x->v[i])) continue;
    if (has) {
      x->v[i] = prefix;
      x->n = i + 1;
    } else {
      x->n = i;
    }
    return true;
  }
  return false;
}

/* Shardy's AxisRefAttr order by name (see collectives.c), for candidate ties. */
static int axis_cmp(const md_mesh *mesh, prop_axis a, prop_axis b) {
  if (prop_axis_eq(a, b)) return 0;
  ir_span an = mesh->axes[a.axis].name, bn = mesh->axes[b.axis].name;
  if (a.axis != b.axis) {
    uint32_t n = an.n < bn.n ? an.n : bn.n;
    int c = memcmp(an.p, bn.p, n);
    return c ? c : (an.n < bn.n ? -1 : 1);
  }
  int64_t ap = a.pre ? a.pre : 1, bp = b.pre ? b.pre : 1;
  if (!a.pre) return bp > 1 ? -1 : 1;
  if (!b.pre) return a.pre == 1 ? -1 : 1;
  if (ap != bp) return ap < bp ? -1 : 1;
  return a.size < b.size ? -1 : 1;
}

/* AxisListRef order: shorter first, then by the first differing axis. */
static int list_cmp(const md_mesh *mesh, prop_axes a, prop_axes b) {
  if (a.n != b.n) return a.n < b.n ? -1 : 1;
  for (uint32_t i = 0; i < a.n; i++) {
    int c = axis_cmp(mesh, a.v[i], b.v[i]);
    if (c) return c;
  }
  return 0;
}

/* AxisListRef::strictPrefixOf. */
static bool strict_prefix(prop_axes a, prop_axes b) {
  if (!a.n) return b.n > 0;
  if (a.n > b.n) return false;
  for (uint32_t i = 0; i + 1 < a.n; i++)
    if (!prop_axis_eq(a.v[i], b.v[i])) return false;
  prop_axis tail = a.v[a.n - 1], other = b.v[a.n - 1];
  if (a.n == b.n) return prop_axis_prefix_of(tail, other) && !prop_axis_eq(tail, other);
  return prop_axis_prefix_of(tail, other);
}

/* ---- the pass ---------------------------------------------------------------------------------- */

/* The operands of one op this pass set: per operand the name it reads now (NULL = its value's) and that
 * value's sharding (NULL = its value's own). */
typedef struct {
  const char **names;
  sharding_ref *now;
} operand_edit;

typedef struct {
  sc_arena *a;
  const ir_module *m;
  const md_model *model;
  const prop_engine *e;
  prop_printer *pr;
  SC_VEC(prop_reshard) found; /* what the pass inserts, for the cost layer (prop_explicit_reshards) */
  const prop_rule_facts *facts;
  hs_name_map remap;          /* value (pointer bytes) -> index in names: the name its uses read now */
  SC_VEC(const char *) names;
  SC_VEC(sharding_ref) now;   /* per names entry: the sharding its uses read now (NULL = the value's own) */
  hs_name_map edited;         /* op id -> index in edits: the ops whose operands this pass set (few) */
  SC_VEC(operand_edit) edits;
  SC_VEC(prop_pass_error) errors;
  const md_mesh *global_mesh;  /* the first declared mesh with axes that is not single-device, or NULL */
  bool partial;                /* enable-full-version=false: reshards only where full_version_op says */
} rpass;

static const char *value_name(rpass *p, const ir_value *v) {
  uint32_t k;
  if (hs_name_map_get(&p->remap, (const char *)&v, sizeof v, &k)) return p->names.v[k];
  /* a result of a `%0:2 = ...` group is `%0#k` */
  const ir_op *def = ir_value_def(v);
  if (def && def->nresults > 1 && !memchr(v->name.p, '#', v->name.n) && ir_op_result(def, 0)->name.n == v->name.n &&
      ir_op_result(def, def->nresults - 1)->name.n == v->name.n &&
      !memcmp(ir_op_result(def, 0)->name.p, ir_op_result(def, def->nresults - 1)->name.p, v->name.n))
    return ar_printf(p->a, "%.*s#%u", SC_SPAN_ARG(v->name), v->index);
  return ir_span_dup(p->a, v->name);
}

/* The value's uses read `name` now, whose sharding is `now` (NULL: the value's own). */
static void remap_value_sharded(rpass *p, const ir_value *v, const char *name, sharding_ref now) {
  uint32_t k;
  if (hs_name_map_get(&p->remap, (const char *)&v, sizeof v, &k)) {
    p->names.v[k] = name;
    p->now.v[k] = now;
    return;
  }
  /* the map keeps a pointer to its key: store the value pointer in arena memory that never moves */
  const ir_value **slot = ar_alloc(p->a, sizeof *slot);
  *slot = v;
  SC_PUSH(p->a, p->names, name);
  SC_PUSH(p->a, p->now, now);
  hs_name_map_make_room(&p->remap, p->a);
  hs_name_map_put(&p->remap, (const char *)slot, sizeof *slot, (uint32_t)p->names.n - 1, NULL);
}

static void remap_value(rpass *p, const ir_value *v, const char *name) { remap_value_sharded(p, v, name, NULL); }

/* The record of the operands this pass set on `op`: NULL when it set none (and `make` is false). */
static operand_edit *edit_of(rpass *p, const ir_op *op, bool make) {
  uint32_t k;
  if (p->edits.n && hs_name_map_get(&p->edited, (const char *)&op->id, sizeof op->id, &k)) return &p->edits.v[k];
  if (!make) return NULL;
  operand_edit e = {ar_calloc(p->a, op->noperands + 1, sizeof *e.names), ar_calloc(p->a, op->noperands + 1, sizeof *e.now)};
  if (!p->edits.n) hs_name_map_init(&p->edited, p->a, 64); /* grows with the ops the pass edits */
  SC_PUSH(p->a, p->edits, e);
  hs_name_map_make_room(&p->edited, p->a);
  hs_name_map_put(&p->edited, (const char *)&op->id, sizeof op->id, (uint32_t)p->edits.n - 1, NULL);
  return &p->edits.v[p->edits.n - 1];
}

static const char *operand_name(rpass *p, const ir_op *op, uint32_t k) {
  const operand_edit *e = edit_of(p, op, false);
  if (e && e->names[k]) return e->names[k];
  return op->operands[k] ? value_name(p, op->operands[k]) : ir_span_dup(p->a, ir_op_operand_name(op, k));
}

static void set_operand_name(rpass *p, const ir_op *op, uint32_t k, const char *name) { edit_of(p, op, true)->names[k] = name; }

/* Operand `k` of `op` reads `name` now, a value with sharding `now` (an op this pass put before it). */
static void set_operand(rpass *p, const ir_op *op, uint32_t k, const char *name, sharding_ref now) {
  operand_edit *e = edit_of(p, op, true);
  e->names[k] = name;
  e->now[k] = now;
}

/* A value's type; a pretty while's `%iterArg` (written without one) has its result's. */
static ir_span value_type(const ir_value *v) {
  if (ir_value_type(v).n || !ir_value_block(v) || !ir_value_block(v)->parent || !ir_value_block(v)->parent->parent) return ir_value_type(v);
  const ir_op *owner = ir_value_block(v)->parent->parent;
  return owner->kind == SC_OP_WHILE && v->index < owner->nresults ? ir_value_type(ir_op_result(owner, v->index)) : ir_value_type(v);
}

/* The sharding this pass gave `v` (renamed), if any. */
static bool remapped(rpass *p, const ir_value *v, sharding_ref *s) {
  uint32_t k;
  if (!v || !p->now.n || !hs_name_map_get(&p->remap, (const char *)&v, sizeof v, &k) || !p->now.v[k]) return false;
  *s = p->now.v[k];
  return true;
}

static sharding_ref value_sharding(rpass *p, const ir_value *v) {
  sharding_ref s;
  if (remapped(p, v, &s)) return s;
  return v ? prop_engine_value_sharding(p->e, v) : NULL;
}

/* value_sharding of `op`'s result r, read by position. */
static sharding_ref result_sharding(rpass *p, const ir_op *op, uint32_t r) {
  sharding_ref s;
  if (remapped(p, ir_op_result(op, r), &s)) return s;
  return prop_engine_result_sharding(p->e, op, r);
}

static sharding_ref bypassing_barriers(rpass *p, const ir_value *v) {
  for (uint32_t guard = 0; v && ir_value_def(v) && ir_value_def(v)->kind == SC_OP_SDY_PROPAGATION_BARRIER && ir_value_def(v)->noperands && guard < (1u << 30);
       guard++)
    v = ir_value_def(v)->operands[0];
  return value_sharding(p, v);
}

/* The sharding operand `k` of `op` has now: an op this pass put before it, else its value's (through
 * propagation barriers when `bypass`). */
static sharding_ref operand_sharding(rpass *p, const ir_op *op, uint32_t k, bool bypass) {
  const operand_edit *e = edit_of(p, op, false);
  if (e && e->now[k]) return e->now[k];
  if (prop_engine_operand_is_copy(p->e, op, k)) return prop_engine_operand_sharding(p->e, op, k);
  if (bypass) return bypassing_barriers(p, op->operands[k]);
  sharding_ref s;
  if (remapped(p, op->operands[k], &s)) return s;
  return op->operands[k] ? prop_engine_operand_sharding(p->e, op, k) : NULL; /* by position: its value's slot */
}

static bool fully_replicated(sharding_ref s) {
  if (!s) return true;
  for (uint32_t d = 0; d < s->rank; d++)
    if (s->dims[d].axes.n) return false;
  return true;
}

/* Shardy's isEquivalent: both replicated (no unreduced axes), or the same mesh, unreduced and axes; no
 * sharding is equivalent to any sharding without dimension axes. */
static bool equivalent(sharding_ref a, sharding_ref b) {
  if (!a) return fully_replicated(b); /* Shardy's free isEquivalent: no sharding is like any replicated one */
  bool ra = fully_replicated(a) && (!a || !a->unreduced.n), rb = fully_replicated(b) && (!b || !b->unreduced.n);
  if (ra) return rb;
  if (!b || a->mesh != b->mesh || a->rank != b->rank || !axes_equal(a->unreduced, b->unreduced)) return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (!axes_equal(a->dims[d].axes, b->dims[d].axes)) return false;
  return true;
}

static bool same_axes(const md_mesh *x, const md_mesh *y) {
  if (x == y) return true;
  if (x->naxes != y->naxes) return false;
  for (uint32_t i = 0; i < x->naxes; i++)
    if (x->axes[i].name.n != y->axes[i].name.n || memcmp(x->axes[i].name.p, y->axes[i].name.p, x->axes[i].name.n) ||
        x->axes[i].size != y->axes[i].size)
      return false;
  return true;
}

static bool same_device_ids(const md_mesh *x, const md_mesh *y) {
  if (x->ndevice_ids != y->ndevice_ids) return false;
  return !x->ndevice_ids || !memcmp(x->device_ids, y->device_ids, x->ndevice_ids * sizeof *x->device_ids);
}

/* Shardy's getMesh: the meshes of the sharded tensors must agree (device order aside); the most common
 * one wins. False for no mesh, disagreeing meshes or a single-device mesh. */
static bool op_mesh(sharding_ref *all, uint32_t n, sharding_ref *mesh_of) {
  sharding_ref first = NULL, best = NULL;
  uint32_t best_count = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!all[i]) continue;
    if (!first) first = all[i];
    if (fully_replicated(all[i])) continue;
    if (best && !same_axes(best->mesh, all[i]->mesh)) return false;
    uint32_t count = 0;
    for (uint32_t j = 0; j < n; j++) count += all[j] && !fully_replicated(all[j]) && all[j]->mesh == all[i]->mesh;
    if (count > best_count) best_count = count, best = all[i];
  }
  if (!best) best = first;
  if (!best || best->mesh->maximal) return false;
  *mesh_of = best;
  return true;
}

static int64_t elements_of(sc_arena *a, const ir_value *v) {
  ir_tensor_type tt;
  if (!v || !ir_parse_tensor_type(a, value_type(v), &tt) || tt.rank < 0) return 0;
  int64_t n = 1;
  for (int32_t d = 0; d < tt.rank; d++) {
    if (tt.dims[d] < 0) return 0;
    n *= tt.dims[d];
  }
  return n;
}

/* ---- the factor shardings an op ends with --------------------------------------------------------- */

typedef struct {
  const prop_rule *rule;
  prop_projection *proj;
  uint32_t ntensors;
  const int64_t *sizes; /* per tensor: number of elements */
  const md_mesh *mesh;
  sc_arena *a;
} op_view;

static bool has_factor(const op_view *v, uint32_t t, uint32_t f) { return v->proj->tensors[t].factors[f].present; }
static prop_axes factor_axes(const op_view *v, uint32_t t, uint32_t f) { return v->proj->tensors[t].factors[f].axes; }

static const prop_tensor *mapping_of(const op_view *v, uint32_t t) {
  return t < v->rule->noperands ? &v->rule->operands[t] : &v->rule->results[t - v->rule->noperands];
}

/* Shardy's getCompatibleFactorShardings: every factor sharded alike on all its tensors, nothing shared
 * between factors, need-replication factors unsharded. False otherwise. */
static bool compatible_axes(const op_view *v, prop_axes *common) {
  prop_axes seen = {ar_alloc(v->a, 8 * sizeof(prop_axis)), 0};
  uint32_t cap = 8;
  for (uint32_t f = 0; f < v->rule->nfactors; f++) {
    bool any = false;
    prop_axes c = {NULL, 0};
    for (uint32_t t = 0; t < v->ntensors; t++) {
      if (!has_factor(v, t, f)) continue;
      if (any && !axes_equal(c, factor_axes(v, t, f))) return false;
      c = factor_axes(v, t, f);
      any = true;
    }
    if (v->rule->factors[f].type == PROP_FACTOR_NEED_REPLICATION) {
      if (c.n) return false;
      common[f].n = 0;
      continue;
    }
    if (lists_overlap(c, seen)) return false;
    common[f] = c;
    if (seen.n + c.n > cap) {
      uint32_t ncap = (seen.n + c.n) * 2;
      seen.v = ar_grow(v->a, seen.v, seen.n, ncap, sizeof *seen.v);
      cap = ncap;
    }
    if (c.n) memcpy(seen.v + seen.n, c.v, c.n * sizeof *c.v);
    seen.n += c.n;
  }
  return true;
}

static bool tensor_is_scalar(const op_view *v, uint32_t t) { return mapping_of(v, t)->rank == 0; }

static bool has_need_replication(const prop_rule *r) {
  for (uint32_t f = 0; f < r->nfactors; f++)
    if (r->factors[f].type == PROP_FACTOR_NEED_REPLICATION) return true;
  return false;
}

/* No need-replication or reduction factor: tensors that agree are compatible as they are (Shardy's
 * getCompatibleFactorShardings keeps agreeing pass-through and permutation factors). */
static bool agreeing_is_compatible(const prop_rule *r) {
  for (uint32_t f = 0; f < r->nfactors; f++)
    if (r->factors[f].type == PROP_FACTOR_NEED_REPLICATION || r->factors[f].type == PROP_FACTOR_REDUCTION) return false;
  return true;
}

static bool has_compound_dims(const op_view *v) {
  for (uint32_t t = 0; t < v->ntensors; t++)
    for (uint32_t d = 0; d < mapping_of(v, t)->rank; d++)
      if (mapping_of(v, t)->dims[d].nfactors > 1) return true;
  return false;
}

static int64_t tensor_sharding_size(const op_view *v, uint32_t t) {
  int64_t s = 1;
  for (uint32_t f = 0; f < v->rule->nfactors; f++)
    if (has_factor(v, t, f)) s *= axes_size(factor_axes(v, t, f));
  return s;
}

static bool sharded_permutation(const op_view *v, uint32_t t) {
  for (uint32_t f = 0; f < v->rule->nfactors; f++)
    if (has_factor(v, t, f) && v->rule->factors[f].type == PROP_FACTOR_PERMUTATION && factor_axes(v, t, f).n) return true;
  return false;
}

/* Shardy's findCommonAxesOnUnaryOperation: the preferred tensor's factor shardings, the other's where
 * the preferred lacks the factor (cut where they overlap the preferred's axes). */
static void unary_axes(const op_view *v, uint32_t lhs, uint32_t rhs, prop_axes *common) {
  int64_t lk[3] = {!sharded_permutation(v, lhs), v->sizes[lhs], tensor_sharding_size(v, lhs)};
  int64_t rk[3] = {!sharded_permutation(v, rhs), v->sizes[rhs], tensor_sharding_size(v, rhs)};
  int cmp = 0;
  for (int i = 0; i < 3 && !cmp; i++) cmp = lk[i] < rk[i] ? -1 : lk[i] > rk[i];
  uint32_t pref = cmp >= 0 ? lhs : rhs, other = cmp >= 0 ? rhs : lhs;
  SC_VEC(prop_axis) in_pref = {0};
  for (uint32_t f = 0; f < v->rule->nfactors; f++) {
    if (!has_factor(v, pref, f)) continue;
    common[f] = factor_axes(v, pref, f);
    for (uint32_t i = 0; i < common[f].n; i++) SC_PUSH(v->a, in_pref, common[f].v[i]);
  }
  prop_axes pref_axes = {in_pref.v, (uint32_t)in_pref.n};
  for (uint32_t f = 0; f < v->rule->nfactors; f++) {
    if (!has_factor(v, other, f) || has_factor(v, pref, f)) continue;
    common[f] = axes_copy(v->a, factor_axes(v, other, f), 0);
    truncate_without_overlap(&common[f], pref_axes);
  }
}

/* ---- Shardy's greedy heuristic ---- */

typedef struct {
  uint32_t factor;
  prop_axes axes;
  int64_t total_source_size, sharding_size, precedence;
} candidate;

static int64_t precedence_of(uint8_t type) {
  switch (type) {
  case PROP_FACTOR_PASS_THROUGH: return 3;
  case PROP_FACTOR_REDUCTION: return 2;
  case PROP_FACTOR_PERMUTATION: return 1;
  default: return 0;
  }
}

/* a < b in Shardy's (total source size, precedence, sharding size, factor, axes) order. */
static bool candidate_less(const md_mesh *mesh, const candidate *a, const candidate *b) {
  if (a->total_source_size != b->total_source_size) return a->total_source_size < b->total_source_size;
  if (a->precedence != b->precedence) return a->precedence < b->precedence;
  if (a->sharding_size != b->sharding_size) return a->sharding_size < b->sharding_size;
  if (a->factor != b->factor) return a->factor < b->factor;
  return list_cmp(mesh, a->axes, b->axes) < 0;
}

typedef SC_VEC(candidate) candidates;

static void collect_candidates(const op_view *v, candidates *out) {
  for (uint32_t t = 0; t < v->ntensors; t++)
    for (uint32_t f = 0; f < v->rule->nfactors; f++) {
      if (!has_factor(v, t, f)) continue;
      prop_axes x = factor_axes(v, t, f);
      for (uint32_t n = x.n; n > 0; n--) {
        prop_axes prefix = {x.v, n};
        bool dup = false;
        ar_step(v->a, out->n); /* the work is counted: a hostile op hits the request's step limit */
        for (size_t k = 0; k < out->n && !dup; k++) dup = out->v[k].factor == f && axes_equal(out->v[k].axes, prefix);
        if (dup) continue;
        candidate c = {f, axes_copy(v->a, prefix, 0), 0, axes_size(prefix), precedence_of(v->rule->factors[f].type)};
        SC_PUSH(v->a, *out, c);
      }
    }
  for (uint32_t t = 0; t < v->ntensors; t++)
    for (uint32_t f = 0; f < v->rule->nfactors; f++) {
      if (!has_factor(v, t, f)) continue;
      prop_axes x = factor_axes(v, t, f);
      ar_step(v->a, out->n);
      for (size_t k = 0; k < out->n; k++)
        if (out->v[k].factor == f && (axes_equal(x, out->v[k].axes) || strict_prefix(out->v[k].axes, x)))
          out->v[k].total_source_size += v->sizes[t];
    }
}

/* deps[f * nfactors + g]: factor f follows factor g in some dimension (Shardy's factor dependencies). */
static uint8_t *factor_dependencies(const op_view *v) {
  uint32_t nf = v->rule->nfactors;
  uint8_t *deps = ar_calloc(v->a, (size_t)nf * nf + 1, 1);
  for (uint32_t t = 0; t < v->ntensors; t++)
    for (uint32_t d = 0; d < mapping_of(v, t)->rank; d++) {
      const prop_dim *dim = &mapping_of(v, t)->dims[d];
      for (uint32_t k = 1; k < dim->nfactors; k++) deps[(size_t)dim->factors[k] * nf + dim->factors[k - 1]] = 1;
    }
  return deps;
}

static bool candidate_valid(const op_view *v, const uint8_t *deps, uint32_t f) {
  for (uint32_t g = 0; g < v->rule->nfactors; g++)
    if (deps[(size_t)f * v->rule->nfactors + g]) return false;
  return true;
}

static void heuristic_axes(const op_view *v, prop_axes *common) {
  candidates cs = {0};
  collect_candidates(v, &cs);
  uint8_t *deps = factor_dependencies(v);
  uint32_t nf = v->rule->nfactors;
  while (cs.n) {
    ar_step(v->a, cs.n);
    const candidate *best = NULL;
    for (size_t k = 0; k < cs.n; k++)
      if (candidate_valid(v, deps, cs.v[k].factor) && (!best || candidate_less(v->mesh, best, &cs.v[k]))) best = &cs.v[k];
    if (!best) return;
    candidate chosen = *best;
    common[chosen.factor] = chosen.axes;
    if (axes_size(chosen.axes) == v->rule->factors[chosen.factor].size)
      for (uint32_t f = 0; f < nf; f++) deps[(size_t)f * nf + chosen.factor] = 0;
    size_t k = 0;
    while (k < cs.n) {
      candidate *c = &cs.v[k];
      if (c->factor == chosen.factor) {
        if (!strict_prefix(chosen.axes, c->axes)) {
          cs.v[k] = cs.v[--cs.n];
        } else {
          c->sharding_size = axes_size(c->axes) / axes_size(chosen.axes);
          k++;
        }
        continue;
      }
      if (truncate_without_overlap(&c->axes, chosen.axes)) {
        if (axes_equal(c->axes, common[c->factor])) {
          cs.v[k] = cs.v[--cs.n];
        } else {
          int64_t prefix = axes_size(common[c->factor]);
          c->sharding_size = prefix ? axes_size(c->axes) / prefix : 0;
          k++;
        }
        continue;
      }
      c->sharding_size = axes_size(c->axes);
      k++;
    }
  }
}

static bool factor_in_all_nonscalar(const op_view *v, uint32_t f) {
  for (uint32_t t = 0; t < v->ntensors; t++)
    if (!tensor_is_scalar(v, t) && !has_factor(v, t, f)) return false;
  return true;
}

/* Shardy's distributeAxisRefsToBatchingFactors: a need-replication factor's axes move to the batching
 * factors (pass-through, in every non-scalar tensor) that have room for them. */
static void distribute_need_replication(const op_view *v, prop_axes *common) {
  for (uint32_t f = 0; f < v->rule->nfactors; f++) {
    if (v->rule->factors[f].type != PROP_FACTOR_NEED_REPLICATION) continue;
    prop_axes todo = common[f];
    common[f].n = 0;
    if (!factor_in_all_nonscalar(v, f) || !todo.n) continue;
    for (uint32_t b = 0; b < v->rule->nfactors && todo.n; b++) {
      if (v->rule->factors[b].type != PROP_FACTOR_PASS_THROUGH || !factor_in_all_nonscalar(v, b)) continue;
      int64_t size = v->rule->factors[b].size, sharded = axes_size(common[b]);
      if (size == 0 || sharded == 0 || size % sharded) continue;
      int64_t capacity = size / sharded;
      prop_axes grown = axes_copy(v->a, common[b], todo.n);
      while (todo.n && capacity % todo.v[0].size == 0) {
        prop_axis x = todo.v[0];
        prop_axis *last = grown.n ? &grown.v[grown.n - 1] : NULL;
        if (last && last->axis == x.axis && last->pre && x.pre && last->pre * last->size == x.pre) {
          last->size *= x.size;
          if (last->pre == 1 && last->size == v->mesh->axes[x.axis].size) last->pre = 0;
        } else {
          grown.v[grown.n++] = x;
        }
        capacity /= x.size;
        todo.v++, todo.n--;
      }
      common[b] = grown;
    }
  }
}

/* Shardy's findCommonAxes. */
static void common_axes(const op_view *v, prop_axes *common) {
  if (compatible_axes(v, common)) return;
  for (uint32_t f = 0; f < v->rule->nfactors; f++) common[f].n = 0;
  uint32_t nonscalar[2], n = 0;
  for (uint32_t t = 0; t < v->ntensors; t++)
    if (!tensor_is_scalar(v, t)) {
      if (n < 2) nonscalar[n] = t;
      n++;
    }
  if (n == 2 && !has_need_replication(v->rule) && !has_compound_dims(v)) {
    unary_axes(v, nonscalar[0], nonscalar[1], common);
    return;
  }
  heuristic_axes(v, common);
  if (has_need_replication(v->rule)) distribute_need_replication(v, common);
}

/* ---- printing the new ops ---------------------------------------------------------------------------- */

static const char *sharding_text(sc_arena *a, sharding_ref s) {
  ar_str t = SC_ASTR_INIT(a);
  prop_sharding_put(&t, s);
  return ar_str_str(&t);
}

static prop_sharding *closed_replicated(sc_arena *a, const md_mesh *mesh, ir_span mesh_name, uint32_t rank) {
  prop_sharding *s = prop_sharding_open(a, mesh, mesh_name, rank);
  for (uint32_t d = 0; d < rank; d++) s->dims[d].closed = true;
  return s;
}

/* Axes sorted in mesh order with consecutive sub-axes merged (Shardy's sortAndMergeAxes). */
static prop_axes sort_and_merge(sc_arena *a, const md_mesh *mesh, prop_axes x) {
  prop_axes r = axes_copy(a, x, 0);
  for (uint32_t i = 1; i < r.n; i++)
    for (uint32_t j = i; j > 0; j--) {
      prop_axis p = r.v[j - 1], q = r.v[j];
      bool less = q.axis != p.axis ? q.axis < p.axis : (q.pre ? q.pre : 1) < (p.pre ? p.pre : 1);
      if (!less) break;
      r.v[j - 1] = q, r.v[j] = p;
    }
  uint32_t n = 0;
  for (uint32_t i = 0; i < r.n; i++) {
    prop_axis x2 = r.v[i];
    if (n && r.v[n - 1].axis == x2.axis && r.v[n - 1].pre && x2.pre && r.v[n - 1].pre * r.v[n - 1].size == x2.pre) {
      r.v[n - 1].size *= x2.size;
      if (r.v[n - 1].pre == 1 && r.v[n - 1].size == mesh->axes[x2.axis].size) r.v[n - 1].pre = 0;
      continue;
    }
    r.v[n++] = x2;
  }
  r.n = n;
  return r;
}

static void put_axis_set(ar_str *t, const md_mesh *mesh, prop_axes x) {
  prop_sharding tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.mesh = mesh;
  tmp.unreduced = x;
  ar_str s = SC_ASTR_INIT(t->a);
  prop_sharding_put(&s, &tmp); /* `<@, [], unreduced={...}>`: keep the `{...}` */
  const char *text = ar_str_str(&s), *open = strchr(text, '{');
  const char *close = strrchr(text, '}');
  if (open && close) ar_str_put(t, open, (size_t)(close - open + 1));
  else ar_str_puts(t, "{}");
}

/* ---- one op ---------------------------------------------------------------------------------------- */

static bool skipped_op(const ir_op *op) {
  switch (op->kind) {
  case SC_OP_FUNC:
  case SC_OP_MODULE:
  case SC_OP_RETURN:
  case SC_OP_WHILE:
  case SC_OP_CASE:
  case SC_OP_SDY_MANUAL_COMPUTATION:
  case SC_OP_SDY_NAMED_COMPUTATION:
  case SC_OP_SDY_RESHARD:
  case SC_OP_CALL:
    return true;
  default:
    return op->nregions == 0 && op->parent_op && ir_span_eq(ir_op_name(op), "stablehlo.return");
  }
}

/* Sets factor `f` of tensor `t` (when it has it) to `axes` without overflow; true when that changed it. */
static bool set_factor(prop_projection *proj, uint32_t t, uint32_t f, prop_axes axes) {
  prop_factor_sharding *fs = &proj->tensors[t].factors[f];
  if (!fs->present || (axes_equal(fs->axes, axes) && !fs->overflow.n)) return false;
  fs->axes = axes;
  fs->overflow.n = 0;
  return true;
}

/* `x` with consecutive sub-axes of one axis merged (Shardy's addAxisOrMerge on every push). */
static prop_axes sort_merge_consecutive(sc_arena *a, const md_mesh *mesh, prop_axes x) {
  prop_axes r = axes_copy(a, x, 0);
  r.n = 0;
  for (uint32_t i = 0; i < x.n; i++) {
    prop_axis y = x.v[i];
    if (r.n && r.v[r.n - 1].axis == y.axis && r.v[r.n - 1].pre && y.pre && r.v[r.n - 1].pre * r.v[r.n - 1].size == y.pre) {
      r.v[r.n - 1].size *= y.size;
      if (r.v[r.n - 1].pre == 1 && r.v[r.n - 1].size == mesh->axes[y.axis].size) r.v[r.n - 1].pre = 0;
      continue;
    }
    r.v[r.n++] = y;
  }
  return r;
}

/* Shardy's distributeAxesAcrossFactors: `all` (in order) over the tensor's factors (dimension order),
 * each taking what divides what is left of its size; what no factor takes overflows the last one. */
static void redistribute(const op_view *v, uint32_t t, prop_axes all) {
  const prop_tensor *map = mapping_of(v, t);
  SC_VEC(uint32_t) order = {0};
  for (uint32_t d = 0; d < map->rank; d++)
    for (uint32_t k = 0; k < map->dims[d].nfactors; k++) SC_PUSH(v->a, order, map->dims[d].factors[k]);
  if (!order.n) return;
  int64_t *left = ar_alloc(v->a, order.n * sizeof *left);
  prop_axes *got = ar_calloc(v->a, order.n, sizeof *got);
  for (size_t i = 0; i < order.n; i++) {
    left[i] = v->rule->factors[order.v[i]].size;
    got[i] = axes_copy(v->a, (prop_axes){NULL, 0}, all.n * 2 + 1);
  }
  prop_axes over = axes_copy(v->a, (prop_axes){NULL, 0}, all.n * 2 + 1);
  uint32_t ai = 0;
  int64_t pre = all.n ? all.v[0].pre : 0, size = all.n ? all.v[0].size : 0;
  while (ai < all.n) {
    bool used = false;
    for (size_t i = 0; i < order.n; i++) {
      if (left[i] <= 1) continue;
      int64_t g = left[i], b = size;
      while (b) {
        int64_t r = g % b;
        g = b;
        b = r;
      }
      if (g == 1 && size != 1) continue;
      used = true;
      prop_axis x = {all.v[ai].axis, pre, size > g ? g : size};
      if (size > g) {
        x.pre = pre ? pre : 1;
        pre = x.pre * g;
        size /= g;
        left[i] /= g;
        got[i].v[got[i].n++] = x;
      } else {
        left[i] /= size;
        got[i].v[got[i].n++] = x;
        if (++ai < all.n) pre = all.v[ai].pre, size = all.v[ai].size;
        break;
      }
    }
    if (!used) {
      for (; ai < all.n; ai++) {
        prop_axis x = {all.v[ai].axis, pre, size};
        over.v[over.n++] = x;
        if (ai + 1 < all.n) pre = all.v[ai + 1].pre, size = all.v[ai + 1].size;
      }
      break;
    }
  }
  for (size_t i = 0; i < order.n; i++) {
    prop_factor_sharding *fs = &v->proj->tensors[t].factors[order.v[i]];
    fs->axes = sort_merge_consecutive(v->a, v->mesh, got[i]);
    fs->overflow = i + 1 == order.n ? over : (prop_axes){NULL, 0};
  }
}

/* The greatest common prefix of two axis lists (the last axis may be a sub-axis prefix of both). */
static prop_axes common_prefix(sc_arena *a, prop_axes x, prop_axes y) {
  prop_axes r = axes_copy(a, x, 0);
  r.n = 0;
  for (uint32_t i = 0; i < x.n && i < y.n; i++) {
    if (prop_axis_eq(x.v[i], y.v[i])) {
      r.v[r.n++] = x.v[i];
      continue;
    }
    if (prop_axis_prefix_of(x.v[i], y.v[i])) r.v[r.n++] = x.v[i];
    else if (prop_axis_prefix_of(y.v[i], x.v[i])) r.v[r.n++] = y.v[i];
    break;
  }
  return r;
}

/* Shardy's processReshapeWithOverflowAxes: the axes of the more sharded side spread over both sides'
 * factors, then each factor keeps what both sides agree on. */
static void reshape_overflow(rpass *p, op_view *v, const ir_op *op, sharding_ref *all, sharding_ref mesh_of,
                             prop_axes *common, bool *update) {
  SC_VEC(prop_axis) pool = {0};
  uint32_t best = tensor_sharding_size(v, 0) >= tensor_sharding_size(v, 1) ? 0 : 1;
  for (uint32_t f = 0; f < v->rule->nfactors; f++) {
    if (!has_factor(v, best, f)) continue;
    const prop_factor_sharding *fs = &v->proj->tensors[best].factors[f];
    for (uint32_t i = 0; i < fs->axes.n; i++) SC_PUSH(p->a, pool, fs->axes.v[i]);
    for (uint32_t i = 0; i < fs->overflow.n; i++) SC_PUSH(p->a, pool, fs->overflow.v[i]);
  }
  prop_axes everything = {pool.v, (uint32_t)pool.n};
  redistribute(v, 0, everything);
  redistribute(v, 1, everything);
  sharding_ref built[2] = {prop_unproject(p->a, v->proj, 0, mesh_of->mesh_name),
                           prop_unproject(p->a, v->proj, 1, mesh_of->mesh_name)};
  prop_projection legal;
  prop_project(p->a, &legal, v->rule, v->mesh, built, built + 1, false);
  for (uint32_t f = 0; f < v->rule->nfactors; f++) {
    bool seen = false;
    for (uint32_t t = 0; t < 2; t++) {
      if (!legal.tensors[t].factors[f].present) continue;
      common[f] = seen ? common_prefix(p->a, common[f], legal.tensors[t].factors[f].axes) : legal.tensors[t].factors[f].axes;
      seen = true;
    }
    for (uint32_t t = 0; t < 2; t++) set_factor(v->proj, t, f, common[f]);
  }
  update[0] = !equivalent(value_sharding(p, op->operands[0]), prop_unproject(p->a, v->proj, 0, mesh_of->mesh_name));
  update[1] = !equivalent(prop_unproject(p->a, v->proj, 1, mesh_of->mesh_name), all[1]);
}

static void record(rpass *p, const ir_op *op, const ir_value *v, sharding_ref from, sharding_ref to, const char *what) {
  prop_reshard r = {op, v, from, to, what, {NULL, 0}, false};
  SC_PUSH(p->a, p->found, r);
}

/* ---- single-device (maximal) ops ------------------------------------------------------------------ */

static bool single_device(sharding_ref s) { return s && s->mesh->maximal; }

static void pass_error(rpass *p, const ir_op *op, const char *message) {
  prop_pass_error e = {op->pos.offset, message, 0, 0};
  SC_PUSH(p->a, p->errors, e);
}

static bool ranked_tensor(const ir_value *v) {
  ir_span t = value_type(v);
  return t.n > 7 && !memcmp(t.p, "tensor<", 7) && t.p[7] != '*';
}

static uint32_t rank_of(rpass *p, const ir_value *v) {
  if (!v) return 0;
  ir_span t = value_type(v);
  ir_tensor_type tt;
  return ir_parse_tensor_type(p->a, t, &tt) ? tt.rank : 0;
}

/* `s` is the global mesh's closed fully replicated sharding (MLIR attribute equality). */
static bool global_replicated(rpass *p, sharding_ref s) {
  if (!s || s->mesh != p->global_mesh || s->replicated.n || s->unreduced.n) return false;
  for (uint32_t d = 0; d < s->rank; d++)
    if (s->dims[d].axes.n || !s->dims[d].closed) return false;
  return true;
}

/* An op with a result on a single-device mesh runs on that device alone (Shardy's
 * processSingleDeviceOperation): each tensor operand goes there, through the global mesh replicated
 * unless it already is; each tensor result comes back replicated on the global mesh, then to its own
 * sharding when that is another one. Returns false for other ops. */
static bool process_single_device(rpass *p, const ir_op *op) {
  const md_mesh *device_mesh = NULL;
  ir_span device_name = {NULL, 0};
  for (uint32_t r = 0; r < op->nresults; r++) {
    sharding_ref s = result_sharding(p, op, r);
    if (!single_device(s)) continue;
    if (device_mesh && device_mesh->device_ids[0] != s->mesh->device_ids[0]) {
      pass_error(p, op, ar_printf(p->a, "'%.*s' op has conflicting single-device result shardings", SC_SPAN_ARG(ir_op_name(op))));
      return true;
    }
    device_mesh = s->mesh, device_name = s->mesh_name;
  }
  if (!device_mesh) return false;
  const md_mesh *global = p->global_mesh;
  if (!global) return true;
  ir_span global_name = global->name;
  prop_sharding *on_device = closed_replicated(p->a, device_mesh, device_name, 0);
  for (uint32_t k = 0; k < op->noperands; k++) {
    const ir_value *v = op->operands[k];
    if (!v || !ranked_tensor(v)) continue;
    sharding_ref s = value_sharding(p, v);
    if (!s) s = closed_replicated(p->a, global, global_name, rank_of(p, v));
    uint32_t rank = rank_of(p, v);
    if (s->mesh == device_mesh && equivalent(s, on_device)) continue;
    const char *input = operand_name(p, op, k);
    if (!(fully_replicated(s) && s->mesh == global)) {
      const char *name = prop_printer_fresh_name(p->pr);
      prop_printer_insert_before(p->pr, op, ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", name, input,
                                                      sharding_text(p->a, closed_replicated(p->a, global, global_name, rank)),
                                                      SC_SPAN_ARG(value_type(v))));
      input = name;
    }
    const char *name = prop_printer_fresh_name(p->pr);
    prop_printer_insert_before(p->pr, op, ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", name, input,
                                                    sharding_text(p->a, on_device), SC_SPAN_ARG(value_type(v))));
    set_operand_name(p, op, k, name);
  }
  sharding_ref *results = ar_alloc(p->a, (op->nresults + 1) * sizeof *results);
  for (uint32_t r = 0; r < op->nresults; r++) {
    const ir_value *v = ir_op_result(op, r);
    sharding_ref own = value_sharding(p, v);
    results[r] = own;
    if (!ranked_tensor(v)) {
      ir_span t = value_type(v);
      if (ir_span_eq(t, "!stablehlo.token")) results[r] = closed_replicated(p->a, global, global_name, 0);
      continue;
    }
    results[r] = on_device;
    prop_sharding *replicated = closed_replicated(p->a, global, global_name, rank_of(p, v));
    sharding_ref target = own && !single_device(own) ? own : replicated;
    const char *name = prop_printer_fresh_name(p->pr);
    prop_printer_insert_after(p->pr, op, ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", name, value_name(p, v),
                                                   sharding_text(p->a, replicated), SC_SPAN_ARG(value_type(v))));
    if (!global_replicated(p, target)) {
      const char *back = prop_printer_fresh_name(p->pr);
      prop_printer_insert_after(p->pr, op, ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", back, name,
                                                     sharding_text(p->a, target), SC_SPAN_ARG(value_type(v))));
      name = back;
    }
    remap_value_sharded(p, v, name, global_replicated(p, target) ? replicated : target);
  }
  prop_printer_set_attr(p->pr, op, "sdy.sharding", prop_per_value_text(p->a, op, results, false));
  return true;
}

static bool is_maximal(const rpass *p, const md_sharding *s) {
  const md_mesh *mesh = s ? md_model_sharding_mesh(p->model, s) : NULL;
  return mesh && mesh->maximal;
}

static void signature_error(rpass *p, const ir_op *fn, char kind, uint32_t index) {
  prop_pass_error e = {fn->pos.offset,
                       ar_printf(p->a, "'func.func' op function %s %u cannot have a single-device (maximal) sharding attribute",
                                 kind == 'a' ? "argument" : "result", index),
                       kind, index};
  SC_PUSH(p->a, p->errors, e);
}

/* Single-device shardings are for ops only: a function's arguments and results cannot have one. */
static void check_signature(rpass *p, const ir_op *fn) {
  const ir_block *entry = fn->nregions && ir_op_regions(fn)[0]->nblocks ? ir_op_regions(fn)[0]->blocks[0] : NULL;
  for (uint32_t k = 0; entry && k < entry->nargs; k++)
    if (is_maximal(p, md_model_arg_sharding(p->model, fn, k))) signature_error(p, fn, 'a', k);
  for (uint32_t k = 0; k < ir_op_nresult_attrs(fn); k++)
    if (is_maximal(p, md_model_func_result_sharding(p->model, fn, k))) signature_error(p, fn, 'r', k);
}


/* ---- unreduced axes ---------------------------------------------------------------------------------- */

static int64_t axis_lo(prop_axis x) { return x.pre ? x.pre : 1; }

static prop_axis make_axis(const md_mesh *mesh, uint32_t axis, int64_t lo, int64_t size) {
  prop_axis r = {axis, lo, size};
  if (lo == 1 && size == mesh->axes[axis].size) r.pre = 0;
  return r;
}

/* Shardy's getAxisSetDiff: the parts of `a`'s axes (sub-axes cut where needed) that no axis of `b`
 * covers, in `a`'s order. */
static prop_axes axes_diff(sc_arena *ar, const md_mesh *mesh, prop_axes a, prop_axes b) {
  SC_VEC(prop_axis) out = {0};
  for (uint32_t i = 0; i < a.n; i++) {
    int64_t lo = axis_lo(a.v[i]), hi = lo * a.v[i].size;
    for (uint32_t guard = 0; guard <= b.n; guard++) {
      const prop_axis *first = NULL; /* the overlapping axis of b that starts first */
      for (uint32_t j = 0; j < b.n; j++) {
        int64_t blo = axis_lo(b.v[j]), bhi = blo * b.v[j].size;
        if (b.v[j].axis == a.v[i].axis && blo < hi && lo < bhi && (!first || blo < axis_lo(*first))) first = &b.v[j];
      }
      if (!first) {
        SC_PUSH(ar, out, make_axis(mesh, a.v[i].axis, lo, hi / lo));
        break;
      }
      int64_t blo = axis_lo(*first), bhi = blo * first->size;
      if (lo < blo && blo % lo == 0) SC_PUSH(ar, out, make_axis(mesh, a.v[i].axis, lo, blo / lo));
      if (hi <= bhi || bhi % lo) break;
      lo = bhi;
    }
  }
  return (prop_axes){out.v, (uint32_t)out.n};
}

static prop_sharding *with_unreduced(sc_arena *a, sharding_ref s, prop_axes unreduced) {
  prop_sharding *r = prop_sharding_copy(a, s);
  r->unreduced = unreduced;
  return r;
}

static const char *reduction_prefix(sharding_ref s) {
  return s->unreduced_op == SC_REDUCE_MAX ? "max " : s->unreduced_op == SC_REDUCE_MIN ? "min " : "";
}

/* Where a chain of new ops goes: before an op, after a value's defining op, or at the start of a
 * block (MLIR puts each chain there ahead of the earlier ones, the chain's own ops in order). */
typedef struct {
  const ir_op *at;
  enum { PLACE_BEFORE, PLACE_AFTER, PLACE_BLOCK_START } where;
  const char *texts[4];
  uint32_t n;
} placement;

static void place(rpass *p, placement *pl, const char *text) {
  if (pl->where == PLACE_BEFORE) prop_printer_insert_before(p->pr, pl->at, text);
  else if (pl->where == PLACE_AFTER) prop_printer_insert_after(p->pr, pl->at, text);
  else if (pl->n < 4) pl->texts[pl->n++] = text;
}

static void place_done(rpass *p, placement *pl) {
  while (pl->n) prop_printer_insert_first(p->pr, pl->at, pl->texts[--pl->n]);
}

/* Shardy's insertAllReduceIfUnreducedToReplicated: the unreduced axes of `*cur` that `target` does not
 * keep unreduced are summed by an `sdy.all_reduce` (its name into *name, its sharding into *cur). */
static void all_reduce_to_target(rpass *p, placement *pl, ir_span type, sharding_ref *cur, sharding_ref target,
                                 const char **name) {
  if (!*cur || !(*cur)->unreduced.n) return;
  if (target && !same_axes(target->mesh, (*cur)->mesh)) return;
  prop_axes axes = axes_diff(p->a, (*cur)->mesh, (*cur)->unreduced, target ? target->unreduced : (prop_axes){NULL, 0});
  if (!axes.n) return;
  prop_sharding *after = with_unreduced(p->a, *cur, axes_diff(p->a, (*cur)->mesh, (*cur)->unreduced, axes));
  const char *fresh = prop_printer_fresh_name(p->pr);
  ar_str t = SC_ASTR_INIT(p->a);
  ar_str_printf(&t, "%s = sdy.all_reduce %s", fresh, reduction_prefix(*cur));
  put_axis_set(&t, (*cur)->mesh, axes);
  ar_str_printf(&t, " %s out_sharding=%s : %.*s", *name, sharding_text(p->a, after), SC_SPAN_ARG(type));
  place(p, pl, ar_str_str(&t));
  *name = fresh;
  *cur = after;
}

/* Shardy's isAxisListPrefixOf: 0 equal, 1 strict prefix, 2 not a prefix. */
static int list_prefix_status(prop_axes first, prop_axes second) {
  if (!first.n) return second.n ? 1 : 0;
  if (first.n > second.n) return 2;
  for (uint32_t i = 0; i + 1 < first.n; i++)
    if (!prop_axis_eq(first.v[i], second.v[i])) return 2;
  if (first.n == second.n && prop_axis_eq(first.v[first.n - 1], second.v[first.n - 1])) return 0;
  return prop_axis_prefix_of(first.v[first.n - 1], second.v[first.n - 1]) ? 1 : 2;
}

/* `[{...}, {...}]` of per-dimension axis lists. */
static void put_dim_lists(rpass *p, ar_str *t, sharding_ref like, prop_axes *dims) {
  prop_sharding *tmp = prop_sharding_copy(p->a, like);
  tmp->replicated.n = tmp->unreduced.n = 0;
  for (uint32_t d = 0; d < tmp->rank; d++) tmp->dims[d].axes = dims[d], tmp->dims[d].closed = true, tmp->dims[d].priority = -1;
  const char *text = sharding_text(p->a, tmp), *open = strchr(text, '['), *close = strrchr(text, ']');
  if (open && close) ar_str_put(t, open, (size_t)(close - open + 1));
}

/* Shardy's insertUnreducedCollectives: `target` has unreduced axes `*cur` lacks. Axes it keeps sharded
 * less than `*cur` become unreduced by `sdy.sharded_to_unreduced` when they are exactly the new ones;
 * the rest come from replicated by `sdy.replicated_to_unreduced` (a reshard first when the dimensions
 * do not line up). Returns false when nothing was needed (or the shardings do not fit Shardy's case). */
static bool unreduced_collectives(rpass *p, placement *pl, ir_span type, sharding_ref *cur, sharding_ref target,
                                  const char **name) {
  sharding_ref in = *cur;
  if (!in || !target || !target->unreduced.n || in->rank != target->rank || !same_axes(in->mesh, target->mesh)) return false;
  const md_mesh *mesh = in->mesh;
  prop_axes new_axes = axes_diff(p->a, mesh, target->unreduced, in->unreduced);
  if (!new_axes.n || axes_diff(p->a, mesh, in->unreduced, target->unreduced).n) return false;
  SC_VEC(prop_axis) s2u = {0};
  prop_axes *per_dim = ar_calloc(p->a, in->rank + 1, sizeof *per_dim);
  prop_sharding *tmp = prop_sharding_copy(p->a, target);
  bool need_reshard = false;
  for (uint32_t d = 0; d < in->rank; d++) {
    prop_axes in_axes = in->dims[d].axes, out_axes = target->dims[d].axes;
    int status = list_prefix_status(out_axes, in_axes);
    if (status == 2) {
      need_reshard = true;
      continue;
    }
    if (status == 0) continue;
    SC_VEC(prop_axis) diff = {0};
    if (out_axes.n && !prop_axis_eq(out_axes.v[out_axes.n - 1], in_axes.v[out_axes.n - 1])) {
      prop_axis last = in_axes.v[out_axes.n - 1], cut = out_axes.v[out_axes.n - 1];
      int64_t from = axis_lo(cut) * cut.size, to = axis_lo(last) * last.size;
      if (to <= from || to % from) return false;
      SC_PUSH(p->a, diff, make_axis(mesh, last.axis, from, to / from));
    }
    for (uint32_t i = out_axes.n; i < in_axes.n; i++) SC_PUSH(p->a, diff, in_axes.v[i]);
    prop_axes dv = {diff.v, (uint32_t)diff.n};
    if (!axes_diff(p->a, mesh, dv, new_axes).n) {
      per_dim[d] = dv;
      for (uint32_t i = 0; i < dv.n; i++) SC_PUSH(p->a, s2u, dv.v[i]);
      tmp->dims[d] = in->dims[d];
    } else {
      need_reshard = true;
    }
  }
  prop_sharding *last = prop_sharding_copy(p->a, in);
  for (uint32_t d = 0; d < in->rank; d++) last->dims[d] = tmp->dims[d];
  const char *input = *name;
  if (need_reshard) {
    const char *fresh = prop_printer_fresh_name(p->pr);
    place(p, pl, ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", fresh, input, sharding_text(p->a, last), SC_SPAN_ARG(type)));
    input = fresh;
  }
  prop_axes s2u_axes = {s2u.v, (uint32_t)s2u.n};
  prop_axes r2u = axes_diff(p->a, mesh, new_axes, s2u_axes);
  sharding_ref now = last;
  if (r2u.n) {
    SC_VEC(prop_axis) plus = {0};
    for (uint32_t i = 0; i < in->unreduced.n; i++) SC_PUSH(p->a, plus, in->unreduced.v[i]);
    for (uint32_t i = 0; i < r2u.n; i++) SC_PUSH(p->a, plus, r2u.v[i]);
    prop_sharding *r2u_sharding = prop_sharding_copy(p->a, last);
    r2u_sharding->replicated = target->replicated;
    r2u_sharding->unreduced = sort_and_merge(p->a, mesh, (prop_axes){plus.v, (uint32_t)plus.n});
    r2u_sharding->unreduced_op = target->unreduced_op;
    const char *fresh = prop_printer_fresh_name(p->pr);
    ar_str t = SC_ASTR_INIT(p->a);
    ar_str_printf(&t, "%s = sdy.replicated_to_unreduced ", fresh);
    put_axis_set(&t, mesh, r2u);
    ar_str_printf(&t, " %s out_sharding=%s : %.*s", input, sharding_text(p->a, r2u_sharding), SC_SPAN_ARG(type));
    place(p, pl, ar_str_str(&t));
    input = fresh;
    now = r2u_sharding;
  }
  if (s2u.n) {
    const char *fresh = prop_printer_fresh_name(p->pr);
    ar_str t = SC_ASTR_INIT(p->a);
    ar_str_printf(&t, "%s = sdy.sharded_to_unreduced ", fresh);
    put_dim_lists(p, &t, in, per_dim);
    ar_str_printf(&t, " %s out_sharding=%s : %.*s", input, sharding_text(p->a, target), SC_SPAN_ARG(type));
    place(p, pl, ar_str_str(&t));
    input = fresh;
    now = target;
  }
  if (input == *name) return false;
  *name = input;
  *cur = now;
  return true;
}

/* Shardy's insertAllReduceOnOpIfUnreducedToReplicated: an operand's unreduced axes that the op's first
 * result does not keep unreduced are summed before the op. */
static void all_reduce_operands(rpass *p, const ir_op *op) {
  if (!op->nresults) return;
  sharding_ref first = result_sharding(p, op, 0);
  for (uint32_t k = 0; k < op->noperands; k++) {
    if (!op->operands[k]) continue;
    sharding_ref cur = operand_sharding(p, op, k, false);
    if (!cur || !cur->unreduced.n) continue;
    placement pl = {op, PLACE_BEFORE, {0}, 0};
    const char *name = operand_name(p, op, k);
    const char *before = name;
    all_reduce_to_target(p, &pl, value_type(op->operands[k]), &cur, first, &name);
    if (name != before) set_operand(p, op, k, name, cur);
  }
}

/* An `sdy.reshard` to a sharding with new unreduced axes becomes the unreduced collectives (Shardy's
 * convertReshardToUnreducedCollectives). True when it did. */
static bool reshard_to_unreduced(rpass *p, const ir_op *op) {
  if (op->kind != SC_OP_SDY_RESHARD || op->noperands != 1 || op->nresults != 1 || !op->operands[0]) return false;
  sharding_ref cur = operand_sharding(p, op, 0, false);
  const char *name = operand_name(p, op, 0);
  placement pl = {op, PLACE_BEFORE, {0}, 0};
  if (!unreduced_collectives(p, &pl, value_type(op->operands[0]), &cur, result_sharding(p, op, 0), &name))
    return false;
  prop_printer_erase(p->pr, op);
  remap_value_sharded(p, ir_op_result(op, 0), name, cur);
  return true;
}

/* Shardy's insertExplicitReshardsToTargetSharding: operand `k` of `user` brought to `target` (NULL =
 * replicated) — unreduced axes summed or made, then a reshard — placed before `user`, or right after
 * the value is defined when `after_def`. */
static void reshard_to_target(rpass *p, const ir_op *user, uint32_t k, sharding_ref target, bool after_def, const char *what) {
  const ir_value *v = k < user->noperands ? user->operands[k] : NULL;
  if (!v) return;
  placement pl = {user, PLACE_BEFORE, {0}, 0};
  if (after_def && ir_value_def(v)) pl.at = ir_value_def(v), pl.where = PLACE_AFTER;
  else if (after_def && ir_value_block(v) && ir_value_block(v)->nops) pl.at = ir_value_block(v)->ops[0], pl.where = PLACE_BLOCK_START;
  else if (after_def) return;
  sharding_ref source = operand_sharding(p, user, k, false), cur = source;
  const char *name = operand_name(p, user, k), *start = name;
  ir_span type = value_type(v);
  all_reduce_to_target(p, &pl, type, &cur, target, &name);
  unreduced_collectives(p, &pl, type, &cur, target, &name);
  bool full = !p->partial || user->kind == SC_OP_CALL; /* the partial version only sums and makes unreduced axes */
  if (full && !equivalent(cur, target)) {
    sharding_ref to = target ? target : closed_replicated(p->a, cur->mesh, cur->mesh_name, cur->rank);
    const char *fresh = prop_printer_fresh_name(p->pr);
    place(p, &pl, ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", fresh, name, sharding_text(p->a, to), SC_SPAN_ARG(type)));
    record(p, user, v, source, to, what);
    name = fresh;
    cur = to;
  }
  place_done(p, &pl);
  if (name != start) set_operand(p, user, k, name, cur);
}

/* An op's new result shardings set, then after it: the all-reduce of `all_reduce` axes on every result,
 * and a reshard of each `resharded` result back to its own sharding; uses read the last of each chain. */
static void emit_results(rpass *p, const ir_op *op, const op_view *view, sharding_ref *all, sharding_ref *results,
                         const bool *resharded, bool any_change, prop_axes all_reduce, sharding_ref mesh_of) {
  const md_mesh *mesh = view->mesh;
  if (any_change) prop_printer_set_attr(p->pr, op, "sdy.sharding", prop_per_value_text(p->a, op, results, false));
  const char **chain = ar_alloc(p->a, (op->nresults + 1) * sizeof *chain);
  for (uint32_t r = 0; r < op->nresults; r++) {
    chain[r] = value_name(p, ir_op_result(op, r));
    if (!all_reduce.n) continue;
    sharding_ref rs = results[r] ? results[r] : closed_replicated(p->a, mesh, mesh_of->mesh_name, mapping_of(view, op->noperands + r)->rank);
    const char *name = prop_printer_fresh_name(p->pr);
    ar_str t = SC_ASTR_INIT(p->a);
    ar_str_printf(&t, "%s = sdy.all_reduce ", name);
    put_axis_set(&t, mesh, all_reduce);
    ar_str_printf(&t, " %s out_sharding=%s : %.*s", chain[r], sharding_text(p->a, rs), SC_SPAN_ARG(ir_value_type(ir_op_result(op, r))));
    prop_printer_insert_after(p->pr, op, ar_str_str(&t));
    chain[r] = name;
    prop_reshard ar = {op, ir_op_result(op, r), rs, rs, md_indexed_name(p->a, "result", r), all_reduce, false};
    SC_PUSH(p->a, p->found, ar);
  }
  /* A result without a sharding goes back closed when it is the op's first to be resharded; Shardy then
   * sets that result's sharding, which gives the op's other results open ones, and those go back open. */
  bool had_shardings = op->nresults && all[op->noperands];
  for (uint32_t r = 0, backs = 0; r < op->nresults; r++) {
    if (!resharded[r]) continue;
    uint32_t t = op->noperands + r;
    sharding_ref back = all[t];
    if (!back && (had_shardings || !backs++))
      back = closed_replicated(p->a, mesh, mesh_of->mesh_name, mapping_of(view, t)->rank);
    else if (!back)
      back = prop_sharding_open(p->a, mesh, mesh_of->mesh_name, mapping_of(view, t)->rank);
    const char *name = prop_printer_fresh_name(p->pr);
    prop_printer_insert_after(p->pr, op,
                              ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", name, chain[r], sharding_text(p->a, back),
                                              SC_SPAN_ARG(ir_value_type(ir_op_result(op, r)))));
    chain[r] = name;
    record(p, op, ir_op_result(op, r), results[r], back, md_indexed_name(p->a, "result", r));
  }
  for (uint32_t r = 0; r < op->nresults; r++)
    if (resharded[r] || all_reduce.n) remap_value(p, ir_op_result(op, r), chain[r]);
}


static bool op_is(const ir_op *op, const char *name) { return ir_span_eq(ir_op_bare_name(op), name); }

/* Ops the partial version (enable-full-version=false) still reshards in full: ragged dots, and a
 * concatenate an operand of which is sharded otherwise than its result (Shardy's isOnFullVersion). */
static bool full_version_op(rpass *p, const ir_op *op) {
  if (op_is(op, "mhlo.ragged_dot")) return true;
  if (!op_is(op, "stablehlo.concatenate") || op->nresults != 1) return false;
  sharding_ref result = result_sharding(p, op, 0);
  for (uint32_t k = 0; k < op->noperands; k++)
    if (!prop_sharding_eq(value_sharding(p, op->operands[k]), result)) return true;
  return false;
}

/* Shardy's processDot (partial version only): when lhs and rhs agree, and the result differs from them
 * on one batching or non-contracting factor, not bigger than that factor's operand, by exactly the
 * contracting factors' axes, the dot takes the operand's axes for that factor (a more sharded dot) and
 * a reshard after it gives the result back (an all-reduce instead of a reduce-scatter). */
static bool dot_result_like_operands(rpass *p, const ir_op *op, const op_view *v, sharding_ref mesh_of,
                                     sharding_ref *results, bool *resharded) {
  if (!(op_is(op, "stablehlo.dot") || op_is(op, "stablehlo.dot_general")) || op->noperands != 2 || op->nresults != 1)
    return false;
  const prop_rule *rule = v->rule;
  int64_t lhs = v->sizes[0], rhs = v->sizes[1], result = v->sizes[2];
  uint32_t conflict = UINT32_MAX;
  prop_axes conflicting = {NULL, 0};
  SC_VEC(prop_axis) reduction = {0};
  SC_VEC(prop_axis) seen = {0};
  for (uint32_t f = 0; f < rule->nfactors; f++) {
    bool in_lhs = has_factor(v, 0, f), in_rhs = has_factor(v, 1, f);
    if (!in_lhs && !in_rhs) continue;
    prop_axes axes = factor_axes(v, in_lhs ? 0 : 1, f);
    int64_t operand_size = in_lhs && in_rhs ? (lhs > rhs ? lhs : rhs) : in_lhs ? lhs : rhs;
    if (in_lhs && in_rhs) {
      if (!axes_equal(axes, factor_axes(v, 1, f))) return false;
      if (rule->factors[f].type == PROP_FACTOR_REDUCTION) {
        for (uint32_t i = 0; i < axes.n; i++) SC_PUSH(p->a, reduction, axes.v[i]);
        continue;
      }
    } else {
      for (uint32_t i = 0; i < axes.n; i++) {
        for (size_t j = 0; j < seen.n; j++)
          if (prop_axis_overlaps(seen.v[j], axes.v[i])) return false;
        SC_PUSH(p->a, seen, axes.v[i]);
      }
    }
    if (!has_factor(v, 2, f) || axes_equal(factor_axes(v, 2, f), axes)) continue;
    if (!axes.n || conflict != UINT32_MAX || result > operand_size) return false;
    conflict = f, conflicting = axes;
  }
  if (conflict == UINT32_MAX) return false;
  prop_axes have = factor_axes(v, 2, conflict);
  if (!have.n || !axes_equal(have, (prop_axes){reduction.v, (uint32_t)reduction.n})) return false;
  prop_factor_sharding *fs = &v->proj->tensors[2].factors[conflict];
  fs->axes = conflicting;
  fs->overflow.n = 0;
  results[0] = prop_unproject(p->a, v->proj, 2, mesh_of->mesh_name);
  resharded[0] = true;
  return true;
}

/* The partial version of an op: the dot pattern above, and an all-reduce of the reduction factors'
 * axes only when the first result has unreduced axes (Shardy's getReductionAxes without the full
 * version). */
static void partial_op(rpass *p, const ir_op *op, const op_view *v, sharding_ref *all, sharding_ref mesh_of) {
  sharding_ref *results = ar_alloc(p->a, (op->nresults + 1) * sizeof *results);
  bool *resharded = ar_calloc(p->a, op->nresults + 1, sizeof *resharded);
  for (uint32_t r = 0; r < op->nresults; r++) results[r] = all[op->noperands + r];
  bool any_change = dot_result_like_operands(p, op, v, mesh_of, results, resharded);
  prop_axes all_reduce = {NULL, 0};
  prop_axes unreduced0 = results[0] ? results[0]->unreduced : (prop_axes){NULL, 0};
  if (unreduced0.n) {
    SC_VEC(prop_axis) reduction = {0};
    for (uint32_t f = 0; f < v->rule->nfactors; f++) {
      if (v->rule->factors[f].type != PROP_FACTOR_REDUCTION) continue;
      bool found = false;
      prop_axes axes = {NULL, 0};
      for (uint32_t t = 0; t < v->ntensors; t++) {
        if (!has_factor(v, t, f)) continue;
        if (found && !axes_equal(axes, factor_axes(v, t, f))) return; /* incompatible: Shardy gives up */
        axes = factor_axes(v, t, f), found = true;
      }
      for (uint32_t i = 0; i < axes.n; i++) SC_PUSH(p->a, reduction, axes.v[i]);
    }
    all_reduce = sort_and_merge(p->a, v->mesh, axes_diff(p->a, v->mesh, (prop_axes){reduction.v, (uint32_t)reduction.n}, unreduced0));
  }
  if (any_change || all_reduce.n) emit_results(p, op, v, all, results, resharded, any_change, all_reduce, mesh_of);
}

static void process_op(rpass *p, const ir_op *op) {
  if (skipped_op(op) || !op->nresults) return;
  for (uint32_t k = 0; k < op->noperands; k++)
    if (!op->operands[k]) return; /* an operand the parser could not resolve (a broken module): left as written */
  if (process_single_device(p, op)) return;
  /* propagation built most rules already; the rest and the tensors' shardings are scratch until the op
   * turns out to need a reshard */
  ar_mark_t mark = ar_mark(p->a);
  uint32_t n = op->noperands + op->nresults;
  sharding_ref *all = ar_alloc(p->a, (n + 1) * sizeof *all);
  bool any = false; /* a tensor with a sharding: without one the op has no mesh and nothing to reshard */
  for (uint32_t i = 0; i < n; i++) {
    all[i] = i < op->noperands ? operand_sharding(p, op, i, true) : result_sharding(p, op, i - op->noperands);
    any |= all[i] != NULL;
  }
  if (!any) {
    ar_rewind(p->a, mark);
    return;
  }
  bool known;
  const prop_rule *rule = prop_engine_built_rule(p->e, op, false, &known);
  prop_rule_options ro = {false, p->facts};
  if (!known) rule = prop_rule_of(p->a, p->m, op, &ro, NULL);
  if (!rule || rule->custom || rule->noperands != op->noperands || rule->nresults != op->nresults) {
    ar_rewind(p->a, mark);
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    const prop_tensor *t = i < op->noperands ? &rule->operands[i] : &rule->results[i - op->noperands];
    if (all[i] && all[i]->rank != t->rank) return;
  }
  if (prop_tensors_agree(rule, all, n, true) && agreeing_is_compatible(rule)) { /* one sharding on every tensor of an
                                                                                identity-shaped rule */
    ar_rewind(p->a, mark);
    return;
  }
  int64_t *sizes = ar_alloc(p->a, (n + 1) * sizeof *sizes);
  for (uint32_t i = 0; i < n; i++) sizes[i] = elements_of(p->a, i < op->noperands ? op->operands[i] : ir_op_result(op, i - op->noperands));
  sharding_ref mesh_of;
  if (!op_mesh(all, n, &mesh_of)) return;
  const md_mesh *mesh = mesh_of->mesh;
  prop_projection proj;
  prop_project(p->a, &proj, rule, mesh, all, all + op->noperands, true);
  op_view v = {rule, &proj, n, sizes, mesh, p->a};
  if (p->partial && !full_version_op(p, op)) {
    partial_op(p, op, &v, all, mesh_of);
    return;
  }
  bool *update = ar_calloc(p->a, n + 1, sizeof *update);
  for (uint32_t t = 0; t < n; t++)
    for (uint32_t f = 0; f < rule->nfactors; f++) update[t] |= has_factor(&v, t, f) && proj.tensors[t].factors[f].overflow.n > 0;
  bool overflow = false;
  for (uint32_t t = 0; t < n; t++) overflow |= update[t];
  prop_axes *common = ar_calloc(p->a, rule->nfactors + 1, sizeof *common);
  if (overflow && n == 2 && ir_span_eq(ir_op_name(op), "stablehlo.reshape")) {
    reshape_overflow(p, &v, op, all, mesh_of, common, update);
  } else {
    common_axes(&v, common);
    for (uint32_t f = 0; f < rule->nfactors; f++)
      for (uint32_t t = 0; t < n; t++) update[t] |= set_factor(&proj, t, f, common[f]);
  }
  /* operands: a reshard before the op */
  for (uint32_t k = 0; k < op->noperands; k++) {
    bool other_mesh = all[k] && !fully_replicated(all[k]) && !same_device_ids(all[k]->mesh, mesh);
    if (!update[k] && !other_mesh) continue;
    const char *name = prop_printer_fresh_name(p->pr);
    prop_sharding *target = prop_unproject(p->a, &proj, k, mesh_of->mesh_name);
    prop_printer_insert_before(p->pr, op,
                               ar_printf(p->a, "%s = sdy.reshard %s %s : %.*s", name, operand_name(p, op, k),
                                               sharding_text(p->a, target), SC_SPAN_ARG(value_type(op->operands[k]))));
    set_operand_name(p, op, k, name);
    record(p, op, op->operands[k], all[k], target, md_indexed_name(p->a, "operand", k));
  }
  /* results: the op takes the chosen sharding, a reshard after it gives back the result's own */
  sharding_ref *results = ar_alloc(p->a, (op->nresults + 1) * sizeof *results);
  bool *resharded = ar_calloc(p->a, op->nresults + 1, sizeof *resharded);
  bool any_change = false;
  for (uint32_t r = 0; r < op->nresults; r++) {
    uint32_t t = op->noperands + r;
    results[r] = all[t];
    bool other_mesh = all[t] && !fully_replicated(all[t]) && !same_device_ids(all[t]->mesh, mesh);
    if (!update[t] && !other_mesh) continue;
    results[r] = prop_unproject(p->a, &proj, t, mesh_of->mesh_name);
    resharded[r] = any_change = true;
  }
  SC_VEC(prop_axis) reduction = {0};
  for (uint32_t f = 0; f < rule->nfactors; f++)
    if (rule->factors[f].type == PROP_FACTOR_REDUCTION)
      for (uint32_t i = 0; i < common[f].n; i++) SC_PUSH(p->a, reduction, common[f].v[i]);
  prop_axes unreduced0 = results[0] ? results[0]->unreduced : (prop_axes){NULL, 0};
  prop_axes all_reduce = sort_and_merge(p->a, mesh, axes_diff(p->a, mesh, (prop_axes){reduction.v, (uint32_t)reduction.n}, unreduced0));
  emit_results(p, op, &v, all, results, resharded, any_change, all_reduce, mesh_of);
}

/* ---- data-flow ops: each edge's sources resharded to its owner's sharding -------------------------- */

/* Operand `k` of `user` brought to `target` right after the value is defined (Shardy's
 * insertExplicitReshardsToTargetSharding with insertAfterOperand). */
static void reshard_source(rpass *p, const ir_op *user, uint32_t k, sharding_ref target) {
  reshard_to_target(p, user, k, target, true, md_indexed_name(p->a, "operand", k));
}

static const ir_op *last_op(const ir_region *r) {
  if (!r || !r->nblocks) return NULL;
  const ir_block *b = r->blocks[r->nblocks - 1];
  return b->nops ? b->ops[b->nops - 1] : NULL;
}

/* Manual and named computations: operands flow into the body's arguments (their in_shardings as
 * written, manual axes included), the body's return into the results (as the body sees them). */
static void process_computation(rpass *p, const ir_op *op) {
  const md_sdy_op_info *x = md_info_sdy_op(md_model_op(p->model, op));
  if (!x || !op->nregions) return;
  for (uint32_t k = 0; k < op->noperands; k++) {
    const md_sharding *ms = k < x->in_shardings.nvalues ? x->in_shardings.values[k] : NULL;
    reshard_source(p, op, k, ms ? prop_sharding_from_model(p->a, ms, md_model_sharding_mesh(p->model, ms)) : NULL);
  }
  const ir_op *ret = last_op(ir_op_regions(op)[0]);
  for (uint32_t i = 0; ret && i < op->nresults && i < ret->noperands; i++)
    reshard_source(p, ret, i, prop_engine_local_sharding(p->e, op, result_sharding(p, op, i)));
}

/* While, case and optimization_barrier: results own their edges (a while's block arguments share its
 * results' shardings); manual and named computations. Returns false for other ops. */
static bool process_data_flow(rpass *p, const ir_op *op) {
  if (op->kind == SC_OP_SDY_MANUAL_COMPUTATION || op->kind == SC_OP_SDY_NAMED_COMPUTATION) {
    process_computation(p, op);
    return true;
  }
  bool barrier = ir_span_eq(ir_op_name(op), "stablehlo.optimization_barrier") || ir_span_eq(ir_op_name(op), "\"stablehlo.optimization_barrier\"");
  if (op->kind != SC_OP_WHILE && op->kind != SC_OP_CASE && !barrier) return false;
  for (uint32_t i = 0; i < op->nresults; i++) {
    sharding_ref owner = result_sharding(p, op, i);
    if (op->kind == SC_OP_WHILE || barrier) reshard_source(p, op, i, owner);
    if (op->kind == SC_OP_WHILE && op->nregions == 2) {
      const ir_op *ret = last_op(ir_op_regions(op)[1]);
      if (ret) reshard_source(p, ret, i, owner);
    }
    if (op->kind == SC_OP_CASE)
      for (uint32_t r = 0; r < op->nregions; r++) {
        const ir_op *ret = last_op(ir_op_regions(op)[r]);
        if (ret) reshard_source(p, ret, i, owner);
      }
  }
  return true;
}

/* A function's return: each value brought to the function's result sharding. */
static void process_return(rpass *p, const ir_op *fn) {
  if (!fn->nregions || !ir_op_regions(fn)[0]->nblocks) return;
  const ir_block *b = ir_op_regions(fn)[0]->blocks[ir_op_regions(fn)[0]->nblocks - 1];
  const ir_op *ret = b->nops ? b->ops[b->nops - 1] : NULL;
  if (!ret || ret->kind != SC_OP_RETURN) return;
  for (uint32_t k = 0; k < ret->noperands && k < ir_op_nresult_attrs(fn); k++) {
    const md_sharding *ms = md_model_func_result_sharding(p->model, fn, k);
    sharding_ref target = ms ? prop_sharding_from_model(p->a, ms, md_model_sharding_mesh(p->model, ms)) : NULL;
    reshard_to_target(p, ret, k, target, false, md_indexed_name(p->a, "returned value", k));
  }
}

/* The first sharding among `n` on a mesh of devices (not a single device's), or NULL. */
static sharding_ref first_on_mesh(const sharding_ref *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (s[i] && !single_device(s[i])) return s[i];
  return NULL;
}

/* Whether `s` shards, replicates or keeps unreduced an axis that is manual where `op` is: a callee's
 * argument sharding seen from inside a shard_map body it was not written for. */
static bool names_manual_axis(const rpass *p, const ir_op *op, sharding_ref s) {
  const md_manual_context *ctx = md_model_manual(p->model, op);
  if (!ctx || ctx->gspmd_manual) return ctx != NULL;
  for (uint32_t d = 0; d <= s->rank; d++) {
    prop_axes axes = d < s->rank ? s->dims[d].axes : s->replicated;
    for (uint32_t i = 0; i < axes.n; i++)
      for (uint32_t j = 0; j < ctx->nmanual_axes; j++)
        if (ir_span_same(s->mesh->axes[axes.v[i].axis].name, ctx->manual_axes[j])) return true;
  }
  return false;
}

/* A call: each operand brought to the callee's argument sharding, right after the operand is defined
 * (Shardy's insertExplicitReshardsOnCallOp; in full whatever the pass's version, so that one callee
 * serves every call). An argument without a sharding is open on the mesh of the first that has one;
 * when no argument has one, the targets are closed on the mesh of the first sharded operand. */
static void process_call(rpass *p, const ir_op *op) {
  const ir_op *callee = md_model_func(p->model, ir_op_callee(op));
  if (!callee || !callee->nregions || !op->noperands) return;
  uint32_t n = op->noperands;
  const ir_block *entry = ir_op_regions(callee)[0]->nblocks ? ir_op_regions(callee)[0]->blocks[0] : NULL;
  sharding_ref *args = ar_alloc(p->a, n * sizeof *args), *operands = ar_alloc(p->a, n * sizeof *operands);
  for (uint32_t k = 0; k < n; k++) {
    const ir_value *arg = entry && k < entry->nargs ? entry->args[k] : NULL;
    args[k] = arg ? value_sharding(p, arg) : NULL;
    operands[k] = operand_sharding(p, op, k, false);
  }
  sharding_ref like = first_on_mesh(args, n);
  bool closed = !like;
  if (closed && !(like = first_on_mesh(operands, n))) return;
  for (uint32_t k = 0; k < n; k++) {
    sharding_ref target = args[k];
    if (!op->operands[k]) continue; /* a name the parser could not resolve (a broken module): left as written */
    if (!target || closed) {
      uint32_t rank = rank_of(p, op->operands[k]);
      target = closed ? closed_replicated(p->a, like->mesh, like->mesh_name, rank)
                      : prop_sharding_open(p->a, like->mesh, like->mesh_name, rank);
    }
    if (!names_manual_axis(p, op, target)) reshard_to_target(p, op, k, target, true, md_indexed_name(p->a, "operand", k));
  }
}

/* Terminators (and calls, once process_call has run): not ops of their own in Shardy's walk. */
static bool terminator_or_call(rpass *p, const ir_op *op) {
  if (op->kind == SC_OP_CALL) process_call(p, op);
  if (op->kind == SC_OP_RETURN || op->kind == SC_OP_FUNC || op->kind == SC_OP_MODULE || op->kind == SC_OP_CALL) return true;
  return op->nregions == 0 && op->parent_op && (ir_span_eq(ir_op_name(op), "stablehlo.return") || ir_span_eq(ir_op_name(op), "sdy.return"));
}

/* The pass over `e`'s shardings: every op in post-order, then the functions' returns. */
static void run_pass(rpass *p) {
  const ir_module *m = p->m;
  sc_arena *a = p->a;
  p->facts = prop_engine_facts(p->e); /* the module's, as the engine found them */
  if (!p->facts) p->facts = prop_rule_facts_build(a, m);
  hs_name_map_init(&p->remap, a, 64); /* grows with the values the pass renames */
  for (uint32_t i = 0; i < p->model->nmeshes && !p->global_mesh; i++)
    if (!p->model->meshes[i].maximal && p->model->meshes[i].naxes) p->global_mesh = &p->model->meshes[i];
  /* Shardy walks each function in post-order: an op after the ops nested in it */
  SC_VEC(uint32_t) open = {0}; /* the ops whose subtree is not over: as deep as the nesting, not one per op */
  for (uint32_t i = 0; i <= m->nops; i++) {
    while (open.n && (i == m->nops || m->ops[open.v[open.n - 1]]->subtree_end <= i)) {
      const ir_op *op = m->ops[open.v[--open.n]];
      ar_step(a, 1);
      if (process_data_flow(p, op) || terminator_or_call(p, op) || reshard_to_unreduced(p, op)) continue;
      all_reduce_operands(p, op);
      process_op(p, op);
    }
    if (i < m->nops) SC_PUSH(a, open, i);
  }
  for (uint32_t f = 0; f < m->nfuncs; f++) process_return(p, m->funcs[f]);
}

prop_pass_errors prop_insert_explicit_reshards(sc_arena *a, const ir_module *m, const md_model *model, prop_printer *pr,
                                              bool partial) {
  prop_engine_options eo = {.strategy = PROP_BASIC, .seed_only = true};
  rpass p;
  memset(&p, 0, sizeof p);
  p.a = a;
  p.m = m;
  p.model = model;
  prop_engine *e = prop_engine_run(a, m, model, &eo);
  p.e = e;
  p.pr = pr;
  p.partial = partial;
  pr->renumber = true;
  for (uint32_t f = 0; f < m->nfuncs; f++) check_signature(&p, m->funcs[f]);
  if (p.errors.n) return (prop_pass_errors){p.errors.v, (uint32_t)p.errors.n}; /* fails before any change */
  prop_engine_print(e, pr); /* signatures on one line, as sdy_opt prints them */
  run_pass(&p);
  if (p.errors.n) return (prop_pass_errors){p.errors.v, (uint32_t)p.errors.n};
  /* every use reads the values' new names */
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    const operand_edit *edit = edit_of(&p, op, false);
    for (uint32_t k = 0; k < op->noperands; k++) {
      if (!op->operands[k] && !(edit && edit->names[k])) continue;
      const char *name = operand_name(&p, op, k);
      ir_span written = ir_op_operand_name(op, k);
      if (strlen(name) != written.n || memcmp(name, written.p, written.n)) prop_printer_replace_operand(pr, op, k, name);
    }
  }
  return (prop_pass_errors){NULL, 0};
}

prop_reshard_list prop_explicit_reshards(sc_arena *a, const ir_module *m, const md_model *model, const prop_engine *e) {
  prop_printer pr; /* the pass writes its edits here; nothing prints them */
  prop_printer_init(&pr, a, m);
  rpass p;
  memset(&p, 0, sizeof p);
  p.a = a;
  p.m = m;
  p.model = model;
  p.e = e;
  p.pr = &pr;
  run_pass(&p);
  return (prop_reshard_list){p.found.v, (uint32_t)p.found.n};
}
