/* sarif.c — SARIF 2.1.0 for code scanning (GitHub's subset: ../shared/reference/diagnostic-formats.md).
 *
 * One log, one run, any number of reports. Code scanning annotates files of the repository, and the
 * repository holds the user's Python while the module is a build artifact; so a result's primary
 * location is the Python line when the caller's `locate` finds that file under the source root, and
 * the module location is then relatedLocation 1, linked from the message. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "rules/rules.h"
#include "util/strbuf.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
#define DESCRIPTION_MAX 1000 /* GitHub: fullDescription.text <= 1024 characters */
#define PATH_BUF 4096

static const char *sarif_level(sc_severity s) { return s == SC_SEV_ERROR ? "error" : s == SC_SEV_WARNING ? "warning" : "note"; }

static json_t *text_obj(const char *key, const char *text) {
  json_t *o = json_object();
  json_object_set_new(o, key, rp_jstr(text ? text : ""));
  return o;
}

/* The first paragraph after the first section title of an explanation ("What it means"), joined into
 * one line and cut (at a UTF-8 boundary) to DESCRIPTION_MAX bytes. */
static char *first_paragraph(const char *expl) {
  strbuf b = {0};
  const char *p = strchr(expl, '\n');
  p = p ? p + 1 : expl;
  while (*p && *p != '\n' && b.n < DESCRIPTION_MAX) {
    while (*p == ' ') p++;
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (b.n) sb_puts(&b, " ");
    sb_put(&b, p, n);
    p += n + (nl != NULL);
  }
  if (b.n > DESCRIPTION_MAX) {
    size_t cut = DESCRIPTION_MAX - 3;
    while (cut > 0 && ((unsigned char)b.p[cut] & 0xC0) == 0x80) cut--;
    b.n = cut;
    sb_puts(&b, "\xe2\x80\xa6");
  }
  return sb_take(&b);
}

static json_t *rule_json(const sc_rule *rule, const sc_sarif_options *o) {
  json_t *ro = json_object();
  json_object_set_new(ro, "id", rp_jstr(rule->code));
  json_object_set_new(ro, "name", rp_jstr(rule->name));
  json_object_set_new(ro, "shortDescription", text_obj("text", rule->summary));
  const sc_catalog_entry *e = sc_catalog_find(rule->code);
  char *full = e ? first_paragraph(e->explanation) : NULL;
  json_object_set_new(ro, "fullDescription", text_obj("text", full && *full ? full : rule->summary));
  free(full);
  char *text = sc_explain_text(rule->code), *md = sc_explain_markdown(rule->code);
  json_t *help = text_obj("text", text ? text : rule->summary);
  json_object_set_new(help, "markdown", rp_jstr(md ? md : rule->summary));
  json_object_set_new(ro, "help", help);
  free(text);
  free(md);
  /* The caller's base + code, or the rule's generated page docs/rules/CODE.md in the repository. */
  const char *base = o->help_uri_base ? o->help_uri_base : SC_RULE_PAGE_BASE;
  const char *suffix = o->help_uri_base ? "" : ".md";
  size_t n = strlen(base) + strlen(rule->code) + strlen(suffix) + 1;
  char *uri = malloc(n);
  if (uri) snprintf(uri, n, "%s%s%s", base, rule->code, suffix);
  if (uri) json_object_set_new(ro, "helpUri", rp_jstr(uri));
  free(uri);
  json_object_set_new(ro, "defaultConfiguration", text_obj("level", sarif_level(rule->severity)));
  json_t *props = json_object();
  json_t *tags = json_array();
  json_array_append_new(tags, rp_jstr(rule->family));
  json_array_append_new(tags, json_string("jax")); /* never equal to a family: tags are unique */
  json_object_set_new(props, "tags", tags);
  json_object_set_new(props, "precision", json_string("high"));
  json_object_set_new(ro, "properties", props);
  return ro;
}

/* RFC 3986 percent-encoding of a path: unreserved characters and '/' stay. */
static void put_uri_path(strbuf *b, const char *path) {
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    bool keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                *p == '.' || *p == '_' || *p == '~' || *p == '/';
    if (keep) sb_put(b, (const char *)p, 1);
    else sb_printf(b, "%%%02X", *p);
  }
}

/* artifactLocation for `path`: relative to %SRCROOT% or a file:// URI. *found: the file exists (as
 * far as the caller's locate knows; true without locate). */
static json_t *artifact(const sc_sarif_options *o, const char *path, bool python, bool *found) {
  char buf[PATH_BUF];
  sc_path_kind kind;
  if (o->locate) {
    kind = o->locate(o->user, path, python, buf, sizeof buf);
    buf[sizeof buf - 1] = '\0';
  } else {
    kind = path[0] == '/' ? SC_PATH_ABSOLUTE : SC_PATH_UNDER_ROOT;
    snprintf(buf, sizeof buf, "%s", path[0] == '.' && path[1] == '/' ? path + 2 : path);
  }
  *found = kind != SC_PATH_MISSING && (o->locate || !python);
  if (kind == SC_PATH_MISSING) snprintf(buf, sizeof buf, "%s", path);
  strbuf u = {0};
  bool absolute = kind == SC_PATH_ABSOLUTE || (kind == SC_PATH_MISSING && path[0] == '/');
  if (absolute) sb_puts(&u, "file://");
  put_uri_path(&u, buf);
  char *s = sb_take(&u);
  json_t *a = json_object();
  json_object_set_new(a, "uri", rp_jstr(s ? s : ""));
  if (!absolute) json_object_set_new(a, "uriBaseId", json_string("%SRCROOT%"));
  free(s);
  return a;
}

/* Where an operation's span ends when the rule gave no end: after its first token. */
static uint32_t token_end_col(const sc_report *r, const sc_diag *d) {
  uint32_t n = 0;
  if (r->buf)
    for (size_t k = d->offset; k < r->bytes; k++, n++) {
      char c = r->buf[k];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == ',' || c == '{' || c == '}')
        break;
    }
  return d->col + (n ? n : 1);
}

static json_t *module_location(const sc_sarif_options *o, const sc_report *r, const sc_diag *d) {
  bool found;
  json_t *phys = json_object();
  json_object_set_new(phys, "artifactLocation", artifact(o, r->input_name ? r->input_name : "<stdin>", false, &found));
  if (r->has_lines && d->line) {
    json_t *region = json_object();
    json_object_set_new(region, "startLine", json_integer(d->line));
    json_object_set_new(region, "startColumn", json_integer(d->col ? d->col : 1));
    bool has_end = d->end_line && (d->end_line > d->line || (d->end_line == d->line && d->end_col > d->col));
    json_object_set_new(region, "endLine", json_integer(has_end ? d->end_line : d->line));
    json_object_set_new(region, "endColumn", json_integer(has_end ? d->end_col : token_end_col(r, d)));
    json_object_set_new(phys, "region", region);
  }
  json_t *loc = json_object();
  json_object_set_new(loc, "physicalLocation", phys);
  json_t *logical = json_object();
  strbuf b = {0};
  sb_printf(&b, "@%s::%s", d->function ? d->function : "", d->op_path ? d->op_path : d->op ? d->op : "module");
  if (d->target) sb_printf(&b, "@%s", d->target);
  char *fq = sb_take(&b);
  json_object_set_new(logical, "fullyQualifiedName", rp_jstr(fq ? fq : ""));
  free(fq);
  json_object_set_new(logical, "kind", json_string(d->function ? "function" : "module"));
  json_t *logicals = json_array();
  json_array_append_new(logicals, logical);
  json_object_set_new(loc, "logicalLocations", logicals);
  return loc;
}

static json_t *python_location(const sc_sarif_options *o, const char *file, uint32_t line, uint32_t col, bool *found) {
  json_t *phys = json_object();
  json_object_set_new(phys, "artifactLocation", artifact(o, file, true, found));
  json_t *region = json_object();
  json_object_set_new(region, "startLine", json_integer(line ? line : 1));
  if (col) json_object_set_new(region, "startColumn", json_integer(col));
  json_object_set_new(phys, "region", region);
  json_t *loc = json_object();
  json_object_set_new(loc, "physicalLocation", phys);
  return loc;
}

static void add_related(json_t *related, json_t *loc, int id, const char *message) {
  json_object_set_new(loc, "id", json_integer(id));
  json_object_set_new(loc, "message", text_obj("text", message));
  json_array_append_new(related, loc);
}

static json_t *fixes_json(const sc_sarif_options *o, const sc_report *r, const sc_diag *d) {
  json_t *fixes = json_array();
  for (size_t k = 0; k < d->nfixes; k++) {
    const sc_fix *f = &d->fixes[k];
    if (!f->machine) continue;
    json_t *reps = json_array();
    for (size_t e = 0; e < f->nedits; e++) {
      json_t *rep = json_object(), *del = json_object();
      json_object_set_new(del, "charOffset", json_integer(f->edits[e].offset));
      json_object_set_new(del, "charLength", json_integer(f->edits[e].length));
      json_object_set_new(rep, "deletedRegion", del);
      json_object_set_new(rep, "insertedContent", text_obj("text", f->edits[e].replacement));
      json_array_append_new(reps, rep);
    }
    bool found;
    json_t *change = json_object();
    json_object_set_new(change, "artifactLocation", artifact(o, r->input_name ? r->input_name : "<stdin>", false, &found));
    json_object_set_new(change, "replacements", reps);
    json_t *changes = json_array();
    json_array_append_new(changes, change);
    json_t *fo = json_object();
    json_object_set_new(fo, "description", text_obj("text", f->title));
    json_object_set_new(fo, "artifactChanges", changes);
    json_array_append_new(fixes, fo);
  }
  return fixes;
}

static json_t *result_json(const sc_sarif_options *o, const sc_report *r, const sc_diag *d, const char *fingerprint) {
  json_t *res = json_object();
  json_object_set_new(res, "ruleId", rp_jstr(d->code));
  const sc_rule *rule = ru_rule_by_code(d->code);
  if (rule) json_object_set_new(res, "ruleIndex", json_integer(rule - ru_rule_table));
  json_object_set_new(res, "level", json_string(sarif_level(d->severity)));
  json_t *locs = json_array(), *related = json_array();
  json_t *py = NULL;
  bool py_found = false;
  if (d->has_source) py = python_location(o, d->source_file, d->source_line, d->source_col, &py_found);
  bool python_primary = py && (py_found || !r->has_lines);
  strbuf msg = {0};
  sb_puts(&msg, d->message);
  int next_id = 1;
  if (python_primary) {
    json_array_append_new(locs, py);
    add_related(related, module_location(o, r, d), next_id, "the operation in the module");
    sb_printf(&msg, " (operation in [the module](%d))", next_id++);
  } else {
    json_array_append_new(locs, module_location(o, r, d));
    if (py) {
      add_related(related, py, next_id, "Python source of the operation");
      sb_printf(&msg, " (from [Python source](%d))", next_id++);
    }
  }
  for (size_t k = 0; k < d->nrelated; k++) {
    const sc_related *s = &d->related[k];
    sc_diag site = *d;
    site.line = s->line, site.col = s->col, site.offset = s->offset;
    site.end_line = s->end_line, site.end_col = s->end_col, site.end_offset = s->end_offset;
    site.function = s->function, site.op = s->op, site.target = NULL, site.op_path = NULL;
    add_related(related, module_location(o, r, &site), next_id++, s->message ? s->message : s->code ? s->code : "related site");
  }
  char *text = sb_take(&msg);
  json_object_set_new(res, "message", text_obj("text", text ? text : d->message));
  free(text);
  json_object_set_new(res, "locations", locs);
  if (json_array_size(related)) json_object_set_new(res, "relatedLocations", related);
  else json_decref(related);
  json_t *fp = json_object();
  json_object_set_new(fp, "shardcheck/v1", json_string(fingerprint));
  json_object_set_new(res, "partialFingerprints", fp);
  json_t *fixes = fixes_json(o, r, d);
  if (json_array_size(fixes)) json_object_set_new(res, "fixes", fixes);
  else json_decref(fixes);
  return res;
}

static json_t *driver_json(const sc_sarif_options *o) {
  json_t *driver = json_object();
  json_object_set_new(driver, "name", json_string("shardcheck"));
  json_object_set_new(driver, "version", json_string(SC_VERSION));
  json_object_set_new(driver, "semanticVersion", json_string(SC_VERSION));
  json_object_set_new(driver, "informationUri", json_string(SC_HOMEPAGE));
  json_t *rules = json_array();
  for (size_t i = 0; i < ru_rule_table_len; i++) json_array_append_new(rules, rule_json(&ru_rule_table[i], o));
  json_object_set_new(driver, "rules", rules);
  return driver;
}

/* GitHub shows a run's tool errors (toolExecutionNotifications) next to its alerts. */
static json_t *invocations_json(const sc_sarif_options *o) {
  json_t *inv = json_object(), *notes = json_array();
  json_object_set_new(inv, "executionSuccessful", json_boolean(o->ntool_errors == 0));
  for (size_t i = 0; i < o->ntool_errors; i++) {
    json_t *n = json_object();
    json_object_set_new(n, "level", json_string("error"));
    json_object_set_new(n, "message", text_obj("text", o->tool_errors[i]));
    json_array_append_new(notes, n);
  }
  if (json_array_size(notes)) json_object_set_new(inv, "toolExecutionNotifications", notes);
  else json_decref(notes);
  json_t *all = json_array();
  json_array_append_new(all, inv);
  return all;
}

char *sc_report_sarif_many(const sc_report *const *reports, size_t nreports, const sc_sarif_options *options) {
  static const sc_sarif_options defaults;
  const sc_sarif_options *o = options ? options : &defaults;
  sc_arena *a = sc_arena_new(0);
  if (!a) return NULL;
  json_t *results = json_array();
  for (size_t i = 0; i < nreports; i++) {
    const char *const *fps = o->fingerprints ? o->fingerprints[i] : sc_report_fingerprints(a, reports[i]);
    for (size_t k = 0; fps && k < reports[i]->ndiags; k++)
      json_array_append_new(results, result_json(o, reports[i], &reports[i]->diags[k], fps[k]));
  }
  sc_arena_free(a);
  json_t *run = json_object();
  json_t *tool = json_object();
  json_object_set_new(tool, "driver", driver_json(o));
  json_object_set_new(run, "tool", tool);
  if (o->source_root && o->source_root[0] == '/') {
    strbuf u = {0};
    sb_puts(&u, "file://");
    put_uri_path(&u, o->source_root);
    if (o->source_root[strlen(o->source_root) - 1] != '/') sb_puts(&u, "/");
    char *uri = sb_take(&u);
    json_t *base = json_object(), *root = json_object();
    json_object_set_new(root, "uri", rp_jstr(uri ? uri : "file:///"));
    free(uri);
    json_object_set_new(base, "%SRCROOT%", root);
    json_object_set_new(run, "originalUriBaseIds", base);
  }
  json_object_set_new(run, "invocations", invocations_json(o));
  json_object_set_new(run, "results", results);
  /* Each report's per-device cost (docs/cost.md), in the run's property bag. */
  json_t *costs = json_array();
  for (size_t i = 0; i < nreports; i++) {
    json_t *c = json_object();
    json_object_set_new(c, "input", rp_jstr(reports[i]->input_name ? reports[i]->input_name : "<stdin>"));
    json_object_set_new(c, "cost", rp_cost_json(reports[i]));
    json_array_append_new(costs, c);
  }
  json_t *props = json_object();
  json_object_set_new(props, "shardcheck.cost", costs);
  json_object_set_new(run, "properties", props);
  json_t *runs = json_array();
  json_array_append_new(runs, run);
  json_t *root = json_object();
  json_object_set_new(root, "$schema", json_string(SARIF_SCHEMA));
  json_object_set_new(root, "version", json_string("2.1.0"));
  json_object_set_new(root, "runs", runs);
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  return s;
}

char *sc_report_sarif(const sc_report *report) { return sc_report_sarif_many(&report, 1, NULL); }
