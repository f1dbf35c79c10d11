/* arena.h — region allocator: one per request; everything a request allocates dies with it.
 *
 * Memory is taken from malloc in chunks and returned only by sc_arena_free(). Each arena has a byte
 * limit so a hostile input cannot take unbounded memory. When the limit is hit (or malloc fails),
 * sc_arena_alloc() longjmps to the handler installed with sc_arena_set_failure_jump() if there is
 * one, else returns NULL. The library installs a handler in sc_check(), so code under it never sees
 * NULL. One thread at a time may use an arena. */
#ifndef SC_ARENA_H
#define SC_ARENA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

typedef struct sc_arena sc_arena;

/* limit_bytes 0 = unlimited. Returns NULL if malloc fails. */
sc_arena *sc_arena_new(size_t limit_bytes);
void sc_arena_free(sc_arena *a);
/* Zeroed, aligned for any type. */
void *sc_arena_alloc(sc_arena *a, size_t n);
void *sc_arena_calloc(sc_arena *a, size_t count, size_t size);
/* Grows an arena array (old contents copied; the old block is not reused). */
void *sc_arena_grow(sc_arena *a, void *old, size_t old_count, size_t new_count, size_t size);
char *sc_arena_strndup(sc_arena *a, const char *s, size_t n);
char *sc_arena_strdup(sc_arena *a, const char *s);
char *sc_arena_printf(sc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sc_arena_vprintf(sc_arena *a, const char *fmt, va_list ap);
size_t sc_arena_used(const sc_arena *a);
size_t sc_arena_limit(const sc_arena *a);
/* While set, allocation failure does longjmp(*env, 1). NULL clears it. */
void sc_arena_set_failure_jump(sc_arena *a, jmp_buf *env);

/* A growable array in an arena: SC_VEC(T) v = {0}; SC_PUSH(arena, v, item); */
#define SC_VEC(T) struct { T *v; size_t n, cap; }
#define SC_PUSH(arena, vec, item)                                                                  \
  do {                                                                                             \
    if ((vec).n == (vec).cap) {                                                                    \
      size_t nc_ = (vec).cap ? (vec).cap * 2 : 2; /* most ops have 1-2 operands, results, attrs */ \
      (vec).v = sc_arena_grow((arena), (vec).v, (vec).n, nc_, sizeof *(vec).v);                    \
      (vec).cap = nc_;                                                                             \
    }                                                                                              \
    (vec).v[(vec).n++] = (item);                                                                   \
  } while (0)

#endif
