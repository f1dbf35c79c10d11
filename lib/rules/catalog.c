/* catalog.c — the code catalog: a title and a long explanation for every code, with an erroneous and
 * a fixed module that tests check (the erroneous one yields exactly that code, the fixed one none).
 * Entries come from one .inc file per family (lib/catalog_<family>.inc). */
#include <string.h>
#include <strings.h>

#include "rules/rules.h"
#include "shardcheck.h"
#include "util/strbuf.h"

static const sc_catalog_entry catalog[] = {
#define ENTRY(code, title, explanation, bad, good, mesh) {code, title, explanation, bad, good, mesh},
#include "rules/catalog/syntax.inc"
#include "rules/catalog/mesh.inc"
#include "rules/catalog/sharding.inc"
#include "rules/catalog/kernel.inc"
#include "rules/catalog/callback.inc"
#include "rules/catalog/manual.inc"
#include "rules/catalog/collective.inc"
#include "rules/catalog/export.inc"
#include "rules/catalog/memory.inc"
#include "rules/catalog/communication.inc"
#undef ENTRY
};

size_t sc_catalog_count(void) { return sizeof catalog / sizeof catalog[0]; }

const sc_catalog_entry *sc_catalog_at(size_t i) { return i < sc_catalog_count() ? &catalog[i] : NULL; }

const sc_catalog_entry *sc_catalog_find(const char *code) {
  if (!code) return NULL;
  for (size_t i = 0; i < sc_catalog_count(); i++)
    if (strcasecmp(catalog[i].code, code) == 0) return &catalog[i];
  /* Also accept a rule name. */
  const sc_rule *r = ru_rule_by_name(code);
  if (r)
    for (size_t i = 0; i < sc_catalog_count(); i++)
      if (strcmp(catalog[i].code, r->code) == 0) return &catalog[i];
  return NULL;
}

/* Appends `text` indented by two spaces per line. */
static void put_indented(strbuf *f, const char *text) {
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    sb_printf(f, "    %.*s\n", (int)n, p);
    p += n + (nl != NULL);
  }
}

char *sc_explain_text(const char *code) {
  const sc_catalog_entry *e = sc_catalog_find(code);
  if (!e) return NULL;
  const sc_rule *r = ru_rule_by_code(e->code);
  strbuf buf = {0}, *f = &buf;
  sb_printf(f, "%s: %s\n", e->code, e->title);
  if (r) sb_printf(f, "rule: %s   family: %s   severity: %s\n", r->name, r->family, sc_severity_name(r->severity));
  sb_printf(f, "\n%s", e->explanation);
  if (e->bad_example) {
    sb_printf(f, "\nErroneous module%s%s%s:\n", e->bad_mesh ? " (checked with --mesh " : "", e->bad_mesh ? e->bad_mesh : "",
            e->bad_mesh ? ")" : "");
    put_indented(f, e->bad_example);
  }
  if (e->good_example) {
    sb_printf(f, "\nFixed module:\n");
    put_indented(f, e->good_example);
  }
  return sb_take(f);
}

/* Appends `text` as a fenced code block. */
static void put_fenced(strbuf *f, const char *lang, const char *text) {
  size_t n = strlen(text);
  sb_printf(f, "```%s\n%s%s```\n", lang, text, n && text[n - 1] == '\n' ? "" : "\n");
}

/* The explanation's layout is: unindented section titles, two-space indented bodies. Titles become
 * headings; "... example ..." bodies are Python, fenced; other bodies are prose (indent dropped). */
static void put_explanation_markdown(strbuf *f, const char *text) {
  bool in_code = false;
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    bool title = n > 0 && p[0] != ' ';
    if (title || n == 0) {
      if (in_code) sb_puts(f, "```\n");
      in_code = false;
    }
    if (title) {
      sb_printf(f, "\n### %.*s\n\n", (int)n, p);
      in_code = false;
      for (size_t k = 0; k + 6 <= n && !in_code; k++) in_code = memcmp(p + k, "xample", 6) == 0;
      if (in_code) sb_puts(f, "```python\n");
    } else if (n > 0) {
      size_t skip = n >= 2 && p[0] == ' ' && p[1] == ' ' ? 2 : 0;
      sb_printf(f, "%.*s\n", (int)(n - skip), p + skip);
    }
    p += n + (nl != NULL);
  }
  if (in_code) sb_puts(f, "```\n");
}

char *sc_explain_markdown(const char *code) {
  const sc_catalog_entry *e = sc_catalog_find(code);
  if (!e) return NULL;
  const sc_rule *r = ru_rule_by_code(e->code);
  strbuf buf = {0}, *f = &buf;
  sb_printf(f, "## %s: %s\n\n", e->code, e->title);
  if (r)
    sb_printf(f, "Rule `%s`, family `%s`, default severity **%s**.\n\n", r->name, r->family,
                     sc_severity_name(r->severity));
  put_explanation_markdown(f, e->explanation);
  if (e->bad_example) {
    sb_printf(f, "\n### Erroneous module%s%s%s\n\n", e->bad_mesh ? " (checked with `--mesh " : "",
                     e->bad_mesh ? e->bad_mesh : "", e->bad_mesh ? "`)" : "");
    put_fenced(f, "mlir", e->bad_example);
  }
  if (e->good_example) {
    sb_puts(f, "\n### Fixed module\n\n");
    put_fenced(f, "mlir", e->good_example);
  }
  return sb_take(f);
}

#ifndef SC_RULES_HASH
#define SC_RULES_HASH "dev"
#endif
const char *sc_rules_version(void) { return SC_VERSION "+" SC_RULES_HASH; }
