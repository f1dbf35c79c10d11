/* manual.c — the `manual` family: sdy.manual_computation (counts, one mesh, known manual axes,
 * manual axes before free axes, divisibility, local shapes, nested computations not re-binding axes,
 * isolation from above, body shardings on the same mesh, manual_axes order) and GSPMD manual regions
 * (@SPMDFullToShardShape / @SPMDShardToFullShape). */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "model/memo.h"
#include "rules/fixes.h"
#include "rules/rule_util.h"

/* The row functions, declared from the table so their signatures are checked against it. */
#define OP_RULE(name, family, code, sev, summary, kinds, ccs, within, fn) void fn(ru_ctx *ctx, const ir_op *op);
#define OP_RULE_FINISH(name, family, code, sev, summary, kinds, ccs, within, fn, finish_fn) \
  void fn(ru_ctx *ctx, const ir_op *op);                                            \
  void finish_fn(ru_ctx *ctx);
#define RULE(name, family, code, sev, summary, fn) void fn(ru_ctx *ctx);
#include "rules/manual.def"
#undef OP_RULE
#undef OP_RULE_FINISH
#undef RULE

static bool is_mc(const ir_op *op) { return op->kind == SC_OP_SDY_MANUAL_COMPUTATION; }

static bool is_manual_axis(const md_op_info *info, ir_span name) {
  for (uint32_t i = 0; i < md_info_sdy_op(info)->nmanual_axes; i++)
    if (ir_span_same(md_info_sdy_op(info)->manual_axes[i].name, name)) return true;
  return false;
}

/* The mesh all in/out shardings share (first non-empty one). */
static const md_mesh *mc_mesh(const md_model *model, const md_op_info *info) {
  for (int pass = 0; pass < 2; pass++) {
    const md_annotation *an = pass ? &md_info_sdy_op(info)->out_shardings : &md_info_sdy_op(info)->in_shardings;
    for (uint32_t i = 0; i < an->nvalues; i++) {
      const md_mesh *m = md_model_sharding_mesh(model, an->values[i]);
      if (m && m->naxes) return m;
    }
  }
  return NULL;
}

typedef void (*mc_visit)(ru_ctx *ctx, const ir_op *op, const md_op_info *info);

/* Calls fn for `op` if it is an sdy.manual_computation (the rows subscribe to those). */
static void visit_mc(ru_ctx *ctx, const ir_op *op, mc_visit fn) {
  if (is_mc(op)) fn(ctx, op, md_model_op(ctx->model, op));
}

static bool mc_counts_ok(const ir_op *op, const md_op_info *info) {
  const ir_block *b = ru_body(op);
  const ir_op *ret = ru_terminator(op);
  if (md_info_sdy_op(info)->in_shardings.nvalues != op->noperands || md_info_sdy_op(info)->out_shardings.nvalues != op->nresults) return false;
  if (b && b->nargs != op->noperands) return false;
  if (ret && ret->kind == SC_OP_SDY_RETURN && ret->noperands != op->nresults) return false;
  return true;
}

static void value_count(ru_ctx *ctx, const ir_op *op, const md_op_info *info) {
  if (md_info_sdy_op(info)->in_shardings.failed || md_info_sdy_op(info)->out_shardings.failed) return;
  const ir_block *b = ru_body(op);
  const ir_op *ret = ru_terminator(op);
  if (md_info_sdy_op(info)->in_shardings.nvalues != op->noperands)
    ru_emit(ctx, op,
            "operand shardings don't match number of values: %u shardings vs %u values (shard_map in_specs must have "
            "one entry per argument)",
            md_info_sdy_op(info)->in_shardings.nvalues, op->noperands);
  else if (md_info_sdy_op(info)->out_shardings.nvalues != op->nresults)
    ru_emit(ctx, op,
            "result shardings don't match number of values: %u shardings vs %u values (shard_map out_specs must have "
            "one entry per output)",
            md_info_sdy_op(info)->out_shardings.nvalues, op->nresults);
  else if (b && b->nargs != op->noperands)
    ru_emit(ctx, op,
            "number of op operands and region operands must match. Op has %u op operands and %u region operands",
            op->noperands, b->nargs);
  else if (ret && ret->kind == SC_OP_SDY_RETURN && ret->noperands != op->nresults)
    ru_emit(ctx, op, "number of op results and region results must match. Op has %u op results and %u region results",
            op->nresults, ret->noperands);
}

void ru_check_manual_value_count(ru_ctx *ctx, const ir_op *op) { visit_mc(ctx, op, value_count); }

static bool bound_in(const md_manual_context *outer, ir_span name) {
  for (uint32_t j = 0; outer && j < outer->nmanual_axes; j++)
    if (ir_span_same(outer->manual_axes[j], name)) return true;
  return false;
}

/* A PartitionSpec of `s` without the axes an enclosing shard_map already made manual. */
static const char *spec_without(sc_arena *a, const md_sharding *s, const md_manual_context *outer) {
  if (!outer || !s || s->kind != SC_SHARDING_NAMED) return md_sharding_partition_spec(a, s);
  md_sharding c = *s;
  c.dims = ar_calloc(a, s->rank ? s->rank : 1, sizeof *c.dims);
  for (uint32_t d = 0; d < s->rank; d++) {
    c.dims[d] = s->dims[d];
    c.dims[d].axes = ar_calloc(a, s->dims[d].naxes ? s->dims[d].naxes : 1, sizeof *c.dims[d].axes);
    c.dims[d].naxes = 0;
    for (uint32_t j = 0; j < s->dims[d].naxes; j++)
      if (!bound_in(outer, s->dims[d].axes[j].name)) c.dims[d].axes[c.dims[d].naxes++] = s->dims[d].axes[j];
  }
  return md_sharding_partition_spec(a, &c);
}

/* jax.shard_map Python for a manual computation: its mesh, in/out specs and `axis_names`, leaving out
 * the axes an enclosing shard_map (`outer`, may be NULL) already made manual. */
static const char *mc_snippet(ru_ctx *ctx, const md_op_info *info, const md_mesh *mesh, const md_manual_context *outer) {
  sc_arena *a = ctx->arena;
  uint32_t nin = md_info_sdy_op(info)->in_shardings.nvalues, nout = md_info_sdy_op(info)->out_shardings.nvalues;
  const char **ins = ar_calloc(a, nin + 1, sizeof *ins), **outs = ar_calloc(a, nout + 1, sizeof *outs);
  for (uint32_t i = 0; i < nin; i++) ins[i] = spec_without(a, md_info_sdy_op(info)->in_shardings.values[i], outer);
  for (uint32_t i = 0; i < nout; i++) outs[i] = spec_without(a, md_info_sdy_op(info)->out_shardings.values[i], outer);
  ar_str names = SC_ASTR_INIT(a);
  ar_str_puts(&names, "{");
  uint32_t n = 0;
  for (uint32_t i = 0; i < md_info_sdy_op(info)->nmanual_axes; i++)
    if (md_mesh_axis_index(mesh, md_info_sdy_op(info)->manual_axes[i].name) >= 0 && !bound_in(outer, md_info_sdy_op(info)->manual_axes[i].name))
      ar_str_printf(&names, "%s'%.*s'", n++ ? ", " : "", SC_SPAN_ARG(md_info_sdy_op(info)->manual_axes[i].name));
  if (!n || !nout) return NULL;
  ar_str_puts(&names, "}");
  return ru_shard_map_snippet(a, mesh, "f", ins, nin, outs, nout, ar_str_str(&names), NULL);
}

static void one_mesh(ru_ctx *ctx, const ir_op *op, const md_op_info *info) {
  if (!md_info_sdy_op(info)->nmanual_axes) return;
  const md_mesh *common = mc_mesh(ctx->model, info);
  if (!common) return;
  for (int pass = 0; pass < 2; pass++) {
    const md_annotation *an = pass ? &md_info_sdy_op(info)->out_shardings : &md_info_sdy_op(info)->in_shardings;
    for (uint32_t i = 0; i < an->nvalues; i++) {
      const md_mesh *me = md_model_sharding_mesh(ctx->model, an->values[i]);
      if (!me || !me->naxes || ru_meshes_match(me, common)) continue;
      sc_diag *d = ru_emit(ctx, op,
                           "all in and out shardings must be bound to the same mesh or an empty mesh. %s %u is on "
                           "mesh %s but the manual computation is on %s",
                           pass ? "out_shardings" : "in_shardings", i, ru_mesh_str(ctx->arena, me),
                           ru_mesh_str(ctx->arena, common));
      ru_diag_fix(ctx, d, "Use one mesh for the whole shard_map", mc_snippet(ctx, info, common, NULL));
      return;
    }
  }
}

void ru_check_manual_mesh(ru_ctx *ctx, const ir_op *op) { visit_mc(ctx, op, one_mesh); }

static void unknown_axis(ru_ctx *ctx, const ir_op *op, const md_op_info *info) {
  const md_mesh *mesh = mc_mesh(ctx->model, info);
  if (!mesh) return;
  for (uint32_t i = 0; i < md_info_sdy_op(info)->nmanual_axes; i++) {
    if (md_mesh_axis_index(mesh, md_info_sdy_op(info)->manual_axes[i].name) >= 0) continue;
    /* Both lists are cut after SC_LIST_SHOWN names: the message stays bounded however many axes. */
    uint32_t nman = md_info_sdy_op(info)->nmanual_axes, nall = mesh->naxes;
    ar_str names = SC_ASTR_INIT(ctx->arena), all = SC_ASTR_INIT(ctx->arena);
    for (uint32_t k = 0; k < nman && k < SC_LIST_SHOWN; k++)
      ar_str_printf(&names, "%s'%.*s'", k ? ", " : "", SC_SPAN_ARG(md_info_sdy_op(info)->manual_axes[k].name));
    if (nman > SC_LIST_SHOWN) ar_str_printf(&names, ", ... and %u more", nman - SC_LIST_SHOWN);
    for (uint32_t k = 0; k < nall && k < SC_LIST_SHOWN; k++)
      ar_str_printf(&all, "%s'%.*s'", k ? ", " : "", SC_SPAN_ARG(mesh->axes[k].name));
    if (nall > SC_LIST_SHOWN) ar_str_printf(&all, ", ... and %u more", nall - SC_LIST_SHOWN);
    sc_diag *d = ru_emit(ctx, op,
                         "jax.shard_map requires axis_names={%s} to be a subset of mesh.axis_names=(%s%s): unknown "
                         "manual axis: \"%.*s\" (mesh %s has axes %s)",
                         ar_str_str(&names), ar_str_str(&all), mesh->naxes == 1 ? "," : "", SC_SPAN_ARG(md_info_sdy_op(info)->manual_axes[i].name),
                         ru_mesh_ref(ctx->arena, mesh), ru_mesh_str(ctx->arena, mesh));
    ru_diag_span_name(ctx, d, md_info_sdy_op(info)->manual_axes[i].name);
    ru_diag_fix(ctx, d, "Make only axes of the shard_map's mesh manual", mc_snippet(ctx, info, mesh, NULL));
    return;
  }
}

void ru_check_manual_unknown_axis(ru_ctx *ctx, const ir_op *op) { visit_mc(ctx, op, unknown_axis); }

/* Each in/out sharding: manual axes first; dims divisible by the manual size; local shapes. */
typedef enum { CHK_ORDER, CHK_DIV, CHK_LOCAL } mc_check;

static int64_t manual_size(const md_op_info *info, const md_sharding *s, uint32_t d, const md_mesh *mesh) {
  int64_t p = 1;
  for (uint32_t i = 0; i < s->dims[d].naxes; i++)
    if (is_manual_axis(info, s->dims[d].axes[i].name)) p *= md_axis_ref_size(&s->dims[d].axes[i], mesh);
  return p;
}

/* tensor<16x32xf32> with dims replaced */
static const char *local_type_str(sc_arena *a, ir_span global, const md_shape *local) {
  ir_span g = ir_span_trim(global);
  if (!ir_span_starts(g, "tensor<")) return ar_printf(a, "%.*s", SC_SPAN_ARG(g));
  const char *p = g.p + 7, *e = g.p + g.n;
  /* skip dims: (digits|?) 'x' ... */
  for (;;) {
    const char *q = p;
    if (q < e && *q == '?') q++;
    else
      while (q < e && isdigit((unsigned char)*q)) q++;
    if (q > p && q < e && *q == 'x') p = q + 1;
    else break;
  }
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "tensor<");
  for (int32_t i = 0; i < local->rank; i++) {
    if (local->dims[i] < 0) ar_str_puts(&s, "?x");
    else ar_str_printf(&s, "%" PRId64 "x", local->dims[i]);
  }
  ar_str_put(&s, p, (size_t)(e - p));
  return ar_str_str(&s);
}

/* With `found`, reports nothing but sets bit 1 << check in *found for each check that would report
 * (all three in one pass); else reports the first problem of `which`. */
static void check_values(ru_ctx *ctx, const ir_op *op, const md_op_info *info, mc_check which, unsigned *found) {
  sc_arena *a = ctx->arena;
  const ir_block *b = ru_body(op);
  const ir_op *ret = ru_terminator(op);
  bool reported = false;
  for (int pass = 0; pass < 2 && !reported; pass++) {
    bool operand = pass == 0;
    const md_annotation *an = operand ? &md_info_sdy_op(info)->in_shardings : &md_info_sdy_op(info)->out_shardings;
    const char *kind = operand ? "operand" : "result";
    for (uint32_t i = 0; i < an->nvalues && !reported; i++) {
      const md_sharding *s = an->values[i];
      const md_mesh *mesh = md_model_sharding_mesh(ctx->model, s);
      if (!mesh) continue;
      ir_span gtype = operand ? ru_operand_type(op, i) : ru_result_type(op, i);
      md_shape gs;
      bool known = gtype.n && md_parse_shape(a, gtype, &gs) && gs.kind == SC_SHAPE_ARRAY && (uint32_t)gs.rank == s->rank;
      if (which == CHK_ORDER || found) {
        for (uint32_t d = 0; d < s->rank && !reported; d++) {
          const md_axis_ref *free_ax = NULL;
          for (uint32_t j = 0; j < s->dims[d].naxes; j++) {
            const md_axis_ref *ax = &s->dims[d].axes[j];
            if (!is_manual_axis(info, ax->name)) {
              if (!free_ax) free_ax = ax;
            } else if (free_ax && found) {
              *found |= 1u << CHK_ORDER;
              break;
            } else if (free_ax) {
              sc_diag *dg = ru_emit(ctx, op,
                                    "%s sharding at index %u must have all manual axes come before free axes in its "
                                    "dimension sharding at index %u. Saw manual axis %s after free axis %s",
                                    kind, i, d, md_axis_ref_str(a, ax), md_axis_ref_str(a, free_ax));
              ru_diag_span_name(ctx, dg, md_sharding_pos(s, ax->name));
              ru_diag_fix(ctx, dg, "List the shard_map's manual axes first in each dimension", NULL);
              reported = true;
              break;
            }
          }
        }
        if (!found) continue;
      }
      if (!known) continue;
      md_shape local;
      local.kind = SC_SHAPE_ARRAY;
      local.rank = gs.rank;
      local.dims = ar_calloc(a, gs.rank ? gs.rank : 1, sizeof(int64_t));
      bool divisible = true;
      for (uint32_t d = 0; d < s->rank; d++) {
        int64_t ms = manual_size(info, s, d, mesh);
        int64_t g = gs.dims[d];
        if (g >= 0 && ms > 1 && g % ms != 0) {
          if (found) *found |= 1u << CHK_DIV;
          else if (which == CHK_DIV) {
            sc_diag *dg = ru_emit(ctx, op,
                                  "shard_map was given %s arrays with axis sizes that are not evenly divisible by the "
                                  "corresponding mesh axis sizes: %s dimension size %" PRId64 " is not divisible by the "
                                  "manual axes size %" PRId64 " (%s %u, dimension %u)",
                                  operand ? "argument" : "result", kind, g, ms, kind, i, d);
            ru_diag_span_text(ctx, dg, s->text);
            md_sharding unsharded = *s; /* the spec without the axes of the indivisible dimension */
            unsharded.dims = ar_calloc(a, s->rank, sizeof *unsharded.dims);
            memcpy(unsharded.dims, s->dims, s->rank * sizeof *s->dims);
            unsharded.dims[d].naxes = 0;
            ru_diag_fix(ctx, dg,
                        ar_printf(a, "Pad dimension %u to a multiple of %" PRId64 " or shard it over fewer axes", d, ms),
                        ar_printf(a, "%s_specs = (%s,)  # dimension %u unsharded; or jnp.pad it to a multiple of %" PRId64,
                                        operand ? "in" : "out", md_sharding_partition_spec(a, &unsharded), d, ms));
            reported = true;
          }
          divisible = false;
          break;
        }
        local.dims[d] = g < 0 ? -1 : g / ms;
      }
      if ((which != CHK_LOCAL && !found) || !divisible) continue;
      ir_span ltype = ir_span_of("", 0);
      if (operand) ltype = b && i < b->nargs ? ir_value_type(b->args[i]) : ltype;
      else ltype = ret ? ru_operand_type(ret, i) : ltype;
      md_shape ls;
      if (!ltype.n || !md_parse_shape(a, ltype, &ls) || ls.kind != SC_SHAPE_ARRAY) continue;
      bool same = ls.rank == local.rank;
      for (int32_t d = 0; same && d < ls.rank; d++) same = ls.dims[d] == local.dims[d];
      if (!same && found) *found |= 1u << CHK_LOCAL;
      else if (!same) {
        sc_diag *dg = ru_emit(ctx, op,
                              "%s shape, corresponding sharding, and region %s shape at index %u must match. Expected "
                              "local shape '%s', actual local shape '%.*s'",
                              kind, kind, i, local_type_str(a, gtype, &local), SC_SPAN_ARG(ir_span_trim(ltype)));
        ru_diag_fix(ctx, dg,
                    "The body sees each global dimension divided by the sizes of the manual axes that shard it", NULL);
        reported = true;
      }
    }
  }
}

/* The three rules walk the same values: one pass per manual computation finds which of them have
 * something to report (kept in the request's rule memo), and only those walk again to report. */
static void check_manual_values(ru_ctx *ctx, const ir_op *op, mc_check which) {
  if (!is_mc(op)) return;
  const md_op_info *info = md_model_op(ctx->model, op);
  if (!mc_counts_ok(op, info)) return;
  bool known;
  void **slot = md_memo_slot(ru_memo(ctx), RU_MEMO_MANUAL_VALUES | op->id, ir_span_of(NULL, 0), ir_span_of(NULL, 0), &known);
  if (!known) {
    unsigned found = 0;
    check_values(ctx, op, info, which, &found);
    *slot = (void *)(uintptr_t)(found + 1); /* check_values does not touch the memo: the slot stays valid */
  }
  unsigned found = (unsigned)((uintptr_t)*slot - 1);
  if (found & (1u << which)) check_values(ctx, op, info, which, NULL);
}

void ru_check_manual_axis_order(ru_ctx *ctx, const ir_op *op) { check_manual_values(ctx, op, CHK_ORDER); }
void ru_check_manual_divisibility(ru_ctx *ctx, const ir_op *op) { check_manual_values(ctx, op, CHK_DIV); }
void ru_check_manual_local_shape(ru_ctx *ctx, const ir_op *op) { check_manual_values(ctx, op, CHK_LOCAL); }

static bool manual_sharding(const md_sharding *s);

/* GSPMD: inside a manual region (between @SPMDFullToShardShape and @SPMDShardToFullShape, e.g. in
 * @shmap_body) a sharding must keep the manual subgroup ({manual} or last_tile_dims={manual, ...});
 * a plain tiled sharding shards over devices that are manual there (the GSPMD form of a
 * with_sharding_constraint naming a manual axis). */
static void check_gspmd_rebound(ru_ctx *ctx) {
  for (md_annotated it = md_annotated_first(ctx->model); it.op; md_annotated_next(ctx->model, &it)) {
    const ir_op *op = it.op; /* the others have no GSPMD sharding */
    const md_op_info *info = it.info;
    const md_sharding *s = md_info_gspmd(info)->nvalues ? md_info_gspmd(info)->values[0] : NULL;
    if (!s || s->kind == SC_SHARDING_TUPLE || manual_sharding(s)) continue;
    const md_manual_context *c = md_model_manual(ctx->model, op);
    if (!c->gspmd_manual || c->manual_op == op) continue;
    ir_span t = ir_op_custom_call_target(op);
    if (ir_span_eq(t, "SPMDFullToShardShape") || ir_span_eq(t, "SPMDShardToFullShape")) continue;
    if (s->kind != SC_SHARDING_TILED && !(s->kind == SC_SHARDING_NAMED && s->source == SC_SHARDING_FROM_GSPMD)) continue;
    bool sharded = false;
    for (uint32_t d = 0; d < s->tiles->ntile_dims; d++) sharded |= s->tiles->tile_dims[d] > 1;
    if (!sharded) continue;
    s = md_sharding_occurrence(ctx->arena, ctx->model, op, s);
    sc_diag *d = ru_emit_at(ctx, s->offset, op,
                            "pspec contains a manual axes of mesh which is not allowed. If you are using a "
                            "with_sharding_constraint under a shard_map, only use the mesh axis in PartitionSpec which "
                            "are not manual. The sharding " SC_QUOTE_FMT " inside a GSPMD manual region (a shard_map body) has no "
                            "manual subgroup: it shards over devices that are manual here.",
                            SC_QUOTE_ARG(s->text));
    ru_diag_span_text(ctx, d, s->text);
    ru_diag_fix(ctx, d,
                c->gspmd_partial ? "Constrain only over the axes the shard_map leaves automatic (axis_names excludes them), "
                                   "or drop the with_sharding_constraint"
                                 : "Drop the with_sharding_constraint inside the shard_map body: every axis is manual "
                                   "there, so there is nothing left to shard",
                NULL);
  }
}

static void axis_rebound(ru_ctx *ctx, const ir_op *op, const md_op_info *info) {
  const md_manual_context *parent = md_model_manual(ctx->model, op);
  for (uint32_t i = 0; i < md_info_sdy_op(info)->nmanual_axes; i++) {
    bool bound = false;
    for (uint32_t j = 0; j < parent->nmanual_axes; j++) bound |= ir_span_same(parent->manual_axes[j], md_info_sdy_op(info)->manual_axes[i].name);
    if (!bound) continue;
    sc_diag *d = ru_emit(ctx, op,
                         "operates on axis \"%.*s\" which is already bound by a parent sdy.manual_computation op (a "
                         "nested shard_map must make other axes manual)",
                         SC_SPAN_ARG(md_info_sdy_op(info)->manual_axes[i].name));
    /* the re-bound axis inside manual_axes={...} (quoted) */
    ru_diag_span_name(ctx, d, md_info_sdy_op(info)->manual_axes[i].name);
    const md_mesh *mesh = mc_mesh(ctx->model, info);
    ru_diag_fix(ctx, d, "Give nested shard_maps disjoint sets of manual axes",
                mesh ? mc_snippet(ctx, info, mesh, parent) : NULL);
    return;
  }
}

void ru_check_manual_axis_rebound(ru_ctx *ctx, const ir_op *op) { visit_mc(ctx, op, axis_rebound); }

void ru_finish_manual_axis_rebound(ru_ctx *ctx) {
  /* the shardings naming a re-bound axis in and under a re-binding nested manual computation follow
   * from it (ru_site_report links them): one diagnostic, their sites related */
  ru_report_site_problems(ctx, ru_site_report);
  check_gspmd_rebound(ctx);
}

void ru_check_manual_isolation(ru_ctx *ctx, const ir_op *op) {
  const ir_op *mc = NULL;
  for (const ir_op *p = op->parent_op; p; p = p->parent_op)
    if (is_mc(p)) {
      mc = p;
      break;
    }
  if (!mc) return;
  for (uint32_t i = 0; i < op->noperands; i++) {
    const ir_value *v = op->operands[i];
    if (!v || ru_value_inside(v, mc)) continue;
    sc_diag *d = ru_emit(ctx, op,
                         "'%.*s' op using value defined outside the region: %.*s is defined outside the "
                         "sdy.manual_computation, which is isolated from above",
                         SC_SPAN_ARG(ir_op_name(op)), SC_SPAN_ARG(v->name));
    ru_diag_fix(ctx, d, "Pass the value into the manual computation as an operand (an argument of the shard_map'd function)",
                NULL);
    break;
  }
}

void ru_check_manual_body_mesh(ru_ctx *ctx, const ir_op *op) {
  const md_manual_context *c = md_model_manual(ctx->model, op);
  if (!c->manual_op || c->gspmd_manual || !c->mesh || !is_mc(c->manual_op)) return;
  const md_op_info *info = md_model_op(ctx->model, op);
  const md_sharding *s = NULL;
  if (md_info_sdy(info)->nvalues) s = md_info_sdy(info)->values[0];
  else if (md_info_sharding(info)->nvalues) s = md_info_sharding(info)->values[0];
  else if (is_mc(op) && md_info_sdy_op(info)->in_shardings.nvalues) s = md_info_sdy_op(info)->in_shardings.values[0];
  if (!s) return;
  const md_mesh *me = md_model_sharding_mesh(ctx->model, s);
  if (!me || me->maximal || !me->naxes || ru_meshes_match(me, c->mesh)) return;
  sc_diag *d = ru_emit(ctx, op,
                       "sharding on mesh %s inside the body of an sdy.manual_computation on mesh %s: shardings in "
                       "a shard_map body must use the shard_map's mesh",
                       ru_mesh_ref(ctx->arena, me), ru_mesh_ref(ctx->arena, c->mesh));
  ru_diag_fix(ctx, d, "Use the shard_map's mesh for shardings inside its body", NULL);
}

static void axes_sorted(ru_ctx *ctx, const ir_op *op, const md_op_info *info) {
  const md_mesh *mesh = mc_mesh(ctx->model, info);
  if (!mesh) return;
  for (uint32_t i = 1; i < md_info_sdy_op(info)->nmanual_axes; i++) {
    int a = md_mesh_axis_index(mesh, md_info_sdy_op(info)->manual_axes[i - 1].name), b = md_mesh_axis_index(mesh, md_info_sdy_op(info)->manual_axes[i].name);
    if (a >= 0 && b >= 0 && a > b) {
      sc_diag *d = ru_emit(ctx, op, "manual_axes are not sorted w.r.t. mesh %s: \"%.*s\" comes after \"%.*s\"",
                           ru_mesh_ref(ctx->arena, mesh), SC_SPAN_ARG(md_info_sdy_op(info)->manual_axes[i].name),
                           SC_SPAN_ARG(md_info_sdy_op(info)->manual_axes[i - 1].name));
      sc_fix *f = ru_diag_fix(ctx, d, "List the manual axes in the mesh's order", NULL);
      const md_sdy_item *it = md_model_sdy_item(ctx->model, op, "manual_axes");
      if (it) ru_diag_span(ctx, d, it->offset, it->offset + it->value.n);
      if (it && ir_span_starts(it->value, "{"))
        ru_fix_edit(ctx, f, it->offset, it->value.n,
                    ru_axes_set_str(ctx->arena, ru_sorted_axes(ctx->arena, md_info_sdy_op(info)->manual_axes, md_info_sdy_op(info)->nmanual_axes, mesh),
                                    md_info_sdy_op(info)->nmanual_axes));
      return;
    }
  }
}

void ru_check_manual_axes_sorted(ru_ctx *ctx, const ir_op *op) { visit_mc(ctx, op, axes_sorted); }

/* ---- GSPMD manual regions ----------------------------------------------------------------------- */

static bool manual_sharding(const md_sharding *s) {
  if (!s) return false;
  if (s->kind == SC_SHARDING_MANUAL) return true;
  if (s->kind == SC_SHARDING_TUPLE) {
    for (uint32_t i = 0; i < s->nelements; i++)
      if (!manual_sharding(s->elements[i])) return false;
    return s->nelements > 0;
  }
  if (s->nmanual_axes) return true;
  for (uint32_t i = 0; i < s->tiles->nlast_tile_dims; i++)
    if (s->tiles->last_tile_dims[i] == 1) return true;
  return false;
}

void ru_check_manual_gspmd_region(ru_ctx *ctx, const ir_op *op) {
  sc_arena *a = ctx->arena;
  ir_span t = ir_op_custom_call_target(op);
  bool f2s = ir_span_eq(t, "SPMDFullToShardShape"), s2f = ir_span_eq(t, "SPMDShardToFullShape");
  if (!f2s && !s2f) return;
  const md_op_info *info = md_model_op(ctx->model, op);
  const md_sharding *s = md_info_gspmd(info)->nvalues ? md_info_gspmd(info)->values[0] : NULL;
  if (!s) return;
  if (f2s && !manual_sharding(s) && (s->kind == SC_SHARDING_TILED || s->kind == SC_SHARDING_NAMED)) {
    sc_diag *d = ru_emit(ctx, op,
                         "@SPMDFullToShardShape must produce a manual sharding ({manual} or last_tile_dims={manual, ...}), "
                         "got " SC_QUOTE_FMT,
                         SC_QUOTE_ARG(s->text));
    ru_diag_fix(ctx, d, "Enter manual regions with shard_map (jax.shard_map), which emits the right shardings", NULL);
    return;
  }
  if (s2f && s->kind == SC_SHARDING_MANUAL) {
    ru_emit(ctx, op, "@SPMDShardToFullShape must produce a non-manual (global) sharding, got " SC_QUOTE_FMT,
            SC_QUOTE_ARG(s->text));
    return;
  }
  if (!f2s || op->noperands < 1 || op->nresults < 1) return;
  /* local shape = global shape / tiling of the operand's sharding (the @Sharding before it) */
  const md_sharding *in = md_model_value_sharding(ctx->model, op->operands[0]);
  md_shape g, l;
  if (!in || !in->tiles->tile_dims || !md_parse_shape(a, ru_operand_type(op, 0), &g) || g.kind != SC_SHAPE_ARRAY) return;
  if (!md_parse_shape(a, ru_result_type(op, 0), &l) || l.kind != SC_SHAPE_ARRAY || l.rank != g.rank) return;
  uint32_t data = in->tiles->ntile_dims - in->tiles->nlast_tile_dims;
  if (data != (uint32_t)g.rank) return;
  bool full = s->kind == SC_SHARDING_MANUAL;
  for (int32_t d = 0; d < g.rank; d++) {
    int64_t tiles = in->tiles->tile_dims[d];
    if (g.dims[d] < 0 || l.dims[d] < 0) continue;
    if (g.dims[d] % tiles != 0) {
      ru_emit(ctx, op,
              "dimension %d of size %" PRId64 " is not divisible by its %" PRId64
              " shards entering the manual region (shard_map was given argument arrays with axis sizes that are not "
              "evenly divisible by the corresponding mesh axis sizes)",
              d, g.dims[d], tiles);
      break;
    }
    if (full && l.dims[d] != g.dims[d] / tiles) {
      ru_emit(ctx, op,
              "@SPMDFullToShardShape local shape %.*s does not match the global shape %.*s divided by the sharding "
              "%.*s: dimension %d should be %" PRId64 ", got %" PRId64,
              SC_SPAN_ARG(ru_result_type(op, 0)), SC_SPAN_ARG(ru_operand_type(op, 0)), SC_SPAN_ARG(in->text), d,
              g.dims[d] / tiles, l.dims[d]);
      break;
    }
  }
}

/* ---- unreduced in a partially manual computation (jax-errors #38) -------------------------------- */

static const char *py_axis_tuple(sc_arena *a, const ir_span *names, uint32_t n) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "(");
  for (uint32_t i = 0; i < n; i++) ar_str_printf(&s, "%s'%.*s'", i ? ", " : "", SC_SPAN_ARG(names[i]));
  ar_str_puts(&s, n == 1 ? ",)" : ")");
  return ar_str_str(&s);
}

static const char *sdy_axis_set(sc_arena *a, const ir_span *names, uint32_t n) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "{");
  for (uint32_t i = 0; i < n; i++) ar_str_printf(&s, "%s\"%.*s\"", i ? ", " : "", SC_SPAN_ARG(names[i]));
  ar_str_puts(&s, "}");
  return ar_str_str(&s);
}

void ru_check_manual_unreduced_partial(ru_ctx *ctx, const ir_op *op) {
  sc_arena *a = ctx->arena;
  if (!is_mc(op)) return;
  const md_op_info *info = md_model_op(ctx->model, op);
  const md_mesh *mesh = mc_mesh(ctx->model, info);
  if (!mesh) return;
  /* the axes of this computation and its enclosing ones are manual; size-1 axes trivially so */
  const md_manual_context *parent = md_model_manual(ctx->model, op);
  bool full = true;
  for (uint32_t i = 0; i < mesh->naxes && full; i++) {
    if (mesh->axes[i].size <= 1) continue;
    bool man = false;
    for (uint32_t j = 0; j < md_info_sdy_op(info)->nmanual_axes; j++) man |= ir_span_same(md_info_sdy_op(info)->manual_axes[j].name, mesh->axes[i].name);
    for (uint32_t j = 0; j < parent->nmanual_axes; j++) man |= ir_span_same(parent->manual_axes[j], mesh->axes[i].name);
    full = man;
  }
  if (full) return;
  for (int side = 0; side < 2; side++) {
    const md_annotation *an = side ? &md_info_sdy_op(info)->out_shardings : &md_info_sdy_op(info)->in_shardings;
    const md_sharding *s = NULL;
    for (uint32_t i = 0; i < an->nvalues && !s; i++)
      if (an->values[i] && an->values[i]->nunreduced) s = an->values[i];
    if (!s) continue;
    ir_span *names = ar_calloc(a, mesh->naxes + 1, sizeof *names), *man = ar_calloc(a, md_info_sdy_op(info)->nmanual_axes + 1, sizeof *man);
    for (uint32_t i = 0; i < mesh->naxes; i++) names[i] = mesh->axes[i].name;
    for (uint32_t i = 0; i < md_info_sdy_op(info)->nmanual_axes; i++) man[i] = md_info_sdy_op(info)->manual_axes[i].name;
    const char *prefix = side ? "out" : "in";
    /* what jax.shard_map refuses; Shardy accepts it (docs/rules-policy.md) */
    sc_severity sev = md_model_jax_policy_severity(ctx->model, ir_op_func(op), ctx->rule->severity);
    sc_diag *d = ru_emit_sev(ctx, sev, s->offset ? s->offset : op->pos.offset, op,
                            "unreduced/reduced can only be passed to %s_specs when shard_map is in full manual mode. Got "
                            "mesh axis names %s, manual_axes: %s, specs: %s (unreduced axes %s in a shard_map that leaves "
                            "axes automatic)",
                            prefix, py_axis_tuple(a, names, mesh->naxes), py_axis_tuple(a, man, md_info_sdy_op(info)->nmanual_axes),
                            ru_sharding_str(a, s), ru_axes_str(a, s->unreduced, s->nunreduced));
    ru_diag_span_text(ctx, d, s->text);
    ru_diag_fix(ctx, d,
                ar_printf(a,
                                "Make the shard_map fully manual (axis_names=set(mesh.axis_names), i.e. manual_axes "
                                "%s), or drop the unreduced axes from its %s_specs",
                                sdy_axis_set(a, names, mesh->naxes), prefix),
                NULL);
    break;
  }
}
