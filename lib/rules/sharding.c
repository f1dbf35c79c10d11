/* sharding.c — the `sharding` family: every annotation well-formed and consistent with its mesh
 * and its value (Shardy's TensorSharding verifier, in its order), divisibility at function boundaries,
 * XLA's HloSharding::Validate for GSPMD shardings, unreduced-axes transitions, and the other sdy
 * attributes and ops (sharding rules, propagation edges, data-flow edges, constants, barriers,
 * named computations). */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "model/memo.h"
#include "util/hashset.h"
#include "rules/fixes.h"
#include "rules/rule_util.h"
#include "rules/sdy_rule.h"

/* ---- sharding-syntax ---------------------------------------------------------------------------- */

void ru_check_sharding_syntax(ru_ctx *ctx);
void ru_check_sharding_syntax(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  if (!model) return;
  for (uint32_t i = 0; i < model->nerrors; i++) {
    const md_model_error *e = &model->errors[i];
    sc_diag *d = ru_emit_at(ctx, e->offset, e->op, "%s", e->message);
    sc_fix *f = ru_diag_fix(ctx, d, "Rewrite the annotation in the syntax Shardy/XLA accepts", NULL);
    f->note = "#sdy.sharding<@mesh, [{\"x\"}, {}]> on function arguments/results, "
              "#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]> on ops, mhlo.sharding = \"{devices=[2,1]<=[2]}\"";
  }
}

/* ---- per-sharding checks (one rule each, first problem per sharding) ---------------------------- */

/* Edit distance between two short names (axis names are short; longer ones are not compared). */
static size_t edit_distance(ir_span a, ir_span b) {
  size_t row[33];
  if (a.n > 32 || b.n > 32) return 99;
  for (size_t j = 0; j <= b.n; j++) row[j] = j;
  for (size_t i = 1; i <= a.n; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.n; j++) {
      size_t up = row[j], best = diag + (a.p[i - 1] != b.p[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[b.n];
}

/* For a sharding naming an axis the mesh lacks: the mesh axis closest to it (a likely typo), or NULL. */
static const char *closest_axis(ru_ctx *ctx, const md_sharding *s, const md_mesh *mesh) {
  for (uint32_t k = 0; s && k < s->rank; k++) {
    for (uint32_t j = 0; j < s->dims[k].naxes; j++) {
      ir_span name = s->dims[k].axes[j].name;
      bool known = false;
      for (uint32_t m = 0; m < mesh->naxes && !known; m++)
        known = mesh->axes[m].name.n == name.n && memcmp(mesh->axes[m].name.p, name.p, name.n) == 0;
      if (known) continue;
      size_t best = 3;
      const char *guess = NULL;
      for (uint32_t m = 0; m < mesh->naxes; m++) {
        size_t dist = edit_distance(name, mesh->axes[m].name);
        if (dist < best) best = dist, guess = ir_span_dup(ctx->arena, mesh->axes[m].name);
      }
      return guess;
    }
  }
  return NULL;
}

/* What a fix keeps of a sharding when it is rewritten as a PartitionSpec. */
typedef enum { KEEP_ALL = 0, KEEP_KNOWN, KEEP_FIRST_USE, KEEP_NON_MANUAL } pspec_keep;

static bool axis_known(const md_mesh *mesh, ir_span name) { return mesh && md_mesh_axis_index(mesh, name) >= 0; }

static bool axis_in(const ir_span *names, uint32_t n, ir_span name) {
  for (uint32_t i = 0; i < n; i++)
    if (ir_span_same(names[i], name)) return true;
  return false;
}

/* The sharding as a PartitionSpec of `rank` dimensions (-1: its own), dropping the axes `keep` rejects
 * and renaming unknown axes to `guess` when there is one. */
static const char *fixed_pspec(ru_ctx *ctx, const md_sharding *s, int32_t rank, pspec_keep keep, const md_mesh *mesh,
                               const char *guess, const md_manual_context *mc) {
  sc_arena *a = ctx->arena;
  if (!s || s->kind != SC_SHARDING_NAMED) return NULL;
  uint32_t r = rank < 0 ? s->rank : (uint32_t)rank;
  md_sharding *c = md_sharding_new(a, SC_SHARDING_NAMED, s->source);
  c->rank = r;
  c->dims = ar_calloc(a, r ? r : 1, sizeof *c->dims);
  ir_span *seen = ar_calloc(a, 1, sizeof *seen);
  uint32_t nseen = 0;
  for (uint32_t d = 0; d < r && d < s->rank; d++) {
    const md_dim_sharding *src = &s->dims[d];
    c->dims[d].axes = ar_calloc(a, src->naxes ? src->naxes : 1, sizeof *c->dims[d].axes);
    for (uint32_t j = 0; j < src->naxes; j++) {
      md_axis_ref ref = src->axes[j];
      if (keep == KEEP_KNOWN && !axis_known(mesh, ref.name)) {
        if (!guess) continue;
        ref.name = (ir_span){guess, strlen(guess)};
      }
      if ((keep == KEEP_FIRST_USE || keep == KEEP_KNOWN) && axis_in(seen, nseen, ref.name)) continue;
      if (keep == KEEP_NON_MANUAL && mc && axis_in(mc->manual_axes, mc->nmanual_axes, ref.name)) continue;
      seen = ar_grow(a, seen, nseen, nseen + 1, sizeof *seen);
      seen[nseen++] = ref.name;
      c->dims[d].axes[c->dims[d].naxes++] = ref;
    }
  }
  return md_sharding_partition_spec(a, c);
}

/* The first axis of the sharding the mesh lacks / named twice, or an empty span. */
static ir_span first_axis(const md_sharding *s, const md_mesh *mesh, bool duplicate) {
  for (uint32_t d = 0; s && d < s->rank; d++)
    for (uint32_t j = 0; j < s->dims[d].naxes; j++) {
      ir_span name = s->dims[d].axes[j].name;
      if (!duplicate && !axis_known(mesh, name)) return name;
      if (!duplicate) continue;
      for (uint32_t e = 0; e <= d; e++)
        for (uint32_t k = 0; k < (e == d ? j : s->dims[e].naxes); k++)
          if (ir_span_same(s->dims[e].axes[k].name, name)) return name;
    }
  return (ir_span){NULL, 0};
}

/* The mesh's axis names as a Python tuple: ('data', 'model') */
static const char *py_axis_tuple(sc_arena *a, const md_mesh *mesh) {
  ar_str t = SC_ASTR_INIT(a);
  ar_str_puts(&t, "(");
  for (uint32_t i = 0; mesh && i < mesh->naxes; i++) ar_str_printf(&t, "%s'%.*s'", i ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
  ar_str_puts(&t, mesh && mesh->naxes == 1 ? ",)" : ")");
  return ar_str_str(&t);
}

/* JAX's own sentence for the mistake, where JAX has one (jax-errors #40, #50, #51, #52), or NULL. */
static const char *jax_sentence(ru_ctx *ctx, const ru_site *site, const char *rule, const md_mesh *mesh,
                                const md_manual_context *mc, int32_t value_rank) {
  sc_arena *a = ctx->arena;
  const md_sharding *s = site->s;
  const char *spec = s && s->kind == SC_SHARDING_NAMED ? md_sharding_partition_spec(a, s) : NULL;
  if (!spec) return NULL;
  if (!strcmp(rule, "sharding-unknown-axis") && mesh) {
    ir_span ax = first_axis(s, mesh, false);
    if (ax.n)
      return ar_printf(a, "Resource axis: %.*s of %s is not found in mesh: %s.", SC_SPAN_ARG(ax), spec,
                             py_axis_tuple(a, mesh));
  } else if (!strcmp(rule, "sharding-duplicate-axis")) {
    ir_span ax = first_axis(s, mesh, true);
    if (ax.n)
      return ar_printf(a,
                             "A single NamedSharding spec specification can map every mesh axis to at most one "
                             "positional dimension, but %s has duplicate entries for `%.*s`",
                             spec, SC_SPAN_ARG(ax));
  } else if (!strcmp(rule, "sharding-rank") && value_rank >= 0 && (int32_t)s->rank > value_rank) {
    return ar_printf(a,
                           "Sharding NamedSharding(mesh=%s, spec=%s) is only valid for values of rank at least %u, but "
                           "was applied to a value of rank %d.%s",
                           mesh ? ru_kc_mesh_str(a, mesh) : "?", spec, s->rank, value_rank,
                           value_rank == 0 ? " For scalars the PartitionSpec should be P()" : "");
  } else if (!strcmp(rule, "manual-axis-rebound") && mc && mc->nmanual_axes) {
    /* The sharding's axis names in a set, then one lookup per manual axis: linear in both lists. */
    size_t nrefs = 0;
    for (uint32_t d = 0; d < s->rank; d++) nrefs += s->dims[d].naxes;
    hs_name_map used_axes;
    hs_name_map_init(&used_axes, a, nrefs);
    for (uint32_t d = 0; d < s->rank; d++)
      for (uint32_t j = 0; j < s->dims[d].naxes; j++)
        hs_name_map_put(&used_axes, s->dims[d].axes[j].name.p, s->dims[d].axes[j].name.n, 0, NULL);
    ar_str axes_s = SC_ASTR_INIT(a);
    uint32_t n = 0, value;
    for (uint32_t i = 0; i < mc->nmanual_axes; i++) {
      if (!hs_name_map_get(&used_axes, mc->manual_axes[i].p, mc->manual_axes[i].n, &value)) continue;
      if (n < SC_LIST_SHOWN) ar_str_printf(&axes_s, "%s'%.*s'", n ? ", " : "", SC_SPAN_ARG(mc->manual_axes[i]));
      n++;
    }
    if (n > SC_LIST_SHOWN) ar_str_printf(&axes_s, ", ... and %u more", n - SC_LIST_SHOWN);
    const char *axes = ar_str_str(&axes_s);
    if (n)
      return ar_printf(a,
                             "pspec %s contains a manual axes (%s%s) of mesh which is not allowed. If you are using a "
                             "with_sharding_constraint under a shard_map, only use the mesh axis in PartitionSpec which "
                             "are not manual.",
                             spec, axes, n == 1 ? "," : "");
  }
  return NULL;
}

/* The span of a site's problem: the offending axis name where one is the culprit, else the sharding. */
static void span_site(ru_ctx *ctx, sc_diag *d, const ru_site *site, const char *rule, const md_mesh *mesh,
                      const md_manual_context *mc) {
  const md_sharding *s = md_sharding_occurrence(ctx->arena, ctx->model, site->op, site->s);
  ir_span ax = {NULL, 0};
  if (!strcmp(rule, "sharding-unknown-axis")) ax = first_axis(s, mesh, false);
  else if (!strcmp(rule, "sharding-duplicate-axis")) {
    ir_span name = first_axis(s, mesh, true);
    /* the second use is the culprit */
    for (uint32_t k = 0, seen = 0; name.n && s && k < s->rank && !ax.n; k++)
      for (uint32_t j = 0; j < s->dims[k].naxes && !ax.n; j++)
        if (ir_span_same(s->dims[k].axes[j].name, name) && seen++) ax = s->dims[k].axes[j].name;
  } else if (!strcmp(rule, "manual-axis-rebound") && mc) {
    for (uint32_t k = 0; s && k < s->rank && !ax.n; k++)
      for (uint32_t j = 0; j < s->dims[k].naxes && !ax.n; j++)
        if (axis_in(mc->manual_axes, mc->nmanual_axes, s->dims[k].axes[j].name)) ax = s->dims[k].axes[j].name;
  } else if (!strcmp(rule, "sharding-unknown-mesh") && s && s->mesh_name.n) {
    ax = s->mesh_name;
  }
  ax = md_sharding_pos(s, ax); /* shared names lie in the first occurrence of the text */
  uint32_t at = ax.n ? ru_ctx_offset_of(ctx, ax) : UINT32_MAX;
  if (at != UINT32_MAX && at > 0 && ctx->buf[at - 1] == '@') { /* a mesh symbol: with its '@' */
    ru_diag_span(ctx, d, at - 1, at + ax.n);
    return;
  }
  if (ax.n && ru_diag_span_name(ctx, d, ax)) return;
  if (s) ru_diag_span_text(ctx, d, s->text);
}

/* Machine fix for an axis-name typo: the underlined name (`"modle"`) becomes the mesh axis it is one
 * or two edits away from (`"model"`), when the underlined text is a plain axis name. */
static void add_axis_rename(ru_ctx *ctx, sc_diag *d, const char *guess) {
  if (!ctx->lines || !ctx->buf || d->end_offset <= d->offset || d->end_offset > ctx->len) return;
  const char *p = ctx->buf + d->offset;
  uint32_t n = d->end_offset - d->offset;
  bool quoted = n >= 2 && p[0] == '"' && p[n - 1] == '"';
  for (uint32_t i = quoted; i < n - quoted; i++)
    if (!isalnum((unsigned char)p[i]) && p[i] != '_') return;
  sc_fix *f = ru_diag_fix(ctx, d,
                          ar_printf(ctx->arena, "Rename the axis %.*s to '%s' in this sharding", (int)n, p, guess),
                          NULL);
  ru_fix_edit(ctx, f, d->offset, n, quoted ? ar_printf(ctx->arena, "\"%s\"", guess) : guess);
}

void ru_site_report(ru_ctx *ctx, const ru_site *site, void *user) {
  (void)user;
  const char *rule = NULL;
  const char *msg = ru_site_problem(ctx, site, &rule);
  if (!msg || strcmp(rule, ctx->rule->name) != 0) return;
  sc_arena *a = ctx->arena;
  const md_mesh *mesh = md_model_sharding_mesh(ctx->model, site->s);
  const md_manual_context *mc = md_model_manual(ctx->model, site->op);
  md_shape shape;
  int32_t value_rank = site->type.n && md_parse_shape(a, site->type, &shape) && shape.kind == SC_SHAPE_ARRAY ? shape.rank
                       : site->type.n && md_parse_shape(a, site->type, &shape) && shape.kind == SC_SHAPE_TOKEN ? 0
                                                                                                              : -1;
  const char *jax = jax_sentence(ctx, site, rule, mesh, mc, value_rank);
  sc_diag *d = jax ? ru_emit_at(ctx, site->offset, site->op, "%s %s", jax, msg) : ru_emit_at(ctx, site->offset, site->op, "%s", msg);
  span_site(ctx, d, site, rule, mesh, mc);
  if (!strcmp(rule, "sharding-rank")) ru_tensor_context(ctx, d, site->s, site->type, site->what, -1);
  if (mesh && mesh->naxes) {
    const char **names = ar_calloc(a, mesh->naxes, sizeof *names);
    for (uint32_t i = 0; i < mesh->naxes; i++) names[i] = ir_span_dup(a, mesh->axes[i].name);
    ru_diag_context_list(ctx, d, "mesh_axes", names, mesh->naxes);
  }
  if (!strcmp(rule, "sharding-unknown-mesh")) {
    ar_str list = SC_ASTR_INIT(ctx->arena);
    uint32_t shown = ctx->model->nmeshes < SC_LIST_SHOWN ? ctx->model->nmeshes : SC_LIST_SHOWN;
    for (uint32_t i = 0; i < shown; i++) ar_str_printf(&list, "%s@%.*s", i ? ", " : "", SC_SPAN_ARG(ctx->model->meshes[i].name));
    if (shown < ctx->model->nmeshes) ar_str_printf(&list, ", ... and %u more", ctx->model->nmeshes - shown);
    const char *names = ar_str_str(&list);
    sc_fix *f = ru_diag_fix(ctx, d,
                            ctx->model->nmeshes ? ar_printf(ctx->arena, "Refer to a mesh the module declares (%s)", names)
                                                : "Declare the mesh the sharding refers to at module level",
                            NULL);
    if (!ctx->model->nmeshes)
      f->note = ar_printf(ctx->arena, "In the module: sdy.mesh @%.*s = <[\"x\"=2]> before the functions; in JAX, lower "
                                   "under jax.set_mesh(mesh)", SC_SPAN_ARG(site->s->mesh_name));
  } else if (!strcmp(rule, "sharding-unknown-axis") && mesh) {
    ar_str list = SC_ASTR_INIT(ctx->arena);
    uint32_t shown = mesh->naxes < SC_LIST_SHOWN ? mesh->naxes : SC_LIST_SHOWN;
    for (uint32_t i = 0; i < shown; i++) ar_str_printf(&list, "%s'%.*s'", i ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
    if (shown < mesh->naxes) ar_str_printf(&list, ", ... and %u more", mesh->naxes - shown);
    const char *names = ar_str_str(&list);
    const char *guess = closest_axis(ctx, site->s, mesh);
    const char *spec = fixed_pspec(ctx, site->s, -1, KEEP_KNOWN, mesh, guess, NULL);
    ru_diag_fix(ctx, d,
                guess ? ar_printf(a, "Did you mean '%s'? Use an axis of the mesh: %s", guess, names)
                      : ar_printf(a, "Use an axis of the mesh: %s", names),
                spec ? ar_printf(a, "mesh = %s\nsharding = NamedSharding(mesh, %s)", ru_py_make_mesh(a, mesh), spec)
                     : NULL);
    if (guess) add_axis_rename(ctx, d, guess);
  } else if (!strcmp(rule, "sharding-rank")) {
    const char *spec = value_rank >= 0 ? fixed_pspec(ctx, site->s, value_rank, KEEP_ALL, mesh, NULL, NULL) : NULL;
    ru_diag_fix(ctx, d, "Give one dimension sharding per tensor dimension (rank-0 shardings for tokens and maximal meshes)",
                spec ? ar_printf(a, "sharding = NamedSharding(mesh, %s)  # rank %d", spec, value_rank) : NULL);
  } else if (!strcmp(rule, "sharding-duplicate-axis")) {
    const char *spec = fixed_pspec(ctx, site->s, -1, KEEP_FIRST_USE, mesh, NULL, NULL);
    ru_diag_fix(ctx, d, "Name each mesh axis at most once in the sharding",
                spec ? ar_printf(a, "sharding = NamedSharding(mesh, %s)", spec) : NULL);
  } else if (!strcmp(rule, "sharding-priority")) {
    sc_fix *f = ru_diag_fix(ctx, d, "Drop the priority of the closed, empty dimension (it has no effect)", NULL);
    const md_sharding *written = md_sharding_occurrence(ctx->arena, ctx->model, site->op, site->s);
    for (uint32_t k = 0; k < written->rank; k++) {
      const md_dim_sharding *dim = &written->dims[k];
      uint32_t off, len;
      if (dim->priority >= 0 && !dim->open && !dim->naxes &&
          ru_sharding_piece(ctx->module, written, RU_PIECE_PRIORITY, k, &off, &len))
        ru_fix_edit(ctx, f, off, len, "");
    }
  } else if (!strcmp(rule, "sharding-axis-order") && mesh) {
    sc_fix *f = ru_diag_fix(ctx, d, "List the axes in the mesh's order", NULL);
    const md_sharding *sh = md_sharding_occurrence(ctx->arena, ctx->model, site->op, site->s);
    uint32_t off, len;
    if (sh->nreplicated && ru_sharding_piece(ctx->module, sh, RU_PIECE_REPLICATED, 0, &off, &len))
      ru_fix_edit(ctx, f, off, len, ru_axes_set_str(a, ru_sorted_axes(a, sh->replicated, sh->nreplicated, mesh), sh->nreplicated));
    if (sh->nunreduced && ru_sharding_piece(ctx->module, sh, RU_PIECE_UNREDUCED, 0, &off, &len))
      ru_fix_edit(ctx, f, off, len, ru_axes_set_str(a, ru_sorted_axes(a, sh->unreduced, sh->nunreduced, mesh), sh->nunreduced));
  } else if (!strcmp(rule, "manual-axis-rebound")) {
    /* under (or on) a nested manual computation that re-binds the axis, that re-binding is the mistake */
    const ir_op *nested = ir_span_eq(ir_op_name(site->op), "sdy.manual_computation") ? site->op : mc ? mc->manual_op : NULL;
    if (nested) ru_diag_caused_by(ctx, d, "SC0507", nested->pos.offset);
    const char *spec = fixed_pspec(ctx, site->s, -1, KEEP_NON_MANUAL, mesh, NULL, mc);
    ru_diag_fix(ctx, d, "Inside shard_map, only name mesh axes that are not manual in shardings",
                spec ? ar_printf(a, "x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, %s))", spec) : NULL);
  }
}

#define SITE_RULE(fn)                                                                                           \
  void fn(ru_ctx *ctx);                                                                                         \
  void fn(ru_ctx *ctx) { ru_report_site_problems(ctx, ru_site_report); }

SITE_RULE(ru_check_sharding_unknown_mesh)
SITE_RULE(ru_check_sharding_unknown_axis)
SITE_RULE(ru_check_sharding_rank)
SITE_RULE(ru_check_sharding_duplicate_axis)
SITE_RULE(ru_check_sharding_sub_axis)
SITE_RULE(ru_check_sharding_axis_order)
SITE_RULE(ru_check_sharding_priority)

/* ---- sharding-value-count ----------------------------------------------------------------------- */

static bool fully_replicated_rank0(const md_model *model, const md_sharding *s) {
  (void)model;
  return s && s->rank == 0 && !s->nreplicated && !s->nunreduced;
}

void ru_visit_sharding_value_count(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_value_count(ru_ctx *ctx, const ir_op *op) {
  if (!ru_annotated(ctx, op)) return; /* the others have no shardings */
  const md_op_info *info = md_model_op(ctx->model, op);
  if (!info || ru_is_func(op)) return;
  if (md_info_sdy(info)->present && !md_info_sdy(info)->failed) {
    uint32_t n = md_info_sdy(info)->nvalues, want = op->nresults;
    bool ok = n == want || (want == 0 && n == 1);
    (void)fully_replicated_rank0;
    if (!ok) {
      sc_diag *d = ru_emit(ctx, op, "shardings don't match number of values: %u shardings vs %u values", n, want);
      ru_diag_fix(ctx, d, ar_printf(ctx->arena, "Give exactly one sharding per result (%u)", want), NULL);
    }
  }
  if (op->kind == SC_OP_SDY_NAMED_COMPUTATION) {
    if (md_info_sdy_op(info)->in_shardings.present && !md_info_sdy_op(info)->in_shardings.failed && md_info_sdy_op(info)->in_shardings.nvalues != op->noperands)
      ru_emit(ctx, op, "in_shardings shardings don't match number of values: %u shardings vs %u values",
              md_info_sdy_op(info)->in_shardings.nvalues, op->noperands);
    if (md_info_sdy_op(info)->out_shardings.present && !md_info_sdy_op(info)->out_shardings.failed && md_info_sdy_op(info)->out_shardings.nvalues != op->nresults)
      ru_emit(ctx, op, "out_shardings shardings don't match number of values: %u shardings vs %u values",
              md_info_sdy_op(info)->out_shardings.nvalues, op->nresults);
  }
}

/* ---- sharding-divisibility ---------------------------------------------------------------------- */

/* A Python tuple of ints "(2, 4)" / "(8,)"; cut after SC_LIST_SHOWN items. */
static const char *tiling_str(sc_arena *a, const int64_t *t, uint32_t n) {
  ar_str s = SC_ASTR_INIT(a);
  uint32_t shown = n < SC_LIST_SHOWN ? n : SC_LIST_SHOWN;
  ar_str_puts(&s, "(");
  for (uint32_t i = 0; i < shown; i++) ar_str_printf(&s, "%s%" PRId64, i ? ", " : "", t[i]);
  if (shown < n) ar_str_printf(&s, ", ... and %u more", n - shown);
  ar_str_puts(&s, n == 1 ? ",)" : ")");
  return ar_str_str(&s);
}

static const char *shape_str(sc_arena *a, const md_shape *sh) {
  return tiling_str(a, sh->dims, sh->rank > 0 ? (uint32_t)sh->rank : 0);
}

/* Per-dimension shard counts of `s` on a value of type `type` (false if unknown). */
static bool value_tiles(ru_ctx *ctx, const md_sharding *s, ir_span type, md_shape *sh, int64_t **out) {
  sc_arena *a = ctx->arena;
  if (!s || !type.n || !md_parse_shape(a, type, sh) || sh->kind != SC_SHAPE_ARRAY) return false;
  uint32_t rank = (uint32_t)sh->rank;
  int64_t *tiles = ar_calloc(a, rank ? rank : 1, sizeof *tiles);
  const md_mesh *mesh = md_model_sharding_mesh(ctx->model, s);
  if (s->kind == SC_SHARDING_NAMED && s->rank == rank && !(s->source == SC_SHARDING_FROM_GSPMD && s->tiles->tile_dims)) {
    for (uint32_t d = 0; d < rank; d++) tiles[d] = md_dim_sharded_size(s, d, mesh);
  } else if (s->tiles->tile_dims && s->tiles->ntile_dims >= rank + s->tiles->nlast_tile_dims && s->tiles->ntile_dims - s->tiles->nlast_tile_dims == rank) {
    for (uint32_t d = 0; d < rank; d++) tiles[d] = s->tiles->tile_dims[d];
  } else {
    return false;
  }
  *out = tiles;
  return true;
}

/* True if `s` names real mesh axes (not a GSPMD tiling or the synthesized "_partitions" mesh). */
static bool names_real_axes(const md_model *model, const md_sharding *s) {
  const md_mesh *mesh = md_model_sharding_mesh(model, s);
  return s->kind == SC_SHARDING_NAMED && s->dims && mesh && !mesh->synthesized;
}

/* A mesh axis of size > 1 dividing `size` that no other dimension of `s` uses (the largest), or NULL. */
static const md_axis *divisor_axis(const md_model *model, const md_sharding *s, uint32_t dim, int64_t size) {
  const md_mesh *mesh = md_model_sharding_mesh(model, s);
  if (!mesh || mesh->synthesized || size <= 0) return NULL;
  const md_axis *best = NULL;
  for (uint32_t i = 0; i < mesh->naxes; i++) {
    const md_axis *ax = &mesh->axes[i];
    if (ax->size <= 1 || size % ax->size != 0) continue;
    bool used = false;
    for (uint32_t d = 0; d < s->rank && s->dims; d++)
      for (uint32_t j = 0; d != dim && j < s->dims[d].naxes; j++) used |= ir_span_same(s->dims[d].axes[j].name, ax->name);
    if (!used && (!best || ax->size > best->size)) best = ax;
  }
  return best;
}

/* The PartitionSpec of `s` with dimension `dim` sharded over `ax` (or None when NULL). */
static const char *spec_with_dim(sc_arena *a, const md_sharding *s, uint32_t dim, const md_axis *ax) {
  md_sharding c = *s;
  c.dims = ar_calloc(a, s->rank + 1, sizeof *c.dims);
  memcpy(c.dims, s->dims, s->rank * sizeof *c.dims);
  memset(&c.dims[dim], 0, sizeof c.dims[dim]);
  c.dims[dim].priority = -1;
  if (ax) {
    c.dims[dim].axes = ar_calloc(a, 1, sizeof *c.dims[dim].axes);
    c.dims[dim].axes[0].name = ax->name;
    c.dims[dim].axes[0].size = ax->size;
    c.dims[dim].naxes = 1;
  }
  return md_sharding_partition_spec(a, &c);
}

/* The axes of dimension `dim` as `{"a", "b"}`. */
static const char *dim_axes_str(sc_arena *a, const md_sharding *s, uint32_t dim) {
  const char *l = ru_axes_str(a, s->dims[dim].axes, s->dims[dim].naxes); /* "[...]", cut if long */
  return ar_printf(a, "{%.*s}", (int)strlen(l) - 2, l + 1);
}

static void check_divisible(ru_ctx *ctx, const ir_op *func, const md_sharding *s, ir_span type, const char *what,
                            uint32_t index) {
  if (!s) return;
  sc_arena *a = ctx->arena;
  md_shape sh;
  int64_t *tiles;
  if (!value_tiles(ctx, s, type, &sh, &tiles)) return;
  uint32_t rank = (uint32_t)sh.rank;
  for (uint32_t d = 0; d < rank; d++) {
    int64_t size = sh.dims[d];
    if (size < 0 || tiles[d] <= 1 || size % tiles[d] == 0) continue;
    /* a PartitionSpec only for shardings over real mesh axes (never the synthesized "_partitions") */
    bool named = names_real_axes(ctx->model, s);
    const char *spec = named ? md_sharding_partition_spec(a, s) : NULL;
    bool sdy = s->source == SC_SHARDING_FROM_SDY;
    /* JAX's jit boundary refuses it; Shardy and XLA pad it (docs/rules-policy.md) */
    sc_severity sev = md_model_jax_policy_severity(ctx->model, func, ctx->rule->severity);
    sc_diag *dg = ru_emit_sev(
        ctx, sev, func->pos.offset, func,
        "One of %s was given the sharding of %s, which implies that array axis %u is partitioned %" PRId64 " times, "
        "but the dimension size is %" PRId64 " (full shape: %s, per-dimension tiling factors: %s should evenly divide "
        "the shape). %s #%u has a non-divisible sharding: dim %u with size %" PRId64 " is not divisible by its sharded "
        "size %" PRId64 "%s. %s",
        !strcmp(what, "result") ? "pjit outputs" : "pjit arguments",
        spec ? spec : ar_printf(a, SC_QUOTE_FMT, SC_QUOTE_ARG(s->text)), d, tiles[d], size, shape_str(a, &sh),
        tiling_str(a, tiles, rank), what, index, d, size, tiles[d],
        named ? ar_printf(a, " (axes %s)", dim_axes_str(a, s, d)) : "",
        sdy ? "Shardy expects function IO to be divisible." : "Function inputs and outputs must be evenly divisible.");
    ru_diag_span_text(ctx, dg, s->text);
    ru_tensor_context(ctx, dg, s, type, ar_printf(a, "%s #%u", what, index), (int32_t)d);
    const char *kw = !strcmp(what, "result") ? "out_shardings" : "in_shardings";
    const md_axis *ax = named ? divisor_axis(ctx->model, s, d, size) : NULL;
    const char *title =
        ax ? ar_printf(a, "Shard dimension %u over \"%.*s\" (size %" PRId64 " divides %" PRId64 "), pad it to a multiple of %" PRId64
                                ", or leave it unsharded",
                             d, SC_SPAN_ARG(ax->name), ax->size, size, tiles[d])
           : ar_printf(a, "Pad dimension %u to a multiple of %" PRId64 ", or shard it over fewer devices", d, tiles[d]);
    const char *snippet = NULL;
    if (named) {
      snippet = ar_printf(a, "%s=NamedSharding(mesh, %s)", kw, spec_with_dim(a, s, d, ax));
      if (ax) snippet = ar_printf(a, "%s\n# or: %s=NamedSharding(mesh, %s)", snippet, kw, spec_with_dim(a, s, d, NULL));
      snippet = ar_printf(a, "%s\n# or: jnp.pad(x, ...) so that x.shape[%u] %% %" PRId64 " == 0", snippet, d, tiles[d]);
    }
    ru_diag_fix(ctx, dg, title, snippet);
    return;
  }
}

void ru_check_sharding_divisibility(ru_ctx *ctx);
void ru_check_sharding_divisibility(ru_ctx *ctx) {
  const ir_module *m = ctx->module;
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const ir_op *f = m->funcs[k];
    const md_op_info *info = md_model_op(ctx->model, f);
    if (!info) continue;
    /* manual-computation bodies (round-trip) see local shapes: skip functions in manual contexts */
    const ir_block *b = ru_body(f);
    if (b && b->nops && md_model_manual(ctx->model, b->ops[0])->nmanual_axes) continue;
    for (uint32_t i = 0; i < md_info_func(info)->nargs; i++)
      check_divisible(ctx, f, md_model_arg_sharding(ctx->model, f, i), ru_arg_type(f, i), "argument", i);
    for (uint32_t i = 0; i < md_info_func(info)->nresults; i++)
      check_divisible(ctx, f, md_model_func_result_sharding(ctx->model, f, i), ru_func_result_type(f, i), "result", i);
  }
}

/* ---- sharding-uneven-constraint ------------------------------------------------------------------- */

/* An intermediate sdy.sharding_constraint / GSPMD @Sharding on a dimension its shard count does not
 * divide: legal, but XLA pads the dimension (uneven shards) and JAX may silently replicate instead
 * (jax#26946), or fail late (jax#15788). */
/* True if `s` may shard some dimension of a `type` value unevenly (false: every dimension divides, or
 * the tiling is unknown). Memoized per (sharding text, type text): constraints repeat by thousands. */
static bool maybe_uneven(ru_ctx *ctx, const md_sharding *s, ir_span type) {
  bool found;
  void **slot = NULL;
  if (s->text.n) {
    uint64_t tag = RU_MEMO_UNEVEN;
    ir_span key = ru_sharding_key(s, &tag);
    slot = md_memo_slot(ru_memo(ctx), tag, key, type, &found);
    if (found) return *slot != NULL;
  }
  md_shape sh;
  int64_t *tiles;
  bool uneven = false;
  if (value_tiles(ctx, s, type, &sh, &tiles))
    for (uint32_t d = 0; d < (uint32_t)sh.rank && !uneven; d++)
      uneven = sh.dims[d] >= 0 && tiles[d] > 1 && sh.dims[d] % tiles[d] != 0;
  if (slot) *slot = uneven ? (void *)s : NULL; /* value_tiles() does not touch the memo: the slot stays valid */
  return uneven;
}

void ru_visit_sharding_uneven_constraint(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_uneven_constraint(ru_ctx *ctx, const ir_op *op) {
  sc_arena *a = ctx->arena;
  if (!ru_annotated(ctx, op)) return; /* the others have no shardings */
  const md_op_info *info = md_model_op(ctx->model, op);
  const md_sharding *s = NULL;
  if (op->kind == SC_OP_SDY_SHARDING_CONSTRAINT && md_info_sharding(info)->nvalues) s = md_info_sharding(info)->values[0];
  else if (op->cc == SC_CC_SHARDING && md_info_gspmd(info)->nvalues) s = md_info_gspmd(info)->values[0];
  if (!s || op->nresults < 1) return;
  const md_manual_context *mc = md_model_manual(ctx->model, op);
  if (mc->manual_op || mc->nmanual_axes || mc->gspmd_manual) return; /* local shapes */
  if (!maybe_uneven(ctx, s, ru_result_type(op, 0))) return;
  md_shape sh;
  int64_t *tiles;
  if (!value_tiles(ctx, s, ru_result_type(op, 0), &sh, &tiles)) return;
  for (uint32_t d = 0; d < (uint32_t)sh.rank; d++) {
    int64_t size = sh.dims[d];
    if (size < 0 || tiles[d] <= 1 || size % tiles[d] == 0) continue;
    int64_t padded = (size + tiles[d] - 1) / tiles[d] * tiles[d];
    bool named = names_real_axes(ctx->model, s);
    const char *axes = named ? ar_printf(a, "axes %s (product %" PRId64 ")", dim_axes_str(a, s, d), tiles[d])
                             : ar_printf(a, "%" PRId64 " devices (sharding " SC_QUOTE_FMT ")", tiles[d], SC_QUOTE_ARG(s->text));
    sc_diag *dg = ru_emit(ctx, op,
                          "uneven sharding: dim %u of size %" PRId64 " is sharded over %s, which does not divide it: XLA "
                          "pads the dimension to %" PRId64 " (shards of %" PRId64 " with %" PRId64
                          " padding elements), and JAX may silently replicate the array along it instead",
                          d, size, axes, padded, padded / tiles[d], padded - size);
    ru_tensor_context(ctx, dg, s, ru_result_type(op, 0), "constrained value", (int32_t)d);
    const md_axis *ax = named ? divisor_axis(ctx->model, s, d, size) : NULL;
    if (named)
      ru_diag_fix(ctx, dg,
                  ax ? ar_printf(a, "Shard dimension %u over \"%.*s\" (size %" PRId64 " divides %" PRId64
                                          "), or pad it to a multiple of %" PRId64,
                                       d, SC_SPAN_ARG(ax->name), ax->size, size, tiles[d])
                     : ar_printf(a, "Pad dimension %u to a multiple of %" PRId64 ", or leave it unsharded", d,
                                       tiles[d]),
                  ar_printf(a, "jax.lax.with_sharding_constraint(x, NamedSharding(mesh, %s))",
                                  spec_with_dim(a, s, d, ax)));
    else
      ru_diag_fix(ctx, dg,
                  ar_printf(a, "Pad dimension %u to a multiple of %" PRId64 ", or shard it over a device count "
                                     "that divides %" PRId64,
                                  d, tiles[d], size),
                  NULL);
    break;
  }
}

/* ---- sharding-tile-assignment (GSPMD) ----------------------------------------------------------- */

/* The device count shardings are validated against: the target mesh, else an explicit
 * num_partitions (1 included: a multi-device sharding in a 1-partition module names devices that do
 * not exist); 0 = unknown (attribute absent). */
static int64_t gspmd_num_devices(const md_model *model) {
  if (model->target) return model->target->devices;
  if (model->num_partitions >= 1) return model->num_partitions;
  return 0;
}

/* The attribute a GSPMD sharding is written in (`mhlo.sharding`, HLO `sharding`), or NULL. */
static const ir_attr *gspmd_attr(const ir_attrs *attrs) {
  const ir_attr *at = ir_attrs_find(attrs, "mhlo.sharding");
  return at ? at : ir_attrs_find(attrs, "sharding");
}

static void validate_gspmd(ru_ctx *ctx, const ir_op *at_op, const md_sharding *s, const md_shape *shape,
                           const char *what, const ir_attr *written) {
  if (!s) return;
  const char *e = md_gspmd_validate(ctx->arena, s, shape, gspmd_num_devices(ctx->model), true);
  if (!e) return;
  s = md_sharding_occurrence(ctx->arena, ctx->model, at_op, s);
  sc_diag *d = ru_emit(ctx, at_op, "%s%sinvalid sharding " SC_QUOTE_FMT ": %s", what ? what : "", what ? " - " : "",
                       SC_QUOTE_ARG(s->text), e);
  if (!ru_diag_span_text(ctx, d, s->text) && written && written->end > written->offset)
    ru_diag_span(ctx, d, written->offset, written->end);
  int64_t n = gspmd_num_devices(ctx->model);
  if (n > 0) ru_diag_context(ctx, d, "num_devices", ar_printf(ctx->arena, "%" PRId64, n));
  /* Valid for the device count the module was lowered for: only the retargeting (SC0107) is wrong. */
  int64_t lowered = 0;
  (void)ru_module_mesh_str(ctx, &lowered);
  if (ctx->model->target && lowered > 1 && lowered != n && !md_gspmd_validate(ctx->arena, s, shape, lowered, true))
    ru_diag_caused_by(ctx, d, "SC0107", SC_SITE_ANY);
  sc_fix *f = ru_diag_fix(ctx, d, "Use a tile assignment that names each of the module's devices exactly once and tiles each dimension",
                          NULL);
  if (n > 0)
    f->note = ar_printf(ctx->arena, "For example {devices=[%" PRId64 ",1]<=[%" PRId64 "]} shards dimension 0 of a "
                                          "rank-2 value over all %" PRId64 " devices; JAX writes it for NamedSharding(mesh, P('x', None))",
                              n, n, n);
}

static md_shape results_shape(sc_arena *a, const ir_op *op) {
  md_shape sh;
  memset(&sh, 0, sizeof sh);
  if (op->nresults == 1) {
    if (!md_parse_shape(a, ru_result_type(op, 0), &sh)) sh.kind = SC_SHAPE_OTHER;
    return sh;
  }
  sh.kind = SC_SHAPE_TUPLE;
  sh.nelems = op->nresults;
  sh.elems = ar_calloc(a, op->nresults ? op->nresults : 1, sizeof *sh.elems);
  for (uint32_t i = 0; i < op->nresults; i++)
    if (!md_parse_shape(a, ru_result_type(op, i), &sh.elems[i])) sh.elems[i].kind = SC_SHAPE_OTHER;
  return sh;
}

void ru_visit_sharding_tile_assignment(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_tile_assignment(ru_ctx *ctx, const ir_op *op) {
  if (!ru_annotated(ctx, op)) return; /* the others have no shardings */
  const md_op_info *info = md_model_op(ctx->model, op);
  if (!info) return;
  if (ru_is_func(op)) {
    for (uint32_t i = 0; i < md_info_func(info)->nargs; i++) {
      if (!md_info_func(info)->args[i].gspmd.nvalues) continue;
      md_shape sh;
      if (!md_parse_shape(ctx->arena, ru_arg_type(op, i), &sh)) sh.kind = SC_SHAPE_OTHER;
      const ir_block *body = ru_body(op);
      validate_gspmd(ctx, op, md_info_func(info)->args[i].gspmd.values[0], &sh, ar_printf(ctx->arena, "arg %u", i),
                     body && i < body->nargs ? gspmd_attr(ir_value_attrs(body->args[i])) : NULL);
    }
    for (uint32_t i = 0; i < md_info_func(info)->nresults; i++) {
      if (!md_info_func(info)->results[i].gspmd.nvalues) continue;
      md_shape sh;
      if (!md_parse_shape(ctx->arena, ru_func_result_type(op, i), &sh)) sh.kind = SC_SHAPE_OTHER;
      validate_gspmd(ctx, op, md_info_func(info)->results[i].gspmd.values[0], &sh, ar_printf(ctx->arena, "result %u", i),
                     i < ir_op_nresult_attrs(op) ? gspmd_attr(&ir_op_result_attrs(op)[i]) : NULL);
    }
    return;
  }
  if (!md_info_gspmd(info)->nvalues) return;
  md_shape sh = results_shape(ctx->arena, op);
  if (sh.kind == SC_SHAPE_OTHER && op->nresults == 1 && !ru_result_type(op, 0).n) return; /* unknown type */
  validate_gspmd(ctx, op, md_info_gspmd(info)->values[0], &sh, NULL, gspmd_attr(ir_op_attrs(op)));
}

/* ---- sharding-unreduced (sharding_constraint / reshard transitions) ----------------------------- */

static const char *red_name(md_reduction r) { return r == SC_REDUCE_MAX ? "max" : r == SC_REDUCE_MIN ? "min" : "sum"; }

static bool has_axis(const md_axis_ref *list, uint32_t n, const md_axis_ref *r, const md_mesh *mesh) {
  for (uint32_t i = 0; i < n; i++)
    if (ru_axis_eq(&list[i], r, mesh)) return true;
  return false;
}

void ru_visit_sharding_unreduced(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_unreduced(ru_ctx *ctx, const ir_op *op) {
  if (!ru_annotated(ctx, op)) return; /* the others have no shardings */
  bool reshard = op->kind == SC_OP_SDY_RESHARD;
  if (!reshard && op->kind != SC_OP_SDY_SHARDING_CONSTRAINT) return;
  const md_sharding *out = md_model_result_sharding(ctx->model, op, 0);
  if (!out || op->noperands < 1) return;
  const md_sharding *in = md_model_value_sharding(ctx->model, op->operands[0]);
  const md_mesh *mesh = md_model_sharding_mesh(ctx->model, out);
  uint32_t nin = in ? in->nunreduced : 0;
  md_reduction in_op = in ? in->unreduced_op : SC_REDUCE_SUM;
  bool kept = false, added = false;
  for (uint32_t i = 0; i < out->nunreduced; i++) {
    if (in && has_axis(in->unreduced, nin, &out->unreduced[i], mesh)) kept = true;
    else added = true;
  }
  const char *opn = reshard ? "sdy.reshard" : "sdy.sharding_constraint";
  if (kept && in_op != out->unreduced_op) {
    ru_emit(ctx, op, "'%s' op cannot change the reduction operator of kept unreduced axes from %s to %s.", opn,
            red_name(in_op), red_name(out->unreduced_op));
  } else if (added && out->unreduced_op != SC_REDUCE_SUM) {
    ru_emit(ctx, op, "'%s' op cannot introduce '%s' unreduced axes. Expected 'sum'.", opn, red_name(out->unreduced_op));
  }
}

/* ---- sharding-rule / sharding-propagation-edges ------------------------------------------------- */

/* The attribute named by the literal `lit` (its length known at compile time), or NULL. */
static const ir_attr *attr_named(const ir_op *op, const char *lit, size_t n) {
  for (uint32_t i = 0; i < ir_op_attrs(op)->n; i++)
    if (ir_op_attrs(op)->v[i].name.n == n && !memcmp(ir_op_attrs(op)->v[i].name.p, lit, n)) return &ir_op_attrs(op)->v[i];
  return NULL;
}
#define ATTR_NAMED(op, lit) attr_named((op), (lit), sizeof(lit) - 1)

void ru_visit_sharding_rule(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_rule(ru_ctx *ctx, const ir_op *op) {
  if (!ir_op_attrs(op)->n) return;
  const ir_attr *at = ATTR_NAMED(op, "sdy.sharding_rule");
  if (!at) return;
  const char *e = ru_sdy_rule_check(ctx->arena, op, at->value);
  if (e) {
    sc_diag *d = ru_emit(ctx, op, "%s", e);
    sc_fix *f = ru_diag_fix(ctx, d, "Write the rule as #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>", NULL);
    f->note = "Factors i, j, k, ... in order, one per tensor dimension, and their sizes in {i=.., j=..} in the same "
              "order; from JAX, custom_partitioning's sharding_rule='i j -> i j' writes it";
  }
}

void ru_visit_sharding_propagation_edges(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_propagation_edges(ru_ctx *ctx, const ir_op *op) {
  if (!ir_op_attrs(op)->n) return;
  bool any = false; /* the three names end alike: one pass finds whether any is there */
  for (uint32_t i = 0; i < ir_op_attrs(op)->n && !any; i++) {
    ir_span n = ir_op_attrs(op)->v[i].name;
    any = n.n >= 21 && !memcmp(n.p + n.n - 17, "propagation_edges", 17);
  }
  if (!any) return;
  static const char *const names[] = {"sdy.propagation_edges", "sdy.result_propagation_edges",
                                      "sdy.block_arg_propagation_edges"};
  for (int i = 0; i < 3; i++) {
    const ir_attr *at = ir_op_attr(op, names[i]);
    if (!at) continue;
    const char *e = ru_sdy_edges_check(ctx->arena, ctx->model, op, at->value, i != 0);
    if (e) ru_emit(ctx, op, "%s", e);
  }
}

/* ---- sharding-sdy-op ---------------------------------------------------------------------------- */

static bool static_shape(sc_arena *a, ir_span type) {
  md_shape sh;
  if (!md_parse_shape(a, type, &sh)) return true;
  if (sh.kind == SC_SHAPE_UNRANKED) return false;
  if (sh.kind != SC_SHAPE_ARRAY) return true;
  for (int32_t i = 0; i < sh.rank; i++)
    if (sh.dims[i] < 0) return false;
  return true;
}

static bool is_sdy_op(const ir_op *op) { return op && ir_op_kind_is_sdy(op->kind); }
/* Shardy's ops with the ShardableDataFlowOpInterface (ops.td): their results may feed a data-flow edge. */
static bool is_sdy_data_flow_op(const ir_op *op) {
  return op->kind == SC_OP_SDY_NAMED_COMPUTATION || op->kind == SC_OP_SDY_MANUAL_COMPUTATION;
}

void ru_visit_sharding_sdy_op(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_sdy_op(ru_ctx *ctx, const ir_op *op) {
  sc_arena *a = ctx->arena;
  unsigned n = op->kind;
  if (n == SC_OP_SDY_CONSTANT) {
    if (!static_shape(a, ru_result_type(op, 0)))
      ru_emit(ctx, op, "elements literal type must have static shape (sdy.constant of type %.*s)",
              SC_SPAN_ARG(ru_result_type(op, 0)));
  } else if (n == SC_OP_SDY_PROPAGATION_BARRIER) {
    const md_sdy_item *it = md_model_sdy_item(ctx->model, op, "allowed_direction");
    const ir_attr *at = ir_op_attr(op, "allowed_direction");
    ir_span v = it ? it->value : at ? at->value : ir_span_of("", 0);
    if (ir_span_eq(ir_span_trim(v), "BOTH") || ir_span_eq(ir_span_trim(v), "#sdy<propagation_direction BOTH>"))
      ru_emit(ctx, op, "cannot specify `BOTH` as the direction. Not blocking propagation direction makes the op redundant.");
  } else if (n == SC_OP_SDY_DATA_FLOW_EDGE) {
    const ir_value *in = op->noperands ? op->operands[0] : NULL;
    if (!static_shape(a, ru_result_type(op, 0)))
      ru_emit(ctx, op, "expected sdy.data_flow_edge to have a static-shaped result. type: %.*s",
              SC_SPAN_ARG(ru_result_type(op, 0)));
    else if (in && ru_value_uses(ctx, in) > 1)
      ru_emit(ctx, op, "expected input of sdy.data_flow_edge to have a single user");
    else if (in && ir_value_def(in) && is_sdy_op(ir_value_def(in)) && !is_sdy_data_flow_op(ir_value_def(in)))
      ru_emit(ctx, op,
              "expected input of sdy.data_flow_edge to not be defined by an SdyDialect op (other than an "
              "sdy.named_computation): it is defined by %.*s, which has no data-flow interface",
              SC_SPAN_ARG(ir_op_name(ir_value_def(in))));
  } else if (n == SC_OP_SDY_FUNC_DATA_FLOW_EDGE) {
    const ir_value *in = op->noperands ? op->operands[0] : NULL;
    if (!static_shape(a, ru_result_type(op, 0)))
      ru_emit(ctx, op, "expected sdy.func_data_flow_edge to have a static-shaped result. type: %.*s",
              SC_SPAN_ARG(ru_result_type(op, 0)));
    else if (in && ru_value_uses(ctx, in) > 1)
      ru_emit(ctx, op, "expected operand of sdy.func_data_flow_edge to have a single user");
    else if (in && !ir_value_def(in)) {
      const ir_op *owner = ir_value_block(in) && ir_value_block(in)->parent ? ir_value_block(in)->parent->parent : NULL;
      if (!owner || !ru_is_func(owner))
        ru_emit(ctx, op, "expected operand of sdy.func_data_flow_edge to be a block argument of a func op.");
    } else if (in && ir_value_def(in) && ir_value_def(in)->kind != SC_OP_CALL) {
      ru_emit(ctx, op, "expected operand of sdy.func_data_flow_edge to be a result of call op.");
    }
  } else if (n == SC_OP_SDY_NAMED_COMPUTATION) {
    const ir_block *b = ru_body(op);
    if (b && b->nargs != op->noperands) {
      ru_emit(ctx, op, "number of block arguments must match the number of operands: %u != %u", b->nargs,
              op->noperands);
      return;
    }
    bool bad = false;
    for (uint32_t i = 0; b && i < b->nargs && !bad; i++) {
      ir_span at = ir_span_trim(ir_value_type(b->args[i])), ot = ir_span_trim(ru_operand_type(op, i));
      if (at.n && ot.n && !ir_span_same(at, ot)) {
        ru_emit(ctx, op,
                "expected the type of the %u'th block argument to match the type of the corresponding operand: "
                "'%.*s' vs '%.*s'",
                i, SC_SPAN_ARG(at), SC_SPAN_ARG(ot));
        bad = true;
      }
    }
    const ir_op *ret = ru_terminator(op);
    if (!bad && ret && ret->kind == SC_OP_SDY_RETURN && ret->noperands != op->nresults) {
      /* the results are inferred from the sdy.return (InferTypeOpInterface) */
      ru_emit(ctx, op,
              "failed to infer returned types: the sdy.return returns %u value%s but the sdy.named_computation has "
              "%u result%s",
              ret->noperands, ret->noperands == 1 ? "" : "s", op->nresults, op->nresults == 1 ? "" : "s");
    } else if (!bad && ret && ret->kind == SC_OP_SDY_RETURN) {
      for (uint32_t i = 0; i < op->nresults; i++) {
        ir_span rt = ir_span_trim(ru_result_type(op, i)), it = ir_span_trim(ru_operand_type(ret, i));
        if (rt.n && it.n && !ir_span_same(rt, it)) {
          ru_emit(ctx, op,
                  "failed to infer returned types: inferred type(s) '%.*s' are incompatible with return type(s) of "
                  "operation '%.*s'",
                  SC_SPAN_ARG(it), SC_SPAN_ARG(rt));
          break;
        }
      }
    }
  }
}

/* ---- sharding-control-flow (HLO while / conditional) -------------------------------------------- */

static bool shardings_equal(const md_sharding *x, const md_sharding *y) {
  if (x == y) return true;
  if (!x || !y) return false;
  if (x->kind != y->kind) {
    /* a mapped GSPMD sharding is still the same tile assignment */
    bool tiled_x = x->kind == SC_SHARDING_TILED || (x->kind == SC_SHARDING_NAMED && x->tiles->tile_dims);
    bool tiled_y = y->kind == SC_SHARDING_TILED || (y->kind == SC_SHARDING_NAMED && y->tiles->tile_dims);
    if (!(tiled_x && tiled_y)) return false;
  }
  switch (x->kind) {
  case SC_SHARDING_MAXIMAL: return x->maximal_device == y->maximal_device;
  case SC_SHARDING_TUPLE:
    if (x->nelements != y->nelements) return false;
    for (uint32_t i = 0; i < x->nelements; i++)
      if (!shardings_equal(x->elements[i], y->elements[i])) return false;
    return true;
  case SC_SHARDING_REPLICATED:
  case SC_SHARDING_MANUAL:
  case SC_SHARDING_UNKNOWN:
  case SC_SHARDING_UNREDUCED: return true;
  default: break;
  }
  if (x->tiles->tile_dims && y->tiles->tile_dims) {
    if (x->tiles->ntile_dims != y->tiles->ntile_dims || x->tiles->ntile_devices != y->tiles->ntile_devices || x->tiles->nlast_tile_dims != y->tiles->nlast_tile_dims)
      return false;
    for (uint32_t i = 0; i < x->tiles->ntile_dims; i++)
      if (x->tiles->tile_dims[i] != y->tiles->tile_dims[i]) return false;
    for (uint64_t i = 0; i < x->tiles->ntile_devices; i++)
      if (x->tiles->tile_devices[i] != y->tiles->tile_devices[i]) return false;
    for (uint32_t i = 0; i < x->tiles->nlast_tile_dims; i++)
      if (x->tiles->last_tile_dims[i] != y->tiles->last_tile_dims[i]) return false;
    return true;
  }
  ir_span a = ir_span_trim(x->text), b = ir_span_trim(y->text);
  return ir_span_same(a, b);
}

static const ir_op *computation(const md_model *model, ir_span name) {
  name = ir_span_trim(name);
  if (name.n && (name.p[0] == '%' || name.p[0] == '@')) name = ir_span_of(name.p + 1, name.n - 1);
  return md_model_func(model, name);
}

static const ir_op *root_of(const ir_op *comp) {
  const ir_block *b = ru_body(comp);
  if (!b) return NULL;
  for (uint32_t i = 0; i < b->nops; i++)
    if (ir_op_attr(b->ops[i], "ROOT")) return b->ops[i];
  return b->nops ? b->ops[b->nops - 1] : NULL;
}

static const ir_op *param0_of(const ir_op *comp) {
  const ir_block *b = ru_body(comp);
  if (!b || !b->nargs || !ir_value_def(b->args[0])) return NULL;
  return ir_value_def(b->args[0]);
}

typedef struct {
  const ir_op *op;
  const char *role;
} cf_member;

static void check_consistent(ru_ctx *ctx, const ir_op *parent, const char *what, const cf_member *mem, uint32_t n) {
  const md_op_info *common_info = NULL;
  const cf_member *common = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (!mem[i].op) continue;
    const md_op_info *info = md_model_op(ctx->model, mem[i].op);
    if (!info || !md_info_gspmd(info)->nvalues) continue;
    if (!common) {
      common = &mem[i];
      common_info = info;
      continue;
    }
    if (shardings_equal(md_info_gspmd(common_info)->values[0], md_info_gspmd(info)->values[0])) continue;
    sc_diag *d = ru_emit(ctx, parent,
                         "Inconsistent %s sharding among instructions: %.*s (%s) has sharding=%.*s but %.*s (%s) has "
                         "sharding=%.*s",
                         what, SC_SPAN_ARG(ir_op_sym_name(common->op)), common->role, SC_SPAN_ARG(md_info_gspmd(common_info)->values[0]->text),
                         SC_SPAN_ARG(ir_op_sym_name(mem[i].op)), mem[i].role, SC_SPAN_ARG(md_info_gspmd(info)->values[0]->text));
    ru_diag_fix(ctx, d,
                ar_printf(ctx->arena, "Give the %s, its computations' parameters and roots the same sharding", what),
                NULL);
    return;
  }
}

void ru_visit_sharding_control_flow(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_control_flow(ru_ctx *ctx, const ir_op *op) {
  if (ctx->module->format != SC_FMT_HLO) return;
  if (op->kind == SC_OP_HLO_WHILE) {
    const ir_attr *body = ir_op_attr(op, "body"), *cond = ir_op_attr(op, "condition");
    const ir_op *b = body ? computation(ctx->model, body->value) : NULL, *c = cond ? computation(ctx->model, cond->value) : NULL;
    cf_member mem[4] = {{op, "the while"},
                        {b ? root_of(b) : NULL, "body root"},
                        {b ? param0_of(b) : NULL, "body parameter"},
                        {c ? param0_of(c) : NULL, "condition parameter"}};
    check_consistent(ctx, op, "while", mem, 4);
  } else if (op->kind == SC_OP_HLO_CONDITIONAL) {
    cf_member mem[17];
    uint32_t n = 0;
    mem[n++] = (cf_member){op, "the conditional"};
    static const char *const keys[] = {"true_computation", "false_computation"};
    for (int i = 0; i < 2; i++) {
      const ir_attr *at = ir_op_attr(op, keys[i]);
      const ir_op *comp = at ? computation(ctx->model, at->value) : NULL;
      if (comp) mem[n++] = (cf_member){root_of(comp), "branch root"};
    }
    const ir_attr *br = ir_op_attr(op, "branch_computations");
    if (br) {
      ir_span v = ir_span_trim(br->value);
      const char *p = v.p, *e = v.p + v.n;
      while (p < e && n < 17) {
        while (p < e && (*p == '{' || *p == '}' || *p == ',' || *p == ' ')) p++;
        const char *q = p;
        while (q < e && *q != ',' && *q != '}' && *q != ' ') q++;
        if (q > p) {
          const ir_op *comp = computation(ctx->model, ir_span_of(p, (uint32_t)(q - p)));
          if (comp) mem[n++] = (cf_member){root_of(comp), "branch root"};
        }
        p = q;
      }
    }
    check_consistent(ctx, op, "conditional", mem, n);
  }
}

/* ---- sharding-channel-device: maximal shardings in a while loop with a channel instruction ------ */

static int64_t maximal_device_of(const md_sharding *s) {
  if (!s) return -1;
  if (s->kind == SC_SHARDING_MAXIMAL) return s->maximal_device;
  if (s->kind == SC_SHARDING_TUPLE && s->nelements) {
    int64_t d = maximal_device_of(s->elements[0]);
    for (uint32_t i = 1; i < s->nelements; i++)
      if (maximal_device_of(s->elements[i]) != d) return -1;
    return d;
  }
  return -1;
}

static bool is_channel(const ir_op *op) {
  return op->kind == SC_OP_SEND || op->kind == SC_OP_RECV;
}

void ru_visit_sharding_channel_device(ru_ctx *ctx, const ir_op *w);
void ru_visit_sharding_channel_device(ru_ctx *ctx, const ir_op *w) {
  const ir_block *body = NULL;
  if (w->kind == SC_OP_HLO_WHILE) {
    const ir_attr *b = ir_op_attr(w, "body");
    const ir_op *comp = b ? computation(ctx->model, b->value) : NULL;
    body = comp ? ru_body(comp) : NULL;
  } else if (w->kind == SC_OP_WHILE && w->nregions == 2 && ir_op_regions(w)[1]->nblocks) {
    body = ir_op_regions(w)[1]->blocks[0];
  }
  if (!body) return;
  const ir_op *chan = NULL;
  int64_t dev = -1;
  for (uint32_t i = 0; i < body->nops && !chan; i++) {
    const ir_op *o = body->ops[i];
    if (!is_channel(o)) continue;
    int64_t d = maximal_device_of(md_model_result_sharding(ctx->model, o, 0));
    if (o->nresults > 1 || d < 0) {
      const md_op_info *info = md_model_op(ctx->model, o);
      if (info && md_info_gspmd(info)->nvalues) d = maximal_device_of(md_info_gspmd(info)->values[0]);
      else if (info && md_info_sdy(info)->nvalues) d = maximal_device_of(md_info_sdy(info)->values[0]);
    }
    if (d >= 0) {
      chan = o;
      dev = d;
    }
  }
  if (!chan) return;
  const ir_op *cands[1 + 4096];
  uint32_t n = 0;
  cands[n++] = w;
  for (uint32_t i = 0; i < body->nops && n < 4097; i++)
    if (body->ops[i] != chan) cands[n++] = body->ops[i];
  for (uint32_t i = 0; i < n; i++) {
    const md_op_info *info = md_model_op(ctx->model, cands[i]);
    if (!info) continue;
    const md_sharding *s = md_info_gspmd(info)->nvalues ? md_info_gspmd(info)->values[0] : md_info_sdy(info)->nvalues ? md_info_sdy(info)->values[0] : NULL;
    int64_t d = maximal_device_of(s);
    if (d < 0 || d == dev) continue;
    sc_diag *dg = ru_emit(ctx, cands[i],
                          "Instruction: %.*s is on device: %" PRId64 ", which conflicts with device: %" PRId64
                          " of channel instruction: %.*s (a while loop whose body sends or receives on one device runs "
                          "there)",
                          SC_SPAN_ARG(ir_op_sym_name(cands[i]).n ? ir_op_sym_name(cands[i]) : ir_op_name(cands[i])), d, dev,
                          SC_SPAN_ARG(ir_op_sym_name(chan).n ? ir_op_sym_name(chan) : ir_op_name(chan)));
    ru_diag_fix(ctx, dg, ar_printf(ctx->arena, "Place the loop's single-device work on device %" PRId64, dev), NULL);
    break;
  }
}

/* ---- sharding-custom-partitioning ----------------------------------------------------------------- */

/* jax.experimental.custom_partitioning lowers to a `CustomSPMDPartitioning` custom call whose
 * backend_config is the id() of a Python object: XLA calls back into the JAX process that lowered the
 * module to partition it (spmd-errors J1). */
void ru_visit_sharding_custom_partitioning(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_custom_partitioning(ru_ctx *ctx, const ir_op *op) {
  if (!ir_span_eq(ir_op_custom_call_target(op), "CustomSPMDPartitioning")) return;
  bool shardy = ctx->model && ctx->model->nmeshes > 0;
  bool rule = ir_op_attr(op, "sdy.sharding_rule") != NULL;
  sc_diag *d = ru_emit(ctx, op,
                       "%sCustomSPMDPartitioning (jax.experimental.custom_partitioning) can only be partitioned inside "
                       "the JAX process that lowered this module: its backend_config is a key into that process's "
                       "Python callbacks, so compiling the serialized module elsewhere fails%s",
                       shardy && !rule ? "Shardy is used, but sharding propagation callbacks instead of sharding_rule "
                                         "are provided. Need to provide sharding_rule to migrate to Shardy. "
                                       : "",
                       shardy && !rule ? "" : ".");
  if (shardy && !rule) d->message = ar_printf(ctx->arena, "%s (and this op has no sdy.sharding_rule).", d->message);
  sc_fix *f = ru_diag_fix(ctx, d, "Write the op with jax.shard_map (or plain jnp) so the module carries its partitioning", NULL);
  f->note = "custom_partitioning modules are for in-process jit only; for jax.export or a remote compile, express "
            "the per-shard computation with jax.shard_map";
}

/* ---- sharding-op-attributes (GSPMD @Sharding / @SPMDFullToShardShape / @SPMDShardToFullShape) ---- */

void ru_visit_sharding_op_attributes(ru_ctx *ctx, const ir_op *op);
void ru_visit_sharding_op_attributes(ru_ctx *ctx, const ir_op *op) {
  ir_span t = ir_op_custom_call_target(op);
  bool sharding = ir_span_eq(t, "Sharding");
  if (!sharding && !ir_span_eq(t, "SPMDFullToShardShape") && !ir_span_eq(t, "SPMDShardToFullShape")) return;
  if (sharding && !ru_sharding_attr(op) && !ru_frontend_attr(op, "xla.sdy.sharding").n) {
    sc_diag *d = ru_emit(ctx, op,
                         "Sharding instruction must have a sharding attribute: the @Sharding custom call (what "
                         "with_sharding_constraint lowers to under GSPMD) carries no mhlo.sharding, so XLA's sharding "
                         "propagation rejects the module");
    sc_fix *f = ru_diag_fix(ctx, d, "Give the @Sharding custom call the sharding it constrains to", NULL);
    f->note = "JAX writes it for jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P(...))), e.g. "
              "mhlo.sharding = \"{devices=[4,1]<=[4]}\"";
    return;
  }
  uint32_t *dims, ndims;
  ar_mark_t mark = ar_mark(ctx->arena);
  bool valid = md_sharding_op_unspecified_dims(ctx->arena, op, &dims, &ndims); /* XLA's ParseAttributes */
  ar_rewind(ctx->arena, mark);
  if (valid) return;
  const ir_attr *bc = ir_op_attr(op, "mhlo.backend_config");
  if (!bc) bc = ir_op_attr(op, "backend_config");
  sc_diag *d = ru_emit(ctx, op,
                       "Cannot parse sharding op attributes: %.*s (the backend_config of @%.*s may only be empty or "
                       "unspecified_dims=[i,j,...])",
                       SC_SPAN_ARG(bc->value), SC_SPAN_ARG(t));
  if (bc->end > bc->offset) ru_diag_span(ctx, d, bc->offset, bc->end);
  sc_fix *f = ru_diag_fix(ctx, d, "Drop the backend_config, or list the unspecified dimensions as unspecified_dims=[1]", NULL);
  ru_fix_edit(ctx, f, bc->offset, bc->end - bc->offset,
              ar_printf(ctx->arena, "%.*s = \"\"", SC_SPAN_ARG(bc->name)));
}
