/* strbuf: growth, formatting, ownership transfer. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "util/strbuf.h"

Test(strbuf, grows_and_formats) {
  strbuf b = {0};
  for (int i = 0; i < 1000; i++) sb_printf(&b, "%d,", i);
  sb_puts(&b, "end");
  char *s = sb_take(&b);
  cr_assert_not_null(s);
  cr_assert_eq(strncmp(s, "0,1,2,", 6), 0);
  cr_assert_str_eq(s + strlen(s) - 7, "999,end");
  cr_assert_null(b.p, "take hands the buffer over");
  free(s);
  strbuf e = {0};
  char *empty = sb_take(&e);
  cr_assert_str_eq(empty, "");
  free(empty);
}
