/* test_kernel_corpus.c — the kernel and callback families over real modules.
 *
 * Every JAX back-compat module checked against its own mesh: no error at all (each is legal for
 * the mesh it was lowered for) and no kernel/callback diagnostic. The Pallas modules (pallas_*,
 * mosaic_gpu*, triton*) deployed on --mesh data=4: every Mosaic TPU kernel is an SC0301 error,
 * every GPU kernel an SC0303 warning, and each machine fix clears its diagnostic. The other
 * StableHLO/Shardy corpora (which hold real callbacks) raise no kernel/callback diagnostic. */
#include "unit/kc_harness.h"

static const char *const jax_dirs[] = {"../shared/corpus/jax/jax_backcompat", "../shared/corpus/jax/jax_backcompat_history"};

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool is_pallas(const char *name) {
  return strncmp(name, "pallas_", 7) == 0 || strstr(name, "mosaic_gpu") || strstr(name, "triton");
}

static size_t count_substr(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

Test(kernel_corpus, jax_modules_on_their_own_mesh_have_no_error) {
  size_t checked = 0;
  for (size_t k = 0; k < sizeof jax_dirs / sizeof *jax_dirs; k++) {
    DIR *d = opendir(jax_dirs[k]);
    cr_assert_not_null(d, "cannot open %s (run from the repository root with ../shared beside it)", jax_dirs[k]);
    struct dirent *de;
    while ((de = readdir(d))) {
      if (!ends_with(de->d_name, ".mlir")) continue;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", jax_dirs[k], de->d_name);
      size_t len;
      char *text = kc_read_file(path, &len);
      sc_arena *a = sc_arena_new(0);
      sc_options o;
      memset(&o, 0, sizeof o);
      o.input_name = path;
      sc_report *r = kc_check(a, text, len, &o);
      cr_expect_eq(r->errors, 0, "%s: %zu error(s), first: %s %s", path, r->errors, r->ndiags ? r->diags[0].code : "",
                   r->ndiags ? r->diags[0].message : "");
      for (size_t i = 0; i < r->ndiags; i++)
        cr_expect(!kc_is_mine(r->diags[i].code), "%s:%u: %s %s", path, r->diags[i].line, r->diags[i].code,
                  r->diags[i].message);
      sc_arena_free(a);
      free(text);
      checked++;
    }
    closedir(d);
  }
  cr_assert_geq(checked, 100);
}

Test(kernel_corpus, pallas_modules_on_four_devices) {
  size_t tpu = 0, gpu = 0, fixes = 0;
  for (size_t k = 0; k < sizeof jax_dirs / sizeof *jax_dirs; k++) {
    DIR *d = opendir(jax_dirs[k]);
    cr_assert_not_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
      if (!ends_with(de->d_name, ".mlir") || !is_pallas(de->d_name)) continue;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", jax_dirs[k], de->d_name);
      size_t len;
      char *text = kc_read_file(path, &len);
      sc_arena *a = sc_arena_new(0);
      sc_target_mesh mesh;
      const char *err = NULL;
      cr_assert_eq(sc_mesh_parse(a, "data=4", &mesh, &err), 0);
      sc_options o;
      memset(&o, 0, sizeof o);
      o.input_name = path;
      o.mesh = &mesh;
      sc_report *r = kc_check(a, text, len, &o);
      size_t ntpu = count_substr(text, "custom_call @tpu_custom_call(");
      size_t ngpu = count_substr(text, "custom_call @mosaic_gpu") + count_substr(text, "custom_call @__gpu$xla.gpu.triton(") +
                    count_substr(text, "custom_call @triton_kernel_call");
      cr_expect_gt(ntpu + ngpu, 0, "%s: no kernel call found", path);
      cr_expect_eq(kc_count(r, "SC0301"), ntpu, "%s: %zu Mosaic TPU kernels, %zu SC0301", path, ntpu, kc_count(r, "SC0301"));
      cr_expect_eq(kc_count(r, "SC0303"), ngpu, "%s: %zu GPU kernels, %zu SC0303", path, ngpu, kc_count(r, "SC0303"));
      for (size_t i = 0; i < r->ndiags; i++) {
        const sc_diag *dg = &r->diags[i];
        if (!strcmp(dg->code, "SC0301")) {
          cr_expect_eq(dg->severity, SC_SEV_ERROR);
          cr_expect(strstr(dg->message, "Mosaic kernels cannot be automatically partitioned. Please wrap the call in a "
                                        "shard_map."),
                    "%s", dg->message);
          cr_expect(strstr(dg->message, "lowered for 1 device (mhlo.num_partitions = 1)") &&
                        strstr(dg->message, "target mesh data=4"),
                    "%s: both meshes named: %s", path, dg->message);
        }
        if (!strcmp(dg->code, "SC0303")) cr_expect_eq(dg->severity, SC_SEV_WARNING);
      }
      tpu += ntpu;
      gpu += ngpu;
      fixes += kc_check_fixes_text(path, text, len, &o);
      sc_arena_free(a);
      free(text);
    }
    closedir(d);
  }
  cr_expect_geq(tpu, 3, "Mosaic TPU kernels in the corpus");
  cr_expect_geq(gpu, 3, "GPU kernels in the corpus");
  cr_expect_geq(fixes, tpu + gpu, "a machine fix for every kernel");
}

static void no_kernel_callback_diags(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "cannot open %s", dir);
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!ends_with(de->d_name, ".mlir")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    size_t len;
    char *text = kc_read_file(path, &len);
    sc_arena *a = sc_arena_new(0);
    sc_options o;
    memset(&o, 0, sizeof o);
    o.input_name = path;
    o.split_input_file = true;
    sc_report *r = kc_check(a, text, len, &o);
    for (size_t i = 0; i < r->ndiags; i++)
      cr_expect(!kc_is_mine(r->diags[i].code), "%s:%u: %s %s", path, r->diags[i].line, r->diags[i].code,
                r->diags[i].message);
    sc_arena_free(a);
    free(text);
  }
  closedir(d);
}

Test(kernel_corpus, other_corpora_raise_no_kernel_or_callback_diagnostic) {
  no_kernel_callback_diags("../shared/corpus/stablehlo");
  no_kernel_callback_diags("../shared/corpus/shardy/valid");
}
