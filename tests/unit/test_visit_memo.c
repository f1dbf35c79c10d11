/* The propagation engine's sharding set and visit memo (lib/propagate/visit_memo.h). */
#include <criterion/criterion.h>

#include "propagate/visit_memo.h"

/* A rank-2 sharding of `mesh` with `axis` (or none, -1) on dimension 0. */
static prop_sharding *sharding(sc_arena *a, const md_mesh *mesh, int axis, bool closed) {
  prop_sharding *s = prop_sharding_open(a, mesh, (ir_span){"mesh", 4}, 2);
  if (axis >= 0) {
    prop_axis *x = ar_calloc(a, 1, sizeof *x);
    x->axis = (uint32_t)axis;
    x->size = 2;
    s->dims[0].axes = (prop_axes){x, 1};
  }
  s->dims[1].closed = closed;
  return s;
}

Test(visit_memo, equal_shardings_are_kept_once) {
  sc_arena *a = sc_arena_new(0);
  md_mesh mesh = {0}; /* only its address matters here */
  prop_sharding_set set;
  prop_sharding_set_init(&set, a);
  const prop_sharding *first = sharding(a, &mesh, 0, false);
  cr_assert_null(prop_sharding_set_find(&set, first), "an empty set holds nothing");
  cr_assert_eq(prop_sharding_set_add(&set, first), first);
  cr_assert_eq(prop_sharding_set_add(&set, sharding(a, &mesh, 0, false)), first, "an equal one is the first");
  cr_assert_eq(prop_sharding_set_find(&set, sharding(a, &mesh, 0, false)), first);
  cr_assert_null(prop_sharding_set_find(&set, sharding(a, &mesh, 1, false)), "another axis is another sharding");
  cr_assert_null(prop_sharding_set_find(&set, sharding(a, &mesh, 0, true)), "a closed dimension makes it another");
  cr_assert_null(prop_sharding_set_add(&set, NULL));
  /* many distinct shardings: the table grows and keeps every one findable */
  const prop_sharding *kept[300];
  for (int i = 0; i < 300; i++) kept[i] = prop_sharding_set_add(&set, sharding(a, &mesh, i + 2, i % 2));
  for (int i = 0; i < 300; i++) cr_assert_eq(prop_sharding_set_find(&set, sharding(a, &mesh, i + 2, i % 2)), kept[i]);
  sc_arena_free(a);
}

Test(visit_memo, a_visit_is_remembered_by_rule_key_and_inputs) {
  sc_arena *a = sc_arena_new(0);
  md_mesh mesh = {0}; /* only its address matters here */
  prop_visit_memo memo;
  prop_visit_memo_init(&memo, a, 2);
  int rule_a, rule_b;
  const prop_sharding *s = sharding(a, &mesh, 0, false), *t = sharding(a, &mesh, 1, false);
  const prop_sharding *in[3] = {s, NULL, NULL}, *out[3] = {s, s, s};
  cr_assert_null(prop_visit_memo_get(&memo, &rule_a, 7, in, 3));
  prop_visit_memo_put(&memo, &rule_a, 7, in, out, 3);
  const prop_sharding *const *got = prop_visit_memo_get(&memo, &rule_a, 7, in, 3);
  cr_assert_not_null(got);
  cr_assert(got[0] == s && got[1] == s && got[2] == s);
  cr_assert_null(prop_visit_memo_get(&memo, &rule_b, 7, in, 3), "another rule");
  cr_assert_null(prop_visit_memo_get(&memo, &rule_a, 8, in, 3), "another schedule key");
  const prop_sharding *other[3] = {t, NULL, NULL};
  cr_assert_null(prop_visit_memo_get(&memo, &rule_a, 7, other, 3), "other inputs");
  cr_assert_null(prop_visit_memo_get(&memo, &rule_a, 7, in, 2), "fewer tensors");
  /* past its limit (2 entries) the memo only answers */
  prop_visit_memo_put(&memo, &rule_b, 7, in, out, 3);
  prop_visit_memo_put(&memo, &rule_a, 9, in, out, 3);
  cr_assert_not_null(prop_visit_memo_get(&memo, &rule_b, 7, in, 3));
  cr_assert_null(prop_visit_memo_get(&memo, &rule_a, 9, in, 3));
  /* more tensors than it keeps: never remembered */
  const prop_sharding *wide[PROP_MEMO_MAX_TENSORS + 1] = {0};
  prop_visit_memo_init(&memo, a, 10);
  prop_visit_memo_put(&memo, &rule_a, 7, wide, wide, PROP_MEMO_MAX_TENSORS + 1);
  cr_assert_null(prop_visit_memo_get(&memo, &rule_a, 7, wide, PROP_MEMO_MAX_TENSORS + 1));
  sc_arena_free(a);
}
