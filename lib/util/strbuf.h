/* strbuf.h — a malloc-backed growable string for emitters that hand the caller a malloc'd result.
 * On allocation failure the buffer is marked failed and sc_strbuf_take() returns NULL. */
#ifndef SC_STRBUF_H
#define SC_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  char *p;
  size_t n, cap;
  bool failed;
} sc_strbuf;

void sc_strbuf_put(sc_strbuf *b, const char *s, size_t n);
void sc_strbuf_puts(sc_strbuf *b, const char *s);
void sc_strbuf_printf(sc_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the NUL-terminated string (caller frees) or NULL if any append failed. */
char *sc_strbuf_take(sc_strbuf *b);

#endif
