/* text.c — human text, gcc/rustc style: `name:line:col: severity: message [CODE]`, the source line,
 * a caret line underlining the offending span, the Python source, fixes and a help line.
 *
 * Everything printed that comes from the input (its name, messages quoting it, source lines) goes
 * through the escapers below: a module or a file name must not be able to move the cursor, clear the
 * screen or forge lines in a CI log. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "shardcheck.h"
#include "util/strbuf.h"

#define NAME_MAX_SHOWN 256  /* bytes of an input/source file name shown */
#define LINE_MAX_SHOWN 160  /* source line bytes shown; longer lines are cut around the span */
#define LINE_CONTEXT 40     /* bytes shown before the span when a line is cut */
#define HEADLINE_MAX 120    /* headline bytes: the first sentences of a message that fit */
#define RELATED_SHOWN 8     /* related sites listed; the rest are counted ("and N more") */

static const char *sev_color(sc_severity s) {
  return s == SC_SEV_ERROR ? "\033[1;31m" : s == SC_SEV_WARNING ? "\033[1;35m" : "\033[1;36m";
}

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* `s` with control characters (ESC, CR, LF, ...) as \xNN, cut to `max` bytes with "…". */
static void put_escaped(strbuf *out, const char *s, size_t max) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n && i < max; i++) {
    unsigned char c = (unsigned char)s[i];
    if (is_control(c)) sb_printf(out, "\\x%02x", c);
    else sb_put(out, (const char *)&c, 1);
  }
  if (n > max) sb_puts(out, "\xe2\x80\xa6");
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
  if (!k || k > n) return 0;
  for (size_t i = 1; i < k; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return k;
}

/* A source line's bytes with control characters other than tab, and bytes that are not UTF-8 (a
 * binary file), shown as '?', so the terminal gets text and the caret line still lines up. */
static void put_source_bytes(strbuf *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    size_t k = c >= 0x80 ? utf8_len((const unsigned char *)s + i, n - i) : 1;
    if (c >= 0x80 && k) {
      sb_put(out, s + i, k);
      i += k - 1;
    } else {
      sb_put(out, (c >= 0x80 || (c != '\t' && is_control(c))) ? "?" : (const char *)&c, 1);
    }
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

/* How to show one source line: its bytes, 1-based number, the 0-based byte column and width of the
 * span to underline, and the display limits. */
typedef struct {
  const char *text;
  size_t n;
  uint32_t number;
  size_t col, width;
} source_line;

/* Bytes of a source line shown: the terminal's width less the "   36 | " gutter and the two "…", or
 * LINE_MAX_SHOWN when not on a terminal. */
static size_t shown_bytes(const sc_text_options *o) {
  if (!o->width) return LINE_MAX_SHOWN;
  return o->width > 8 + 2 + 20 ? o->width - 8 - 2 : 20;
}

/* The source line and the caret line under the span (a single caret when its end is unknown or on
 * another line); a line longer than what fits is windowed around the span with "…" (as clang does), so
 * the caret stays under it on a terminal that would otherwise wrap the line. */
static void put_source_line(strbuf *out, const source_line *l, sc_severity sev, const sc_text_options *o) {
  const char *blue = o->color ? "\033[1;34m" : "", *reset = o->color ? "\033[0m" : "";
  size_t n = l->n, col = l->col > n ? n : l->col, width = l->width ? l->width : 1;
  if (col + width > n) width = n > col ? n - col : 1;
  size_t max = shown_bytes(o), context = o->width ? max / 4 : LINE_CONTEXT;
  size_t from = 0, to = n;
  if (n > max) {
    from = col > context ? col - context : 0;
    to = from + max < n ? from + max : n;
    if (col + width > to) width = to > col ? to - col : 1;
  }
  bool cut_front = from > 0, cut_back = to < n;
  sb_printf(out, "%s%5u |%s %s", blue, l->number, reset, cut_front ? "\xe2\x80\xa6" : "");
  put_source_bytes(out, l->text + from, to - from);
  sb_printf(out, "%s\n", cut_back ? "\xe2\x80\xa6" : "");
  sb_printf(out, "%s      |%s %s", blue, reset, cut_front ? " " : "");
  for (size_t c = from; c < col; c++) sb_puts(out, l->text[c] == '\t' ? "\t" : " ");
  sb_puts(out, o->color ? sev_color(sev) : "");
  for (size_t k = 0; k < width; k++) sb_puts(out, k ? "~" : "^"); /* gcc/rustc style: ^~~~ */
  sb_printf(out, "%s\n", reset);
}

/* The module line of a diagnostic with its span underlined. */
static void put_source_and_caret(strbuf *out, const sc_report *r, const sc_diag *d, const sc_text_options *o) {
  source_line l = {0};
  line_at(r, d->offset, &l.text, &l.n);
  l.number = d->line;
  l.col = d->col ? d->col - 1 : 0;
  if (d->end_line == d->line && d->end_col > d->col) l.width = d->end_col - d->col;
  put_source_line(out, &l, d->severity, o);
}

/* The Python line a diagnostic's debug info names, when the caller can read it. */
static void put_python_line(strbuf *out, const sc_diag *d, const sc_text_options *o) {
  size_t n = 0;
  const char *text = o->source_line ? o->source_line(o->source_user, d->source_file, d->source_line, &n) : NULL;
  if (!text) return;
  /* JAX writes Python's 0-based column (co_positions); underline the dotted name starting there. */
  source_line l = {text, n, d->source_line, d->source_col, 1};
  size_t end = l.col;
  while (end < n && (isalnum((unsigned char)text[end]) || text[end] == '_' || text[end] == '.')) end++;
  if (end > l.col) l.width = end - l.col;
  put_source_line(out, &l, d->severity, o);
}

static void put_fixes(strbuf *out, const sc_diag *d, const char *blue, const char *reset) {
  for (size_t k = 0; k < d->nfixes; k++) {
    const sc_fix *f = &d->fixes[k];
    sb_printf(out, "      %s=%s fix%s: %s\n", blue, reset, f->machine ? " (machine-applicable)" : "",
                     f->title ? f->title : "");
    if (f->note) {
      sb_puts(out, "          note: ");
      put_escaped(out, f->note, (size_t)-1);
      sb_puts(out, "\n");
    }
    if (!f->snippet) continue;
    for (const char *p = f->snippet; *p;) {
      const char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen(p);
      sb_puts(out, "          ");
      put_source_bytes(out, p, n);
      sb_puts(out, "\n");
      p += n + (nl != NULL);
    }
  }
}

/* The other sites of the same mistake, one line each, the first RELATED_SHOWN of them. */
static void put_related(strbuf *out, const sc_report *r, const sc_diag *d, const char *blue, const char *reset) {
  size_t shown = d->nrelated > RELATED_SHOWN + 1 ? RELATED_SHOWN : d->nrelated;
  for (size_t k = 0; k < shown; k++) {
    const sc_related *rl = &d->related[k];
    sb_printf(out, "      %s=%s related: ", blue, reset);
    put_escaped(out, r->input_name ? r->input_name : "<stdin>", NAME_MAX_SHOWN);
    if (r->has_lines) sb_printf(out, ":%u:%u", rl->line, rl->col);
    else if (rl->has_source) {
      sb_puts(out, " (");
      put_escaped(out, rl->source_file, NAME_MAX_SHOWN);
      sb_printf(out, ":%u)", rl->source_line);
    }
    if (rl->code) sb_printf(out, " [%s]", rl->code);
    if (rl->message) {
      sb_puts(out, " ");
      put_escaped(out, rl->message, (size_t)-1);
    }
    sb_puts(out, "\n");
  }
  if (shown < d->nrelated)
    sb_printf(out, "      %s=%s related: and %zu more (all in --format json)\n", blue, reset, d->nrelated - shown);
}

/* Where a sentence of a message ends: ". " (or "." at the end) outside quotes, backticks and brackets,
 * and not an abbreviation ("e.g. "). */
static bool sentence_end(const char *m, size_t i, int depth, bool quoted) {
  if (m[i] != '.' || depth > 0 || quoted) return false;
  if (m[i + 1] != ' ' && m[i + 1] != '\0') return false;
  return !(i >= 3 && (!strncmp(m + i - 3, "e.g", 3) || !strncmp(m + i - 3, "i.e", 3)));
}

/* The headline of a message: its first sentences, up to HEADLINE_MAX bytes (at least the first sentence),
 * which is JAX's error text where one corresponds; the rest of the message becomes a note. Returns the
 * headline's length. */
static size_t headline_len(const char *m) {
  size_t best = 0;
  int depth = 0;
  bool quoted = false, ticked = false;
  for (size_t i = 0; m[i]; i++) {
    char c = m[i];
    if (c == '`') ticked = !ticked;
    else if (c == '\'' || c == '"') quoted = ticked ? quoted : !quoted;
    else if (!quoted && !ticked && (c == '(' || c == '[' || c == '{')) depth++;
    else if (!quoted && !ticked && (c == ')' || c == ']' || c == '}') && depth > 0) depth--;
    if (!sentence_end(m, i, depth, quoted || ticked)) continue;
    if (best && i + 1 > HEADLINE_MAX) break;
    best = i + 1;
  }
  return best ? best : strlen(m);
}

/* "file.py:44:12" / "step.mlir:11:32" / "step.mlirbc:main/3/1" */
static void put_python_location(strbuf *out, const sc_diag *d) {
  put_escaped(out, d->source_file, NAME_MAX_SHOWN);
  /* column 0: the debug info has a line only (HLO metadata) */
  if (d->source_col) sb_printf(out, ":%u:%u", d->source_line, d->source_col);
  else sb_printf(out, ":%u", d->source_line);
}

static void put_module_location(strbuf *out, const sc_report *r, const sc_diag *d) {
  put_escaped(out, r->input_name ? r->input_name : "<stdin>", NAME_MAX_SHOWN);
  if (r->has_lines || !d->op_path) sb_printf(out, ":%u:%u", d->line, d->col);
  else {
    sb_puts(out, ":");
    put_escaped(out, d->op_path, NAME_MAX_SHOWN);
  }
}

/* A diagnostic: the headline at the Python location when the module has one (the module location
 * follows), else at the module location; then the rest of the message, related sites, fixes, help. */
static void put_diag(strbuf *out, const sc_report *r, const sc_diag *d, const sc_text_options *o) {
  bool color = o->color;
  const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "", *blue = color ? "\033[1;34m" : "";
  bool py_primary = d->has_source;
  sb_puts(out, bold);
  if (py_primary) put_python_location(out, d);
  else put_module_location(out, r, d);
  sb_printf(out, ":%s %s%s:%s %s", reset, color ? sev_color(d->severity) : "", sc_severity_name(d->severity),
                   reset, bold);
  size_t head = headline_len(d->message);
  char *headline = strndup(d->message, head);
  put_escaped(out, headline ? headline : d->message, (size_t)-1);
  free(headline);
  sb_printf(out, " [%s]%s\n", d->code, reset);
  if (py_primary) {
    put_python_line(out, d, o);
    sb_printf(out, "      %s=%s module: ", blue, reset);
    put_module_location(out, r, d);
    if (!r->has_lines) sb_printf(out, "%s%s", d->op ? " " : "", d->op ? d->op : "");
    sb_puts(out, "\n");
  }
  if (d->line && r->has_lines) put_source_and_caret(out, r, d, o);
  const char *rest = d->message + head;
  while (*rest == ' ') rest++;
  if (*rest) {
    sb_printf(out, "      %s=%s note: ", blue, reset);
    put_escaped(out, rest, (size_t)-1);
    sb_puts(out, "\n");
  }
  put_related(out, r, d, blue, reset);
  rp_tiling_text(out, d, blue, reset);
  put_fixes(out, d, blue, reset);
  sb_printf(out, "      %s=%s help: shardcheck explain %s\n", blue, reset, d->code);
}

char *sc_report_text_ex(const sc_report *r, const sc_text_options *o) {
  static const sc_text_options defaults = {false, true, 0, NULL, NULL};
  if (!o) o = &defaults;
  strbuf out = {0};
  const char *name = r->input_name ? r->input_name : "<stdin>";
  for (size_t i = 0; i < r->ndiags; i++) {
    if (i) sb_puts(&out, "\n"); /* a blank line between diagnostics */
    put_diag(&out, r, &r->diags[i], o);
  }
  if (r->failure) {
    put_escaped(&out, name, NAME_MAX_SHOWN);
    sb_puts(&out, ": check did not complete: ");
    put_escaped(&out, r->failure, (size_t)-1);
    sb_puts(&out, "\n");
  }
  if (o->summary && r->cost.computed) { /* per device, before the count line the CLI extends */
    const sc_cost_report *c = &r->cost;
    put_escaped(&out, name, NAME_MAX_SHOWN);
    char a[32], res[32], don[32], peak[32], dev[32];
    sb_printf(&out, ": per device: arguments %s, results %s, donated %s, peak >= %s", sb_format_bytes(a, c->arguments_bytes),
                     sb_format_bytes(res, c->results_bytes), sb_format_bytes(don, c->donated_bytes), sb_format_bytes(peak, c->peak_bytes_lower_bound));
    if (c->device_memory_bytes > 0) sb_printf(&out, " of %s", sb_format_bytes(dev, c->device_memory_bytes));
    if (c->ncollectives) sb_printf(&out, "; %zu implicit collective%s", c->ncollectives, c->ncollectives == 1 ? "" : "s");
    sb_puts(&out, "\n");
  }
  if (o->summary) {
    put_escaped(&out, name, NAME_MAX_SHOWN);
    sb_printf(&out, ": %zu error%s, %zu warning%s, %zu note%s\n", r->errors, r->errors == 1 ? "" : "s",
                     r->warnings, r->warnings == 1 ? "" : "s", r->notes, r->notes == 1 ? "" : "s");
  }
  return sb_take(&out);
}

char *sc_report_text(const sc_report *r, bool color) {
  sc_text_options o = {color, true, 0, NULL, NULL};
  return sc_report_text_ex(r, &o);
}
