/* strbuf.h — the malloc-backed form of the one growable string (ar_str, util/arena.h) for emitters
 * and callers that hand out a malloc'd result: `strbuf b = {0}` (no arena), append, then
 * sb_take(). On allocation failure the buffer is marked failed and sb_take() returns
 * NULL. One thread at a time per buffer. */
#ifndef SC_STRBUF_H
#define SC_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

typedef ar_str strbuf; /* with a NULL arena */

static inline void sb_put(strbuf *b, const char *s, size_t n) { ar_str_put(b, s, n); }
static inline void sb_puts(strbuf *b, const char *s) { ar_str_puts(b, s); }
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the NUL-terminated string (caller frees) or NULL if any append failed; the buffer is empty
 * again afterwards. */
char *sb_take(strbuf *b);

/* A byte count for people: "512 B", "1.5 KiB", "16 GiB" (binary units, 3 significant digits) in out[32];
 * returns out. Pure; any thread. */
const char *sb_format_bytes(char out[32], int64_t bytes);

#endif
