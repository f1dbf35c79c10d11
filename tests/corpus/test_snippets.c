/* test_snippets.c — every fix snippet is Python a user can paste.
 *
 * Runs the whole check over the corpus (../shared/corpus), tests/modules and examples/, each without a
 * target mesh and retargeted to data=4 and data=2,model=4, plus every catalog example with its mesh;
 * collects each fix's snippet and parses all of them with Debian's /usr/bin/python3 `ast.parse`. Also
 * checks the shape of a fix: a one-line title, never an empty snippet, and that a snippet imports the
 * JAX names it uses (jax, jnp, np, P, NamedSharding, pl, pltpu, pltriton). */
#include <criterion/criterion.h>
#include <glob.h>
#include <unistd.h>

#include "helpers.h"

static const char *const meshes[] = {NULL, "data=4", "data=2,model=4"};

typedef struct {
  FILE *out;   /* NUL-separated records: label \x1f snippet */
  size_t snippets, checks;
} collect;

static void collect_report(collect *c, const char *label, const char *mesh, const sc_report *r) {
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    for (size_t k = 0; k < d->nfixes; k++) {
      const sc_fix *f = &d->fixes[k];
      cr_expect(f->title && *f->title && !strchr(f->title, '\n'), "%s [%s] %s: fix title is not one line: '%s'", label,
                mesh ? mesh : "-", d->code, f->title ? f->title : "(null)");
      if (!f->snippet) continue;
      cr_expect(*f->snippet, "%s [%s] %s: empty snippet (omit it instead)", label, mesh ? mesh : "-", d->code);
      fprintf(c->out, "%s [mesh %s] %s:%u %s%c%s%c", label, mesh ? mesh : "-", d->code, d->line, f->title, 0x1f,
              f->snippet, 0);
      c->snippets++;
    }
  }
}

static void check_text(collect *c, const char *label, const char *text, size_t len, const char *mesh_spec,
                       sc_format fmt) {
  sc_arena *a = sc_arena_new(0);
  sc_options o;
  memset(&o, 0, sizeof o);
  o.input_name = label;
  o.input_format = fmt;
  o.split_input_file = strstr(text, "\n// -----") != NULL;
  sc_target_mesh m;
  if (mesh_spec) {
    const char *err = NULL;
    cr_assert_eq(sc_mesh_parse(a, mesh_spec, &m, &err), 0, "%s", err);
    o.mesh = &m;
  }
  sc_report *r = NULL;
  sc_check(a, text, len, &o, &r);
  cr_assert_not_null(r, "%s: no report", label);
  collect_report(c, label, mesh_spec, r);
  c->checks++;
  sc_arena_free(a);
}

static void check_glob(collect *c, const char *pattern) {
  glob_t g;
  if (glob(pattern, GLOB_BRACE, NULL, &g) != 0) return;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    const char *path = g.gl_pathv[i];
    size_t len = 0;
    char *text = test_read_file(path, &len);
    cr_assert_not_null(text, "cannot read %s", path);
    size_t pl = strlen(path);
    sc_format fmt = pl > 4 && strcmp(path + pl - 4, ".hlo") == 0 ? SC_FMT_HLO : SC_FMT_AUTO;
    for (size_t m = 0; m < sizeof meshes / sizeof *meshes; m++) check_text(c, path, text, len, meshes[m], fmt);
    free(text);
  }
  globfree(&g);
}

Test(snippets, every_fix_snippet_parses_as_python) {
  char path[] = "/tmp/sc_snippets_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  collect c = {fdopen(fd, "w"), 0, 0};
  cr_assert_not_null(c.out);
  check_glob(&c, "../shared/corpus/*/*/*.{mlir,hlo}");
  check_glob(&c, "../shared/corpus/*/*.{mlir,hlo}");
  check_glob(&c, "tests/modules/*/*.{mlir,hlo}");
  check_glob(&c, "examples/*.{mlir,hlo}");
  size_t corpus_checks = c.checks;
  for (size_t i = 0; i < sc_catalog_count(); i++) {
    const sc_catalog_entry *e = sc_catalog_at(i);
    if (e->bad_example) check_text(&c, e->code, e->bad_example, strlen(e->bad_example), e->bad_mesh, SC_FMT_AUTO);
    if (e->good_example) check_text(&c, e->code, e->good_example, strlen(e->good_example), e->bad_mesh, SC_FMT_AUTO);
  }
  fclose(c.out);
  cr_assert_geq(corpus_checks, 3 * 300, "too few modules found (%zu checks): run from the repository root", corpus_checks);
  cr_assert_geq(c.snippets, 50, "only %zu snippets collected", c.snippets);
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c 'import ast,sys\n"
           "bad=0\n"
           "for rec in open(sys.argv[1],\"rb\").read().split(b\"\\0\")[:-1]:\n"
           "  label,src=rec.decode().split(\"\\x1f\",1)\n"
           "  try: t=ast.parse(src)\n"
           "  except SyntaxError as e:\n"
           "    bad+=1; print(\"NOT PYTHON:\",label,\"--\",e.msg,\"\\n\",src,\"\\n\"); continue\n"
           "  why=\"only a comment\" if not t.body else \"a ... placeholder\" if any(isinstance(n,ast.Constant) and n.value is Ellipsis for n in ast.walk(t)) else None\n"
           "  if why: bad+=1; print(\"NOT PYTHON:\",label,\"--\",why,\"\\n\",src,\"\\n\")\n"
           "  bound={(a.asname or a.name).split(\".\")[0] for n in ast.walk(t) if isinstance(n,(ast.Import,ast.ImportFrom)) for a in n.names}\n"
           "  lib={\"jax\",\"jnp\",\"np\",\"P\",\"NamedSharding\",\"pl\",\"pltpu\",\"pltriton\"}\n"
           "  missing=sorted({n.id for n in ast.walk(t) if isinstance(n,ast.Name) and n.id in lib}-bound)\n"
           "  if missing: bad+=1; print(\"NOT IMPORTED:\",label,\"--\",missing,\"\\n\",src,\"\\n\")\n"
           "sys.exit(1 if bad else 0)' %s",
           path);
  int rc = system(cmd);
  unlink(path);
  cr_assert_eq(rc, 0, "some of the %zu fix snippets are not Python (listed above)", c.snippets);
}
