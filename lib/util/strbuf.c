/* strbuf.c — growable malloc'd string. */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(sc_strbuf *b, size_t extra) {
  if (b->failed) return false;
  if (b->n + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->failed = true;
    return false;
  }
  b->p = p, b->cap = cap;
  return true;
}

void sc_strbuf_put(sc_strbuf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void sc_strbuf_puts(sc_strbuf *b, const char *s) { sc_strbuf_put(b, s, strlen(s)); }

void sc_strbuf_printf(sc_strbuf *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n >= 0 && reserve(b, (size_t)n)) {
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap2);
    b->n += (size_t)n;
  }
  va_end(ap2);
}

char *sc_strbuf_take(sc_strbuf *b) {
  if (b->failed || !reserve(b, 0)) {
    free(b->p);
    b->p = NULL, b->n = b->cap = 0;
    return NULL;
  }
  char *p = b->p;
  p[b->n] = '\0'; /* an empty buffer was never written to */
  b->p = NULL, b->n = b->cap = 0;
  return p;
}
