/* libFuzzer harness over the whole check path (format detection, both front ends, model, rules,
 * all three emitters) with a small arena limit, as the daemon runs it. Build: make fuzz. */
#include <stdint.h>
#include <stdlib.h>

#include "shardcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sc_arena *a = sc_arena_new(64u << 20);
  if (!a) return 0;
  sc_options opt = {0};
  opt.split_input_file = size > 0 && (data[0] & 1);
  sc_report *r = NULL;
  sc_check(a, (const char *)data, size, &opt, &r);
  if (r) {
    free(sc_report_json(r, false));
    free(sc_report_text(r, false));
    free(sc_report_sarif(r));
  }
  sc_arena_free(a);
  return 0;
}
