/* shardcheck — the command-line interface: dispatch to the subcommands (see cli.h for the parts).
 *
 *   shardcheck check FILE|DIR... [options]   check modules (in-process, or through a daemon with --server)
 *   shardcheck fix FILE [-o OUT|--in-place]  apply machine-applicable fixes
 *   shardcheck rules [--format text|json]    list the rules
 *   shardcheck explain CODE [--format ...]   print a code's explanation page
 *   shardcheck version | health | capabilities
 *
 * Exit status: 0 clean, 1 findings (at or above --fail-on), 2 usage, I/O or internal error. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "remote.h"

static int cmd_daemon_info(const char *cmd, int argc, char **argv) {
  if (wants_help(argc, argv)) {
    printf("usage: shardcheck %s --server HOST:PORT%s\n", cmd, !strcmp(cmd, "health") ? " [SERVICE]" : "");
    return 0;
  }
  const char *server = remote_take_server(&argc, argv);
  if (!server) {
    fprintf(stderr, "shardcheck: %s needs --server HOST:PORT\n", cmd);
    return EXIT_TROUBLE;
  }
  return !strcmp(cmd, "health") ? remote_health(server, argc > 1 ? argv[1] : "") : remote_capabilities(server);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_usage(stderr, NULL);
    return EXIT_TROUBLE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "check")) return cmd_check(argc - 1, argv + 1);
  if (!strcmp(cmd, "fix")) return cmd_fix(argc - 1, argv + 1);
  if (!strcmp(cmd, "rules")) return cmd_rules(argc - 1, argv + 1);
  if (!strcmp(cmd, "explain")) return cmd_explain(argc - 1, argv + 1);
  if (!strcmp(cmd, "propagate")) return cmd_propagate(argc - 1, argv + 1);
  if (!strcmp(cmd, "health") || !strcmp(cmd, "capabilities")) return cmd_daemon_info(cmd, argc - 1, argv + 1);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("shardcheck %s (rules %s)\n", SC_VERSION, sc_rules_version());
    return 0;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    print_usage(stdout, argc > 2 ? argv[2] : NULL);
    return 0;
  }
  static const char *const commands[] = {"check", "fix", "rules", "explain", "health", "capabilities", "version", "help"};
  const char *near = closest_word(cmd, commands, sizeof commands / sizeof *commands);
  fprintf(stderr, "shardcheck: unknown command '%s'", cmd);
  if (near) fprintf(stderr, " (did you mean '%s'?)", near);
  fputs(" (see `shardcheck help`)\n", stderr);
  return EXIT_TROUBLE;
}
