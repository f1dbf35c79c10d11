/* test_kernel_corpus.c — the kernel and callback families over real modules.
 *
 * Every JAX back-compat module checked against its own mesh: no error at all (each is legal for
 * the mesh it was lowered for) and no kernel/callback diagnostic. The Pallas modules (pallas_*,
 * mosaic_gpu*, triton*) deployed on --mesh data=4: every Mosaic TPU kernel is an SC0301 error,
 * every GPU kernel an SC0303 warning, and each machine fix clears its diagnostic. The other
 * StableHLO/Shardy corpora (which hold real callbacks) raise no kernel/callback diagnostic. */
#include "unit/module_harness.h"

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

/* The name a fix's `NAME = jax.shard_map(NAME, ...)` line wraps, or NULL. */
static char *wrapped_name(const char *snippet, char *out, size_t cap) {
  const char *call = strstr(snippet, " = jax.shard_map(");
  if (!call) return NULL;
  const char *start = call;
  while (start > snippet && start[-1] != '\n') start--;
  snprintf(out, cap, "%.*s", (int)(call - start), start);
  return out;
}

static const char *context_value(const sc_diag *d, const char *key) {
  for (size_t i = 0; i < d->ncontext; i++)
    if (!strcmp(d->context[i].key, key) && d->context[i].nvalues) return d->context[i].values[0];
  return NULL;
}

/* A shard_map fix wraps a function the module names (the jitted function `module @jit_NAME` or the
 * nested jit's `func.func private @NAME` holding the call), never the kernel body or the custom-call
 * target; its snippet imports what it uses. */
static size_t expect_wraps_module_function(const char *path, const char *text, const sc_diag *dg) {
  size_t checked = 0;
  for (size_t f = 0; f < dg->nfixes; f++) {
    const char *snip = dg->fixes[f].snippet;
    char name[128], jit_decl[160], func_decl[160];
    if (!snip || !wrapped_name(snip, name, sizeof name)) continue;
    const char *kernel = context_value(dg, "kernel");
    cr_expect(!kernel || strcmp(name, kernel), "%s: %s fix wraps the kernel body `%s`", path, dg->code, name);
    cr_expect(!dg->target || strcmp(name, dg->target), "%s: %s fix wraps the custom-call target", path, dg->code);
    snprintf(jit_decl, sizeof jit_decl, "module @jit_%s ", name);
    snprintf(func_decl, sizeof func_decl, "func.func private @%s(", name);
    cr_expect(strstr(text, jit_decl) || strstr(text, func_decl), "%s: %s fix wraps `%s`, which the module does not name",
              path, dg->code, name);
    cr_expect(strstr(snip, "import jax\n") && strstr(snip, "from jax.sharding import PartitionSpec as P\n"),
              "%s: %s snippet imports what it uses:\n%s", path, dg->code, snip);
    cr_expect(strstr(snip, "JAX 0.7 or newer"), "%s: %s snippet says which JAX has jax.shard_map", path, dg->code);
    checked++;
  }
  return checked;
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
      char *text = test_read_file(path, &len);
      sc_arena *a = sc_arena_new(0);
      sc_options o;
      memset(&o, 0, sizeof o);
      o.input_name = path;
      sc_report *r = mh_check(a, text, len, &o);
      cr_expect_eq(r->errors, 0, "%s: %zu error(s), first: %s %s", path, r->errors, r->ndiags ? r->diags[0].code : "",
                   r->ndiags ? r->diags[0].message : "");
      for (size_t i = 0; i < r->ndiags; i++)
        cr_expect(!mh_is_mine(r->diags[i].code), "%s:%u: %s %s", path, r->diags[i].line, r->diags[i].code,
                  r->diags[i].message);
      sc_arena_free(a);
      free(text);
      checked++;
    }
    closedir(d);
  }
  cr_assert_geq(checked, 100);
}

/* The module checked against --mesh data=4 (mesh and options filled in for re-checks). */
static sc_report *check_on_four_devices(sc_arena *a, const char *path, const char *buf, size_t len, sc_target_mesh *mesh,
                                        sc_options *o) {
  const char *err = NULL;
  cr_assert_eq(sc_mesh_parse(a, "data=4", mesh, &err), 0);
  memset(o, 0, sizeof *o);
  o->input_name = path;
  o->mesh = mesh;
  return mh_check(a, buf, len, o);
}

Test(kernel_corpus, pallas_modules_on_four_devices) {
  size_t tpu = 0, gpu = 0, fixes = 0, wraps = 0;
  for (size_t k = 0; k < sizeof jax_dirs / sizeof *jax_dirs; k++) {
    DIR *d = opendir(jax_dirs[k]);
    cr_assert_not_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
      if (!ends_with(de->d_name, ".mlir") || !is_pallas(de->d_name)) continue;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", jax_dirs[k], de->d_name);
      size_t len;
      char *text = test_read_file(path, &len);
      sc_arena *a = sc_arena_new(0);
      sc_target_mesh mesh;
      sc_options o;
      sc_report *r = check_on_four_devices(a, path, text, len, &mesh, &o);
      size_t ntpu = count_substr(text, "custom_call @tpu_custom_call(");
      size_t ngpu = count_substr(text, "custom_call @mosaic_gpu") + count_substr(text, "custom_call @__gpu$xla.gpu.triton(") +
                    count_substr(text, "custom_call @triton_kernel_call");
      cr_expect_gt(ntpu + ngpu, 0, "%s: no kernel call found", path);
      cr_expect_eq(mh_count(r, "SC0301"), ntpu, "%s: %zu Mosaic TPU kernels, %zu SC0301", path, ntpu, mh_count(r, "SC0301"));
      cr_expect_eq(mh_count(r, "SC0303"), ngpu, "%s: %zu GPU kernels, %zu SC0303", path, ngpu, mh_count(r, "SC0303"));
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
        wraps += expect_wraps_module_function(path, text, dg);
      }
      tpu += ntpu;
      gpu += ngpu;
      fixes += mh_check_fixes_text(path, text, len, &o);
      sc_arena_free(a);
      free(text);
    }
    closedir(d);
  }
  cr_expect_geq(tpu, 3, "Mosaic TPU kernels in the corpus");
  cr_expect_geq(gpu, 3, "GPU kernels in the corpus");
  cr_expect_geq(fixes, tpu + gpu, "a machine fix for every kernel");
  cr_expect_geq(wraps, tpu + gpu, "a shard_map fix wrapping a function of the program for every kernel");
}

/* The matmul module's kernel sits in `@matmul` (jax.jit(matmul)), which calls pl.pallas_call at
 * matmul.py:68: the fix wraps `matmul`, says where the call is, and never `matmul_kernel`. */
Test(kernel_corpus, pallas_matmul_fix_wraps_the_calling_function) {
  const char *path = "../shared/corpus/jax/jax_backcompat/pallas_mosaic_matmul__0.mlirbc";
  size_t len;
  char *bytes = test_read_file(path, &len);
  sc_arena *a = sc_arena_new(0);
  sc_target_mesh mesh;
  sc_options o;
  sc_report *r = check_on_four_devices(a, path, bytes, len, &mesh, &o);
  const sc_diag *dg = mh_find(r, "SC0301");
  cr_assert_not_null(dg);
  cr_assert_geq(dg->nfixes, 1);
  const char *snip = dg->fixes[0].snippet;
  cr_expect(strstr(snip, "matmul = jax.shard_map(matmul, mesh=mesh, in_specs=(P(), P()), out_specs=P()"), "%s", snip);
  cr_expect(strstr(snip, "matmul calls pl.pallas_call for `matmul_kernel` (at "
                         "third_party/py/jax/experimental/pallas/ops/tpu/matmul.py:68)"),
            "%s", snip);
  cr_expect(!strstr(snip, "matmul_kernel = "), "%s", snip);
  sc_arena_free(a);
  free(bytes);
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
    char *text = test_read_file(path, &len);
    sc_arena *a = sc_arena_new(0);
    sc_options o;
    memset(&o, 0, sizeof o);
    o.input_name = path;
    o.split_input_file = true;
    sc_report *r = mh_check(a, text, len, &o);
    for (size_t i = 0; i < r->ndiags; i++)
      cr_expect(!mh_is_mine(r->diags[i].code), "%s:%u: %s %s", path, r->diags[i].line, r->diags[i].code,
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
