/* arena.h — region allocator: one per request; everything a request allocates dies with it.
 *
 * Memory is taken from malloc in chunks and returned only by sc_arena_free(). Each arena has a byte
 * limit so a hostile input cannot take unbounded memory. When the limit is hit (or malloc fails),
 * ar_alloc() longjmps to the handler installed with ar_set_failure_jump() if there is
 * one, else returns NULL. The library installs a handler in sc_check(), so code under it never sees
 * NULL. One thread at a time may use an arena. */
#ifndef SC_ARENA_H
#define SC_ARENA_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* The four sc_arena_* functions are the public arena API (lib/shardcheck.h declares them too);
 * everything ar_* is internal to the library. */
typedef struct sc_arena sc_arena;

/* limit_bytes 0 = unlimited. Returns NULL if malloc fails. */
sc_arena *sc_arena_new(size_t limit_bytes);
void sc_arena_free(sc_arena *a);
/* Zeroed, aligned to 8 bytes (every object the library allocates needs at most a pointer's or a
 * uint64_t's alignment; 16 cost ~8 bytes per small block, a few per op). Chunks come zeroed from calloc and a bump allocator never hands out
 * a byte twice, so nothing is cleared per allocation; the common case (room left in the current
 * chunk) is inline because the parsers allocate a few small objects per op. */
typedef struct {
  unsigned char *cur, *end; /* the current chunk's free bytes; first member of struct sc_arena */
} ar_bump;
#define SC_ARENA_ALIGN 8u
void *ar_alloc_slow(sc_arena *a, size_t n);
static inline void *ar_alloc(sc_arena *a, size_t n) {
  ar_bump *b = (ar_bump *)(void *)a;
  size_t avail = (size_t)(b->end - b->cur);
  if (n - 1 < avail) { /* n > 0, and n rounded up cannot overflow */
    size_t r = (n + SC_ARENA_ALIGN - 1) & ~(size_t)(SC_ARENA_ALIGN - 1);
    if (r <= avail) {
      void *p = b->cur;
      b->cur += r;
      return p;
    }
  }
  return ar_alloc_slow(a, n);
}
void *ar_calloc(sc_arena *a, size_t count, size_t size);
/* Grows an arena array (old contents copied; the old block is not reused). */
void *ar_grow(sc_arena *a, void *old, size_t old_count, size_t new_count, size_t size);
char *ar_strndup(sc_arena *a, const char *s, size_t n);
char *ar_strdup(sc_arena *a, const char *s);
char *ar_printf(sc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *ar_vprintf(sc_arena *a, const char *fmt, va_list ap);
size_t sc_arena_used(const sc_arena *a);
/* Scratch: ar_rewind(a, m) forgets what was allocated since ar_mark(a) returned `m`, when all
 * of it came from the chunk that was current then (the bytes are zeroed again, so allocations stay
 * zeroed) or from chunks of their own (large blocks: those are returned to the system); otherwise it
 * does nothing. For loops that allocate per item and usually keep nothing, and for large scratch tables. */
typedef struct {
  const void *chunk;
  unsigned char *cur;
  const void *own; /* the newest large block's chunk then */
} ar_mark_t;
ar_mark_t ar_mark(const sc_arena *a);
void ar_rewind(sc_arena *a, ar_mark_t m);
/* Returns block `p` (what ar_alloc/ar_calloc gave) to the system now when it is a large one (it got a
 * chunk of its own); any other block is left to die with the arena. For a phase's large tables that the
 * phases after it do not read: the request's peak is then not their sum. Cost: the arena's chunks. */
void ar_release(sc_arena *a, void *p);
/* Forgets what was allocated between `m` and `keep` and moves what was allocated since `keep` down to
 * `m` (all in one chunk, else nothing happens). Returns how far it moved (0: not moved); the caller
 * rebases the pointers inside the kept block. */
size_t ar_rewind_keep(sc_arena *a, ar_mark_t m, ar_mark_t keep);
size_t ar_limit(const sc_arena *a);
/* While set, allocation failure (and an exceeded step limit) does longjmp(*env, 1), and a cancelled
 * request (see ar_set_cancel) longjmp(*env, 2). NULL clears it. */
void ar_set_failure_jump(sc_arena *a, jmp_buf *env);

/* The request's work meter. Loops whose trip count comes from the input call ar_step() with the
 * work they are about to do (elements visited, comparisons), so that
 *   - *cancel is polled inside long loops, not only between rules: once it is non-zero, the next
 *     poll longjmps(*env, 2) (failure jump installed) or ar_step() returns true;
 *   - a step limit bounds the CPU a request may take, deterministically (0 = unlimited): past it,
 *     ar_step() fails like an exhausted byte limit;
 *   - tests assert that hostile inputs cost work linear in their size (ar_steps()). */
void ar_set_cancel(sc_arena *a, const atomic_int *cancel);
void sc_arena_set_step_limit(sc_arena *a, unsigned long long limit);
unsigned long long ar_step_limit(const sc_arena *a);
/* Changes the byte limit (0 = unlimited); a limit below what is used fails the next allocation. For a
 * phase that may only spend part of what a request has left. */
void ar_set_limit(sc_arena *a, size_t limit_bytes);
/* The failure jump installed (NULL = none), to restore after a phase installs its own. */
jmp_buf *ar_failure_jump(const sc_arena *a);
/* Runs body(arg) with a failure jump installed and `cancel` (NULL = none) polled by ar_step: a limit
 * exhausted or a cancel seen inside it ends body and returns here. Returns 0 when body returned,
 * AR_OVER_LIMIT or AR_CANCELLED otherwise; the jump and the cancel flag are cleared either way. What body
 * allocated stays in the arena. The library's entry points (sc_check, sc_propagate) run under it. */
#define AR_OVER_LIMIT 1
#define AR_CANCELLED 2
int ar_guarded(sc_arena *a, const atomic_int *cancel, void (*body)(void *arg), void *arg);
unsigned long long ar_steps(const sc_arena *a);
/* Counts `n` steps; polls the cancel flag every SC_ARENA_POLL_STEPS. Returns true when the request was
 * cancelled or is over its step limit and no failure jump is installed (the caller should stop). */
bool ar_step(sc_arena *a, unsigned long long n);
#define SC_ARENA_POLL_STEPS 4096u

/* The key of the request's hash tables (util/hash.h): chosen at sc_arena_new from addresses that ASLR
 * moves; sc_check() replaces it with sc_options.hash_seed when the caller gives one (0 keeps it). */
void ar_set_hash_seed(sc_arena *a, uint64_t seed);
uint64_t ar_hash_seed(const sc_arena *a);

/* A string built in one pass: appends are amortized O(length) (the buffer doubles). Use it instead of
 * re-printing a growing string per item, which is quadratic. The one growable string of the code:
 *  - in an arena (SC_ASTR_INIT(a)): the abandoned buffers stay in the arena, at most as many bytes as
 *    the final string; a failed allocation leaves the string as it was;
 *  - malloc-backed with a NULL arena (util/strbuf.h, `strbuf b = {0}`): for results handed to a
 *    caller who frees them (sb_take); a failed allocation marks it failed. */
typedef struct {
  sc_arena *a; /* NULL: malloc/realloc */
  char *p;
  size_t n, cap;
  bool failed; /* an allocation failed (malloc-backed only; the appends after it are dropped) */
} ar_str;
#define SC_ASTR_INIT(arena) {(arena), NULL, 0, 0, false}
void ar_str_put(ar_str *s, const char *p, size_t n);
/* Room for `extra` more bytes (one allocation when the final size is known or estimated). */
void ar_str_reserve(ar_str *s, size_t extra);
void ar_str_puts(ar_str *s, const char *p);
void ar_str_printf(ar_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ar_str_vprintf(ar_str *s, const char *fmt, va_list ap);
/* The NUL-terminated string (never NULL; "" if nothing was appended). Appending may continue. */
const char *ar_str_str(ar_str *s);
/* Lists in diagnostics show at most this many items, then "... and N more". */
#define SC_LIST_SHOWN 32u
/* Input text quoted in a diagnostic (a span {p, n}): at most SC_QUOTE_MAX bytes, then "...".
 * printf("sharding " SC_QUOTE_FMT, SC_QUOTE_ARG(span)) */
#define SC_QUOTE_MAX 256u
#define SC_QUOTE_FMT "%.*s%s"
#define SC_QUOTE_ARG(s) (int)((s).n < SC_QUOTE_MAX ? (s).n : SC_QUOTE_MAX), (s).p, ((s).n > SC_QUOTE_MAX ? "..." : "")

/* A growable array in an arena: SC_VEC(T) v = {0}; SC_PUSH(arena, v, item); */
#define SC_VEC(T) struct { T *v; size_t n, cap; }
#define SC_PUSH(arena, vec, item)                                                                  \
  do {                                                                                             \
    if ((vec).n == (vec).cap) {                                                                    \
      size_t nc_ = (vec).cap ? (vec).cap * 2 : 2; /* most ops have 1-2 operands, results, attrs */ \
      (vec).v = ar_grow((arena), (vec).v, (vec).n, nc_, sizeof *(vec).v);                    \
      (vec).cap = nc_;                                                                             \
    }                                                                                              \
    (vec).v[(vec).n++] = (item);                                                                   \
  } while (0)

#endif
