/* cli_propagate.c — `shardcheck propagate FILE`: the module as Shardy's passes leave it, printed as
 * sdy_opt prints it (one flag per sdy_opt pass; docs/propagation.md). Messages of the passes go to
 * stderr as FILE:LINE:COL: severity: text, as MLIR prints them. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "remote.h"

static int usage(const char *why) {
  if (why) fprintf(stderr, "shardcheck propagate: %s\n", why);
  fputs("usage: shardcheck propagate [--annotate-rules] [--strategy pipeline|basic|aggressive|op-priority|\n"
        "                            user-priority|none] [--conservative] [--keep-sharding-rules]\n"
        "                            [--dedup-functions-fully] [--insert-reshards[=full|partial]] [--reshards-to-collectives\n"
        "                            [--keep-redundant-reshards]] [--propagate-to-func-results] [--split-input-file]\n"
        "                            [--format-in FORMAT] [--format text|json]\n"
        "                            [--mesh SPEC] [--server HOST:PORT] FILE\n",
        stderr);
  return EXIT_TROUBLE;
}

/* Flags into *o (a --mesh spec into *mesh_spec); the input path into *path. Returns 0, or the exit
 * status of a usage error. */
static int parse_flags(int argc, char **argv, sc_propagate_options *o, const char **path, const char **mesh_spec,
                       const char **server) {
  *path = NULL;
  for (int i = 1; i < argc; i++) { /* argv[0] is the subcommand */
    const char *a = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--annotate-rules")) {
      o->annotate_rules = true;
      o->strategy = SC_PROPAGATE_NONE;
    } else if (!strcmp(a, "--conservative")) o->conservative = true;
    else if (!strcmp(a, "--keep-sharding-rules")) o->keep_sharding_rules = true;
    else if (!strcmp(a, "--insert-reshards") || !strcmp(a, "--insert-reshards=full")) o->insert_reshards = true;
    else if (!strcmp(a, "--insert-reshards=partial")) o->insert_reshards = o->insert_reshards_partial = true;
    else if (!strcmp(a, "--reshards-to-collectives")) o->reshards_to_collectives = true;
    else if (!strcmp(a, "--keep-redundant-reshards")) o->keep_redundant_reshards = true;
    else if (!strcmp(a, "--propagate-to-func-results")) o->propagate_to_func_results = true;
    else if (!strcmp(a, "--dedup-functions-fully")) o->dedup_functions_fully = true;
    else if (!strcmp(a, "--split-input-file")) o->split_input_file = true;
    else if (!strcmp(a, "--format") || !strcmp(a, "--mesh") || !strcmp(a, "--server")) {
      if (!value) return usage(!strcmp(a, "--format") ? "--format needs a value" : "--mesh and --server need a value");
      i++;
      if (!strcmp(a, "--mesh")) *mesh_spec = value;
      else if (!strcmp(a, "--server")) *server = value;
      else if (!strcmp(value, "json") || !strcmp(value, "text")) o->json = !strcmp(value, "json");
      else return usage("--format is text or json");
    } else if (!strcmp(a, "--strategy") || !strcmp(a, "--format-in")) {
      if (!value) return usage(strcmp(a, "--strategy") ? "--format-in needs a value" : "--strategy needs a value");
      i++;
      if (!strcmp(a, "--strategy") ? sc_propagate_strategy_parse(value, &o->strategy) : sc_format_parse(value, &o->input_format))
        return usage(strcmp(a, "--strategy") ? "unknown input format" : "unknown strategy");
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(NULL);
      exit(0);
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "shardcheck propagate: unknown flag %s\n", a);
      return usage(NULL);
    } else if (*path) return usage("one input file at a time");
    else *path = a;
  }
  return *path ? 0 : usage("no input file");
}

/* A message of a pass as MLIR prints it: FILE:LINE:COL: severity: text. */
static void print_message(const char *name, sc_severity severity, uint32_t line, uint32_t col, const char *message) {
  fprintf(stderr, "%s:%u:%u: %s: %s\n", name, line, col, sc_severity_name(severity), message);
}

/* --server: the daemon's Propagate prints what local mode prints (a failure names the daemon). */
static int propagate_remote(const char *server, const char *buf, size_t len, const char *name,
                            const sc_propagate_options *o) {
  sc_rpc_client *c = remote_connect_or_complain(server);
  if (!c) return EXIT_TROUBLE;
  sc_rpc_propagate_result r;
  char *err = NULL;
  int rc = sc_rpc_propagate(c, buf, len, name, o, &r, &err);
  sc_rpc_close(c);
  if (rc) {
    fprintf(stderr, "shardcheck propagate: %s\n", err ? err : "error");
    free(err);
    return EXIT_TROUBLE;
  }
  bool pass_failed = false;
  for (size_t i = 0; i < r.nmessages; i++) {
    print_message(name, r.messages[i].severity, r.messages[i].line, r.messages[i].col, r.messages[i].message);
    pass_failed |= r.messages[i].severity == SC_SEV_ERROR;
  }
  fputs(r.text, stdout);
  sc_rpc_propagate_result_free(&r);
  return pass_failed ? EXIT_FINDINGS : 0;
}

int cmd_propagate(int argc, char **argv) {
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  const char *path, *mesh_spec = NULL, *server = NULL;
  int rc = parse_flags(argc, argv, &o, &path, &mesh_spec, &server);
  if (rc) return rc;
  o.hash_seed = random_hash_seed();
  size_t len = 0;
  char *error = NULL;
  char *buf = read_all(path, &len, &error);
  if (!buf) {
    fprintf(stderr, "shardcheck propagate: %s: %s\n", path, error);
    free(error);
    return EXIT_TROUBLE;
  }
  sc_arena *arena = sc_arena_new(0);
  sc_target_mesh mesh;
  const char *mesh_error = NULL;
  if (arena && mesh_spec) {
    if (sc_mesh_parse(arena, mesh_spec, &mesh, &mesh_error)) {
      fprintf(stderr, "shardcheck propagate: --mesh %s: %s\n", mesh_spec, mesh_error);
      sc_arena_free(arena);
      free(buf);
      return EXIT_TROUBLE;
    }
    o.mesh = &mesh;
  }
  const char *name = strcmp(path, "-") ? path : "<stdin>";
  if (server) {
    rc = arena ? propagate_remote(server, buf, len, name, &o) : EXIT_TROUBLE;
    sc_arena_free(arena);
    free(buf);
    return rc;
  }
  sc_propagate_result r;
  sc_status status = arena ? sc_propagate(arena, buf, len, &o, &r) : SC_ERR_LIMIT;
  bool pass_failed = false; /* a pass reported an error (sdy_opt's failed pass): exit 1 */
  for (size_t i = 0; status == SC_OK && i < r.nmessages; i++) {
    print_message(name, r.messages[i].severity, r.messages[i].line, r.messages[i].col, r.messages[i].message);
    pass_failed |= r.messages[i].severity == SC_SEV_ERROR;
  }
  if (status == SC_OK) fwrite(r.text, 1, r.len, stdout);
  else fprintf(stderr, "%s: error: %s\n", name, arena ? r.failure : "out of memory");
  sc_arena_free(arena);
  free(buf);
  return status != SC_OK ? EXIT_TROUBLE : pass_failed ? EXIT_FINDINGS : 0;
}
