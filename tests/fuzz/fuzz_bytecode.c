/* libFuzzer harness for the MLIR bytecode front end (and the Exported container): the input is read as
 * bytecode whatever it holds (most mutations of a seed keep the magic), then the model, the rules and
 * all three emitters run. Seeded with the corpus .mlirbc files by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>

#include "shardcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sc_arena *a = sc_arena_new(64u << 20);
  if (!a) return 0;
  sc_options opt = {0};
  opt.input_format = size > 0 && (data[size - 1] & 1) ? SC_FMT_AUTO : SC_FMT_BYTECODE;
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
