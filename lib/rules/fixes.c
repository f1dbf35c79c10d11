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

static const sc_manual_context sc_kc_empty_context;

/* ---- Small text helpers ---- */

const char *sc_kc_find(sc_span hay, const char *needle) {
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

static bool span_is(sc_span s, const char *lit) {
  size_t n = strlen(lit);
  return s.n == n && memcmp(s.p, lit, n) == 0;
}

static bool span_eq_span(sc_span a, sc_span b) { return a.n == b.n && memcmp(a.p, b.p, a.n) == 0; }

uint32_t sc_kc_line(const sc_linemap *lines, const sc_op *op) { return sc_op_line(lines, op); }

/* The end of the dict value or list entry starting at p: the first ',' or unmatched closing bracket
 * outside brackets and strings, or end. With `arrows`, the '>' of a '->' does not close a bracket. */
static const char *entry_end(const char *p, const char *end, bool arrows) {
  int depth = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = sc_skip_string(p, end);
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

sc_span sc_kc_dict_get(sc_span dict, const char *key) {
  sc_span none = {NULL, 0};
  sc_span d = sc_span_trim(dict);
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
      p = sc_skip_string(p, end);
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
      sc_span v = {vs, (uint32_t)(p - vs)};
      return sc_span_trim(v);
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

bool sc_kc_json_has(sc_span text, const char *key) { return sc_kc_find(text, key) != NULL; }

int sc_kc_json_bool(sc_span text, const char *key) {
  const char *end = text.p + text.n;
  sc_span rest = text;
  size_t klen = strlen(key);
  for (;;) {
    const char *k = sc_kc_find(rest, key);
    if (!k) return -1;
    const char *p = skip_json_quoting(k + klen, end);
    if ((size_t)(end - p) >= 4 && memcmp(p, "true", 4) == 0) return 1;
    if ((size_t)(end - p) >= 5 && memcmp(p, "false", 5) == 0) return 0;
    rest.p = k + klen;
    rest.n = (uint32_t)(end - rest.p);
  }
}

sc_span sc_kc_backend_config(const sc_op *op) {
  const sc_attr *a = sc_op_attr(op, "mhlo.backend_config");
  if (!a) a = sc_op_attr(op, "backend_config");
  if (!a) {
    sc_span none = {NULL, 0};
    return none;
  }
  return a->value;
}

sc_span sc_kc_frontend_attr(const sc_op *op, const char *key) {
  const sc_attr *a = sc_op_attr(op, "mhlo.frontend_attributes");
  if (!a) a = sc_op_attr(op, "frontend_attributes");
  if (!a) {
    sc_span none = {NULL, 0};
    return none;
  }
  return sc_kc_dict_get(a->value, key);
}

const sc_attr *sc_kc_sharding_attr(const sc_op *op) {
  const sc_attr *a = sc_op_attr(op, "sdy.sharding");
  if (!a) a = sc_op_attr(op, "mhlo.sharding");
  if (!a) a = sc_op_attr(op, "sharding");
  return a;
}

static const char *py_ident(sc_arena *a, const char *s) {
  char *o = sc_arena_strdup(a, s && *s ? s : "kernel");
  for (char *p = o; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') *p = '_';
  if (isdigit((unsigned char)o[0])) return sc_arena_printf(a, "k_%s", o);
  return o;
}

const char *sc_kc_kernel_name(sc_arena *a, const sc_op *op) {
  const sc_attr *kn = sc_op_attr(op, "kernel_name");
  if (kn && kn->value.n) return sc_span_unquote(a, kn->value);
  sc_span bc = sc_kc_backend_config(op);
  if (bc.n && bc.p[0] == '{') {
    sc_span name = sc_kc_dict_get(bc, "name");
    if (name.n) return sc_span_unquote(a, name);
  }
  sc_span md = sc_kc_frontend_attr(op, "kernel_name");
  if (md.n) return sc_span_unquote(a, md);
  sc_span t = sc_op_custom_call_target(op);
  return t.n ? sc_span_dup(a, t) : "kernel";
}

const char *sc_kc_kernel_body(sc_arena *a, const sc_op *op) {
  const char *name = sc_kc_kernel_name(a, op);
  sc_span t = sc_op_custom_call_target(op);
  if (!strcmp(name, "kernel") || (t.n && strlen(name) == t.n && !memcmp(name, t.p, t.n))) return NULL;
  for (const char *c = name; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_') return NULL;
  return isdigit((unsigned char)name[0]) ? NULL : name;
}

/* Function names JAX gives bodies it generates (shard_map, remat, custom_jvp, closed calls): not a
 * function of the user's program. */
static bool generated_body_name(sc_span n) {
  static const char *const prefixes[] = {"main", "shmap_body", "closed_call", "core_call", "remat", "checkpoint",
                                         "custom_jvp_call", "custom_vjp_call", "region_", "None", "wrapped_fun", "_"};
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
    size_t k = strlen(prefixes[i]);
    if (n.n >= k && !memcmp(n.p, prefixes[i], k)) return true;
  }
  return false;
}

/* A Python identifier from a function symbol: "matmul", HLO "wrapped.3" -> "wrapped"; empty if none. */
static sc_span py_function_name(sc_span n) {
  uint32_t k = n.n;
  while (k > 0 && isdigit((unsigned char)n.p[k - 1])) k--;
  if (k > 0 && k < n.n && n.p[k - 1] == '.') n.n = k - 1;
  bool ident = n.n > 0 && n.n < 64 && !isdigit((unsigned char)n.p[0]);
  for (uint32_t i = 0; ident && i < n.n; i++) ident = isalnum((unsigned char)n.p[i]) || n.p[i] == '_';
  return ident ? n : sc_span_of(NULL, 0);
}

const char *sc_kc_py_caller(sc_ctx *ctx, const sc_op *op, const sc_op **fn_op) {
  const sc_op *fn = op->func;
  if (fn_op) *fn_op = NULL;
  if (fn && fn != ctx->module->entry) {
    sc_span n = py_function_name(sc_op_sym_name(fn));
    if (n.n && !generated_body_name(n)) {
      if (fn_op) *fn_op = fn;
      return sc_span_dup(ctx->arena, n);
    }
  }
  const char *jitted = sc_kc_py_fn_name(ctx);
  if (!strcmp(jitted, "f")) return NULL;
  if (fn_op && fn == ctx->module->entry) *fn_op = fn;
  return jitted;
}

const char *sc_kc_py_call_site(sc_ctx *ctx, const sc_op *op) {
  sc_srcloc src = sc_op_srcloc(ctx->module, op);
  if (!src.known || !src.file.n) return NULL;
  return sc_arena_printf(ctx->arena, SC_SPAN_FMT ":%u", SC_SPAN_ARG(src.file), src.line);
}

/* ---- Partitioner ---- */

static int attrs_style(const sc_attrs *as) {
  int style = 0;
  for (uint32_t i = 0; i < as->n; i++) {
    sc_span n = as->v[i].name;
    if (sc_span_starts(n, "sdy.")) return 2;
    if (span_is(n, "mhlo.sharding")) style = 1;
  }
  return style;
}

sc_partitioner sc_kc_partitioner(const sc_module *m) {
  if (m->format == SC_FMT_HLO) return SC_PART_GSPMD;
  bool gspmd = false;
  for (uint32_t i = 0; i < m->nops; i++) {
    const sc_op *op = m->ops[i];
    if (sc_op_kind_is_sdy(op->kind)) return SC_PART_SHARDY;
    int st = attrs_style(&op->attrs);
    if (st == 2) return SC_PART_SHARDY;
    if (st == 1) gspmd = true;
    for (uint32_t r = 0; r < sc_op_nresult_attrs(op); r++) {
      st = attrs_style(&sc_op_result_attrs(op)[r]);
      if (st == 2) return SC_PART_SHARDY;
      if (st == 1) gspmd = true;
    }
    if (op->nregions && op->regions[0]->nblocks && op->kind == SC_OP_FUNC) {
      const sc_block *b = op->regions[0]->blocks[0];
      for (uint32_t k = 0; k < b->nargs; k++) {
        st = attrs_style(sc_value_attrs(b->args[k]));
        if (st == 2) return SC_PART_SHARDY;
        if (st == 1) gspmd = true;
      }
    }
    if (op->cc == SC_CC_SHARDING || op->cc == SC_CC_FULL_TO_SHARD || op->cc == SC_CC_SHARD_TO_FULL) gspmd = true;
  }
  return gspmd ? SC_PART_GSPMD : SC_PART_NONE;
}

const char *sc_kc_partitioner_name(sc_partitioner p) {
  switch (p) {
  case SC_PART_SHARDY: return "shardy";
  case SC_PART_GSPMD: return "gspmd";
  default: return "none";
  }
}

/* ---- Where an op sits ---- */

const sc_axis *sc_kc_mesh_axis(const sc_mesh *mesh, sc_span name) {
  if (!mesh) return NULL;
  for (uint32_t i = 0; i < mesh->naxes; i++)
    if (span_eq_span(mesh->axes[i].name, name)) return &mesh->axes[i];
  return NULL;
}

bool sc_kc_axis_manual(const sc_kc_where *w, sc_span name) {
  const sc_manual_context *mc = w->mc;
  for (uint32_t i = 0; i < mc->nmanual_axes; i++)
    if (span_eq_span(mc->manual_axes[i], name)) return true;
  const sc_axis *ax = sc_kc_mesh_axis(w->mesh, name);
  if (ax && ax->type == SC_AXIS_MANUAL) return true;
  if (ax && ax->size == 1) return true;
  if (mc->gspmd_manual && !mc->gspmd_partial) return true;
  return false;
}

sc_kc_where sc_kc_locate(sc_ctx *ctx, const sc_op *op) {
  sc_kc_where w;
  memset(&w, 0, sizeof w);
  const sc_model *model = ctx->model;
  w.mesh = model ? model->effective : NULL;
  w.mc = model ? sc_model_manual(model, op) : NULL;
  if (!w.mc) w.mc = &sc_kc_empty_context;
  w.in_manual = w.mc->manual_op != NULL || w.mc->nmanual_axes > 0 || w.mc->gspmd_manual;
  w.devices = (w.mesh && w.mesh->devices > 0) ? w.mesh->devices : 1;
  if (w.mc->gspmd_manual && w.mc->gspmd_partial && w.mc->nmanual_axes == 0) w.free_unknown = true;
  if (w.mesh && !w.free_unknown) {
    w.free = sc_arena_calloc(ctx->arena, w.mesh->naxes + 1, sizeof *w.free);
    for (uint32_t i = 0; i < w.mesh->naxes; i++) {
      const sc_axis *ax = &w.mesh->axes[i];
      if (ax->size > 1 && !sc_kc_axis_manual(&w, ax->name)) w.free[w.nfree++] = ax;
    }
  }
  w.fully_manual = model ? sc_model_fully_manual(model, op) : (w.nfree == 0);
  w.partial = w.in_manual && !w.fully_manual;
  return w;
}

/* ---- Rendering ---- */

const char *sc_kc_mesh_str(sc_arena *a, const sc_mesh *mesh) {
  if (!mesh) return "(none)";
  if (mesh->synthesized) return sc_arena_printf(a, "of %" PRId64 " partitions, no named axes", mesh->devices);
  if (mesh->maximal && mesh->ndevice_ids == 1) return sc_arena_printf(a, "device %" PRId64, mesh->device_ids[0]);
  if (mesh->naxes == 0) return "{}";
  sc_astr s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < mesh->naxes; i++)
    sc_astr_printf(&s, "%s" SC_SPAN_FMT "=%" PRId64, i ? "," : "", SC_SPAN_ARG(mesh->axes[i].name), mesh->axes[i].size);
  return sc_astr_str(&s);
}

const char *sc_kc_axis_set(sc_arena *a, const sc_span *names, uint32_t n) {
  /* The one axis of a mesh synthesized from num_partitions has no name a user would recognise. */
  if (n == 1 && sc_span_eq(names[0], "_partitions")) return "every axis";
  sc_astr s = SC_ASTR_INIT(a);
  sc_astr_puts(&s, "{");
  for (uint32_t i = 0; i < n; i++) sc_astr_printf(&s, "%s" SC_SPAN_FMT, i ? ", " : "", SC_SPAN_ARG(names[i]));
  sc_astr_puts(&s, "}");
  return sc_astr_str(&s);
}

/* A mesh the model made up from num_partitions: the module names no axes. */
static bool synthesized(const sc_mesh *mesh) { return mesh && mesh->synthesized; }

const char *sc_kc_py_axis_names(sc_arena *a, const sc_mesh *mesh) {
  if (!mesh || mesh->naxes == 0 || synthesized(mesh)) return "set(mesh.axis_names)";
  sc_astr s = SC_ASTR_INIT(a);
  sc_astr_puts(&s, "{");
  bool any = false;
  for (uint32_t i = 0; i < mesh->naxes; i++) {
    if (mesh->axes[i].size <= 1) continue;
    sc_astr_printf(&s, "%s'" SC_SPAN_FMT "'", any ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
    any = true;
  }
  if (!any)
    for (uint32_t i = 0; i < mesh->naxes; i++)
      sc_astr_printf(&s, "%s'" SC_SPAN_FMT "'", i ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
  sc_astr_puts(&s, "}");
  return sc_astr_str(&s);
}

const char *sc_kc_py_make_mesh(sc_arena *a, const sc_mesh *mesh) {
  if (!mesh || mesh->naxes == 0) return "jax.make_mesh((jax.device_count(),), ('x',))";
  if (synthesized(mesh))
    return sc_arena_printf(a, "jax.make_mesh((%" PRId64 ",), ('x',))  # the module names no mesh axes (GSPMD, %" PRId64
                              " partitions): use the mesh it runs on",
                           mesh->axes[0].size, mesh->axes[0].size);
  sc_astr shape = SC_ASTR_INIT(a), names = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < mesh->naxes; i++) {
    sc_astr_printf(&shape, "%s%" PRId64, i ? ", " : "", mesh->axes[i].size);
    sc_astr_printf(&names, "%s'" SC_SPAN_FMT "'", i ? ", " : "", SC_SPAN_ARG(mesh->axes[i].name));
  }
  const char *tail = mesh->naxes == 1 ? ",)" : ")";
  return sc_arena_printf(a, "jax.make_mesh((%s%s, (%s%s)", sc_astr_str(&shape), tail, sc_astr_str(&names), tail);
}

static const sc_mesh *module_named_mesh(const sc_model *model) {
  if (!model) return NULL;
  for (uint32_t i = 0; i < model->nmeshes; i++)
    if (!model->meshes[i].maximal && model->meshes[i].naxes > 0) return &model->meshes[i];
  return NULL;
}

const char *sc_kc_module_mesh_str(sc_ctx *ctx, int64_t *devices_out) {
  const sc_model *model = ctx->model;
  int64_t np = model ? model->num_partitions : -1;
  const sc_mesh *mm = module_named_mesh(model);
  const char *attr = (ctx->module && ctx->module->format == SC_FMT_HLO) ? "num_partitions=" : "mhlo.num_partitions = ";
  int64_t devices = np > 0 ? np : (mm ? mm->devices : 1);
  if (devices_out) *devices_out = devices;
  if (mm) {
    if (np > 0) return sc_arena_printf(ctx->arena, "mesh %s (%s%" PRId64 ")", sc_kc_mesh_str(ctx->arena, mm), attr, np);
    return sc_arena_printf(ctx->arena, "mesh %s (%" PRId64 " devices)", sc_kc_mesh_str(ctx->arena, mm), mm->devices);
  }
  if (np > 0)
    return sc_arena_printf(ctx->arena, "%" PRId64 " device%s (%s%" PRId64 ")", np, np == 1 ? "" : "s", attr, np);
  return "1 device (no num_partitions attribute)";
}

bool sc_kc_retargeted(sc_ctx *ctx) {
  if (!ctx->model || !ctx->model->target) return false;
  int64_t mod = 1;
  (void)sc_kc_module_mesh_str(ctx, &mod);
  return mod != ctx->model->target->devices;
}

void sc_kc_context(sc_ctx *ctx, sc_diag *d, const sc_kc_where *w) {
  sc_arena *a = ctx->arena;
  const sc_manual_context *mc = w->mc;
  const char **man = sc_arena_calloc(a, (w->mesh ? w->mesh->naxes : 0) + mc->nmanual_axes + 1, sizeof *man);
  size_t nman = 0;
  /* A mesh synthesized from num_partitions has no axes a user named: list none. */
  bool named = w->mesh && !w->mesh->synthesized;
  if (mc->nmanual_axes) {
    for (uint32_t i = 0; i < mc->nmanual_axes; i++)
      if (!sc_span_eq(mc->manual_axes[i], "_partitions")) man[nman++] = sc_span_dup(a, mc->manual_axes[i]);
  } else if (mc->gspmd_manual && !mc->gspmd_partial && named) {
    for (uint32_t i = 0; i < w->mesh->naxes; i++) man[nman++] = sc_span_dup(a, w->mesh->axes[i].name);
  }
  sc_diag_context_list(ctx, d, "manual_axes", man, nman);
  const char **axes = sc_arena_calloc(a, (w->mesh ? w->mesh->naxes : 0) + 1, sizeof *axes);
  size_t naxes = 0;
  if (named)
    for (uint32_t i = 0; i < w->mesh->naxes; i++) axes[naxes++] = sc_span_dup(a, w->mesh->axes[i].name);
  sc_diag_context_list(ctx, d, "mesh_axes", axes, naxes);
  const char **fr = sc_arena_calloc(a, w->nfree + 1, sizeof *fr);
  size_t nfr = 0;
  for (uint32_t i = 0; i < w->nfree && named; i++) fr[nfr++] = sc_span_dup(a, w->free[i]->name);
  sc_diag_context_list(ctx, d, "auto_axes", fr, nfr);
  sc_diag_context(ctx, d, "mesh", sc_kc_mesh_str(a, w->mesh));
  sc_diag_context(ctx, d, "mesh_source", ctx->model && ctx->model->target ? "request" : "module");
  if (ctx->model && ctx->model->target) sc_diag_context(ctx, d, "module_mesh", sc_kc_module_mesh_str(ctx, NULL));
  if (mc->manual_op) {
    const sc_op *m = mc->manual_op;
    sc_span t = sc_op_custom_call_target(m);
    const char *what = t.n ? sc_arena_printf(a, SC_SPAN_FMT " @" SC_SPAN_FMT, SC_SPAN_ARG(m->name), SC_SPAN_ARG(t))
                           : sc_span_dup(a, m->name);
    if (sc_op_callee(m).n && !t.n) what = sc_arena_printf(a, "%s @" SC_SPAN_FMT, what, SC_SPAN_ARG(sc_op_callee(m)));
    sc_diag_context(ctx, d, "manual_computation", sc_arena_printf(a, "%s at line %u", what, sc_op_line(ctx->lines, m)));
  } else {
    sc_diag_context(ctx, d, "manual_computation", "none (top level)");
  }
  sc_diag_context(ctx, d, "partitioner", sc_kc_partitioner_name(sc_kc_partitioner(ctx->module)));
  if (ctx->model && ctx->model->platform != SC_PLATFORM_UNSPECIFIED)
    sc_diag_context(ctx, d, "platform", sc_platform_name(ctx->model->platform));
}

const char *sc_kc_pspec(sc_arena *a, const sc_sharding *s, const sc_kc_where *w, sc_kc_axis_pred skip) {
  if (!s) return NULL;
  if (s->kind == SC_SHARDING_REPLICATED) return "P()";
  if (s->kind != SC_SHARDING_NAMED) return NULL;
  sc_astr out = SC_ASTR_INIT(a);
  sc_astr_puts(&out, "P(");
  bool any = false;
  for (uint32_t d = 0; d < s->rank; d++) {
    const sc_dim_sharding *ds = &s->dims[d];
    sc_astr entry = SC_ASTR_INIT(a);
    uint32_t kept = 0;
    for (uint32_t k = 0; k < ds->naxes; k++) {
      if (skip && skip(w, ds->axes[k].name)) continue;
      /* The mesh made up from num_partitions has no real name; the snippet's mesh calls it 'x'. */
      if (kept) sc_astr_puts(&entry, ", ");
      if (sc_span_eq(ds->axes[k].name, "_partitions")) sc_astr_puts(&entry, "'x'");
      else sc_astr_printf(&entry, "'" SC_SPAN_FMT "'", SC_SPAN_ARG(ds->axes[k].name));
      kept++;
    }
    if (kept) any = true;
    sc_astr_printf(&out, "%s%s%s%s", d ? ", " : "", kept > 1 ? "(" : "", kept ? sc_astr_str(&entry) : "None",
                   kept > 1 ? ")" : "");
  }
  if (!any) return "P()";
  sc_astr_puts(&out, ")");
  return sc_astr_str(&out);
}

const sc_sharding *sc_kc_sdy_list_entry(sc_arena *a, sc_span list, uint32_t index) {
  sc_span l = sc_span_trim(list);
  if (l.n < 2 || l.p[0] != '[') return NULL;
  const char *p = l.p + 1, *end = l.p + l.n;
  uint32_t i = 0;
  while (p < end) {
    while (p < end && (isspace((unsigned char)*p) || *p == ',')) p++;
    if (p >= end || *p == ']') return NULL;
    const char *s = p;
    p = entry_end(p, end, false);
    if (i == index) {
      sc_span e = {s, (uint32_t)(p - s)};
      const char *err = NULL;
      sc_sharding *sh = sc_parse_sdy_sharding(a, e, 0, &err);
      if (!sh) {
        char *t = sc_arena_printf(a, "#sdy.sharding" SC_SPAN_FMT, SC_SPAN_ARG(e));
        sc_span e2 = {t, (uint32_t)strlen(t)};
        sh = sc_parse_sdy_sharding(a, e2, 0, &err);
      }
      return sh;
    }
    i++;
  }
  return NULL;
}

const sc_sharding *sc_kc_value_sharding(sc_ctx *ctx, const sc_value *v) {
  if (!v) return NULL;
  const sc_sharding *s = ctx->model ? sc_model_value_sharding(ctx->model, v) : NULL;
  if (s) return s;
  if (v->block && v->block->parent && v->block->parent->parent) {
    const sc_op *owner = v->block->parent->parent;
    if (owner->kind == SC_OP_SDY_MANUAL_COMPUTATION) {
      const sc_attr *ins = sc_op_attr(owner, "in_shardings");
      if (ins) return sc_kc_sdy_list_entry(ctx->arena, ins->value, v->index);
    }
  }
  /* none written: the one propagation derives (sc_options.propagate) */
  const prop_sharding *p = ctx->propagation ? prop_engine_value_sharding(ctx->propagation, v) : NULL;
  return p && !prop_sharding_empty_axes(p) ? prop_sharding_to_model(ctx->arena, p) : NULL;
}

/* ---- Snippets ---- */

const char *sc_kc_shard_map_snippet(sc_arena *a, const sc_mesh *mesh, const char *fn, const char **in_specs,
                                    uint32_t nin, const char **out_specs, uint32_t nout, const char *axis_names,
                                    const char *comment) {
  sc_astr in_list = SC_ASTR_INIT(a);
  sc_astr_puts(&in_list, "(");
  for (uint32_t i = 0; i < nin; i++) sc_astr_printf(&in_list, "%s%s", i ? ", " : "", in_specs[i] ? in_specs[i] : "P()");
  sc_astr_puts(&in_list, nin == 1 ? ",)" : ")");
  const char *ins = sc_astr_str(&in_list);
  const char *outs;
  if (nout == 1) outs = out_specs[0] ? out_specs[0] : "P()";
  else {
    sc_astr out_list = SC_ASTR_INIT(a);
    sc_astr_puts(&out_list, "(");
    for (uint32_t i = 0; i < nout; i++)
      sc_astr_printf(&out_list, "%s%s", i ? ", " : "", out_specs[i] ? out_specs[i] : "P()");
    sc_astr_puts(&out_list, ")");
    outs = sc_astr_str(&out_list);
  }
  const char *f = py_ident(a, fn);
  return sc_arena_printf(a,
                         "mesh = %s\n"
                         "%s%s"
                         "%s = jax.shard_map(%s, mesh=mesh, in_specs=%s, out_specs=%s, axis_names=%s)",
                         sc_kc_py_make_mesh(a, mesh), comment ? comment : "", comment && *comment ? "\n" : "", f, f,
                         ins, outs, axis_names ? axis_names : sc_kc_py_axis_names(a, mesh));
}

/* ---- Machine edits ---- */

static uint32_t line_start(const char *buf, uint32_t off) {
  while (off > 0 && buf[off - 1] != '\n') off--;
  return off;
}

void sc_kc_edit_remove_attr(sc_ctx *ctx, sc_fix *f, const sc_attr *at) {
  const char *buf = ctx->module->buf;
  size_t len = ctx->module->len;
  uint32_t a = at->offset, b = at->end;
  uint32_t q = b;
  while (q < len && (buf[q] == ' ' || buf[q] == '\t' || buf[q] == '\n' || buf[q] == '\r')) q++;
  if (q < len && buf[q] == ',') {
    q++;
    while (q < len && (buf[q] == ' ' || buf[q] == '\t')) q++;
    sc_fix_edit(ctx, f, a, q - a, "");
    return;
  }
  uint32_t p = a;
  while (p > 0 && (buf[p - 1] == ' ' || buf[p - 1] == '\t' || buf[p - 1] == '\n' || buf[p - 1] == '\r')) p--;
  if (p > 0 && buf[p - 1] == ',') {
    sc_fix_edit(ctx, f, p - 1, b - (p - 1), "");
    return;
  }
  if (p > 0 && buf[p - 1] == '{' && q < len && buf[q] == '}' && !(p > 1 && buf[p - 2] == '<')) {
    uint32_t s = p - 1;
    while (s > 0 && buf[s - 1] == ' ') s--;
    sc_fix_edit(ctx, f, s, q + 1 - s, "");
    return;
  }
  sc_fix_edit(ctx, f, a, b - a, "");
}

/* Number of entries an op's sharding needs: one per result, at least one. For HLO the single result
 * may be a tuple: one per tuple element (at least one), or as many as the existing tuple sharding. */
static uint32_t sharding_entries(sc_ctx *ctx, const sc_op *op, bool *tuple) {
  *tuple = false;
  if (ctx->module->format == SC_FMT_HLO) {
    const sc_sharding *s = ctx->model ? sc_model_result_sharding(ctx->model, op, 0) : NULL;
    const sc_attr *at = sc_kc_sharding_attr(op);
    if (at) {
      sc_span v = sc_span_trim(at->value);
      if (v.n > 2 && v.p[0] == '{' && sc_span_trim(sc_span_of(v.p + 1, v.n - 1)).p[0] == '{') *tuple = true;
    }
    if (s && s->kind == SC_SHARDING_TUPLE) {
      *tuple = true;
      return s->nelements ? s->nelements : 1;
    }
    sc_span ty = op->nresults ? op->results[0]->type : sc_span_of(NULL, 0);
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
static const sc_op *module_first_op(const sc_module *m) {
  const sc_op *mod = m->module;
  if (!mod || !mod->nregions || !mod->regions[0]->nblocks) return NULL;
  const sc_block *b = mod->regions[0]->blocks[0];
  return b->nops ? b->ops[0] : NULL;
}

static bool module_has_symbol(const sc_model *model, const char *name) {
  for (uint32_t i = 0; model && i < model->nmeshes; i++)
    if (span_is(model->meshes[i].name, name)) return true;
  return false;
}

/* Adds an edit inserting `sdy.mesh @name = <text>` before the module's first op. */
static bool insert_mesh(sc_ctx *ctx, sc_fix *f, const char *name, const char *mesh_text) {
  const sc_op *first = module_first_op(ctx->module);
  if (!first) return false;
  uint32_t ls = line_start(ctx->module->buf, first->pos.offset);
  uint32_t indent = first->pos.offset - ls;
  const char *line = sc_arena_printf(ctx->arena, "%*ssdy.mesh @%s = %s\n", (int)indent, "", name, mesh_text);
  sc_fix_edit(ctx, f, ls, 0, line);
  return true;
}

static const char *maximal_mesh_name(sc_ctx *ctx, sc_fix *f, int64_t device) {
  const sc_model *model = ctx->model;
  for (uint32_t i = 0; model && i < model->nmeshes; i++) {
    const sc_mesh *m = &model->meshes[i];
    if (m->maximal && m->ndevice_ids == 1 && m->device_ids[0] == device && m->name.n)
      return sc_span_dup(ctx->arena, m->name);
  }
  const char *name = sc_arena_printf(ctx->arena, "maximal_mesh_%" PRId64, device);
  if (module_has_symbol(model, name)) name = sc_arena_printf(ctx->arena, "shardcheck_maximal_mesh_%" PRId64, device);
  if (!insert_mesh(ctx, f, name, sc_arena_printf(ctx->arena, "<[], device_ids=[%" PRId64 "]>", device))) return NULL;
  return name;
}

/* Replaces the op's sharding attribute with `name<sep>value`, or inserts it after the op's last
 * attribute. */
/* "{one, one, ...}": n copies, built in one pass. */
static const char *repeated_tuple(sc_arena *a, const char *one, uint32_t n) {
  sc_astr s = SC_ASTR_INIT(a);
  sc_astr_puts(&s, "{");
  for (uint32_t i = 0; i < n; i++) sc_astr_printf(&s, "%s%s", i ? ", " : "", one);
  sc_astr_puts(&s, "}");
  return sc_astr_str(&s);
}

static bool put_sharding(sc_ctx *ctx, sc_fix *f, const sc_op *op, const sc_attr *at, const char *name,
                         const char *value) {
  bool hlo = ctx->module->format == SC_FMT_HLO;
  const char *text = sc_arena_printf(ctx->arena, hlo ? "%s=%s" : "%s = %s", name, value);
  if (at) {
    sc_fix_edit(ctx, f, at->offset, at->end - at->offset, text);
    return true;
  }
  if (op->generic && !hlo) return false;
  const sc_attr *last = NULL;
  for (uint32_t i = 0; i < op->attrs.n; i++)
    if (!last || op->attrs.v[i].end > last->end) last = &op->attrs.v[i];
  if (!last) return false;
  sc_fix_edit(ctx, f, last->end, 0, sc_arena_printf(ctx->arena, ", %s", text));
  return true;
}

bool sc_kc_edit_set_maximal(sc_ctx *ctx, sc_fix *f, const sc_op *op, int64_t device) {
  const sc_attr *at = sc_kc_sharding_attr(op);
  bool tuple = false;
  uint32_t n = sharding_entries(ctx, op, &tuple);
  sc_arena *a = ctx->arena;
  bool hlo = ctx->module->format == SC_FMT_HLO;
  bool sdy = !hlo && ((at && span_is(at->name, "sdy.sharding")) ||
                      (!at && sc_kc_partitioner(ctx->module) == SC_PART_SHARDY));
  if (sdy) {
    const char *mesh = maximal_mesh_name(ctx, f, device);
    if (!mesh) return false;
    sc_astr v = SC_ASTR_INIT(a);
    sc_astr_puts(&v, "#sdy.sharding_per_value<[");
    for (uint32_t i = 0; i < n; i++) sc_astr_printf(&v, "%s<@%s, []>", i ? ", " : "", mesh);
    sc_astr_puts(&v, "]>");
    return put_sharding(ctx, f, op, at, "sdy.sharding", sc_astr_str(&v));
  }
  const char *one = sc_arena_printf(a, "{maximal device=%" PRId64 "}", device);
  const char *v = one;
  if (tuple) v = repeated_tuple(a, one, n);
  if (hlo) return put_sharding(ctx, f, op, at, "sharding", v);
  return put_sharding(ctx, f, op, at, "mhlo.sharding", sc_arena_printf(a, "\"%s\"", v));
}

bool sc_kc_edit_set_manual(sc_ctx *ctx, sc_fix *f, const sc_op *op) {
  const sc_attr *at = sc_kc_sharding_attr(op);
  if (!at) return false;
  if (span_is(at->name, "sdy.sharding")) {
    sc_kc_edit_remove_attr(ctx, f, at);
    return true;
  }
  bool tuple = false;
  uint32_t n = sharding_entries(ctx, op, &tuple);
  const char *v = "{manual}";
  if (tuple) v = repeated_tuple(ctx->arena, "{manual}", n);
  if (ctx->module->format == SC_FMT_HLO) return put_sharding(ctx, f, op, at, "sharding", v);
  return put_sharding(ctx, f, op, at, sc_span_dup(ctx->arena, at->name), sc_arena_printf(ctx->arena, "\"%s\"", v));
}

/* The name of a module mesh with exactly the axes (names and sizes, in order) of `want`. */
static const sc_mesh *module_mesh_like(const sc_model *model, const sc_mesh *want) {
  for (uint32_t i = 0; model && i < model->nmeshes; i++) {
    const sc_mesh *m = &model->meshes[i];
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
  const sc_mesh *like;   /* a module mesh with the target's axes, or NULL */
  bool other_named;      /* the module has a named mesh (with axes) */
  bool has_mesh_symbol;  /* a mesh is already called "mesh" */
} target_meshes;

static const target_meshes *module_meshes_for_target(sc_ctx *ctx) {
  bool known;
  void **slot = sc_memo_slot(ru_memo(ctx), RU_MEMO_TARGET_MESHES, sc_span_of(NULL, 0), sc_span_of(NULL, 0), &known);
  if (!known) {
    target_meshes *t = sc_arena_alloc(ctx->arena, sizeof *t);
    t->like = module_mesh_like(ctx->model, ctx->model->target);
    t->other_named = module_named_mesh(ctx->model) != NULL;
    t->has_mesh_symbol = module_has_symbol(ctx->model, "mesh");
    *slot = t;
  }
  return *slot;
}

static const char *replicated_sharding(sc_arena *a, const char *mesh, sc_span type) {
  sc_tensor_type tt;
  int32_t rank = 0;
  if (sc_parse_tensor_type(a, type, &tt) && tt.rank > 0) rank = tt.rank;
  sc_astr s = SC_ASTR_INIT(a);
  sc_astr_printf(&s, "<@%s, [", mesh);
  for (int32_t i = 0; i < rank; i++) sc_astr_puts(&s, i ? ", {}" : "{}");
  sc_astr_puts(&s, "]>");
  return sc_astr_str(&s);
}

sc_fix *sc_kc_fix_wrap_manual(sc_ctx *ctx, sc_diag *d, const sc_op *op, const sc_kc_where *w, const char *title) {
  sc_arena *a = ctx->arena;
  const sc_module *m = ctx->module;
  if (m->format == SC_FMT_HLO || w->free_unknown || w->nfree == 0) return NULL;
  sc_partitioner part = sc_kc_partitioner(m);
  if (part == SC_PART_GSPMD) return NULL;
  if (op->noperand_types != op->noperands || op->nresult_types != op->nresults) return NULL;
  const char *buf = m->buf;
  uint32_t start = op->pos.offset, end = op->end;
  if (end <= start || end > m->len) return NULL;
  sc_span text = {buf + start, end - start};

  /* The mesh the new manual computation is bound to. */
  const char *mesh_name = NULL, *mesh_decl = NULL;
  if (w->in_manual) {
    if (!w->mc->mesh || !w->mc->mesh->name.n) return NULL;
    mesh_name = sc_span_dup(a, w->mc->mesh->name);
  } else {
    const sc_mesh *e = w->mesh;
    if (!e) return NULL;
    if (e->op && e->name.n) mesh_name = sc_span_dup(a, e->name);
    else if (ctx->model && e == ctx->model->target) {
      const target_meshes *t = module_meshes_for_target(ctx);
      if (t->like) mesh_name = sc_span_dup(a, t->like->name);
      else if (t->other_named) return NULL; /* the module has another mesh */
      else {
        mesh_name = t->has_mesh_symbol ? "shardcheck_mesh" : "mesh";
        sc_astr axes = SC_ASTR_INIT(a);
        sc_astr_puts(&axes, "<[");
        for (uint32_t i = 0; i < e->naxes; i++)
          sc_astr_printf(&axes, "%s\"" SC_SPAN_FMT "\"=%" PRId64, i ? ", " : "", SC_SPAN_ARG(e->axes[i].name),
                         e->axes[i].size);
        sc_astr_puts(&axes, "]>");
        mesh_decl = sc_astr_str(&axes);
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
    results = sc_arena_strndup(a, text.p, (size_t)(eq - text.p));
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
  const char *pfx = sc_arena_printf(a, "sc%u_", op->id);
  /* Each list in one pass: re-printing a growing list per operand is quadratic in the operands. */
  sc_astr args_s = SC_ASTR_INIT(a), argdecls_s = SC_ASTR_INIT(a), otypes_s = SC_ASTR_INIT(a), ins_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < op->noperands; i++) {
    const char *sep = i ? ", " : "";
    sc_astr_printf(&args_s, "%s%%%sarg%u", sep, pfx, i);
    sc_astr_printf(&argdecls_s, "%s%%%sarg%u: " SC_SPAN_FMT, sep, pfx, i, SC_SPAN_ARG(op->operand_types[i]));
    sc_astr_printf(&otypes_s, "%s" SC_SPAN_FMT, sep, SC_SPAN_ARG(op->operand_types[i]));
    sc_astr_printf(&ins_s, "%s%s", sep, replicated_sharding(a, mesh_name, op->operand_types[i]));
  }
  sc_astr operands_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < op->noperands; i++)
    sc_astr_printf(&operands_s, "%s" SC_SPAN_FMT, i ? ", " : "", SC_SPAN_ARG(sc_op_operand_name(op, i)));
  sc_astr rtypes_s = SC_ASTR_INIT(a), outs_s = SC_ASTR_INIT(a), rets_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < op->nresults; i++) {
    sc_astr_printf(&rtypes_s, "%s" SC_SPAN_FMT, i ? ", " : "", SC_SPAN_ARG(op->result_types[i]));
    sc_astr_printf(&outs_s, "%s%s", i ? ", " : "", replicated_sharding(a, mesh_name, op->result_types[i]));
    if (op->nresults == 1) sc_astr_printf(&rets_s, "%%%sout", pfx);
    else sc_astr_printf(&rets_s, "%s%%%sout#%u", i ? ", " : "", pfx, i);
  }
  sc_astr axes_s = SC_ASTR_INIT(a);
  for (uint32_t i = 0; i < w->nfree; i++)
    sc_astr_printf(&axes_s, "%s\"" SC_SPAN_FMT "\"", i ? ", " : "", SC_SPAN_ARG(w->free[i]->name));
  const char *args = sc_astr_str(&args_s), *argdecls = sc_astr_str(&argdecls_s), *otypes = sc_astr_str(&otypes_s),
             *ins = sc_astr_str(&ins_s), *operands = sc_astr_str(&operands_s), *rtypes = sc_astr_str(&rtypes_s),
             *outs = sc_astr_str(&outs_s), *rets = sc_astr_str(&rets_s), *axes = sc_astr_str(&axes_s);

  /* A few small edits around the op, never its own text (a kernel body can be megabytes):
   *   header + new result names  replace "%1 = " (inserted before an op without results)
   *   block arguments            replace the operand list between '(' and ')'
   *   sdy.return + signature     inserted after the op */
  const char *inner_res = "";
  if (op->nresults == 1) inner_res = sc_arena_printf(a, "%%%sout = ", pfx);
  else if (op->nresults > 1) inner_res = sc_arena_printf(a, "%%%sout:%u = ", pfx, op->nresults);
  const char *ret = op->nresults ? sc_arena_printf(a, "sdy.return %s : %s", rets, rtypes) : "sdy.return";
  const char *ftype = op->nresults == 1 ? rtypes : sc_arena_printf(a, "(%s)", rtypes);
  const char *head = results ? sc_arena_printf(a, "%s = ", results) : "";
  const char *header =
      sc_arena_printf(a, "%ssdy.manual_computation(%s) in_shardings=[%s] out_shardings=[%s] manual_axes={%s} (%s) {\n%*s  %s",
                      head, operands, ins, outs, axes, argdecls, (int)indent, "", inner_res);
  const char *footer = sc_arena_printf(a, "\n%*s  %s\n%*s} : (%s) -> %s", (int)indent, "", ret, (int)indent, "",
                                       otypes, ftype);
  uint32_t head_len = op->nresults ? rest : 0; /* "%1 = " goes: the header re-states the results */
  uint32_t lp_off = (uint32_t)(lp + 1 - buf), rp_off = (uint32_t)(rp - buf);

  if (mesh_decl && !module_first_op(m)) return NULL;
  sc_fix *f = sc_diag_fix(ctx, d, title, NULL);
  if (mesh_decl) insert_mesh(ctx, f, mesh_name, mesh_decl);
  sc_fix_edit(ctx, f, start, head_len, header);
  if (op->noperands || rp_off > lp_off) sc_fix_edit(ctx, f, lp_off, rp_off - lp_off, args);
  sc_fix_edit(ctx, f, end, 0, footer);
  return f;
}

/* ---- Python names and values for snippets ---- */

const char *sc_kc_py_fn_name(sc_ctx *ctx) {
  const sc_op *mod = ctx->module ? ctx->module->module : NULL;
  sc_span n = mod ? sc_op_sym_name(mod) : sc_span_of(NULL, 0);
  if (n.n > 4 && !memcmp(n.p, "jit_", 4)) n.p += 4, n.n -= 4;
  else if (n.n > 5 && !memcmp(n.p, "pjit_", 5)) n.p += 5, n.n -= 5;
  bool ident = n.n > 0 && n.n < 64 && !isdigit((unsigned char)n.p[0]);
  for (uint32_t i = 0; ident && i < n.n; i++) ident = isalnum((unsigned char)n.p[i]) || n.p[i] == '_';
  return ident ? sc_span_dup(ctx->arena, n) : "f";
}

/* jnp dtype of an MLIR element type (f32, bf16, i32, i1, ui8) or an HLO one (f32, s32, pred, u8). */
static const char *py_dtype(sc_span t) {
  static const char *const map[][2] = {
      {"f32", "float32"}, {"f16", "float16"}, {"bf16", "bfloat16"}, {"f64", "float64"}, {"i1", "bool_"},
      {"pred", "bool_"},  {"i8", "int8"},     {"s8", "int8"},       {"i16", "int16"},   {"s16", "int16"},
      {"i32", "int32"},   {"s32", "int32"},   {"i64", "int64"},     {"s64", "int64"},   {"ui8", "uint8"},
      {"u8", "uint8"},    {"ui32", "uint32"}, {"u32", "uint32"},    {"ui16", "uint16"}, {"u16", "uint16"}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (sc_span_eq(t, map[i][0])) return map[i][1];
  return NULL;
}

/* The element type of `tensor<8x16xf32>` / `f32[8,16]{1,0}`. */
static sc_span element_type(sc_span type) {
  const char *p = type.p, *e = type.p + type.n;
  if (type.n > 7 && !memcmp(p, "tensor<", 7)) {
    const char *close = memchr(p, '>', type.n), *start = p + 7;
    if (!close) return sc_span_of(NULL, 0);
    for (const char *q = p + 7; q < close; q++)
      if (*q == 'x') start = q + 1;
    const char *stop = start;
    while (stop < close && *stop != ',') stop++;
    return sc_span_of(start, (uint32_t)(stop - start));
  }
  const char *b = memchr(p, '[', type.n);
  return b ? sc_span_of(p, (uint32_t)(b - p)) : sc_span_of(p, (uint32_t)(e - p));
}

const char *sc_kc_py_struct(sc_arena *a, sc_span type) {
  sc_shape sh;
  const char *dt = py_dtype(element_type(type));
  if (!dt || !sc_parse_shape(a, type, &sh) || sh.kind != SC_SHAPE_ARRAY) return NULL;
  sc_astr dims = SC_ASTR_INIT(a);
  for (int32_t d = 0; d < sh.rank; d++) {
    if (sh.dims[d] < 0) return NULL;
    sc_astr_printf(&dims, "%s%" PRId64, d ? ", " : "", sh.dims[d]);
  }
  return sc_arena_printf(a, "jax.ShapeDtypeStruct((%s%s), jnp.%s)", sc_astr_str(&dims), sh.rank == 1 ? "," : "", dt);
}

const char *sc_kc_py_arg_structs(sc_ctx *ctx) {
  const sc_op *f = ctx->module ? ctx->module->entry : NULL;
  if (!f) return NULL;
  const sc_block *body = ru_body(f);
  uint32_t n = body ? body->nargs : 0;
  if (n > 16) return NULL;
  const char *out = "";
  for (uint32_t i = 0, k = 0; i < n; i++) {
    if (sc_attrs_find(sc_value_attrs(body->args[i]), "jax.global_constant")) continue; /* not the user's argument */
    const char *st = sc_kc_py_struct(ctx->arena, ru_arg_type(f, i));
    if (!st) return NULL;
    out = sc_arena_printf(ctx->arena, "%s%s%s", out, k++ ? ", " : "", st);
  }
  return out;
}
