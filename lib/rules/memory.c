/* memory.c — the memory family (SC08xx): the entry function's per-device bytes (lib/cost) against the
 * device's memory (SC0801), parameters left fully replicated (SC0802), donated arguments whose aliased
 * output differs per device (SC0803), padding of uneven shards (SC0804). They read the shardings in
 * effect: written ones, or propagated ones with --propagate (docs/cost.md#when-the-rules-run). */
#include <inttypes.h>
#include <string.h>

#include "cost/cost.h"
#include "rules/fixes.h"
#include "rules/rules.h"

static const cost_analysis *cost_of(const ru_ctx *ctx) { return ctx->cost && ctx->cost->entry ? ctx->cost : NULL; }

/* The mesh whose axes a fix can name: named axes, more than one device. */
static const md_mesh *named_mesh(const cost_analysis *c) {
  const md_mesh *m = c->mesh;
  return m && !m->synthesized && !m->maximal && m->naxes && m->devices > 1 ? m : NULL;
}

/* The sharding in effect as named axes per dimension (derived or written), or NULL. */
static const md_sharding *named_sharding(sc_arena *a, const cost_tensor_info *t) {
  if (t->derived) return prop_sharding_to_model(a, t->derived);
  return t->written && t->written->kind == SC_SHARDING_NAMED && t->written->dims ? t->written : NULL;
}

static bool sharding_uses(const md_sharding *s, ir_span axis) {
  for (uint32_t d = 0; s && d < s->rank; d++)
    for (uint32_t k = 0; k < s->dims[d].naxes; k++)
      if (s->dims[d].axes[k].name.n == axis.n && !memcmp(s->dims[d].axes[k].name.p, axis.p, axis.n))
        return true;
  return false;
}

static void put_dim(ar_str *b, const md_sharding *s, uint32_t d, const md_axis *extra) {
  uint32_t n = (s && d < s->rank ? s->dims[d].naxes : 0) + (extra != NULL);
  if (n == 0) {
    ar_str_puts(b, "None");
    return;
  }
  if (n > 1) ar_str_puts(b, "(");
  uint32_t k = 0;
  for (; s && d < s->rank && k < s->dims[d].naxes; k++)
    ar_str_printf(b, "%s'" SC_SPAN_FMT "'", k ? ", " : "", SC_SPAN_ARG(s->dims[d].axes[k].name));
  if (extra) ar_str_printf(b, "%s'" SC_SPAN_FMT "'", k ? ", " : "", SC_SPAN_ARG(extra->name));
  if (n > 1) ar_str_puts(b, ")");
}

/* `t`'s sharding with one more axis of `mesh`: the largest unused axis (size > 1, not manual) on the
 * largest dimension whose shard it divides evenly. The spec and the bytes per device it leaves, or NULL. */
static const char *sharper_spec(sc_arena *a, const md_mesh *mesh, const cost_tensor_info *t, int64_t *bytes) {
  if (!t->known || (t->written && !t->derived && t->written->kind != SC_SHARDING_NAMED &&
                    t->written->kind != SC_SHARDING_REPLICATED))
    return NULL;
  const md_sharding *s = named_sharding(a, t);
  const md_axis *best = NULL;
  uint32_t best_dim = 0;
  uint32_t naxes = mesh->naxes < 64 ? mesh->naxes : 64; /* bounded on hostile meshes */
  for (uint32_t i = 0; i < naxes; i++) {
    const md_axis *ax = &mesh->axes[i];
    if (ax->size < 2 || ax->type == SC_AXIS_MANUAL || sharding_uses(s, ax->name)) continue;
    if (best && ax->size <= best->size) continue;
    for (uint32_t d = 0; d < t->rank; d++)
      if (t->dims[d] % cost_mul_sat(t->shards_per_dim[d], ax->size) == 0 &&
          (best != ax || t->dims[d] > t->dims[best_dim])) {
        best = ax;
        best_dim = d;
      }
  }
  if (!best) return NULL;
  int64_t elements = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    elements = cost_mul_sat(elements, d == best_dim ? t->local_dims[d] / best->size : t->local_dims[d]);
  *bytes = cost_bytes(elements, t->bits);
  ar_str b = SC_ASTR_INIT(a);
  ar_str_puts(&b, "P(");
  for (uint32_t d = 0; d < t->rank; d++) {
    if (d) ar_str_puts(&b, ", ");
    put_dim(&b, s, d, d == best_dim ? best : NULL);
  }
  ar_str_puts(&b, ")");
  return ar_str_str(&b);
}

static const char *tensor_label(sc_arena *a, const cost_tensor_info *t) {
  if (t->value && ir_value_def(t->value) && !t->is_result && ir_value_block(t->value) == NULL)
    return ar_printf(a, "%.*s", SC_SPAN_ARG(t->value->name)); /* an op's result */
  const char *kind = t->is_result ? "result" : "arg";
  return t->leaf < 0 ? md_indexed_name(a, kind, t->index) : ar_printf(a, "%s %u[%d]", kind, t->index, t->leaf);
}

/* `arg0 = jax.device_put(arg0, NamedSharding(mesh, P(None, 'model')))` per tensor that can be sharded
 * further (arguments only: results take out_shardings), after the mesh. NULL if none can. */
static const char *device_put_snippet(ru_ctx *ctx, const md_mesh *mesh, const cost_tensor_info *const *ts, size_t n) {
  ar_str b = SC_ASTR_INIT(ctx->arena);
  ar_str_printf(&b, "mesh = %s\n", ru_py_make_mesh(ctx->arena, mesh));
  size_t lines = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t bytes = 0;
    const char *spec = ts[i]->is_result ? NULL : sharper_spec(ctx->arena, mesh, ts[i], &bytes);
    if (!spec) continue;
    ar_str_printf(&b, "arg%u = jax.device_put(arg%u, NamedSharding(mesh, %s))  # %s: %s -> %s per device\n", ts[i]->index,
                   ts[i]->index, spec, tensor_label(ctx->arena, ts[i]), cost_bytes_str(ctx->arena, ts[i]->bytes_per_device),
                   cost_bytes_str(ctx->arena, bytes));
    lines++;
  }
  return lines ? ar_str_str(&b) : NULL;
}

/* Moves the `k` largest per device to the front of ts[0..n), largest first (ties keep their order):
 * O(k n), never quadratic in the arguments. */
static void largest_first(const cost_tensor_info **ts, size_t n, size_t k) {
  for (size_t i = 0; i < k && i < n; i++) {
    size_t best = i;
    for (size_t j = i + 1; j < n; j++)
      if (ts[j]->bytes_per_device > ts[best]->bytes_per_device) best = j;
    const cost_tensor_info *x = ts[best];
    memmove(&ts[i + 1], &ts[i], (best - i) * sizeof *ts);
    ts[i] = x;
  }
}

static const char *fn_name(ru_ctx *ctx, const cost_analysis *c) {
  ir_span n = ir_op_sym_name(c->entry);
  return n.n ? ar_printf(ctx->arena, "@" SC_SPAN_FMT, SC_SPAN_ARG(n)) : "the entry function";
}

/* SC0801: the peak lower bound (at least the arguments, or the arguments and results) over the device. */
void ru_check_memory_over_device(ru_ctx *ctx);
void ru_check_memory_over_device(ru_ctx *ctx) {
  const cost_analysis *c = cost_of(ctx);
  if (!c || c->report.device_memory_bytes <= 0 || c->report.peak_bytes_lower_bound <= c->report.device_memory_bytes)
    return;
  sc_arena *a = ctx->arena;
  const sc_cost_report *r = &c->report;
  const char *dev = r->device_kind ? ar_printf(a, "one %s device", r->device_kind) : "one device (--device-memory)";
  sc_diag *d = ru_emit(ctx, c->entry,
                       "Ran out of memory in memory space hbm: %s needs at least %s per device (arguments %s, results %s, "
                       "%s of them donated) but %s has %s. The largest per device: %s %s (%s).",
                       fn_name(ctx, c), cost_bytes_str(a, r->peak_bytes_lower_bound), cost_bytes_str(a, r->arguments_bytes),
                       cost_bytes_str(a, r->results_bytes), cost_bytes_str(a, r->donated_bytes), dev,
                       cost_bytes_str(a, r->device_memory_bytes), r->nlargest ? r->largest[0].name : "-",
                       r->nlargest ? r->largest[0].type : "", r->nlargest ? cost_bytes_str(a, r->largest[0].bytes_per_device) : "");
  ru_diag_context(ctx, d, "peak_bytes_lower_bound", ar_printf(a, "%" PRId64, r->peak_bytes_lower_bound));
  ru_diag_context(ctx, d, "device_memory_bytes", ar_printf(a, "%" PRId64, r->device_memory_bytes));
  const md_mesh *mesh = named_mesh(c);
  if (!mesh) return;
  const cost_tensor_info **ts = ar_alloc(a, (c->nargs ? c->nargs : 1) * sizeof *ts);
  size_t n = 0;
  for (uint32_t i = 0; i < c->nargs; i++)
    if (c->args[i].known) ts[n++] = &c->args[i];
  largest_first(ts, n, 3); /* a few lines are enough to show the way */
  const char *snippet = device_put_snippet(ctx, mesh, ts, n < 3 ? n : 3);
  if (snippet) ru_diag_fix(ctx, d, "Shard the largest arguments over more mesh axes before the call", snippet);
}

static bool fully_replicated(const cost_tensor_info *t) {
  if (!t->known || t->shards != 1 || t->global_bytes == 0) return false;
  if (t->derived) return true;
  return t->written && (t->written->kind == SC_SHARDING_NAMED || t->written->kind == SC_SHARDING_REPLICATED);
}

/* SC0802: fully replicated arguments (an explicit sharding that shards nothing, on a mesh of > 1 device)
 * above the tolerance. Arguments without any sharding are left alone: the partitioner picks theirs. */
void ru_check_memory_replicated_parameters(ru_ctx *ctx);
void ru_check_memory_replicated_parameters(ru_ctx *ctx) {
  const cost_analysis *c = cost_of(ctx);
  const md_mesh *mesh = c ? named_mesh(c) : NULL;
  /* a module lowered for another device count: its shardings say nothing about the target (SC01xx say so) */
  if (!mesh || !c->report.arguments_bytes || ru_retargeted(ctx)) return;
  const sc_cost_thresholds *th = &ctx->options->thresholds;
  double tolerance = th->replicated_fraction > 0 ? th->replicated_fraction : 0.1;
  int64_t min_bytes = th->replicated_min_bytes > 0 ? th->replicated_min_bytes : INT64_C(64) << 20;
  sc_arena *a = ctx->arena;
  const cost_tensor_info **ts = ar_alloc(a, (c->nargs ? c->nargs : 1) * sizeof *ts);
  size_t n = 0;
  int64_t bytes = 0;
  for (uint32_t i = 0; i < c->nargs; i++)
    if (fully_replicated(&c->args[i])) {
      ts[n++] = &c->args[i];
      bytes = cost_add_sat(bytes, c->args[i].bytes_per_device);
    }
  double share = (double)bytes / (double)c->report.arguments_bytes;
  if (!n || bytes < min_bytes || share <= tolerance) return;
  largest_first(ts, n, SC_COST_LARGEST);
  size_t shown = n < SC_COST_LARGEST ? n : SC_COST_LARGEST;
  const char **items = ar_alloc(a, shown * sizeof *items);
  ar_str list = SC_ASTR_INIT(a);
  for (size_t i = 0; i < shown; i++) {
    int64_t after = 0;
    const char *spec = sharper_spec(a, mesh, ts[i], &after);
    items[i] = ar_printf(a, "%s %.*s %s%s%s", tensor_label(a, ts[i]), SC_SPAN_ARG(ts[i]->type),
                               cost_bytes_str(a, ts[i]->bytes_per_device), spec ? " -> " : "", spec ? spec : "");
    ar_str_printf(&list, "%s%s", i ? "; " : "", items[i]);
  }
  sc_diag *d = ru_emit_at(ctx, ts[0]->offset, c->entry,
                          "%zu parameter%s of %s %s fully replicated on all %" PRId64 " devices: %s per device, %.0f%% of the "
                          "arguments' %s (tolerance %.0f%%). Largest: %s%s.",
                          n, n == 1 ? "" : "s", fn_name(ctx, c), n == 1 ? "is" : "are", mesh->devices, cost_bytes_str(a, bytes),
                          share * 100, cost_bytes_str(a, c->report.arguments_bytes), tolerance * 100, ar_str_str(&list),
                          n > shown ? ar_printf(a, "; and %zu more", n - shown) : "");
  ru_diag_context_list(ctx, d, "replicated", items, shown);
  ru_diag_context(ctx, d, "replicated_bytes", ar_printf(a, "%" PRId64, bytes));
  const char *snippet = device_put_snippet(ctx, mesh, ts, shown);
  if (snippet) ru_diag_fix(ctx, d, "Shard the replicated parameters over the mesh's axes", snippet);
}

static bool same_spec(const char *x, const char *y) { return !x || !y || !strcmp(x, y); }

static const cost_tensor_info *aliased_result(const cost_analysis *c, int64_t out) {
  for (uint32_t i = 0; i < c->nresults; i++) {
    const cost_tensor_info *r = &c->results[i];
    if ((r->leaf < 0 && r->index == out) || r->leaf == out) return r;
  }
  return NULL;
}

static const char *local_shape(sc_arena *a, const cost_tensor_info *t) {
  ar_str b = SC_ASTR_INIT(a);
  for (uint32_t d = 0; d < t->rank && d < 32; d++) ar_str_printf(&b, "%s%" PRId64, d ? "x" : "", t->local_dims[d]);
  if (!t->rank) ar_str_puts(&b, "scalar");
  return ar_str_str(&b);
}

/* SC0803: tf.aliasing_output / input_output_alias pairs whose per-device shapes or shardings differ. */
void ru_check_memory_donation_mismatch(ru_ctx *ctx);
void ru_check_memory_donation_mismatch(ru_ctx *ctx) {
  const cost_analysis *c = cost_of(ctx);
  if (!c) return;
  sc_arena *a = ctx->arena;
  for (uint32_t i = 0; i < c->nargs; i++) {
    const cost_tensor_info *t = &c->args[i];
    const cost_tensor_info *r = t->alias_output >= 0 ? aliased_result(c, t->alias_output) : NULL;
    /* both need a sharding in effect: an unknown one is no evidence of a mismatch */
    if (!r || !t->known || !r->known || !(t->written || t->derived) || !(r->written || r->derived)) continue;
    bool same_shape = t->rank == r->rank && t->bits == r->bits;
    for (uint32_t d = 0; same_shape && d < t->rank; d++) same_shape = t->local_dims[d] == r->local_dims[d];
    if (same_shape && same_spec(t->spec, r->spec)) continue;
    const char *ts = local_shape(a, t), *rs = local_shape(a, r);
    sc_diag *d = ru_emit_at(ctx, t->offset, c->entry,
                            "%s is donated to %s (aliased output %" PRId64 ") but they differ per device: %s's shard is %s "
                            "(%s, %s) and %s's is %s (%s, %s). XLA cannot reuse the donated buffer for that output and "
                            "fails the compile (jax#25346).",
                            tensor_label(a, t), tensor_label(a, r), t->alias_output, tensor_label(a, t), ts,
                            t->spec ? t->spec : "no sharding", cost_bytes_str(a, t->bytes_per_device), tensor_label(a, r), rs,
                            r->spec ? r->spec : "no sharding", cost_bytes_str(a, r->bytes_per_device));
    ru_diag_context(ctx, d, "argument_sharding", t->spec ? t->spec : "none");
    ru_diag_context(ctx, d, "result_sharding", r->spec ? r->spec : "none");
    const md_mesh *mesh = named_mesh(c);
    if (mesh && t->spec && !strncmp(t->spec, "P(", 2))
      ru_diag_fix(ctx, d, "Give the output the donated argument's sharding",
                  ar_printf(a, "mesh = %s\nresult = jax.lax.with_sharding_constraint(result, NamedSharding(mesh, %s))",
                                  ru_py_make_mesh(a, mesh), t->spec));
  }
}

/* SC0804: an argument or result whose uneven shards are mostly padding. */
static void padding_of(ru_ctx *ctx, const cost_analysis *c, const cost_tensor_info *t, double fraction, int64_t min_bytes) {
  if (!t->known || !t->padding_bytes || t->shards < 2) return;
  /* one mistake, one note: a derived sharding is reported where it is written, not on every value it reaches */
  if (t->derived && ctx->propagation && t->value && prop_engine_value_origin(ctx->propagation, t->value) != t->value) return;
  int64_t per_device = t->padding_bytes / t->shards;
  double share = (double)t->padding_bytes / (double)cost_mul_sat(t->bytes_per_device, t->shards);
  if (share <= fraction || per_device < min_bytes) return;
  sc_arena *a = ctx->arena;
  ar_str dims = SC_ASTR_INIT(a);
  int64_t first = -1;
  for (uint32_t k = 0; k < t->rank; k++)
    if (t->dims[k] % t->shards_per_dim[k]) {
      ar_str_printf(&dims, "%sdim %u (%" PRId64 " over %" PRId64 " devices: shards of %" PRId64 ")", first >= 0 ? ", " : "", k,
                     t->dims[k], t->shards_per_dim[k], t->local_dims[k]);
      if (first < 0) first = k;
    }
  if (first < 0) return;
  sc_diag *d = ru_emit_at(ctx, t->offset, c->entry,
                          "%s %.*s is sharded %s with uneven shards: %s. XLA pads every shard to the same size, so "
                          "%.0f%% of its %s per device is padding (%s per device).",
                          tensor_label(a, t), SC_SPAN_ARG(t->type), t->spec ? t->spec : "unevenly", ar_str_str(&dims),
                          share * 100, cost_bytes_str(a, t->bytes_per_device), cost_bytes_str(a, per_device));
  ru_diag_caused_by(ctx, d, "SC0210", SC_SITE_ANY); /* at the boundary JAX itself refuses uneven shardings */
  uint32_t k = (uint32_t)first;
  int64_t to = cost_mul_sat(t->local_dims[k], t->shards_per_dim[k]);
  ar_str pad = SC_ASTR_INIT(a);
  for (uint32_t j = 0; j < t->rank && j < 32; j++)
    ar_str_printf(&pad, "%s(0, %" PRId64 ")", j ? ", " : "", j == k ? to - t->dims[k] : 0);
  bool intermediate = t->value && ir_value_def(t->value) && ir_value_block(t->value) == NULL && !t->is_result;
  const char *name = t->is_result ? "result" : intermediate ? "x" : ar_printf(a, "arg%u", t->index);
  ru_diag_fix(ctx, d, "Pad the dimension to a multiple of the devices sharding it (and slice the padding off after)",
              ar_printf(a, "%s = jnp.pad(%s, (%s%s))  # dim %u: %" PRId64 " -> %" PRId64, name, name, ar_str_str(&pad),
                              t->rank == 1 ? "," : "", k, t->dims[k], to));
}

void ru_check_memory_padding_waste(ru_ctx *ctx);
void ru_check_memory_padding_waste(ru_ctx *ctx) {
  const cost_analysis *c = cost_of(ctx);
  if (!c) return;
  const sc_cost_thresholds *th = &ctx->options->thresholds;
  double fraction = th->padding_fraction > 0 ? th->padding_fraction : 0.25;
  int64_t min_bytes = th->padding_min_bytes > 0 ? th->padding_min_bytes : INT64_C(16) << 20;
  for (uint32_t i = 0; i < c->nargs; i++) padding_of(ctx, c, &c->args[i], fraction, min_bytes);
  for (uint32_t i = 0; i < c->nresults; i++) /* a result's own sharding only: a derived one is the value's, below */
    if (!c->results[i].derived) padding_of(ctx, c, &c->results[i], fraction, min_bytes);
  /* The entry function's own values with a sharding (written, or derived with --propagate). */
  const ir_block *b = ir_op_regions(c->entry)[0]->blocks[0];
  for (uint32_t i = 0; i < b->nops; i++) {
    const ir_op *op = b->ops[i];
    if (op->kind == SC_OP_RETURN || op->kind == SC_OP_SDY_SHARDING_CONSTRAINT) continue; /* constraints: SC0218 */
    for (uint32_t k = 0; k < op->nresults; k++) {
      cost_tensor_info t = {0};
      t.value = ir_op_result(op, k);
      const md_sharding *w = md_model_result_sharding(ctx->model, op, k);
      t.derived = ctx->propagation && (!w || w->kind == SC_SHARDING_NAMED) ? prop_engine_value_sharding(ctx->propagation, t.value) : NULL;
      t.written = t.derived ? NULL : w;
      if (!t.derived && !t.written) continue;
      t.index = k;
      t.leaf = -1;
      t.type = ir_value_type(t.value);
      t.offset = op->pos.offset;
      ar_mark_t mark = ar_mark(ctx->arena); /* most values note nothing: their sizes are scratch */
      size_t before = ctx->diags.n;
      cost_size(ctx->arena, ctx->model, &t);
      padding_of(ctx, c, &t, fraction, min_bytes);
      if (ctx->diags.n == before) ar_rewind(ctx->arena, mark);
    }
  }
}
