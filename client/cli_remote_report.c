/* cli_remote_report.c — a daemon's report JSON (shardcheck.report.v1) back into an sc_report, so that
 * `check --server` filters, gates and renders exactly like local mode (sc_report_json of the result
 * reproduces the daemon's JSON byte for byte). Fields newer daemons add (end positions, op paths)
 * are read when present. */
#include <jansson.h>
#include <string.h>

#include "cli.h"

static const char *dup_str(sc_arena *a, json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? ar_strdup(a, s) : NULL;
}

static uint32_t get_u32(json_t *o, const char *key) {
  json_int_t v = json_integer_value(json_object_get(o, key));
  return v > 0 && v <= (json_int_t)UINT32_MAX ? (uint32_t)v : 0;
}

static sc_severity severity_of(const char *s) {
  sc_severity sev = SC_SEV_NOTE;
  if (s) parse_severity(s, &sev);
  return sev;
}

static void read_context(sc_arena *a, json_t *ctx, sc_diag *d) {
  d->ncontext = json_object_size(ctx);
  d->context = ar_calloc(a, d->ncontext ? d->ncontext : 1, sizeof *d->context);
  size_t i = 0;
  const char *key;
  json_t *v;
  json_object_foreach(ctx, key, v) {
    sc_context_entry *e = &d->context[i++];
    e->key = ar_strdup(a, key);
    e->is_list = json_is_array(v);
    e->nvalues = e->is_list ? json_array_size(v) : 1;
    e->values = ar_calloc(a, e->nvalues ? e->nvalues : 1, sizeof *e->values);
    for (size_t k = 0; k < e->nvalues; k++) {
      json_t *item = e->is_list ? json_array_get(v, k) : v;
      const char *s = json_string_value(item);
      if (json_is_integer(item)) /* numbers are written as numbers; the report keeps their text */
        e->values[k] = ar_printf(a, "%" JSON_INTEGER_FORMAT, json_integer_value(item));
      else
        e->values[k] = s ? ar_strdup(a, s) : NULL;
    }
  }
}

static void read_fixes(sc_arena *a, json_t *fixes, sc_diag *d) {
  d->nfixes = json_array_size(fixes);
  d->fixes = ar_calloc(a, d->nfixes ? d->nfixes : 1, sizeof *d->fixes);
  for (size_t i = 0; i < d->nfixes; i++) {
    json_t *fo = json_array_get(fixes, i);
    sc_fix *f = &d->fixes[i];
    f->title = dup_str(a, fo, "title");
    f->note = dup_str(a, fo, "note");
    f->snippet = dup_str(a, fo, "snippet");
    const char *app = json_string_value(json_object_get(fo, "applicability"));
    f->machine = app && !strcmp(app, "machine");
    json_t *edits = json_object_get(fo, "edits");
    f->nedits = json_array_size(edits);
    f->edits = ar_calloc(a, f->nedits ? f->nedits : 1, sizeof *f->edits);
    for (size_t k = 0; k < f->nedits; k++) {
      json_t *eo = json_array_get(edits, k);
      sc_edit *e = &f->edits[k];
      e->offset = get_u32(eo, "offset"), e->length = get_u32(eo, "length");
      e->line = get_u32(eo, "line"), e->col = get_u32(eo, "column");
      e->end_line = get_u32(eo, "end_line"), e->end_col = get_u32(eo, "end_column");
      e->replacement = dup_str(a, eo, "replacement");
    }
  }
}

/* The other sites of the same mistake (the report's "related" array). */
static void read_related(sc_arena *a, json_t *rel, sc_diag *d) {
  d->nrelated = json_array_size(rel);
  d->related = d->nrelated ? ar_calloc(a, d->nrelated, sizeof *d->related) : NULL;
  for (size_t i = 0; i < d->nrelated; i++) {
    json_t *ro = json_array_get(rel, i), *loc = json_object_get(ro, "location"), *src = json_object_get(ro, "source_location");
    sc_related *r = &d->related[i];
    r->code = dup_str(a, ro, "code");
    r->message = dup_str(a, ro, "message");
    r->line = get_u32(loc, "line"), r->col = get_u32(loc, "column"), r->offset = get_u32(loc, "offset");
    r->end_line = get_u32(loc, "end_line"), r->end_col = get_u32(loc, "end_column");
    r->end_offset = get_u32(loc, "end_offset");
    r->function = dup_str(a, loc, "function");
    r->op = dup_str(a, loc, "op");
    if (json_is_object(src)) {
      r->has_source = true;
      r->source_file = dup_str(a, src, "file");
      r->source_line = get_u32(src, "line"), r->source_col = get_u32(src, "column");
    }
  }
}

static void read_diag(sc_arena *a, json_t *o, sc_diag *d) {
  d->code = dup_str(a, o, "code");
  d->rule = dup_str(a, o, "rule");
  d->severity = severity_of(json_string_value(json_object_get(o, "severity")));
  d->message = dup_str(a, o, "message");
  json_t *loc = json_object_get(o, "location");
  d->line = get_u32(loc, "line"), d->col = get_u32(loc, "column"), d->offset = get_u32(loc, "offset");
  d->end_line = get_u32(loc, "end_line"), d->end_col = get_u32(loc, "end_column");
  d->end_offset = get_u32(loc, "end_offset");
  d->op_path = dup_str(a, loc, "op_path");
  d->function = dup_str(a, loc, "function");
  d->op = dup_str(a, loc, "op");
  d->target = dup_str(a, loc, "target");
  json_t *src = json_object_get(o, "source_location");
  if (json_is_object(src)) {
    d->has_source = true;
    d->source_file = dup_str(a, src, "file");
    d->source_line = get_u32(src, "line"), d->source_col = get_u32(src, "column");
  }
  read_context(a, json_object_get(o, "context"), d);
  read_related(a, json_object_get(o, "related"), d);
  read_fixes(a, json_object_get(o, "fixes"), d);
}

static sc_format format_of(const char *s) {
  static const sc_format all[] = {SC_FMT_STABLEHLO, SC_FMT_HLO, SC_FMT_BYTECODE, SC_FMT_EXPORTED};
  for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
    if (!strcmp(s, sc_format_name(all[i]))) return all[i];
  return SC_FMT_AUTO;
}

static void read_mesh(sc_arena *a, json_t *mesh, sc_report *r) {
  r->mesh_source = dup_str(a, mesh, "source");
  json_t *axes = json_object_get(mesh, "axes");
  r->mesh_naxes = json_array_size(axes);
  r->mesh_axes = r->mesh_naxes ? ar_calloc(a, r->mesh_naxes, sizeof *r->mesh_axes) : NULL;
  for (size_t i = 0; i < r->mesh_naxes; i++) {
    json_t *ax = json_array_get(axes, i);
    r->mesh_axes[i].name = dup_str(a, ax, "name");
    r->mesh_axes[i].size = json_integer_value(json_object_get(ax, "size"));
    const char *t = json_string_value(json_object_get(ax, "type"));
    r->mesh_axes[i].type = t && !strcmp(t, "explicit") ? SC_AXIS_EXPLICIT : t && !strcmp(t, "manual") ? SC_AXIS_MANUAL : SC_AXIS_AUTO;
  }
  r->mesh_devices = json_integer_value(json_object_get(mesh, "devices"));
  const char *p = json_string_value(json_object_get(mesh, "platform"));
  if (!p || sc_platform_parse(p, &r->platform)) r->platform = SC_PLATFORM_UNSPECIFIED;
}

static int64_t bytes_or_unknown(json_t *v) { return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1; }

static void read_largest(sc_arena *a, json_t *list, sc_cost_report *c) {
  c->nlargest = json_array_size(list);
  c->largest = ar_calloc(a, c->nlargest ? c->nlargest : 1, sizeof *c->largest);
  for (size_t i = 0; i < c->nlargest; i++) {
    json_t *o = json_array_get(list, i);
    sc_cost_tensor *t = &c->largest[i];
    t->name = dup_str(a, o, "name");
    t->kind = dup_str(a, o, "kind");
    t->type = dup_str(a, o, "type");
    t->sharding = dup_str(a, o, "sharding");
    t->global_bytes = (int64_t)json_integer_value(json_object_get(o, "global_bytes"));
    t->bytes_per_device = (int64_t)json_integer_value(json_object_get(o, "bytes_per_device"));
    t->donated = json_is_true(json_object_get(o, "donated"));
  }
}

static void read_collectives(sc_arena *a, json_t *list, sc_cost_report *c) {
  if (!json_is_array(list)) return; /* null: not computed */
  c->ncollectives = json_array_size(list);
  c->collectives = ar_calloc(a, c->ncollectives ? c->ncollectives : 1, sizeof *c->collectives);
  for (size_t i = 0; i < c->ncollectives; i++) {
    json_t *o = json_array_get(list, i), *loc = json_object_get(o, "location"), *axes = json_object_get(o, "axes");
    sc_cost_collective *k = &c->collectives[i];
    k->line = get_u32(loc, "line"), k->col = get_u32(loc, "column");
    k->function = dup_str(a, loc, "function");
    k->op = dup_str(a, loc, "op");
    k->kind = dup_str(a, o, "kind");
    k->naxes = json_array_size(axes);
    k->axes = ar_calloc(a, k->naxes ? k->naxes : 1, sizeof *k->axes);
    for (size_t j = 0; j < k->naxes; j++) {
      const char *name = json_string_value(json_array_get(axes, j));
      k->axes[j] = ar_strdup(a, name ? name : "");
    }
    k->bytes_per_device = (int64_t)json_integer_value(json_object_get(o, "bytes_per_device"));
    k->reason = dup_str(a, o, "reason");
  }
}

/* "cost": the inverse of the library's rendering (null: not computed). */
static void read_cost(sc_arena *a, json_t *cost, sc_cost_report *c) {
  json_t *memory = json_object_get(cost, "memory"), *per = json_object_get(memory, "per_device");
  if (!json_is_object(memory)) return;
  c->computed = true;
  c->device_memory_bytes = bytes_or_unknown(json_object_get(memory, "device_memory_bytes"));
  c->device_kind = dup_str(a, memory, "device_kind");
  c->arguments_bytes = (int64_t)json_integer_value(json_object_get(per, "arguments_bytes"));
  c->results_bytes = (int64_t)json_integer_value(json_object_get(per, "results_bytes"));
  c->donated_bytes = (int64_t)json_integer_value(json_object_get(per, "donated_bytes"));
  c->peak_bytes_lower_bound = (int64_t)json_integer_value(json_object_get(per, "peak_bytes_lower_bound"));
  read_largest(a, json_object_get(memory, "largest"), c);
  read_collectives(a, json_object_get(cost, "collectives"), c);
}

sc_report *report_from_json(sc_arena *a, const char *text, const char *buf, size_t len, const char **error) {
  json_error_t jerr;
  json_t *root = json_loads(text, 0, &jerr);
  const char *schema = json_string_value(json_object_get(root, "schema"));
  if (!root || !schema || strcmp(schema, SC_REPORT_SCHEMA) != 0) {
    *error = "the daemon's report is not a shardcheck.report.v1 object";
    json_decref(root);
    return NULL;
  }
  sc_report *r = ar_calloc(a, 1, sizeof *r);
  json_t *in = json_object_get(root, "input");
  r->input_name = dup_str(a, in, "name");
  r->format = format_of(json_string_value(json_object_get(in, "format")));
  r->has_lines = r->format != SC_FMT_BYTECODE && r->format != SC_FMT_EXPORTED;
  r->buf = buf;
  r->bytes = (size_t)json_integer_value(json_object_get(in, "bytes"));
  if (r->bytes != len) r->buf = NULL; /* not the bytes we sent: no source lines */
  const char *sha = json_string_value(json_object_get(in, "sha256"));
  snprintf(r->sha256, sizeof r->sha256, "%s", sha ? sha : "");
  r->functions = (size_t)json_integer_value(json_object_get(in, "functions"));
  r->ops = (size_t)json_integer_value(json_object_get(in, "ops"));
  read_mesh(a, json_object_get(root, "mesh"), r);
  json_t *sum = json_object_get(root, "summary");
  r->errors = (size_t)json_integer_value(json_object_get(sum, "errors"));
  r->warnings = (size_t)json_integer_value(json_object_get(sum, "warnings"));
  r->notes = (size_t)json_integer_value(json_object_get(sum, "notes"));
  json_t *diags = json_object_get(root, "diagnostics");
  r->ndiags = json_array_size(diags);
  r->diags = ar_calloc(a, r->ndiags ? r->ndiags : 1, sizeof *r->diags);
  for (size_t i = 0; i < r->ndiags; i++) read_diag(a, json_array_get(diags, i), &r->diags[i]);
  r->failure = dup_str(a, root, "failure");
  read_cost(a, json_object_get(root, "cost"), &r->cost);
  json_decref(root);
  return r;
}
