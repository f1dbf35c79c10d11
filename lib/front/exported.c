/* exported.c — the `jax.export` container (Exported.serialize()): a flatbuffer around the module. */
#include <string.h>

#include "ir/ir.h"

sc_module *sc_parse_exported(const sc_parse_input *in, sc_parse_error *err) {
  memset(err, 0, sizeof *err);
  err->failed = true;
  err->offset = in->begin;
  err->message = "the Exported container is not supported yet";
  return NULL;
}
