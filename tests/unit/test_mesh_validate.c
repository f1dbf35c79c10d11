/* sc_mesh_validate: the one target-mesh validator (spec parser, daemon requests, sc_check). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "shardcheck.h"
#include "util/arena.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(mesh_validate, .init = setup, .fini = teardown);

static const char *parse_error(const char *spec) {
  sc_target_mesh m;
  const char *err = NULL;
  return sc_mesh_parse(A, spec, &m, &err) ? err : NULL;
}

Test(mesh_validate, specs) {
  cr_assert_null(parse_error("data=2,model=4"));
  cr_assert_null(parse_error("x=2,y=2;devices=3,2,1,0"));
  cr_assert_str_eq(parse_error("data=2,model=4;devices=0,0,0,0,0,0,0,0"),
                   "mesh.device_ids[1]: device id 0 is a duplicate (mesh of 8 devices)");
  cr_assert_str_eq(parse_error("x=4;devices=0,1,2,4"), "mesh.device_ids[3]: device id 4 is out of range (mesh of 4 devices)");
  cr_assert_str_eq(parse_error("x=4;devices=0,1"), "mesh.device_ids: 2 ids for a mesh of 4 devices");
  cr_assert_str_eq(parse_error("x=2,y=3,x=2"), "mesh.axes[2].name: duplicate axis \"x\"");
  cr_assert_str_eq(parse_error("x=0"), "mesh.axes[0].size: axis \"x\" has size 0, must be >= 1");
  cr_assert_str_eq(parse_error("x=4096,y=4097"), "mesh.axes: more than 16777216 devices");
}

/* Many axes of size 1 with distinct names: the hash set keeps this linear (the O(n^2) pairwise
 * comparison was a reported DoS through the daemon); a late duplicate is still found. */
Test(mesh_validate, many_axes_and_a_late_duplicate) {
  enum { N = 200000 };
  sc_target_mesh m = {0};
  m.axes = ar_calloc(A, N, sizeof *m.axes);
  m.naxes = N;
  for (size_t i = 0; i < N; i++) {
    m.axes[i].name = ar_printf(A, "a%zu", i);
    m.axes[i].size = 1;
  }
  const char *err = NULL;
  cr_assert_eq(sc_mesh_validate(A, &m, &err), 0, "%s", err);
  m.axes[N - 1].name = "a17";
  cr_assert_eq(sc_mesh_validate(A, &m, &err), -1);
  cr_assert_str_eq(err, "mesh.axes[199999].name: duplicate axis \"a17\"");
}

/* sc_check refuses an invalid mesh handed in through the API, with the same words. */
Test(mesh_validate, check_refuses_invalid_mesh) {
  sc_mesh_axis ax[1] = {{"x", 2, SC_AXIS_AUTO}};
  int64_t ids[2] = {1, 1};
  sc_target_mesh m = {ax, 1, ids, 2, SC_PLATFORM_UNSPECIFIED, NULL};
  sc_options opt = {0};
  opt.mesh = &m;
  sc_report *r = NULL;
  cr_assert_eq(sc_check(A, "module {}\n", 10, &opt, &r), SC_ERR_INVALID);
  cr_assert_str_eq(r->failure, "mesh.device_ids[1]: device id 1 is a duplicate (mesh of 2 devices)");
}
