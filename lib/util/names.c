/* names.c — the printed names of the public enums (lib/shardcheck.h): formats, severities,
 * platforms, axis types. Pure functions returning static strings; any thread may call them. */
#include "shardcheck.h"

const char *sc_format_name(sc_format f) {
  switch (f) {
  case SC_FMT_STABLEHLO: return "stablehlo";
  case SC_FMT_HLO: return "hlo";
  case SC_FMT_BYTECODE: return "bytecode";
  case SC_FMT_EXPORTED: return "exported";
  default: return "auto";
  }
}

const char *sc_severity_name(sc_severity s) {
  switch (s) {
  case SC_SEV_ERROR: return "error";
  case SC_SEV_WARNING: return "warning";
  default: return "note";
  }
}

const char *sc_platform_name(sc_platform p) {
  switch (p) {
  case SC_PLATFORM_TPU: return "tpu";
  case SC_PLATFORM_GPU: return "gpu";
  case SC_PLATFORM_CPU: return "cpu";
  default: return "unspecified";
  }
}

const char *sc_axis_type_name(sc_axis_type t) {
  switch (t) {
  case SC_AXIS_EXPLICIT: return "explicit";
  case SC_AXIS_MANUAL: return "manual";
  default: return "auto";
  }
}
