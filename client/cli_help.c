/* cli_help.c — usage of every subcommand, and the `rules` and `explain` commands. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "remote.h"

static const char GLOBAL_USAGE[] =
    "usage: shardcheck check FILE|DIR... [options]   check StableHLO/MLIR or XLA HLO modules ('-' = stdin)\n"
    "       shardcheck fix FILE [-o OUT | --in-place] [--diff]   apply machine-applicable fixes\n"
    "       shardcheck rules [--format text|json]      list the rules\n"
    "       shardcheck explain CODE|RULE [--format text|markdown|json]   explain a diagnostic code\n"
    "       shardcheck propagate FILE [--annotate-rules] [--strategy S]   the module after Shardy's passes\n"
    "       shardcheck version\n"
    "       shardcheck health|capabilities --server HOST:PORT\n"
    "check, rules and explain also run through a shardcheckd daemon with --server HOST:PORT.\n"
    "`shardcheck COMMAND --help` describes a command's options.\n";

static const char CHECK_USAGE[] =
    "usage: shardcheck check FILE|DIR... [options]\n"
    "\n"
    "Checks modules ('-' reads stdin). A directory is walked recursively: *.mlir, *.mlirbc, *.hlo and XLA\n"
    "dump files whose content starts with `HloModule` (*.before_optimizations.txt, *.after_*.txt); other\n"
    "files are skipped and counted.\n"
    "\n"
    "What to check:\n"
    "  --mesh SPEC            target mesh: name=size[:auto|explicit|manual],... [;devices=0,1,..][;platform=P]\n"
    "  --platform P           tpu, gpu or cpu\n"
    "  --input-format F       auto (default), stablehlo, hlo, bytecode or exported\n"
    "  --rules GLOBS          select rules by name, code or family: 'sharding-*,-sharding-priority'\n"
    "  --min-severity S       note (default), warning or error: drop diagnostics below\n"
    "  --split-input-file     treat '// -----' separated chunks as independent modules\n"
    "  --no-propagate         rules read only the written shardings (default: also the ones Shardy derives)\n"
    "  --device-memory BYTES  memory of one device for the memory rules (16GiB; else the mesh's device_kind=)\n"
    "  --max-implicit-collective-bytes BYTES  warn on an inserted collective moving more per device (default off)\n"
    "  --max-depth N, --max-ops N   nesting and op limits (defaults 256 and 5000000)\n"
    "  --include GLOB, --exclude GLOB   which files of a directory to check (repeatable)\n"
    "  -j, --jobs N           inputs checked in parallel (default: the number of cores)\n"
    "  --stdin-filename NAME  the name stdin is reported under (default <stdin>)\n"
    "\n"
    "Output and gating:\n"
    "  --format F             text (default), json (shardcheck.results.v1), sarif (2.1.0), gitlab or html\n"
    "                         (one self-contained page with the mesh and the flagged tensors drawn)\n"
    "  --output FILE          write the report to FILE instead of stdout\n"
    "  --fail-on L            error (default), warning, note or never: exit 1 at or above L\n"
    "  --exit-zero            exit 0 even with findings (2 still means trouble)\n"
    "  --max-diagnostics N    show at most N diagnostics (the summary and the exit status count them all)\n"
    "  --quiet                text: the summary line only\n"
    "  --statistics           a count of diagnostics per code\n"
    "  --color[=WHEN]         auto (default), always or never; --no-color = never. Honours NO_COLOR,\n"
    "                         FORCE_COLOR and CLICOLOR_FORCE\n"
    "  --source-root DIR      the repository root SARIF paths are relative to (default: .)\n"
    "  --help-uri-base URL    SARIF helpUri = URL + code (default: the rule's page, docs/rules/CODE.md)\n"
    "\n"
    "Configuration and suppression:\n"
    "  --config FILE          settings from FILE (default: shardcheck.json found upward from .)\n"
    "  --no-config            no config file\n"
    "  --baseline FILE        report only findings not recorded in FILE\n"
    "  --write-baseline FILE  record the current findings in FILE (exit 0)\n"
    "  --no-inline-ignores    ignore `# shardcheck: ignore[CODE]` comments in Python sources\n"
    "  --server HOST:PORT     check through a shardcheckd daemon (everything above still applies)\n"
    "  --debug-dump-ops       print every parsed op; no rules run\n"
    "\n"
    "Examples:\n"
    "  shardcheck check step.mlir --mesh data=4,model=2\n"
    "  shardcheck check /tmp/xla_dump --format sarif --output shardcheck.sarif\n"
    "  shardcheck check dumps/ --baseline .shardcheck-baseline.json --fail-on warning\n";

static const char FIX_USAGE[] =
    "usage: shardcheck fix FILE [-o OUT | --in-place] [--diff] [--mesh SPEC] [--platform P] [--rules GLOBS]\n"
    "                      [--input-format F]\n"
    "\n"
    "Applies the machine-applicable fixes of FILE's diagnostics (fixes whose edits collide are not applied\n"
    "together: run it again), re-checks the result and prints what was applied and\n"
    "what remains (on stderr). The fixed module goes to OUT, back to FILE with --in-place, or to stdout.\n"
    "  --diff                 print a unified diff instead of the fixed module (writes nothing unless\n"
    "                         -o or --in-place is given too)\n"
    "Exit status: 0 when the fixed module has no error, 1 when errors remain (with --diff: also when\n"
    "there are changes, as diff(1)), 2 on trouble (a directory: fix takes one file).\n"
    "\n"
    "Examples:\n"
    "  shardcheck fix step.mlir --diff\n"
    "  shardcheck fix step.mlir --in-place --mesh data=4\n";

static const char RULES_USAGE[] =
    "usage: shardcheck rules [--format text|json] [--server HOST:PORT]\n"
    "\n"
    "Lists the rules: code, name, family, default severity, summary.\n"
    "\n"
    "Examples:\n"
    "  shardcheck rules\n"
    "  shardcheck rules --format json\n";

static const char EXPLAIN_USAGE[] =
    "usage: shardcheck explain CODE|RULE... [--format text|markdown|json] [--server HOST:PORT]\n"
    "\n"
    "Prints a code's page: what it means, when it happens, an erroneous and a fixed module, how to fix.\n"
    "\n"
    "Examples:\n"
    "  shardcheck explain SC0301\n"
    "  shardcheck explain kernel-outside-manual --format markdown\n";

void print_usage(FILE *f, const char *cmd) {
  if (!cmd) fputs(GLOBAL_USAGE, f);
  else if (!strcmp(cmd, "check")) fputs(CHECK_USAGE, f);
  else if (!strcmp(cmd, "fix")) fputs(FIX_USAGE, f);
  else if (!strcmp(cmd, "rules")) fputs(RULES_USAGE, f);
  else if (!strcmp(cmd, "explain")) fputs(EXPLAIN_USAGE, f);
  else fputs(GLOBAL_USAGE, f);
}

bool wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) return false;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return true;
  }
  return false;
}

/* Takes "--format X" / "--format=X" out of argv; returns X, "" when absent, NULL when malformed. */
static const char *take_format(int *argc, char **argv) {
  const char *fmt = "";
  int out = 0;
  for (int i = 0; i < *argc; i++) {
    if (!strcmp(argv[i], "--format")) {
      if (i + 1 >= *argc) return NULL;
      fmt = argv[++i];
      continue;
    }
    if (!strncmp(argv[i], "--format=", 9)) {
      fmt = argv[i] + 9;
      continue;
    }
    argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = NULL;
  return fmt;
}

static bool one_of(const char *s, const char *const *allowed) {
  for (; *allowed; allowed++)
    if (!strcmp(s, *allowed)) return true;
  return false;
}

int cmd_rules(int argc, char **argv) {
  if (wants_help(argc, argv)) return print_usage(stdout, "rules"), 0;
  const char *server = remote_take_server(&argc, argv);
  const char *fmt = take_format(&argc, argv);
  static const char *const formats[] = {"", "text", "json", NULL};
  if (!fmt || !one_of(fmt, formats) || argc > 1) {
    fprintf(stderr, "shardcheck: rules: %s\n", !fmt || !one_of(fmt, formats) ? "--format is text or json" : "unexpected argument");
    print_usage(stderr, "rules");
    return EXIT_TROUBLE;
  }
  bool json = !strcmp(fmt, "json");
  if (server) return remote_rules(server, json);
  json_t *arr = json ? json_array() : NULL;
  for (size_t i = 0; i < sc_rule_count(); i++) {
    const char *name, *family, *code, *summary;
    sc_severity sev;
    sc_rule_info(i, &name, &family, &code, &sev, &summary);
    if (json)
      json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s}", "code", code, "name", name, "family", family,
                                           "severity", sc_severity_name(sev), "summary", summary));
    else
      printf("%-7s %-34s %-10s %-8s %s\n", code, name, family, sc_severity_name(sev), summary);
  }
  if (json) {
    char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) puts(s);
    free(s);
    json_decref(arr);
  }
  return 0;
}

/* One code's page as a JSON object: catalog entry plus rule facts and both renderings. */
static json_t *explain_json(const sc_catalog_entry *e) {
  json_t *o = json_object();
  json_object_set_new(o, "code", json_string(e->code));
  json_object_set_new(o, "title", json_string(e->title));
  for (size_t i = 0; i < sc_rule_count(); i++) {
    const char *name, *family, *code, *summary;
    sc_severity sev;
    sc_rule_info(i, &name, &family, &code, &sev, &summary);
    if (strcmp(code, e->code)) continue;
    json_object_set_new(o, "rule", json_string(name));
    json_object_set_new(o, "family", json_string(family));
    json_object_set_new(o, "severity", json_string(sc_severity_name(sev)));
    json_object_set_new(o, "summary", json_string(summary));
  }
  json_object_set_new(o, "explanation", json_string(e->explanation));
  json_object_set_new(o, "bad_example", e->bad_example ? json_string(e->bad_example) : json_null());
  json_object_set_new(o, "good_example", e->good_example ? json_string(e->good_example) : json_null());
  json_object_set_new(o, "mesh", e->bad_mesh ? json_string(e->bad_mesh) : json_null());
  char *md = sc_explain_markdown(e->code);
  json_object_set_new(o, "markdown", json_string(md ? md : ""));
  free(md);
  return o;
}

int cmd_explain(int argc, char **argv) {
  if (wants_help(argc, argv)) return print_usage(stdout, "explain"), 0;
  const char *server = remote_take_server(&argc, argv);
  const char *fmt = take_format(&argc, argv);
  static const char *const formats[] = {"", "text", "markdown", "json", NULL};
  if (!fmt || !one_of(fmt, formats)) {
    fprintf(stderr, "shardcheck: explain: --format is text, markdown or json\n");
    return EXIT_TROUBLE;
  }
  if (argc < 2) {
    fprintf(stderr, "shardcheck: explain needs a CODE (see `shardcheck rules`)\n");
    print_usage(stderr, "explain");
    return EXIT_TROUBLE;
  }
  if (server) {
    if (*fmt && strcmp(fmt, "text")) {
      fprintf(stderr, "shardcheck: explain --server prints text only\n");
      return EXIT_TROUBLE;
    }
    return remote_explain(server, argv + 1, argc - 1);
  }
  int rc = 0;
  json_t *arr = !strcmp(fmt, "json") ? json_array() : NULL;
  for (int i = 1; i < argc; i++) {
    const sc_catalog_entry *e = sc_catalog_find(argv[i]);
    if (!e) {
      fprintf(stderr, "shardcheck: unknown code '%s' (see `shardcheck rules`)\n", argv[i]);
      rc = EXIT_TROUBLE;
      continue;
    }
    if (arr) {
      json_array_append_new(arr, explain_json(e));
      continue;
    }
    char *text = !strcmp(fmt, "markdown") ? sc_explain_markdown(e->code) : sc_explain_text(e->code);
    if (!text) return EXIT_TROUBLE;
    fputs(text, stdout);
    if (i + 1 < argc) fputc('\n', stdout);
    free(text);
  }
  if (arr) {
    char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER); /* always an array: one shape */
    if (s) puts(s);
    free(s);
    json_decref(arr);
  }
  return rc;
}
