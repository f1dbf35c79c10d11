/* bench — speed and memory of the check path, as ratios against a reference run in the same process:
 * the reference is one pass of memchr over the same bytes (the cheapest possible read of the input),
 * so "x memchr" stays comparable across machines. Prints one line per input and a summary.
 *
 * usage: bench [-n ITERATIONS] FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shardcheck.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* The reference: count newlines with memchr (touches every byte once). */
static size_t reference_scan(const char *buf, size_t len) {
  size_t lines = 0;
  for (const char *p = buf, *e = buf + len; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++) lines++;
  return lines;
}

int main(int argc, char **argv) {
  int iters = 20, first = 1;
  if (argc > 2 && !strcmp(argv[1], "-n")) iters = atoi(argv[2]), first = 3;
  if (first >= argc) {
    fprintf(stderr, "usage: bench [-n ITERATIONS] FILE...\n");
    return 2;
  }
  double sum_ratio = 0, total_bytes = 0, total_time = 0;
  int files = 0;
  volatile size_t sink = 0;
  printf("%-60s %10s %8s %10s %12s %10s\n", "input", "bytes", "ops", "MB/s", "x memchr", "arena/in");
  for (int i = first; i < argc; i++) {
    size_t len;
    char *buf = read_file(argv[i], &len);
    if (!buf || !len) {
      fprintf(stderr, "bench: cannot read %s\n", argv[i]);
      free(buf);
      continue;
    }
    /* Interleave reference and subject so both see the same machine state. */
    double t_ref = 0, t_chk = 0;
    size_t ops = 0, arena_bytes = 0;
    for (int k = 0; k < iters; k++) {
      double t0 = now();
      sink += reference_scan(buf, len);
      double t1 = now();
      sc_arena *a = sc_arena_new(0);
      sc_report *r = NULL;
      sc_options opt = {0};
      opt.split_input_file = true;
      sc_check(a, buf, len, &opt, &r);
      char *json = r ? sc_report_json(r, false) : NULL;
      double t2 = now();
      t_ref += t1 - t0;
      t_chk += t2 - t1;
      if (r) ops = r->ops;
      arena_bytes = sc_arena_used(a);
      free(json);
      sc_arena_free(a);
    }
    double ratio = t_ref > 0 ? t_chk / t_ref : 0;
    const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
    printf("%-60.60s %10zu %8zu %10.1f %12.1f %10.2f\n", name, len, ops, (double)len * iters / t_chk / 1e6, ratio,
           (double)arena_bytes / (double)len);
    sum_ratio += ratio;
    total_bytes += (double)len * iters;
    total_time += t_chk;
    files++;
    free(buf);
  }
  if (files)
    printf("summary: %d inputs, %.1f MB/s overall, mean %.1fx the memchr reference\n", files, total_bytes / total_time / 1e6,
           sum_ratio / files);
  return sink == (size_t)-1;
}
