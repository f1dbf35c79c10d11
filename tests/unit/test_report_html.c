/* The HTML page and the tiling pictures (lib/report/html.c, tiling.c, tiling_text.c): escaping of
 * hostile names, the tile math of uneven shards, validation of tilings from untrusted context, caps. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "report/report.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(report_html, .init = setup, .fini = teardown);

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* A mesh axis, a function and a file named like markup: the page shows them as text, never as markup. */
static const char *HOSTILE =
    "#loc1 = loc(\"<img src=x onerror=alert(1)>.py\":3:1)\n"
    "sdy.mesh @mesh = <[\"<script>alert(1)</script>\"=4]>\n"
    "func.func @\"</pre><script>x()</script>\"(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"<script>alert(1)</script>\"}]>}) -> tensor<6xf32> {\n"
    "  return %arg0 : tensor<6xf32>\n"
    "} loc(#loc1)\n";

Test(report_html, hostile_names_are_escaped) {
  sc_options opt = {0};
  opt.input_name = "<b onmouseover='x'>in.mlir";
  sc_report *r = test_check(A, HOSTILE, &opt);
  cr_assert_eq(test_count_code(r, "SC0210"), 1);
  char *h = sc_report_html(r);
  cr_assert_not_null(h);
  cr_assert_null(strstr(h, "<script"), "%s", h);
  cr_assert_null(strstr(h, "<img"), "%s", h);
  cr_assert_null(strstr(h, "<b onmouseover"), "%s", h);
  cr_assert(strstr(h, "@&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;"), "the function name is shown as text");
  cr_assert(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt;"), "the axis name is shown as text");
  cr_assert(strstr(h, "&lt;b onmouseover=&#39;x&#39;&gt;in.mlir"), "the input name is shown as text");
  /* the hostile axis still draws: 4 blocks over the 4 devices */
  cr_assert(strstr(h, "<svg class='tensor' data-blocks='4'"), "%s", h);
  cr_assert_eq(count(h, "<g class='device'"), 8, "the mesh grid and the tensor's grid, 4 devices each: %zu",
               count(h, "<g class='device'"));
  cr_assert(strstr(h, "Content-Security-Policy"), "no loads even if markup slipped through");
  free(h);
}

/* Every string field of a report built by hand (as the CLI rebuilds a daemon's report) is escaped. */
Test(report_html, every_field_is_escaped) {
  const char *evil = "<script>alert('x')</script>";
  const char *ctx_values[] = {evil};
  sc_context_entry ctx = {evil, ctx_values, 1, true};
  sc_fix fix = {evil, evil, false, evil, NULL, 0};
  sc_related rel = {evil, evil, 1, 1, 0, 0, 0, 0, evil, evil, true, evil, 1, 1};
  sc_diag d = {0};
  d.code = evil, d.rule = evil, d.message = evil, d.function = evil, d.op = evil, d.target = evil;
  d.has_source = true, d.source_file = evil, d.source_line = 1;
  d.context = &ctx, d.ncontext = 1, d.fixes = &fix, d.nfixes = 1, d.related = &rel, d.nrelated = 1;
  sc_mesh_axis axis = {evil, 2, SC_AXIS_AUTO};
  sc_report r = {0};
  r.input_name = evil, r.buf = evil, r.bytes = strlen(evil), r.has_lines = true;
  d.line = 1, d.col = 1;
  r.mesh_source = evil, r.mesh_axes = &axis, r.mesh_naxes = 1, r.mesh_devices = 2;
  r.diags = &d, r.ndiags = 1, r.errors = 1, r.failure = evil;
  char *h = sc_report_html(&r);
  cr_assert_not_null(h);
  cr_assert_null(strstr(h, "<script"), "%s", h);
  cr_assert_geq(count(h, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), 14, "%zu",
                count(h, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
  free(h);
}

/* A diagnostic carrying only a tiling context (as a remote report may). */
static sc_diag tiling_diag(const char **shape, size_t rank, const char **mesh, size_t naxes, const char **dims,
                           size_t ndims, const char *flagged) {
  sc_context_entry *c = ar_calloc(A, 5, sizeof *c);
  static const char *what[] = {"argument #0"};
  c[0] = (sc_context_entry){"tensor", what, 1, false};
  c[1] = (sc_context_entry){"tensor_shape", shape, rank, true};
  c[2] = (sc_context_entry){"tensor_mesh", mesh, naxes, true};
  c[3] = (sc_context_entry){"tensor_dim_axes", dims, ndims, true};
  const char **f = ar_calloc(A, 1, sizeof *f);
  f[0] = flagged;
  c[4] = (sc_context_entry){"tensor_dim", f, 1, false};
  sc_diag d = {0};
  d.context = c, d.ncontext = flagged ? 5 : 4;
  return d;
}

Test(report_html, uneven_tile_math) {
  const char *shape[] = {"17", "256"}, *mesh[] = {"dim0=8", "dim1=1"}, *dims[] = {"0", "1"};
  sc_diag d = tiling_diag(shape, 2, mesh, 2, dims, 2, "0");
  rp_tiling t;
  cr_assert(rp_tiling_read(&d, &t));
  cr_assert_eq(t.flagged, 0);
  cr_assert_eq(rp_tiling_shards(&t, 0), 8);
  rp_extent e = rp_tiling_extent(&t, 0, 0);
  cr_assert_eq(e.block, 3);
  cr_assert(e.start == 0 && e.valid == 3 && e.padding == 0);
  e = rp_tiling_extent(&t, 0, 5); /* rows 15:17 and one padding row */
  cr_assert(e.start == 15 && e.valid == 2 && e.padding == 1, "%ld %ld %ld", (long)e.start, (long)e.valid, (long)e.padding);
  e = rp_tiling_extent(&t, 0, 7); /* only padding */
  cr_assert(e.valid == 0 && e.padding == 3);
  cr_assert_eq(rp_tiling_block(&t, 6, 0), 6);
  cr_assert_eq(rp_tiling_replicas(&t), 1);
  strbuf b = {0};
  rp_tiling_text(&b, &d, "", "");
  char *s = sb_take(&b);
  cr_assert(strstr(s, "dim 0 (size 17) in 8 blocks of 3 over dim0=8, padded to 24:"), "%s", s);
  cr_assert(strstr(s, "| 15:17+1pad | pad 3 | pad 3 |"), "%s", s);
  free(s);
}

/* x=4 shards dim 0, y=2 is unused: each block is held by two devices (replicas along y). */
Test(report_html, replicated_axis_and_sub_axis) {
  const char *shape[] = {"6", "8"}, *mesh[] = {"x=4", "y=2"}, *dims[] = {"0", ""};
  sc_diag d = tiling_diag(shape, 2, mesh, 2, dims, 2, "0");
  rp_tiling t;
  cr_assert(rp_tiling_read(&d, &t));
  cr_assert(!t.axis_replicated[0] && t.axis_replicated[1]);
  cr_assert_eq(rp_tiling_replicas(&t), 2);
  cr_assert_eq(rp_tiling_block(&t, 3, 0), 1, "device 3 = (x=1, y=1)");
  cr_assert_eq(rp_tiling_replica(&t, 3), 1);
  cr_assert_eq(rp_tiling_replica(&t, 2), 0);
  /* a sub-axis x:(2)2 shards dim 1: device (x, y) holds block (x / 2) % 2 */
  const char *dims2[] = {"1", "0:(2)2"};
  d = tiling_diag(shape, 2, mesh, 2, dims2, 2, NULL);
  cr_assert(rp_tiling_read(&d, &t));
  cr_assert_eq(rp_tiling_shards(&t, 1), 2);
  cr_assert_eq(rp_tiling_block(&t, 1, 1), 0, "x=0");
  cr_assert_eq(rp_tiling_block(&t, 5, 1), 1, "x=2");
  cr_assert_eq(rp_tiling_block(&t, 5, 0), 1, "y=1");
}

/* Tilings from a daemon's JSON are untrusted: malformed ones are no picture, never a crash. */
Test(report_html, malformed_tilings_are_refused) {
  const char *shape[] = {"6"}, *good_mesh[] = {"x=4"}, *good_dims[] = {"0"};
  const char *bad_meshes[][1] = {{"x=0"}, {"x"}, {"=4"}, {"x=99999999999999999999"}, {"x=4x"}};
  rp_tiling t;
  for (size_t i = 0; i < sizeof bad_meshes / sizeof bad_meshes[0]; i++) {
    sc_diag d = tiling_diag(shape, 1, bad_meshes[i], 1, good_dims, 1, "0");
    cr_assert(!rp_tiling_read(&d, &t), "mesh %s", bad_meshes[i][0]);
  }
  const char *bad_dims[][1] = {{"1"}, {"-1"}, {"0,0"}, {"0:(3)2"}, {"0:(2"}, {"a"}};
  for (size_t i = 0; i < sizeof bad_dims / sizeof bad_dims[0]; i++) {
    sc_diag d = tiling_diag(shape, 1, good_mesh, 1, bad_dims[i], 1, "0");
    cr_assert(!rp_tiling_read(&d, &t), "dims %s", bad_dims[i][0]);
  }
  const char *huge[] = {"a=65536", "b=65536"}; /* 2^32 devices: over SC_MAX_MESH_DEVICES */
  sc_diag d = tiling_diag(shape, 1, huge, 2, good_dims, 1, "0");
  cr_assert(!rp_tiling_read(&d, &t));
  d = tiling_diag(shape, 1, good_mesh, 1, good_dims, 1, "7"); /* flagged dim out of range: no flag */
  cr_assert(rp_tiling_read(&d, &t));
  cr_assert_eq(t.flagged, -1);
}

/* Large meshes and many blocks are capped with "and N more". */
Test(report_html, large_meshes_are_capped) {
  const char *shape[] = {"4097"}, *mesh[] = {"x=4096"}, *dims[] = {"0"};
  sc_diag d = tiling_diag(shape, 1, mesh, 1, dims, 1, "0");
  sc_report r = {0};
  r.input_name = "big.mlir", r.diags = &d, r.ndiags = 1;
  char *h = sc_report_html(&r);
  cr_assert_not_null(h);
  cr_assert(strstr(h, "and 4080 more blocks"), "16 of 4096 blocks drawn");
  cr_assert(strstr(h, "and 3840 more devices"), "256 of 4096 devices drawn");
  cr_assert_leq(count(h, "<g class='device'"), 256);
  free(h);
}

/* The text report draws the uneven dimension and the rank mismatch of real modules. */
Test(report_html, text_pictures_of_real_modules) {
  size_t n;
  char *src = test_read_file("tests/modules/sharding/sharding-divisibility.bad.mlir", &n);
  cr_assert_not_null(src);
  sc_report *r = test_check(A, src, NULL);
  char *t = sc_report_text(r, false);
  cr_assert(strstr(t, "= tiles: argument #0 dim 0 (size 6) in 4 blocks of 2 over x=4, padded to 8:\n"
                      "          device     | 0   | 1   | 2   | 3     |\n"
                      "          holds      | 0:2 | 2:4 | 4:6 | pad 2 |\n"),
            "%s", t);
  char *h = sc_report_html(r);
  cr_assert(strstr(h, "<svg class='tensor' data-blocks='4'"), "%s", h);
  cr_assert(strstr(h, "<b>padded to 8</b> (2 padding)"), "%s", h);
  cr_assert(strstr(h, "data-block='3' data-padding='2'"), "the last block is all padding: %s", h);
  free(t), free(h), free(src);
  src = test_read_file("tests/modules/sharding/sharding-rank.bad.mlir", &n);
  sc_report *r2 = test_check(A, src, NULL);
  t = sc_report_text(r2, false);
  cr_assert(strstr(t, "= tiles: the sharding has 2 dimensions, arg 0 has 1:\n"
                      "          value dim  | 0 (8) | none   |\n"
                      "          sharded by | x=4   | (none) |\n"),
            "%s", t);
  free(t), free(src);
}

/* A rebuilt remote report may claim any mesh: sizes whose product overflows draw no grid, never UB. */
Test(report_html, absurd_report_mesh_draws_no_grid) {
  sc_mesh_axis axes[] = {{"a", INT64_MAX / 2, SC_AXIS_AUTO}, {"b", 4, SC_AXIS_AUTO}, {"c", -3, SC_AXIS_AUTO}};
  sc_report r = {0};
  r.input_name = "m.mlir", r.mesh_axes = axes, r.mesh_naxes = 3, r.mesh_devices = 8;
  char *h = sc_report_html(&r);
  cr_assert_not_null(h);
  cr_assert_null(strstr(h, "<svg class='mesh'"), "%s", h);
  cr_assert(strstr(h, "No problems found."));
  free(h);
}
