/* hlo_parse.c — placeholder until the HLO text front end lands. */
#include "ir.h"

sc_module *sc_parse_hlo(const sc_parse_input *in, sc_parse_error *err) {
  err->failed = true;
  err->offset = in->begin;
  err->message = "XLA HLO text is not supported by this build yet";
  return NULL;
}
