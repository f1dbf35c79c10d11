/* helpers.h — small helpers shared by the criterion tests. */
#ifndef SC_TEST_HELPERS_H
#define SC_TEST_HELPERS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/front.h"
#include "ir/ir.h"
#include "shardcheck.h"

/* Reads a whole file, NUL-terminated (NULL if it cannot be read; *len is then 0). Caller frees. The one
 * file reader of the tests, benchmarks and integration clients. */
static inline char *test_read_file(const char *path, size_t *len) {
  if (len) *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (!buf) return NULL;
  buf[n] = '\0';
  if (len) *len = (size_t)n;
  return buf;
}

/* An op's 1-based line and column (the front ends keep only its offset; see ir_op_line). */
static inline ir_pos test_op_pos(const ir_module *m, const ir_op *op) {
  ir_pos p = {op->pos.offset, 1, 1};
  for (uint32_t i = 0; i < op->pos.offset; i++) {
    if (m->buf[i] == '\n') p.line++, p.col = 1;
    else p.col++;
  }
  return p;
}

/* Parses MLIR text; returns the module or NULL with *err filled. */
static inline ir_module *test_parse(sc_arena *a, const char *text, fe_parse_error *err) {
  size_t len = strlen(text);
  ir_linemap *lines = ar_alloc(a, sizeof *lines);
  *lines = ir_linemap_build(a, text, len);
  fe_parse_input in = {a, text, len, 0, (uint32_t)len, lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
  return fe_parse_mlir(&in, err);
}

/* Runs sc_check on text with options (may be NULL). */
static inline sc_report *test_check(sc_arena *a, const char *text, const sc_options *opt) {
  sc_report *r = NULL;
  sc_check(a, text, strlen(text), opt, &r);
  return r;
}

#ifdef cr_assert /* criterion tests only (the bench harnesses include this file too) */
/* Reads `path` and checks it (no mesh; `split`: split_input_file); the test fails if either cannot be
 * done. *buf (malloc'd, the caller frees) and *len receive the file; the report lives in `a`. */
static inline sc_report *test_check_path(sc_arena *a, const char *path, bool split, char **buf, size_t *len) {
  *buf = test_read_file(path, len);
  cr_assert_not_null(*buf, "cannot read %s", path);
  sc_options opt = {0};
  opt.input_name = path;
  opt.split_input_file = split;
  sc_report *r = NULL;
  cr_assert_eq(sc_check(a, *buf, *len, &opt, &r), SC_OK, "%s: sc_check failed", path);
  return r;
}
#endif

static inline size_t test_count_code(const sc_report *r, const char *code) {
  size_t n = 0;
  for (size_t i = 0; i < r->ndiags; i++)
    if (strcmp(r->diags[i].code, code) == 0) n++;
  return n;
}

static inline ir_op *test_find_op(ir_module *m, const char *name, int nth) {
  for (uint32_t i = 0; i < m->nops; i++)
    if (ir_span_eq(ir_op_name(m->ops[i]), name) && nth-- == 0) return m->ops[i];
  return NULL;
}

/* `text` without the blanks that begin each line (malloc'd; caller frees): printed modules compared
 * line by line whatever their indent, as FileCheck compares them. */
static inline char *test_unindented(const char *text) {
  char *out = malloc(strlen(text) + 1), *o = out;
  if (!out) return NULL;
  for (bool line_start = true; *text; text++) {
    if (line_start && (*text == ' ' || *text == '\t')) continue;
    line_start = *text == '\n';
    *o++ = *text;
  }
  *o = '\0';
  return out;
}

/* True if `text` holds the lines `want`, each line's indent aside. */
static inline bool test_holds_lines(const char *text, const char *want) {
  char *t = test_unindented(text), *w = test_unindented(want);
  bool found = t && w && strstr(t, w) != NULL;
  free(t);
  free(w);
  return found;
}

#endif
