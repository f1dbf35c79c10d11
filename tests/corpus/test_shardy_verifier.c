/* Corpus test over Shardy's own IR verifier tests (../shared/corpus/shardy/verifier, every .mlir file).
 *
 * Every file is checked whole with split_input_file. For each `// expected-error` annotation
 * (`@+N`, `@-N`, `@above`, `@below`, or none = same line) an error must be reported on the annotated
 * line; chunks (`// -----`) without annotations must have no error. Our messages may differ from
 * Shardy's. Prints both figures; fails below 95% / 98%. */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"

#define CORPUS "../shared/corpus/shardy/verifier"

typedef struct {
  size_t annotations, hit;
  size_t clean_chunks, clean_ok;
} tally;

/* Line numbers (1-based) with at least one error in the report. */
static bool *error_lines(const sc_report *r, uint32_t nlines) {
  bool *e = calloc(nlines + 2, sizeof *e);
  for (size_t i = 0; i < r->ndiags; i++)
    if (r->diags[i].severity == SC_SEV_ERROR && r->diags[i].line <= nlines + 1) e[r->diags[i].line] = true;
  return e;
}

static const char *find_annotation(const char *line, const char *end) {
  const char *p = line;
  while (p + 14 <= end) {
    if (!strncmp(p, "expected-error", 14)) return p + 14;
    p++;
  }
  return NULL;
}

static bool is_annotation_line(const char *line, const char *end) {
  while (line < end && (*line == ' ' || *line == '\t')) line++;
  return end - line >= 2 && line[0] == '/' && line[1] == '/' && find_annotation(line, end);
}

static bool is_separator(const char *line, const char *end) {
  while (line < end && (*line == ' ' || *line == '\t')) line++;
  const char *e = end;
  while (e > line && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
  return (size_t)(e - line) == 8 && !strncmp(line, "// -----", 8);
}

static void check_file(const char *path, tally *t, FILE *log) {
  size_t len;
  char *buf;
  sc_arena *a = sc_arena_new(0);
  sc_report *r = test_check_path(a, path, true, &buf, &len);
  /* line starts */
  uint32_t nlines = 0;
  for (size_t i = 0; i < len; i++) nlines += buf[i] == '\n';
  nlines++;
  const char **starts = calloc(nlines + 2, sizeof *starts);
  const char **ends = calloc(nlines + 2, sizeof *ends);
  {
    uint32_t ln = 1;
    const char *p = buf;
    while (ln <= nlines) {
      const char *nl = memchr(p, '\n', (size_t)(buf + len - p));
      starts[ln] = p;
      ends[ln] = nl ? nl : buf + len;
      ln++;
      if (!nl) break;
      p = nl + 1;
    }
    nlines = ln - 1;
  }
  bool *err = error_lines(r, nlines);
  uint32_t chunk_start = 1;
  size_t chunk_annotations = 0;
  for (uint32_t ln = 1; ln <= nlines + 1; ln++) {
    bool last = ln == nlines + 1;
    if (last || is_separator(starts[ln], ends[ln])) {
      if (chunk_annotations == 0) {
        t->clean_chunks++;
        bool ok = true;
        for (uint32_t k = chunk_start; k < ln && k <= nlines; k++)
          if (err[k]) {
            ok = false;
            if (log) fprintf(log, "  false error: %s:%u\n", path, k);
          }
        t->clean_ok += ok;
      }
      chunk_start = ln + 1;
      chunk_annotations = 0;
      if (last) break;
      continue;
    }
    const char *p = find_annotation(starts[ln], ends[ln]);
    while (p) {
      if (p < ends[ln] && *p == '-') p += 3; /* expected-error-re */
      while (p < ends[ln] && *p == ' ') p++;
      long target = ln;
      if (p < ends[ln] && *p == '@') {
        p++;
        if (!strncmp(p, "above", 5)) target = ln - 1;
        else if (!strncmp(p, "below", 5)) {
          /* the next line that is not itself an annotation comment */
          target = ln + 1;
          while (target <= (long)nlines && is_annotation_line(starts[target], ends[target])) target++;
        } else target = ln + strtol(p, NULL, 10);
      }
      t->annotations++;
      chunk_annotations++;
      if (target >= 1 && target <= (long)nlines && err[target]) t->hit++;
      else if (log) fprintf(log, "  missed: %s:%ld\n", path, target);
      p = find_annotation(p, ends[ln]);
    }
  }
  free(err);
  free(starts);
  free(ends);
  sc_arena_free(a);
  free(buf);
}

Test(shardy_verifier, errors_on_annotated_lines_and_none_elsewhere) {
  glob_t g;
  cr_assert_eq(glob(CORPUS "/*.mlir", 0, NULL, &g), 0, "no corpus at " CORPUS);
  tally t = {0};
  FILE *log = getenv("SC_VERBOSE") ? stderr : NULL;
  for (size_t i = 0; i < g.gl_pathc; i++) check_file(g.gl_pathv[i], &t, log);
  globfree(&g);
  double hit = 100.0 * (double)t.hit / (double)(t.annotations ? t.annotations : 1);
  double clean = 100.0 * (double)t.clean_ok / (double)(t.clean_chunks ? t.clean_chunks : 1);
  printf("shardy verifier corpus: %zu/%zu expected-error annotations hit (%.1f%%), %zu/%zu chunks without "
         "annotations free of errors (%.1f%%)\n",
         t.hit, t.annotations, hit, t.clean_ok, t.clean_chunks, clean);
  fflush(stdout);
  cr_assert_geq(t.annotations, 250, "only %zu annotations found", t.annotations);
  cr_assert_geq(hit, 95.0, "annotations hit %.1f%% < 95%%", hit);
  cr_assert_geq(clean, 98.0, "clean chunks %.1f%% < 98%%", clean);
}
