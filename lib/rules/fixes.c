/* fixes.c — where an op sits in the mesh, diagnostic context, PartitionSpecs and fix builders for
 * the kernel and callback rules (see fixes.h).
 *
 * Fix builders produce two kinds of fixes. A JAX snippet names this module's real axes and specs; a
 * machine fix is a byte edit of the module that is known to clear the diagnostic it comes with and
 * to keep the program's meaning (for example a kernel wrapped in a manual computation with
 * replicated operands computes exactly what the unpartitioned kernel computed). */
#include "model/memo.h"
#include "rules/fixes.h"
#include "rules/rule_util.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

static const md_manual_context no_manual_context;

/* ---- Small text helpers ---- */

const char *ru_find(ir_span hay, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0 || hay.n < n) return NULL;
  const char *end = hay.p + hay.n - n;
  for (const char *p = hay.p; p <= end; p++) {
    p = memchr(p, needle[0], (size_t)(end - p) + 1);
    if (!p) return NULL;
    if (memcmp(p, needle, n) == 0) return p;
  }
  return NULL;
}

static bool span_is(ir_span s, const char *lit) {
  size_t n = strlen(lit);
  return s.n == n && memcmp(s.p, lit, n) == 0;
}

static bool span_eq_span(ir_span a, ir_span b) { return a.n == b.n && memcmp(a.p, b.p, a.n) == 0; }

uint32_t ru_line(const ir_linemap *lines, const ir_op *op) { return ir_op_line(lines, op); }

/* The end of the dict value or list entry starting at p: the first ',' or unmatched closing bracket
 * outside brackets and strings, or end. With `arrows`, the '>' of a '->' does not close a bracket. */
static const char *entry_end(const char *p, const char *end, bool arrows) {
  int depth = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = ir_skip_string(p, end);
      continue;
    }
    if (arrows && c == '-' && p + 1 < end && p[1] == '>') {
      p += 2;
      continue;
    }
    if (c == '{' || c == '[' || c == '(' || c == '<') depth++;
    else if (c == '}' || c == ']' || c == ')' || c == '>') {
      if (depth == 0) break;
      depth--;
    } else if (c == ',' && depth == 0)
      break;
    p++;
  }
  return p;
}

ir_span ru_dict_get(ir_span dict, const char *key) {
  ir_span none = {NULL, 0};
  ir_span d = ir_span_trim(dict);
  if (d.n < 2 || d.p[0] != '{') return none;
  const char *p = d.p + 1, *end = d.p + d.n;
  size_t klen = strlen(key);
  while (p < end) {
    while (p < end && (isspace((unsigned char)*p) || *p == ',')) p++;
    if (p >= end || *p == '}') break;
    /* key: bare (letters, digits, _ . $ -) or quoted */
    const char *ks = p, *ke;
    bool quoted = false;
    if (*p == '"') {
      quoted = true;
      p = ir_skip_string(p, end);
      ks++;
      ke = p - 1;
    } else {
      while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '$' || *p == '-')) p++;
      ke = p;
    }
    (void)quoted;
    while (p < end && isspace((unsigned char)*p)) p++;
    if (p >= end) break;
    if (*p != '=') {
      /* a unit attribute (`name` alone) or something we don't understand: skip to the next ',' */
      if (p == ks) p++;
      continue;
    }
    p++;
    while (p < end && isspace((unsigned char)*p)) p++;
    const char *vs = p;
    p = entry_end(p, end, true);
    if ((size_t)(ke - ks) == klen && memcmp(ks, key, klen) == 0) {
      ir_span v = {vs, (uint32_t)(p - vs)};
      return ir_span_trim(v);
    }
  }
  return none;
}

static const char *skip_json_quoting(const char *p, const char *end) {
  while (p < end) {
    if (*p == '\\' && p + 2 < end && p[1] == '2' && p[2] == '2') {
      p += 3;
      continue;
    }
    if (*p == '"' || *p == '\\' || *p == ':' || isspace((unsigned char)*p)) {
      p++;
      continue;
    }
    break;
  }
  return p;
}

bool ru_json_has(ir_span text, const char *key) { return ru_find(text, key) != NULL; }

int ru_json_bool(ir_span text, const char *key) {
  const char *end = text.p + text.n;
  ir_span rest = text;
  size_t klen = strlen(key);
  for (;;) {
    const char *k = ru_find(rest, key);
    if (!k) return -1;
    const char *p = skip_json_quoting(k + klen, end);
    if ((size_t)(end - p) >= 4 && memcmp(p, "true", 4) == 0) return 1;
    if ((size_t)(end - p) >= 5 && memcmp(p, "false", 5) == 0) return 0;
    rest.p = k + klen;
    rest.n = (uint32_t)(end - rest.p);
  }
}

ir_span ru_backend_config(const ir_op *op) {
  const ir_attr *a = ir_op_attr(op, "mhlo.backend_config");
  if (!a) a = ir_op_attr(op, "backend_config");
  if (!a) {
    ir_span none = {NULL, 0};
    return none;
  }
  return a->value;
}

ir_span ru_frontend_attr(const ir_op *op, const char *key) {
  const ir_attr *a = ir_op_attr(op, "mhlo.frontend_attributes");
  if (!a) a = ir_op_attr(op, "frontend_attributes");
  if (!a) {
    ir_span none = {NULL, 0};
    return none;
  }
  return ru_dict_get(a->value, key);
}

const ir_attr *ru_sharding_attr(const ir_op *op) {
  const ir_attr *a = ir_op_attr(op, "sdy.sharding");
  if (!a) a = ir_op_attr(op, "mhlo.sharding");
  if (!a) a = ir_op_attr(op, "sharding");
  return a;
}

static const char *py_ident(sc_arena *a, const char *s) {
  char *o = ar_strdup(a, s && *s ? s : "kernel");
  for (char *p = o; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') *p = '_';
  if (isdigit((unsigned char)o[0])) return ar_printf(a, "k_%s", o);
  return o;
}

const char *ru_kernel_name(sc_arena *a, const ir_op *op) {
  const ir_attr *kn = ir_op_attr(op, "kernel_name");
  if (kn && kn->value.n) return ir_span_unquote(a, kn->value);
  ir_span bc = ru_backend_config(op);
  if (bc.n && bc.p[0] == '{') {
    ir_span name = ru_dict_get(bc, "name");
    if (name.n) return ir_span_unquote(a, name);
  }
  ir_span md = ru_frontend_attr(op, "kernel_name");
  if (md.n) return ir_span_unquote(a, md);
  ir_span t = ir_op_custom_call_target(op);
  return t.n ? ir_span_dup(a, t) : "kernel";
}

const char *ru_kernel_body(sc_arena *a, const ir_op *op) {
  const char *name = ru_kernel_name(a, op);
  ir_span t = ir_op_custom_call_target(op);
  if (!strcmp(name, "kernel") || (t.n && strlen(name) == t.n && !memcmp(name, t.p, t.n))) return NULL;
  for (const char *c = name; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_') return NULL;
  return isdigit((unsigned char)name[0]) ? NULL : name;
}

/* Function names JAX gives bodies it generates (shard_map, remat, custom_jvp, closed calls): not a
 * function of the user's program. */
static bool generated_body_name(ir_span n) {
  static const char *const prefixes[] = {"main", "shmap_body", "closed_call", "core_call", "remat", "checkpoint",
                                         "custom_jvp_call", "custom_vjp_call", "region_", "None", "wrapped_fun", "_"};
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
    size_t k = strlen(prefixes[i]);
    if (n.n >= k && !memcmp(n.p, prefixes[i], k)) return true;
  }
  return false;
}

/* A Python identifier from a function symbol: "matmul", HLO "wrapped.3" -> "wrapped"; empty if none. */
static ir_span py_function_name(ir_span n) {
  uint32_t k = n.n;
  while (k > 0 && isdigit((unsigned char)n.p[k - 1])) k--;
  if (k > 0 && k < n.n && n.p[k - 1] == '.') n.n = k - 1;
  bool ident = n.n > 0 && n.n < 64 && !isdigit((unsigned char)n.p[0]);
  for (uint32_t i = 0; ident && i < n.n; i++) ident = isalnum((unsigned char)n.p[i]) || n.p[i] == '_';
  return ident ? n : ir_span_of(NULL, 0);
}

const char *ru_py_caller(ru_ctx *ctx, const ir_op *op, const ir_op **fn_op) {
  const ir_op *fn = ir_op_func(op);
  if (fn_op) *fn_op = NULL;
  if (fn && fn != ctx->module->entry) {
    ir_span n = py_function_name(ir_op_sym_name(fn));
    if (n.n && !generated_body_name(n)) {
      if (fn_op) *fn_op = fn;
      return ir_span_dup(ctx->arena, n);
    }
  }
  const char *jitted = ru_py_fn_name(ctx);
  if (!strcmp(jitted, "f")) return NULL;
  if (fn_op && fn == ctx->module->entry) *fn_op = fn;
  return jitted;
}

const char *ru_py_call_site(ru_ctx *ctx, const ir_op *op) {
  ir_srcloc src = ir_op_srcloc(ctx->module, op);
  if (!src.known || !src.file.n) return NULL;
  return ar_printf(ctx->arena, SC_SPAN_FMT ":%u", SC_SPAN_ARG(src.file), src.line);
}

/* ---- Partitioner ---- */

static int attrs_style(const ir_attrs *as) {
  int style = 0;
  for (uint32_t i = 0; i < as->n; i++) {
    ir_span n = as->v[i].name;
    if (ir_span_starts(n, "sdy.")) return 2;
    if (span_is(n, "mhlo.sharding")) style = 1;
  }
  return style;
}

ru_partitioner ru_kc_partitioner(const ir_module *m) {
  if (m->format == SC_FMT_HLO) return SC_PART_GSPMD;
  bool gspmd = false;
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    if (ir_op_kind_is_sdy(op->kind)) return SC_PART_SHARDY;
    int st = attrs_style(ir_op_attrs(op));
    if (st == 2) return SC_PART_SHARDY;
    if (st == 1) gspmd = true;
    for (uint32_t r = 0; r < ir_op_nresult_attrs(op); r++) {
      st = attrs_style(&ir_op_result_attrs(op)[r]);
      if (st == 2) return SC_PART_SHARDY;
      if (st == 1) gspmd = true;
    }
    if (op->nregions && ir_op_regions(op)[0]->nblocks && op->kind == SC_OP_FUNC) {
      const ir_block *b = ir_op_regions(op)[0]->blocks[0];
      for (uint32_t k = 0; k < b->nargs; k++) {
        st = attrs_style(ir_value_attrs(b->args[k]));
        if (st == 2) return SC_PART_SHARDY;
        if (st == 1) gspmd = true;
      }
    }
    if (op->cc == SC_CC_SHARDING || op->cc == SC_CC_FULL_TO_SHARD || op->cc == SC_CC_SHARD_TO_FULL) gspmd = true;
  }
  return gspmd ? SC_PART_GSPMD : SC_PART_NONE;
}

const char *ru_partitioner_name(ru_partitioner p) {
  switch (p) {
  case SC_PART_SHARDY: return "shardy";
  case SC_PART_GSPMD: return "gspmd";
  default: return "none";
  }
}

/* ---- Where an op sits ---- */

const md_axis *ru_mesh_axis(const md_mesh *mesh, ir_span name) {
  if (!mesh) return NULL;
  for (uint32_t i = 0; i < mesh->naxes; i++)
    if (span_eq_span(mesh->axes[i].name, name)) return &mesh->axes[i];
  return NULL;
}

bool ru_axis_manual(const ru_where *w, ir_span name) {
  const md_manual_context *mc = w->mc;
  for (uint32_t i = 0; i < mc->nmanual_axes; i++)
    if (span_eq_span(mc->manual_axes[i], name)) return true;
  const md_axis *ax = ru_mesh_axis(w->mesh, name);
  if (ax && ax->type == SC_AXIS_MANUAL) return true;
  if (ax && ax->size == 1) return true;
  if (mc->gspmd_manual && !mc->gspmd_partial) return true;
  return false;
}

ru_where ru_locate(ru_ctx *ctx, const ir_op *op) {
  ru_where w;
  memset(&w, 0, sizeof w);
  const md_model *model = ctx->model;
  w.mesh = model ? model->effective : NULL;
  w.mc = model ? md_model_manual(model, op) : NULL;
  if (!w.mc) w.mc = &no_manual_context;
  w.in_manual = w.mc->manual_op != NULL || w.mc->nmanual_axes > 0 || w.mc->gspmd_manual;
  w.devices = (w.mesh && w.mesh->devices > 0) ? w.mesh->devices : 1;
  if (w.mc->gspmd_manual && w.mc->gspmd_partial && w.mc->nmanual_axes == 0) w.free_unknown = true;
  if (w.mesh && !w.free_unknown) {
    w.free = ar_calloc(ctx->arena, w.mesh->naxes + 1, sizeof *w.free);
    for (uint32_t i = 0; i < w.mesh->naxes; i++) {
      const md_axis *ax = &w.mesh->axes[i];
      if (ax->size > 1 && !ru_axis_manual(&w, ax->name)) w.free[w.nfree++] = ax;
    }
  }
  w.fully_manual = model ? md_model_fully_manual(model, op) : (w.nfree == 0);
  w.partial = w.in_manual && !w.fully_manual;
  return w;
}

/* ---- Rendering ---- */

const char *ru_kc_mesh_str(sc_arena *a, const md_mesh *mesh) {
  if (!mesh) return "(none)";
  if (mesh->synthesized) return ar_printf(a, "of %" PRId64 " partitions, no named axes", mesh->devices);
  if (mesh->maximal && mesh->ndevice_ids == 1) return ar_printf(a, "device %" PRId64, mesh->device_ids[0]);
  if (mesh->naxes == 0) return "{}";
  ar_str s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < mesh->naxes; i++)
    ar_str_printf(&s, "%s" SC_SPAN_FMT "=%" PRId64, i ? "," : "", SC_SPAN_ARG(mesh->axes[i].name), mesh->axes[i].size);
  return ar_str_str(&s);
}

const char *ru_axis_set(sc_arena *a, const ir_span *names, uint32_t n) {
  /* The one axis of a mesh synthesized from num_partitions has no name a user would recognise. */
  if (n == 1 && ir_span_eq(names[0], "_partitions")) return "every axis";
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "{");
  for (uint32_t i = 0; i < n; i++) ar_str_printf(&s, "%s" SC_SPAN_FMT, i ? ", " : "", SC_SPAN_ARG(names[i]));
  ar_str_puts(&s, "}");
  return ar_str_str(&s);
}

/* A mesh the model made up from num_partitions: the module names no axes. */
static bool synthesized(const md_mesh *mesh) { return mesh && mesh->synthesized; }

const char *ru_py_axis_names(sc_arena *a, const md_mesh *mesh) {
  if (!mesh || mesh->naxes == 0 || synthesized(mesh)) return "set(mesh.axis_names)";
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "{");
  bool any = false;
  for (uint32_t i = 0; i < mesh->naxes; i++) {
    if (mesh->axes[i].size <= 1) continue;
    ar_str_printf(&s, "%s'" SC_SPAN_FMT "'", any ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
    any = true;
  }
  if (!any)
    for (uint32_t i = 0; i < mesh->naxes; i++)
      ar_str_printf(&s, "%s'" SC_SPAN_FMT "'", i ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
  ar_str_puts(&s, "}");
  return ar_str_str(&s);
}

const char *ru_py_make_mesh(sc_arena *a, const md_mesh *mesh) {
  if (!mesh || mesh->naxes == 0) return "jax.make_mesh((jax.device_count(),), ('x',))";
  if (synthesized(mesh))
    return ar_printf(a, "jax.make_mesh((%" PRId64 ",), ('x',))  # the module names no mesh axes (GSPMD, %" PRId64
                              " partitions): use the mesh it runs on",
                           mesh->axes[0].size, mesh->axes[0].size);
  ar_str shape = SC_ASTR_INIT(a), names = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < mesh->naxes; i++) {
    ar_str_printf(&shape, "%s%" PRId64, i ? ", " : "", mesh->axes[i].size);
    ar_str_printf(&names, "%s'" SC_SPAN_FMT "'", i ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
  }
  const char *tail = mesh->naxes == 1 ? ",)" : ")";
  return ar_printf(a, "jax.make_mesh((%s%s, (%s%s)", ar_str_str(&shape), tail, ar_str_str(&names), tail);
}

static const md_mesh *module_named_mesh(const md_model *model) {
  if (!model) return NULL;
  for (uint32_t i = 0; i < model->nmeshes; i++)
    if (!model->meshes[i].maximal && model->meshes[i].naxes > 0) return &model->meshes[i];
  return NULL;
}

const char *ru_module_mesh_str(ru_ctx *ctx, int64_t *devices_out) {
  const md_model *model = ctx->model;
  int64_t np = model ? model->num_partitions : -1;
  const md_mesh *mm = module_named_mesh(model);
  const char *attr = (ctx->module && ctx->module->format == SC_FMT_HLO) ? "num_partitions=" : "mhlo.num_partitions = ";
  int64_t devices = np > 0 ? np : (mm ? mm->devices : 1);
  if (devices_out) *devices_out = devices;
  if (mm) {
    if (np > 0) return ar_printf(ctx->arena, "mesh %s (%s%" PRId64 ")", ru_kc_mesh_str(ctx->arena, mm), attr, np);
    return ar_printf(ctx->arena, "mesh %s (%" PRId64 " devices)", ru_kc_mesh_str(ctx->arena, mm), mm->devices);
  }
  if (np > 0)
    return ar_printf(ctx->arena, "%" PRId64 " device%s (%s%" PRId64 ")", np, np == 1 ? "" : "s", attr, np);
  return "1 device (no num_partitions attribute)";
}

bool ru_retargeted(ru_ctx *ctx) {
  if (!ctx->model || !ctx->model->target) return false;
  int64_t mod = 1;
  (void)ru_module_mesh_str(ctx, &mod);
  return mod != ctx->model->target->devices;
}

void ru_context(ru_ctx *ctx, sc_diag *d, const ru_where *w) {
  sc_arena *a = ctx->arena;
  const md_manual_context *mc = w->mc;
  const char **man = ar_calloc(a, (w->mesh ? w->mesh->naxes : 0) + mc->nmanual_axes + 1, sizeof *man);
  size_t nman = 0;
  /* A mesh synthesized from num_partitions has no axes a user named: list none. */
  bool named = w->mesh && !w->mesh->synthesized;
  if (mc->nmanual_axes) {
    for (uint32_t i = 0; i < mc->nmanual_axes; i++)
      if (!ir_span_eq(mc->manual_axes[i], "_partitions")) man[nman++] = ir_span_dup(a, mc->manual_axes[i]);
  } else if (mc->gspmd_manual && !mc->gspmd_partial && named) {
    for (uint32_t i = 0; i < w->mesh->naxes; i++) man[nman++] = ir_span_dup(a, w->mesh->axes[i].name);
  }
  ru_diag_context_list(ctx, d, "manual_axes", man, nman);
  const char **axes = ar_calloc(a, (w->mesh ? w->mesh->naxes : 0) + 1, sizeof *axes);
  size_t naxes = 0;
  if (named)
    for (uint32_t i = 0; i < w->mesh->naxes; i++) axes[naxes++] = ir_span_dup(a, w->mesh->axes[i].name);
  ru_diag_context_list(ctx, d, "mesh_axes", axes, naxes);
  const char **fr = ar_calloc(a, w->nfree + 1, sizeof *fr);
  size_t nfr = 0;
  for (uint32_t i = 0; i < w->nfree && named; i++) fr[nfr++] = ir_span_dup(a, w->free[i]->name);
  ru_diag_context_list(ctx, d, "auto_axes", fr, nfr);
  ru_diag_context(ctx, d, "mesh", ru_kc_mesh_str(a, w->mesh));
  ru_diag_context(ctx, d, "mesh_source", ctx->model && ctx->model->target ? "request" : "module");
  if (ctx->model && ctx->model->target) ru_diag_context(ctx, d, "module_mesh", ru_module_mesh_str(ctx, NULL));
  if (mc->manual_op) {
    const ir_op *m = mc->manual_op;
    ir_span t = ir_op_custom_call_target(m);
    const char *what = t.n ? ar_printf(a, SC_SPAN_FMT " @" SC_SPAN_FMT, SC_SPAN_ARG(ir_op_name(m)), SC_SPAN_ARG(t))
                           : ir_span_dup(a, ir_op_name(m));
    if (ir_op_callee(m).n && !t.n) what = ar_printf(a, "%s @" SC_SPAN_FMT, what, SC_SPAN_ARG(ir_op_callee(m)));
    ru_diag_context(ctx, d, "manual_computation", ar_printf(a, "%s at line %u", what, ir_op_line(ctx->lines, m)));
  } else {
    ru_diag_context(ctx, d, "manual_computation", "none (top level)");
  }
  ru_diag_context(ctx, d, "partitioner", ru_partitioner_name(ru_kc_partitioner(ctx->module)));
  if (ctx->model && ctx->model->platform != SC_PLATFORM_UNSPECIFIED)
    ru_diag_context(ctx, d, "platform", sc_platform_name(ctx->model->platform));
}

const char *ru_pspec(sc_arena *a, const md_sharding *s, const ru_where *w, ru_axis_pred skip) {
  if (!s) return NULL;
  if (s->kind == SC_SHARDING_REPLICATED) return "P()";
  if (s->kind != SC_SHARDING_NAMED) return NULL;
  ar_str out = SC_ASTR_INIT(a);
  ar_str_puts(&out, "P(");
  bool any = false;
  for (uint32_t d = 0; d < s->rank; d++) {
    const md_dim_sharding *ds = &s->dims[d];
    ar_str entry = SC_ASTR_INIT(a);
    uint32_t kept = 0;
    for (uint32_t k = 0; k < ds->naxes; k++) {
      if (skip && skip(w, ds->axes[k].name)) continue;
      /* The mesh made up from num_partitions has no real name; the snippet's mesh calls it 'x'. */
      if (kept) ar_str_puts(&entry, ", ");
      if (ir_span_eq(ds->axes[k].name, "_partitions")) ar_str_puts(&entry, "'x'");
      else ar_str_printf(&entry, "'" SC_SPAN_FMT "'", SC_SPAN_ARG(ds->axes[k].name));
      kept++;
    }
    if (kept) any = true;
    ar_str_printf(&out, "%s%s%s%s", d ? ", " : "", kept > 1 ? "(" : "", kept ? ar_str_str(&entry) : "None",
                   kept > 1 ? ")" : "");
  }
  if (!any) return "P()";
  ar_str_puts(&out, ")");
  return ar_str_str(&out);
}

const md_sharding *ru_sdy_list_entry(sc_arena *a, ir_span list, uint32_t index) {
  ir_span l = ir_span_trim(list);
  if (l.n < 2 || l.p[0] != '[') return NULL;
  const char *p = l.p + 1, *end = l.p + l.n;
  uint32_t i = 0;
  while (p < end) {
    while (p < end && (isspace((unsigned char)*p) || *p == ',')) p++;
    if (p >= end || *p == ']') return NULL;
    const char *s = p;
    p = entry_end(p, end, false);
    if (i == index) {
      ir_span e = {s, (uint32_t)(p - s)};
      const char *err = NULL;
      md_sharding *sh = md_parse_sdy_sharding(a, NULL, e, 0, &err);
      if (!sh) {
        char *t = ar_printf(a, "#sdy.sharding" SC_SPAN_FMT, SC_SPAN_ARG(e));
        ir_span e2 = {t, (uint32_t)strlen(t)};
        sh = md_parse_sdy_sharding(a, NULL, e2, 0, &err);
      }
      return sh;
    }
    i++;
  }
  return NULL;
}

const md_sharding *ru_value_sharding(ru_ctx *ctx, const ir_value *v) {
  if (!v) return NULL;
  const md_sharding *s = ctx->model ? md_model_value_sharding(ctx->model, v) : NULL;
  if (s) return s;
  if (ir_value_block(v) && ir_value_block(v)->parent && ir_value_block(v)->parent->parent) {
    const ir_op *owner = ir_value_block(v)->parent->parent;
    if (owner->kind == SC_OP_SDY_MANUAL_COMPUTATION) {
      const ir_attr *ins = ir_op_attr(owner, "in_shardings");
      if (ins) return ru_sdy_list_entry(ctx->arena, ins->value, v->index);
    }
  }
  /* none written: the one propagation derives (sc_options.propagate) */
  const prop_sharding *p = ctx->propagation ? prop_engine_value_sharding(ctx->propagation, v) : NULL;
  return p && !prop_sharding_empty_axes(p) ? prop_sharding_to_model(ctx->arena, p) : NULL;
}

const md_sharding *ru_operand_sharding(ru_ctx *ctx, const ir_op *op, uint32_t k) {
  if (k >= op->noperands) return NULL;
  if (!ctx->propagation || !prop_engine_operand_is_copy(ctx->propagation, op, k)) return ru_value_sharding(ctx, op->operands[k]);
  const prop_sharding *p = prop_engine_operand_sharding(ctx->propagation, op, k);
  return p && !prop_sharding_empty_axes(p) ? prop_sharding_to_model(ctx->arena, p) : NULL;
}

/* ---- Snippets ---- */

const char *ru_shard_map_snippet(sc_arena *a, const md_mesh *mesh, const char *fn, const char **in_specs,
                                    uint32_t nin, const char **out_specs, uint32_t nout, const char *axis_names,
                                    const char *comment) {
  ar_str in_list = SC_ASTR_INIT(a);
  ar_str_puts(&in_list, "(");
  for (uint32_t i = 0; i < nin; i++) ar_str_printf(&in_list, "%s%s", i ? ", " : "", in_specs[i] ? in_specs[i] : "P()");
  ar_str_puts(&in_list, nin == 1 ? ",)" : ")");
  const char *ins = ar_str_str(&in_list);
  const char *outs;
  if (nout == 1) outs = out_specs[0] ? out_specs[0] : "P()";
  else {
    ar_str out_list = SC_ASTR_INIT(a);
    ar_str_puts(&out_list, "(");
    for (uint32_t i = 0; i < nout; i++)
      ar_str_printf(&out_list, "%s%s", i ? ", " : "", out_specs[i] ? out_specs[i] : "P()");
    ar_str_puts(&out_list, ")");
    outs = ar_str_str(&out_list);
  }
  const char *f = py_ident(a, fn);
  return ar_printf(a,
                         "mesh = %s\n"
                         "%s%s"
                         "%s = jax.shard_map(%s, mesh=mesh, in_specs=%s, out_specs=%s, axis_names=%s)",
                         ru_py_make_mesh(a, mesh), comment ? comment : "", comment && *comment ? "\n" : "", f, f,
                         ins, outs, axis_names ? axis_names : ru_py_axis_names(a, mesh));
}

/* ---- Machine edits ---- */

static uint32_t line_start(const char *buf, uint32_t off) {
  while (off > 0 && buf[off - 1] != '\n') off--;
  return off;
}

void ru_edit_remove_attr(ru_ctx *ctx, sc_fix *f, const ir_attr *at) {
  const char *buf = ctx->module->buf;
  size_t len = ctx->module->len;
  uint32_t a = at->offset, b = at->end;
  uint32_t q = b;
  while (q < len && (buf[q] == ' ' || buf[q] == '\t' || buf[q] == '\n' || buf[q] == '\r')) q++;
  if (q < len && buf[q] == ',') {
    q++;
    while (q < len && (buf[q] == ' ' || buf[q] == '\t')) q++;
    ru_fix_edit(ctx, f, a, q - a, "");
    return;
  }
  uint32_t p = a;
  while (p > 0 && (buf[p - 1] == ' ' || buf[p - 1] == '\t' || buf[p - 1] == '\n' || buf[p - 1] == '\r')) p--;
  if (p > 0 && buf[p - 1] == ',') {
    ru_fix_edit(ctx, f, p - 1, b - (p - 1), "");
    return;
  }
  if (p > 0 && buf[p - 1] == '{' && q < len && buf[q] == '}' && !(p > 1 && buf[p - 2] == '<')) {
    uint32_t s = p - 1;
    while (s > 0 && buf[s - 1] == ' ') s--;
    ru_fix_edit(ctx, f, s, q + 1 - s, "");
    return;
  }
  ru_fix_edit(ctx, f, a, b - a, "");
}

/* Number of entries an op's sharding needs: one per result, at least one. For HLO the single result
 * may be a tuple: one per tuple element (at least one), or as many as the existing tuple sharding. */
static uint32_t sharding_entries(ru_ctx *ctx, const ir_op *op, bool *tuple) {
  *tuple = false;
  if (ctx->module->format == SC_FMT_HLO) {
    const md_sharding *s = ctx->model ? md_model_result_sharding(ctx->model, op, 0) : NULL;
    const ir_attr *at = ru_sharding_attr(op);
    if (at) {
      ir_span v = ir_span_trim(at->value);
      if (v.n > 2 && v.p[0] == '{' && ir_span_trim(ir_span_of(v.p + 1, v.n - 1)).p[0] == '{') *tuple = true;
    }
    if (s && s->kind == SC_SHARDING_TUPLE) {
      *tuple = true;
      return s->nelements ? s->nelements : 1;
    }
    ir_span ty = op->nresults ? ir_value_type(ir_op_result(op, 0)) : ir_span_of(NULL, 0);
    if (ty.n && ty.p[0] == '(') {
      *tuple = true;
      uint32_t n = 0, depth = 0;
      bool content = false;
      for (uint32_t i = 1; i + 1 < ty.n; i++) {
        char c = ty.p[i];
        if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') depth--;
        else if (c == ',' && depth == 0) n++;
        if (!isspace((unsigned char)c)) content = true;
      }
      return content ? n + 1 : 1;
    }
    return 1;
  }
  uint32_t n = op->nresults ? op->nresults : 1;
  *tuple = n > 1;
  return n;
}

/* The sdy.mesh op that comes first in the module body, or the first op of the body. */
static const ir_op *module_first_op(const ir_module *m) {
  const ir_op *mod = m->module;
  if (!mod || !mod->nregions || !ir_op_regions(mod)[0]->nblocks) return NULL;
  const ir_block *b = ir_op_regions(mod)[0]->blocks[0];
  return b->nops ? b->ops[0] : NULL;
}

static bool module_has_symbol(const md_model *model, const char *name) {
  for (uint32_t i = 0; model && i < model->nmeshes; i++)
    if (span_is(model->meshes[i].name, name)) return true;
  return false;
}

/* Adds an edit inserting `sdy.mesh @name = <text>` before the module's first op. */
static bool insert_mesh(ru_ctx *ctx, sc_fix *f, const char *name, const char *mesh_text) {
  const ir_op *first = module_first_op(ctx->module);
  if (!first) return false;
  uint32_t ls = line_start(ctx->module->buf, first->pos.offset);
  uint32_t indent = first->pos.offset - ls;
  const char *line = ar_printf(ctx->arena, "%*ssdy.mesh @%s = %s\n", (int)indent, "", name, mesh_text);
  ru_fix_edit(ctx, f, ls, 0, line);
  return true;
}

static const char *maximal_mesh_name(ru_ctx *ctx, sc_fix *f, int64_t device) {
  const md_model *model = ctx->model;
  for (uint32_t i = 0; model && i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (m->maximal && m->ndevice_ids == 1 && m->device_ids[0] == device && m->name.n)
      return ir_span_dup(ctx->arena, m->name);
  }
  const char *name = ar_printf(ctx->arena, "maximal_mesh_%" PRId64, device);
  if (module_has_symbol(model, name)) name = ar_printf(ctx->arena, "shardcheck_maximal_mesh_%" PRId64, device);
  if (!insert_mesh(ctx, f, name, ar_printf(ctx->arena, "<[], device_ids=[%" PRId64 "]>", device))) return NULL;
  return name;
}

/* Replaces the op's sharding attribute with `name<sep>value`, or inserts it after the op's last
 * attribute. */
/* "{one, one, ...}": n copies, built in one pass. */
static const char *repeated_tuple(sc_arena *a, const char *one, uint32_t n) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "{");
  for (uint32_t i = 0; i < n; i++) ar_str_printf(&s, "%s%s", i ? ", " : "", one);
  ar_str_puts(&s, "}");
  return ar_str_str(&s);
}

static bool put_sharding(ru_ctx *ctx, sc_fix *f, const ir_op *op, const ir_attr *at, const char *name,
                         const char *value) {
  bool hlo = ctx->module->format == SC_FMT_HLO;
  const char *text = ar_printf(ctx->arena, hlo ? "%s=%s" : "%s = %s", name, value);
  if (at) {
    ru_fix_edit(ctx, f, at->offset, at->end - at->offset, text);
    return true;
  }
  if (op->generic && !hlo) return false;
  const ir_attr *last = NULL;
  for (uint32_t i = 0; i < ir_op_attrs(op)->n; i++)
    if (!last || ir_op_attrs(op)->v[i].end > last->end) last = &ir_op_attrs(op)->v[i];
  if (!last) return false;
  ru_fix_edit(ctx, f, last->end, 0, ar_printf(ctx->arena, ", %s", text));
  return true;
}

bool ru_edit_set_maximal(ru_ctx *ctx, sc_fix *f, const ir_op *op, int64_t device) {
  const ir_attr *at = ru_sharding_attr(op);
  bool tuple = false;
  uint32_t n = sharding_entries(ctx, op, &tuple);
  sc_arena *a = ctx->arena;
  bool hlo = ctx->module->format == SC_FMT_HLO;
  bool sdy = !hlo && ((at && span_is(at->name, "sdy.sharding")) ||
                      (!at && ru_kc_partitioner(ctx->module) == SC_PART_SHARDY));
  if (sdy) {
    const char *mesh = maximal_mesh_name(ctx, f, device);
    if (!mesh) return false;
    ar_str v = SC_ASTR_INIT(a);
    ar_str_puts(&v, "#sdy.sharding_per_value<[");
    for (uint32_t i = 0; i < n; i++) ar_str_printf(&v, "%s<@%s, []>", i ? ", " : "", mesh);
    ar_str_puts(&v, "]>");
    return put_sharding(ctx, f, op, at, "sdy.sharding", ar_str_str(&v));
  }
  const char *one = ar_printf(a, "{maximal device=%" PRId64 "}", device);
  const char *v = one;
  if (tuple) v = repeated_tuple(a, one, n);
  if (hlo) return put_sharding(ctx, f, op, at, "sharding", v);
  return put_sharding(ctx, f, op, at, "mhlo.sharding", ar_printf(a, "\"%s\"", v));
}

bool ru_edit_set_manual(ru_ctx *ctx, sc_fix *f, const ir_op *op) {
  const ir_attr *at = ru_sharding_attr(op);
  if (!at) return false;
  if (span_is(at->name, "sdy.sharding")) {
    ru_edit_remove_attr(ctx, f, at);
    return true;
  }
  bool tuple = false;
  uint32_t n = sharding_entries(ctx, op, &tuple);
  const char *v = "{manual}";
  if (tuple) v = repeated_tuple(ctx->arena, "{manual}", n);
  if (ctx->module->format == SC_FMT_HLO) return put_sharding(ctx, f, op, at, "sharding", v);
  return put_sharding(ctx, f, op, at, ir_span_dup(ctx->arena, at->name), ar_printf(ctx->arena, "\"%s\"", v));
}

/* The name of a module mesh with exactly the axes (names and sizes, in order) of `want`. */
static const md_mesh *module_mesh_like(const md_model *model, const md_mesh *want) {
  for (uint32_t i = 0; model && i < model->nmeshes; i++) {
    const md_mesh *m = &model->meshes[i];
    if (m->maximal || m->naxes != want->naxes || !m->name.n) continue;
    bool same = true;
    for (uint32_t k = 0; k < m->naxes && same; k++)
      same = span_eq_span(m->axes[k].name, want->axes[k].name) && m->axes[k].size == want->axes[k].size;
    if (same) return m;
  }
  return NULL;
}

/* What a wrap fix for the request's target mesh needs to know about the module's meshes: the same
 * for every kernel, so found once per request (kernels x meshes scans otherwise). */
typedef struct {
  const md_mesh *like;   /* a module mesh with the target's axes, or NULL */
  bool other_named;      /* the module has a named mesh (with axes) */
  bool has_mesh_symbol;  /* a mesh is already called "mesh" */
} target_meshes;

static const target_meshes *module_meshes_for_target(ru_ctx *ctx) {
  bool known;
  void **slot = md_memo_slot(ru_memo(ctx), RU_MEMO_TARGET_MESHES, ir_span_of(NULL, 0), ir_span_of(NULL, 0), &known);
  if (!known) {
    target_meshes *t = ar_alloc(ctx->arena, sizeof *t);
    t->like = module_mesh_like(ctx->model, ctx->model->target);
    t->other_named = module_named_mesh(ctx->model) != NULL;
    t->has_mesh_symbol = module_has_symbol(ctx->model, "mesh");
    *slot = t;
  }
  return *slot;
}

static const char *replicated_sharding(sc_arena *a, const char *mesh, ir_span type) {
  ir_tensor_type tt;
  int32_t rank = 0;
  if (ir_parse_tensor_type(a, type, &tt) && tt.rank > 0) rank = tt.rank;
  ar_str s = SC_ASTR_INIT(a);
  ar_str_printf(&s, "<@%s, [", mesh);
  for (int32_t i = 0; i < rank; i++) ar_str_puts(&s, i ? ", {}" : "{}");
  ar_str_puts(&s, "]>");
  return ar_str_str(&s);
}

sc_fix *ru_fix_wrap_manual(ru_ctx *ctx, sc_diag *d, const ir_op *op, const ru_where *w, const char *title) {
  sc_arena *a = ctx->arena;
  const ir_module *m = ctx->module;
  if (m->format == SC_FMT_HLO || w->free_unknown || w->nfree == 0) return NULL;
  ru_partitioner part = ru_kc_partitioner(m);
  if (part == SC_PART_GSPMD) return NULL;
  if (ir_op_noperand_types(op) != op->noperands || ir_op_nresult_types(op) != op->nresults) return NULL;
  const char *buf = m->buf;
  uint32_t start = op->pos.offset, end = op->end;
  if (end <= start || end > m->len) return NULL;
  ir_span text = {buf + start, end - start};

  /* The mesh the new manual computation is bound to. */
  const char *mesh_name = NULL, *mesh_decl = NULL;
  if (w->in_manual) {
    if (!w->mc->mesh || !w->mc->mesh->name.n) return NULL;
    mesh_name = ir_span_dup(a, w->mc->mesh->name);
  } else {
    const md_mesh *e = w->mesh;
    if (!e) return NULL;
    if (e->op && e->name.n) mesh_name = ir_span_dup(a, e->name);
    else if (ctx->model && e == ctx->model->target) {
      const target_meshes *t = module_meshes_for_target(ctx);
      if (t->like) mesh_name = ir_span_dup(a, t->like->name);
      else if (t->other_named) return NULL; /* the module has another mesh */
      else {
        mesh_name = t->has_mesh_symbol ? "shardcheck_mesh" : "mesh";
        ar_str axes = SC_ASTR_INIT(a);
        ar_str_puts(&axes, "<[");
        for (uint32_t i = 0; i < e->naxes; i++)
          ar_str_printf(&axes, "%s\"" SC_SPAN_FMT "\"=%" PRId64, i ? ", " : "", SC_SPAN_ARG(e->axes[i].name),
                         e->axes[i].size);
        ar_str_puts(&axes, "]>");
        mesh_decl = ar_str_str(&axes);
      }
    } else
      return NULL;
  }

  /* Split the op text: "<results> = <rest>" and find the operand list in <rest>. */
  uint32_t rest = 0;
  const char *results = NULL;
  if (op->nresults) {
    const char *eq = memchr(text.p, '=', text.n);
    if (!eq) return NULL;
    results = ar_strndup(a, text.p, (size_t)(eq - text.p));
    size_t rl = strlen(results);
    while (rl && ((char *)results)[rl - 1] == ' ') ((char *)results)[--rl] = 0;
    rest = (uint32_t)(eq - text.p) + 1;
    while (rest < text.n && text.p[rest] == ' ') rest++;
  }
  const char *lp = memchr(text.p + rest, '(', text.n - rest);
  if (!lp) return NULL;
  const char *rp = memchr(lp, ')', (size_t)(text.p + text.n - lp));
  if (!rp) return NULL;

  uint32_t indent = start - line_start(buf, start);
  const char *pfx = ar_printf(a, "sc%u_", op->id);
  /* Each list in one pass: re-printing a growing list per operand is quadratic in the operands. */
  ar_str args_s = SC_ASTR_INIT(a), argdecls_s = SC_ASTR_INIT(a), otypes_s = SC_ASTR_INIT(a), ins_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < op->noperands; i++) {
    const char *sep = i ? ", " : "";
    ar_str_printf(&args_s, "%s%%%sarg%u", sep, pfx, i);
    ar_str_printf(&argdecls_s, "%s%%%sarg%u: " SC_SPAN_FMT, sep, pfx, i, SC_SPAN_ARG(ir_op_operand_types(op)[i]));
    ar_str_printf(&otypes_s, "%s" SC_SPAN_FMT, sep, SC_SPAN_ARG(ir_op_operand_types(op)[i]));
    ar_str_printf(&ins_s, "%s%s", sep, replicated_sharding(a, mesh_name, ir_op_operand_types(op)[i]));
  }
  ar_str operands_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < op->noperands; i++)
    ar_str_printf(&operands_s, "%s" SC_SPAN_FMT, i ? ", " : "", SC_SPAN_ARG(ir_op_operand_name(op, i)));
  ar_str rtypes_s = SC_ASTR_INIT(a), outs_s = SC_ASTR_INIT(a), rets_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < op->nresults; i++) {
    ar_str_printf(&rtypes_s, "%s" SC_SPAN_FMT, i ? ", " : "", SC_SPAN_ARG(ir_op_result_types(op)[i]));
    ar_str_printf(&outs_s, "%s%s", i ? ", " : "", replicated_sharding(a, mesh_name, ir_op_result_types(op)[i]));
    if (op->nresults == 1) ar_str_printf(&rets_s, "%%%sout", pfx);
    else ar_str_printf(&rets_s, "%s%%%sout#%u", i ? ", " : "", pfx, i);
  }
  ar_str axes_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < w->nfree; i++)
    ar_str_printf(&axes_s, "%s\"" SC_SPAN_FMT "\"", i ? ", " : "", SC_SPAN_ARG(w->free[i]->name));
  const char *args = ar_str_str(&args_s), *argdecls = ar_str_str(&argdecls_s), *otypes = ar_str_str(&otypes_s),
             *ins = ar_str_str(&ins_s), *operands = ar_str_str(&operands_s), *rtypes = ar_str_str(&rtypes_s),
             *outs = ar_str_str(&outs_s), *rets = ar_str_str(&rets_s), *axes = ar_str_str(&axes_s);

  /* A few small edits around the op, never its own text (a kernel body can be megabytes):
   *   header + new result names  replace "%1 = " (inserted before an op without results)
   *   block arguments            replace the operand list between '(' and ')'
   *   sdy.return + signature     inserted after the op */
  const char *inner_res = "";
  if (op->nresults == 1) inner_res = ar_printf(a, "%%%sout = ", pfx);
  else if (op->nresults > 1) inner_res = ar_printf(a, "%%%sout:%u = ", pfx, op->nresults);
  const char *ret = op->nresults ? ar_printf(a, "sdy.return %s : %s", rets, rtypes) : "sdy.return";
  const char *ftype = op->nresults == 1 ? rtypes : ar_printf(a, "(%s)", rtypes);
  const char *head = results ? ar_printf(a, "%s = ", results) : "";
  const char *header =
      ar_printf(a, "%ssdy.manual_computation(%s) in_shardings=[%s] out_shardings=[%s] manual_axes={%s} (%s) {\n%*s  %s",
                      head, operands, ins, outs, axes, argdecls, (int)indent, "", inner_res);
  const char *footer = ar_printf(a, "\n%*s  %s\n%*s} : (%s) -> %s", (int)indent, "", ret, (int)indent, "",
                                       otypes, ftype);
  uint32_t head_len = op->nresults ? rest : 0; /* "%1 = " goes: the header re-states the results */
  uint32_t lp_off = (uint32_t)(lp + 1 - buf), rp_off = (uint32_t)(rp - buf);

  if (mesh_decl && !module_first_op(m)) return NULL;
  sc_fix *f = ru_diag_fix(ctx, d, title, NULL);
  if (mesh_decl) insert_mesh(ctx, f, mesh_name, mesh_decl);
  ru_fix_edit(ctx, f, start, head_len, header);
  if (op->noperands || rp_off > lp_off) ru_fix_edit(ctx, f, lp_off, rp_off - lp_off, args);
  ru_fix_edit(ctx, f, end, 0, footer);
  return f;
}

/* ---- Python names and values for snippets ---- */

const char *ru_py_fn_name(ru_ctx *ctx) {
  const ir_op *mod = ctx->module ? ctx->module->module : NULL;
  ir_span n = mod ? ir_op_sym_name(mod) : ir_span_of(NULL, 0);
  if (n.n > 4 && !memcmp(n.p, "jit_", 4)) n.p += 4, n.n -= 4;
  else if (n.n > 5 && !memcmp(n.p, "pjit_", 5)) n.p += 5, n.n -= 5;
  bool ident = n.n > 0 && n.n < 64 && !isdigit((unsigned char)n.p[0]);
  for (uint32_t i = 0; ident && i < n.n; i++) ident = isalnum((unsigned char)n.p[i]) || n.p[i] == '_';
  return ident ? ir_span_dup(ctx->arena, n) : "f";
}

/* jnp dtype of an MLIR element type (f32, bf16, i32, i1, ui8) or an HLO one (f32, s32, pred, u8). */
static const char *py_dtype(ir_span t) {
  static const char *const map[][2] = {
      {"f32", "float32"}, {"f16", "float16"}, {"bf16", "bfloat16"}, {"f64", "float64"}, {"i1", "bool_"},
      {"pred", "bool_"},  {"i8", "int8"},     {"s8", "int8"},       {"i16", "int16"},   {"s16", "int16"},
      {"i32", "int32"},   {"s32", "int32"},   {"i64", "int64"},     {"s64", "int64"},   {"ui8", "uint8"},
      {"u8", "uint8"},    {"ui32", "uint32"}, {"u32", "uint32"},    {"ui16", "uint16"}, {"u16", "uint16"}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (ir_span_eq(t, map[i][0])) return map[i][1];
  return NULL;
}

/* The element type of `tensor<8x16xf32>` / `f32[8,16]{1,0}`. */
static ir_span element_type(ir_span type) {
  const char *p = type.p, *e = type.p + type.n;
  if (type.n > 7 && !memcmp(p, "tensor<", 7)) {
    const char *close = memchr(p, '>', type.n), *start = p + 7;
    if (!close) return ir_span_of(NULL, 0);
    for (const char *q = p + 7; q < close; q++)
      if (*q == 'x') start = q + 1;
    const char *stop = start;
    while (stop < close && *stop != ',') stop++;
    return ir_span_of(start, (uint32_t)(stop - start));
  }
  const char *b = memchr(p, '[', type.n);
  return b ? ir_span_of(p, (uint32_t)(b - p)) : ir_span_of(p, (uint32_t)(e - p));
}

const char *ru_py_struct(sc_arena *a, ir_span type) {
  md_shape sh;
  const char *dt = py_dtype(element_type(type));
  if (!dt || !md_parse_shape(a, type, &sh) || sh.kind != SC_SHAPE_ARRAY) return NULL;
  ar_str dims = SC_ASTR_INIT(a);
  for (int32_t d = 0; d < sh.rank; d++) {
    if (sh.dims[d] < 0) return NULL;
    ar_str_printf(&dims, "%s%" PRId64, d ? ", " : "", sh.dims[d]);
  }
  return ar_printf(a, "jax.ShapeDtypeStruct((%s%s), jnp.%s)", ar_str_str(&dims), sh.rank == 1 ? "," : "", dt);
}

const char *ru_py_arg_structs(ru_ctx *ctx) {
  const ir_op *f = ctx->module ? ctx->module->entry : NULL;
  if (!f) return NULL;
  const ir_block *body = ru_body(f);
  uint32_t n = body ? body->nargs : 0;
  if (n > 16) return NULL;
  const char *out = "";
  for (uint32_t i = 0, k = 0; i < n; i++) {
    if (ir_attrs_find(ir_value_attrs(body->args[i]), "jax.global_constant")) continue; /* not the user's argument */
    const char *st = ru_py_struct(ctx->arena, ru_arg_type(f, i));
    if (!st) return NULL;
    out = ar_printf(ctx->arena, "%s%s%s", out, k++ ? ", " : "", st);
  }
  return out;
}
