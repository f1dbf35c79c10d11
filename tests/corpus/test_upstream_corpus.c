/* Corpus test over the modules XLA, Shardy and StableHLO engineers wrote for their own tests
 * (../shared/corpus/upstream, described by its INDEX.tsv: one row per unit with what upstream does with it).
 *
 * Each file is checked once with no target mesh (with split_input_file where the `split` column says 1);
 * a diagnostic belongs to the unit whose line range holds it (a whole-file unit holds all). Goals:
 *   - every `ok` / `ok-parse-only` unit parses (no `syntax` diagnostic);
 *   - no `ok` unit gets an error;
 *   - every `fail-sharding` unit gets an error (for MLIR on each of its expected-error lines).
 * Prints `parsed A/B, false errors C/D valid, flagged E/F invalid` and fails on any miss not listed in
 * `exceptions` below with its reason; an exception that no longer misses fails too (the list stays true).
 * SC_VERBOSE=1 prints every miss, excused or not, with the first offending diagnostic. */
#include <criterion/criterion.h>

#include "helpers.h"

#define CORPUS "../shared/corpus/upstream"

typedef enum { GOAL_PARSE, GOAL_NO_ERROR, GOAL_FLAGGED } goal;
static const char *const goal_names[] = {"parse", "no-error", "flagged"};

/* Misses that are known and why. `chunk` -1 = the whole-file unit. */
typedef struct {
  const char *file;
  int chunk;
  goal goal;
  const char *reason;
} exception;

#define PAD_FUNC_OPS "shardy/transforms__export__test__pad_for_divisibility__func_ops.mlir"
#define SINGLE_DEVICE "shardy/transforms__export__test__insert_explicit_reshards__single_device_sharding_errors.mlir"
static const char pad_reason[] =
    "one pass's limit, not the IR's: -sdy-pad-for-divisibility cannot pad a function boundary, while the "
    "partitioner pads it (per_instruction_partitioning.mlir chunk 3 is valid with the same sharding); a "
    "non-JAX module gets SC0210 as a note (docs/rules-policy.md)";
static const char single_device_reason[] =
    "one pass's limit, not the IR's: insert-explicit-reshards (full version) refuses single-device "
    "shardings at function boundaries and on one op's results, while XLA's round-trip export accepts a "
    "maximal function result (sdy_round_trip_export_pipeline.mlir @inlined_mesh is valid)";

#define SPLITTER "shardy/transforms__import__test__constant_or_scalar_splitter.mlir"
static const char splitter_reason[] =
    "valid for the constant splitter alone: its sharding group 0 mixes 16x16 and 8x16 values, which "
    "sharding-group-import (run after the splitter in Shardy's import pipeline) refuses";

static const exception exceptions[] = {
    {SPLITTER, 53, GOAL_NO_ERROR, splitter_reason},
    {SPLITTER, 59, GOAL_NO_ERROR, splitter_reason},
    {PAD_FUNC_OPS, 0, GOAL_FLAGGED, pad_reason},
    {PAD_FUNC_OPS, 1, GOAL_FLAGGED, pad_reason},
    {SINGLE_DEVICE, 0, GOAL_FLAGGED, single_device_reason},
    {SINGLE_DEVICE, 1, GOAL_FLAGGED, single_device_reason},
    {SINGLE_DEVICE, 2, GOAL_FLAGGED, single_device_reason},
    {NULL, 0, GOAL_PARSE, NULL},
};

typedef struct {
  char *file;
  int chunk;           /* -1: whole file */
  uint32_t first, last; /* 1-based line range; 0,0 = whole file */
  char *expected;
  bool split;
  uint32_t *error_lines;
  size_t nerror_lines;
} unit;

typedef struct {
  size_t parse_goal, parsed;
  size_t valid, false_errors;
  size_t invalid, flagged;
  size_t unexcused;
  bool *exception_used;
} tally;

/* Splits a tab-separated line in place into at most `max` fields; returns how many. */
static size_t split_tabs(char *line, char **fields, size_t max) {
  size_t n = 0;
  char *p = line;
  while (n < max) {
    fields[n++] = p;
    char *tab = strchr(p, '\t');
    if (!tab) break;
    *tab = '\0';
    p = tab + 1;
  }
  return n;
}

static void parse_error_lines(const char *s, unit *u) {
  u->error_lines = NULL;
  u->nerror_lines = 0;
  if (!strcmp(s, "-")) return;
  size_t cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  u->error_lines = calloc(cap, sizeof *u->error_lines);
  for (const char *p = s; *p;) {
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p) break;
    bool seen = false;
    for (size_t k = 0; k < u->nerror_lines; k++) seen |= u->error_lines[k] == v;
    if (!seen) u->error_lines[u->nerror_lines++] = (uint32_t)v;
    p = *end == ',' ? end + 1 : end;
  }
}

static unit *read_index(size_t *n) {
  char *text = test_read_file(CORPUS "/INDEX.tsv", NULL);
  cr_assert_not_null(text, "no corpus index at " CORPUS "/INDEX.tsv");
  size_t cap = 64, count = 0;
  unit *units = malloc(cap * sizeof *units);
  char *save = NULL;
  bool header = true;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (header) {
      header = false;
      continue;
    }
    char *f[8];
    cr_assert_geq(split_tabs(line, f, 8), 7, "short INDEX row: %s", line);
    if (count == cap) units = realloc(units, (cap *= 2) * sizeof *units);
    unit *u = &units[count++];
    u->file = strdup(f[0]);
    u->chunk = strcmp(f[1], "-") ? atoi(f[1]) : -1;
    u->first = u->last = 0;
    if (strcmp(f[2], "-")) sscanf(f[2], "%u-%u", &u->first, &u->last);
    u->expected = strdup(f[4]);
    u->split = !strcmp(f[5], "1");
    parse_error_lines(f[6], u);
  }
  free(text);
  *n = count;
  return units;
}

static bool in_unit(const unit *u, const sc_diag *d) {
  if (u->first == 0 || d->line == 0) return true; /* whole-file unit, or a diagnostic on the whole input */
  return d->line >= u->first && d->line <= u->last;
}

static bool is_syntax(const sc_diag *d) { return !strcmp(d->rule, "syntax") || !strcmp(d->rule, "input-limit"); }

/* The first diagnostic of the unit that misses `g`, for the log (NULL if none). */
static const sc_diag *offender(const unit *u, const sc_report *r, goal g) {
  for (size_t i = 0; i < r->ndiags; i++) {
    const sc_diag *d = &r->diags[i];
    if (!in_unit(u, d)) continue;
    if (g == GOAL_PARSE && is_syntax(d)) return d;
    if (g == GOAL_NO_ERROR && d->severity == SC_SEV_ERROR) return d;
  }
  return NULL;
}

static bool error_on_line(const sc_report *r, uint32_t line) {
  for (size_t i = 0; i < r->ndiags; i++)
    if (r->diags[i].severity == SC_SEV_ERROR && r->diags[i].line == line) return true;
  return false;
}

static bool flagged(const unit *u, const sc_report *r) {
  if (u->nerror_lines == 0) return offender(u, r, GOAL_NO_ERROR) != NULL;
  for (size_t k = 0; k < u->nerror_lines; k++)
    if (!error_on_line(r, u->error_lines[k])) return false;
  return true;
}

static void record_miss(tally *t, const unit *u, goal g, const sc_diag *d, bool verbose) {
  for (size_t i = 0; exceptions[i].file; i++) {
    const exception *e = &exceptions[i];
    if (e->goal == g && e->chunk == u->chunk && !strcmp(e->file, u->file)) {
      t->exception_used[i] = true;
      if (verbose) fprintf(stderr, "  excused %s: %s#%d (%s)\n", goal_names[g], u->file, u->chunk, e->reason);
      return;
    }
  }
  t->unexcused++;
  fprintf(stderr, "  missed %s: %s#%d", goal_names[g], u->file, u->chunk);
  if (d) fprintf(stderr, " line %u [%s] %.200s", d->line, d->code, d->message);
  fputc('\n', stderr);
}

static void judge_unit(tally *t, const unit *u, const sc_report *r, bool verbose) {
  bool valid = !strcmp(u->expected, "ok");
  if (valid || !strcmp(u->expected, "ok-parse-only")) {
    t->parse_goal++;
    const sc_diag *d = offender(u, r, GOAL_PARSE);
    if (!d) t->parsed++;
    else record_miss(t, u, GOAL_PARSE, d, verbose);
  }
  if (valid) {
    t->valid++;
    const sc_diag *d = offender(u, r, GOAL_NO_ERROR);
    if (d) {
      t->false_errors++;
      record_miss(t, u, GOAL_NO_ERROR, d, verbose);
    }
  }
  if (!strcmp(u->expected, "fail-sharding")) {
    t->invalid++;
    if (flagged(u, r)) t->flagged++;
    else record_miss(t, u, GOAL_FLAGGED, NULL, verbose);
  }
}

/* Checks one file and judges its units [begin, end) of the index. */
static void check_file(tally *t, const unit *units, size_t begin, size_t end, bool verbose) {
  char path[1024];
  snprintf(path, sizeof path, CORPUS "/%s", units[begin].file);
  size_t len;
  char *buf;
  sc_arena *a = sc_arena_new(0);
  sc_report *r = test_check_path(a, path, units[begin].split, &buf, &len);
  for (size_t i = begin; i < end; i++) judge_unit(t, &units[i], r, verbose);
  sc_arena_free(a);
  free(buf);
}

Test(upstream_corpus, parses_valid_modules_without_false_errors_and_flags_invalid_ones) {
  size_t n;
  unit *units = read_index(&n);
  cr_assert_geq(n, 1000, "only %zu units in the index", n);
  size_t nexceptions = 0;
  while (exceptions[nexceptions].file) nexceptions++;
  tally t = {0};
  t.exception_used = calloc(nexceptions + 1, sizeof *t.exception_used);
  bool verbose = getenv("SC_VERBOSE") != NULL;
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && !strcmp(units[end].file, units[begin].file)) end++;
    check_file(&t, units, begin, end, verbose);
    begin = end;
  }
  printf("upstream corpus: parsed %zu/%zu, false errors %zu/%zu valid, flagged %zu/%zu invalid\n", t.parsed,
         t.parse_goal, t.false_errors, t.valid, t.flagged, t.invalid);
  fflush(stdout);
  size_t stale = 0;
  for (size_t i = 0; i < nexceptions; i++)
    if (!t.exception_used[i]) {
      stale++;
      fprintf(stderr, "  stale exception (goal now met): %s#%d %s\n", exceptions[i].file, exceptions[i].chunk,
              goal_names[exceptions[i].goal]);
    }
  for (size_t i = 0; i < n; i++) {
    free(units[i].file);
    free(units[i].expected);
    free(units[i].error_lines);
  }
  free(units);
  free(t.exception_used);
  cr_assert_eq(t.unexcused, 0, "%zu misses are not listed as exceptions (see stderr)", t.unexcused);
  cr_assert_eq(stale, 0, "%zu exceptions no longer miss: remove them", stale);
}
