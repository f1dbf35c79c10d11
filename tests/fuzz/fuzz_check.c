/* libFuzzer harness over the whole check path (format detection, both front ends, model, rules,
 * all three emitters) with a small arena limit, as the daemon runs it. Build: make fuzz. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sc_options opt = {0};
  opt.split_input_file = size > 0 && (data[0] & 1);
  fuzz_check_and_render(data, size, &opt);
  return 0;
}
