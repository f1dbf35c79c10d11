/* bytes.h — equality of short byte runs without a call into libc.
 *
 * The front ends and the IR compare names and types of a few dozen bytes millions of times on a large
 * module (value names, repeated type lists, op names); there a call to memcmp costs more than the
 * comparison. Pure functions; any thread. */
#ifndef SC_BYTES_H
#define SC_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether the n bytes at a and b are equal. Reads only those bytes. */
static inline bool sc_bytes_eq(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  if (n > 64) return memcmp(x, y, n) == 0;
  for (; n >= 8; x += 8, y += 8, n -= 8) {
    uint64_t u, v;
    memcpy(&u, x, 8);
    memcpy(&v, y, 8);
    if (u != v) return false;
  }
  if (n >= 4) { /* the first and last four of the rest cover it */
    uint32_t u, v, s, t;
    memcpy(&u, x, 4);
    memcpy(&v, y, 4);
    memcpy(&s, x + n - 4, 4);
    memcpy(&t, y + n - 4, 4);
    return u == v && s == t;
  }
  for (; n; n--)
    if (*x++ != *y++) return false;
  return true;
}

#endif
