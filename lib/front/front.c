/* front.c — which front end reads an input: the format sniffer and the dispatch by format. */
#include <ctype.h>
#include <string.h>

#include "front/front.h"

sc_format fe_detect_format(const char *buf, size_t len) {
  if (fe_is_bytecode(buf, len)) return SC_FMT_BYTECODE;
  if (fe_is_exported(buf, len)) return SC_FMT_EXPORTED;
  const char *p = buf, *end = buf + len;
  for (;;) {
    while (p < end && isspace((unsigned char)*p)) p++;
    if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      if (!nl) return SC_FMT_STABLEHLO;
      p = nl + 1;
      continue;
    }
    if (end - p >= 2 && p[0] == '/' && p[1] == '*') { /* HLO's lexer skips block comments (MLIR has none) */
      const char *close = p + 2;
      while (close + 1 < end && !(close[0] == '*' && close[1] == '/')) close++;
      if (close + 1 >= end) return SC_FMT_STABLEHLO;
      p = close + 2;
      continue;
    }
    break;
  }
  if (end - p >= 9 && memcmp(p, "HloModule", 9) == 0) return SC_FMT_HLO;
  return fe_starts_hlo_computation(p, end) ? SC_FMT_HLO : SC_FMT_STABLEHLO;
}

ir_module *fe_parse_format(sc_format format, const fe_parse_input *in, fe_parse_error *perr) {
  switch (format) {
  case SC_FMT_HLO: return fe_parse_hlo(in, perr);
  case SC_FMT_BYTECODE: return fe_parse_bytecode(in, perr);
  case SC_FMT_EXPORTED: return fe_parse_exported(in, perr);
  default: return fe_parse_mlir(in, perr);
  }
}

size_t fe_split_chunks(sc_arena *a, const char *buf, size_t len, bool split, fe_chunk **out) {
  SC_VEC(fe_chunk) v = {0};
  uint32_t start = 0;
  if (split) {
    for (size_t i = 0; i < len;) {
      const char *nl = memchr(buf + i, '\n', len - i);
      size_t line_end = nl ? (size_t)(nl - buf) : len;
      if (line_end - i >= 8 && memcmp(buf + i, "// -----", 8) == 0) {
        fe_chunk c = {start, (uint32_t)i};
        SC_PUSH(a, v, c);
        start = (uint32_t)(nl ? line_end + 1 : len);
      }
      i = nl ? line_end + 1 : len;
    }
  }
  fe_chunk c = {start, (uint32_t)len};
  SC_PUSH(a, v, c);
  *out = v.v;
  return v.n;
}

/* Only blanks and // comments: a chunk between separators that is no module at all. */
bool fe_chunk_is_blank(const char *buf, fe_chunk c) {
  for (uint32_t k = c.begin; k < c.end; k++) {
    if (buf[k] == '/' && k + 1 < c.end && buf[k + 1] == '/') {
      const char *nl = memchr(buf + k, '\n', c.end - k);
      k = nl ? (uint32_t)(nl - buf) : c.end;
      continue;
    }
    if (!isspace((unsigned char)buf[k])) return false;
  }
  return true;
}
