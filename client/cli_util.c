/* cli_util.c — small helpers the CLI's parts share. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "rpc.h"

uint64_t random_hash_seed(void) {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) seed = 0;
  return seed;
}

char *xstrdup(const char *s) {
  char *d = s ? strdup(s) : NULL;
  if (s && !d) {
    fputs("shardcheck: out of memory\n", stderr);
    exit(EXIT_TROUBLE);
  }
  return d;
}

/* Optimal string alignment distance, capped: words longer than 64 bytes are never close. */
static size_t edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return SIZE_MAX;
  size_t d[65][65];
  for (size_t i = 0; i <= n; i++) d[i][0] = i;
  for (size_t j = 0; j <= m; j++) d[0][j] = j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

const char *closest_word(const char *word, const char *const *candidates, size_t n) {
  const char *best = NULL;
  size_t best_d = 3;
  for (size_t i = 0; i < n; i++) {
    size_t d = edit_distance(word, candidates[i]);
    if (d < best_d && d < strlen(word)) best = candidates[i], best_d = d;
  }
  return best;
}

int parse_severity(const char *s, sc_severity *out) {
  if (!strcmp(s, "note")) *out = SC_SEV_NOTE;
  else if (!strcmp(s, "warning")) *out = SC_SEV_WARNING;
  else if (!strcmp(s, "error")) *out = SC_SEV_ERROR;
  else return -1;
  return 0;
}

int parse_fail_on(const char *s, fail_on_level *out) {
  if (!strcmp(s, "note")) *out = FAIL_ON_NOTE;
  else if (!strcmp(s, "warning")) *out = FAIL_ON_WARNING;
  else if (!strcmp(s, "error")) *out = FAIL_ON_ERROR;
  else if (!strcmp(s, "never")) *out = FAIL_ON_NEVER;
  else return -1;
  return 0;
}

int parse_bytes(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !(v > 0)) return -1;
  static const struct {
    const char *suffix;
    double scale;
  } units[] = {{"", 1}, {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
               {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(end, units[i].suffix)) {
      double bytes = v * units[i].scale;
      if (bytes >= 9.2e18) return -1;
      *out = (int64_t)bytes;
      return *out > 0 ? 0 : -1;
    }
  return -1;
}

char *read_all(const char *path, size_t *len, char **error) {
  const char *why = NULL;
  char *buf = sc_rpc_read_input(path, len, &why);
  if (!buf) *error = xstrdup(why ? why : "read error");
  return buf;
}

bool input_read(input *x, char **error) {
  if (strcmp(x->path, "-") != 0) {
    int fd = open(x->path, O_RDONLY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size <= SIZE_MAX) {
      void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        close(fd);
        x->buf = p, x->len = (size_t)st.st_size, x->mapped = true;
        return true;
      }
    }
    if (fd >= 0) close(fd);
  }
  x->mapped = false;
  x->buf = read_all(x->path, &x->len, error);
  return x->buf != NULL;
}
