/* exported.c — the `jax.export` container (`Exported.serialize()`): a flatbuffer (JAX's
 * jax/_src/export/serialization.fbs, root table `Exported`) around the StableHLO artifact. A small
 * bounds-checked flatbuffer reader of its own takes out what the checks need: the platforms, the
 * device count, the function name, the calling convention version, the in/out shardings (kind and
 * the serialized xla.OpSharding bytes, decoded by the export rules), the number of ordered effects,
 * and the module bytes, which the bytecode front end reads.
 *
 * Flatbuffer wire format: u32 offset to the root table; a table starts with an i32 offset back to its
 * vtable (u16 vtable size, u16 table size, u16 field offsets, 0 = absent); offset fields (strings,
 * vectors, tables) hold a u32 relative to their own position; vectors and strings start with a u32
 * count. Every position is checked against the buffer before it is read. */
#include <string.h>

#include "front/front.h"
#include "ir/ir.h"

/* Field slots of table Exported (declaration order in serialization.fbs). */
enum {
  X_SERIALIZATION_VERSION = 0,
  X_FUNCTION_NAME = 1,
  X_NR_DEVICES_SHORT = 6,
  X_IN_SHARDINGS = 7,
  X_OUT_SHARDINGS = 8,
  X_PLATFORMS = 9,
  X_ORDERED_EFFECTS = 10,
  X_MODULE = 13,
  X_CALLING_CONVENTION_VERSION = 14,
  X_NR_DEVICES = 18,
};

typedef struct {
  const uint8_t *p;
  size_t n;
} fb;

static bool fb_u32(const fb *b, size_t at, uint32_t *v) {
  if (at > b->n || b->n - at < 4) return false;
  *v = (uint32_t)b->p[at] | (uint32_t)b->p[at + 1] << 8 | (uint32_t)b->p[at + 2] << 16 | (uint32_t)b->p[at + 3] << 24;
  return true;
}

static bool fb_u16(const fb *b, size_t at, uint16_t *v) {
  if (at > b->n || b->n - at < 2) return false;
  *v = (uint16_t)(b->p[at] | b->p[at + 1] << 8);
  return true;
}

/* Position of field `slot` of the table at `table`, or 0 if absent or malformed. */
static size_t fb_field(const fb *b, size_t table, unsigned slot) {
  uint32_t soff;
  if (!fb_u32(b, table, &soff)) return 0;
  int64_t vt = (int64_t)table - (int32_t)soff;
  uint16_t vsize, off;
  if (vt < 0 || !fb_u16(b, (size_t)vt, &vsize) || vsize < 4 || 4u + 2u * slot + 2u > vsize) return 0;
  if (!fb_u16(b, (size_t)vt + 4 + 2 * slot, &off) || !off) return 0;
  return table + off < b->n ? table + off : 0;
}

/* Follows the u32 offset stored at `at`; 0 if it leaves the buffer. */
static size_t fb_deref(const fb *b, size_t at) {
  uint32_t rel;
  if (!at || !fb_u32(b, at, &rel) || rel == 0 || rel >= b->n - at) return 0;
  return at + rel;
}

/* A vector at field `slot`: its element count and the position of its first element. */
static bool fb_vector(const fb *b, size_t table, unsigned slot, size_t elem_size, uint32_t *count, size_t *first) {
  size_t v = fb_deref(b, fb_field(b, table, slot));
  if (!v || !fb_u32(b, v, count)) return false;
  *first = v + 4;
  return elem_size == 0 || *count <= (b->n - *first) / elem_size;
}

static ir_span fb_string_at(const fb *b, size_t at) {
  uint32_t n;
  size_t s = fb_deref(b, at);
  if (!s || !fb_u32(b, s, &n) || n > b->n - s - 4) return ir_span_of("", 0);
  return ir_span_of((const char *)b->p + s + 4, n);
}

static bool looks_exported(const fb *b, size_t *root, size_t *module, uint32_t *module_len) {
  uint32_t r;
  if (!fb_u32(b, 0, &r) || r < 4 || r >= b->n || (r & 3)) return false;
  if (!fb_vector(b, r, X_MODULE, 1, module_len, module)) return false;
  *root = r;
  return *module_len >= 4 && !memcmp(b->p + *module, "ML\xefR", 4);
}

bool fe_is_exported(const char *buf, size_t len) {
  fb b = {(const uint8_t *)buf, len};
  size_t root, module;
  uint32_t n;
  return looks_exported(&b, &root, &module, &n);
}

/* Field slots of table Sharding. */
enum { S_KIND = 0, S_HLO_SHARDING_PROTO = 1 };

/* The `n` Sharding tables whose offsets start at `first` (the caller checked they fit the buffer). */
static ir_export_sharding *read_shardings(sc_arena *a, const fb *b, size_t first, uint32_t n) {
  ir_export_sharding *out = ar_calloc(a, n ? n : 1, sizeof *out);
  for (uint32_t i = 0; i < n; i++) {
    size_t t = fb_deref(b, first + 4u * i);
    if (!t) {
      out[i].unreadable = true;
      continue;
    }
    size_t k = fb_field(b, t, S_KIND);
    if (k) out[i].kind = b->p[k];
    uint32_t len;
    size_t bytes;
    if (fb_vector(b, t, S_HLO_SHARDING_PROTO, 1, &len, &bytes)) {
      out[i].proto = b->p + bytes;
      out[i].proto_len = len;
    } else if (fb_field(b, t, S_HLO_SHARDING_PROTO)) {
      out[i].unreadable = true;
    }
  }
  return out;
}

static void read_info(sc_arena *a, const fb *b, size_t root, ir_export_info *x) {
  x->function_name = fb_string_at(b, fb_field(b, root, X_FUNCTION_NAME));
  uint32_t n;
  size_t first;
  if (fb_vector(b, root, X_PLATFORMS, 4, &n, &first)) {
    x->platforms = ar_calloc(a, n ? n : 1, sizeof *x->platforms);
    for (uint32_t i = 0; i < n; i++) x->platforms[i] = fb_string_at(b, first + 4u * i);
    x->nplatforms = n;
  }
  size_t f = fb_field(b, root, X_NR_DEVICES);
  uint32_t nd = 0;
  uint16_t nds = 0;
  if (f && fb_u32(b, f, &nd)) x->nr_devices = nd;
  else if ((f = fb_field(b, root, X_NR_DEVICES_SHORT)) && fb_u16(b, f, &nds)) x->nr_devices = nds;
  uint16_t ccv = 0;
  if ((f = fb_field(b, root, X_CALLING_CONVENTION_VERSION)) && fb_u16(b, f, &ccv)) x->calling_convention_version = ccv;
  if (fb_vector(b, root, X_IN_SHARDINGS, 4, &n, &first)) x->in_shardings = read_shardings(a, b, first, n), x->nin_shardings = n;
  if (fb_vector(b, root, X_OUT_SHARDINGS, 4, &n, &first)) x->out_shardings = read_shardings(a, b, first, n), x->nout_shardings = n;
  if (fb_vector(b, root, X_ORDERED_EFFECTS, 4, &n, &first)) x->nordered_effects = n;
}

ir_module *fe_parse_exported(const fe_parse_input *in, fe_parse_error *err) {
  memset(err, 0, sizeof *err);
  fb b = {(const uint8_t *)in->buf + in->begin, in->end - in->begin};
  size_t root, module;
  uint32_t module_len;
  if (!looks_exported(&b, &root, &module, &module_len)) {
    err->failed = true;
    err->offset = in->begin;
    err->message = "jax.export container: not an Exported flatbuffer with an MLIR bytecode module "
                   "(expected Exported.serialize() output)";
    return NULL;
  }
  ir_module *m = fe_read_bytecode(in->arena, b.p + module, module_len, in->begin + (uint32_t)module, in, err);
  if (!m) return NULL;
  ir_export_info *x = ar_alloc(in->arena, sizeof *x);
  read_info(in->arena, &b, root, x);
  m->exported = x;
  m->format = SC_FMT_EXPORTED;
  return m;
}
