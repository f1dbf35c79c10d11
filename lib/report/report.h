/* report.h — helpers the emitters share (lib/report/ only). */
#ifndef SC_REPORT_INTERNAL_H
#define SC_REPORT_INTERNAL_H

#include <jansson.h>

#include "shardcheck.h"
#include "util/strbuf.h"

/* A JSON string from text that may hold invalid UTF-8: invalid bytes become U+FFFD. */
json_t *rp_jstr(const char *s);

/* The report's "cost" object (docs/report-schema.md), or JSON null when nothing was computed. */
json_t *rp_cost_json(const sc_report *r);

/* A sharded tensor's tiling from a diagnostic's context (tiling.c; what ru_tensor_context attaches). */
#define RP_TILING_MAX 16u
typedef struct {
  uint32_t axis;      /* index into the mesh axes */
  int64_t pre, size;  /* sub-axis (pre)size; a full axis is (1)axis_size */
} rp_axis_ref;

typedef struct {
  const char *what;                    /* "argument #0", "operand 1", ... (from the module: escape it) */
  int64_t shape[RP_TILING_MAX];        /* dimension sizes, -1 dynamic */
  uint32_t rank;
  const char *axis_name[RP_TILING_MAX];/* mesh axis names (not NUL-terminated at the length: print %.*s) */
  int axis_name_len[RP_TILING_MAX];
  int64_t axis_size[RP_TILING_MAX];
  bool axis_replicated[RP_TILING_MAX]; /* no dimension uses it: devices along it hold the same block */
  uint32_t naxes;
  int64_t devices;                     /* product of the axis sizes (iota device order) */
  rp_axis_ref refs[RP_TILING_MAX][RP_TILING_MAX]; /* per sharding dimension, major first */
  uint32_t nrefs[RP_TILING_MAX];
  int64_t dim_shards[RP_TILING_MAX];
  uint32_t ndims;                      /* sharding dimensions (differs from rank on a rank mismatch) */
  int32_t flagged;                     /* the dimension the diagnostic is about, or -1 */
} rp_tiling;

/* Along one dimension, block `b`: elements [start, start + valid) of a padded block of `block`. */
typedef struct {
  int64_t start, valid, padding, block;
} rp_extent;

/* False when the diagnostic has no tiling or it is malformed (context from a remote JSON is untrusted). */
bool rp_tiling_read(const sc_diag *d, rp_tiling *t);
int64_t rp_tiling_shards(const rp_tiling *t, uint32_t dim);           /* 1 for dims the sharding lacks */
int64_t rp_tiling_block(const rp_tiling *t, int64_t device, uint32_t dim); /* block index of device */
int64_t rp_tiling_replica(const rp_tiling *t, int64_t device);        /* 0 = first copy of its block */
int64_t rp_tiling_replicas(const rp_tiling *t);                       /* copies of each block */
rp_extent rp_tiling_extent(const rp_tiling *t, uint32_t dim, int64_t block);
/* The text report's picture of an uneven dimension or a rank mismatch (tiling_text.c); nothing for
 * other diagnostics. `blue`/`reset`: colour codes or "". */
void rp_tiling_text(strbuf *out, const sc_diag *d, const char *blue, const char *reset);

#endif
