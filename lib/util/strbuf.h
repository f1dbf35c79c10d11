/* strbuf.h — the malloc-backed form of the one growable string (sc_astr, util/arena.h) for emitters
 * and callers that hand out a malloc'd result: `sc_strbuf b = {0}` (no arena), append, then
 * sc_strbuf_take(). On allocation failure the buffer is marked failed and sc_strbuf_take() returns
 * NULL. One thread at a time per buffer. */
#ifndef SC_STRBUF_H
#define SC_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

typedef sc_astr sc_strbuf; /* with a NULL arena */

static inline void sc_strbuf_put(sc_strbuf *b, const char *s, size_t n) { sc_astr_put(b, s, n); }
static inline void sc_strbuf_puts(sc_strbuf *b, const char *s) { sc_astr_puts(b, s); }
void sc_strbuf_printf(sc_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the NUL-terminated string (caller frees) or NULL if any append failed; the buffer is empty
 * again afterwards. */
char *sc_strbuf_take(sc_strbuf *b);

/* A byte count for people: "512 B", "1.5 KiB", "16 GiB" (binary units, 3 significant digits) in out[32];
 * returns out. Pure; any thread. */
const char *sc_format_bytes(char out[32], int64_t bytes);

#endif
