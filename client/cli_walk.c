/* cli_walk.c — FILE and DIR arguments into inputs. Directories are walked recursively in sorted order (symbolic links to directories are not
 * followed) and a file is checked when
 *   - no --exclude glob matches it, and
 *   - it is *.mlir, *.mlirbc or *.hlo, or an --include glob matches it, or it is a *.txt whose content
 *     starts with `HloModule` (an XLA dump: *.before_optimizations.txt, *.after_*.txt — but not the
 *     *-buffer-assignment.txt, *.ll or memory-usage reports next to them).
 * Globs match the path below the walked directory or the file name (fnmatch). Other files are
 * skipped and counted. Files named on the command line follow the same rule, and are checked besides
 * when their content is a module (MLIR text or bytecode, HLO, a jax.export container) or
 * --input-format names their format: a shell
 * glob over a dump folder checks what the folder does, and `check model.txt` still works. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "front/front.h"

#define PEEK_BYTES 4096

/* Where the first token is after blank space and `//` comment lines (hand-written modules have a
 * header comment); len when there is none. */
static size_t first_token(const char *buf, size_t len) {
  size_t i = 0;
  for (;;) {
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r')) i++;
    if (len - i < 2 || buf[i] != '/' || buf[i + 1] != '/') return i;
    const char *nl = memchr(buf + i, '\n', len - i);
    if (!nl) return len;
    i = (size_t)(nl - buf) + 1;
  }
}

bool looks_like_hlo_dump(const char *buf, size_t len) {
  size_t i = first_token(buf, len);
  return len - i >= 10 && memcmp(buf + i, "HloModule ", 10) == 0;
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool any_glob(const str_list *globs, const char *rel, const char *base) {
  for (size_t i = 0; i < globs->n; i++)
    if (fnmatch(globs->v[i], rel, 0) == 0 || fnmatch(globs->v[i], base, 0) == 0) return true;
  return false;
}

static bool txt_is_hlo(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char buf[PEEK_BYTES];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return looks_like_hlo_dump(buf, n);
}

static bool wanted(const check_settings *s, const char *path, const char *rel, const char *base) {
  if (any_glob(&s->exclude, rel, base)) return false;
  if (has_suffix(base, ".mlir") || has_suffix(base, ".mlirbc") || has_suffix(base, ".hlo")) return true;
  if (any_glob(&s->include, rel, base)) return true;
  return has_suffix(base, ".txt") && txt_is_hlo(path);
}

/* The first token of a text module, after blank space and `//` comment lines: `module`, `func.func`,
 * an alias or generic op (`#loc`, `!t`, `"builtin.module"`), `%0 =`, `sdy.mesh`, `HloModule`; or the
 * MLIR bytecode magic. Not LLVM IR (`; ModuleID`), PTX (`.version`), JSON (`{`) or prose. */
static bool looks_like_module(const char *buf, size_t len) {
  if (len >= 4 && memcmp(buf, "ML\xefR", 4) == 0) return true;
  size_t i = first_token(buf, len);
  static const char *const starts[] = {"module", "func.func", "HloModule ", "#", "!", "\"", "%", "sdy.", "stablehlo."};
  for (size_t k = 0; k < sizeof starts / sizeof *starts; k++) {
    size_t n = strlen(starts[k]);
    if (len - i >= n && memcmp(buf + i, starts[k], n) == 0) return true;
  }
  return false;
}

static bool file_looks_like_module(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return true; /* unreadable: checking it reports why */
  char buf[PEEK_BYTES];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  if (looks_like_module(buf, n)) return true;
  /* A jax.export container (a flatbuffer, any name): its offsets need the whole file. */
  char *err = NULL;
  size_t len = 0;
  char *all = read_all(path, &len, &err);
  bool exported = all && fe_is_exported(all, len);
  free(all), free(err);
  return exported;
}

/* A file named on the command line: what the walk would check, or anything that reads like a module. */
static bool named_wanted(const check_settings *s, const char *path) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  if (s->opt.input_format != SC_FMT_AUTO || wanted(s, path, path, base)) return true; /* a forced format: a module */
  if (any_glob(&s->exclude, path, base)) return false;
  return file_looks_like_module(path);
}

static int push(input_list *out, const char *path) {
  input *nv = realloc(out->v, (out->n + 1) * sizeof *nv);
  if (!nv) return EXIT_TROUBLE;
  out->v = nv;
  memset(&out->v[out->n], 0, sizeof out->v[out->n]);
  out->v[out->n++].path = xstrdup(path);
  return 0;
}

static char *join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s%s%s", a, a[0] && a[strlen(a) - 1] != '/' ? "/" : "", b);
  return s;
}

/* Walks `dir` (shown as `rel` relative to the argument). */
static int walk(const check_settings *s, const char *dir, const char *rel, input_list *out) {
  struct dirent **names = NULL;
  int n = scandir(dir, &names, NULL, alphasort);
  if (n < 0) {
    fprintf(stderr, "shardcheck: %s: %s\n", dir, strerror(errno));
    return EXIT_TROUBLE;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    const char *name = names[i]->d_name;
    char *path = NULL, *sub = NULL;
    struct stat st;
    if (rc || !strcmp(name, ".") || !strcmp(name, "..")) goto next;
    path = join(dir, name);
    sub = rel[0] ? join(rel, name) : xstrdup(name);
    if (!path || !sub || lstat(path, &st) != 0) goto next;
    if (S_ISDIR(st.st_mode)) rc = walk(s, path, sub, out);
    else if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) out->skipped++;
    else if (wanted(s, path, sub, name)) rc = push(out, path);
    else out->skipped++;
  next:
    free(path);
    free(sub);
    free(names[i]);
  }
  free(names);
  return rc;
}

int walk_inputs(char **args, int nargs, const check_settings *s, input_list *out) {
  for (int i = 0; i < nargs; i++) {
    struct stat st;
    if (strcmp(args[i], "-") != 0 && stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      if (walk(s, args[i], "", out)) return EXIT_TROUBLE;
    } else if (strcmp(args[i], "-") != 0 && access(args[i], R_OK) == 0 && !named_wanted(s, args[i])) {
      out->skipped++; /* a shell glob over a dump folder: its reports next to its modules */
    } else if (push(out, args[i])) {
      return EXIT_TROUBLE;
    }
  }
  return 0;
}

void inputs_free(input_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].path);
    if (l->v[i].mapped) munmap(l->v[i].buf, l->v[i].len);
    else free(l->v[i].buf);
    free(l->v[i].error);
    if (l->v[i].arena) sc_arena_free(l->v[i].arena);
  }
  free(l->v);
  l->v = NULL;
  l->n = 0;
}
