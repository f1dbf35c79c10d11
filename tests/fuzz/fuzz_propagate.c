/* libFuzzer harness: `shardcheck propagate` over any input — every strategy (the pipeline too, with and
 * without its call-graph copies), the explicit-reshard passes (full, partial, to collectives), the rule
 * annotation, the printer (text, comments, one op per line, attribute slots, signatures) and the JSON
 * output (any input format), split and whole. */
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const sc_propagate_strategy strategies[] = {SC_PROPAGATE_NONE,        SC_PROPAGATE_BASIC,
                                                     SC_PROPAGATE_AGGRESSIVE,   SC_PROPAGATE_OP_PRIORITY,
                                                     SC_PROPAGATE_USER_PRIORITY, SC_PROPAGATE_PIPELINE};
  if (size > UINT32_MAX / 2 || size < 1) return 0;
  uint8_t pick = data[0];
  sc_arena *a = sc_arena_new(64u << 20);
  if (!a) return 0;
  sc_propagate_options o;
  memset(&o, 0, sizeof o);
  o.strategy = strategies[pick % 6];
  o.annotate_rules = (pick >> 3) & 1;
  o.conservative = (pick >> 4) & 1;
  o.keep_sharding_rules = (pick >> 5) & 1;
  o.split_input_file = (pick >> 6) & 1;
  o.json = (pick >> 7) & 1;
  if (o.strategy == SC_PROPAGATE_PIPELINE) o.dedup_functions_fully = o.conservative;
  if (o.strategy == SC_PROPAGATE_NONE && !o.annotate_rules && !o.json) {
    /* none, the reshards in full or in part, reshards to collectives, func results from the returns */
    unsigned pass = ((pick >> 4) & 3) + ((pick >> 6) & 1);
    o.insert_reshards = pass == 1 || pass == 2;
    o.insert_reshards_partial = pass == 2;
    o.reshards_to_collectives = pass == 3;
    o.propagate_to_func_results = pass == 4;
    o.conservative = o.keep_sharding_rules = false;
  }
  sc_propagate_result r;
  sc_status st = sc_propagate(a, (const char *)data + 1, size - 1, &o, &r);
  if (st == SC_OK && (!r.text || r.text[r.len] != 0)) abort(); /* the printed module is NUL-terminated */
  sc_arena_free(a);
  return 0;
}
