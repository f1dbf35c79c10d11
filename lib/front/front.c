/* front.c — which front end reads an input: the format sniffer and the dispatch by format. */
#include <ctype.h>
#include <string.h>

#include "front/front.h"

sc_format sc_detect_format(const char *buf, size_t len) {
  if (sc_is_bytecode(buf, len)) return SC_FMT_BYTECODE;
  if (sc_is_exported(buf, len)) return SC_FMT_EXPORTED;
  const char *p = buf, *end = buf + len;
  for (;;) {
    while (p < end && isspace((unsigned char)*p)) p++;
    if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      if (!nl) return SC_FMT_STABLEHLO;
      p = nl + 1;
      continue;
    }
    break;
  }
  if (end - p >= 9 && memcmp(p, "HloModule", 9) == 0) return SC_FMT_HLO;
  return SC_FMT_STABLEHLO;
}

sc_module *sc_parse_format(sc_format format, const sc_parse_input *in, sc_parse_error *perr) {
  switch (format) {
  case SC_FMT_HLO: return sc_parse_hlo(in, perr);
  case SC_FMT_BYTECODE: return sc_parse_bytecode(in, perr);
  case SC_FMT_EXPORTED: return sc_parse_exported(in, perr);
  default: return sc_parse_mlir(in, perr);
  }
}
