/* The serialized StableHLO artifacts JAX stores beside each `.mlir` (the .mlirbc files under ../shared/corpus/jax,
 * `Exported.mlir_module_serialized`) read with no syntax diagnostic and give exactly the findings of
 * their text twin: same codes, severities, functions and Python source locations, and the same op and
 * function counts; with no mesh, with --mesh data=4 and with --mesh data=2,model=4.
 *
 * A few twins were printed without debug locations (no `loc(` in the text) while their bytecode has
 * them; for those the source location is the one thing not compared. */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"

#define CORPUS "../shared/corpus/jax"

typedef struct {
  char key[1024];
  bool matched;
} finding;

static size_t findings(const sc_report *r, bool with_source, finding *out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < r->ndiags && n < cap; i++) {
    const sc_diag *d = &r->diags[i];
    if (with_source && d->has_source)
      snprintf(out[n].key, sizeof out[n].key, "%s %s %s %s:%u:%u", d->code, sc_severity_name(d->severity),
               d->function ? d->function : "-", d->source_file, d->source_line, d->source_col);
    else
      snprintf(out[n].key, sizeof out[n].key, "%s %s %s", d->code, sc_severity_name(d->severity),
               d->function ? d->function : "-");
    out[n++].matched = false;
  }
  return n;
}

static sc_report *check(sc_arena *a, const char *buf, size_t len, const char *name, const char *mesh_spec) {
  sc_options opt = {0};
  opt.input_name = name;
  sc_target_mesh mesh;
  const char *error = NULL;
  if (mesh_spec) {
    cr_assert_eq(sc_mesh_parse(a, mesh_spec, &mesh, &error), 0);
    opt.mesh = &mesh;
  }
  sc_report *r = NULL;
  cr_assert_eq(sc_check(a, buf, len, &opt, &r), SC_OK, "%s", name);
  return r;
}

static void compare_twin(const char *bc_path, const char *mesh_spec) {
  char text_path[4096];
  snprintf(text_path, sizeof text_path, "%.*s", (int)(strlen(bc_path) - 2), bc_path); /* .mlirbc -> .mlir */
  size_t blen, tlen;
  char *bbuf = test_read_file(bc_path, &blen), *tbuf = test_read_file(text_path, &tlen);
  cr_assert_not_null(bbuf, "%s", bc_path);
  cr_assert_not_null(tbuf, "%s has no .mlir twin", bc_path);
  bool twin_has_locs = strstr(tbuf, "loc(") != NULL;
  sc_arena *a = sc_arena_new(0);
  sc_report *rb = check(a, bbuf, blen, bc_path, mesh_spec), *rt = check(a, tbuf, tlen, text_path, mesh_spec);
  cr_expect_eq(rb->format, SC_FMT_BYTECODE, "%s not detected as bytecode", bc_path);
  cr_expect(!rb->has_lines);
  cr_expect_eq(test_count_code(rb, "SC0001"), 0, "%s: syntax diagnostic: %s", bc_path,
               rb->ndiags ? rb->diags[0].message : "");
  cr_expect_eq(rb->ops, rt->ops, "%s: %zu ops, twin %zu", bc_path, rb->ops, rt->ops);
  cr_expect_eq(rb->functions, rt->functions, "%s: %zu functions, twin %zu", bc_path, rb->functions, rt->functions);
  static finding fb[512], ft[512];
  size_t nb = findings(rb, twin_has_locs, fb, 512), nt = findings(rt, true, ft, 512);
  cr_expect_eq(nb, nt, "%s (mesh %s): %zu findings, twin %zu", bc_path, mesh_spec ? mesh_spec : "-", nb, nt);
  for (size_t i = 0; i < nt; i++) {
    bool found = false;
    for (size_t k = 0; k < nb && !found; k++)
      if (!fb[k].matched && !strcmp(fb[k].key, ft[i].key)) fb[k].matched = found = true;
    cr_expect(found, "%s (mesh %s): twin finding missing from bytecode: %s", bc_path, mesh_spec ? mesh_spec : "-",
              ft[i].key);
  }
  for (size_t i = 0; i < rb->ndiags; i++) {
    cr_expect(rb->diags[i].line == 0, "bytecode diagnostics have no line");
    cr_expect(rb->diags[i].op_path != NULL, "%s: %s has no op path", bc_path, rb->diags[i].code);
  }
  sc_arena_free(a);
  free(bbuf);
  free(tbuf);
}

static size_t compare_all(const char *mesh_spec) {
  glob_t g;
  size_t n = 0;
  const char *patterns[] = {CORPUS "/jax_backcompat/*.mlirbc", CORPUS "/jax_backcompat_history/*.mlirbc"};
  for (size_t p = 0; p < 2; p++) {
    if (glob(patterns[p], 0, NULL, &g) != 0) continue;
    for (size_t i = 0; i < g.gl_pathc; i++, n++) compare_twin(g.gl_pathv[i], mesh_spec);
    globfree(&g);
  }
  return n;
}

Test(bytecode_corpus, twins_without_mesh) { cr_assert_geq(compare_all(NULL), 108); }
Test(bytecode_corpus, twins_with_data4) { cr_assert_geq(compare_all("data=4"), 108); }
Test(bytecode_corpus, twins_with_data2_model4) { cr_assert_geq(compare_all("data=2,model=4"), 108); }

/* What a finding on bytecode looks like: no line, an op path, the Python location; JSON nulls. */
Test(bytecode_corpus, report_shape) {
  size_t len;
  char *buf = test_read_file(CORPUS "/jax_backcompat/pallas_mosaic_matmul__0.mlirbc", &len);
  cr_assert_not_null(buf);
  sc_arena *a = sc_arena_new(0);
  sc_report *r = check(a, buf, len, "matmul.mlirbc", "data=4");
  cr_assert_eq(test_count_code(r, "SC0301"), 1);
  const sc_diag *d = NULL;
  for (size_t i = 0; i < r->ndiags; i++)
    if (!strcmp(r->diags[i].code, "SC0301")) d = &r->diags[i];
  cr_assert_str_eq(d->function, "matmul");
  cr_assert(d->has_source);
  cr_assert_str_eq(d->source_file, "third_party/py/jax/experimental/pallas/ops/tpu/matmul.py");
  cr_assert_eq(d->source_line, 68);
  cr_assert(d->op_path && !strncmp(d->op_path, "matmul/", 7), "%s", d->op_path ? d->op_path : "(null)");
  for (size_t k = 0; k < d->nfixes; k++) cr_assert_eq(d->fixes[k].nedits, 0);
  char *json = sc_report_json(r, false);
  cr_assert(strstr(json, "\"line\":null,\"column\":null") != NULL, "%s", json);
  cr_assert(strstr(json, "\"op_path\":\"matmul/") != NULL, "%s", json);
  free(json);
  char *text = sc_report_text(r, false);
  cr_assert(strstr(text, "third_party/py/jax/experimental/pallas/ops/tpu/matmul.py:68:") == text + strlen("matmul.mlirbc: ") ||
                strstr(text, "matmul.py:68:") != NULL,
            "%s", text);
  free(text);
  sc_arena_free(a);
  free(buf);
}

/* A copy of the artifact with its producer string's digits raised in place (same length, so every
 * section keeps its offset and alignment): "StableHLO_v1.13.1" -> "StableHLO_v9.99.9"; NULL if the
 * producer is not StableHLO's. */
static char *raise_producer(const char *buf, size_t len, const char *to) {
  size_t off = 5; /* magic (4 bytes) and a one-byte bytecode version */
  if (len < off + 11 || memcmp(buf + off, "StableHLO_v", 11) != 0) return NULL;
  char *copy = malloc(len);
  memcpy(copy, buf, len);
  char *p = copy + off + 11;
  size_t n = strlen(p);
  if (to) {
    if (strlen(to) != n) {
      free(copy);
      return NULL;
    }
    memcpy(p, to, n);
  } else {
    for (size_t i = 0; i < n; i++)
      if (p[i] >= '0' && p[i] <= '9') p[i] = '9';
  }
  return copy;
}

/* The findings of a report as "code severity function" keys, one per line, leaving out `skip_code`. */
static char *finding_list(const sc_report *r, const char *skip_code) {
  size_t cap = 256 + r->ndiags * 256, n = 0;
  char *out = malloc(cap);
  out[0] = '\0';
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    if (skip_code && !strcmp(d->code, skip_code)) continue;
    n += (size_t)snprintf(out + n, cap - n, "%s %s %s %s\n", d->code, sc_severity_name(d->severity),
                          d->function ? d->function : "-", d->op_path ? d->op_path : "-");
  }
  return out;
}

/* VHLO's compatibility is the producer's promise: a newer producer reads the same (with one SC0003
 * note when past the StableHLO this reader knows, none within it). */
static size_t compare_raised(const char *to, bool expect_note) {
  glob_t g;
  size_t n = 0;
  cr_assert_eq(glob(CORPUS "/jax_backcompat*/*.mlirbc", 0, NULL, &g), 0);
  for (size_t i = 0; i < g.gl_pathc; i++) {
    size_t len;
    char *buf = test_read_file(g.gl_pathv[i], &len);
    cr_assert_not_null(buf);
    char *raised = raise_producer(buf, len, to);
    if (!raised) {
      free(buf);
      continue;
    }
    sc_arena *a = sc_arena_new(0);
    sc_report *orig = check(a, buf, len, g.gl_pathv[i], "data=4"), *up = check(a, raised, len, g.gl_pathv[i], "data=4");
    cr_expect_eq(test_count_code(up, "SC0001"), 0, "%s raised: %s", g.gl_pathv[i], up->ndiags ? up->diags[0].message : "");
    cr_expect_eq(test_count_code(up, "SC0003"), expect_note ? 1 : 0, "%s raised to %s", g.gl_pathv[i], to ? to : "9s");
    cr_expect_eq(up->ops, orig->ops, "%s raised: %zu ops, original %zu", g.gl_pathv[i], up->ops, orig->ops);
    char *fo = finding_list(orig, NULL), *fu = finding_list(up, "SC0003");
    cr_expect_str_eq(fu, fo, "%s raised to %s reads differently", g.gl_pathv[i], to ? to : "9s");
    free(fo);
    free(fu);
    sc_arena_free(a);
    free(raised);
    free(buf);
    n++;
  }
  globfree(&g);
  return n;
}

Test(bytecode_corpus, newer_producer_reads_the_same_with_a_note) { cr_assert_geq(compare_raised(NULL, true), 60); }
Test(bytecode_corpus, producer_v1_15_reads_the_same_without_a_note) {
  cr_assert_geq(compare_raised("1.15.0", false), 10); /* the 17-character producers (StableHLO_v1.1x.y) */
}

/* What is unknown is refused, named: an op StableHLO 1.20 does not define. */
Test(bytecode_corpus, unknown_vhlo_op_is_refused_by_name) {
  size_t len;
  char *buf = test_read_file(CORPUS "/jax_backcompat/pallas_mosaic_matmul__0.mlirbc", &len);
  cr_assert_not_null(buf);
  char *at = NULL; /* the string section's NUL-terminated op name */
  for (size_t i = 0; i + 15 <= len && !at; i++)
    if (!memcmp(buf + i, "custom_call_v1", 15)) at = buf + i;
  cr_assert_not_null(at);
  at[13] = '7';
  sc_arena *a = sc_arena_new(0);
  sc_report *r = check(a, buf, len, "mutated.mlirbc", NULL);
  cr_assert_eq(test_count_code(r, "SC0001"), 1);
  cr_assert(strstr(r->diags[0].message, "'vhlo.custom_call_v7'") && strstr(r->diags[0].message, "StableHLO v1.20"), "%s",
            r->diags[0].message);
  sc_arena_free(a);
  free(buf);
}
