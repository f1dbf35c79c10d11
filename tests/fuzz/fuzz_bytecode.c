/* libFuzzer harness for the MLIR bytecode front end (and the Exported container): the input is read as
 * bytecode whatever it holds (most mutations of a seed keep the magic), then the model, the rules and
 * all three emitters run. Seeded with the corpus .mlirbc files by `make fuzz`. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sc_options opt = {0};
  opt.input_format = size > 0 && (data[size - 1] & 1) ? SC_FMT_AUTO : SC_FMT_BYTECODE;
  fuzz_check_and_render(data, size, &opt);
  return 0;
}
