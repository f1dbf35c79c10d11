/* target_mesh.c — sc_mesh_validate(): the one validator of a target mesh, shared by the mesh spec
 * parser (CLI, Python) and the daemon's request validation, so every front door accepts and rejects
 * the same meshes with the same words. Linear in axes + device ids: names are deduplicated through a
 * hash set, device ids through a bitmap over [0, devices). */
#include <stdio.h>
#include <string.h>

#include "shardcheck.h"
#include "util/hash.h"
#include "util/hashset.h"


/* msg is NULL only when the arena could not format it. */
static int fail(const char **error, const char *msg) {
  *error = msg ? msg : "mesh: invalid (out of memory describing why)";
  return -1;
}

static int validate_axes(sc_arena *a, const sc_target_mesh *m, int64_t *devices, const char **error) {
  hs_name_map names; /* axis name -> index: duplicates in linear time */
  hs_name_map_init(&names, a, m->naxes);
  if (!names.slots) return fail(error, "mesh: out of memory");
  int64_t total = 1;
  for (size_t i = 0; i < m->naxes; i++) {
    const sc_mesh_axis *ax = &m->axes[i];
    if (!ax->name || !ax->name[0])
      return fail(error, ar_printf(a, "mesh.axes[%zu].name: empty axis name", i));
    if (!hs_name_map_put(&names, ax->name, (uint32_t)strlen(ax->name), (uint32_t)i, NULL))
      return fail(error, ar_printf(a, "mesh.axes[%zu].name: duplicate axis \"%.64s\"", i, ax->name));
    if (ax->size < 1)
      return fail(error, ar_printf(a, "mesh.axes[%zu].size: axis \"%.64s\" has size %lld, must be >= 1", i,
                                            ax->name, (long long)ax->size));
    if ((unsigned)ax->type > SC_AXIS_MANUAL)
      return fail(error, ar_printf(a, "mesh.axes[%zu].type: unknown axis type %d", i, (int)ax->type));
    if (ax->size > SC_MAX_MESH_DEVICES || total * ax->size > SC_MAX_MESH_DEVICES)
      return fail(error, ar_printf(a, "mesh.axes: more than %lld devices", (long long)SC_MAX_MESH_DEVICES));
    total *= ax->size;
  }
  *devices = total;
  return 0;
}

int sc_mesh_validate(sc_arena *a, const sc_target_mesh *m, const char **error) {
  if (!m->naxes) return fail(error, "mesh.axes: a target mesh needs at least one axis");
  if ((unsigned)m->platform > SC_PLATFORM_CPU)
    return fail(error, ar_printf(a, "mesh.platform: unknown platform %d", (int)m->platform));
  int64_t devices = 1;
  if (validate_axes(a, m, &devices, error)) return -1;
  if (!m->ndevice_ids) return 0;
  if ((int64_t)m->ndevice_ids != devices)
    return fail(error, ar_printf(a, "mesh.device_ids: %zu ids for a mesh of %lld devices", m->ndevice_ids,
                                          (long long)devices));
  unsigned char *seen = ar_calloc(a, (size_t)devices / 8 + 1, 1);
  if (!seen) return fail(error, "mesh: out of memory");
  for (size_t i = 0; i < m->ndevice_ids; i++) {
    int64_t d = m->device_ids[i];
    bool in_range = d >= 0 && d < devices;
    const char *why = !in_range ? "out of range" : seen[d / 8] & (1u << (d % 8)) ? "a duplicate" : NULL;
    if (why)
      return fail(error, ar_printf(a, "mesh.device_ids[%zu]: device id %lld is %s (mesh of %lld devices)", i,
                                            (long long)d, why, (long long)devices));
    seen[d / 8] |= (unsigned char)(1u << (d % 8));
  }
  return 0;
}
