/* cli_output.c — everything `check` prints, after suppression:
 *   text    each report's diagnostics, then one summary line totalling all inputs (for one input it is
 *           the library's "NAME: E errors, W warnings, N notes" line), extras appended after ';'
 *   json    one shardcheck.results.v1 object for any number of inputs (README: "Results JSON")
 *   sarif   one SARIF 2.1.0 log with one run (sc_report_sarif_many)
 *   gitlab  a GitLab code-quality report (a JSON array of issues)
 *   html    one self-contained page for all inputs (sc_report_html_many)
 * --statistics adds a count per code (text: after the summary; json: "statistics"; others: stderr). */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "util/strbuf.h"

#define SOURCE_MAX_BYTES (16u << 20) /* Python sources read for their lines; larger ones are cut */

bool color_wanted(const char *mode, int fd) {
  if (mode && !strcmp(mode, "always")) return true;
  if (mode && !strcmp(mode, "never")) return false;
  const char *force = getenv("FORCE_COLOR"), *clicolor = getenv("CLICOLOR_FORCE"), *no = getenv("NO_COLOR");
  if ((force && *force && strcmp(force, "0")) || (clicolor && *clicolor && strcmp(clicolor, "0"))) return true;
  if (no && *no) return false;
  return isatty(fd);
}

/* "; 2 suppressed (1 inline, 1 baseline); ..." — what the counts alone do not say. */
static void put_extras(strbuf *b, const input_list *in, const totals *t, long max_diags) {
  if (t->inline_suppressed || t->baseline_suppressed)
    sb_printf(b, "; %zu suppressed (%zu inline, %zu baseline)", t->inline_suppressed + t->baseline_suppressed,
                     t->inline_suppressed, t->baseline_suppressed);
  if (t->baseline_stale) sb_printf(b, "; %zu baseline entr%s no longer occur%s", t->baseline_stale,
                                          t->baseline_stale == 1 ? "y" : "ies", t->baseline_stale == 1 ? "s" : "");
  if (t->dropped) sb_printf(b, "; %zu more not shown (--max-diagnostics %ld)", t->dropped, max_diags);
  if (in->skipped) sb_printf(b, "; %zu file%s skipped", in->skipped, in->skipped == 1 ? "" : "s");
  if (t->failed) sb_printf(b, "; %zu input%s not checked", t->failed, t->failed == 1 ? "" : "s");
}

typedef struct {
  const char *code, *rule;
  size_t n;
} code_count;

static int by_count(const void *x, const void *y) {
  const code_count *a = x, *b = y;
  if (a->n != b->n) return a->n > b->n ? -1 : 1;
  return strcmp(a->code, b->code);
}

/* Diagnostics per code, most frequent first; *n entries, malloc'd. Linear in rules + diagnostics. */
static code_count *statistics(const input_list *in, size_t *n) {
  size_t nrules = sc_rule_count();
  code_count *c = calloc(nrules ? nrules : 1, sizeof *c);
  if (!c) return NULL;
  for (size_t i = 0; i < nrules; i++) {
    sc_severity sev;
    const char *family, *summary;
    sc_rule_info(i, &c[i].rule, &family, &c[i].code, &sev, &summary);
  }
  for (size_t i = 0; i < in->n; i++)
    for (size_t k = 0; in->v[i].report && k < in->v[i].report->ndiags; k++)
      for (size_t r = 0; r < nrules; r++) /* the rule table is small and fixed */
        if (!strcmp(c[r].code, in->v[i].report->diags[k].code)) {
          c[r].n++;
          break;
        }
  qsort(c, nrules, sizeof *c, by_count);
  *n = 0;
  while (*n < nrules && c[*n].n) (*n)++;
  return c;
}

static void print_statistics(FILE *out, const input_list *in) {
  size_t n = 0;
  code_count *c = statistics(in, &n);
  for (size_t i = 0; c && i < n; i++) fprintf(out, "%6zu  %-7s %s\n", c[i].n, c[i].code, c[i].rule);
  free(c);
}

/* Python sources for the text report: the file named by the debug info, under --source-root (default
 * the current directory) or as written. One file is kept at a time (diagnostics come sorted by module
 * offset, so runs of one file are common). */
typedef struct {
  const char *root;
  char *path, *text;
  size_t len;
  bool missing;
} source_cache;

static bool load_source(source_cache *c, const char *file) {
  if (c->path && !strcmp(c->path, file)) return !c->missing;
  free(c->path), free(c->text);
  c->path = strdup(file), c->text = NULL, c->len = 0, c->missing = true;
  char joined[PATH_MAX];
  const char *tries[2] = {file, NULL};
  if (c->root && file[0] != '/' && snprintf(joined, sizeof joined, "%s/%s", c->root, file) < (int)sizeof joined)
    tries[0] = joined, tries[1] = file;
  for (size_t i = 0; i < 2 && tries[i] && c->missing; i++) {
    FILE *f = fopen(tries[i], "rb");
    if (!f) continue;
    strbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.n < SOURCE_MAX_BYTES) sb_put(&b, chunk, n);
    fclose(f);
    c->len = b.n;
    c->text = sb_take(&b);
    c->missing = c->text == NULL;
  }
  return !c->missing;
}

static const char *source_line_of(void *user, const char *file, uint32_t line, size_t *len) {
  source_cache *c = user;
  if (!file || !line || !load_source(c, file)) return NULL;
  const char *p = c->text, *end = c->text + c->len;
  for (uint32_t k = 1; k < line && p; k++) {
    p = memchr(p, '\n', (size_t)(end - p));
    if (p) p++;
  }
  if (!p || p >= end) return NULL;
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *len = (size_t)((nl ? nl : end) - p);
  if (*len && p[*len - 1] == '\r') (*len)--;
  return p;
}

/* The terminal's width when the report goes to one (COLUMNS, else the tty's), else 0. */
static unsigned terminal_width(FILE *out) {
  const char *env = getenv("COLUMNS");
  long cols = env && *env ? strtol(env, NULL, 10) : 0;
  if (cols > 0 && cols < 10000) return (unsigned)cols;
  struct winsize ws;
  if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

static int render_text(FILE *out, const check_settings *s, const input_list *in, const totals *t) {
  source_cache sources = {s->source_root, NULL, NULL, 0, false};
  sc_text_options o = {s->color, false, terminal_width(out), source_line_of, &sources};
  bool one = in->n == 1 && in->v[0].report, printed = false;
  for (size_t i = 0; i < in->n; i++) {
    if (!in->v[i].report) continue;
    o.summary = one;
    char *text = sc_report_text_ex(in->v[i].report, &o);
    if (!text) {
      free(sources.path), free(sources.text);
      return EXIT_TROUBLE;
    }
    size_t len = strlen(text);
    if (one) { /* the library's summary line is the last: extras go on it, --quiet keeps only it */
      char *last = len ? text + len - 1 : text;
      while (last > text && last[-1] != '\n') last--;
      if (!s->quiet) fwrite(text, 1, (size_t)(last - text), out);
      strbuf b = {0};
      size_t line_len = len - (size_t)(last - text) - 1, name_len = line_len;
      while (name_len > 1 && !(last[name_len - 2] == ':' && last[name_len - 1] == ' ')) name_len--;
      if (t->dropped && name_len > 1) /* the report counts what it shows; the line counts every finding */
        sb_printf(&b, "%.*s%zu error%s, %zu warning%s, %zu note%s", (int)name_len, last, t->errors,
                         t->errors == 1 ? "" : "s", t->warnings, t->warnings == 1 ? "" : "s", t->notes,
                         t->notes == 1 ? "" : "s");
      else
        sb_put(&b, last, line_len);
      put_extras(&b, in, t, s->max_diagnostics);
      char *line = sb_take(&b);
      fprintf(out, "%s\n", line ? line : "");
      free(line);
    } else if (!s->quiet && *text) {
      if (printed) fputs("\n", out); /* a blank line between diagnostics, as within one report */
      fputs(text, out);
      printed = true;
    }
    free(text);
  }
  if (!one) {
    strbuf b = {0};
    put_extras(&b, in, t, s->max_diagnostics);
    char *extras = sb_take(&b);
    size_t checked = in->n - t->failed;
    fprintf(out, "%zu input%s checked: %zu error%s, %zu warning%s, %zu note%s%s\n", checked, checked == 1 ? "" : "s",
            t->errors, t->errors == 1 ? "" : "s", t->warnings, t->warnings == 1 ? "" : "s", t->notes,
            t->notes == 1 ? "" : "s", extras ? extras : "");
    free(extras);
  }
  if (s->statistics) print_statistics(out, in);
  free(sources.path), free(sources.text);
  return 0;
}

static json_t *summary_json(const input_list *in, const totals *t) {
  return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I},s:I,s:I}", "inputs", (json_int_t)in->n, "skipped",
                   (json_int_t)in->skipped, "failed", (json_int_t)t->failed, "errors", (json_int_t)t->errors,
                   "warnings", (json_int_t)t->warnings, "notes", (json_int_t)t->notes, "suppressed", "inline",
                   (json_int_t)t->inline_suppressed, "baseline", (json_int_t)t->baseline_suppressed,
                   "baseline_stale", (json_int_t)t->baseline_stale, "not_shown", (json_int_t)t->dropped);
}

static int render_json(FILE *out, const check_settings *s, const input_list *in, const totals *t) {
  json_t *root = json_object(), *reports = json_array(), *failures = json_array();
  json_object_set_new(root, "schema", json_string("shardcheck.results.v1"));
  json_object_set_new(root, "tool", json_pack("{s:s,s:s,s:s}", "name", "shardcheck", "version", SC_VERSION,
                                              "rules_version", sc_rules_version()));
  json_object_set_new(root, "summary", summary_json(in, t));
  if (s->statistics) {
    size_t n = 0;
    code_count *c = statistics(in, &n);
    json_t *st = json_object();
    for (size_t i = 0; c && i < n; i++) json_object_set_new(st, c[i].code, json_integer((json_int_t)c[i].n));
    free(c);
    json_object_set_new(root, "statistics", st);
  }
  for (size_t i = 0; i < in->n; i++) {
    if (!in->v[i].report) {
      json_array_append_new(failures, json_pack("{s:s,s:s}", "input", in->v[i].path, "error",
                                                in->v[i].error ? in->v[i].error : "not checked"));
      continue;
    }
    char *one = sc_report_json(in->v[i].report, false);
    json_t *r = one ? json_loads(one, 0, NULL) : NULL;
    free(one);
    if (!r) return json_decref(root), json_decref(reports), json_decref(failures), EXIT_TROUBLE;
    json_array_append_new(reports, r);
  }
  json_object_set_new(root, "reports", reports);
  json_object_set_new(root, "failures", failures);
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (!text) return EXIT_TROUBLE;
  fprintf(out, "%s\n", text);
  free(text);
  return 0;
}

/* SARIF artifact paths: relative to the source root when the file is under it, else absolute.
 * Python files count only under the source root (code scanning can show nothing else). */
static sc_path_kind locate(void *user, const char *path, bool python, char *out, size_t outsz) {
  const check_settings *s = user;
  char root[PATH_MAX], real[PATH_MAX];
  if (!realpath(s->source_root ? s->source_root : ".", root)) return SC_PATH_MISSING;
  char *joined = NULL;
  if (python && path[0] != '/') {
    size_t n = strlen(root) + strlen(path) + 2;
    if ((joined = malloc(n))) snprintf(joined, n, "%s/%s", root, path);
  }
  bool ok = realpath(joined ? joined : path, real) != NULL;
  free(joined);
  if (!ok) return SC_PATH_MISSING;
  size_t n = strlen(root);
  bool under = !strcmp(root, "/") ? real[0] == '/' : !strncmp(real, root, n) && real[n] == '/';
  if (under) {
    snprintf(out, outsz, "%s", real + (strcmp(root, "/") ? n + 1 : 1));
    return SC_PATH_UNDER_ROOT;
  }
  if (python) return SC_PATH_MISSING;
  snprintf(out, outsz, "%s", real);
  return SC_PATH_ABSOLUTE;
}

static int render_sarif(FILE *out, const check_settings *s, const input_list *in) {
  const sc_report **reports = calloc(in->n ? in->n : 1, sizeof *reports);
  const char *const **fps = calloc(in->n ? in->n : 1, sizeof *fps);
  const char **errors = calloc(in->n ? in->n : 1, sizeof *errors);
  char root[PATH_MAX];
  if (!reports || !fps || !errors) return free(reports), free(fps), free(errors), EXIT_TROUBLE;
  size_t n = 0, nerrors = 0;
  for (size_t i = 0; i < in->n; i++)
    if (in->v[i].report) {
      fps[n] = in->v[i].fingerprints;
      reports[n++] = in->v[i].report;
    } else {
      errors[nerrors++] = in->v[i].error ? in->v[i].error : in->v[i].path;
    }
  sc_sarif_options o = {0};
  o.help_uri_base = s->help_uri_base;
  o.source_root = realpath(s->source_root ? s->source_root : ".", root) ? root : NULL;
  o.locate = locate;
  o.user = (void *)s;
  o.fingerprints = fps;
  o.tool_errors = errors;
  o.ntool_errors = nerrors;
  char *text = sc_report_sarif_many(reports, n, &o);
  free(reports);
  free(fps);
  free(errors);
  if (!text) return EXIT_TROUBLE;
  fprintf(out, "%s\n", text);
  free(text);
  if (s->statistics) print_statistics(stderr, in);
  return 0;
}

static int render_gitlab(FILE *out, const check_settings *s, const input_list *in) {
  static const char *const severity[] = {"info", "major", "critical"}; /* note, warning, error */
  json_t *issues = json_array();
  for (size_t i = 0; i < in->n; i++) {
    const sc_report *r = in->v[i].report;
    for (size_t k = 0; r && k < r->ndiags; k++) {
      const sc_diag *d = &r->diags[k];
      bool python = d->has_source; /* the user's file, as the text report leads with it */
      strbuf fp = {0};
      sb_printf(&fp, "%s:%s", r->input_name, in->v[i].fingerprints[k]);
      char *fps = sb_take(&fp);
      json_t *lines = json_pack("{s:i}", "begin", (int)(python ? d->source_line : d->line ? d->line : 1));
      json_array_append_new(issues, json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:o}}", "description", d->message, "check_name",
                                              d->code, "fingerprint", fps ? fps : d->code, "severity",
                                              severity[d->severity], "location", "path",
                                              python ? d->source_file : r->input_name, "lines", lines));
      free(fps);
    }
  }
  char *text = json_dumps(issues, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(issues);
  if (!text) return EXIT_TROUBLE;
  fprintf(out, "%s\n", text);
  free(text);
  if (s->statistics) print_statistics(stderr, in);
  return 0;
}

static int render_html(FILE *out, const check_settings *s, const input_list *in) {
  const sc_report **reports = calloc(in->n ? in->n : 1, sizeof *reports);
  if (!reports) return EXIT_TROUBLE;
  size_t n = 0;
  for (size_t i = 0; i < in->n; i++)
    if (in->v[i].report) reports[n++] = in->v[i].report;
  char *text = sc_report_html_many(reports, n);
  free(reports);
  if (!text) return EXIT_TROUBLE;
  fputs(text, out);
  free(text);
  if (s->statistics) print_statistics(stderr, in);
  return 0;
}

int render_output(FILE *out, const check_settings *s, const input_list *in, const totals *t) {
  switch (s->format) {
  case OUT_JSON: return render_json(out, s, in, t);
  case OUT_SARIF: return render_sarif(out, s, in);
  case OUT_GITLAB: return render_gitlab(out, s, in);
  case OUT_HTML: return render_html(out, s, in);
  default: return render_text(out, s, in, t);
  }
}
