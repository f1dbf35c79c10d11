/* report.h — helpers the emitters share (lib/report/ only). */
#ifndef SC_REPORT_INTERNAL_H
#define SC_REPORT_INTERNAL_H

#include <jansson.h>

#include "shardcheck.h"

/* A JSON string from text that may hold invalid UTF-8: invalid bytes become U+FFFD. */
json_t *sc_jstr(const char *s);

#endif
