/* report.c — emitters: the report JSON (shardcheck.report.v1), human text (gcc/rustc style with the
 * source line and a caret) and SARIF 2.1.0. All return malloc'd strings. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"
#include "shardcheck.h"
#include "util/strbuf.h"

/* A JSON string from text that may hold invalid UTF-8 (names and messages quote the input): invalid
 * bytes become U+FFFD so nothing is silently dropped. */
static json_t *jstr(const char *s) {
  json_t *j = json_string(s);
  if (j) return j;
  sc_strbuf b = {0};
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x80) sc_strbuf_put(&b, (const char *)p, 1);
    else sc_strbuf_puts(&b, "\xef\xbf\xbd");
  }
  char *t = sc_strbuf_take(&b);
  j = json_string(t ? t : "");
  free(t);
  return j ? j : json_string("");
}

static json_t *str_or_null(const char *s) { return s ? jstr(s) : json_null(); }

static json_t *diag_json(const sc_report *r, const sc_diag *d) {
  json_t *o = json_object();
  json_object_set_new(o, "code", jstr(d->code));
  json_object_set_new(o, "rule", jstr(d->rule));
  json_object_set_new(o, "severity", jstr(sc_severity_name(d->severity)));
  json_object_set_new(o, "message", jstr(d->message));
  json_t *loc = json_object();
  /* Bytecode has no lines: line/column are null and op_path names the op instead. */
  json_object_set_new(loc, "line", r->has_lines ? json_integer(d->line) : json_null());
  json_object_set_new(loc, "column", r->has_lines ? json_integer(d->col) : json_null());
  json_object_set_new(loc, "offset", json_integer(d->offset));
  if (d->op_path) json_object_set_new(loc, "op_path", jstr(d->op_path));
  if (d->function) json_object_set_new(loc, "function", jstr(d->function));
  if (d->op) json_object_set_new(loc, "op", jstr(d->op));
  if (d->target) json_object_set_new(loc, "target", jstr(d->target));
  json_object_set_new(o, "location", loc);
  if (d->has_source) {
    json_t *s = json_object();
    json_object_set_new(s, "file", jstr(d->source_file));
    json_object_set_new(s, "line", json_integer(d->source_line));
    json_object_set_new(s, "column", json_integer(d->source_col));
    json_object_set_new(o, "source_location", s);
  } else {
    json_object_set_new(o, "source_location", json_null());
  }
  json_t *ctx = json_object();
  for (size_t i = 0; i < d->ncontext; i++) {
    const sc_context_entry *e = &d->context[i];
    if (e->is_list) {
      json_t *arr = json_array();
      for (size_t k = 0; k < e->nvalues; k++) json_array_append_new(arr, str_or_null(e->values[k]));
      json_object_set_new(ctx, e->key, arr);
    } else {
      json_object_set_new(ctx, e->key, str_or_null(e->nvalues ? e->values[0] : NULL));
    }
  }
  json_object_set_new(o, "context", ctx);
  json_t *fixes = json_array();
  for (size_t i = 0; i < d->nfixes; i++) {
    const sc_fix *f = &d->fixes[i];
    json_t *fo = json_object();
    json_object_set_new(fo, "title", jstr(f->title ? f->title : ""));
    json_object_set_new(fo, "applicability", jstr(f->machine ? "machine" : "manual"));
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
      json_object_set_new(eo, "replacement", jstr(e->replacement ? e->replacement : ""));
      json_array_append_new(edits, eo);
    }
    json_object_set_new(fo, "edits", edits);
    json_array_append_new(fixes, fo);
  }
  json_object_set_new(o, "fixes", fixes);
  return o;
}

char *sc_report_json(const sc_report *r, bool pretty) {
  json_t *root = json_object();
  json_object_set_new(root, "schema", jstr(SC_REPORT_SCHEMA));
  json_t *tool = json_object();
  json_object_set_new(tool, "name", json_string("shardcheck"));
  json_object_set_new(tool, "version", jstr(SC_VERSION));
  json_object_set_new(tool, "rules_version", jstr(sc_rules_version()));
  json_object_set_new(root, "tool", tool);
  json_t *input = json_object();
  json_object_set_new(input, "name", jstr(r->input_name ? r->input_name : "<stdin>"));
  json_object_set_new(input, "format", jstr(sc_format_name(r->format)));
  json_object_set_new(input, "bytes", json_integer((json_int_t)r->bytes));
  json_object_set_new(input, "sha256", jstr(r->sha256));
  json_object_set_new(input, "functions", json_integer((json_int_t)r->functions));
  json_object_set_new(input, "ops", json_integer((json_int_t)r->ops));
  json_object_set_new(root, "input", input);
  json_t *mesh = json_object();
  json_object_set_new(mesh, "source", jstr(r->mesh_source ? r->mesh_source : "none"));
  json_t *axes = json_array();
  for (size_t i = 0; i < r->mesh_naxes; i++) {
    json_t *a = json_object();
    json_object_set_new(a, "name", jstr(r->mesh_axes[i].name));
    json_object_set_new(a, "size", json_integer(r->mesh_axes[i].size));
    json_object_set_new(a, "type", jstr(sc_axis_type_name(r->mesh_axes[i].type)));
    json_array_append_new(axes, a);
  }
  json_object_set_new(mesh, "axes", axes);
  json_object_set_new(mesh, "devices", json_integer(r->mesh_devices));
  json_object_set_new(mesh, "platform", jstr(sc_platform_name(r->platform)));
  json_object_set_new(root, "mesh", mesh);
  json_t *summary = json_object();
  json_object_set_new(summary, "errors", json_integer((json_int_t)r->errors));
  json_object_set_new(summary, "warnings", json_integer((json_int_t)r->warnings));
  json_object_set_new(summary, "notes", json_integer((json_int_t)r->notes));
  json_object_set_new(root, "summary", summary);
  json_t *diags = json_array();
  for (size_t i = 0; i < r->ndiags; i++) json_array_append_new(diags, diag_json(r, &r->diags[i]));
  json_object_set_new(root, "diagnostics", diags);
  if (r->failure) json_object_set_new(root, "failure", jstr(r->failure));
  char *s = json_dumps(root, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER);
  json_decref(root);
  return s;
}

/* ---- text ---- */

static const char *sev_color(sc_severity s) {
  return s == SC_SEV_ERROR ? "\033[1;31m" : s == SC_SEV_WARNING ? "\033[1;35m" : "\033[1;36m";
}

/* The source line containing `offset`, without its newline. */
static void line_at(const sc_report *r, uint32_t offset, const char **start, size_t *n) {
  const char *b = r->buf, *e = r->buf + r->bytes;
  if (!b || offset > r->bytes) {
    *start = "", *n = 0;
    return;
  }
  const char *p = b + offset;
  while (p > b && p[-1] != '\n') p--;
  const char *q = memchr(b + offset, '\n', (size_t)(e - (b + offset)));
  *start = p;
  *n = (size_t)((q ? q : e) - p);
}

char *sc_report_text(const sc_report *r, bool color) {
  sc_strbuf out = {0};
  const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "", *blue = color ? "\033[1;34m" : "";
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    if (!r->has_lines && d->has_source) /* no lines: the Python location is the primary one */
      sc_strbuf_printf(&out, "%s%s:%u:%u:%s %s%s:%s %s%s [%s]%s\n", bold, d->source_file, d->source_line, d->source_col,
                       reset, color ? sev_color(d->severity) : "", sc_severity_name(d->severity), reset, bold,
                       d->message, d->code, reset);
    else if (!r->has_lines)
      sc_strbuf_printf(&out, "%s%s:%s%s %s%s:%s %s%s [%s]%s\n", bold, r->input_name, d->op_path ? d->op_path : "",
                       reset, color ? sev_color(d->severity) : "", sc_severity_name(d->severity), reset, bold,
                       d->message, d->code, reset);
    else
      sc_strbuf_printf(&out, "%s%s:%u:%u:%s %s%s:%s %s%s [%s]%s\n", bold, r->input_name, d->line, d->col, reset,
                       color ? sev_color(d->severity) : "", sc_severity_name(d->severity), reset, bold, d->message,
                       d->code, reset);
    if (!r->has_lines && d->has_source)
      sc_strbuf_printf(&out, "      %s=%s in: %s op %s%s%s\n", blue, reset, r->input_name, d->op_path ? d->op_path : "?",
                       d->op ? " " : "", d->op ? d->op : "");
    if (d->line) {
      const char *ls;
      size_t n;
      line_at(r, d->offset, &ls, &n);
      if (n > 200) n = 200; /* long single-line modules: show the start only */
      sc_strbuf_printf(&out, "%s%5u |%s %.*s\n", blue, d->line, reset, (int)n, ls);
      sc_strbuf_printf(&out, "%s      |%s ", blue, reset);
      for (uint32_t c = 1; c < d->col && c <= n; c++) sc_strbuf_puts(&out, ls[c - 1] == '\t' ? "\t" : " ");
      sc_strbuf_printf(&out, "%s^%s\n", color ? sev_color(d->severity) : "", reset);
    }
    if (!r->has_lines) {
      /* the source location is already the primary one */
    } else if (d->has_source && d->source_col) /* column 0: the debug info has a line only (HLO metadata) */
      sc_strbuf_printf(&out, "      %s=%s source: %s:%u:%u\n", blue, reset, d->source_file, d->source_line, d->source_col);
    else if (d->has_source)
      sc_strbuf_printf(&out, "      %s=%s source: %s:%u\n", blue, reset, d->source_file, d->source_line);
    for (size_t k = 0; k < d->nfixes; k++) {
      const sc_fix *f = &d->fixes[k];
      sc_strbuf_printf(&out, "      %s=%s fix%s: %s\n", blue, reset, f->machine ? " (machine-applicable)" : "",
                       f->title ? f->title : "");
      if (f->snippet) {
        for (const char *p = f->snippet; *p;) {
          const char *nl = strchr(p, '\n');
          size_t n = nl ? (size_t)(nl - p) : strlen(p);
          sc_strbuf_printf(&out, "          %.*s\n", (int)n, p);
          p += n + (nl != NULL);
        }
      }
    }
    sc_strbuf_printf(&out, "      %s=%s help: shardcheck explain %s\n", blue, reset, d->code);
  }
  if (r->failure) sc_strbuf_printf(&out, "%s: check did not complete: %s\n", r->input_name, r->failure);
  sc_strbuf_printf(&out, "%s: %zu error%s, %zu warning%s, %zu note%s\n", r->input_name, r->errors, r->errors == 1 ? "" : "s",
                   r->warnings, r->warnings == 1 ? "" : "s", r->notes, r->notes == 1 ? "" : "s");
  return sc_strbuf_take(&out);
}

/* ---- SARIF 2.1.0 ---- */

static const char *sarif_level(sc_severity s) { return s == SC_SEV_ERROR ? "error" : s == SC_SEV_WARNING ? "warning" : "note"; }

char *sc_report_sarif(const sc_report *r) {
  json_t *root = json_object();
  json_object_set_new(root, "version", json_string("2.1.0"));
  json_object_set_new(root, "$schema", json_string("https://json.schemastore.org/sarif-2.1.0.json"));
  json_t *run = json_object();
  json_t *driver = json_object();
  json_object_set_new(driver, "name", json_string("shardcheck"));
  json_object_set_new(driver, "version", jstr(SC_VERSION));
  json_t *rules = json_array();
  for (size_t i = 0; i < sc_rule_table_len; i++) {
    const sc_rule *rule = &sc_rule_table[i];
    json_t *ro = json_object();
    json_object_set_new(ro, "id", jstr(rule->code));
    json_object_set_new(ro, "name", jstr(rule->name));
    json_t *sd = json_object();
    json_object_set_new(sd, "text", jstr(rule->summary));
    json_object_set_new(ro, "shortDescription", sd);
    const sc_catalog_entry *e = sc_catalog_find(rule->code);
    if (e) {
      json_t *fd = json_object();
      json_object_set_new(fd, "text", jstr(e->explanation));
      json_object_set_new(ro, "fullDescription", fd);
    }
    json_t *cfg = json_object();
    json_object_set_new(cfg, "level", jstr(sarif_level(rule->severity)));
    json_object_set_new(ro, "defaultConfiguration", cfg);
    json_array_append_new(rules, ro);
  }
  json_object_set_new(driver, "rules", rules);
  json_t *tool = json_object();
  json_object_set_new(tool, "driver", driver);
  json_object_set_new(run, "tool", tool);
  json_t *results = json_array();
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    json_t *res = json_object();
    json_object_set_new(res, "ruleId", jstr(d->code));
    const sc_rule *rule = sc_rule_by_code(d->code);
    if (rule) json_object_set_new(res, "ruleIndex", json_integer(rule - sc_rule_table));
    json_object_set_new(res, "level", jstr(sarif_level(d->severity)));
    json_t *msg = json_object();
    json_object_set_new(msg, "text", jstr(d->message));
    json_object_set_new(res, "message", msg);
    json_t *art = json_object();
    bool py_primary = !r->has_lines && d->has_source; /* bytecode: the Python location is the primary one */
    json_object_set_new(art, "uri", jstr(py_primary ? d->source_file : r->input_name));
    json_t *region = json_object();
    if (py_primary) {
      json_object_set_new(region, "startLine", json_integer(d->source_line ? d->source_line : 1));
      if (d->source_col) json_object_set_new(region, "startColumn", json_integer(d->source_col));
    } else if (d->line) {
      json_object_set_new(region, "startLine", json_integer(d->line));
      json_object_set_new(region, "startColumn", json_integer(d->col));
    }
    json_t *phys = json_object();
    json_object_set_new(phys, "artifactLocation", art);
    json_object_set_new(phys, "region", region);
    json_t *loc = json_object();
    json_object_set_new(loc, "physicalLocation", phys);
    if (d->op_path) {
      json_t *ll = json_object();
      json_object_set_new(ll, "fullyQualifiedName", jstr(d->op_path));
      json_object_set_new(ll, "kind", json_string("function"));
      json_t *lls = json_array();
      json_array_append_new(lls, ll);
      json_object_set_new(loc, "logicalLocations", lls);
    }
    json_t *locs = json_array();
    json_array_append_new(locs, loc);
    if (d->has_source && !py_primary) {
      json_t *sart = json_object();
      json_object_set_new(sart, "uri", jstr(d->source_file));
      json_t *sreg = json_object();
      json_object_set_new(sreg, "startLine", json_integer(d->source_line ? d->source_line : 1));
      if (d->source_col) json_object_set_new(sreg, "startColumn", json_integer(d->source_col));
      json_t *sphys = json_object();
      json_object_set_new(sphys, "artifactLocation", sart);
      json_object_set_new(sphys, "region", sreg);
      json_t *sloc = json_object();
      json_object_set_new(sloc, "physicalLocation", sphys);
      json_t *smsg = json_object();
      json_object_set_new(smsg, "text", json_string("Python source of the operation"));
      json_object_set_new(sloc, "message", smsg);
      json_t *related = json_array();
      json_array_append_new(related, sloc);
      json_object_set_new(res, "relatedLocations", related);
    }
    json_object_set_new(res, "locations", locs);
    json_t *fixes = json_array();
    for (size_t k = 0; k < d->nfixes; k++) {
      const sc_fix *f = &d->fixes[k];
      if (!f->machine) continue;
      json_t *fo = json_object();
      json_t *desc = json_object();
      json_object_set_new(desc, "text", jstr(f->title ? f->title : ""));
      json_object_set_new(fo, "description", desc);
      json_t *reps = json_array();
      for (size_t e = 0; e < f->nedits; e++) {
        json_t *rep = json_object();
        json_t *del = json_object();
        json_object_set_new(del, "charOffset", json_integer(f->edits[e].offset));
        json_object_set_new(del, "charLength", json_integer(f->edits[e].length));
        json_object_set_new(rep, "deletedRegion", del);
        json_t *ins = json_object();
        json_object_set_new(ins, "text", jstr(f->edits[e].replacement ? f->edits[e].replacement : ""));
        json_object_set_new(rep, "insertedContent", ins);
        json_array_append_new(reps, rep);
      }
      json_t *change = json_object();
      json_t *cart = json_object();
      json_object_set_new(cart, "uri", jstr(r->input_name));
      json_object_set_new(change, "artifactLocation", cart);
      json_object_set_new(change, "replacements", reps);
      json_t *changes = json_array();
      json_array_append_new(changes, change);
      json_object_set_new(fo, "artifactChanges", changes);
      json_array_append_new(fixes, fo);
    }
    if (json_array_size(fixes)) json_object_set_new(res, "fixes", fixes);
    else json_decref(fixes);
    json_array_append_new(results, res);
  }
  json_object_set_new(run, "results", results);
  json_t *runs = json_array();
  json_array_append_new(runs, run);
  json_object_set_new(root, "runs", runs);
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  return s;
}
