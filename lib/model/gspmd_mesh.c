/* gspmd_mesh.c — the mesh axes XLA's Shardy import gives a GSPMD module (stablehlo_import.cc's
 * findMeshAxesAndIds): each tiled sharding's tile assignment is read as a "local mesh" (the sizes of
 * the sub-dimensions its tile dimensions and its device order share, tile_assignment.cc's
 * AnalyzeTileAssignment), and the module's axes are the shortest factor sequence every local mesh
 * refines to (ExtractCommonFactorSequence). Each tiled sharding then takes whole axes of that mesh. */
#include "model/model_build.h"

#include <string.h>

/* The shortest sequence both `a` and `b` factor into, each of their elements a product of consecutive
 * entries of it; sizes 1 are skipped. Returns its length, 0 when there is none or it would pass `cap`
 * (XLA: f([4, 8], [8, 4]) = [4, 2, 4], f([2, 3], [3, 2]) = none). */
static uint32_t common_factors(const int64_t *a, uint32_t na, const int64_t *b, uint32_t nb, int64_t *out, uint32_t cap) {
  uint32_t i = 0, j = 0, n = 0;
  int64_t x = 1, y = 1;
  for (;;) {
    while (x == 1 && i < na) x = a[i++];
    while (y == 1 && j < nb) y = b[j++];
    if (x == 1 && y == 1) return n;
    if (x <= 1 || y <= 1) return 0;
    int64_t c = x < y ? x : y;
    if (x % c || y % c || n == cap) return 0;
    out[n++] = c;
    x /= c;
    y /= c;
  }
}

/* An iota tile assignment `<=[reshape]T(perm)` in XLA's canonical form: reshape dimensions of size 1
 * dropped, and dimensions that stay adjacent and in order under the transpose merged (`<=[2,4]` is
 * `<=[8]`). Returns the number of dimensions left, 0 when the input is not a permutation. */
static uint32_t canonical_iota(const int64_t *reshape, const int64_t *perm_in, uint32_t n, int64_t *dims, int64_t *perm) {
  int64_t keep[MD_GSPMD_MAX_AXES];
  uint32_t nk = 0;
  bool seen[MD_GSPMD_MAX_AXES] = {false};
  for (uint32_t k = 0; k < n; k++) {
    int64_t p = perm_in ? perm_in[k] : (int64_t)k;
    if (p < 0 || (uint64_t)p >= n || seen[p]) return 0;
    seen[p] = true;
  }
  /* the transposed order, size-1 dimensions dropped; runs of consecutive original dimensions merged */
  for (uint32_t k = 0; k < n; k++) {
    int64_t p = perm_in ? perm_in[k] : (int64_t)k;
    if (reshape[p] == 1) continue;
    if (nk && keep[nk - 1] >= 0) {
      /* the previous kept dimension and this one: adjacent originally (only size-1 dims between)? */
      int64_t q = keep[nk - 1];
      bool adjacent = q < p;
      for (int64_t r = q + 1; adjacent && r < p; r++) adjacent = reshape[r] == 1;
      if (adjacent) {
        dims[nk - 1] *= reshape[p];
        keep[nk - 1] = p; /* the run now ends at p */
        continue;
      }
    }
    keep[nk] = p;
    dims[nk] = reshape[p];
    nk++;
  }
  /* perm over the merged dimensions: rank of each run by its first original dimension */
  for (uint32_t k = 0; k < nk; k++) {
    uint32_t rank = 0;
    for (uint32_t j = 0; j < nk; j++) rank += keep[j] < keep[k];
    perm[k] = rank;
  }
  /* dims are in transposed order; put them back in original order for the caller */
  int64_t by_orig[MD_GSPMD_MAX_AXES];
  for (uint32_t k = 0; k < nk; k++) by_orig[perm[k]] = dims[k];
  memcpy(dims, by_orig, nk * sizeof *dims);
  return nk;
}

/* The local mesh of a tiled GSPMD sharding (AnalyzeTileAssignment): 0 when its tile assignment is not an
 * iota one (an explicit device list that is not 0, 1, 2, ... in order). */
static uint32_t local_mesh(const md_tiles *t, int64_t *out, uint32_t cap) {
  uint32_t nd = t->ntile_dims;
  if (!nd || nd > MD_GSPMD_MAX_AXES) return 0;
  int64_t reshape[MD_GSPMD_MAX_AXES], perm[MD_GSPMD_MAX_AXES];
  uint32_t nr;
  if (t->niota_reshape) {
    if (t->niota_reshape > MD_GSPMD_MAX_AXES || (t->niota_perm && t->niota_perm != t->niota_reshape)) return 0;
    nr = canonical_iota(t->iota_reshape, t->niota_perm ? t->iota_perm : NULL, t->niota_reshape, reshape, perm);
  } else {
    for (uint64_t i = 0; i < t->ntile_devices; i++)
      if (!t->tile_devices || t->tile_devices[i] != (int64_t)i) return 0;
    nr = nd;
    for (uint32_t k = 0; k < nd; k++) reshape[k] = t->tile_dims[k], perm[k] = k;
  }
  int64_t device_shape[MD_GSPMD_MAX_AXES], axes[MD_GSPMD_MAX_AXES];
  for (uint32_t k = 0; k < nr; k++) device_shape[k] = reshape[perm[k]];
  uint32_t na = common_factors(t->tile_dims, nd, device_shape, nr, axes, MD_GSPMD_MAX_AXES);
  if (!na || na > cap) return 0;
  /* each factor's tile dimension and reshape dimension, walking from the minor end */
  struct sub {
    int64_t tile, reshape, size;
  } subs[MD_GSPMD_MAX_AXES];
  int64_t tile = (int64_t)nd - 1, trans = (int64_t)nr - 1, acc_tile = 1, acc_dev = 1;
  for (uint32_t k = na; k-- > 0;) {
    while (tile >= 0 && t->tile_dims[tile] == 1) tile--;
    if (tile < 0 || trans < 0) return 0;
    subs[k] = (struct sub){tile, perm[trans], axes[k]};
    acc_tile *= axes[k];
    acc_dev *= axes[k];
    if (t->tile_dims[tile] == acc_tile) tile--, acc_tile = 1;
    if (device_shape[trans] == acc_dev) trans--, acc_dev = 1;
  }
  /* ordered by (reshape dimension, tile dimension): the device order's major-to-minor axes */
  for (uint32_t i = 1; i < na; i++)
    for (uint32_t j = i; j > 0 && (subs[j].reshape < subs[j - 1].reshape ||
                                   (subs[j].reshape == subs[j - 1].reshape && subs[j].tile < subs[j - 1].tile));
         j--) {
      struct sub x = subs[j];
      subs[j] = subs[j - 1];
      subs[j - 1] = x;
    }
  for (uint32_t k = 0; k < na; k++) out[k] = subs[k].size;
  return na;
}

bool md_gspmd_mesh_fold(md_gspmd_axes *g, const md_sharding *s) {
  if (!s || g->failed) return !g->failed;
  if (s->kind == SC_SHARDING_TUPLE) {
    for (uint32_t i = 0; i < s->nelements; i++) md_gspmd_mesh_fold(g, s->elements[i]);
    return !g->failed;
  }
  if (s->kind != SC_SHARDING_TILED || !s->tiles || !s->tiles->ntile_dims) return true; /* nothing to factor */
  bool split = false;
  for (uint32_t d = 0; d < s->tiles->ntile_dims; d++) split |= s->tiles->tile_dims[d] != 1;
  if (!split) return true; /* one tile: on every device alike */
  int64_t local[MD_GSPMD_MAX_AXES], merged[MD_GSPMD_MAX_AXES];
  uint32_t nl = local_mesh(s->tiles, local, MD_GSPMD_MAX_AXES);
  if (!nl) {
    g->failed = true; /* a device list XLA's import cannot read as a mesh either */
    return false;
  }
  if (!g->naxes) {
    memcpy(g->axes, local, nl * sizeof *local);
    g->naxes = nl;
    return true;
  }
  uint32_t nm = common_factors(local, nl, g->axes, g->naxes, merged, MD_GSPMD_MAX_AXES);
  if (!nm) {
    g->failed = true; /* no common factorization: XLA's import has none either */
    return false;
  }
  memcpy(g->axes, merged, nm * sizeof *merged);
  g->naxes = nm;
  return true;
}
