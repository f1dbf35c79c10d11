/* device.c — memory per device by device kind (docs/cost.md#devices): sc_device_memory_bytes(). */
#include <ctype.h>
#include <string.h>

#include "shardcheck.h"

#define GIB (INT64_C(1) << 30)

/* Names are compared lower-cased with spaces, '-' and '_' removed ("TPU v5 lite" -> "tpuv5lite"). The
 * first entry whose key (and `also`, when set) the normalized name contains wins, so the more specific
 * entries come first. */
static const struct {
  const char *key, *also;
  int64_t bytes;
} k_devices[] = {
    {"a100", "80gb", 80 * GIB}, /* "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe" */
    {"a100", NULL, 40 * GIB},   /* "NVIDIA A100-SXM4-40GB", or an A100 that names no size: the 40 GB part */
    {"h200", NULL, 141 * GIB},
    {"h100", NULL, 80 * GIB},
    {"b200", NULL, 192 * GIB},
    {"v5lite", NULL, 16 * GIB}, /* JAX's device_kind of a v5e: "TPU v5 lite" */
    {"v5e", NULL, 16 * GIB},
    {"v6lite", NULL, 32 * GIB}, /* v6e (Trillium): "TPU v6 lite" */
    {"v6e", NULL, 32 * GIB},
    {"v5p", NULL, 95 * GIB},
    {"tpuv5", NULL, 95 * GIB}, /* "TPU v5" (a v5p; the lite ones matched above) */
    {"v4", NULL, 32 * GIB},
};

static size_t normalize(const char *s, char *out, size_t cap) {
  size_t n = 0;
  for (; *s && n + 1 < cap; s++) {
    if (*s == ' ' || *s == '-' || *s == '_') continue;
    out[n++] = (char)tolower((unsigned char)*s);
  }
  out[n] = '\0';
  return n;
}

int64_t sc_device_memory_bytes(const char *device_kind) {
  if (!device_kind) return -1;
  char name[128];
  if (!normalize(device_kind, name, sizeof name)) return -1;
  for (size_t i = 0; i < sizeof k_devices / sizeof k_devices[0]; i++)
    if (strstr(name, k_devices[i].key) && (!k_devices[i].also || strstr(name, k_devices[i].also))) return k_devices[i].bytes;
  return -1;
}
