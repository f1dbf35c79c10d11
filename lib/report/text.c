/* text.c — human text, gcc/rustc style: `name:line:col: severity: message [CODE]`, the source line,
 * a caret line underlining the offending span, the Python source, fixes and a help line.
 *
 * Everything printed that comes from the input (its name, messages quoting it, source lines) goes
 * through the escapers below: a module or a file name must not be able to move the cursor, clear the
 * screen or forge lines in a CI log. */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "shardcheck.h"
#include "util/strbuf.h"

#define NAME_MAX_SHOWN 256  /* bytes of an input/source file name shown */
#define LINE_MAX_SHOWN 160  /* source line bytes shown; longer lines are cut around the span */
#define LINE_CONTEXT 40     /* bytes shown before the span when a line is cut */

static const char *sev_color(sc_severity s) {
  return s == SC_SEV_ERROR ? "\033[1;31m" : s == SC_SEV_WARNING ? "\033[1;35m" : "\033[1;36m";
}

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* `s` with control characters (ESC, CR, LF, ...) as \xNN, cut to `max` bytes with "…". */
static void put_escaped(sc_strbuf *out, const char *s, size_t max) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n && i < max; i++) {
    unsigned char c = (unsigned char)s[i];
    if (is_control(c)) sc_strbuf_printf(out, "\\x%02x", c);
    else sc_strbuf_put(out, (const char *)&c, 1);
  }
  if (n > max) sc_strbuf_puts(out, "\xe2\x80\xa6");
}

/* A source line's bytes with control characters other than tab shown as '?', so the caret line
 * still lines up (one column each). */
static void put_source_bytes(sc_strbuf *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    sc_strbuf_put(out, c != '\t' && is_control(c) ? "?" : (const char *)&c, 1);
  }
}

/* The source line containing `offset`, without its newline. */
static void line_at(const sc_report *r, uint32_t offset, const char **start, size_t *n) {
  const char *b = r->buf, *e = r->buf + r->bytes;
  if (!b || offset > r->bytes) {
    *start = "", *n = 0;
    return;
  }
  const char *p = b + offset;
  while (p > b && p[-1] != '\n') p--;
  const char *q = memchr(b + offset, '\n', (size_t)(e - (b + offset)));
  *start = p;
  *n = (size_t)((q ? q : e) - p);
}

/* The source line and the caret line under [col, end_col) (a single caret when the end is unknown or
 * on another line); lines longer than LINE_MAX_SHOWN are cut around the span with "…". */
static void put_source_and_caret(sc_strbuf *out, const sc_report *r, const sc_diag *d, bool color) {
  const char *blue = color ? "\033[1;34m" : "", *reset = color ? "\033[0m" : "";
  const char *ls;
  size_t n;
  line_at(r, d->offset, &ls, &n);
  size_t col = d->col ? d->col - 1 : 0; /* 0-based byte column of the span */
  if (col > n) col = n;
  size_t width = 1;
  if (d->end_line == d->line && d->end_col > d->col) width = d->end_col - d->col;
  if (col + width > n) width = n > col ? n - col : 1;
  size_t from = 0, to = n;
  if (n > LINE_MAX_SHOWN) {
    from = col > LINE_CONTEXT ? col - LINE_CONTEXT : 0;
    to = from + LINE_MAX_SHOWN < n ? from + LINE_MAX_SHOWN : n;
    if (col + width > to) width = to > col ? to - col : 1;
  }
  bool cut_front = from > 0, cut_back = to < n;
  sc_strbuf_printf(out, "%s%5u |%s %s", blue, d->line, reset, cut_front ? "\xe2\x80\xa6" : "");
  put_source_bytes(out, ls + from, to - from);
  sc_strbuf_printf(out, "%s\n", cut_back ? "\xe2\x80\xa6" : "");
  sc_strbuf_printf(out, "%s      |%s %s", blue, reset, cut_front ? " " : "");
  for (size_t c = from; c < col; c++) sc_strbuf_puts(out, ls[c] == '\t' ? "\t" : " ");
  sc_strbuf_puts(out, color ? sev_color(d->severity) : "");
  for (size_t k = 0; k < width; k++) sc_strbuf_puts(out, k ? "~" : "^"); /* gcc/rustc style: ^~~~ */
  sc_strbuf_printf(out, "%s\n", reset);
}

static void put_fixes(sc_strbuf *out, const sc_diag *d, const char *blue, const char *reset) {
  for (size_t k = 0; k < d->nfixes; k++) {
    const sc_fix *f = &d->fixes[k];
    sc_strbuf_printf(out, "      %s=%s fix%s: %s\n", blue, reset, f->machine ? " (machine-applicable)" : "",
                     f->title ? f->title : "");
    if (f->note) {
      sc_strbuf_puts(out, "          note: ");
      put_escaped(out, f->note, (size_t)-1);
      sc_strbuf_puts(out, "\n");
    }
    if (!f->snippet) continue;
    for (const char *p = f->snippet; *p;) {
      const char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen(p);
      sc_strbuf_puts(out, "          ");
      put_source_bytes(out, p, n);
      sc_strbuf_puts(out, "\n");
      p += n + (nl != NULL);
    }
  }
}

/* The other sites of the same mistake, one line each. */
static void put_related(sc_strbuf *out, const sc_report *r, const sc_diag *d, const char *blue, const char *reset) {
  for (size_t k = 0; k < d->nrelated; k++) {
    const sc_related *rl = &d->related[k];
    sc_strbuf_printf(out, "      %s=%s related: ", blue, reset);
    put_escaped(out, r->input_name ? r->input_name : "<stdin>", NAME_MAX_SHOWN);
    if (r->has_lines) sc_strbuf_printf(out, ":%u:%u", rl->line, rl->col);
    else if (rl->has_source) {
      sc_strbuf_puts(out, " (");
      put_escaped(out, rl->source_file, NAME_MAX_SHOWN);
      sc_strbuf_printf(out, ":%u)", rl->source_line);
    }
    if (rl->code) sc_strbuf_printf(out, " [%s]", rl->code);
    if (rl->message) {
      sc_strbuf_puts(out, " ");
      put_escaped(out, rl->message, (size_t)-1);
    }
    sc_strbuf_puts(out, "\n");
  }
}

static void put_diag(sc_strbuf *out, const sc_report *r, const sc_diag *d, bool color) {
  const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "", *blue = color ? "\033[1;34m" : "";
  sc_strbuf_puts(out, bold);
  bool py_primary = !r->has_lines && d->has_source; /* no lines (bytecode): the Python location leads */
  if (py_primary) {
    put_escaped(out, d->source_file, NAME_MAX_SHOWN);
    if (d->source_col) sc_strbuf_printf(out, ":%u:%u:", d->source_line, d->source_col);
    else sc_strbuf_printf(out, ":%u:", d->source_line);
  } else {
    put_escaped(out, r->input_name ? r->input_name : "<stdin>", NAME_MAX_SHOWN);
    if (r->has_lines || !d->op_path) sc_strbuf_printf(out, ":%u:%u:", d->line, d->col);
    else {
      sc_strbuf_puts(out, ":");
      put_escaped(out, d->op_path, NAME_MAX_SHOWN);
      sc_strbuf_puts(out, ":");
    }
  }
  sc_strbuf_printf(out, "%s %s%s:%s %s", reset, color ? sev_color(d->severity) : "", sc_severity_name(d->severity), reset,
                   bold);
  put_escaped(out, d->message, (size_t)-1);
  sc_strbuf_printf(out, " [%s]%s\n", d->code, reset);
  if (d->line && r->has_lines) put_source_and_caret(out, r, d, color);
  if (py_primary) {
    sc_strbuf_printf(out, "      %s=%s in: ", blue, reset);
    put_escaped(out, r->input_name ? r->input_name : "<stdin>", NAME_MAX_SHOWN);
    sc_strbuf_printf(out, " op %s%s%s\n", d->op_path ? d->op_path : "?", d->op ? " " : "", d->op ? d->op : "");
  } else if (d->has_source) {
    sc_strbuf_printf(out, "      %s=%s source: ", blue, reset);
    put_escaped(out, d->source_file, NAME_MAX_SHOWN);
    /* column 0: the debug info has a line only (HLO metadata) */
    if (d->source_col) sc_strbuf_printf(out, ":%u:%u\n", d->source_line, d->source_col);
    else sc_strbuf_printf(out, ":%u\n", d->source_line);
  }
  put_related(out, r, d, blue, reset);
  rp_tiling_text(out, d, blue, reset);
  put_fixes(out, d, blue, reset);
  sc_strbuf_printf(out, "      %s=%s help: shardcheck explain %s\n", blue, reset, d->code);
}

char *sc_report_text_ex(const sc_report *r, const sc_text_options *o) {
  static const sc_text_options defaults = {false, true};
  if (!o) o = &defaults;
  sc_strbuf out = {0};
  const char *name = r->input_name ? r->input_name : "<stdin>";
  for (size_t i = 0; i < r->ndiags; i++) put_diag(&out, r, &r->diags[i], o->color);
  if (r->failure) {
    put_escaped(&out, name, NAME_MAX_SHOWN);
    sc_strbuf_puts(&out, ": check did not complete: ");
    put_escaped(&out, r->failure, (size_t)-1);
    sc_strbuf_puts(&out, "\n");
  }
  if (o->summary) {
    put_escaped(&out, name, NAME_MAX_SHOWN);
    sc_strbuf_printf(&out, ": %zu error%s, %zu warning%s, %zu note%s\n", r->errors, r->errors == 1 ? "" : "s",
                     r->warnings, r->warnings == 1 ? "" : "s", r->notes, r->notes == 1 ? "" : "s");
  }
  return sc_strbuf_take(&out);
}

char *sc_report_text(const sc_report *r, bool color) {
  sc_text_options o = {color, true};
  return sc_report_text_ex(r, &o);
}
