/* quoted.h — internal: the string-literal scanner shared by the Shardy (sdy_sharding.c) and GSPMD
 * (gspmd_sharding.c) tokenizers. Unlike ir_skip_string (lib/ir), it tells an unclosed string apart. */
#ifndef SC_QUOTED_H
#define SC_QUOTED_H

#include <stddef.h>

/* The closing quote of the string literal whose opening quote (`"` or `'`) is at `open`, stepping over
 * backslash escapes; NULL if the string is not closed before `end`. */
static inline const char *md_quoted_end(const char *open, const char *end) {
  const char *q = open + 1;
  while (q < end && *q != *open) {
    if (*q == '\\' && q + 1 < end) q++;
    q++;
  }
  return q < end ? q : NULL;
}

#endif
