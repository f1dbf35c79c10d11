/* Arena: zeroed aligned memory, growth, and the byte limit (NULL, or a longjmp when installed). */
#include <criterion/criterion.h>
#include <stdint.h>

#include "util/arena.h"

Test(arena, allocations_are_zeroed_and_aligned) {
  sc_arena *a = sc_arena_new(0);
  for (int i = 1; i < 2000; i += 37) {
    unsigned char *p = ar_alloc(a, (size_t)i);
    cr_assert_eq((uintptr_t)p % SC_ARENA_ALIGN, 0);
    for (int k = 0; k < i; k++) cr_assert_eq(p[k], 0);
    memset(p, 0xAB, (size_t)i);
  }
  char *big = ar_alloc(a, 1 << 20);
  cr_assert_not_null(big);
  cr_assert_str_eq(ar_printf(a, "%s-%d", "x", 42), "x-42");
  sc_arena_free(a);
}

Test(arena, limit_returns_null_without_handler) {
  sc_arena *a = sc_arena_new(100000);
  size_t got = 0;
  while (ar_alloc(a, 1000)) got += 1000;
  cr_assert_leq(sc_arena_used(a), 100000);
  cr_assert_gt(got, 0);
  sc_arena_free(a);
}

/* Head chunks grow from 4 KB; past 8 MB they are mapped huge chunks. Every size class must hand out
 * zeroed, disjoint memory, stay under the limit, and be freed (ASan/valgrind see the munmap path). */
Test(arena, chunk_sizes_from_small_to_mapped) {
  sc_arena *a = sc_arena_new(48u << 20);
  size_t got = 0;
  unsigned char *prev = NULL;
  for (unsigned char *p; (p = ar_alloc(a, 12000)); got += 12000) {
    for (int k = 0; k < 12000; k += 997) cr_assert_eq(p[k], 0, "byte %d of block at %zu", k, got);
    cr_assert_eq(p[11999], 0);
    memset(p, 0x5A, 12000);
    if (prev) cr_assert(p >= prev + 12000 || p + 12000 <= prev, "blocks overlap");
    prev = p;
  }
  cr_assert_gt(got, 40u << 20, "only %zu bytes before the limit", got);
  cr_assert_leq(sc_arena_used(a), 48u << 20);
  sc_arena_free(a);
}

Test(arena, limit_longjmps_with_handler) {
  sc_arena *a = sc_arena_new(200000);
  jmp_buf env;
  volatile int jumped = 0;
  ar_set_failure_jump(a, &env);
  if (setjmp(env)) {
    jumped = 1;
  } else {
    for (;;) ar_alloc(a, 4096);
  }
  cr_assert(jumped);
  sc_arena_free(a);
}

Test(arena, vector_push_grows) {
  sc_arena *a = sc_arena_new(0);
  SC_VEC(int) v = {0};
  for (int i = 0; i < 1000; i++) SC_PUSH(a, v, i);
  cr_assert_eq(v.n, 1000);
  for (int i = 0; i < 1000; i++) cr_assert_eq(v.v[i], i);
  sc_arena_free(a);
}

Test(arena, step_meter_polls_cancel_and_enforces_its_limit) {
  sc_arena *a = sc_arena_new(0);
  atomic_int cancel = 0;
  ar_set_cancel(a, &cancel);
  for (int i = 0; i < 10000; i++) cr_assert_not(ar_step(a, 1));
  cr_assert_eq(ar_steps(a), 10000);
  cancel = 1;
  bool stopped = false;
  for (int i = 0; i < 2 * (int)SC_ARENA_POLL_STEPS && !stopped; i++) stopped = ar_step(a, 1);
  cr_assert(stopped, "a raised flag is seen within one poll interval");
  jmp_buf env;
  volatile int jumped = 0;
  ar_set_failure_jump(a, &env);
  if (setjmp(env) == 2) jumped = 1;
  else
    for (;;) ar_step(a, 1);
  cr_assert(jumped, "with a failure jump, cancellation longjmps with 2");
  ar_set_failure_jump(a, NULL);
  ar_set_cancel(a, NULL);
  sc_arena_set_step_limit(a, ar_steps(a) + 100);
  cr_assert_not(ar_step(a, 100));
  cr_assert(ar_step(a, 1), "past the step limit");
  sc_arena_free(a);
}

Test(arena, one_pass_strings) {
  sc_arena *a = sc_arena_new(0);
  ar_str s = SC_ASTR_INIT(a);
  cr_assert_str_eq(ar_str_str(&s), "");
  for (int i = 0; i < 10000; i++) ar_str_printf(&s, "%s%d", i ? "," : "", i % 10);
  cr_assert_eq(strlen(ar_str_str(&s)), 19999);
  cr_assert_leq(sc_arena_used(a), 4 * 20000 + 65536, "growth by doubling keeps the arena linear");
  ar_str_puts(&s, "!");
  cr_assert_eq(ar_str_str(&s)[19999], '!');
  sc_arena_free(a);
}

/* Rewinding forgets what came since the mark: small blocks go back to the head chunk (zeroed again), and
 * large blocks (chunks of their own) go back to the system, so a large scratch table costs nothing after. */
Test(arena, rewind_forgets_small_and_large_blocks) {
  sc_arena *a = sc_arena_new(0);
  unsigned char *kept = ar_alloc(a, 100);
  unsigned char *kept_big = ar_alloc(a, 1 << 20); /* before the mark: stays */
  memset(kept_big, 7, 1 << 20);
  size_t used = sc_arena_used(a);
  ar_mark_t m = ar_mark(a);
  unsigned char *small = ar_alloc(a, 64);
  memset(small, 0xAB, 64);
  for (int i = 0; i < 3; i++) cr_assert_not_null(ar_alloc(a, (size_t)(4 << 20) + (size_t)i));
  cr_assert_gt(sc_arena_used(a), used + (12u << 20));
  ar_rewind(a, m);
  cr_assert_eq(sc_arena_used(a), used);
  unsigned char *again = ar_alloc(a, 64);
  cr_assert_eq(again, small);
  for (int k = 0; k < 64; k++) cr_assert_eq(again[k], 0);
  cr_assert_eq(kept_big[(1 << 20) - 1], 7);
  cr_assert_eq(kept[0], 0);
  sc_arena_free(a);
}

/* A large block can go back to the system before the arena ends; a small one stays (it dies with the
 * arena), and the blocks around it are untouched. */
Test(arena, release_returns_large_blocks_only) {
  sc_arena *a = sc_arena_new(0);
  unsigned char *small = ar_alloc(a, 64);
  unsigned char *big1 = ar_alloc(a, 1 << 20), *big2 = ar_alloc(a, 2 << 20), *big3 = ar_alloc(a, 1 << 20);
  memset(big1, 1, 1 << 20), memset(big3, 3, 1 << 20);
  size_t used = sc_arena_used(a);
  ar_release(a, big2);
  cr_assert_eq(sc_arena_used(a), used - (2u << 20));
  ar_release(a, small); /* not a large block: kept */
  ar_release(a, big2);  /* already gone: nothing */
  cr_assert_eq(sc_arena_used(a), used - (2u << 20));
  cr_assert_eq(big1[(1 << 20) - 1], 1);
  cr_assert_eq(big3[0], 3);
  small[0] = 9;
  cr_assert_eq(small[0], 9);
  sc_arena_free(a);
}
