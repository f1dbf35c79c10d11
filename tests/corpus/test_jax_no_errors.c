/* Modules really emitted by JAX (../shared/corpus/jax) are legal for the mesh they were lowered for:
 * no error (nor warning) from any rule. Also checks what the sharding model sees in them: meshes,
 * num_partitions and manual contexts. */
#include <criterion/criterion.h>
#include <glob.h>

#include "helpers.h"
#include "model/model.h"

#define CORPUS "../shared/corpus/jax"

static size_t check_pattern(const char *pattern) {
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0) return 0;
  size_t n = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    size_t len;
    char *buf = test_read_file(g.gl_pathv[i], &len);
    cr_assert_not_null(buf);
    sc_arena *a = sc_arena_new(0);
    sc_options opt = {0};
    opt.input_name = g.gl_pathv[i];
    sc_report *r = NULL;
    cr_assert_eq(sc_check(a, buf, len, &opt, &r), SC_OK);
    for (size_t k = 0; k < r->ndiags; k++)
      cr_expect(r->diags[k].severity < SC_SEV_WARNING, "%s:%u: %s [%s]", g.gl_pathv[i], r->diags[k].line,
                r->diags[k].message, r->diags[k].code);
    sc_arena_free(a);
    free(buf);
    n++;
  }
  globfree(&g);
  return n;
}

Test(jax_corpus, backcompat_modules_have_no_errors) {
  cr_assert_geq(check_pattern(CORPUS "/jax_backcompat/*.mlir"), 100);
  check_pattern(CORPUS "/jax_backcompat_history/*.mlir");
}

/* Parses a corpus module and builds its model (parse failure fails the test). The module points into
 * the file's bytes, which the arena owns (copied) so that freeing the arena frees everything. */
static md_model *model_of(sc_arena *a, const char *path, ir_module **out) {
  size_t len;
  char *file = test_read_file(path, &len);
  cr_assert_not_null(file, "missing %s", path);
  char *buf = ar_strndup(a, file, len);
  free(file);
  fe_parse_error err = {0};
  ir_module *m = test_parse(a, buf, &err);
  cr_assert_not_null(m, "%s: %s", path, err.message);
  sc_options opt = {0};
  *out = m;
  return md_model_build(a, m, &opt);
}

Test(jax_corpus, shardy_shard_map_is_fully_manual) {
  sc_arena *a = sc_arena_new(0);
  ir_module *m;
  md_model *model = model_of(a, CORPUS "/jax_backcompat/tpu_Sharding__1.mlir", &m);
  cr_assert_eq(model->num_partitions, 2);
  cr_assert_eq(model->nmeshes, 1);
  cr_assert_not_null(model->effective);
  cr_assert_eq(model->effective->devices, 2);
  ir_op *permute = test_find_op(m, "stablehlo.collective_permute", 0);
  cr_assert_not_null(permute);
  const md_manual_context *c = md_model_manual(model, permute);
  cr_assert_eq(c->nmanual_axes, 1);
  cr_assert(ir_span_eq(c->manual_axes[0], "a"));
  cr_assert(md_model_fully_manual(model, permute));
  cr_assert_not(md_model_fully_manual(model, test_find_op(m, "sdy.manual_computation", 0)));
  sc_arena_free(a);
}

Test(jax_corpus, gspmd_shard_map_region) {
  sc_arena *a = sc_arena_new(0);
  ir_module *m;
  md_model *model = model_of(a, CORPUS "/jax_backcompat/tpu_Sharding__0.mlir", &m);
  ir_op *permute = test_find_op(m, "stablehlo.collective_permute", 0);
  cr_assert_not_null(permute);
  const md_manual_context *c = md_model_manual(model, permute);
  cr_assert(c->gspmd_manual);
  cr_assert_not(c->gspmd_partial);
  cr_assert(md_model_fully_manual(model, permute));
  /* the @Sharding before the region and the return after it are not manual */
  cr_assert_not(md_model_manual(model, test_find_op(m, "stablehlo.custom_call", 0))->gspmd_manual);
  cr_assert_not(md_model_manual(model, test_find_op(m, "func.return", 1))->gspmd_manual);
  sc_arena_free(a);
}

Test(jax_corpus, roundtrip_manual_body_and_meshes) {
  sc_arena *a = sc_arena_new(0);
  ir_module *m;
  md_model *model = model_of(
      a, CORPUS "/jax_backcompat_history/shardy_sharding_ops_with_different_meshes__2025-12-29_b5f9ff3bb5_0.mlir", &m);
  cr_assert_eq(model->nmeshes, 1, "xla.sdy.meshes gives the mesh");
  cr_assert_eq(model->meshes[0].devices, 2);
  ir_op *permute = test_find_op(m, "stablehlo.collective_permute", 0);
  const md_manual_context *c = md_model_manual(model, permute);
  cr_assert_eq(c->nmanual_axes, 1, "the body of call @xla.sdy.manual_computation_body is manual over \"a\"");
  cr_assert(md_model_fully_manual(model, permute));
  sc_arena_free(a);
}
