/* shardcheck — the command-line interface.
 *
 *   shardcheck check FILE... [options]     check modules (in-process, or through a daemon with --server)
 *   shardcheck rules [--format json]       list the rules
 *   shardcheck explain CODE                print a code's explanation page
 *   shardcheck version
 *
 * Exit status: 0 no error diagnostics, 1 error diagnostics, 2 usage, I/O or internal error. */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "remote.h"
#include "rpc.h"
#include "shardcheck.h"

#define EXIT_FINDINGS 1
#define EXIT_TROUBLE 2

static void usage(FILE *f) {
  fputs("usage: shardcheck check FILE... [options]   check StableHLO/MLIR or XLA HLO text modules ('-' = stdin)\n"
        "       shardcheck rules [--format text|json]  list the rules\n"
        "       shardcheck explain CODE|RULE           explain a diagnostic code\n"
        "       shardcheck version\n"
        "       shardcheck health|capabilities --server HOST:PORT\n"
        "check, rules and explain also run through a shardcheckd daemon with --server HOST:PORT.\n"
        "\n"
        "check options:\n"
        "  --mesh SPEC            target mesh: name=size[:auto|explicit|manual],... [;devices=0,1,..]\n"
        "                         e.g. data=2,model=4 or x=4:explicit (default: the module's own mesh)\n"
        "  --platform P           tpu, gpu or cpu\n"
        "  --format F             text (default), json or sarif\n"
        "  --input-format F       auto (default), stablehlo or hlo\n"
        "  --rules GLOBS          select rules by name, code or family: 'sharding-*,-sharding-priority'\n"
        "  --min-severity S       note (default), warning or error\n"
        "  --split-input-file     treat '// -----' separated chunks as independent modules\n"
        "  --max-depth N          nesting limit (default 256)   --max-ops N   op limit (default 5000000)\n"
        "  --color / --no-color   colored text output (default: when stdout is a terminal)\n"
        "  --debug-dump-ops       print every parsed op (location, nesting, function, Python source)\n",
        f);
}

typedef struct {
  sc_options opt;
  const char *format;
  const char *mesh_spec;
  bool color;
  bool dump_ops;
  const char *server;
} check_args;

static bool dump_op(sc_op *op, void *user) {
  FILE *f = user;
  fprintf(f, "%u:%u depth=%u op=%.*s", op->pos.line, op->pos.col, op->depth, SC_SPAN_ARG(op->name));
  if (op->func && op->func->sym_name.n) fprintf(f, " func=%.*s", SC_SPAN_ARG(op->func->sym_name));
  if (op->sym_name.n) fprintf(f, " sym=%.*s", SC_SPAN_ARG(op->sym_name));
  if (op->callee.n) fprintf(f, " callee=%.*s", SC_SPAN_ARG(op->callee));
  fprintf(f, " results=%u operands=%u regions=%u attrs=%u", op->nresults, op->noperands, op->nregions, op->attrs.n);
  if (op->src.known) fprintf(f, " src=%.*s:%u:%u", SC_SPAN_ARG(op->src.file), op->src.line, op->src.col);
  fputc('\n', f);
  return true;
}

/* Parses the input and prints the ops, without running rules. */
/* A module's bytes: a regular file is mapped (no copy, no second pass over it); stdin and anything
 * that cannot be mapped is read into memory. */
typedef struct {
  char *buf;
  size_t len;
  bool mapped;
} input;

static bool input_open(const char *path, input *in, const char **error) {
  memset(in, 0, sizeof *in);
  if (strcmp(path, "-") != 0) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size <= SIZE_MAX) {
      void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        close(fd);
        in->buf = p;
        in->len = (size_t)st.st_size;
        in->mapped = true;
        return true;
      }
    }
    if (fd >= 0) close(fd);
  }
  in->buf = sc_rpc_read_input(path, &in->len, error);
  return in->buf != NULL;
}

static void input_close(input *in) {
  if (in->mapped) munmap(in->buf, in->len);
  else free(in->buf);
  in->buf = NULL;
}

static int dump_ops(const char *name, const char *buf, size_t len, const check_args *ca) {
  sc_arena *a = sc_arena_new(0);
  if (!a) return EXIT_TROUBLE;
  sc_linemap lines = sc_linemap_build(a, buf, len);
  sc_format fmt = ca->opt.input_format ? ca->opt.input_format : sc_detect_format(buf, len);
  sc_parse_input in = {a, buf, len, 0, (uint32_t)len, &lines,
                       ca->opt.max_depth ? ca->opt.max_depth : SC_DEFAULT_MAX_DEPTH,
                       ca->opt.max_ops ? ca->opt.max_ops : SC_DEFAULT_MAX_OPS, NULL};
  sc_parse_error err;
  sc_module *m = fmt == SC_FMT_HLO ? sc_parse_hlo(&in, &err) : sc_parse_mlir(&in, &err);
  int rc = 0;
  if (!m) {
    sc_pos p = sc_linemap_pos(&lines, err.offset);
    fprintf(stderr, "%s:%u:%u: error: %s\n", name, p.line, p.col, err.message);
    rc = EXIT_FINDINGS;
  } else {
    printf("# %s: %u ops, %u functions\n", name, m->nops, m->nfuncs);
    sc_op_walk(m->module, dump_op, stdout);
  }
  sc_arena_free(a);
  return rc;
}

static int cmd_check(int argc, char **argv) {
  check_args ca;
  memset(&ca, 0, sizeof ca);
  ca.format = "text";
  ca.color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
  enum { O_MESH = 256, O_PLATFORM, O_FORMAT, O_INFMT, O_RULES, O_MINSEV, O_SPLIT, O_DEPTH, O_OPS, O_COLOR, O_NOCOLOR, O_DUMP, O_SERVER };
  static const struct option longopts[] = {
      {"mesh", required_argument, 0, O_MESH},         {"platform", required_argument, 0, O_PLATFORM},
      {"format", required_argument, 0, O_FORMAT},     {"input-format", required_argument, 0, O_INFMT},
      {"rules", required_argument, 0, O_RULES},       {"min-severity", required_argument, 0, O_MINSEV},
      {"split-input-file", no_argument, 0, O_SPLIT},  {"max-depth", required_argument, 0, O_DEPTH},
      {"max-ops", required_argument, 0, O_OPS},       {"color", no_argument, 0, O_COLOR},
      {"no-color", no_argument, 0, O_NOCOLOR},        {"debug-dump-ops", no_argument, 0, O_DUMP},
      {"server", required_argument, 0, O_SERVER},     {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case O_MESH: ca.mesh_spec = optarg; break;
    case O_PLATFORM:
      if (sc_platform_parse(optarg, &ca.opt.platform)) {
        fprintf(stderr, "shardcheck: unknown platform '%s' (tpu, gpu or cpu)\n", optarg);
        return EXIT_TROUBLE;
      }
      break;
    case O_FORMAT:
      if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "sarif")) {
        fprintf(stderr, "shardcheck: unknown --format '%s' (text, json or sarif)\n", optarg);
        return EXIT_TROUBLE;
      }
      ca.format = optarg;
      break;
    case O_INFMT:
      if (sc_format_parse(optarg, &ca.opt.input_format)) {
        fprintf(stderr, "shardcheck: unknown --input-format '%s' (auto, stablehlo or hlo)\n", optarg);
        return EXIT_TROUBLE;
      }
      break;
    case O_RULES: ca.opt.rules = optarg; break;
    case O_MINSEV:
      if (!strcmp(optarg, "note")) ca.opt.min_severity = SC_SEV_NOTE;
      else if (!strcmp(optarg, "warning")) ca.opt.min_severity = SC_SEV_WARNING;
      else if (!strcmp(optarg, "error")) ca.opt.min_severity = SC_SEV_ERROR;
      else {
        fprintf(stderr, "shardcheck: unknown --min-severity '%s' (note, warning or error)\n", optarg);
        return EXIT_TROUBLE;
      }
      break;
    case O_SPLIT: ca.opt.split_input_file = true; break;
    case O_DEPTH: ca.opt.max_depth = (uint32_t)strtoul(optarg, NULL, 10); break;
    case O_OPS: ca.opt.max_ops = (uint32_t)strtoul(optarg, NULL, 10); break;
    case O_COLOR: ca.color = true; break;
    case O_NOCOLOR: ca.color = false; break;
    case O_DUMP: ca.dump_ops = true; break;
    case O_SERVER: ca.server = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return EXIT_TROUBLE;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "shardcheck: check needs a FILE ('-' for stdin)\n");
    usage(stderr);
    return EXIT_TROUBLE;
  }
  sc_arena *mesh_arena = sc_arena_new(0);
  sc_target_mesh mesh;
  if (!mesh_arena) return EXIT_TROUBLE;
  if (ca.mesh_spec) {
    const char *err = NULL;
    if (sc_mesh_parse(mesh_arena, ca.mesh_spec, &mesh, &err)) {
      fprintf(stderr, "shardcheck: --mesh: %s\n", err);
      sc_arena_free(mesh_arena);
      return EXIT_TROUBLE;
    }
    ca.opt.mesh = &mesh;
  }
  if (ca.server) {
    int r = EXIT_TROUBLE;
    if (ca.dump_ops)
      fprintf(stderr, "shardcheck: --debug-dump-ops works only in local mode\n");
    else
      r = remote_check(ca.server, argv + optind, argc - optind, &ca.opt, ca.format, ca.color);
    sc_arena_free(mesh_arena);
    return r;
  }
  int rc = 0;
  bool json_array = strcmp(ca.format, "json") == 0 && argc - optind > 1;
  if (json_array) fputs("[", stdout);
  for (int i = optind; i < argc; i++) {
    const char *path = argv[i];
    const char *ioerr = NULL;
    input in;
    if (!input_open(path, &in, &ioerr)) {
      fprintf(stderr, "shardcheck: %s: %s\n", path, ioerr);
      rc = EXIT_TROUBLE;
      continue;
    }
    const char *buf = in.buf;
    size_t len = in.len;
    if (ca.dump_ops) {
      int r = dump_ops(path, buf, len, &ca);
      if (r > rc) rc = r;
      input_close(&in);
      continue;
    }
    ca.opt.input_name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    sc_arena *a = sc_arena_new(0);
    sc_report *report = NULL;
    sc_status st = a ? sc_check(a, buf, len, &ca.opt, &report) : SC_ERR_LIMIT;
    if (st != SC_OK || !report) {
      fprintf(stderr, "shardcheck: %s: %s\n", path, report && report->failure ? report->failure : "check failed");
      rc = EXIT_TROUBLE;
    } else {
      char *out = !strcmp(ca.format, "json")    ? sc_report_json(report, !json_array)
                  : !strcmp(ca.format, "sarif") ? sc_report_sarif(report)
                                                 : sc_report_text(report, ca.color);
      if (!out) {
        fprintf(stderr, "shardcheck: out of memory rendering the report\n");
        rc = EXIT_TROUBLE;
      } else {
        if (json_array && i > optind) fputs(",", stdout);
        fputs(out, stdout);
        if (!json_array && strcmp(ca.format, "text") != 0) fputc('\n', stdout);
        free(out);
      }
      if (report->errors && rc == 0) rc = EXIT_FINDINGS;
    }
    sc_arena_free(a);
    input_close(&in);
  }
  if (json_array) fputs("]\n", stdout);
  sc_arena_free(mesh_arena);
  return rc;
}

static int cmd_rules(int argc, char **argv) {
  bool json = argc > 2 && !strcmp(argv[1], "--format") && !strcmp(argv[2], "json");
  json_t *arr = json ? json_array() : NULL;
  for (size_t i = 0; i < sc_rule_count(); i++) {
    const char *name, *family, *code, *summary;
    sc_severity sev;
    sc_rule_info(i, &name, &family, &code, &sev, &summary);
    if (json) {
      json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s}", "code", code, "name", name, "family", family,
                                           "severity", sc_severity_name(sev), "summary", summary));
    } else {
      printf("%-7s %-34s %-10s %-8s %s\n", code, name, family, sc_severity_name(sev), summary);
    }
  }
  if (json) {
    char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) puts(s);
    free(s);
    json_decref(arr);
  }
  return 0;
}

static int cmd_explain(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "shardcheck: explain needs a CODE (see `shardcheck rules`)\n");
    return EXIT_TROUBLE;
  }
  int rc = 0;
  for (int i = 1; i < argc; i++) {
    char *text = sc_explain_text(argv[i]);
    if (!text) {
      fprintf(stderr, "shardcheck: unknown code '%s' (see `shardcheck rules`)\n", argv[i]);
      rc = EXIT_TROUBLE;
      continue;
    }
    fputs(text, stdout);
    if (i + 1 < argc) fputc('\n', stdout);
    free(text);
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_TROUBLE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "check")) return cmd_check(argc - 1, argv + 1);
  const char *server = remote_take_server(&argc, argv);
  if (server && !strcmp(cmd, "rules"))
    return remote_rules(server, argc > 3 && !strcmp(argv[2], "--format") && !strcmp(argv[3], "json"));
  if (server && !strcmp(cmd, "explain")) return remote_explain(server, argv + 2, argc - 2);
  if (!strcmp(cmd, "health") || !strcmp(cmd, "capabilities")) {
    if (!server) {
      fprintf(stderr, "shardcheck: %s needs --server HOST:PORT\n", cmd);
      return EXIT_TROUBLE;
    }
    return !strcmp(cmd, "health") ? remote_health(server, argc > 2 ? argv[2] : "") : remote_capabilities(server);
  }
  if (!strcmp(cmd, "rules")) return cmd_rules(argc - 1, argv + 1);
  if (!strcmp(cmd, "explain")) return cmd_explain(argc - 1, argv + 1);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("shardcheck %s (rules %s)\n", SC_VERSION, sc_rules_version());
    return 0;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "shardcheck: unknown command '%s'\n", cmd);
  usage(stderr);
  return EXIT_TROUBLE;
}
