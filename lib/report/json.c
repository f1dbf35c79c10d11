/* json.c — the report JSON (shardcheck.report.v1). Its bytes are a contract (the daemon, the Python
 * package and the CLI compare them): change it only with a schema bump. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "shardcheck.h"
#include "util/strbuf.h"

/* A JSON string from text that may hold invalid UTF-8 (names and messages quote the input): invalid
 * bytes become U+FFFD so nothing is silently dropped. */
json_t *rp_jstr(const char *s) {
  json_t *j = json_string(s);
  if (j) return j;
  strbuf b = {0};
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x80) sb_put(&b, (const char *)p, 1);
    else sb_puts(&b, "\xef\xbf\xbd");
  }
  char *t = sb_take(&b);
  j = json_string(t ? t : "");
  free(t);
  return j ? j : json_string("");
}

static json_t *str_or_null(const char *s) { return s ? rp_jstr(s) : json_null(); }

/* A context value: a number as a JSON number ("31" -> 31, canonical decimal integers only, so readers
 * turn it back into the same text), anything else as a string. */
static json_t *context_value(const char *s) {
  if (!s) return json_null();
  const char *p = s + (*s == '-');
  size_t n = strlen(p);
  bool number = n >= 1 && n <= 18 && (p[0] != '0' || n == 1) && !(s[0] == '-' && !strcmp(p, "0"));
  for (size_t i = 0; number && i < n; i++) number = p[i] >= '0' && p[i] <= '9';
  return number ? json_integer((json_int_t)strtoll(s, NULL, 10)) : rp_jstr(s);
}

/* A module location (1-based line/column, byte offset) and, when known, the end of its span. */
static json_t *location_json(const sc_report *r, uint32_t line, uint32_t col, uint32_t offset, uint32_t end_line,
                             uint32_t end_col, uint32_t end_offset, const char *function, const char *op) {
  json_t *loc = json_object();
  /* Bytecode has no lines: line/column are null and op_path names the op instead. */
  json_object_set_new(loc, "line", r->has_lines ? json_integer(line) : json_null());
  json_object_set_new(loc, "column", r->has_lines ? json_integer(col) : json_null());
  json_object_set_new(loc, "offset", json_integer(offset));
  if (end_offset && r->has_lines) {
    json_object_set_new(loc, "end_line", json_integer(end_line));
    json_object_set_new(loc, "end_column", json_integer(end_col));
    json_object_set_new(loc, "end_offset", json_integer(end_offset));
  }
  if (function) json_object_set_new(loc, "function", rp_jstr(function));
  if (op) json_object_set_new(loc, "op", rp_jstr(op));
  return loc;
}

/* The Python source location from debug info, or null. */
static json_t *source_json(bool has, const char *file, uint32_t line, uint32_t col) {
  if (!has) return json_null();
  json_t *s = json_object();
  json_object_set_new(s, "file", rp_jstr(file));
  json_object_set_new(s, "line", json_integer(line));
  json_object_set_new(s, "column", json_integer(col));
  return s;
}

/* A related site: another place of the same mistake. */
static json_t *related_json(const sc_report *rep, const sc_related *r) {
  json_t *o = json_object();
  if (r->code) json_object_set_new(o, "code", rp_jstr(r->code));
  json_object_set_new(o, "message", str_or_null(r->message));
  json_object_set_new(o, "location", location_json(rep, r->line, r->col, r->offset, r->end_line, r->end_col, r->end_offset,
                                                   r->function, r->op));
  json_object_set_new(o, "source_location", source_json(r->has_source, r->source_file, r->source_line, r->source_col));
  return o;
}

static json_t *diag_json(const sc_report *r, const sc_diag *d) {
  json_t *o = json_object();
  json_object_set_new(o, "code", rp_jstr(d->code));
  json_object_set_new(o, "rule", rp_jstr(d->rule));
  json_object_set_new(o, "severity", rp_jstr(sc_severity_name(d->severity)));
  json_object_set_new(o, "message", rp_jstr(d->message));
  json_t *loc = location_json(r, d->line, d->col, d->offset, d->end_line, d->end_col, d->end_offset, d->function, d->op);
  if (d->op_path) json_object_set_new(loc, "op_path", rp_jstr(d->op_path));
  if (d->target) json_object_set_new(loc, "target", rp_jstr(d->target));
  json_object_set_new(o, "location", loc);
  json_object_set_new(o, "source_location", source_json(d->has_source, d->source_file, d->source_line, d->source_col));
  json_t *ctx = json_object();
  for (size_t i = 0; i < d->ncontext; i++) {
    const sc_context_entry *e = &d->context[i];
    if (e->is_list) {
      json_t *arr = json_array();
      for (size_t k = 0; k < e->nvalues; k++) json_array_append_new(arr, context_value(e->values[k]));
      json_object_set_new(ctx, e->key, arr);
    } else {
      json_object_set_new(ctx, e->key, context_value(e->nvalues ? e->values[0] : NULL));
    }
  }
  json_object_set_new(o, "context", ctx);
  if (d->nrelated) {
    json_t *rel = json_array();
    for (size_t i = 0; i < d->nrelated; i++) json_array_append_new(rel, related_json(r, &d->related[i]));
    json_object_set_new(o, "related", rel);
  }
  json_t *fixes = json_array();
  for (size_t i = 0; i < d->nfixes; i++) {
    const sc_fix *f = &d->fixes[i];
    json_t *fo = json_object();
    json_object_set_new(fo, "title", rp_jstr(f->title ? f->title : ""));
    if (f->note) json_object_set_new(fo, "note", rp_jstr(f->note));
    json_object_set_new(fo, "applicability", rp_jstr(f->machine ? "machine" : "manual"));
    json_object_set_new(fo, "snippet", str_or_null(f->snippet));
    json_t *edits = json_array();
    for (size_t k = 0; k < f->nedits; k++) {
      const sc_edit *e = &f->edits[k];
      json_t *eo = json_object();
      json_object_set_new(eo, "offset", json_integer(e->offset));
      json_object_set_new(eo, "length", json_integer(e->length));
      json_object_set_new(eo, "line", json_integer(e->line));
      json_object_set_new(eo, "column", json_integer(e->col));
      json_object_set_new(eo, "end_line", json_integer(e->end_line));
      json_object_set_new(eo, "end_column", json_integer(e->end_col));
      json_object_set_new(eo, "replacement", rp_jstr(e->replacement ? e->replacement : ""));
      json_array_append_new(edits, eo);
    }
    json_object_set_new(fo, "edits", edits);
    json_array_append_new(fixes, fo);
  }
  json_object_set_new(o, "fixes", fixes);
  return o;
}

static json_t *bytes_or_null(int64_t n) { return n >= 0 ? json_integer((json_int_t)n) : json_null(); }

json_t *rp_cost_json(const sc_report *r) {
  const sc_cost_report *c = &r->cost;
  if (!c->computed) return json_null();
  json_t *memory = json_object();
  json_object_set_new(memory, "device_memory_bytes", bytes_or_null(c->device_memory_bytes));
  json_object_set_new(memory, "device_kind", c->device_kind ? rp_jstr(c->device_kind) : json_null());
  json_t *per = json_object();
  json_object_set_new(per, "arguments_bytes", json_integer((json_int_t)c->arguments_bytes));
  json_object_set_new(per, "results_bytes", json_integer((json_int_t)c->results_bytes));
  json_object_set_new(per, "donated_bytes", json_integer((json_int_t)c->donated_bytes));
  json_object_set_new(per, "peak_bytes_lower_bound", json_integer((json_int_t)c->peak_bytes_lower_bound));
  json_object_set_new(memory, "per_device", per);
  json_t *largest = json_array();
  for (size_t i = 0; i < c->nlargest; i++) {
    const sc_cost_tensor *t = &c->largest[i];
    json_t *o = json_object();
    json_object_set_new(o, "name", rp_jstr(t->name));
    json_object_set_new(o, "kind", rp_jstr(t->kind));
    json_object_set_new(o, "type", rp_jstr(t->type ? t->type : ""));
    json_object_set_new(o, "sharding", str_or_null(t->sharding));
    json_object_set_new(o, "global_bytes", json_integer((json_int_t)t->global_bytes));
    json_object_set_new(o, "bytes_per_device", json_integer((json_int_t)t->bytes_per_device));
    json_object_set_new(o, "donated", json_boolean(t->donated));
    json_array_append_new(largest, o);
  }
  json_object_set_new(memory, "largest", largest);
  json_t *cost = json_object();
  json_object_set_new(cost, "memory", memory);
  json_t *collectives = json_array();
  for (size_t i = 0; i < c->ncollectives; i++) {
    const sc_cost_collective *k = &c->collectives[i];
    json_t *o = json_object(), *loc = json_object(), *axes = json_array();
    json_object_set_new(loc, "line", k->line ? json_integer(k->line) : json_null());
    json_object_set_new(loc, "column", k->line ? json_integer(k->col) : json_null());
    json_object_set_new(loc, "function", str_or_null(k->function));
    json_object_set_new(loc, "op", str_or_null(k->op));
    json_object_set_new(o, "location", loc);
    json_object_set_new(o, "kind", rp_jstr(k->kind));
    for (size_t j = 0; j < k->naxes; j++) json_array_append_new(axes, rp_jstr(k->axes[j]));
    json_object_set_new(o, "axes", axes);
    json_object_set_new(o, "bytes_per_device", json_integer((json_int_t)k->bytes_per_device));
    json_object_set_new(o, "reason", rp_jstr(k->reason ? k->reason : ""));
    json_array_append_new(collectives, o);
  }
  /* NULL: not computed (no propagation, docs/cost.md#collectives); [] = none */
  json_object_set_new(cost, "collectives", c->collectives ? collectives : (json_decref(collectives), json_null()));
  return cost;
}

char *sc_report_json(const sc_report *r, bool pretty) {
  json_t *root = json_object();
  json_object_set_new(root, "schema", rp_jstr(SC_REPORT_SCHEMA));
  json_t *tool = json_object();
  json_object_set_new(tool, "name", json_string("shardcheck"));
  json_object_set_new(tool, "version", rp_jstr(SC_VERSION));
  json_object_set_new(tool, "rules_version", rp_jstr(sc_rules_version()));
  json_object_set_new(root, "tool", tool);
  json_t *input = json_object();
  json_object_set_new(input, "name", rp_jstr(r->input_name ? r->input_name : "<stdin>"));
  json_object_set_new(input, "format", rp_jstr(sc_format_name(r->format)));
  json_object_set_new(input, "bytes", json_integer((json_int_t)r->bytes));
  json_object_set_new(input, "sha256", rp_jstr(r->sha256));
  json_object_set_new(input, "functions", json_integer((json_int_t)r->functions));
  json_object_set_new(input, "ops", json_integer((json_int_t)r->ops));
  json_object_set_new(root, "input", input);
  json_t *mesh = json_object();
  json_object_set_new(mesh, "source", rp_jstr(r->mesh_source ? r->mesh_source : "none"));
  json_t *axes = json_array();
  for (size_t i = 0; i < r->mesh_naxes; i++) {
    json_t *a = json_object();
    json_object_set_new(a, "name", rp_jstr(r->mesh_axes[i].name));
    json_object_set_new(a, "size", json_integer(r->mesh_axes[i].size));
    json_object_set_new(a, "type", rp_jstr(sc_axis_type_name(r->mesh_axes[i].type)));
    json_array_append_new(axes, a);
  }
  json_object_set_new(mesh, "axes", axes);
  json_object_set_new(mesh, "devices", json_integer(r->mesh_devices));
  json_object_set_new(mesh, "platform", rp_jstr(sc_platform_name(r->platform)));
  json_object_set_new(root, "mesh", mesh);
  json_t *summary = json_object();
  json_object_set_new(summary, "errors", json_integer((json_int_t)r->errors));
  json_object_set_new(summary, "warnings", json_integer((json_int_t)r->warnings));
  json_object_set_new(summary, "notes", json_integer((json_int_t)r->notes));
  json_object_set_new(root, "summary", summary);
  json_t *diags = json_array();
  for (size_t i = 0; i < r->ndiags; i++) json_array_append_new(diags, diag_json(r, &r->diags[i]));
  json_object_set_new(root, "diagnostics", diags);
  json_object_set_new(root, "cost", rp_cost_json(r));
  if (r->failure) json_object_set_new(root, "failure", rp_jstr(r->failure));
  char *s = json_dumps(root, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER);
  json_decref(root);
  return s;
}

