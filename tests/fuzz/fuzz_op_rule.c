/* libFuzzer harness: the op sharding rule registry over any module the front ends accept (each op's
 * rule in both modes, printed and parsed back), and the rule parser over the raw bytes. */
#include <string.h>

#include "front/front.h"
#include "fuzz_common.h"
#include "propagate/op_rule.h"

static void rules_of_module(sc_arena *a, const char *buf, size_t len) {
  ir_linemap lines = ir_linemap_build(a, buf, len);
  fe_parse_input in = {a, buf, len, 0, (uint32_t)len, &lines, SC_DEFAULT_MAX_DEPTH, SC_DEFAULT_MAX_OPS, NULL};
  fe_parse_error err;
  memset(&err, 0, sizeof err);
  ir_module *m = fe_parse_format(fe_detect_format(buf, len), &in, &err);
  if (!m) return;
  ir_module_finalize(a, m);
  for (int conservative = 0; conservative < 2; conservative++) {
    prop_rule_options opt = {conservative, conservative ? prop_rule_facts_build(a, m) : NULL};
    for (uint32_t i = 0; i < m->nops; i++) {
      const prop_rule *r = prop_rule_of(a, m, m->ops[i], &opt, NULL);
      (void)prop_rule_warning(a, m->ops[i]);
      if (!r) continue;
      const char *s = prop_rule_str(a, r);
      const char *perr = NULL;
      const prop_rule *back = prop_rule_parse(a, ir_span_of(s, (uint32_t)strlen(s)), &perr);
      if (!back || strcmp(prop_rule_str(a, back), s) != 0) abort(); /* printing and parsing disagree */
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > UINT32_MAX / 2) return 0;
  sc_arena *a = sc_arena_new(64u << 20);
  if (!a) return 0;
  jmp_buf env;
  ar_set_failure_jump(a, &env);
  if (setjmp(env) == 0) {
    char *buf = ar_strndup(a, (const char *)data, size);
    rules_of_module(a, buf, size);
    (void)prop_rule_parse(a, ir_span_of(buf, (uint32_t)size), NULL);
  }
  sc_arena_free(a);
  return 0;
}
