/* What every libFuzzer harness does with one input once it has chosen the options: the whole check
 * in a 64 MiB arena (the daemon's kind of limit), then all three emitters over the report. */
#ifndef SC_FUZZ_COMMON_H
#define SC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>

#include "shardcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_check_and_render(const uint8_t *data, size_t size, const sc_options *opt) {
  sc_arena *a = sc_arena_new(64u << 20);
  if (!a) return;
  sc_report *r = NULL;
  sc_check(a, (const char *)data, size, opt, &r);
  if (r) {
    free(sc_report_json(r, false));
    free(sc_report_text(r, false));
    free(sc_report_sarif(r));
  }
  sc_arena_free(a);
}

#endif
