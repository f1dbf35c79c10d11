/* The jax.export container with stored shardings, built here byte by byte (a flatbuffer as
 * serialization.fbs lays it out) around a real corpus module: read cleanly it gives SC0702/SC0703 against
 * a target mesh; truncated at every length, bit-flipped at every byte, or with random bytes as a stored
 * OpSharding proto, it gives a report (a syntax diagnostic or findings), never a crash or a hang. */
#include <criterion/criterion.h>

#include "helpers.h"

#define MODULE "../shared/corpus/jax/jax_backcompat/annotate_data_placement__0.mlirbc"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 11);
}

/* An append-only little-endian buffer with 4-byte aligned objects. */
typedef struct {
  uint8_t *p;
  size_t n, cap;
} buf;

static size_t align4(buf *b) {
  while (b->n & 3) b->p[b->n++] = 0;
  return b->n;
}
static void put_u16(buf *b, size_t at, uint16_t v) { b->p[at] = (uint8_t)v, b->p[at + 1] = (uint8_t)(v >> 8); }
static void put_u32(buf *b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b->p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}
static size_t grow(buf *b, size_t n) {
  size_t at = align4(b);
  cr_assert_leq(at + n, b->cap);
  memset(b->p + at, 0, n);
  b->n = at + n;
  return at;
}
/* A vtable with `nslots` slots (offsets in `off`, 0 = absent) followed by its table of `tsize` bytes. */
static size_t table(buf *b, uint16_t nslots, const uint16_t *off, uint16_t tsize) {
  size_t vt = grow(b, 4u + 2u * nslots);
  put_u16(b, vt, (uint16_t)(4 + 2 * nslots));
  put_u16(b, vt + 2, tsize);
  for (uint16_t i = 0; i < nslots; i++) put_u16(b, vt + 4 + 2u * i, off[i]);
  size_t t = grow(b, tsize);
  put_u32(b, t, (uint32_t)(t - vt));
  return t;
}
static void ref(buf *b, size_t at, size_t target) { put_u32(b, at, (uint32_t)(target - at)); }
static size_t bytes_vector(buf *b, const void *p, size_t n) {
  size_t v = grow(b, 4 + n);
  put_u32(b, v, (uint32_t)n);
  memcpy(b->p + v + 4, p, n);
  return v;
}

/* xla.OpSharding protos: {devices=[8,1]<=[8]}; a tuple {replicated, devices=[2,2]0,1,2,5}; {maximal device=3}. */
static const uint8_t IOTA8[] = {0x08, 0x03, 0x1A, 0x02, 0x08, 0x01, 0x4A, 0x01, 0x08, 0x52, 0x01, 0x00};
static const uint8_t TUPLE[] = {0x08, 0x02, 0x2A, 0x02, 0x08, 0x00, 0x2A, 0x0C, 0x08, 0x03, 0x1A, 0x02,
                                0x02, 0x02, 0x22, 0x04, 0x00, 0x01, 0x02, 0x05};
static const uint8_t MAXIMAL3[] = {0x08, 0x01, 0x22, 0x01, 0x03};

/* Exported{function_name "f", nr_devices 8, in_shardings [IOTA8, TUPLE], out_shardings [MAXIMAL3], module}. */
static buf container(const char *module, size_t module_len, size_t *proto_at) {
  buf b = {calloc(1, module_len + 1024), 0, module_len + 1024};
  grow(&b, 4);
  uint16_t root_slots[19] = {0};
  root_slots[18] = 4, root_slots[1] = 8, root_slots[7] = 12, root_slots[8] = 16, root_slots[13] = 20;
  size_t root = table(&b, 19, root_slots, 24);
  ref(&b, 0, root);
  put_u32(&b, root + 4, 8);
  size_t name = bytes_vector(&b, "f", 2);
  put_u32(&b, name, 1);
  ref(&b, root + 8, name);
  const uint8_t *protos[] = {IOTA8, TUPLE, MAXIMAL3};
  size_t lens[] = {sizeof IOTA8, sizeof TUPLE, sizeof MAXIMAL3};
  size_t vin = grow(&b, 12), vout = grow(&b, 8);
  put_u32(&b, vin, 2);
  put_u32(&b, vout, 1);
  ref(&b, root + 12, vin);
  ref(&b, root + 16, vout);
  const uint16_t sharding_slots[2] = {4, 8};
  for (int i = 0; i < 3; i++) {
    size_t t = table(&b, 2, sharding_slots, 12);
    b.p[t + 4] = 1; /* ShardingKind hlo_sharding */
    ref(&b, i < 2 ? vin + 4 + 4u * (size_t)i : vout + 4, t);
    size_t v = bytes_vector(&b, protos[i], lens[i]);
    ref(&b, t + 8, v);
    if (i == 0) *proto_at = v + 4;
  }
  ref(&b, root + 20, bytes_vector(&b, module, module_len));
  return b;
}

static sc_report *check(sc_arena *a, const void *p, size_t n, int64_t devices) {
  sc_mesh_axis axis = {"data", devices, 0};
  sc_target_mesh mesh = {&axis, 1, NULL, 0, SC_PLATFORM_UNSPECIFIED, NULL};
  sc_options opt = {0};
  opt.input_format = SC_FMT_EXPORTED;
  opt.mesh = devices ? &mesh : NULL;
  sc_report *r = NULL;
  sc_status st = sc_check(a, p, n, &opt, &r);
  cr_assert_not_null(r);
  cr_assert(st == SC_OK || st == SC_ERR_LIMIT, "status %d", st);
  return r;
}

static const sc_diag *find(const sc_report *r, const char *code) {
  for (size_t i = 0; i < r->ndiags; i++)
    if (!strcmp(r->diags[i].code, code)) return &r->diags[i];
  return NULL;
}

static buf load(size_t *proto_at) {
  size_t len = 0;
  char *module = test_read_file(MODULE, &len);
  cr_assert_not_null(module, "%s", MODULE);
  buf b = container(module, len, proto_at);
  free(module);
  return b;
}

Test(exported_mutation, stored_shardings_are_checked) {
  size_t proto_at;
  buf b = load(&proto_at);
  sc_arena *a = sc_arena_new(0);
  sc_report *r = check(a, b.p, b.n, 4);
  cr_assert_eq(r->format, SC_FMT_EXPORTED);
  const sc_diag *d = find(r, "SC0702");
  cr_assert_not_null(d);
  cr_assert(strstr(d->message, "Function f was exported for 8 devices and is called in a context with 4 devices"), "%s",
            d->message);
  cr_assert_null(find(r, "SC0703"), "the stored shardings follow from SC0702 and are folded into it");
  r = check(a, b.p, b.n, 8);
  cr_assert_null(find(r, "SC0702"));
  d = find(r, "SC0703");
  cr_assert_not_null(d);
  cr_assert(strstr(d->message, "in_shardings[1]") && strstr(d->message, "tile_assignment should have 8 devices but has 4") &&
                strstr(d->message, "tuple element 1"),
            "%s", d->message);
  sc_arena_free(a);
  free(b.p);
}

Test(exported_mutation, every_truncation_and_flip) {
  size_t proto_at;
  buf b = load(&proto_at);
  for (size_t n = 0; n < b.n; n++) {
    uint8_t *cut = malloc(n ? n : 1); /* exact size: reads past the end are caught by ASan/valgrind */
    memcpy(cut, b.p, n);
    sc_arena *a = sc_arena_new(64u << 20);
    cr_assert_not_null(find(check(a, cut, n, 4), "SC0001"), "truncated to %zu bytes read without a diagnostic", n);
    sc_arena_free(a);
    free(cut);
  }
  uint8_t *flipped = malloc(b.n);
  for (size_t at = 0; at < b.n; at++) {
    memcpy(flipped, b.p, b.n);
    flipped[at] ^= (uint8_t)(1u << (next_rand() % 8));
    sc_arena *a = sc_arena_new(64u << 20);
    check(a, flipped, b.n, at & 1 ? 4 : 8);
    sc_arena_free(a);
  }
  free(flipped);
  free(b.p);
}

Test(exported_mutation, random_proto_bytes) {
  size_t proto_at;
  buf b = load(&proto_at);
  int unreadable = 0;
  for (int k = 0; k < 2000; k++) {
    for (size_t i = 0; i < sizeof IOTA8; i++) b.p[proto_at + i] = (uint8_t)next_rand();
    sc_arena *a = sc_arena_new(16u << 20);
    sc_report *r = check(a, b.p, b.n, k & 1 ? 4 : 0);
    const sc_diag *d = find(r, "SC0703");
    unreadable += d && strstr(d->message, "not a readable xla.OpSharding") != NULL;
    sc_arena_free(a);
  }
  cr_assert_gt(unreadable, 100, "random bytes as a stored sharding are reported as unreadable (%d of 2000)", unreadable);
  free(b.p);
}
