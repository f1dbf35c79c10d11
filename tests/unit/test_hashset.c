/* The arena hash tables behind the linear uniqueness checks. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "util/hashset.h"

Test(hashset, names_keep_their_first_value) {
  sc_arena *a = sc_arena_new(0);
  sc_name_map m;
  sc_name_map_init(&m, a, 3);
  uint32_t v = 0;
  cr_assert(sc_name_map_put(&m, "x", 1, 7, NULL));
  cr_assert(sc_name_map_put(&m, "", 0, 8, NULL), "the empty name is a key too");
  cr_assert_not(sc_name_map_put(&m, "x", 1, 9, &v));
  cr_assert_eq(v, 7);
  cr_assert(sc_name_map_get(&m, "", 0, &v));
  cr_assert_eq(v, 8);
  cr_assert_not(sc_name_map_get(&m, "xy", 2, &v));
  cr_assert(sc_name_map_put(&m, "xy", 2, 10, NULL));
  cr_assert_not(sc_name_map_put(&m, "z", 1, 11, NULL), "full: more than `expected` keys are refused");
  sc_arena_free(a);
}

Test(hashset, many_names_and_ids) {
  sc_arena *a = sc_arena_new(0);
  enum { N = 100000 };
  char (*names)[12] = sc_arena_calloc(a, N, sizeof *names);
  sc_name_map m;
  sc_name_map_init(&m, a, N);
  sc_i64_set s;
  sc_i64_set_init(&s, a, N);
  for (uint32_t i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "a%u", i);
    cr_assert(sc_name_map_put(&m, names[i], (uint32_t)strlen(names[i]), i, NULL));
    cr_assert(sc_i64_set_add(&s, (int64_t)i * 4096 - 7));
  }
  for (uint32_t i = 0; i < N; i += 997) {
    uint32_t v;
    cr_assert(sc_name_map_get(&m, names[i], (uint32_t)strlen(names[i]), &v));
    cr_assert_eq(v, i);
    cr_assert_not(sc_i64_set_add(&s, (int64_t)i * 4096 - 7));
  }
  sc_arena_free(a);
}
