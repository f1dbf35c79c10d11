/* cli_suppress.c — what is reported after the checks ran:
 *   1. severity overrides from the config (before fingerprints: they do not affect them),
 *   2. inline ignores: `# shardcheck: ignore[SC0303,SC0301]` (or a bare `# shardcheck: ignore`; spaces
 *      optional) on the Python line a diagnostic's source location names, when that file is readable
 *      under the source root (ruff's `# noqa` habit); those that suppressed nothing are reported,
 *   3. the baseline: findings whose fingerprint the baseline records (as many times as recorded),
 *   4. --max-diagnostics across all inputs, in input order.
 * Each report's diagnostics and summary are rewritten in place; the totals count what was dropped. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"

#define MAX_SOURCE_BYTES (64u << 20)

/* --- a string -> value hash table (open addressing, grows at half full) --- */
typedef struct {
  char *key;
  void *val;
  size_t count;
} slot;
typedef struct {
  slot *v;
  size_t cap, n;
} table;

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static slot *table_get(table *t, const char *key, bool insert) {
  if (insert && 2 * (t->n + 1) > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    slot *nv = calloc(cap, sizeof *nv);
    if (!nv) return NULL;
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->v[i].key) continue;
      size_t k = hash_str(t->v[i].key) & (cap - 1);
      while (nv[k].key) k = (k + 1) & (cap - 1);
      nv[k] = t->v[i];
    }
    free(t->v);
    t->v = nv, t->cap = cap;
  }
  if (!t->cap) return NULL;
  size_t k = hash_str(key) & (t->cap - 1);
  while (t->v[k].key && strcmp(t->v[k].key, key)) k = (k + 1) & (t->cap - 1);
  if (!t->v[k].key) {
    if (!insert) return NULL;
    t->v[k].key = xstrdup(key);
    t->n++;
  }
  return &t->v[k];
}

static void table_free(table *t, void (*free_val)(void *)) {
  for (size_t i = 0; i < t->cap; i++) {
    free(t->v[i].key);
    if (free_val && t->v[i].val) free_val(t->v[i].val);
  }
  free(t->v);
}

/* --- 1. severity overrides --- */

void apply_severity_overrides(const check_settings *s, sc_report *r) {
  for (size_t i = 0; i < r->ndiags && s->noverrides; i++) {
    sc_diag *d = &r->diags[i];
    for (size_t k = 0; k < s->noverrides; k++)
      if (!strcasecmp(s->overrides[k].rule, d->code) || (d->rule && !strcmp(s->overrides[k].rule, d->rule)))
        d->severity = s->overrides[k].severity;
  }
}

/* --- 2. inline ignores --- */

typedef struct {
  char *path;
  char *buf;
  size_t len;
  size_t *line_start; /* line i (1-based) starts at line_start[i - 1] */
  size_t nlines;
  bool *used;         /* per line: its ignore comment suppressed something */
} source_file;

static void source_free(void *p) {
  source_file *f = p;
  free(f->path);
  free(f->buf);
  free(f->line_start);
  free(f->used);
  free(f);
}

/* Only regular files of bounded size: a module's debug info names the path, and /dev/zero or a FIFO
 * must not hang the check. */
static source_file *load_source(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_SOURCE_BYTES) return NULL;
  size_t len = 0;
  char *err = NULL;
  char *buf = read_all(path, &len, &err);
  free(err);
  if (!buf || len > MAX_SOURCE_BYTES) {
    free(buf);
    return NULL;
  }
  size_t n = 1;
  for (size_t i = 0; i < len; i++) n += buf[i] == '\n';
  source_file *f = calloc(1, sizeof *f);
  size_t *starts = malloc(n * sizeof *starts);
  bool *used = calloc(n, sizeof *used);
  char *name = strdup(path);
  if (!f || !starts || !used || !name) {
    free(buf);
    free(f);
    free(starts);
    free(used);
    free(name);
    return NULL;
  }
  f->line_start = starts, f->used = used, f->path = name;
  f->buf = buf, f->len = len;
  f->line_start[f->nlines++] = 0;
  for (size_t i = 0; i < len; i++)
    if (buf[i] == '\n') f->line_start[f->nlines++] = i + 1;
  return f;
}

/* After `# shardcheck: ignore` / `#shardcheck:ignore` (spaces optional) starting at `hash`: the byte
 * after "ignore", or NULL if the comment is something else. */
static const char *after_ignore_mark(const char *hash, const char *end) {
  static const char TOOL[] = "shardcheck:", VERB[] = "ignore";
  const char *q = hash + 1;
  while (q < end && *q == ' ') q++;
  if ((size_t)(end - q) < sizeof TOOL - 1 || memcmp(q, TOOL, sizeof TOOL - 1)) return NULL;
  q += sizeof TOOL - 1;
  while (q < end && *q == ' ') q++;
  if ((size_t)(end - q) < sizeof VERB - 1 || memcmp(q, VERB, sizeof VERB - 1)) return NULL;
  return q + sizeof VERB - 1;
}

/* Line `line` of f as [*p, *end) without its newline. */
static bool line_span(const source_file *f, size_t line, const char **p, const char **end) {
  if (!line || line > f->nlines) return false;
  *p = f->buf + f->line_start[line - 1], *end = f->buf + f->len;
  const char *nl = memchr(*p, '\n', (size_t)(*end - *p));
  if (nl) *end = nl;
  return true;
}

/* The ignore comment of a line: the byte after "ignore", or NULL. */
static const char *line_ignore_mark(const source_file *f, size_t line) {
  const char *p, *end;
  if (!line_span(f, line, &p, &end)) return NULL;
  for (const char *hash = memchr(p, '#', (size_t)(end - p)); hash; hash = memchr(hash + 1, '#', (size_t)(end - hash - 1))) {
    const char *q = after_ignore_mark(hash, end);
    if (q) return q;
    if (hash + 1 >= end) break;
  }
  return NULL;
}

/* Whether line `line` of f carries `# shardcheck: ignore` (all codes) or `...ignore[A,B]` naming
 * d's code or rule; marks the line's comment used. */
static bool line_ignores(source_file *f, uint32_t line, const sc_diag *d) {
  const char *q = line_ignore_mark(f, line), *p, *end;
  if (!q || !line_span(f, line, &p, &end)) return false;
  if (q >= end || *q != '[') return f->used[line - 1] = true; /* every code */
  for (q++; q < end && *q != ']';) {
    while (q < end && (*q == ' ' || *q == ',')) q++;
    const char *w = q;
    while (q < end && *q != ',' && *q != ']' && *q != ' ') q++;
    size_t n = (size_t)(q - w);
    if (n && ((strlen(d->code) == n && !strncasecmp(w, d->code, n)) || (d->rule && strlen(d->rule) == n && !strncmp(w, d->rule, n))))
      return f->used[line - 1] = true;
  }
  return false;
}

/* Ignore comments that suppressed nothing, in the Python files the reports name (as ruff's unused
 * `noqa`): stale ones hide the next real finding on that line. */
static void report_unused_ignores(const table *files) {
  for (size_t i = 0; i < files->cap; i++) {
    const source_file *f = files->v[i].val;
    for (size_t line = 1; f && line <= f->nlines; line++)
      if (!f->used[line - 1] && line_ignore_mark(f, line))
        fprintf(stderr, "shardcheck: %s:%zu: unused `# shardcheck: ignore` (nothing it names is reported there)\n",
                f->path, line);
  }
}

static char *source_path(const check_settings *s, const char *file) {
  if (file[0] == '/' || !s->source_root) return xstrdup(file);
  size_t n = strlen(s->source_root) + strlen(file) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", s->source_root, file);
  return p;
}

static bool inline_ignored(const check_settings *s, table *files, const sc_diag *d) {
  if (!d->has_source || !d->source_file || !d->source_line) return false;
  char *path = source_path(s, d->source_file);
  if (!path) return false;
  slot *sl = table_get(files, path, true);
  if (sl && !sl->count) { /* count: 1 = looked up (val NULL when unreadable) */
    sl->count = 1;
    sl->val = load_source(path);
  }
  free(path);
  return sl && sl->val && line_ignores(sl->val, d->source_line, d);
}

/* --- 3. baselines --- */

static int load_baseline(const char *path, table *counts) {
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  const char *schema = json_string_value(json_object_get(root, "schema"));
  json_t *findings = json_object_get(root, "findings");
  if (!root || !schema || strcmp(schema, "shardcheck.baseline.v1") || !json_is_array(findings)) {
    fprintf(stderr, "shardcheck: --baseline %s: %s\n", path, root ? "not a shardcheck.baseline.v1 file" : jerr.text);
    json_decref(root);
    return EXIT_TROUBLE;
  }
  size_t i;
  json_t *f;
  json_array_foreach(findings, i, f) {
    const char *fp = json_string_value(json_object_get(f, "fingerprint"));
    slot *sl = fp ? table_get(counts, fp, true) : NULL;
    if (sl) sl->count++;
  }
  json_decref(root);
  return 0;
}

int write_baseline(const char *path, const input_list *in) {
  json_t *findings = json_array();
  for (size_t i = 0; i < in->n; i++) {
    const input *x = &in->v[i];
    for (size_t k = 0; x->report && k < x->report->ndiags; k++) {
      const sc_diag *d = &x->report->diags[k];
      json_array_append_new(findings, json_pack("{s:s,s:s,s:s,s:s}", "fingerprint", x->fingerprints[k], "code", d->code,
                                                "input", x->report->input_name, "function", d->function ? d->function : ""));
    }
  }
  json_t *root = json_pack("{s:s,s:s,s:o}", "schema", "shardcheck.baseline.v1", "version", SC_VERSION, "findings", findings);
  int rc = json_dump_file(root, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0 ? 0 : EXIT_TROUBLE;
  if (rc) fprintf(stderr, "shardcheck: --write-baseline %s: cannot write\n", path);
  else fprintf(stderr, "shardcheck: wrote %zu finding(s) to %s\n", json_array_size(findings), path);
  json_decref(root);
  return rc;
}

/* --- all of it --- */

static void recount(sc_report *r) {
  r->errors = r->warnings = r->notes = 0;
  for (size_t i = 0; i < r->ndiags; i++) {
    sc_severity s = r->diags[i].severity;
    if (s == SC_SEV_ERROR) r->errors++;
    else if (s == SC_SEV_WARNING) r->warnings++;
    else r->notes++;
  }
}

int apply_suppressions(const check_settings *s, input_list *in, totals *t) {
  table files = {0}, baseline = {0};
  if (s->baseline && load_baseline(s->baseline, &baseline)) return EXIT_TROUBLE;
  size_t shown = 0;
  for (size_t i = 0; i < in->n; i++) {
    input *x = &in->v[i];
    sc_report *r = x->report;
    if (!r) {
      t->failed++;
      continue;
    }
    size_t kept = 0;
    for (size_t k = 0; k < r->ndiags; k++) {
      const sc_diag *d = &r->diags[k];
      slot *b = s->baseline ? table_get(&baseline, x->fingerprints[k], false) : NULL;
      if (s->inline_ignores && inline_ignored(s, &files, d)) t->inline_suppressed++;
      else if (b && b->count) b->count--, t->baseline_suppressed++;
      else if (s->max_diagnostics >= 0 && shown >= (size_t)s->max_diagnostics) {
        t->dropped++; /* not shown, but counted: the summary and the exit status are about every finding */
        t->errors += d->severity == SC_SEV_ERROR, t->warnings += d->severity == SC_SEV_WARNING;
        t->notes += d->severity == SC_SEV_NOTE;
      }
      else {
        r->diags[kept] = *d;
        x->fingerprints[kept++] = x->fingerprints[k];
        shown++;
      }
    }
    r->ndiags = kept;
    recount(r);
    t->errors += r->errors, t->warnings += r->warnings, t->notes += r->notes;
  }
  for (size_t i = 0; i < baseline.cap; i++)
    if (baseline.v[i].key) t->baseline_stale += baseline.v[i].count;
  report_unused_ignores(&files);
  table_free(&files, source_free);
  table_free(&baseline, NULL);
  return 0;
}
