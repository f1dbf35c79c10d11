/* cli_check.c — `shardcheck check`: flags and config into settings, inputs checked in parallel (-j; one
 * arena per input, in-process or through the daemon with one channel per thread, whose report JSON is
 * read back into an sc_report), then suppression, output in input order, and the exit status. */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "remote.h"
#include "front/front.h"
#include "ir/ir.h"
#include "rpc.h"

static void list_free(str_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

static void list_add(str_list *l, const char *s) {
  char **nv = realloc(l->v, (l->n + 1) * sizeof *nv);
  if (!nv) return;
  l->v = nv;
  l->v[l->n++] = xstrdup(s);
}

static void settings_free(check_settings *s) {
  free(s->rules), free(s->mesh_spec), free(s->source_root), free(s->help_uri_base);
  free(s->baseline), free(s->write_baseline), free(s->output), free(s->stdin_name);
  list_free(&s->include), list_free(&s->exclude);
  for (size_t i = 0; i < s->noverrides; i++) free(s->overrides[i].rule);
  free(s->overrides);
  if (s->mesh_arena) sc_arena_free(s->mesh_arena);
}

static void set_str(char **dst, const char *v) {
  free(*dst);
  *dst = xstrdup(v);
}

/* --- flags --- */

enum {
  O_MESH = 256, O_PLATFORM, O_FORMAT, O_INFMT, O_RULES, O_MINSEV, O_SPLIT, O_DEPTH, O_OPS, O_COLOR, O_NOCOLOR,
  O_DUMP, O_SERVER, O_FAILON, O_EXITZERO, O_MAXDIAG, O_QUIET, O_STATS, O_OUTPUT, O_INCLUDE, O_EXCLUDE, O_CONFIG,
  O_NOCONFIG, O_BASELINE, O_WRITEBASE, O_NOINLINE, O_SRCROOT, O_HELPURI, O_STDIN, O_PROPAGATE, O_NOPROPAGATE,
  O_DEVMEM,
  O_MAXCOLL
};

static const struct option LONGOPTS[] = {
    {"mesh", required_argument, 0, O_MESH},          {"platform", required_argument, 0, O_PLATFORM},
    {"format", required_argument, 0, O_FORMAT},      {"input-format", required_argument, 0, O_INFMT},
    {"rules", required_argument, 0, O_RULES},        {"min-severity", required_argument, 0, O_MINSEV},
    {"split-input-file", no_argument, 0, O_SPLIT},   {"max-depth", required_argument, 0, O_DEPTH},
    {"max-ops", required_argument, 0, O_OPS},        {"color", optional_argument, 0, O_COLOR},
    {"no-color", no_argument, 0, O_NOCOLOR},         {"debug-dump-ops", no_argument, 0, O_DUMP},
    {"propagate", no_argument, 0, O_PROPAGATE},      {"no-propagate", no_argument, 0, O_NOPROPAGATE},
    {"device-memory", required_argument, 0, O_DEVMEM},
    {"max-implicit-collective-bytes", required_argument, 0, O_MAXCOLL},
    {"server", required_argument, 0, O_SERVER},      {"fail-on", required_argument, 0, O_FAILON},
    {"exit-zero", no_argument, 0, O_EXITZERO},       {"max-diagnostics", required_argument, 0, O_MAXDIAG},
    {"quiet", no_argument, 0, O_QUIET},              {"statistics", no_argument, 0, O_STATS},
    {"output", required_argument, 0, O_OUTPUT},      {"include", required_argument, 0, O_INCLUDE},
    {"exclude", required_argument, 0, O_EXCLUDE},    {"config", required_argument, 0, O_CONFIG},
    {"no-config", no_argument, 0, O_NOCONFIG},       {"baseline", required_argument, 0, O_BASELINE},
    {"write-baseline", required_argument, 0, O_WRITEBASE}, {"no-inline-ignores", no_argument, 0, O_NOINLINE},
    {"source-root", required_argument, 0, O_SRCROOT}, {"help-uri-base", required_argument, 0, O_HELPURI},
    {"stdin-filename", required_argument, 0, O_STDIN}, {"jobs", required_argument, 0, 'j'},
    {"help", no_argument, 0, 'h'},                   {0, 0, 0, 0}};

static int usage_error(const char *fmt, const char *arg) {
  fputs("shardcheck: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs(" (see `shardcheck check --help`)\n", stderr);
  return EXIT_TROUBLE;
}

/* "unknown --fail-on 'errors' (did you mean 'error'? error, warning, note or never)" */
static int bad_choice(const char *flag, const char *value, const char *const *choices, size_t n) {
  const char *near = closest_word(value, choices, n);
  fprintf(stderr, "shardcheck: unknown %s '%s' (", flag, value);
  if (near) fprintf(stderr, "did you mean '%s'? ", near);
  for (size_t i = 0; i < n; i++) fprintf(stderr, "%s%s", choices[i], i + 2 < n ? ", " : i + 1 < n ? " or " : "");
  fputs(")\n", stderr);
  return EXIT_TROUBLE;
}

#define BAD_CHOICE(flag, value, ...)                                                                               \
  bad_choice(flag, value, (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

/* An option getopt did not know, or one missing its value: one line, with the nearest option. */
static int bad_option(int c, char **argv) {
  const char *arg = argv[optind - 1];
  if (c == ':') return usage_error("%s needs a value", arg);
  if (optopt && optopt != '?') {
    char flag[3] = {'-', (char)optopt, 0};
    return usage_error("unknown option '%s'", flag);
  }
  char name[128];
  snprintf(name, sizeof name, "%s", arg + (arg[0] == '-' && arg[1] == '-' ? 2 : 0));
  name[strcspn(name, "=")] = 0;
  const char *names[sizeof LONGOPTS / sizeof *LONGOPTS];
  size_t n = 0;
  for (const struct option *o = LONGOPTS; o->name; o++) names[n++] = o->name;
  const char *near = closest_word(name, names, n);
  fprintf(stderr, "shardcheck: unknown option '%s'", arg);
  if (near) fprintf(stderr, " (did you mean --%s?)", near);
  fputs(" (see `shardcheck check --help`)\n", stderr);
  return EXIT_TROUBLE;
}

static int parse_count(const char *s, long min, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < min) return -1;
  *out = v;
  return 0;
}

typedef struct {
  const char *config;
  bool no_config;
  const char *color_mode;
} meta_flags;

/* One flag into settings; 0, EXIT_TROUBLE, or -1 for --help. */
static int take_flag(int c, check_settings *s, flags_given *g, meta_flags *m) {
  long n;
  switch (c) {
  case O_MESH: set_str(&s->mesh_spec, optarg), g->mesh = true; break;
  case O_PLATFORM:
    if (sc_platform_parse(optarg, &s->opt.platform)) return BAD_CHOICE("--platform", optarg, "tpu", "gpu", "cpu");
    g->platform = true;
    break;
  case O_FORMAT:
    if (!strcmp(optarg, "text")) s->format = OUT_TEXT;
    else if (!strcmp(optarg, "json")) s->format = OUT_JSON;
    else if (!strcmp(optarg, "sarif")) s->format = OUT_SARIF;
    else if (!strcmp(optarg, "gitlab")) s->format = OUT_GITLAB;
    else if (!strcmp(optarg, "html")) s->format = OUT_HTML;
    else return BAD_CHOICE("--format", optarg, "text", "json", "sarif", "gitlab", "html");
    break;
  case O_INFMT:
    if (sc_format_parse(optarg, &s->opt.input_format))
      return BAD_CHOICE("--input-format", optarg, "auto", "stablehlo", "hlo", "bytecode", "exported");
    break;
  case O_RULES: set_str(&s->rules, optarg), g->rules = true; break;
  case O_MINSEV:
    if (parse_severity(optarg, &s->opt.min_severity)) return BAD_CHOICE("--min-severity", optarg, "note", "warning", "error");
    break;
  case O_SPLIT: s->opt.split_input_file = true; break;
  case O_DEPTH:
    if (parse_count(optarg, 1, &n) || n > UINT32_MAX) return usage_error("--max-depth needs a positive number, not '%s'", optarg);
    s->opt.max_depth = (uint32_t)n;
    break;
  case O_OPS:
    if (parse_count(optarg, 1, &n) || n > UINT32_MAX) return usage_error("--max-ops needs a positive number, not '%s'", optarg);
    s->opt.max_ops = (uint32_t)n;
    break;
  case O_COLOR:
    m->color_mode = optarg ? optarg : "always";
    if (strcmp(m->color_mode, "auto") && strcmp(m->color_mode, "always") && strcmp(m->color_mode, "never"))
      return BAD_CHOICE("--color", optarg, "auto", "always", "never");
    break;
  case O_NOCOLOR: m->color_mode = "never"; break;
  case O_DUMP: s->dump_ops = true; break;
  case O_PROPAGATE: s->opt.no_propagate = false; break;
  case O_NOPROPAGATE: s->opt.no_propagate = true; break;
  case O_DEVMEM:
    if (parse_bytes(optarg, &s->opt.device_memory_bytes))
      return usage_error("--device-memory needs a byte count (16GiB, 17179869184), not '%s'", optarg);
    g->device_memory = true;
    break;
  case O_MAXCOLL:
    if (parse_bytes(optarg, &s->opt.thresholds.max_implicit_collective_bytes))
      return usage_error("--max-implicit-collective-bytes needs a byte count (256MiB, 268435456), not '%s'", optarg);
    g->max_implicit_collective_bytes = true;
    break;
  case O_SERVER: s->server = optarg; break;
  case O_FAILON:
    if (parse_fail_on(optarg, &s->fail_on)) return BAD_CHOICE("--fail-on", optarg, "error", "warning", "note", "never");
    g->fail_on = true;
    break;
  case O_EXITZERO: s->exit_zero = true; break;
  case O_MAXDIAG:
    if (parse_count(optarg, 0, &s->max_diagnostics)) return usage_error("--max-diagnostics needs a number, not '%s'", optarg);
    break;
  case O_QUIET: s->quiet = true; break;
  case O_STATS: s->statistics = true; break;
  case O_OUTPUT: set_str(&s->output, optarg); break;
  case O_INCLUDE: list_add(&s->include, optarg), g->include = true; break;
  case O_EXCLUDE: list_add(&s->exclude, optarg), g->exclude = true; break;
  case O_CONFIG: m->config = optarg; break;
  case O_NOCONFIG: m->no_config = true; break;
  case O_BASELINE: set_str(&s->baseline, optarg), g->baseline = true; break;
  case O_WRITEBASE: set_str(&s->write_baseline, optarg); break;
  case O_NOINLINE: s->inline_ignores = false; break;
  case O_SRCROOT: set_str(&s->source_root, optarg), g->source_root = true; break;
  case O_HELPURI: set_str(&s->help_uri_base, optarg), g->help_uri_base = true; break;
  case O_STDIN: set_str(&s->stdin_name, optarg); break;
  case 'j':
    if (parse_count(optarg, 1, &n) || n > 256) return usage_error("-j needs a number from 1 to 256, not '%s'", optarg);
    s->jobs = (int)n;
    break;
  case 'h': return -1;
  default: return EXIT_TROUBLE; /* '?' and ':' are bad_option()'s */
  }
  return 0;
}

/* A --rules selection that matches nothing is one usage error here, not one per input. */
static int check_rules(const char *rules) {
  sc_arena *a = sc_arena_new(0);
  if (!a) return EXIT_TROUBLE;
  const char *err = NULL;
  int rc = 0;
  if (sc_rules_validate(a, rules, &err)) {
    fprintf(stderr, "shardcheck: --rules: %s\n", err);
    rc = EXIT_TROUBLE;
  }
  sc_arena_free(a);
  return rc;
}

/* Flags, then the config file for what flags left unset, then derived settings. */
static int parse_settings(int argc, char **argv, check_settings *s) {
  flags_given g = {0};
  meta_flags m = {0};
  int c, rc;
  optind = 1;
  opterr = 0; /* one message of ours per mistake, not getopt's and ours */
  while ((c = getopt_long(argc, argv, ":hj:", LONGOPTS, NULL)) != -1)
    if ((rc = c == '?' || c == ':' ? bad_option(c, argv) : take_flag(c, s, &g, &m))) return rc;
  if (m.config && m.no_config) return usage_error("%s", "--config and --no-config exclude each other");
  if ((rc = config_load(m.config, !m.no_config, s, &g))) return rc;
  s->color = color_wanted(m.color_mode, s->output ? -1 : STDOUT_FILENO);
  s->opt.rules = s->rules;
  if (s->rules && (rc = check_rules(s->rules))) return rc;
  if (s->mesh_spec) {
    const char *err = NULL;
    if (!(s->mesh_arena = sc_arena_new(0))) return EXIT_TROUBLE;
    if (sc_mesh_parse(s->mesh_arena, s->mesh_spec, &s->mesh, &err)) {
      fprintf(stderr, "shardcheck: --mesh: %s\n", err);
      return EXIT_TROUBLE;
    }
    s->opt.mesh = &s->mesh;
  }
  if (s->jobs <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->jobs = cores > 0 ? (int)(cores < 64 ? cores : 64) : 1;
  }
  return 0;
}

/* --- --debug-dump-ops --- */

typedef struct {
  FILE *f;
  const ir_module *m;
  const ir_linemap *lines; /* NULL for modules without lines (bytecode): positions print as 0:0 */
} dump_ctx;

static bool dump_op(ir_op *op, void *user) {
  const dump_ctx *dc = user;
  FILE *f = dc->f;
  ir_pos pos = dc->lines ? ir_linemap_pos(dc->lines, op->pos.offset) : (ir_pos){0, 0, 0};
  fprintf(f, "%u:%u depth=%u op=%.*s", pos.line, pos.col, ir_op_depth(op), SC_SPAN_ARG(ir_op_name(op)));
  if (ir_op_func(op) && ir_op_sym_name(ir_op_func(op)).n) fprintf(f, " func=%.*s", SC_SPAN_ARG(ir_op_sym_name(ir_op_func(op))));
  if (ir_op_sym_name(op).n) fprintf(f, " sym=%.*s", SC_SPAN_ARG(ir_op_sym_name(op)));
  if (ir_op_callee(op).n) fprintf(f, " callee=%.*s", SC_SPAN_ARG(ir_op_callee(op)));
  fprintf(f, " results=%u operands=%u regions=%u attrs=%u", op->nresults, op->noperands, op->nregions, ir_op_attrs(op)->n);
  ir_srcloc src = ir_op_srcloc(dc->m, op);
  if (src.known) fprintf(f, " src=%.*s:%u:%u", SC_SPAN_ARG(src.file), src.line, src.col);
  fputc('\n', f);
  /* Attributes, one per line, so two front ends' views of a module can be diffed. */
  for (uint32_t i = 0; i < ir_op_attrs(op)->n; i++)
    fprintf(f, "    attr %.*s = %.*s\n", SC_SPAN_ARG(ir_op_attrs(op)->v[i].name), SC_SPAN_ARG(ir_op_attrs(op)->v[i].value));
  const ir_block *entry = op->nregions && ir_op_regions(op)[0]->nblocks ? ir_op_regions(op)[0]->blocks[0] : NULL;
  for (uint32_t k = 0; entry && ir_span_eq(ir_op_name(op), "func.func") && k < entry->nargs; k++)
    for (uint32_t i = 0; i < ir_value_attrs(entry->args[k])->n; i++)
      fprintf(f, "    arg %u %.*s = %.*s\n", k, SC_SPAN_ARG(ir_value_attrs(entry->args[k])->v[i].name),
              SC_SPAN_ARG(ir_value_attrs(entry->args[k])->v[i].value));
  for (uint32_t k = 0; k < ir_op_nresult_attrs(op); k++)
    for (uint32_t i = 0; i < ir_op_result_attrs(op)[k].n; i++)
      fprintf(f, "    result %u %.*s = %.*s\n", k, SC_SPAN_ARG(ir_op_result_attrs(op)[k].v[i].name),
              SC_SPAN_ARG(ir_op_result_attrs(op)[k].v[i].value));
  return true;
}

/* Parses the input and prints the ops, without running rules. */
static int dump_ops(const char *name, const char *buf, size_t len, const sc_options *opt) {
  sc_arena *a = sc_arena_new(0);
  if (!a) return EXIT_TROUBLE;
  ir_linemap lines = ir_linemap_build(a, buf, len);
  sc_format fmt = opt->input_format ? opt->input_format : fe_detect_format(buf, len);
  fe_parse_input in = {a, buf, len, 0, (uint32_t)len, &lines, opt->max_depth ? opt->max_depth : SC_DEFAULT_MAX_DEPTH,
                       opt->max_ops ? opt->max_ops : SC_DEFAULT_MAX_OPS, NULL};
  fe_parse_error err;
  ir_module *m = fe_parse_format(fmt, &in, &err);
  int rc = 0;
  if (!m) {
    ir_pos p = ir_linemap_pos(&lines, err.offset);
    fprintf(stderr, "%s:%u:%u: error: %s\n", name, p.line, p.col, err.message);
    rc = EXIT_FINDINGS;
  } else {
    printf("# %s: %u ops, %u functions\n", name, m->nops, m->nfuncs);
    dump_ctx dc = {stdout, m, m->buf == buf ? &lines : NULL}; /* text front ends keep the input */
    ir_op_walk(m->module, dump_op, &dc);
  }
  sc_arena_free(a);
  return rc;
}

static int dump_all(const check_settings *s, input_list *in) {
  int rc = 0;
  for (size_t i = 0; i < in->n; i++) {
    char *err = NULL;
    input *x = &in->v[i];
    int r = EXIT_TROUBLE;
    if (!x->buf && !input_read(x, &err)) fprintf(stderr, "shardcheck: %s: %s\n", x->path, err);
    else r = dump_ops(x->path, x->buf, x->len, &s->opt);
    free(err);
    if (r > rc) rc = r;
  }
  return rc;
}

/* --- running the inputs --- */

static const char *input_name(const check_settings *s, const input *x) {
  return strcmp(x->path, "-") ? x->path : s->stdin_name ? s->stdin_name : "<stdin>";
}

static void set_error(input *x, const char *why) {
  size_t n = strlen(x->path) + strlen(why) + 3;
  if ((x->error = malloc(n))) snprintf(x->error, n, "%s: %s", x->path, why);
}

/* The input's bytes and options; false (with x->error) when it cannot be read. */
static bool load_input(const check_settings *s, input *x, sc_options *opt) {
  char *err = NULL;
  if (!x->buf && !input_read(x, &err)) {
    set_error(x, err);
    free(err);
    return false;
  }
  *opt = s->opt;
  opt->input_name = input_name(s, x);
  return true;
}

/* The report's input digest, computed beside the check: on a large input SHA-256 costs about as much as
 * the analysis itself, and the second core is otherwise idle. */
typedef struct {
  const input *x;
  char hex[65];
} input_digest;

static void *digest_input(void *arg) {
  input_digest *d = arg;
  sc_sha256_hex(d->x->buf, d->x->len, d->hex);
  return NULL;
}

#define HASH_ON_THREAD_BYTES (1u << 20)

/* Local mode: one input. */
static void check_local(const check_settings *s, input *x) {
  sc_options opt;
  if (!load_input(s, x, &opt)) return;
  x->arena = sc_arena_new(0);
  input_digest digest = {x, ""};
  pthread_t hasher;
  bool hashing = x->len >= HASH_ON_THREAD_BYTES && !opt.input_sha256 &&
                 pthread_create(&hasher, NULL, digest_input, &digest) == 0;
  opt.sha256_by_caller = hashing;
  opt.hash_seed = random_hash_seed();
  sc_status st = x->arena ? sc_check(x->arena, x->buf, x->len, &opt, &x->report) : SC_ERR_LIMIT;
  if (hashing) {
    pthread_join(hasher, NULL);
    if (x->report) memcpy(x->report->sha256, digest.hex, sizeof digest.hex);
  }
  if (st != SC_OK || !x->report) {
    set_error(x, x->report && x->report->failure ? x->report->failure : "check failed");
    x->report = NULL;
  }
}

/* --server: the daemon checks one input; its report JSON becomes an sc_report here. */
static void check_remote(sc_rpc_client *c, const check_settings *s, input *x) {
  sc_options opt;
  char *err = NULL;
  if (!load_input(s, x, &opt)) return;
  sc_rpc_render render = {SC_RPC_REPORT_JSON, false, false};
  sc_rpc_check_result res;
  if (sc_rpc_check(c, x->buf, x->len, &opt, &render, &res, &err) != 0) {
    set_error(x, err ? err : "check failed");
    free(err);
    return;
  }
  const char *why = NULL;
  x->arena = sc_arena_new(0);
  x->report = x->arena ? report_from_json(x->arena, res.report, x->buf, x->len, &why) : NULL;
  if (!x->report) set_error(x, why ? why : "out of memory");
  sc_rpc_check_result_free(&res);
}

static sc_rpc_client *connect_server(const char *server, char **err) {
  sc_rpc_config cfg;
  remote_config_from_env(&cfg);
  return sc_rpc_connect(server, &cfg, err);
}

typedef struct {
  const check_settings *s;
  input_list *in;
  atomic_size_t next;
} pool;

/* Takes inputs until none is left; with --server over its own channel. */
static void *worker(void *arg) {
  pool *p = arg;
  char *err = NULL;
  sc_rpc_client *c = p->s->server ? connect_server(p->s->server, &err) : NULL;
  for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->in->n;) {
    input *x = &p->in->v[i];
    if (!p->s->server) check_local(p->s, x);
    else if (c) check_remote(c, p->s, x);
    else set_error(x, err ? err : "cannot connect");
  }
  if (c) sc_rpc_close(c);
  free(err);
  return NULL;
}

/* Runs every input on up to -j threads (this one included); results stay in input order. */
static void run_inputs(const check_settings *s, input_list *in) {
  pool p = {s, in, 0};
  size_t nthreads = (size_t)s->jobs < in->n ? (size_t)s->jobs : in->n;
  pthread_t *t = calloc(nthreads ? nthreads : 1, sizeof *t);
  size_t started = 0;
  for (size_t i = 1; t && i < nthreads; i++)
    if (pthread_create(&t[started], NULL, worker, &p) == 0) started++;
  worker(&p);
  for (size_t i = 0; i < started; i++) pthread_join(t[i], NULL);
  free(t);
}

static bool gate(const check_settings *s, const totals *t) {
  switch (s->fail_on) {
  case FAIL_ON_NEVER: return false;
  case FAIL_ON_NOTE: return t->errors + t->warnings + t->notes > 0;
  case FAIL_ON_WARNING: return t->errors + t->warnings > 0;
  default: return t->errors > 0;
  }
}

/* True if a line of the text is MLIR's split marker `// -----` (mlir-opt --split-input-file). */
static bool has_split_marker(const char *buf, size_t len) {
  static const char marker[] = "// -----";
  for (const char *p = buf; p && (size_t)(p - buf) + sizeof marker - 1 <= len;) {
    if (!memcmp(p, marker, sizeof marker - 1)) return true;
    p = memchr(p, '\n', len - (size_t)(p - buf));
    if (p) p++;
  }
  return false;
}

/* A file of `// -----`-separated test modules checked as one module reports nonsense (duplicate
 * symbols, syntax errors at the markers): say how to check each chunk, once per run. */
static void hint_split(const check_settings *s, const input_list *in) {
  const char *first = NULL;
  size_t n = 0;
  for (size_t i = 0; i < in->n && !s->opt.split_input_file; i++) {
    const input *x = &in->v[i];
    if (!x->report || !x->report->ndiags || !x->buf || x->report->format != SC_FMT_STABLEHLO) continue;
    if (!has_split_marker(x->buf, x->len)) continue;
    if (!n++) first = x->path;
  }
  if (!n) return;
  char more[64] = "";
  if (n > 1) snprintf(more, sizeof more, " (and %zu more files)", n - 1);
  fprintf(stderr, "shardcheck: hint: %s%s has `// -----` separators; pass --split-input-file to check each chunk "
                  "as its own module\n",
          first, more);
}

static int finish(check_settings *s, input_list *in) {
  for (size_t i = 0; i < in->n; i++) {
    input *x = &in->v[i];
    if (x->error) fprintf(stderr, "shardcheck: %s\n", x->error);
    if (!x->report) continue;
    apply_severity_overrides(s, x->report);
    if (!(x->fingerprints = sc_report_fingerprints(x->arena, x->report))) return EXIT_TROUBLE;
  }
  hint_split(s, in);
  if (s->write_baseline) return write_baseline(s->write_baseline, in);
  totals t = {0};
  if (apply_suppressions(s, in, &t)) return EXIT_TROUBLE;
  FILE *out = s->output ? fopen(s->output, "w") : stdout;
  if (!out) {
    fprintf(stderr, "shardcheck: --output %s: cannot open for writing\n", s->output);
    return EXIT_TROUBLE;
  }
  int rc = render_output(out, s, in, &t);
  if ((s->output && fclose(out) != 0) || (!s->output && fflush(out) != 0)) rc = EXIT_TROUBLE;
  if (rc) return EXIT_TROUBLE;
  if (t.failed) return EXIT_TROUBLE;
  return !s->exit_zero && gate(s, &t) ? EXIT_FINDINGS : 0;
}

int cmd_check(int argc, char **argv) {
  check_settings s;
  memset(&s, 0, sizeof s);
  s.fail_on = FAIL_ON_ERROR;
  s.inline_ignores = true;
  s.max_diagnostics = -1;
  int rc = parse_settings(argc, argv, &s);
  if (rc) {
    if (rc < 0) print_usage(stdout, "check");
    settings_free(&s);
    return rc < 0 ? 0 : rc;
  }
  if (optind >= argc) {
    settings_free(&s);
    return usage_error("%s", "check needs a FILE or DIR ('-' for stdin)");
  }
  input_list in = {0};
  if ((rc = walk_inputs(argv + optind, argc - optind, &s, &in)) == 0) {
    if (s.dump_ops) {
      rc = s.server ? usage_error("%s", "--debug-dump-ops works only in local mode") : dump_all(&s, &in);
    } else {
      /* Nothing to check is trouble: a CI job whose dump step produced nothing must not pass. */
      if (in.n == 0) {
        fprintf(stderr, "shardcheck: no modules found (%zu file%s skipped: *.mlir, *.mlirbc, *.hlo and HLO dumps are "
                        "checked; see --include)\n",
                in.skipped, in.skipped == 1 ? "" : "s");
        inputs_free(&in);
        settings_free(&s);
        return EXIT_TROUBLE;
      }
      /* A daemon that is not there fails once, before any input is sent. */
      sc_rpc_client *probe = s.server && in.n ? remote_connect_or_complain(s.server) : NULL;
      if (s.server && in.n && !probe) rc = EXIT_TROUBLE;
      else {
        sc_rpc_close(probe);
        run_inputs(&s, &in);
        rc = finish(&s, &in);
      }
    }
  }
  inputs_free(&in);
  settings_free(&s);
  return rc;
}
