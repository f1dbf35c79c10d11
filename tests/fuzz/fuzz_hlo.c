/* libFuzzer harness for the XLA HLO text front end.
 *
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -Ilib \
 *     tests/fuzz/fuzz_hlo.c lib/front/hlo_text.c lib/ir/ir.c lib/util/arena.c -o build/fuzz_hlo
 *   mkdir -p build/fuzz_hlo_corpus
 *   build/fuzz_hlo build/fuzz_hlo_corpus ../shared/corpus/xla/hlo -max_len=65536
 *
 * The parser must never crash, hang or read outside the input: on success the IR must be consistent
 * (every span inside the buffer, every operand resolved); on failure the error offset must be inside
 * the input. The input is copied into an exactly-sized heap block so ASan sees any overread. Small
 * arena and depth limits exercise the out-of-memory and nesting paths too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "front/front.h"
#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const ir_module *m, const char *buf, size_t len) {
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    ir_span text = ir_op_text(m, op);
    if (op->id != i || text.p < buf || text.p + text.n > buf + len || op->pos.offset > op->end) abort();
    for (uint32_t k = 0; k < op->nattrs; k++) {
      const ir_attr *a = &op->attr_v[k];
      if (a->name.p < buf || a->value.p + a->value.n > buf + len || a->end > len) abort();
    }
    for (uint32_t k = 0; k < op->noperands; k++)
      if (!op->operands[k]) abort();
    for (uint32_t r = 0; r < op->nregions; r++)
      for (uint32_t b = 0; b < ir_op_regions(op)[r]->nblocks; b++) {
        const ir_block *blk = ir_op_regions(op)[r]->blocks[b];
        for (uint32_t k = 0; k < blk->nargs; k++)
          if (!blk->args[k] || (ir_value_type(blk->args[k]).n &&
                                ir_value_type(blk->args[k]).p + ir_value_type(blk->args[k]).n > buf + len))
            abort();
      }
  }
  if (!m->entry || !m->module) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  char *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  /* The first byte picks limits so both the default and the tight paths are fuzzed. */
  uint32_t max_depth = size && (data[0] & 1) ? 8 : 0;
  size_t arena_limit = size && (data[0] & 2) ? 256u * 1024u : 64u << 20;
  sc_arena *a = sc_arena_new(arena_limit);
  if (a) {
    ir_linemap lm = ir_linemap_build(a, buf, size);
    if (lm.samples) {
      fe_parse_input in = {a, buf, size, 0, (uint32_t)size, &lm, max_depth, 100000, NULL};
      fe_parse_error err;
      ir_module *m = fe_parse_hlo(&in, &err);
      if (m) check(m, buf, size);
      else if (!err.failed || !err.message || err.offset > size) abort();
    }
    sc_arena_free(a);
  }
  free(buf);
  return 0;
}
