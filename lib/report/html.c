/* html.c — one self-contained HTML page for any number of reports: inline CSS and SVG, no script, no
 * network. The summary, the mesh as a grid of devices, and each diagnostic with its Python and module
 * locations, a module source excerpt, its notes and fixes, and — for a sharded tensor (a tiling in its
 * context, see tiling.c) — the tensor's blocks and the devices holding them, padding hatched and
 * replicas shaded, like jax.debug.visualize_array_sharding.
 *
 * Everything from the module (names, messages, source, context) is HTML-escaped. Output is linear in
 * the reports: pictures, drawn devices, blocks, related sites and listed diagnostics are capped with
 * "and N more". Deterministic (no time, no paths beyond the report): the daemon, the CLI in both modes
 * and the Python package render the same bytes from the same report. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

#define HTML_DIAGS_MAX 1000    /* diagnostics listed per page */
#define HTML_PICTURES_MAX 50   /* tensors drawn per page */
#define HTML_DEVICES_MAX 256   /* devices drawn per grid */
#define HTML_BLOCKS_MAX 16     /* blocks drawn along one tensor dimension */
#define HTML_RELATED_MAX 10
#define HTML_LIST_MAX 32       /* values of one context entry */
#define HTML_LINE_MAX 240      /* bytes of a source line shown */
#define HTML_SCAN_DEVICES (1 << 16) /* devices scanned to find who holds a block */

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                                      "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"};
#define NCOLORS (sizeof palette / sizeof palette[0])

typedef struct {
  strbuf *b;
  size_t pictures; /* drawn so far on this page */
  size_t pictures_skipped;
} page;

/* Text from the input: & < > " ' escaped; control characters other than \n and \t as U+FFFD. */
static void esc_n(strbuf *b, const char *s, size_t n) {
  size_t from = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *rep = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : c == '\'' ? "&#39;"
                      : (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? "\xef\xbf\xbd" : NULL;
    if (!rep) continue;
    sb_put(b, s + from, i - from);
    sb_puts(b, rep);
    from = i + 1;
  }
  sb_put(b, s + from, n - from);
}

static void esc(strbuf *b, const char *s) { esc_n(b, s ? s : "", s ? strlen(s) : 0); }

/* `open`, the escaped `s`, `close`. */
static void esc_in(strbuf *b, const char *open, const char *s, const char *close) {
  sb_puts(b, open);
  esc(b, s);
  sb_puts(b, close);
}

static const char *const css =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328;background:#f6f8fa;margin:0}"
    "main{max-width:1040px;margin:0 auto;padding:20px 24px}"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 8px}h3{font-size:14px;margin:12px 0 6px}"
    ".meta{color:#59636e;font-size:13px}"
    ".pill{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;font-weight:600;margin-right:6px}"
    ".error{background:#ffebe9;color:#a40e26}.warning{background:#fff8c5;color:#7d4e00}.note{background:#ddf4ff;color:#0a3069}"
    ".card{background:#fff;border:1px solid #d1d9e0;border-radius:8px;padding:12px 16px;margin:12px 0}"
    ".card.sev-error{border-left:4px solid #cf222e}.card.sev-warning{border-left:4px solid #bf8700}"
    ".card.sev-note{border-left:4px solid #0969da}"
    ".msg{font-weight:600;margin:6px 0;overflow-wrap:anywhere}.loc{font:12px ui-monospace,Menlo,Consolas,monospace;color:#59636e}"
    "pre{background:#f6f8fa;border:1px solid #e3e8ee;border-radius:6px;padding:8px 10px;overflow-x:auto;"
    "font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;margin:6px 0}"
    ".src .hl{background:#fff1c2;display:inline-block;min-width:100%}.src .ln{color:#8c959f;user-select:none}"
    "dl.ctx{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:12px;margin:6px 0}"
    "dl.ctx dt{color:#59636e}dl.ctx dd{margin:0;font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}"
    ".fix{margin:8px 0}.fix .title{font-weight:600}.more{color:#59636e;font-style:italic}"
    ".pics{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start;margin:8px 0}"
    "figure{margin:0}figcaption{font-size:12px;color:#59636e;margin-top:4px;max-width:520px}"
    "svg text{font-family:system-ui,sans-serif}";

/* SVG defs: the padding hatch and the replica shade. */
static const char *const svg_defs =
    "<defs><pattern id='pad' width='6' height='6' patternUnits='userSpaceOnUse' patternTransform='rotate(45)'>"
    "<rect width='6' height='6' fill='#eef1f4'/><line x1='0' y1='0' x2='0' y2='6' stroke='#9aa4ae' stroke-width='2'/>"
    "</pattern><pattern id='rep' width='5' height='5' patternUnits='userSpaceOnUse' patternTransform='rotate(-45)'>"
    "<line x1='0' y1='0' x2='0' y2='5' stroke='#ffffff' stroke-width='1.6' stroke-opacity='0.55'/></pattern></defs>";

/* ---- device grids ---------------------------------------------------------------------------------- */

/* A device grid's layout: rows along the first axis, columns along the others (first major). */
typedef struct {
  const char *const *names; /* not NUL-terminated at name_len */
  const int *name_len;
  const int64_t *sizes;
  uint32_t naxes;
  int64_t devices, rows, cols;
} grid;

static void put_axis_name(strbuf *b, const grid *g, uint32_t i) { esc_n(b, g->names[i], (size_t)g->name_len[i]); }

/* The grid's caption: "rows: x (4) · columns: y (2) × z (2)". */
static void put_grid_axes(strbuf *b, const grid *g) {
  for (uint32_t i = 0; i < g->naxes; i++) {
    if (i == 0 && g->naxes > 1) sb_puts(b, "rows: ");
    if (i == (g->naxes > 1 ? 1u : 0u)) sb_puts(b, i ? " &middot; columns: " : "columns: ");
    else if (i > 1) sb_puts(b, " &times; ");
    sb_puts(b, "<b>");
    put_axis_name(b, g, i);
    sb_printf(b, "</b> (%" PRId64 ")", g->sizes[i]);
  }
}

/* Colour (palette index) and replica flag of a device in a tensor picture; -1 = plain grid. */
typedef struct {
  const rp_tiling *t;
  int rdim, cdim; /* tensor dims drawn as rows/columns (-1: none) */
  int64_t ccount;  /* blocks along cdim */
} tile_view;

static int64_t view_block(const tile_view *v, int64_t device) {
  int64_t rb = v->rdim >= 0 ? rp_tiling_block(v->t, device, (uint32_t)v->rdim) : 0;
  int64_t cb = v->cdim >= 0 ? rp_tiling_block(v->t, device, (uint32_t)v->cdim) : 0;
  return rb * v->ccount + cb;
}

/* True if the device's block (in the drawn dims) lies wholly in the padding of an uneven dimension. */
static bool view_pad_only(const tile_view *v, int64_t device) {
  for (int k = 0; k < 2; k++) {
    int dim = k ? v->cdim : v->rdim;
    if (dim >= 0 && !rp_tiling_extent(v->t, (uint32_t)dim, rp_tiling_block(v->t, device, (uint32_t)dim)).valid &&
        v->t->shape[dim] >= 0)
      return true;
  }
  return false;
}

static void put_device_grid(strbuf *b, const grid *g, const tile_view *v) {
  const int cw = 46, ch = 34, left = 30, top = 22;
  int64_t cols = g->cols, rows = g->rows;
  int64_t shown_rows = rows, shown_cols = cols;
  if (shown_cols > 32) shown_cols = 32;
  while (shown_rows > 1 && shown_rows * shown_cols > HTML_DEVICES_MAX) shown_rows--;
  int64_t w = left + shown_cols * cw + 4, h = top + shown_rows * ch + 4;
  sb_printf(b, "<svg class='mesh' data-devices='%" PRId64 "' width='%" PRId64 "' height='%" PRId64
                      "' viewBox='0 0 %" PRId64 " %" PRId64 "' role='img'>%s",
                   g->devices, w, h, w, h, svg_defs);
  for (int64_t c = 0; c < shown_cols; c++)
    sb_printf(b, "<text x='%" PRId64 "' y='14' font-size='10' text-anchor='middle' fill='#59636e'>%" PRId64 "</text>",
                     left + c * cw + cw / 2, c);
  for (int64_t r = 0; r < shown_rows; r++) {
    sb_printf(b, "<text x='%d' y='%" PRId64 "' font-size='10' text-anchor='end' fill='#59636e'>%" PRId64 "</text>",
                     left - 6, top + r * ch + ch / 2 + 4, r);
    for (int64_t c = 0; c < shown_cols; c++) {
      int64_t dev = r * cols + c, x = left + c * cw, y = top + r * ch;
      if (dev >= g->devices) break;
      const char *fill = "#e8eef5";
      bool replica = false;
      int64_t blk = -1;
      bool pad_only = false;
      if (v) {
        blk = view_block(v, dev);
        fill = palette[blk % (int64_t)NCOLORS];
        replica = rp_tiling_replica(v->t, dev) > 0;
        pad_only = view_pad_only(v, dev);
      }
      sb_printf(b, "<g class='device' data-device='%" PRId64 "'", dev);
      if (v) sb_printf(b, " data-block='%" PRId64 "'", blk);
      if (pad_only) /* holds only padding: hatched, outlined in its block's colour */
        sb_printf(b, "><rect x='%" PRId64 "' y='%" PRId64 "' width='%d' height='%d' rx='4' fill='url(#pad)' "
                            "stroke='%s' stroke-width='2'/>",
                         x + 1, y + 1, cw - 2, ch - 2, fill);
      else
        sb_printf(b, "><rect x='%" PRId64 "' y='%" PRId64 "' width='%d' height='%d' rx='4' fill='%s' stroke='#fff' "
                            "stroke-width='2'%s/>",
                         x, y, cw, ch, fill, replica ? " fill-opacity='0.55'" : "");
      if (replica) sb_printf(b, "<rect x='%" PRId64 "' y='%" PRId64 "' width='%d' height='%d' rx='4' fill='url(#rep)'/>",
                                    x, y, cw, ch);
      sb_printf(b, "<text x='%" PRId64 "' y='%" PRId64 "' font-size='12' font-weight='600' text-anchor='middle' "
                          "fill='%s'>%" PRId64 "</text></g>",
                       x + cw / 2, y + ch / 2 + 4, v && !pad_only ? "#fff" : "#1f2328", dev);
    }
  }
  sb_puts(b, "</svg>");
  int64_t drawn = shown_rows * shown_cols < g->devices ? shown_rows * shown_cols : g->devices;
  if (drawn < g->devices)
    sb_printf(b, "<div class='more'>and %" PRId64 " more devices</div>", g->devices - drawn);
}

static void grid_init(grid *g, const char *const *names, const int *len, const int64_t *sizes, uint32_t naxes) {
  g->names = names, g->name_len = len, g->sizes = sizes, g->naxes = naxes;
  g->devices = 1;
  for (uint32_t i = 0; i < naxes && g->devices <= SC_MAX_MESH_DEVICES; i++) /* saturates: a remote report's sizes */
    g->devices = sizes[i] > SC_MAX_MESH_DEVICES ? SC_MAX_MESH_DEVICES + 1 : g->devices * sizes[i];
  g->rows = naxes > 1 ? sizes[0] : 1;
  g->cols = g->rows ? g->devices / g->rows : 0;
  if (naxes == 1 && g->cols > 32) g->cols = 32, g->rows = (g->devices + 31) / 32; /* one long axis wraps */
}

/* ---- tensor pictures ------------------------------------------------------------------------------ */

/* Which tensor dims to draw: columns = the flagged (or last sharded) dim, rows = another sharded one. */
static void pick_dims(const rp_tiling *t, int *rdim, int *cdim) {
  *rdim = *cdim = -1;
  if (!t->rank) return;
  int c = t->flagged;
  for (int d = (int)t->rank - 1; c < 0 && d >= 0; d--)
    if (rp_tiling_shards(t, (uint32_t)d) > 1) c = d;
  if (c < 0) c = (int)t->rank - 1;
  int r = -1;
  for (int d = 0; d < (int)t->rank && r < 0; d++)
    if (d != c && rp_tiling_shards(t, (uint32_t)d) > 1) r = d;
  if (r < 0 && t->rank > 1) r = c == 0 ? 1 : 0;
  if (r > c && r >= 0) { /* lower dimension index as rows, like the array's layout */
    int tmp = r;
    r = c, c = tmp;
  }
  *rdim = r, *cdim = c;
}

static void put_dim_caption(strbuf *b, const rp_tiling *t, int dim) {
  if (dim < 0) return;
  int64_t shards = rp_tiling_shards(t, (uint32_t)dim);
  rp_extent e = rp_tiling_extent(t, (uint32_t)dim, 0);
  sb_printf(b, "dim %d (size %" PRId64 ")", dim, t->shape[dim]);
  if (shards <= 1) {
    sb_puts(b, " unsharded");
    return;
  }
  sb_puts(b, " over ");
  for (uint32_t k = 0; k < t->nrefs[dim]; k++) {
    const rp_axis_ref *r = &t->refs[dim][k];
    if (k) sb_puts(b, "&times;");
    esc_n(b, t->axis_name[r->axis], (size_t)t->axis_name_len[r->axis]);
    if (r->pre != 1 || r->size != t->axis_size[r->axis]) sb_printf(b, ":(%" PRId64 ")%" PRId64, r->pre, r->size);
  }
  sb_printf(b, ": %" PRId64 " blocks of %" PRId64, shards, e.block);
  if (t->shape[dim] >= 0 && t->shape[dim] % shards)
    sb_printf(b, ", <b>padded to %" PRId64 "</b> (%" PRId64 " padding)", e.block * shards, e.block * shards - t->shape[dim]);
}

/* Up to 3 devices holding each drawn block (found by one scan over the devices). */
typedef struct {
  int64_t dev[3];
  int n;
  int64_t count;
} holders;

static void find_holders(const tile_view *v, int64_t nr, int64_t nc, holders *h) {
  for (int64_t i = 0; i < nr * nc; i++) h[i].n = 0, h[i].count = 0;
  int64_t scan = v->t->devices < HTML_SCAN_DEVICES ? v->t->devices : HTML_SCAN_DEVICES;
  for (int64_t dv = 0; dv < scan; dv++) {
    int64_t rb = v->rdim >= 0 ? rp_tiling_block(v->t, dv, (uint32_t)v->rdim) : 0;
    int64_t cb = v->cdim >= 0 ? rp_tiling_block(v->t, dv, (uint32_t)v->cdim) : 0;
    if (rb >= nr || cb >= nc) continue;
    holders *x = &h[rb * nc + cb];
    if (x->n < 3) x->dev[x->n++] = dv;
  }
  int64_t per = v->t->devices / ((v->rdim >= 0 ? rp_tiling_shards(v->t, (uint32_t)v->rdim) : 1) *
                                 (v->cdim >= 0 ? rp_tiling_shards(v->t, (uint32_t)v->cdim) : 1));
  for (int64_t i = 0; i < nr * nc; i++) h[i].count = per;
}

static void put_range(strbuf *b, rp_extent e) {
  if (!e.valid) sb_puts(b, "pad");
  else sb_printf(b, "%" PRId64 ":%" PRId64, e.start, e.start + e.valid);
}

static void put_tile(strbuf *b, const tile_view *v, int64_t rb, int64_t cb, const holders *h, int64_t x, int64_t y,
                     int64_t cw, int64_t ch) {
  rp_extent re = v->rdim >= 0 ? rp_tiling_extent(v->t, (uint32_t)v->rdim, rb) : (rp_extent){0, 1, 0, 1};
  rp_extent ce = v->cdim >= 0 ? rp_tiling_extent(v->t, (uint32_t)v->cdim, cb) : (rp_extent){0, 1, 0, 1};
  int64_t blk = rb * v->ccount + cb;
  int64_t vw = ce.block > 0 ? cw * ce.valid / ce.block : cw, vh = re.block > 0 ? ch * re.valid / re.block : ch;
  sb_printf(b, "<g class='tile' data-block='%" PRId64 "' data-padding='%" PRId64 "'>", blk,
                   (re.padding ? re.padding : 0) + (ce.padding ? ce.padding : 0));
  sb_printf(b, "<rect x='%" PRId64 "' y='%" PRId64 "' width='%" PRId64 "' height='%" PRId64 "' fill='url(#pad)'/>", x,
                   y, cw, ch);
  if (vw > 0 && vh > 0)
    sb_printf(b, "<rect x='%" PRId64 "' y='%" PRId64 "' width='%" PRId64 "' height='%" PRId64 "' fill='%s'/>", x, y,
                     vw, vh, palette[blk % (int64_t)NCOLORS]);
  sb_printf(b, "<rect x='%" PRId64 "' y='%" PRId64 "' width='%" PRId64 "' height='%" PRId64
                      "' fill='none' stroke='#fff' stroke-width='2'/>",
                   x, y, cw, ch);
  if (vw <= 0 || vh <= 0) /* only padding: outlined in its block's colour, as its devices are */
    sb_printf(b, "<rect x='%" PRId64 "' y='%" PRId64 "' width='%" PRId64 "' height='%" PRId64
                        "' fill='none' stroke='%s' stroke-width='2'/>",
                     x + 2, y + 2, cw - 4, ch - 4, palette[blk % (int64_t)NCOLORS]);
  bool dark = vw > cw / 2 && vh > ch / 2;
  sb_printf(b, "<text x='%" PRId64 "' y='%" PRId64 "' font-size='11' text-anchor='middle' fill='%s'>", x + cw / 2,
                   y + ch / 2 - 2, dark ? "#fff" : "#1f2328");
  if (v->rdim >= 0) {
    put_range(b, re);
    sb_puts(b, ", ");
  }
  put_range(b, ce);
  sb_printf(b, "</text><text class='holders' x='%" PRId64 "' y='%" PRId64 "' font-size='10' text-anchor='middle' fill='%s'>",
                   x + cw / 2, y + ch / 2 + 12, dark ? "#fff" : "#1f2328");
  sb_puts(b, h->count > 1 ? "devs " : "dev ");
  for (int i = 0; i < h->n; i++) sb_printf(b, "%s%" PRId64, i ? "," : "", h->dev[i]);
  if (h->count > h->n) sb_printf(b, "+%" PRId64, h->count - h->n);
  sb_puts(b, "</text></g>");
}

static void put_tensor_svg(strbuf *b, const tile_view *v) {
  int64_t nr_all = v->rdim >= 0 ? rp_tiling_shards(v->t, (uint32_t)v->rdim) : 1;
  int64_t nc_all = v->cdim >= 0 ? rp_tiling_shards(v->t, (uint32_t)v->cdim) : 1;
  int64_t nr = nr_all < HTML_BLOCKS_MAX ? nr_all : HTML_BLOCKS_MAX, nc = nc_all < HTML_BLOCKS_MAX ? nc_all : HTML_BLOCKS_MAX;
  int64_t cw = nc > 8 ? 58 : nc == 1 ? 180 : 480 / nc > 120 ? 120 : 480 / nc, ch = nr > 6 ? 40 : 44;
  if (cw < 58) cw = 58;
  holders h[HTML_BLOCKS_MAX * HTML_BLOCKS_MAX];
  find_holders(v, nr, nc, h);
  int64_t w = nc * cw + 2, ht = nr * ch + 2;
  sb_printf(b, "<svg class='tensor' data-blocks='%" PRId64 "' width='%" PRId64 "' height='%" PRId64
                      "' viewBox='0 0 %" PRId64 " %" PRId64 "' role='img'>%s",
                   nr_all * nc_all, w, ht, w, ht, svg_defs);
  for (int64_t rb = 0; rb < nr; rb++)
    for (int64_t cb = 0; cb < nc; cb++) put_tile(b, v, rb, cb, &h[rb * nc + cb], 1 + cb * cw, 1 + rb * ch, cw, ch);
  sb_puts(b, "</svg>");
  if (nr < nr_all || nc < nc_all)
    sb_printf(b, "<div class='more'>and %" PRId64 " more blocks</div>", nr_all * nc_all - nr * nc);
}

/* The tensor picture of a diagnostic with a tiling; true if drawn. */
static bool put_tiling(page *p, const sc_diag *d) {
  rp_tiling t;
  if (!rp_tiling_read(d, &t)) return false;
  strbuf *b = p->b;
  if (p->pictures >= HTML_PICTURES_MAX) {
    p->pictures_skipped++;
    return false;
  }
  p->pictures++;
  tile_view v = {&t, -1, -1, 1};
  pick_dims(&t, &v.rdim, &v.cdim);
  v.ccount = v.cdim >= 0 ? rp_tiling_shards(&t, (uint32_t)v.cdim) : 1;
  sb_puts(b, "<div class='pics tiling'><figure>");
  put_tensor_svg(b, &v);
  sb_puts(b, "<figcaption><b>");
  esc(b, t.what);
  sb_puts(b, "</b> (");
  for (uint32_t i = 0; i < t.rank; i++) sb_printf(b, "%s%" PRId64, i ? "&times;" : "", t.shape[i]);
  sb_puts(b, t.rank ? ")" : "scalar)");
  if (v.rdim >= 0) {
    sb_puts(b, "<br>rows: ");
    put_dim_caption(b, &t, v.rdim);
  }
  if (v.cdim >= 0) {
    sb_puts(b, "<br>columns: ");
    put_dim_caption(b, &t, v.cdim);
  }
  if (t.ndims != t.rank)
    sb_printf(b, "<br><b style='color:#a40e26'>the sharding has %u dimension%s, the value %u</b>", t.ndims,
                     t.ndims == 1 ? "" : "s", t.rank);
  sb_puts(b, "<br>hatched: padding of uneven blocks</figcaption></figure><figure>");
  grid g;
  grid_init(&g, t.axis_name, t.axis_name_len, t.axis_size, t.naxes);
  put_device_grid(b, &g, &v);
  sb_puts(b, "<figcaption>devices coloured by the block they hold; ");
  put_grid_axes(b, &g);
  int64_t reps = rp_tiling_replicas(&t);
  if (reps > 1) {
    sb_puts(b, "<br>shaded: replicas (the same block again, replicated over");
    for (uint32_t i = 0; i < t.naxes; i++)
      if (t.axis_replicated[i]) {
        sb_puts(b, " ");
        esc_n(b, t.axis_name[i], (size_t)t.axis_name_len[i]);
      }
    sb_printf(b, ", &times;%" PRId64 ")", reps);
  }
  sb_puts(b, "</figcaption></figure></div>");
  return true;
}

/* ---- diagnostics ---------------------------------------------------------------------------------- */

/* Lines around the diagnostic's line, the line itself highlighted. */
static void put_source(strbuf *b, const sc_report *r, const sc_diag *d) {
  if (!r->buf || !r->has_lines || !d->line || d->offset > r->bytes) return;
  const char *base = r->buf, *end = r->buf + r->bytes, *p = base + d->offset;
  while (p > base && p[-1] != '\n') p--;
  const char *first = p; /* back up to two lines */
  uint32_t line = d->line;
  for (int k = 0; k < 2 && first > base && line > 1; k++, line--) {
    first--;
    while (first > base && first[-1] != '\n') first--;
  }
  sb_puts(b, "<pre class='src'>");
  const char *q = first;
  for (int k = 0; k < 5 && q < end; k++, line++) {
    const char *nl = memchr(q, '\n', (size_t)(end - q));
    size_t n = (size_t)((nl ? nl : end) - q);
    bool hl = line == d->line;
    sb_printf(b, "%s<span class='ln'>%5u | </span>", hl ? "<span class='hl'>" : "", line);
    esc_n(b, q, n < HTML_LINE_MAX ? n : HTML_LINE_MAX);
    if (n > HTML_LINE_MAX) sb_puts(b, "&hellip;");
    sb_puts(b, hl ? "</span>\n" : "\n");
    if (!nl || line >= d->line + 2) break;
    q = nl + 1;
  }
  sb_puts(b, "</pre>");
}

/* The context as a table; the tiling's keys only when no picture shows them. */
static void put_context(strbuf *b, const sc_diag *d, bool drawn) {
  size_t n = 0;
  for (size_t i = 0; i < d->ncontext; i++) n += !(drawn && !strncmp(d->context[i].key, "tensor", 6));
  if (!n) return;
  sb_puts(b, "<dl class='ctx'>");
  for (size_t i = 0; i < d->ncontext; i++) {
    const sc_context_entry *e = &d->context[i];
    if (drawn && !strncmp(e->key, "tensor", 6)) continue;
    esc_in(b, "<dt>", e->key, "</dt><dd>");
    size_t shown = e->nvalues < HTML_LIST_MAX ? e->nvalues : HTML_LIST_MAX;
    if (e->is_list) sb_puts(b, "[");
    for (size_t k = 0; k < shown; k++) {
      if (k) sb_puts(b, ", ");
      esc(b, e->values[k] ? e->values[k] : "null");
    }
    if (shown < e->nvalues) sb_printf(b, ", &hellip; and %zu more", e->nvalues - shown);
    if (e->is_list) sb_puts(b, "]");
    sb_puts(b, "</dd>");
  }
  sb_puts(b, "</dl>");
}

static void put_related(strbuf *b, const sc_report *r, const sc_diag *d) {
  if (!d->nrelated) return;
  sb_printf(b, "<h3>Related sites (%zu)</h3><ul class='related'>", d->nrelated);
  size_t shown = d->nrelated < HTML_RELATED_MAX ? d->nrelated : HTML_RELATED_MAX;
  for (size_t k = 0; k < shown; k++) {
    const sc_related *rl = &d->related[k];
    sb_puts(b, "<li><span class='loc'>");
    if (r->has_lines) sb_printf(b, "line %u:%u", rl->line, rl->col);
    if (rl->has_source) {
      sb_puts(b, r->has_lines ? " &middot; " : "");
      esc(b, rl->source_file);
      sb_printf(b, ":%u", rl->source_line);
    }
    sb_puts(b, "</span> ");
    if (rl->code) esc_in(b, "", rl->code, " ");
    esc_in(b, "", rl->message, "</li>");
  }
  if (shown < d->nrelated) sb_printf(b, "<li class='more'>and %zu more</li>", d->nrelated - shown);
  sb_puts(b, "</ul>");
}

static void put_fixes(strbuf *b, const sc_diag *d) {
  for (size_t k = 0; k < d->nfixes; k++) {
    const sc_fix *f = &d->fixes[k];
    sb_printf(b, "<div class='fix'><span class='pill note'>fix%s</span><span class='title'>",
                     f->machine ? " &middot; machine-applicable" : "");
    esc_in(b, "", f->title, "</span>");
    if (f->note) esc_in(b, "<div class='meta'>", f->note, "</div>");
    if (f->snippet) esc_in(b, "<pre class='snippet'>", f->snippet, "</pre>");
    sb_puts(b, "</div>");
  }
}

static void put_diag(page *p, const sc_report *r, const sc_diag *d) {
  strbuf *b = p->b;
  const char *sev = sc_severity_name(d->severity);
  sb_printf(b, "<section class='card diag sev-%s' data-code='", sev);
  esc(b, d->code);
  sb_printf(b, "'><span class='pill %s'>%s</span><b class='code'>", sev, sev);
  esc_in(b, "", d->code, "</b> <span class='meta'>");
  esc_in(b, "", d->rule, "</span><div class='msg'>");
  esc_in(b, "", d->message, "</div>");
  if (d->has_source) {
    esc_in(b, "<div class='loc'>Python: ", d->source_file, "");
    sb_printf(b, ":%u", d->source_line);
    if (d->source_col) sb_printf(b, ":%u", d->source_col);
    sb_puts(b, "</div>");
  }
  sb_puts(b, "<div class='loc'>Module: ");
  esc(b, r->input_name ? r->input_name : "<stdin>");
  if (r->has_lines) sb_printf(b, ":%u:%u", d->line, d->col);
  else if (d->op_path) {
    sb_puts(b, " op ");
    esc(b, d->op_path);
  }
  if (d->function) esc_in(b, " &middot; in @", d->function, "");
  if (d->op) esc_in(b, " &middot; ", d->op, "");
  if (d->target) esc_in(b, " @", d->target, "");
  sb_puts(b, "</div>");
  put_source(b, r, d);
  put_context(b, d, put_tiling(p, d));
  put_related(b, r, d);
  put_fixes(b, d);
  esc_in(b, "<div class='meta'>More: <code>shardcheck explain ", d->code, "</code></div></section>");
}

/* ---- page ----------------------------------------------------------------------------------------- */

static void put_report(page *p, const sc_report *r) {
  strbuf *b = p->b;
  sb_puts(b, "<article class='report'><h2>");
  esc(b, r->input_name ? r->input_name : "<stdin>");
  sb_printf(b, "</h2><div class='summary'><span class='pill error'>%zu error%s</span>"
                      "<span class='pill warning'>%zu warning%s</span><span class='pill note'>%zu note%s</span></div>",
                   r->errors, r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s", r->notes,
                   r->notes == 1 ? "" : "s");
  sb_printf(b, "<div class='meta'>%s &middot; %zu bytes &middot; %zu function%s &middot; %zu ops &middot; platform %s</div>",
                   sc_format_name(r->format), r->bytes, r->functions, r->functions == 1 ? "" : "s", r->ops,
                   sc_platform_name(r->platform));
  if (r->failure) {
    esc_in(b, "<div class='card sev-error'>check did not complete: ", r->failure, "</div>");
  }
  if (r->mesh_naxes) {
    const char *names[RP_TILING_MAX];
    int len[RP_TILING_MAX];
    int64_t sizes[RP_TILING_MAX];
    uint32_t n = r->mesh_naxes < RP_TILING_MAX ? (uint32_t)r->mesh_naxes : RP_TILING_MAX;
    for (uint32_t i = 0; i < n; i++) {
      names[i] = r->mesh_axes[i].name ? r->mesh_axes[i].name : "";
      len[i] = (int)strlen(names[i]);
      sizes[i] = r->mesh_axes[i].size > 0 ? r->mesh_axes[i].size : 1;
    }
    grid g;
    grid_init(&g, names, len, sizes, n);
    sb_puts(b, "<h3>Mesh (");
    esc(b, r->mesh_source ? r->mesh_source : "none"); /* a remote report's string */
    sb_printf(b, ", %" PRId64 " device%s)</h3><figure>", r->mesh_devices, r->mesh_devices == 1 ? "" : "s");
    if (g.devices == r->mesh_devices && g.devices <= SC_MAX_MESH_DEVICES) put_device_grid(b, &g, NULL);
    sb_puts(b, "<figcaption>");
    put_grid_axes(b, &g);
    if (n < r->mesh_naxes) sb_printf(b, " and %zu more axes", r->mesh_naxes - n);
    sb_puts(b, "</figcaption></figure>");
  }
  size_t shown = r->ndiags < HTML_DIAGS_MAX ? r->ndiags : HTML_DIAGS_MAX;
  for (size_t i = 0; i < shown; i++) put_diag(p, r, &r->diags[i]);
  if (shown < r->ndiags)
    sb_printf(b, "<p class='more'>and %zu more diagnostics (--format json lists them all)</p>", r->ndiags - shown);
  if (!r->ndiags && !r->failure) sb_puts(b, "<p>No problems found.</p>");
  sb_puts(b, "</article>");
}

char *sc_report_html_many(const sc_report *const *reports, size_t nreports) {
  strbuf out = {0};
  page p = {&out, 0, 0};
  size_t errors = 0, warnings = 0, notes = 0;
  for (size_t i = 0; i < nreports; i++) errors += reports[i]->errors, warnings += reports[i]->warnings, notes += reports[i]->notes;
  sb_puts(&out, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
                       "<meta name='viewport' content='width=device-width,initial-scale=1'>"
                       "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
                       "<title>shardcheck report");
  if (nreports == 1) {
    sb_puts(&out, ": ");
    esc(&out, reports[0]->input_name ? reports[0]->input_name : "<stdin>");
  }
  sb_printf(&out, "</title><style>%s</style></head><body><main><h1>shardcheck report</h1>", css);
  sb_printf(&out, "<div class='meta'>shardcheck %s &middot; rules %s &middot; %zu input%s: %zu error%s, %zu warning%s, "
                         "%zu note%s</div>",
                   SC_VERSION, sc_rules_version(), nreports, nreports == 1 ? "" : "s", errors, errors == 1 ? "" : "s",
                   warnings, warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s");
  for (size_t i = 0; i < nreports; i++) put_report(&p, reports[i]);
  if (p.pictures_skipped)
    sb_printf(&out, "<p class='more'>and %zu more tensors not drawn (%d per page)</p>", p.pictures_skipped,
                     HTML_PICTURES_MAX);
  sb_puts(&out, "</main></body></html>\n");
  return sb_take(&out);
}

char *sc_report_html(const sc_report *report) { return sc_report_html_many(&report, 1); }
