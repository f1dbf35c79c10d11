/* arena.c — chunked bump allocator with a byte limit. */
#include "util/arena.h"
#include "util/hash.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA_ALIGN SC_ARENA_ALIGN
#define ARENA_CHUNK (64u * 1024u)
#define ARENA_FIRST_CHUNK (4u * 1024u)
/* Past this many bytes an arena takes chunks of this size: large enough that malloc maps fresh zero
 * pages for them (calloc then clears nothing), and few enough chunks for a big module. */
#define ARENA_BIG_AFTER (1024u * 1024u)
#define ARENA_BIG_CHUNK (1024u * 1024u)
/* Past 8 MB a chunk is a quarter of what the arena holds (at most 64 MB), mapped directly and populated
 * ahead of the bump pointer: on a 100 MB module the page faults of 1 MB chunks were a third of the run. */
#define ARENA_HUGE_AFTER (8u * 1024u * 1024u)
#define ARENA_HUGE_MAX ((size_t)64u * 1024u * 1024u)
#define HUGE_PAGE ((size_t)2u * 1024u * 1024u)

typedef struct chunk {
  struct chunk *next;
  size_t size;
  bool mapped;    /* from mmap (free with munmap), else from calloc */
  bool own;       /* holds one large block (behind the head: ar_rewind may return it) */
  size_t map_len; /* mapped: the mapping's length (2 MB-aligned start and length) */
  _Alignas(16) unsigned char data[];
} chunk;

struct sc_arena {
  ar_bump bump; /* first: the inline ar_alloc reads it through a cast */
  chunk *head;
  unsigned char *head_end; /* the head chunk's end; bump.end stops short of it while the pages between
                              are not populated yet (see populate_more) */
  size_t used, limit;
  jmp_buf *on_failure;
  const atomic_int *cancel;
  unsigned long long steps, step_limit, next_poll;
  uint64_t hash_seed;
};

/* Without a seed from the caller: addresses that ASLR moves (heap, stack, code), mixed. */
static uint64_t address_seed(const sc_arena *a) {
  int on_stack;
  uint64_t heap = (uint64_t)(uintptr_t)a, stack = (uint64_t)(uintptr_t)&on_stack;
  uint64_t code = (uint64_t)(uintptr_t)&address_seed;
  return hash_u64(heap ^ hash_u64(stack, code), code);
}

sc_arena *sc_arena_new(size_t limit_bytes) {
  sc_arena *a = calloc(1, sizeof *a);
  if (a) {
    a->limit = limit_bytes;
    a->hash_seed = address_seed(a);
  }
  return a;
}

void ar_set_hash_seed(sc_arena *a, uint64_t seed) {
  if (seed) a->hash_seed = seed;
}
uint64_t ar_hash_seed(const sc_arena *a) { return a->hash_seed; }

static void free_chunk(chunk *c) {
  if (c->mapped) munmap(c, c->map_len);
  else free(c);
}

void sc_arena_free(sc_arena *a) {
  if (!a) return;
  for (chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free_chunk(c);
  }
  free(a);
}

void ar_set_failure_jump(sc_arena *a, jmp_buf *env) { a->on_failure = env; }
jmp_buf *ar_failure_jump(const sc_arena *a) { return a->on_failure; }

int ar_guarded(sc_arena *a, const atomic_int *cancel, void (*body)(void *arg), void *arg) {
  jmp_buf env;
  ar_set_failure_jump(a, &env);
  ar_set_cancel(a, cancel);
  int why = setjmp(env); /* nothing here changes between setjmp and a longjmp back */
  if (!why) body(arg);
  ar_set_failure_jump(a, NULL);
  ar_set_cancel(a, NULL);
  return why == 2 ? AR_CANCELLED : why ? AR_OVER_LIMIT : 0;
}
size_t sc_arena_used(const sc_arena *a) { return a->used - (size_t)(a->head_end - a->bump.cur); }
size_t ar_limit(const sc_arena *a) { return a->limit; }

static void *fail(sc_arena *a) {
  if (a->on_failure) longjmp(*a->on_failure, 1);
  return NULL;
}

void ar_set_cancel(sc_arena *a, const atomic_int *cancel) {
  a->cancel = cancel;
  a->next_poll = a->steps;
}
void sc_arena_set_step_limit(sc_arena *a, unsigned long long limit) { a->step_limit = limit; }
unsigned long long ar_step_limit(const sc_arena *a) { return a->step_limit; }
void ar_set_limit(sc_arena *a, size_t limit_bytes) { a->limit = limit_bytes; }
unsigned long long ar_steps(const sc_arena *a) { return a->steps; }

bool ar_step(sc_arena *a, unsigned long long n) {
  a->steps = a->steps > ULLONG_MAX - n ? ULLONG_MAX : a->steps + n;
  if (a->step_limit && a->steps > a->step_limit) {
    fail(a);
    return true;
  }
  if (a->steps < a->next_poll) return false;
  a->next_poll = a->steps + SC_ARENA_POLL_STEPS;
  if (!a->cancel || !*a->cancel) return false;
  if (a->on_failure) longjmp(*a->on_failure, 2);
  return true;
}

#define POPULATE_STEP ((size_t)2u * 1024u * 1024u)

static uintptr_t page_size(void) {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? (uintptr_t)page : 4096;
}

/* A zeroed chunk of `size` data bytes: fresh mapped pages for big chunks, calloc for the rest. */
static chunk *new_chunk(size_t size) {
  if (size >= HUGE_PAGE) {
    /* The start is 2 MB-aligned (map 2 MB more, trim), so where the system backs anonymous memory with
     * transparent huge pages every whole 2 MB of the chunk can be one. The chunk does not ask for them
     * (MADV_HUGEPAGE): after another process fragments memory, such faults wait for the kernel to
     * compact it, which cost a 100 MB module 40% of its run; head chunks are populated ahead instead
     * (populate_more). The length is the base page's multiple, not 2 MB's: a chunk holding one large
     * array (a per-op table) is resident for what it holds. */
    size_t page = page_size();
    size_t len = (sizeof(chunk) + size + page - 1) & ~(page - 1);
    unsigned char *raw = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    size_t lead = (HUGE_PAGE - (uintptr_t)raw % HUGE_PAGE) % HUGE_PAGE;
    if (lead) munmap(raw, lead);
    if (HUGE_PAGE - lead) munmap(raw + lead + len, HUGE_PAGE - lead);
    chunk *c = (chunk *)(void *)(raw + lead);
    c->mapped = true;
    c->map_len = len;
    return c;
  }
  return calloc(1, sizeof(chunk) + size);
}

/* The current chunk is full (or `n` is odd-sized): a new chunk. calloc'd memory is zero, and it is
 * often free to get (fresh pages), unlike clearing every allocation. */
ar_mark_t ar_mark(const sc_arena *a) {
  ar_mark_t m = {a->head, a->bump.cur, a->head ? a->head->next : NULL};
  return m;
}

/* Unlinks the chunk *link points at and returns its memory to the system. */
static void drop_chunk(sc_arena *a, chunk **link) {
  chunk *c = *link;
  *link = c->next;
  a->used -= c->size;
  free_chunk(c);
}

/* The large blocks made since the mark sit first behind the head (newest first), down to m.own. */
static void release_own_chunks(sc_arena *a, ar_mark_t m) {
  chunk *h = a->head;
  if (!h || m.chunk != h || h->next == m.own) return;
  size_t n = 0;
  const chunk *c = h->next;
  while (c && c != m.own && c->own) c = c->next, n++;
  if (c != m.own) return; /* not the shape a mark leaves: keep everything */
  while (n--) drop_chunk(a, &h->next);
}

void ar_release(sc_arena *a, void *p) {
  if (!p || !a->head) return;
  for (chunk **link = &a->head->next; *link; link = &(*link)->next)
    if ((*link)->own && (void *)(*link)->data == p) {
      drop_chunk(a, link);
      return;
    }
}

void ar_rewind(sc_arena *a, ar_mark_t m) {
  release_own_chunks(a, m);
  if (m.chunk != a->head || !m.cur || a->bump.cur <= m.cur) return; /* nothing since the mark: the usual case */
  memset(m.cur, 0, (size_t)(a->bump.cur - m.cur));
  a->bump.cur = m.cur;
}

size_t ar_rewind_keep(sc_arena *a, ar_mark_t m, ar_mark_t keep) {
  if (m.chunk != a->head || keep.chunk != a->head || !m.cur || keep.cur < m.cur || a->bump.cur < keep.cur) return 0;
  size_t n = (size_t)(a->bump.cur - keep.cur), delta = (size_t)(keep.cur - m.cur);
  if (!delta) return 0;
  memmove(m.cur, keep.cur, n);
  memset(m.cur + n, 0, delta);
  a->bump.cur = m.cur + n;
  return delta;
}

/* Makes the head chunk's pages up to at least bump.cur + n (it has them) present, POPULATE_STEP at a
 * time: the kernel fills a range in one call several times faster than it takes the same pages one
 * fault at a time, and a chunk is populated only as far as the arena has reached. */
static void populate_more(sc_arena *a, size_t n) {
  uintptr_t page = page_size();
  unsigned char *to = a->bump.end + POPULATE_STEP;
  if (to < a->bump.cur + n) to = a->bump.cur + n;
  to = (unsigned char *)(((uintptr_t)to + page - 1) & ~(page - 1));
  if (to > a->head_end) to = a->head_end;
#ifdef MADV_POPULATE_WRITE
  uintptr_t from = (uintptr_t)a->bump.end & ~(page - 1);
  madvise((void *)from, (size_t)((uintptr_t)to - from), MADV_POPULATE_WRITE); /* advice: the pages fault in anyway */
#endif
  a->bump.end = to;
}

void *ar_alloc_slow(sc_arena *a, size_t n) {
  if (n == 0) n = 1;
  if (n > SIZE_MAX / 2) return fail(a);
  n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if ((size_t)(a->head_end - a->bump.cur) >= n) { /* room in the head chunk beyond its populated pages */
    if ((size_t)(a->bump.end - a->bump.cur) < n) populate_more(a, n);
    void *p = a->bump.cur;
    a->bump.cur += n;
    return p;
  }
  bool own_chunk = n > ARENA_CHUNK / 4;
  /* Head chunks double from 4 KB to 64 KB: calloc clears a recycled chunk whole, and a small check
   * (the daemon's common case) should clear what it uses, not 64 KB. */
  size_t size = ARENA_FIRST_CHUNK;
  while (size < ARENA_CHUNK && size <= a->used) size *= 2;
  if (own_chunk) size = n;
  else if (size < n) size = ARENA_CHUNK;
  if (a->limit && a->used + size > a->limit) return fail(a);
  if (!own_chunk && a->used >= ARENA_BIG_AFTER) { /* a big arena: bigger head chunks */
    size = ARENA_BIG_CHUNK;
    if (a->used >= ARENA_HUGE_AFTER) {
      size = a->used / 4 < ARENA_HUGE_MAX ? a->used / 4 : ARENA_HUGE_MAX;
      size = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    }
    if (a->limit && a->used + size > a->limit) size = a->limit - a->used; /* never past the limit */
  }
  chunk *c = new_chunk(size);
  if (!c) return fail(a);
  c->size = size;
  a->used += size;
  /* A large block gets a chunk of its own behind the head so the head's free space stays usable. */
  if (own_chunk && a->head) {
    c->own = true;
    c->next = a->head->next;
    a->head->next = c;
    return c->data;
  }
  c->next = a->head;
  a->head = c;
  a->bump.cur = c->data + n;
  a->bump.end = a->head_end = c->data + size;
  if (c->mapped) {
    a->bump.end = c->data;
    populate_more(a, n);
  }
  return c->data;
}

void *ar_calloc(sc_arena *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return fail(a);
  return ar_alloc(a, count * size);
}

void *ar_grow(sc_arena *a, void *old, size_t old_count, size_t new_count, size_t size) {
  void *p = ar_calloc(a, new_count, size);
  if (p && old && old_count) memcpy(p, old, old_count * size);
  return p;
}

char *ar_strndup(sc_arena *a, const char *s, size_t n) {
  char *p = ar_alloc(a, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

char *ar_strdup(sc_arena *a, const char *s) { return ar_strndup(a, s, strlen(s)); }

char *ar_vprintf(sc_arena *a, const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return ar_strdup(a, "");
  char *p = ar_alloc(a, (size_t)n + 1);
  if (p) vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

char *ar_printf(sc_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = ar_vprintf(a, fmt, ap);
  va_end(ap);
  return p;
}

void ar_str_reserve(ar_str *s, size_t extra) {
  if (s->failed || s->n + extra + 1 <= s->cap) return;
  size_t cap = s->cap ? s->cap : 64;
  while (cap < s->n + extra + 1) cap *= 2;
  char *p;
  if (!s->a) {
    p = realloc(s->p, cap);
    if (!p) {
      s->failed = true;
      return;
    }
  } else {
    p = ar_alloc(s->a, cap);
    if (!p) return; /* no failure jump: the string stays as it was */
    if (s->n) memcpy(p, s->p, s->n);
  }
  s->p = p, s->cap = cap;
}

void ar_str_put(ar_str *s, const char *p, size_t n) {
  ar_str_reserve(s, n);
  if (s->n + n + 1 > s->cap) return;
  if (n) memcpy(s->p + s->n, p, n); /* an empty span may have a NULL pointer */
  s->n += n;
  s->p[s->n] = '\0';
}

void ar_str_puts(ar_str *s, const char *p) { ar_str_put(s, p, strlen(p)); }

void ar_str_printf(ar_str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ar_str_vprintf(s, fmt, ap);
  va_end(ap);
}

void ar_str_vprintf(ar_str *s, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n > 0) {
    ar_str_reserve(s, (size_t)n);
    if (s->n + (size_t)n + 1 <= s->cap) {
      vsnprintf(s->p + s->n, (size_t)n + 1, fmt, ap2);
      s->n += (size_t)n;
    }
  }
  va_end(ap2);
}

const char *ar_str_str(ar_str *s) { return s->p ? s->p : ""; }
