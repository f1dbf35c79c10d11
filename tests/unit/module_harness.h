/* module_harness.h — the test-module harness: module files with directives, expectations written
 * next to the line they concern, and applying machine fixes.
 *
 * A test module (tests/modules/<family>/<rule>[.<variant>].{bad,good}.{mlir,hlo}) is named after its
 * rule, says what it shows in a comment (most open with `// CODE rule-name`) and may carry, each on a
 * line of its own (first or last; a `.hlo` module is read as XLA HLO text):
 *   // mesh: data=4,model=2:explicit     the target mesh (--mesh); default: the module's own
 *   // platform: tpu|gpu|cpu             the target platform
 *   // max-ops: N, // max-depth: N       the input limits (--max-ops, --max-depth)
 *   // max-steps: N                      the request's work limit (sc_arena_set_step_limit)
 * and marks each expected diagnostic on the line it is reported at (`// expect: A, B` for two):
 *   %1 = stablehlo.custom_call @tpu_custom_call(...) ... // expect: SC0301
 * Every diagnostic is compared, whatever its family: a module yields exactly its expectations, so a
 * passing (.good.) module without any yields no diagnostic at all. */
#ifndef MODULE_HARNESS_H
#define MODULE_HARNESS_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

typedef struct {
  char *text;
  size_t len;
  sc_options opts;
  sc_target_mesh mesh;
} mh_module;

static inline const char *mh_directive(const char *text, const char *key, char *out, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "// %s: ", key);
  const char *p = strstr(text, pat);
  if (!p || (p != text && p[-1] != '\n')) return NULL;
  p += strlen(pat);
  size_t n = strcspn(p, " \r\n");
  if (n >= cap) n = cap - 1;
  memcpy(out, p, n);
  out[n] = 0;
  return out;
}

/* Loads a module and its options. Returns false if the file can't be read. */
static inline bool mh_load(sc_arena *a, const char *path, mh_module *m) {
  memset(m, 0, sizeof *m);
  m->text = test_read_file(path, &m->len);
  if (!m->text) return false;
  m->opts.input_name = path;
  size_t pl = strlen(path);
  m->opts.input_format = (pl > 4 && strcmp(path + pl - 4, ".hlo") == 0) ? SC_FMT_HLO : SC_FMT_AUTO;
  char buf[256];
  if (mh_directive(m->text, "mesh", buf, sizeof buf)) {
    const char *err = NULL;
    cr_assert_eq(sc_mesh_parse(a, buf, &m->mesh, &err), 0, "%s: bad mesh directive: %s", path, err);
    m->opts.mesh = &m->mesh;
  }
  if (mh_directive(m->text, "platform", buf, sizeof buf))
    cr_assert_eq(sc_platform_parse(buf, &m->opts.platform), 0, "%s: bad platform directive", path);
  if (mh_directive(m->text, "max-ops", buf, sizeof buf)) m->opts.max_ops = (uint32_t)strtoul(buf, NULL, 10);
  if (mh_directive(m->text, "max-depth", buf, sizeof buf)) m->opts.max_depth = (uint32_t)strtoul(buf, NULL, 10);
  if (mh_directive(m->text, "max-steps", buf, sizeof buf)) sc_arena_set_step_limit(a, strtoull(buf, NULL, 10));
  return true;
}

static inline sc_report *mh_check(sc_arena *a, const char *text, size_t len, const sc_options *o) {
  sc_report *r = NULL;
  sc_status st = sc_check(a, text, len, o, &r);
  cr_assert_eq(st, SC_OK, "sc_check failed: %s", r && r->failure ? r->failure : "?");
  return r;
}

/* `needle` within the first n bytes of `hay`. */
static inline bool mh_has(const char *hay, size_t n, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(hay + i, needle, k) == 0) return true;
  return false;
}

/* The kernel (SC03xx) and callback (SC04xx) codes, whose machine fixes mh_check_fixes_dir applies. */
static inline bool mh_is_mine(const char *code) { return strncmp(code, "SC03", 4) == 0 || strncmp(code, "SC04", 4) == 0; }

/* "line:code" pairs, sorted, one per line, for comparing expectation with outcome. */
static inline int mh_cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static inline char *mh_join_sorted(char **items, size_t n) {
  qsort(items, n, sizeof *items, mh_cmp_str);
  size_t total = 1;
  for (size_t i = 0; i < n; i++) total += strlen(items[i]) + 1;
  char *s = malloc(total);
  s[0] = 0;
  for (size_t i = 0; i < n; i++) {
    strcat(s, items[i]);
    strcat(s, " ");
  }
  return s;
}

static inline char *mh_expected(const char *text) {
  char *items[256];
  size_t n = 0;
  unsigned line = 1;
  for (const char *p = text; *p; p++) {
    if (*p == '\n') {
      line++;
      continue;
    }
    if (strncmp(p, "// expect: ", 11) == 0) {
      const char *q = p + 11;
      while (*q && *q != '\n') {
        while (*q == ' ' || *q == ',') q++;
        size_t k = strcspn(q, " ,\n");
        if (k && n < 256) {
          items[n] = malloc(k + 16);
          snprintf(items[n], k + 16, "%u:%.*s", line, (int)k, q);
          n++;
        }
        q += k;
      }
      p = q - 1;
    }
  }
  char *s = mh_join_sorted(items, n);
  for (size_t i = 0; i < n; i++) free(items[i]);
  return s;
}

static inline char *mh_outcome(const sc_report *r) {
  char *items[256];
  size_t n = 0;
  for (size_t i = 0; i < r->ndiags && n < 256; i++) {
    items[n] = malloc(32);
    snprintf(items[n], 32, "%u:%s", r->diags[i].line, r->diags[i].code);
    n++;
  }
  char *s = mh_join_sorted(items, n);
  for (size_t i = 0; i < n; i++) free(items[i]);
  return s;
}

static inline size_t mh_count(const sc_report *r, const char *code) {
  size_t n = 0;
  for (size_t i = 0; i < r->ndiags; i++) n += strcmp(r->diags[i].code, code) == 0;
  return n;
}

static inline const sc_diag *mh_find(const sc_report *r, const char *code) {
  for (size_t i = 0; i < r->ndiags; i++)
    if (strcmp(r->diags[i].code, code) == 0) return &r->diags[i];
  return NULL;
}

static inline const char *mh_context(const sc_diag *d, const char *key, size_t idx) {
  for (size_t i = 0; i < d->ncontext; i++)
    if (strcmp(d->context[i].key, key) == 0) return idx < d->context[i].nvalues ? d->context[i].values[idx] : NULL;
  return NULL;
}

static inline const sc_fix *mh_fix_with(const sc_diag *d, const char *needle) {
  for (size_t i = 0; i < d->nfixes; i++)
    if ((d->fixes[i].snippet && strstr(d->fixes[i].snippet, needle)) || strstr(d->fixes[i].title, needle))
      return &d->fixes[i];
  return NULL;
}

/* Applies one fix's edits (non-overlapping) to `text`; malloc'd result. */
static inline int mh_cmp_edit(const void *a, const void *b) {
  const sc_edit *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static inline char *mh_apply(const char *text, size_t len, const sc_fix *f, size_t *out_len) {
  sc_edit *e = malloc((f->nedits + 1) * sizeof *e);
  memcpy(e, f->edits, f->nedits * sizeof *e);
  qsort(e, f->nedits, sizeof *e, mh_cmp_edit);
  size_t extra = 0;
  for (size_t i = 0; i < f->nedits; i++) extra += strlen(e[i].replacement);
  char *out = malloc(len + extra + 1), *o = out;
  size_t at = 0;
  for (size_t i = 0; i < f->nedits; i++) {
    cr_assert_leq(at, e[i].offset, "overlapping edits in fix '%s'", f->title);
    memcpy(o, text + at, e[i].offset - at);
    o += e[i].offset - at;
    size_t rl = strlen(e[i].replacement);
    memcpy(o, e[i].replacement, rl);
    o += rl;
    at = e[i].offset + e[i].length;
  }
  memcpy(o, text + at, len - at);
  o += len - at;
  *o = 0;
  *out_len = (size_t)(o - out);
  free(e);
  return out;
}

/* Checks one module against its expectations: the report's diagnostics, as line:code pairs, are exactly
 * the module's `// expect:` marks. Returns true when they are (a criterion expectation failed otherwise). */
static inline bool mh_check_module(const char *path) {
  sc_arena *a = sc_arena_new(0);
  mh_module m;
  cr_assert(mh_load(a, path, &m), "cannot read %s", path);
  sc_report *r = mh_check(a, m.text, m.len, &m.opts);
  char *exp = mh_expected(m.text), *got = mh_outcome(r);
  bool same = strcmp(got, exp) == 0;
  cr_expect(same, "%s: expected [%s] got [%s]", path, exp, got);
  for (size_t i = 0; !same && i < r->ndiags; i++)
    cr_log_info("%s:%u: %s %s", path, r->diags[i].line, r->diags[i].code, r->diags[i].message);
  free(exp);
  free(got);
  free(m.text);
  sc_arena_free(a);
  return same;
}

/* For every kernel/callback diagnostic of `text` with a machine fix: applying the fix and checking
 * again leaves one diagnostic of that code fewer and no syntax error. Returns the fixes applied. */
static inline size_t mh_check_fixes_text(const char *name, const char *text, size_t len, const sc_options *o) {
  sc_arena *a = sc_arena_new(0);
  sc_report *r = mh_check(a, text, len, o);
  size_t applied = 0;
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    if (!mh_is_mine(d->code)) continue;
    size_t before = mh_count(r, d->code);
    for (size_t k = 0; k < d->nfixes; k++) {
      const sc_fix *f = &d->fixes[k];
      if (!f->machine) continue;
      cr_expect_gt(f->nedits, 0, "%s: machine fix '%s' without edits", name, f->title);
      size_t nl = 0;
      char *fixed = mh_apply(text, len, f, &nl);
      sc_arena *b = sc_arena_new(0);
      sc_report *r2 = mh_check(b, fixed, nl, o);
      cr_expect_eq(mh_count(r2, "SC0001"), 0, "%s: fix '%s' of %s at line %u breaks the syntax:\n%s", name, f->title,
                   d->code, d->line, fixed);
      cr_expect_eq(mh_count(r2, d->code), before - 1,
                   "%s: fix '%s' of %s at line %u leaves %zu of %zu %s diagnostics", name, f->title, d->code, d->line,
                   mh_count(r2, d->code), before, d->code);
      sc_arena_free(b);
      free(fixed);
      applied++;
    }
  }
  sc_arena_free(a);
  return applied;
}

static inline size_t mh_check_fixes_dir(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "cannot open %s", dir);
  size_t applied = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    sc_arena *a = sc_arena_new(0);
    mh_module m;
    cr_assert(mh_load(a, path, &m));
    applied += mh_check_fixes_text(path, m.text, m.len, &m.opts);
    free(m.text);
    sc_arena_free(a);
  }
  closedir(d);
  return applied;
}

/* Checks one module file; the caller frees with sc_arena_free(*arena) and free(m->text). */
static inline sc_report *mh_check_file(const char *path, sc_arena **arena, mh_module *m) {
  *arena = sc_arena_new(0);
  cr_assert(mh_load(*arena, path, m), "cannot read %s", path);
  return mh_check(*arena, m->text, m->len, &m->opts);
}

/* Checks one module file and returns its first diagnostic of `code` (the test fails without one); the
 * caller releases with mh_release(*arena, m). */
static inline const sc_diag *mh_diag_in(const char *path, const char *code, sc_arena **arena, mh_module *m,
                                        sc_report **report) {
  *report = mh_check_file(path, arena, m);
  const sc_diag *d = mh_find(*report, code);
  cr_assert_not_null(d, "%s: no %s", path, code);
  return d;
}

/* The diagnostic's first machine-applicable fix, or NULL. */
static inline const sc_fix *mh_machine_fix(const sc_diag *d) {
  for (size_t i = 0; i < d->nfixes; i++)
    if (d->fixes[i].machine) return &d->fixes[i];
  return NULL;
}

static inline void mh_release(sc_arena *arena, mh_module *m) {
  free(m->text);
  sc_arena_free(arena);
}

#endif
