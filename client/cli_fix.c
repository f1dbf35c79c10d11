/* cli_fix.c — `shardcheck fix FILE`: applies the machine-applicable fixes of FILE's diagnostics, re-checks
 * the result, reports what was applied and what remains, and writes the module (or a unified diff).
 *
 * Each diagnostic offers its first machine fix; fixes whose edits collide are not applied together (see
 * reject_overlaps). Run `fix` again to apply what a collision held back. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "util/strbuf.h"

typedef struct {
  const sc_edit *e;
  size_t fix; /* index into the chosen fixes */
} edit_ref;

static int by_offset(const void *x, const void *y) {
  const edit_ref *a = x, *b = y;
  if (a->e->offset != b->e->offset) return a->e->offset < b->e->offset ? -1 : 1;
  return a->fix < b->fix ? -1 : a->fix > b->fix;
}

/* Marks rejected[f] for fixes that collide with the edits kept so far, walking all edits by offset:
 * an edit collides when it starts before the furthest end of kept edits of other fixes, or inserts at
 * the same offset as one. Kept edits therefore never overlap; of two colliding fixes the one reaching
 * the bytes first wins (conservative: a rejected fix's earlier edits still count). O(E log E). */
static void reject_overlaps(edit_ref *edits, size_t n, bool *rejected) {
  qsort(edits, n, sizeof *edits, by_offset);
  uint64_t reach = 0, insert_at = UINT64_MAX;
  size_t owner = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    const sc_edit *e = edits[i].e;
    size_t f = edits[i].fix;
    if (rejected[f]) continue;
    bool other = owner != (size_t)-1 && owner != f;
    if (other && (e->offset < reach || (e->length == 0 && e->offset == insert_at))) {
      rejected[f] = true;
      continue;
    }
    if (e->offset + (uint64_t)e->length >= reach) reach = e->offset + (uint64_t)e->length, owner = f;
    if (e->length == 0) insert_at = e->offset;
  }
}

/* The module with the accepted edits applied (malloc'd). */
static char *apply_edits(const char *buf, size_t len, edit_ref *edits, size_t n, const bool *rejected, size_t *out_len) {
  strbuf b = {0};
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    if (rejected[edits[i].fix]) continue;
    const sc_edit *e = edits[i].e;
    if (e->offset < at || e->offset + (size_t)e->length > len) continue;
    sb_put(&b, buf + at, e->offset - at);
    sb_puts(&b, e->replacement ? e->replacement : "");
    at = e->offset + e->length;
  }
  sb_put(&b, buf + at, len - at);
  *out_len = b.n;
  return sb_take(&b);
}

/* --- unified diff of the changed line ranges (the edits say where; context 3 lines) --- */

typedef struct {
  const char *p;
  size_t n;
  size_t *start; /* line i starts at start[i]; start[nlines] = n */
  size_t nlines;
} lines;

static lines split_lines(const char *p, size_t n) {
  lines l = {p, n, NULL, 0};
  size_t count = 1;
  for (size_t i = 0; i < n; i++) count += p[i] == '\n';
  l.start = malloc((count + 1) * sizeof *l.start);
  if (!l.start) return l;
  l.start[0] = 0;
  for (size_t i = 0; i < n; i++)
    if (p[i] == '\n' && i + 1 < n) l.start[++l.nlines] = i + 1;
  l.nlines = n ? l.nlines + 1 : 0;
  l.start[l.nlines] = n;
  return l;
}

static void put_lines(strbuf *b, const lines *l, size_t from, size_t to, char mark) {
  for (size_t i = from; i < to; i++) {
    size_t s = l->start[i], e = l->start[i + 1];
    sb_printf(b, "%c", mark);
    sb_put(b, l->p + s, e - s);
    if (e == s || l->p[e - 1] != '\n') sb_puts(b, "\n\\ No newline at end of file\n");
  }
}

/* Lines [0, a) are equal at the start and the last `z` lines at the end; one hunk in between with
 * context. Fixes are local, so one hunk over the changed span keeps the diff short and exact. */
static char *unified_diff(const char *name, const char *old, size_t olen, const char *new_, size_t nlen) {
  lines a = split_lines(old, olen), b = split_lines(new_, nlen);
  strbuf out = {0};
  if (!a.start || !b.start) goto done;
  size_t head = 0;
  while (head < a.nlines && head < b.nlines && a.start[head + 1] - a.start[head] == b.start[head + 1] - b.start[head] &&
         !memcmp(old + a.start[head], new_ + b.start[head], a.start[head + 1] - a.start[head]))
    head++;
  size_t tail = 0;
  while (tail < a.nlines - head && tail < b.nlines - head) {
    size_t ia = a.nlines - 1 - tail, ib = b.nlines - 1 - tail;
    size_t la = a.start[ia + 1] - a.start[ia], lb = b.start[ib + 1] - b.start[ib];
    if (la != lb || memcmp(old + a.start[ia], new_ + b.start[ib], la)) break;
    tail++;
  }
  if (head == a.nlines && head == b.nlines) goto done;
  size_t from = head > 3 ? head - 3 : 0;
  size_t a_end = a.nlines - tail, b_end = b.nlines - tail;
  size_t a_ctx = a_end + 3 < a.nlines ? a_end + 3 : a.nlines, b_ctx = b_end + (a_ctx - a_end);
  sb_printf(&out, "--- %s\n+++ %s (fixed)\n@@ -%zu,%zu +%zu,%zu @@\n", name, name, from + 1, a_ctx - from, from + 1,
                   b_ctx - from);
  put_lines(&out, &a, from, head, ' ');
  put_lines(&out, &a, head, a_end, '-');
  put_lines(&out, &b, head, b_end, '+');
  put_lines(&out, &a, a_end, a_ctx, ' ');
done:
  free(a.start);
  free(b.start);
  return out.n ? sb_take(&out) : (free(sb_take(&out)), NULL);
}

typedef struct {
  const char *file, *out, *mesh, *rules;
  bool in_place, diff;
  sc_options opt;
} fix_args;

static int parse_fix_args(int argc, char **argv, fix_args *a) {
  enum { F_INPLACE = 256, F_DIFF, F_MESH, F_PLATFORM, F_RULES, F_INFMT };
  static const struct option longopts[] = {
      {"output", required_argument, 0, 'o'}, {"in-place", no_argument, 0, F_INPLACE},
      {"diff", no_argument, 0, F_DIFF},      {"mesh", required_argument, 0, F_MESH},
      {"platform", required_argument, 0, F_PLATFORM}, {"rules", required_argument, 0, F_RULES},
      {"input-format", required_argument, 0, F_INFMT}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': a->out = optarg; break;
    case F_INPLACE: a->in_place = true; break;
    case F_DIFF: a->diff = true; break;
    case F_MESH: a->mesh = optarg; break;
    case F_RULES: a->opt.rules = optarg; break;
    case F_PLATFORM:
      if (sc_platform_parse(optarg, &a->opt.platform)) return fprintf(stderr, "shardcheck: unknown platform '%s'\n", optarg), EXIT_TROUBLE;
      break;
    case F_INFMT:
      if (sc_format_parse(optarg, &a->opt.input_format)) return fprintf(stderr, "shardcheck: unknown --input-format '%s'\n", optarg), EXIT_TROUBLE;
      break;
    case 'h': return -1;
    default: print_usage(stderr, "fix"); return EXIT_TROUBLE;
    }
  }
  if (optind != argc - 1 || (a->out && a->in_place)) {
    fprintf(stderr, "shardcheck: fix needs one FILE, and -o or --in-place (not both)\n");
    print_usage(stderr, "fix");
    return EXIT_TROUBLE;
  }
  a->file = argv[optind];
  if (a->in_place && !strcmp(a->file, "-")) return fprintf(stderr, "shardcheck: --in-place needs a file, not stdin\n"), EXIT_TROUBLE;
  return 0;
}

static int write_file(const char *path, const char *buf, size_t len) {
  size_t n = strlen(path) + 16;
  char *tmp = malloc(n);
  if (!tmp) return EXIT_TROUBLE;
  snprintf(tmp, n, "%s.fix-tmp", path);
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(buf, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = false;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) {
    fprintf(stderr, "shardcheck: cannot write %s\n", path);
    remove(tmp);
  }
  free(tmp);
  return ok ? 0 : EXIT_TROUBLE;
}

/* Chooses each diagnostic's first machine fix; returns the edits (malloc'd) and their fixes. */
static edit_ref *collect_edits(const sc_report *r, const sc_fix ***fixes, const sc_diag ***owners, size_t *nfixes,
                               size_t *nedits) {
  size_t ne = 0, nf = 0;
  for (size_t i = 0; i < r->ndiags; i++)
    for (size_t k = 0; k < r->diags[i].nfixes; k++)
      if (r->diags[i].fixes[k].machine && r->diags[i].fixes[k].nedits) {
        ne += r->diags[i].fixes[k].nedits, nf++;
        break;
      }
  edit_ref *e = calloc(ne ? ne : 1, sizeof *e);
  *fixes = calloc(nf ? nf : 1, sizeof **fixes);
  *owners = calloc(nf ? nf : 1, sizeof **owners);
  if (!e || !*fixes || !*owners) return free(e), NULL;
  *nfixes = *nedits = 0;
  for (size_t i = 0; i < r->ndiags; i++)
    for (size_t k = 0; k < r->diags[i].nfixes; k++) {
      const sc_fix *f = &r->diags[i].fixes[k];
      if (!f->machine || !f->nedits) continue;
      for (size_t j = 0; j < f->nedits; j++) e[(*nedits)++] = (edit_ref){&f->edits[j], *nfixes};
      (*owners)[*nfixes] = &r->diags[i];
      (*fixes)[(*nfixes)++] = f;
      break;
    }
  return e;
}

static int fix_module(const fix_args *a, const char *buf, size_t len, sc_report *r) {
  const sc_fix **fixes = NULL;
  const sc_diag **owners = NULL;
  size_t nfixes = 0, nedits = 0;
  edit_ref *edits = collect_edits(r, &fixes, &owners, &nfixes, &nedits);
  bool *rejected = calloc(nfixes ? nfixes : 1, 1);
  int rc = EXIT_TROUBLE;
  if (!edits || !rejected) goto out;
  reject_overlaps(edits, nedits, rejected);
  size_t applied = 0;
  for (size_t i = 0; i < nfixes; i++) {
    fprintf(stderr, "%s: %s:%u:%u: [%s] %s\n", rejected[i] ? "not applied (collides with another fix)" : "applied",
            r->input_name, owners[i]->line, owners[i]->col, owners[i]->code, fixes[i]->title ? fixes[i]->title : "");
    applied += !rejected[i];
  }
  size_t new_len = 0;
  char *fixed = apply_edits(buf, len, edits, nedits, rejected, &new_len);
  if (!fixed) goto out;
  sc_arena *arena = sc_arena_new(0);
  sc_report *again = NULL;
  sc_options opt = a->opt;
  opt.input_name = r->input_name;
  if (!arena || sc_check(arena, fixed, new_len, &opt, &again) != SC_OK || !again) {
    fprintf(stderr, "shardcheck: re-checking the fixed module failed\n");
  } else {
    fprintf(stderr, "%zu fix%s applied; what remains:\n", applied, applied == 1 ? "" : "es");
    char *text = sc_report_text(again, false);
    if (text) fputs(text, stderr);
    free(text);
    rc = again->errors ? EXIT_FINDINGS : 0;
    if (a->diff && applied) rc = EXIT_FINDINGS; /* as diff(1): 1 = there are changes */
    if (a->diff) {
      char *d = unified_diff(r->input_name, buf, len, fixed, new_len);
      if (d) fputs(d, stdout);
      free(d);
    }
    const char *dest = a->in_place ? a->file : a->out;
    if (dest && applied && write_file(dest, fixed, new_len)) rc = EXIT_TROUBLE;
    else if (dest && !applied && a->out && write_file(dest, buf, len)) rc = EXIT_TROUBLE;
    else if (!dest && !a->diff && fwrite(fixed, 1, new_len, stdout) != new_len) rc = EXIT_TROUBLE;
  }
  if (arena) sc_arena_free(arena);
  free(fixed);
out:
  free(edits), free(rejected), free(fixes), free(owners);
  return rc;
}

int cmd_fix(int argc, char **argv) {
  fix_args a;
  memset(&a, 0, sizeof a);
  int rc = parse_fix_args(argc, argv, &a);
  if (rc) {
    if (rc < 0) print_usage(stdout, "fix");
    return rc < 0 ? 0 : rc;
  }
  sc_arena *arena = sc_arena_new(0);
  sc_target_mesh mesh;
  const char *err = NULL;
  char *ioerr = NULL;
  size_t len = 0;
  struct stat st;
  if (strcmp(a.file, "-") && stat(a.file, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "shardcheck: fix: %s is a directory; fix takes one module file (`shardcheck check %s` lists "
                    "what a directory's modules need)\n",
            a.file, a.file);
    if (arena) sc_arena_free(arena);
    return EXIT_TROUBLE;
  }
  char *buf = arena ? read_all(a.file, &len, &ioerr) : NULL;
  sc_report *r = NULL;
  rc = EXIT_TROUBLE;
  if (!buf) fprintf(stderr, "shardcheck: %s: %s\n", a.file, ioerr ? ioerr : "out of memory");
  else if (a.mesh && sc_mesh_parse(arena, a.mesh, &mesh, &err)) fprintf(stderr, "shardcheck: --mesh: %s\n", err);
  else {
    a.opt.mesh = a.mesh ? &mesh : NULL;
    a.opt.input_name = strcmp(a.file, "-") ? a.file : "<stdin>";
    a.opt.hash_seed = random_hash_seed();
    if (sc_check(arena, buf, len, &a.opt, &r) != SC_OK || !r)
      fprintf(stderr, "shardcheck: %s: %s\n", a.file, r && r->failure ? r->failure : "check failed");
    else
      rc = fix_module(&a, buf, len, r);
  }
  free(ioerr);
  free(buf);
  if (arena) sc_arena_free(arena);
  return rc;
}
