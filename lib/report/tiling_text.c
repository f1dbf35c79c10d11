/* tiling_text.c — the text report's small tiling picture under an uneven/indivisible dimension or a
 * rank mismatch: one row of devices, one row of the elements each block holds (padding shown).
 *
 *       = tiles: argument #0 dim 0 (size 6) in 4 blocks of 2 over x=4, padded to 8:
 *           device     | 0   | 1   | 2   | 3     |
 *           holds      | 0:2 | 2:4 | 4:6 | pad 2 |
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#define TEXT_BLOCKS_SHOWN 8 /* blocks drawn; then "… N more" */
#define TEXT_CELL_MAX 80    /* bytes of one cell */

/* Module text (names) with control characters as '?', cut at `max` bytes. */
static void put_plain(strbuf *out, const char *s, size_t n, size_t max) {
  for (size_t i = 0; i < n && i < max; i++) {
    unsigned char c = (unsigned char)s[i];
    sb_put(out, c < 0x20 || c == 0x7f ? "?" : (const char *)&c, 1);
  }
  if (n > max) sb_puts(out, "\xe2\x80\xa6");
}

/* The axes sharding `dim` as "x=4" / "x=2*y=2" ("(none)" when unsharded). */
static void put_dim_axes(strbuf *out, const rp_tiling *t, uint32_t dim) {
  if (dim >= t->ndims || !t->nrefs[dim]) {
    sb_puts(out, "(none)");
    return;
  }
  for (uint32_t k = 0; k < t->nrefs[dim]; k++) {
    const rp_axis_ref *r = &t->refs[dim][k];
    if (k) sb_puts(out, "*");
    put_plain(out, t->axis_name[r->axis], (size_t)t->axis_name_len[r->axis], 32);
    sb_printf(out, "=%" PRId64, r->size);
  }
}

/* Two rows of cells under each other, each column as wide as its wider cell. */
static void put_rows(strbuf *out, const char *label0, const char *label1, char top[][TEXT_CELL_MAX],
                     char bottom[][TEXT_CELL_MAX], int n, const char *more) {
  for (int row = 0; row < 2; row++) {
    sb_printf(out, "          %-10s |", row ? label1 : label0);
    for (int i = 0; i < n; i++) {
      int w = (int)(strlen(top[i]) > strlen(bottom[i]) ? strlen(top[i]) : strlen(bottom[i]));
      sb_printf(out, " %-*s |", w, row ? bottom[i] : top[i]);
    }
    sb_printf(out, "%s\n", row ? "" : more);
  }
}

static void put_uneven(strbuf *out, const rp_tiling *t, const char *blue, const char *reset) {
  uint32_t dim = (uint32_t)t->flagged;
  int64_t size = t->shape[dim], shards = rp_tiling_shards(t, dim);
  rp_extent e0 = rp_tiling_extent(t, dim, 0);
  sb_printf(out, "      %s=%s tiles: ", blue, reset);
  put_plain(out, t->what, strlen(t->what), 64);
  sb_printf(out, " dim %u (size %" PRId64 ") in %" PRId64 " blocks of %" PRId64 " over ", dim, size, shards, e0.block);
  put_dim_axes(out, t, dim);
  sb_printf(out, ", padded to %" PRId64 ":\n", e0.block * shards);
  char dev[TEXT_BLOCKS_SHOWN][TEXT_CELL_MAX], held[TEXT_BLOCKS_SHOWN][TEXT_CELL_MAX];
  int n = shards < TEXT_BLOCKS_SHOWN ? (int)shards : TEXT_BLOCKS_SHOWN;
  int64_t per_block = t->devices / shards; /* devices holding each block along this dim */
  for (int b = 0; b < n; b++) {
    int64_t found[2] = {-1, -1};
    int nfound = 0;
    for (int64_t dv = 0; dv < t->devices && nfound < 2 && dv < (int64_t)1 << 20; dv++)
      if (rp_tiling_block(t, dv, dim) == b) found[nfound++] = dv;
    if (!nfound) snprintf(dev[b], TEXT_CELL_MAX, "?");
    else if (nfound == 1) snprintf(dev[b], TEXT_CELL_MAX, "%" PRId64, found[0]);
    else if (per_block > 2) snprintf(dev[b], TEXT_CELL_MAX, "%" PRId64 ",%" PRId64 "+%" PRId64, found[0], found[1], per_block - 2);
    else snprintf(dev[b], TEXT_CELL_MAX, "%" PRId64 ",%" PRId64, found[0], found[1]);
    rp_extent e = rp_tiling_extent(t, dim, b);
    if (!e.valid) snprintf(held[b], TEXT_CELL_MAX, "pad %" PRId64, e.padding);
    else if (e.padding)
      snprintf(held[b], TEXT_CELL_MAX, "%" PRId64 ":%" PRId64 "+%" PRId64 "pad", e.start,
               (e.start + e.valid), e.padding);
    else snprintf(held[b], TEXT_CELL_MAX, "%" PRId64 ":%" PRId64, e.start, (e.start + e.valid));
  }
  char more[64] = "";
  if (shards > n) snprintf(more, sizeof more, "  \xe2\x80\xa6 %" PRId64 " more", shards - n);
  put_rows(out, per_block > 1 ? "devices" : "device", "holds", dev, held, n, more);
}

static void put_rank_mismatch(strbuf *out, const rp_tiling *t, const char *blue, const char *reset) {
  sb_printf(out, "      %s=%s tiles: the sharding has %u dimension%s, ", blue, reset, t->ndims, t->ndims == 1 ? "" : "s");
  put_plain(out, t->what, strlen(t->what), 64);
  sb_printf(out, " has %u:\n", t->rank);
  char dims[TEXT_BLOCKS_SHOWN][TEXT_CELL_MAX], axes[TEXT_BLOCKS_SHOWN][TEXT_CELL_MAX];
  uint32_t n = t->ndims > t->rank ? t->ndims : t->rank;
  if (n > TEXT_BLOCKS_SHOWN) n = TEXT_BLOCKS_SHOWN;
  for (uint32_t d = 0; d < n; d++) {
    if (d < t->rank) snprintf(dims[d], TEXT_CELL_MAX, "%u (%" PRId64 ")", d, t->shape[d]);
    else snprintf(dims[d], TEXT_CELL_MAX, "none");
    strbuf b = {0};
    if (d < t->ndims) put_dim_axes(&b, t, d);
    else sb_puts(&b, "-");
    char *s = sb_take(&b);
    snprintf(axes[d], TEXT_CELL_MAX, "%s", s ? s : "?");
    free(s);
  }
  put_rows(out, "value dim", "sharded by", dims, axes, (int)n, "");
}

void rp_tiling_text(strbuf *out, const sc_diag *d, const char *blue, const char *reset) {
  rp_tiling t;
  if (!rp_tiling_read(d, &t)) return;
  if (t.ndims != t.rank) {
    put_rank_mismatch(out, &t, blue, reset);
    return;
  }
  if (t.flagged < 0) return;
  int64_t size = t.shape[t.flagged], shards = rp_tiling_shards(&t, (uint32_t)t.flagged);
  if (size > 0 && shards > 1 && size % shards) put_uneven(out, &t, blue, reset);
}
