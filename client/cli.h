/* cli.h — what the CLI's parts share: settings of `check` (from flags and shardcheck.json), the inputs
 * and their results, and the functions of each part (one file per concern):
 *   cli_check.c     `check`: flags, running the inputs (in parallel), gating, exit status
 *   cli_config.c    shardcheck.json discovery and parsing
 *   cli_walk.c      expanding FILE/DIR arguments into inputs (XLA dump folders by content)
 *   cli_suppress.c  inline `# shardcheck: ignore[...]`, baselines, severity overrides, --max-diagnostics
 *   cli_output.c    text / json (shardcheck.results.v1) / sarif / gitlab / html, summary and statistics
 *   cli_fix.c       `fix`: apply machine fixes, re-check, diff
 *   cli_remote_report.c  a report JSON from the daemon back into an sc_report
 *   cli_help.c      usage of every subcommand; `rules` and `explain`
 *   cli_propagate.c `propagate`: the module after Shardy's propagation passes, as sdy_opt prints it
 * Exit status everywhere: 0 clean, 1 findings at or above --fail-on, 2 usage, I/O or internal error. */
#ifndef SC_CLI_H
#define SC_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "shardcheck.h"
#include "util/arena.h"

#define EXIT_FINDINGS 1
#define EXIT_TROUBLE 2

typedef enum { FAIL_ON_NOTE = 0, FAIL_ON_WARNING, FAIL_ON_ERROR, FAIL_ON_NEVER } fail_on_level;
typedef enum { OUT_TEXT = 0, OUT_JSON, OUT_SARIF, OUT_GITLAB, OUT_HTML } out_format;

typedef struct {
  char **v;
  size_t n;
} str_list;

/* A per-rule severity override from the config: code or rule name -> severity. */
typedef struct {
  char *rule;
  sc_severity severity;
} severity_override;

/* Everything `check` is told. Strings are owned by the settings (freed by settings_free). */
typedef struct {
  sc_options opt;          /* mesh, rules, limits... (pointers into this struct) */
  char *rules, *mesh_spec, *source_root, *help_uri_base, *baseline, *write_baseline, *output, *stdin_name;
  sc_target_mesh mesh;
  sc_arena *mesh_arena;
  out_format format;
  fail_on_level fail_on;
  bool exit_zero, quiet, statistics, inline_ignores, color, dump_ops;
  long max_diagnostics; /* -1 = no limit */
  int jobs;
  const char *server;
  str_list include, exclude;
  severity_override *overrides;
  size_t noverrides;
} check_settings;

/* One input: a file from the command line or found in a directory. */
typedef struct {
  char *path;           /* as given / as found ("-" = stdin) */
  char *buf;            /* its bytes: mapped (regular files) or malloc'd; see input_read */
  size_t len;
  bool mapped;          /* buf is an mmap of the file */
  sc_arena *arena;      /* the report's arena (one per input) */
  sc_report *report;    /* NULL when it could not be checked */
  char *error;          /* malloc'd "why not" when report is NULL */
  const char **fingerprints; /* per report diagnostic, after severity overrides (arena) */
} input;

typedef struct {
  input *v;
  size_t n;
  size_t skipped;       /* files in walked directories that are not modules */
} input_list;

/* Counts after suppression, for the summary and gating. */
typedef struct {
  size_t errors, warnings, notes;
  size_t inline_suppressed, baseline_suppressed, baseline_stale, dropped;
  size_t failed;        /* inputs that could not be checked */
} totals;

/* cli_config.c: finds shardcheck.json upward from the cwd (or reads `path`), fills unset settings.
 * `explicit_flags` says which settings came from flags (they win). 0 or EXIT_TROUBLE (message printed). */
typedef struct {
  bool rules, mesh, platform, fail_on, source_root, include, exclude, help_uri_base, baseline, device_memory,
      max_implicit_collective_bytes;
} flags_given;
int config_load(const char *path, bool discover, check_settings *s, const flags_given *given);

/* cli_walk.c: appends inputs for each argument (files as given; directories walked recursively,
 * sorted). 0 or EXIT_TROUBLE (message printed). */
int walk_inputs(char **args, int nargs, const check_settings *s, input_list *out);
/* True when `buf` starts (after blank space) with an XLA HLO module header. */
bool looks_like_hlo_dump(const char *buf, size_t len);
void inputs_free(input_list *l);

/* cli_suppress.c */
void apply_severity_overrides(const check_settings *s, sc_report *r);
/* Inline ignores, then the baseline, then --max-diagnostics; recounts each report's summary. */
int apply_suppressions(const check_settings *s, input_list *in, totals *t);
int write_baseline(const char *path, const input_list *in);

/* cli_output.c: renders everything to `out`. */
int render_output(FILE *out, const check_settings *s, const input_list *in, const totals *t);
/* "auto" decided: flag > FORCE_COLOR/CLICOLOR_FORCE > NO_COLOR > terminal. */
bool color_wanted(const char *mode, int fd);

/* cli_remote_report.c: the report JSON (shardcheck.report.v1) as an sc_report in `a`; `buf` is the
 * module the report is about (for source lines). NULL with *error on a malformed report. */
sc_report *report_from_json(sc_arena *a, const char *json, const char *buf, size_t len, const char **error);

/* Subcommands. */
int cmd_check(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_explain(int argc, char **argv);
/* cli_propagate.c */
int cmd_propagate(int argc, char **argv);
/* cli_help.c: prints the usage of `cmd` ("check", "fix", ...; NULL = global) to f. */
void print_usage(FILE *f, const char *cmd);
/* True when argv holds -h/--help (before a "--"). */
bool wants_help(int argc, char **argv);

/* Shared option parsing. */
int parse_severity(const char *s, sc_severity *out); /* 0 or -1 */
int parse_fail_on(const char *s, fail_on_level *out);
/* "16GiB", "80GB", "17179869184": a positive byte count (binary KiB/MiB/GiB/TiB, decimal KB/MB/GB/TB). 0 or -1. */
int parse_bytes(const char *s, int64_t *out);
/* Reads a whole file ("-" = stdin) into a malloc'd buffer; NULL with a malloc'd message. */
char *read_all(const char *path, size_t *len, char **error);
/* Fills x->buf/len: a regular file is mapped (no copy), stdin and the rest are read. Returns false with
 * a malloc'd *error. inputs_free() releases either kind. */
bool input_read(input *x, char **error);
char *xstrdup(const char *s);
/* The candidate closest to `word` by edit distance (a swap of two neighbours counts one), if it is
 * within 2 edits and shorter than the word; else NULL. For "did you mean" hints on typos. */
const char *closest_word(const char *word, const char *const *candidates, size_t n);
/* Random bits for sc_options.hash_seed (0 if the kernel gives none: the library then uses addresses). */
uint64_t random_hash_seed(void);

#endif
