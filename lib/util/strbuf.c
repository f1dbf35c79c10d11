/* strbuf.c — the malloc-backed ar_str's varargs append and hand-over (see strbuf.h). */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void sb_printf(strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ar_str_vprintf(b, fmt, ap);
  va_end(ap);
}

char *sb_take(strbuf *b) {
  if (!b->failed) ar_str_reserve(b, 0); /* an empty buffer was never written to */
  char *p = b->failed ? NULL : b->p;
  if (p) p[b->n] = '\0';
  else free(b->p);
  b->p = NULL, b->n = b->cap = 0, b->failed = false;
  return p;
}

const char *sb_format_bytes(char out[32], int64_t b) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (b < 1024) {
    snprintf(out, 32, "%lld B", (long long)b);
    return out;
  }
  double v = (double)b / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) v /= 1024, u++;
  snprintf(out, 32, v >= 100 ? "%.0f %s" : "%.3g %s", v, units[u]);
  return out;
}
