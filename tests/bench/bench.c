/* bench — in-process speed of the check path (parse, model, rules, JSON report) on small real modules,
 * where starting a process would dominate a timing of the CLI. Runs each file ITERATIONS times and
 * prints one tab-separated line per input: name, bytes, ops, MB/s, arena bytes per input byte.
 * tests/bench/run_bench.py reads these lines (`make bench`).
 *
 * usage: bench [-n ITERATIONS] FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h" /* test_read_file */
#include "shardcheck.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int iters = 20, first = 1;
  if (argc > 2 && !strcmp(argv[1], "-n")) iters = atoi(argv[2]), first = 3;
  if (first >= argc || iters < 1) {
    fprintf(stderr, "usage: bench [-n ITERATIONS] FILE...\n");
    return 2;
  }
  for (int i = first; i < argc; i++) {
    size_t len;
    char *buf = test_read_file(argv[i], &len);
    if (!buf || !len) {
      fprintf(stderr, "bench: cannot read %s\n", argv[i]);
      free(buf);
      return 1;
    }
    double best = 0;
    size_t ops = 0, arena_bytes = 0;
    for (int k = 0; k < iters; k++) {
      double t0 = now();
      sc_arena *a = sc_arena_new(0);
      sc_report *r = NULL;
      sc_options opt = {0};
      opt.input_name = argv[i];
      sc_check(a, buf, len, &opt, &r);
      char *json = r ? sc_report_json(r, false) : NULL;
      double t = now() - t0;
      if (k == 0 || t < best) best = t;
      if (r) ops = r->ops;
      arena_bytes = sc_arena_used(a);
      free(json);
      sc_arena_free(a);
    }
    printf("%s\t%zu\t%zu\t%.2f\t%.2f\n", argv[i], len, ops, (double)len / best / 1e6, (double)arena_bytes / (double)len);
    free(buf);
  }
  return 0;
}
