/* mesh.c — the `mesh` family: mesh declarations (axis sizes, names, device ids, symbol names),
 * all meshes of a module on one device count, module meshes vs `mhlo.num_partitions`, and the target
 * mesh of the request vs the module. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rules/fixes.h"
#include "rules/rule_util.h"
#include "util/hashset.h"

static const ir_op *mesh_op(const ru_ctx *ctx, const md_mesh *m) { return m->op ? m->op : ctx->module->module; }
static uint32_t mesh_off(const md_mesh *m) { return m->op ? m->op->pos.offset : m->offset; }

/* ["x"=2, "y"=4]; a long list is cut after SC_LIST_SHOWN axes ("... and N more"). */
static const char *axes_text(sc_arena *a, const md_mesh *m) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "[");
  md_mesh_axes_put(&s, m, '"', ", ");
  ar_str_puts(&s, "]");
  return ar_str_str(&s);
}

void ru_check_mesh_axis_size(ru_ctx *ctx);
void ru_check_mesh_axis_size(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  for (uint32_t i = 0; model && i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    for (uint32_t k = 0; k < m->naxes; k++) {
      if (m->axes[k].size >= 1) continue;
      sc_diag *d = ru_emit_at(ctx, mesh_off(m), mesh_op(ctx, m),
                              "mesh @%.*s: axis size must be at least 1, got: %" PRId64 " (axis \"%.*s\")",
                              SC_SPAN_ARG(m->name), m->axes[k].size, SC_SPAN_ARG(m->axes[k].name));
      md_mesh fixed = *m;
      fixed.axes = ar_calloc(ctx->arena, m->naxes, sizeof *fixed.axes);
      for (uint32_t j = 0; j < m->naxes; j++) {
        fixed.axes[j] = m->axes[j];
        if (fixed.axes[j].size < 1) fixed.axes[j].size = 1;
      }
      ru_diag_span_name(ctx, d, m->axes[k].name);
      ru_diag_fix(ctx, d, "Give every mesh axis a positive size",
                  ar_printf(ctx->arena, "mesh = %s", ru_py_make_mesh(ctx->arena, &fixed)));
      break;
    }
  }
}

void ru_check_mesh_duplicate_axis(ru_ctx *ctx);
void ru_check_mesh_duplicate_axis(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  for (uint32_t i = 0; model && i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    ar_step(ctx->arena, m->naxes);
    hs_name_map seen;
    hs_name_map_init(&seen, ctx->arena, m->naxes);
    for (uint32_t k = 0; k < m->naxes; k++)
      if (!hs_name_map_put(&seen, m->axes[k].name.p, m->axes[k].name.n, k, NULL)) {
        sc_diag *d = ru_emit_at(ctx, mesh_off(m), mesh_op(ctx, m), "mesh @%.*s: duplicate axis name: \"%.*s\"",
                                SC_SPAN_ARG(m->name), SC_SPAN_ARG(m->axes[k].name));
        ru_diag_span_name(ctx, d, m->axes[k].name); /* the second use */
        ru_diag_fix(ctx, d, "Give every mesh axis a distinct name", NULL);
        break;
      }
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

void ru_check_mesh_device_ids(ru_ctx *ctx);
void ru_check_mesh_device_ids(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  sc_arena *a = ctx->arena;
  for (uint32_t i = 0; model && i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (!m->ndevice_ids) continue;
    const ir_op *op = mesh_op(ctx, m);
    uint32_t off = mesh_off(m);
    ar_step(a, m->ndevice_ids + m->naxes);
    bool neg = false;
    for (uint32_t k = 0; k < m->ndevice_ids && !neg; k++)
      if (m->device_ids[k] < 0) {
        ru_emit_at(ctx, off, op, "mesh @%.*s: device id must be non-negative, got: %" PRId64, SC_SPAN_ARG(m->name),
                   m->device_ids[k]);
        neg = true;
      }
    if (neg) continue;
    if (m->naxes == 0) {
      if (m->ndevice_ids > 1)
        ru_emit_at(ctx, off, op, "mesh @%.*s: axes is empty and device_ids has more than one element",
                   SC_SPAN_ARG(m->name));
      continue;
    }
    bool sizes_ok = true;
    for (uint32_t k = 0; k < m->naxes; k++) sizes_ok &= m->axes[k].size >= 1;
    if (!sizes_ok) continue; /* mesh-axis-size */
    if ((int64_t)m->ndevice_ids != m->devices) {
      sc_diag *d = ru_emit_at(ctx, off, op,
                              "mesh @%.*s: total product of axis sizes must match total number of device ids, got: "
                              "%" PRId64 " != %u",
                              SC_SPAN_ARG(m->name), m->devices, m->ndevice_ids);
      ru_diag_fix(ctx, d, ar_printf(a, "List exactly %" PRId64 " device ids (a permutation of 0..%" PRId64 ")",
                                          m->devices, m->devices - 1),
                  NULL);
      continue;
    }
    int64_t *sorted = ar_calloc(a, m->ndevice_ids, sizeof *sorted);
    memcpy(sorted, m->device_ids, m->ndevice_ids * sizeof *sorted);
    qsort(sorted, m->ndevice_ids, sizeof *sorted, cmp_i64);
    bool iota = true, given_iota = true;
    for (uint32_t k = 0; k < m->ndevice_ids; k++) {
      iota &= sorted[k] == (int64_t)k;
      given_iota &= m->device_ids[k] == (int64_t)k;
    }
    if (!iota) {
      ar_str s = SC_ASTR_INIT(a);
      for (uint32_t k = 0; k < m->ndevice_ids && k < 64; k++) ar_str_printf(&s, "%s%" PRId64, k ? ", " : "", sorted[k]);
      sc_diag *d = ru_emit_at(ctx, off, op, "mesh @%.*s: sorted device ids must be iota(product(axes)), got: %s",
                              SC_SPAN_ARG(m->name), ar_str_str(&s));
      ru_diag_fix(ctx, d, "device_ids must be a permutation of 0..N-1 (each device exactly once)", NULL);
    } else if (given_iota) {
      sc_diag *d = ru_emit_sev(ctx, SC_SEV_WARNING, off, op,
                               "mesh @%.*s: if the ordered device ids are the same as iota(product(axes)), no need to "
                               "specify them for simplicity",
                               SC_SPAN_ARG(m->name));
      sc_fix *f = ru_diag_fix(ctx, d, "Drop the device_ids list (it is the default order)", NULL);
      if (m->op) {
        ir_span t = ir_op_text(ctx->module, m->op);
        const char *k = NULL;
        for (uint32_t j = 0; j + 10 <= t.n; j++)
          if (!memcmp(t.p + j, "device_ids", 10)) {
            k = t.p + j;
            break;
          }
        const char *c = k;
        while (c && c > t.p && c[-1] != ',') c--;
        const char *r = k ? memchr(k, ']', (size_t)(t.p + t.n - k)) : NULL;
        if (c && r && c > t.p)
          ru_fix_edit(ctx, f, (uint32_t)(c - 1 - ctx->module->buf), (uint32_t)(r + 1 - (c - 1)), "");
      }
    }
  }
}

void ru_check_mesh_duplicate_name(ru_ctx *ctx);
void ru_check_mesh_duplicate_name(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  if (!model) return;
  ar_step(ctx->arena, model->nmeshes);
  hs_name_map seen;
  hs_name_map_init(&seen, ctx->arena, model->nmeshes);
  for (uint32_t i = 0; i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (!hs_name_map_put(&seen, m->name.p, m->name.n, i, NULL) && m->op)
      ru_emit_at(ctx, mesh_off(m), m->op, "redefinition of symbol named '%.*s': mesh @%.*s is already declared",
                 SC_SPAN_ARG(m->name), SC_SPAN_ARG(m->name));
  }
}

/* Meshes that carry a device count: not maximal, not empty. */
static bool counted(const md_mesh *m) { return !m->maximal && m->naxes > 0; }

static void mark_sharding(const md_model *model, const md_sharding *s, bool *used, uint32_t depth) {
  if (!s || depth > 64) return;
  for (uint32_t i = 0; i < s->nelements; i++) mark_sharding(model, s->elements[i], used, depth + 1);
  const md_mesh *m = md_model_sharding_mesh(model, s);
  if (m >= model->meshes && m < model->meshes + model->nmeshes) used[m - model->meshes] = true;
}

static void mark_annotation(const md_model *model, const md_annotation *an, bool *used) {
  for (uint32_t i = 0; i < an->nvalues; i++) mark_sharding(model, an->values[i], used, 0);
}

/* Which of the module's meshes some sharding binds to (a mesh no sharding uses puts no device on any
 * value, so its device count cannot conflict). Linear in the annotations. */
static bool *used_meshes(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  bool *used = ar_calloc(ctx->arena, model->nmeshes + 1, sizeof *used);
  for (md_annotated it = md_annotated_first(model); it.op; md_annotated_next(model, &it)) {
    const md_op_info *info = it.info;
    mark_annotation(model, md_info_sdy(info), used);
    mark_annotation(model, md_info_gspmd(info), used);
    mark_annotation(model, md_info_sharding(info), used);
    mark_annotation(model, &md_info_sdy_op(info)->in_shardings, used);
    mark_annotation(model, &md_info_sdy_op(info)->out_shardings, used);
    for (uint32_t i = 0; i < md_info_func(info)->nargs; i++) {
      mark_annotation(model, &md_info_func(info)->args[i].sdy, used);
      mark_annotation(model, &md_info_func(info)->args[i].gspmd, used);
    }
    for (uint32_t i = 0; i < md_info_func(info)->nresults; i++) {
      mark_annotation(model, &md_info_func(info)->results[i].sdy, used);
      mark_annotation(model, &md_info_func(info)->results[i].gspmd, used);
    }
  }
  return used;
}

/* Several device counts: what jax.jit refuses ("Received incompatible devices for jitted computation");
 * Shardy and XLA take each sharding's own mesh. An error for JAX's modules, a note for others
 * (docs/rules-policy.md). */
void ru_check_mesh_device_count(ru_ctx *ctx);
void ru_check_mesh_device_count(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  if (!model || model->nmeshes < 2) return;
  const md_mesh *first = NULL, *root = NULL;
  bool *used = used_meshes(ctx);
  sc_severity sev = md_model_jax_policy_severity(model, NULL, ctx->rule->severity);
  for (uint32_t i = 0; i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (!counted(m) || m->devices <= 0 || !used[i]) continue;
    if (!first) {
      first = m;
      continue;
    }
    if (m->devices != first->devices) {
      sc_diag *d = ru_emit_sev(ctx, sev, mesh_off(m), mesh_op(ctx, m),
                              "Received incompatible devices for jitted computation: mesh @%.*s has %" PRId64
                              " devices but mesh @%.*s has %" PRId64 "; all meshes in a module must have the same "
                              "number of devices (except meshes with a single device id), and the mesh should be the "
                              "same across the entire program",
                              SC_SPAN_ARG(m->name), m->devices, SC_SPAN_ARG(first->name), first->devices);
      /* one diagnostic per module: later mismatching meshes are related sites of the first */
      if (root) ru_diag_caused_by(ctx, d, "SC0105", mesh_off(root));
      else root = m;
      ru_diag_fix(ctx, d, "Use one mesh (or meshes over the same devices) for every sharding of the program",
                  ar_printf(ctx->arena,
                                  "mesh = %s  # the one mesh of every NamedSharding and shard_map of the program",
                                  ru_py_make_mesh(ctx->arena, first)));
    }
  }
}

void ru_check_mesh_num_partitions(ru_ctx *ctx);
void ru_check_mesh_num_partitions(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  if (!model || model->num_partitions <= 0) return;
  int64_t np = model->num_partitions;
  int64_t nr = model->num_replicas > 0 ? model->num_replicas : 1;
  for (uint32_t i = 0; i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (!counted(m) || m->devices <= 0) continue;
    if (m->devices == np || m->devices == np * nr) continue;
    sc_diag *d = ru_emit_at(ctx, mesh_off(m), mesh_op(ctx, m),
                            "Length of device assignment %" PRId64 " is not equal to the size of the mesh %" PRId64
                            ": mesh @%.*s has %" PRId64 " devices but the module is compiled for mhlo.num_partitions = %" PRId64,
                            np, m->devices, SC_SPAN_ARG(m->name), m->devices, np);
    /* a mesh whose device count differs from the module's other meshes (SC0105) is that mistake */
    ru_diag_caused_by(ctx, d, "SC0105", mesh_off(m));
    if (m->op) ru_diag_span(ctx, d, m->op->pos.offset, m->op->end);
    ru_diag_fix(ctx, d, "Lower the function with the mesh it runs on, so that the mesh size equals num_partitions", NULL);
    return;
  }
  /* maximal meshes must name a device of the module */
  for (uint32_t i = 0; i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (m->maximal && m->device_ids[0] >= np * nr) {
      ru_emit_at(ctx, mesh_off(m), mesh_op(ctx, m),
                 "maximal mesh @%.*s names device %" PRId64 " but the module has %" PRId64 " devices (mhlo.num_partitions)",
                 SC_SPAN_ARG(m->name), m->device_ids[0], np * nr);
    }
  }
}

/* Where the module's device count is written: the sdy.mesh declaration, else the num_partitions
 * attribute (MLIR `mhlo.num_partitions = 4 : i32`, HLO `num_partitions=4`); [*b, *e) or false. */
static bool device_count_decl(ru_ctx *ctx, const md_mesh *m, uint32_t *b, uint32_t *e) {
  if (m && m->op) {
    *b = m->op->pos.offset, *e = m->op->end;
    return true;
  }
  const ir_op *mod = ctx->module->module;
  if (!mod) return false;
  const ir_attr *at = ir_op_attr(mod, "mhlo.num_partitions");
  if (at && at->end > at->offset) {
    *b = at->offset, *e = at->end;
    return true;
  }
  const char *k = ru_find(ir_op_text(ctx->module, mod), "num_partitions=");
  uint32_t off = k ? ru_ctx_offset_of(ctx, ir_span_of(k, 1)) : UINT32_MAX;
  if (off == UINT32_MAX) return false;
  uint32_t end = off + (uint32_t)strlen("num_partitions=");
  while (end < ctx->len && ctx->buf[end] >= '0' && ctx->buf[end] <= '9') end++;
  *b = off, *e = end;
  return true;
}

/* The Python that re-lowers the module's function for the target mesh. */
static const char *relower_snippet(ru_ctx *ctx, const md_mesh *t) {
  sc_arena *a = ctx->arena;
  const char *args = ru_py_arg_structs(ctx);
  return ar_printf(a,
                         "mesh = %s\n"
                         "with jax.set_mesh(mesh):\n"
                         "    exported = jax.export.export(jax.jit(%s))(%s)",
                         ru_py_make_mesh(a, t), ru_py_fn_name(ctx), args ? args : "*args");
}

void ru_check_mesh_target(ru_ctx *ctx);
void ru_check_mesh_target(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  sc_arena *a = ctx->arena;
  if (!model || !model->target) return;
  const md_mesh *t = model->target;
  const ir_op *mod = ctx->module->module;
  /* device count vs the module */
  int64_t module_devices = -1;
  const char *from = NULL;
  const md_mesh *decl = NULL;
  for (uint32_t i = 0; i < model->nmeshes; i++)
    if (counted(&model->meshes[i])) {
      decl = &model->meshes[i];
      module_devices = decl->devices;
      from = ar_printf(a, "mesh @%.*s %s", SC_SPAN_ARG(decl->name), axes_text(a, decl));
      break;
    }
  if (module_devices < 0 && model->num_partitions > 0) {
    module_devices = model->num_partitions * (model->num_replicas > 0 ? model->num_replicas : 1);
    from = ar_printf(a, "mhlo.num_partitions = %" PRId64, model->num_partitions);
  }
  /* jax.export accepts a module lowered for one device on any device count (its check is
   * `nr_devices != 1`); what breaks then is kernels and callbacks, which their own rules report. */
  if (module_devices <= 1 || module_devices == t->devices) return;
  uint32_t b = mod ? mod->pos.offset : 0, e = 0;
  bool has_decl = device_count_decl(ctx, decl, &b, &e);
  /* JAX's sentence is jax.export's (calling an Exported); a plain jit dump was lowered, not exported. */
  bool exported = ctx->module->exported || !ctx->lines;
  const char *jax_sentence =
      exported ? ar_printf(a, "Function %s was exported for %" PRId64 " devices and is called in a context with %" PRId64
                                    " devices, which is not allowed. ",
                                 ru_py_fn_name(ctx), module_devices, t->devices)
               : ar_printf(a, "Function %s was lowered for %" PRId64 " devices and is checked against %" PRId64
                                    " devices. ",
                                 ru_py_fn_name(ctx), module_devices, t->devices);
  sc_diag *d = ru_emit_at(ctx, b, mod, "%sThe module was lowered for %" PRId64 " device%s (%s) but the target mesh %s has %" PRId64 " devices.",
                          jax_sentence, module_devices, module_devices == 1 ? "" : "s", from, axes_text(a, t), t->devices);
  if (has_decl) ru_diag_span(ctx, d, b, e);
  ru_diag_context(ctx, d, "module_devices", ar_printf(a, "%" PRId64, module_devices));
  ru_diag_context(ctx, d, "target_devices", ar_printf(a, "%" PRId64, t->devices));
  ru_diag_fix(ctx, d,
              ar_printf(a, "Lower (or export) the function with the %" PRId64 "-device mesh it will run on", t->devices),
              relower_snippet(ctx, t));
}

/* ---- SC0108 mesh-target-axes: same devices, other axes ---- */

void ru_check_mesh_target_axes(ru_ctx *ctx);
void ru_check_mesh_target_axes(ru_ctx *ctx) {
  const md_model *model = ctx->model;
  sc_arena *a = ctx->arena;
  if (!model || !model->target) return;
  const md_mesh *t = model->target;
  for (uint32_t i = 0; i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (!counted(m) || m->devices != t->devices) continue; /* other device counts are SC0107's */
    bool same = m->naxes == t->naxes;
    for (uint32_t k = 0; same && k < m->naxes; k++)
      same = ir_span_same(m->axes[k].name, t->axes[k].name) && m->axes[k].size == t->axes[k].size;
    if (same) continue;
    sc_diag *d = ru_emit_at(ctx, mesh_off(m), mesh_op(ctx, m),
                            "module mesh @%.*s is %s but the target mesh is %s: same %" PRId64
                            " devices, other axes; the module's shardings and collectives refer to its own axes",
                            SC_SPAN_ARG(m->name), axes_text(a, m), axes_text(a, t), t->devices);
    if (m->op) ru_diag_span(ctx, d, m->op->pos.offset, m->op->end);
    ru_diag_fix(ctx, d, "Deploy on the mesh the module was lowered for",
                ar_printf(a, "mesh = %s", ru_py_make_mesh(a, m)));
    ru_diag_fix(ctx, d, "Or re-lower the function under the target mesh", relower_snippet(ctx, t));
  }
}
