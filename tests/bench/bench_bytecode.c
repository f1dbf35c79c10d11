/* Bytecode read speed beside the text parse of the same module: for each .mlirbc given, its .mlir twin
 * is parsed too (front end only, no rules), best of N runs. Usage: bench_bytecode [-n N] FILE.mlirbc... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"
#include "front/front.h"
#include "ir/ir.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best time of `runs` parses; *ops gets the op count (0 on a parse error). */
static double best_parse(sc_format fmt, const char *buf, size_t len, int runs, uint32_t *ops) {
  double best = 1e30;
  *ops = 0;
  for (int i = 0; i < runs; i++) {
    sc_arena *a = sc_arena_new(0);
    ir_linemap lines = ir_linemap_build(a, buf, len);
    fe_parse_input in = {a, buf, len, 0, (uint32_t)len, &lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
    fe_parse_error err;
    double t0 = now();
    ir_module *m = fe_parse_format(fmt, &in, &err);
    double dt = now() - t0;
    if (m) *ops = m->nops;
    if (dt < best) best = dt;
    sc_arena_free(a);
  }
  return best;
}

int main(int argc, char **argv) {
  int runs = 20, first = 1;
  if (argc > 2 && !strcmp(argv[1], "-n")) runs = atoi(argv[2]), first = 3;
  printf("%-48s %10s %10s %12s %12s %7s\n", "bytecode module (vs its .mlir twin)", "bc bytes", "text bytes", "bc ops/s",
         "text ops/s", "speedup");
  for (int i = first; i < argc; i++) {
    size_t blen, tlen;
    char *b = test_read_file(argv[i], &blen);
    char twin[4096];
    snprintf(twin, sizeof twin, "%.*s", (int)strlen(argv[i]) - 2, argv[i]);
    char *t = test_read_file(twin, &tlen);
    if (!b || !t) {
      fprintf(stderr, "bench_bytecode: cannot read %s or its twin\n", argv[i]);
      return 2;
    }
    uint32_t bops, tops;
    double tb = best_parse(SC_FMT_BYTECODE, b, blen, runs, &bops), tt = best_parse(SC_FMT_STABLEHLO, t, tlen, runs, &tops);
    const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
    printf("%-48s %10zu %10zu %12.0f %12.0f %6.2fx\n", name, blen, tlen, bops / tb, tops / tt, tt / tb);
    free(b);
    free(t);
  }
  return 0;
}
