/* model.c — builds the normalized sharding model of a module (model.h): meshes (sdy.mesh ops, the
 * round-trip `xla.sdy.meshes` attribute, the request's target mesh, `mhlo.num_partitions`), every
 * sharding annotation parsed once (Shardy and GSPMD onto md_sharding), sdy ops' custom syntax, and each
 * op's manual context (Shardy manual computations, round-trip manual bodies, GSPMD manual regions),
 * following calls into private functions (model_manual.c). Bad annotations become model errors, never
 * failures. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/memo.h"
#include "model/model.h"
#include "model/model_build.h"
#include "util/hash.h"
#include "util/hashset.h"
#include "model/sdy_lex.h"

/* ---- small helpers ------------------------------------------------------------------------------ */


static uint32_t off_of(const ir_module *m, const char *p) { return (uint32_t)(p - m->buf); }

/* Unquotes an MLIR/HLO string literal, keeping embedded NULs (proto bytes). Returns false if `s` is not
 * a quoted string. */
static bool unquote(sc_arena *a, ir_span s, ir_span *out) {
  s = ir_span_trim(s);
  if (s.n < 2 || s.p[0] != '"' || s.p[s.n - 1] != '"') return false;
  char *buf = ar_alloc(a, s.n);
  uint32_t n = 0;
  for (uint32_t i = 1; i + 1 < s.n; i++) {
    char c = s.p[i];
    if (c != '\\' || i + 2 >= s.n) {
      buf[n++] = c;
      continue;
    }
    char d = s.p[++i];
    if (isxdigit((unsigned char)d) && i + 1 < s.n - 1 && isxdigit((unsigned char)s.p[i + 1])) {
      char h[3] = {d, s.p[i + 1], 0};
      buf[n++] = (char)strtol(h, NULL, 16);
      i++;
    } else if (d == 'n') buf[n++] = '\n';
    else if (d == 't') buf[n++] = '\t';
    else buf[n++] = d;
  }
  buf[n] = 0;
  /* doubly escaped content (round-trip strings re-quoted once more): \" -> " */
  if (n && buf[0] == '{' && memchr(buf, '\\', n)) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (buf[i] == '\\' && i + 1 < n && (buf[i + 1] == '"' || buf[i + 1] == '\\')) i++;
      buf[k++] = buf[i];
    }
    n = k; /* only text attributes (never proto bytes) */
    buf[n] = 0;
  }
  *out = ir_span_of(buf, n);
  return true;
}

static int64_t leading_int(ir_span v, bool *ok) {
  v = ir_span_trim(v);
  uint32_t i = 0;
  bool neg = false;
  if (i < v.n && v.p[i] == '-') neg = true, i++;
  if (i >= v.n || !isdigit((unsigned char)v.p[i])) {
    *ok = false;
    return 0;
  }
  int64_t x = 0;
  while (i < v.n && isdigit((unsigned char)v.p[i]) && x < INT64_MAX / 10) x = x * 10 + (v.p[i++] - '0');
  *ok = true;
  return neg ? -x : x;
}

/* The value text of `key` inside an attribute dictionary text `{k = "v", k2 = ...}` (HLO `{k="v"}`). */
static bool dict_lookup(sc_arena *a, ir_span dict, const char *key, ir_span *value, uint32_t base) {
  sdy_lex lx;
  sdy_lex_init(&lx, a, dict, base);
  if (!sdy_eat(&lx, '{')) return false;
  while (!sdy_at_end(&lx)) {
    sdy_tok k = sdy_next(&lx);
    if (k.kind == SDY_PUNCT && k.ch == '}') return false;
    if (k.kind == SDY_PUNCT && k.ch == ',') continue;
    bool match = (k.kind == SDY_IDENT || k.kind == SDY_STR) && ir_span_eq(k.text, key);
    if (!sdy_eat(&lx, '=')) continue;
    const char *vs = sdy_peek(&lx).at;
    sdy_skip_value(&lx);
    if (match) {
      *value = ir_span_of(vs, (uint32_t)(lx.p - vs));
      return true;
    }
  }
  return false;
}

const ir_attr *md_find_attr_n(const ir_attrs *attrs, const char *name, size_t n) {
  for (uint32_t i = 0; i < attrs->n; i++)
    if (attrs->v[i].name.n == n && sc_bytes_eq(attrs->v[i].name.p, name, n)) return &attrs->v[i];
  return NULL;
}

const ir_attr *md_find_attr(const ir_attrs *attrs, const char *name) { return md_find_attr_n(attrs, name, strlen(name)); }
/* For a literal name: its length is known at compile time. */

static bool is_func(const ir_op *op) {
  return op->kind == SC_OP_FUNC;
}

static void add_error(sc_arena *a, md_model *model, errvec *errs, const ir_op *op, uint32_t offset, const char *msg) {
  (void)model;
  md_model_error e = {op, offset, msg};
  SC_PUSH(a, *errs, e);
}

/* What a sharding annotation's text is parsed as (the memo's tag). */
enum { TEXT_SDY = 1, TEXT_SDY_LIST, TEXT_GSPMD };
static bool shardings_of(builder *b, int kind, ir_span v, uint32_t off, bool share, md_annotation *an,
                         const char **error);

/* ---- annotations -------------------------------------------------------------------------------- */

static void record_fail(builder *b, md_annotation *an, const ir_op *op, uint32_t report_offset, const char *what,
                        const char *msg) {
  an->failed = true;
  add_error(b->a, b->model, &b->errs, op, report_offset,
            what ? ar_printf(b->a, "%s - %s", what, msg) : msg);
}

/* `v`, or when it is a reference to an alias (`#s`, through a few levels) the alias's definition: every
 * reference then shares one parse, located at the definition. */
static ir_span through_alias(const ir_module *m, ir_span v) {
  return ir_span_starts(v, "#sdy.") ? v : ir_alias_resolve(m, v, '#'); /* a dialect attribute as written */
}

/* One sharding annotation `at` on `op`, parsed as `kind`: TEXT_SDY_LIST (sdy.sharding on an op,
 * #sdy.sharding_per_value<[...]>), TEXT_SDY (on a func argument/result, #sdy.sharding<...>) or
 * TEXT_GSPMD (mhlo.sharding). A failure is reported at report_off, prefixed with `what` if given. */
static void parse_annotation(builder *b, md_annotation *an, const ir_attr *at, int kind, bool share, const ir_op *op,
                             uint32_t report_off, const char *what) {
  an->present = true;
  an->text_p = at->value.p, an->text_n = at->value.n;
  an->offset = off_of(b->m, at->value.p);
  an->per_value = kind == TEXT_SDY_LIST;
  ir_span v = ir_span_trim(at->value);
  if (kind != TEXT_GSPMD) v = through_alias(b->m, v);
  if (kind == TEXT_SDY_LIST && ir_span_starts(v, "#sdy.sharding<")) {
    record_fail(b, an, op, report_off, what,
                "op should have a sharding attribute of type TensorShardingPerValueAttr (write "
                "#sdy.sharding_per_value<[<...>]> on ops; #sdy.sharding<...> is for function arguments and results)");
    return;
  }
  if (kind == TEXT_SDY && ir_span_starts(v, "#sdy.sharding_per_value")) {
    record_fail(b, an, op, report_off, what,
                "should have a sharding attribute of type TensorShardingAttr (write #sdy.sharding<...> on function "
                "arguments and results)");
    return;
  }
  const char *err = NULL;
  if (!shardings_of(b, kind, v, off_of(b->m, v.p), share, an, &err))
    record_fail(b, an, op, report_off, what, err);
}

/* The GSPMD sharding written as `v` (an HloSharding string, quoted or not, or serialized OpSharding
 * bytes) at `off`, or NULL with *error (the whole message). */
static md_sharding *parse_gspmd_text(builder *b, ir_span v, uint32_t off, const char **error) {
  ir_span text;
  if (unquote(b->a, v, &text)) {
    off += 1;
    ir_span t = ir_span_trim(text);
    if (t.n == 0 || t.p[0] != '{') {
      const char *conv = md_gspmd_proto_to_text(b->a, text.p, text.n);
      if (!conv) {
        *error = ar_printf(b->a, "mhlo.sharding %.*s is neither HloSharding text nor a serialized OpSharding",
                                 SC_SPAN_ARG(v));
        return NULL;
      }
      text = ir_span_of(conv, (uint32_t)strlen(conv));
    }
  } else {
    text = v;
  }
  const char *err = NULL;
  md_sharding *s = md_parse_gspmd_sharding(b->a, text, off, &err);
  if (!s) *error = ar_printf(b->a, "invalid sharding %.*s: %s", SC_SPAN_ARG(v), err);
  return s;
}

bool md_sharding_op_unspecified_dims(sc_arena *a, const ir_op *op, uint32_t **dims, uint32_t *n) {
  *dims = NULL;
  *n = 0;
  const ir_attr *at = ir_op_attr(op, "mhlo.backend_config");
  if (!at) at = ir_op_attr(op, "backend_config");
  ir_span v = at ? ir_span_trim(at->value) : ir_span_of(NULL, 0);
  if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"') v.p++, v.n -= 2;
  if (!v.n) return true;
  static const char key[] = "unspecified_dims=[";
  if (v.n < sizeof key || memcmp(v.p, key, sizeof key - 1) != 0 || v.p[v.n - 1] != ']') return false;
  uint32_t count = 0;
  for (uint32_t i = sizeof key - 1; i + 1 < v.n; i++) {
    if (!(v.p[i] >= '0' && v.p[i] <= '9') && v.p[i] != ',' && v.p[i] != ' ') return false;
    count += v.p[i] >= '0' && v.p[i] <= '9' && !(v.p[i - 1] >= '0' && v.p[i - 1] <= '9');
  }
  uint32_t *out = ar_calloc(a, count ? count : 1, sizeof *out);
  for (uint32_t i = sizeof key - 1, k = 0; i + 1 < v.n && k < count;) {
    if (!(v.p[i] >= '0' && v.p[i] <= '9')) {
      i++;
      continue;
    }
    uint64_t d = 0;
    for (; i + 1 < v.n && v.p[i] >= '0' && v.p[i] <= '9'; i++) d = d < UINT32_MAX ? d * 10 + (uint64_t)(v.p[i] - '0') : d;
    out[k++] = d < UINT32_MAX ? (uint32_t)d : UINT32_MAX;
  }
  *dims = out;
  *n = count;
  return true;
}

/* ---- sdy ops' custom syntax --------------------------------------------------------------------- */

const md_sdy_op_info md_no_sdy_op;
const md_func_annotations md_no_func;
const md_sdy_items md_no_items;
const md_annotation md_no_annotation;

static void scan_sdy_header(builder *b, const ir_op *op, md_op_more *info) {
  ir_span text = ir_op_text(b->m, op);
  if (op->generic || !text.n) return;
  sdy_lex lx;
  sdy_lex_init(&lx, b->a, text, op->pos.offset);
  /* find the op name: where the parser saw it (only %results precede it in custom syntax), else by lexing */
  if (ir_op_name(op).p >= text.p && ir_op_name(op).p + ir_op_name(op).n <= text.p + text.n) {
    lx.p = ir_op_name(op).p + ir_op_name(op).n;
  } else {
    for (;;) {
      sdy_tok t = sdy_next(&lx);
      if (t.kind == SDY_EOF) return;
      if (t.kind == SDY_IDENT && ir_span_same(t.text, ir_op_name(op))) break;
    }
  }
  b->items.n = 0;
  bool regions = op->nregions > 0;
  for (;;) {
    const char *before = lx.p;
    sdy_tok t = sdy_next(&lx); /* groups step back to `before` and are skipped whole */
    if (t.kind == SDY_EOF || t.kind == SDY_BAD) break;
    if (t.kind == SDY_PUNCT && (t.ch == ':' || t.ch == '}' || t.ch == ')' || t.ch == ']' || t.ch == '>')) break;
    if (t.kind == SDY_IDENT && ir_span_eq(t.text, "loc")) break;
    if (t.kind == SDY_VALUE || t.kind == SDY_SYM || t.kind == SDY_STR || t.kind == SDY_INT) continue;
    if (t.kind == SDY_PUNCT && t.ch == '(') {
      lx.p = before;
      sdy_skip_value(&lx);
      continue;
    }
    if (t.kind == SDY_PUNCT && t.ch == '{' && regions) break;
    if (t.kind == SDY_IDENT) {
      md_sdy_item it;
      memset(&it, 0, sizeof it);
      it.name = t.text;
      if (sdy_eat(&lx, '=')) {
        const char *vs = sdy_peek(&lx).at;
        sdy_skip_value(&lx);
        it.value = ir_span_of(vs, (uint32_t)(lx.p - vs));
        it.offset = sdy_offset(&lx, vs);
      } else {
        it.offset = sdy_offset(&lx, t.at);
      }
      SC_PUSH(b->a, b->items, it);
      continue;
    }
    if (t.kind == SDY_PUNCT && (t.ch == '<' || t.ch == '[' || t.ch == '{')) {
      /* an attribute dict {name = ...} is not an unnamed group */
      const char *vs = t.at;
      lx.p = before;
      sdy_skip_value(&lx);
      md_sdy_item it;
      memset(&it, 0, sizeof it);
      it.value = ir_span_of(vs, (uint32_t)(lx.p - vs));
      it.offset = sdy_offset(&lx, vs);
      SC_PUSH(b->a, b->items, it);
      continue;
    }
  }
  if (!b->items.n) return;
  md_sdy_items *items = ar_alloc(b->a, sizeof *items + b->items.n * sizeof *items->v);
  items->n = (uint32_t)b->items.n;
  memcpy(items->v, b->items.v, b->items.n * sizeof *items->v);
  info->items = items;
}

static const md_sdy_item *items_named(const md_sdy_items *items, const char *name) {
  for (uint32_t i = 0; i < items->n; i++)
    if (items->v[i].value.n && ir_span_eq(items->v[i].name, name)) return &items->v[i];
  return NULL;
}

static const md_sdy_item *item_named(const md_op_more *info, const char *name) {
  return items_named(info->items ? info->items : &md_no_items, name); /* NULL while the op is parsed */
}

static const md_sdy_item *first_group(const md_op_more *info, char open) {
  const md_sdy_items *items = info->items ? info->items : &md_no_items;
  for (uint32_t i = 0; i < items->n; i++)
    if (!items->v[i].name.n && items->v[i].value.n && items->v[i].value.p[0] == open) {
      /* skip attribute dicts `{sdy.sharding = ...}` */
      if (open == '{') {
        ir_span v = items->v[i].value;
        uint32_t j = 1;
        while (j < v.n && isspace((unsigned char)v.p[j])) j++;
        if (j < v.n && (isalpha((unsigned char)v.p[j]) || v.p[j] == '_')) continue;
      }
      return &items->v[i];
    }
  return NULL;
}

/* The value for an sdy op's piece of syntax: attribute (generic form / lead's parser) or scanned item. */
static bool sdy_value(const ir_op *op, const md_op_more *info, const char *name, ir_span *v, uint32_t *off,
                      const ir_module *m) {
  const md_sdy_item *it = item_named(info, name);
  if (it) {
    *v = it->value;
    *off = it->offset;
    return true;
  }
  const ir_attr *at = md_find_attr(ir_op_attrs(op), name);
  if (at && at->value.n) {
    *v = at->value;
    *off = off_of(m, at->value.p);
    return true;
  }
  return false;
}

/* A sharding in an sdy op's custom syntax (`name` = v at `off`): one sharding (TEXT_SDY) or a list
 * (TEXT_SDY_LIST); a failure is reported prefixed with `what` if given. */
static void parse_custom_sdy(builder *b, md_annotation *an, const ir_op *op, ir_span v, uint32_t off, int kind,
                             bool share, const char *what) {
  an->present = true;
  an->per_value = kind == TEXT_SDY_LIST;
  an->text_p = v.p, an->text_n = v.n;
  an->offset = off;
  const char *err = NULL;
  ir_span t = ir_span_trim(v);
  if (!shardings_of(b, kind, t, off + (uint32_t)(t.p - v.p), share, an, &err))
    record_fail(b, an, op, op->pos.offset, what, err);
}

static void parse_sdy_op(builder *b, const ir_op *op, md_op_more *info, op_annotations *ann, md_sdy_op_info *x) {
  scan_sdy_header(b, op, info);
  ir_span v;
  uint32_t off;
  unsigned n = op->kind;
  if (n == SC_OP_SDY_SHARDING_CONSTRAINT || n == SC_OP_SDY_RESHARD) {
    const md_sdy_item *g = first_group(info, '<');
    if (g)
      parse_custom_sdy(b, &ann->sharding, op, g->value, g->offset, TEXT_SDY, true, NULL);
    else if (sdy_value(op, info, "sharding", &v, &off, b->m))
      parse_custom_sdy(b, &ann->sharding, op, v, off, TEXT_SDY, true, NULL);
  } else if (n == SC_OP_SDY_DATA_FLOW_EDGE) {
    if (sdy_value(op, info, "sharding", &v, &off, b->m))
      parse_custom_sdy(b, &ann->sharding, op, v, off, TEXT_SDY, true, NULL);
  } else if (ir_op_kind_is_sdy_collective(n)) {
    if (sdy_value(op, info, "out_sharding", &v, &off, b->m))
      parse_custom_sdy(b, &ann->sharding, op, v, off, TEXT_SDY, true, "out_sharding");
  } else if (n == SC_OP_SDY_MANUAL_COMPUTATION || n == SC_OP_SDY_NAMED_COMPUTATION) {
    if (sdy_value(op, info, "in_shardings", &v, &off, b->m))
      parse_custom_sdy(b, &x->in_shardings, op, v, off, TEXT_SDY_LIST, false, "in_shardings");
    if (sdy_value(op, info, "out_shardings", &v, &off, b->m))
      parse_custom_sdy(b, &x->out_shardings, op, v, off, TEXT_SDY_LIST, false, "out_shardings");
    if (n == SC_OP_SDY_MANUAL_COMPUTATION && sdy_value(op, info, "manual_axes", &v, &off, b->m)) {
      const char *err = NULL;
      x->has_manual_axes = true;
      x->manual_axes_offset = off;
      if (md_parse_sdy_axis_names(b->a, v, off, &x->manual_axes, &x->nmanual_axes, &err) != 0)
        add_error(b->a, b->model, &b->errs, op, op->pos.offset, ar_printf(b->a, "manual_axes - %s", err));
    }
  }
}

/* Round-trip (`xla.sdy.*` frontend attributes) manual axes of GlobalToLocalShape / manual body calls. */
static void parse_roundtrip_manual(builder *b, const ir_op *op, md_sdy_op_info *info) {
  const ir_attr *fa = FIND_ATTR(ir_op_attrs(op), "mhlo.frontend_attributes");
  if (!fa) fa = FIND_ATTR(ir_op_attrs(op), "frontend_attributes");
  if (!fa) return;
  ir_span v, s;
  if (!dict_lookup(b->a, ir_span_trim(fa->value), "xla.sdy.manual_axes", &v, off_of(b->m, fa->value.p))) return;
  if (!unquote(b->a, v, &s)) return;
  const char *err = NULL;
  if (md_parse_sdy_axis_names(b->a, s, off_of(b->m, v.p), &info->manual_axes, &info->nmanual_axes, &err) == 0) {
    info->has_manual_axes = true;
    info->manual_axes_offset = off_of(b->m, v.p);
  }
}

/* ---- meshes ------------------------------------------------------------------------------------- */

static void add_mesh_op(builder *b, const ir_op *op) {
  sdy_lex lx;
  /* The front end gives the mesh body as attribute "value" (pretty `@name = <...>`, and generic
   * `mesh = #sdy.mesh<...>`); without it, scan the op text for `= <...>`. */
  const ir_attr *body = ir_op_attr(op, "value");
  if (!body && op->generic) { /* the generic form names no mesh: nothing to scan the text for */
    add_error(b->a, b->model, &b->errs, op, op->pos.offset, "'sdy.mesh' op requires attribute 'mesh'");
    return;
  }
  ir_span v = body ? body->value : ir_span_of("", 0);
  if (ir_span_starts(v, "#sdy.mesh<")) v.p += 9, v.n -= 9; /* the attribute form `@m = #sdy.mesh<[...]>` */
  if (v.n && v.p[0] == '<') {
    sdy_lex_init(&lx, b->a, v, off_of(b->m, v.p));
  } else if (v.n && v.p[0] == '#') { /* `@m = #alias` */
    sdy_lex_init(&lx, b->a, v, off_of(b->m, v.p));
    sdy_lex_use_aliases(&lx, &b->aliases);
  } else {
    sdy_lex_init(&lx, b->a, ir_op_text(b->m, op), op->pos.offset);
    for (;;) {
      sdy_tok t = sdy_next(&lx);
      if (t.kind == SDY_EOF) break;
      if (t.kind == SDY_PUNCT && t.ch == '=') break;
    }
  }
  const char *at = sdy_peek(&lx).at;
  md_mesh *mesh = sdy_parse_mesh_body(&lx);
  if (!mesh) {
    add_error(b->a, b->model, &b->errs, op, op->pos.offset,
              ar_printf(b->a, "custom op 'sdy.mesh' failed to parse Sdy_Mesh: %s", lx.err ? lx.err : "bad mesh"));
    return;
  }
  mesh->name = ir_op_sym_name(op);
  if (!mesh->name.n) { /* the parser did not give a symbol: take it from the text */
    sdy_lex l2;
    sdy_lex_init(&l2, b->a, ir_op_text(b->m, op), 0);
    for (;;) {
      sdy_tok t = sdy_next(&l2);
      if (t.kind == SDY_EOF || (t.kind == SDY_PUNCT && t.ch == '=')) break;
      if (t.kind == SDY_SYM) mesh->name = t.text;
    }
  }
  mesh->op = op;
  mesh->offset = off_of(b->m, at);
  SC_PUSH(b->a, b->meshes, *mesh);
}

static void add_roundtrip_meshes(builder *b, const ir_op *module) {
  const ir_attr *fa = md_find_attr(ir_op_attrs(module), "mhlo.frontend_attributes");
  if (!fa) fa = md_find_attr(ir_op_attrs(module), "frontend_attributes");
  if (!fa) return;
  ir_span v, s;
  uint32_t base = off_of(b->m, fa->value.p);
  if (!dict_lookup(b->a, ir_span_trim(fa->value), "xla.sdy.meshes", &v, base)) return;
  b->model->sdy_round_trip = true;
  if (!unquote(b->a, v, &s)) return;
  uint32_t off = off_of(b->m, v.p);
  sdy_lex lx;
  sdy_lex_init(&lx, b->a, s, off);
  if (!sdy_eat(&lx, '{')) return;
  while (!sdy_at_end(&lx)) {
    sdy_tok name = sdy_next(&lx);
    if (name.kind == SDY_PUNCT && name.ch == '}') break;
    if (name.kind == SDY_PUNCT && name.ch == ',') continue;
    if (!sdy_eat(&lx, '=')) break;
    sdy_tok h = sdy_peek(&lx);
    if (h.kind == SDY_HASH) sdy_next(&lx);
    md_mesh *mesh = sdy_parse_mesh_body(&lx);
    if (!mesh) {
      add_error(b->a, b->model, &b->errs, module, off,
                ar_printf(b->a, "xla.sdy.meshes: failed to parse mesh %.*s: %s", SC_SPAN_ARG(name.text),
                                lx.err ? lx.err : "bad mesh"));
      return;
    }
    mesh->name = name.text;
    mesh->offset = off;
    SC_PUSH(b->a, b->meshes, *mesh);
  }
}

static md_mesh *target_mesh(sc_arena *a, const sc_target_mesh *t) {
  md_mesh *m = ar_alloc(a, sizeof *m);
  m->name = ir_span_of("target", 6);
  m->naxes = (uint32_t)t->naxes;
  m->axes = ar_calloc(a, t->naxes ? t->naxes : 1, sizeof *m->axes);
  int64_t prod = 1;
  for (size_t i = 0; i < t->naxes; i++) {
    const char *nm = t->axes[i].name ? t->axes[i].name : "";
    m->axes[i].name = ir_span_of(nm, (uint32_t)strlen(nm));
    m->axes[i].size = t->axes[i].size;
    m->axes[i].type = t->axes[i].type;
    if (t->axes[i].size > 0 && prod <= INT64_MAX / t->axes[i].size) prod *= t->axes[i].size;
  }
  m->devices = prod;
  if (t->device_ids && t->ndevice_ids) {
    m->device_ids = ar_calloc(a, t->ndevice_ids, sizeof *m->device_ids);
    memcpy(m->device_ids, t->device_ids, t->ndevice_ids * sizeof *m->device_ids);
    m->ndevice_ids = (uint32_t)t->ndevice_ids;
  }
  md_mesh_index_axes(a, m);
  return m;
}

/* ---- resolution --------------------------------------------------------------------------------- */

const md_mesh *md_model_mesh(const md_model *model, ir_span name) {
  if (!model) return NULL;
  if (model->mesh_index) {
    uint32_t i;
    return hs_name_map_get(model->mesh_index, name.p, name.n, &i) ? &model->meshes[i] : NULL;
  }
  for (uint32_t i = 0; i < model->nmeshes; i++)
    if (ir_span_same(model->meshes[i].name, name)) return &model->meshes[i];
  return NULL;
}

static void resolve_refs(md_axis_ref *r, uint32_t n, const md_mesh *mesh) {
  for (uint32_t i = 0; i < n; i++) {
    if (r[i].sub) continue;
    int k = md_mesh_axis_index(mesh, r[i].name);
    if (k >= 0) r[i].size = mesh->axes[k].size;
  }
}

static void resolve(md_model *model, md_sharding *s) {
  if (!s) return;
  if (s->kind == SC_SHARDING_TUPLE) {
    for (uint32_t i = 0; i < s->nelements; i++) resolve(model, s->elements[i]);
    return;
  }
  if (s->source != SC_SHARDING_FROM_SDY) return;
  if (!s->mesh && s->mesh_name.n) s->mesh = md_model_mesh(model, s->mesh_name);
  const md_mesh *mesh = s->mesh;
  if (!mesh) return;
  for (uint32_t d = 0; d < s->rank; d++) resolve_refs(s->dims[d].axes, s->dims[d].naxes, mesh);
  resolve_refs(s->replicated, s->nreplicated, mesh);
  resolve_refs(s->unreduced, s->nunreduced, mesh);
  if (mesh->maximal) {
    s->kind = SC_SHARDING_MAXIMAL;
    s->maximal_device = mesh->device_ids[0];
  }
}

const md_mesh *md_model_sharding_mesh(const md_model *model, const md_sharding *s) {
  if (!s) return NULL;
  if (s->mesh) return s->mesh;
  if (s->mesh_name.n) return md_model_mesh(model, s->mesh_name);
  return NULL;
}

/* ---- GSPMD tile assignments mapped onto named mesh axes ----------------------------------------- */

/* Tries every order of the mesh axes; a tiled dimension takes consecutive axes whose sizes multiply to
 * it, the rest replicate. Accepts when the device order the named sharding implies equals the tile
 * assignment's. */
static bool try_map(sc_arena *a, md_sharding *s, const md_mesh *mesh, const uint32_t *order, uint32_t data_rank) {
  uint32_t na = mesh->naxes;
  uint32_t *dim_of = ar_calloc(a, na, sizeof *dim_of);
  uint32_t k = 0;
  for (uint32_t d = 0; d < s->tiles->ntile_dims; d++) {
    int64_t need = s->tiles->tile_dims[d], got = 1;
    while (got < need && k < na) {
      got *= mesh->axes[order[k]].size;
      dim_of[order[k]] = d;
      k++;
    }
    if (got != need) return false;
  }
  if (k != na) return false; /* every axis must be used by some tile dim (incl. replication) */
  /* device order implied: iterate the tile index space; the mesh coordinates follow from `order` */
  uint64_t total = s->tiles->ntile_devices;
  int64_t coord[64] = {0};
  int64_t mstride[64];
  int64_t st = 1;
  for (int i = (int)na - 1; i >= 0; i--) {
    mstride[i] = st;
    st *= mesh->axes[i].size;
  }
  for (uint64_t t = 0; t < total; t++) {
    int64_t flat = 0;
    for (uint32_t i = 0; i < na; i++) flat += coord[order[i]] * mstride[order[i]];
    int64_t dev = mesh->device_ids ? mesh->device_ids[flat] : flat;
    if (dev != s->tiles->tile_devices[t]) return false;
    for (int i = (int)na - 1; i >= 0; i--) {
      uint32_t ax = order[i];
      if (++coord[ax] < mesh->axes[ax].size) break;
      coord[ax] = 0;
    }
  }
  s->dims = ar_calloc(a, data_rank ? data_rank : 1, sizeof *s->dims);
  s->rank = data_rank;
  for (uint32_t d = 0; d < data_rank; d++) {
    s->dims[d].priority = -1;
    uint32_t cnt = 0;
    for (uint32_t i = 0; i < na; i++)
      if (dim_of[order[i]] == d && mesh->axes[order[i]].size > 1) cnt++;
    s->dims[d].axes = ar_calloc(a, cnt ? cnt : 1, sizeof(md_axis_ref));
    for (uint32_t i = 0; i < na; i++) {
      uint32_t ax = order[i];
      if (dim_of[ax] == d && mesh->axes[ax].size > 1) {
        md_axis_ref *r = &s->dims[d].axes[s->dims[d].naxes++];
        r->name = mesh->axes[ax].name;
        r->size = mesh->axes[ax].size;
      }
    }
  }
  return true;
}

static bool permute_map(sc_arena *a, md_sharding *s, const md_mesh *mesh, uint32_t *order, uint32_t k, uint32_t rank) {
  if (k == mesh->naxes) return try_map(a, s, mesh, order, rank);
  for (uint32_t i = k; i < mesh->naxes; i++) {
    uint32_t t = order[k];
    order[k] = order[i];
    order[i] = t;
    if (permute_map(a, s, mesh, order, k + 1, rank)) return true;
    order[i] = order[k];
    order[k] = t;
  }
  return false;
}

static void map_gspmd(sc_arena *a, md_sharding *s, const md_mesh *mesh) {
  if (!s || !mesh) return;
  if (s->kind == SC_SHARDING_TUPLE) {
    for (uint32_t i = 0; i < s->nelements; i++) map_gspmd(a, s->elements[i], mesh);
    return;
  }
  if (s->kind != SC_SHARDING_TILED || mesh->naxes == 0 || mesh->naxes > 6 || !s->tiles->tile_devices) return;
  if ((int64_t)s->tiles->ntile_devices != mesh->devices) return;
  /* only replicated subgroups can be mapped (manual ones describe a manual region) */
  for (uint32_t i = 0; i < s->tiles->nlast_tile_dims; i++)
    if (s->tiles->last_tile_dims[i] != 2) return;
  uint32_t rank = s->tiles->ntile_dims - s->tiles->nlast_tile_dims;
  uint32_t order[8];
  for (uint32_t i = 0; i < mesh->naxes; i++) order[i] = i;
  if (permute_map(a, s, mesh, order, 0, rank)) {
    s->kind = SC_SHARDING_NAMED;
    s->mapped = true;
    s->mesh = mesh;
    s->mesh_name = mesh->name;
  }
}

/* ---- each distinct sharding text parsed once ------------------------------------------------------ */

/* A module writes the same few shardings thousands of times. The first occurrence of a text is parsed,
 * resolved against the module's meshes and mapped onto the effective mesh. A later occurrence on an op
 * (sdy.sharding, mhlo.sharding, an sdy op's sharding: the bulk) shares that parse outright, its
 * annotation recording how far it lies from the first (md_annotation.shift); diagnostics and fixes place
 * themselves through md_sharding_occurrence(). On function arguments and results and on manual/named
 * computations (few, and read with positions by many rules) a later occurrence gets its own header
 * (text, mesh name and offset moved onto its own text) sharing the first one's arrays: its axis refs'
 * names lie in the first occurrence's text, and rules place them through md_sharding_pos(). Tuples
 * (rare) are copied whole, elements included. Texts with an inline mesh are parsed every time (the
 * mesh would carry the first occurrence's positions). */
typedef struct {
  md_sharding **values; /* the first occurrence's shardings (also on a failed list, as the parser left them) */
  uint32_t nvalues;
  const char *error;    /* NULL if it parsed */
  ir_span text;         /* the first occurrence's text: the spans that point into it move */
  uint32_t offset;      /* the first occurrence's offset */
  bool shared;          /* false: parse each occurrence */
  size_t clone_bytes;   /* what a copy of the values takes (clones_size()) */
} parsed_text;

typedef struct {
  uintptr_t lo, hi; /* spans inside [lo, hi] move */
  const char *to;   /* ... to the same place in this text */
  uint32_t offset;  /* where this occurrence starts, minus where the first one did */
} rebase;

static ir_span moved(const rebase *r, ir_span s) {
  uintptr_t p = (uintptr_t)s.p;
  if (s.p && p >= r->lo && p + s.n <= r->hi) s.p = r->to + (p - r->lo);
  return s;
}

static md_axis_ref *moved_refs(md_axis_ref *to, const rebase *r, const md_axis_ref *from, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    to[i] = from[i];
    to[i].name = moved(r, from[i].name);
  }
  return to;
}

static uint32_t refs_in(const md_sharding *t) {
  uint32_t n = t->nreplicated + t->nunreduced + t->nmanual_axes;
  for (uint32_t d = 0; d < t->rank && t->dims; d++) n += t->dims[d].naxes;
  return n;
}

/* A header of its own for a plain sharding; a tuple copies its arrays too. */
static size_t clone_size(const md_sharding *t) {
  if (!t->nelements) return sizeof(md_sharding);
  return sizeof(md_sharding) + (t->dims ? t->rank : 0) * sizeof(md_dim_sharding) + refs_in(t) * sizeof(md_axis_ref) +
         t->nelements * sizeof(md_sharding *);
}

/* A tuple's copy for another occurrence: its arrays (after the header in `mem`) with their names moved,
 * and each element copied whole. */
static void clone_tuple_arrays(sc_arena *a, const rebase *r, const md_sharding *t, md_sharding *s, char *mem);
static md_sharding *clone_whole(sc_arena *a, const rebase *r, const md_sharding *t, char *mem);

/* The copy of `t` for another occurrence, carved from `mem` (clone_size(t) bytes). Arrays of numbers
 * and (outside tuples) of axis refs are shared: they never change after the build. */
static md_sharding *clone_moved(sc_arena *a, const rebase *r, const md_sharding *t, char *mem) {
  md_sharding *s = (md_sharding *)mem;
  *s = *t;
  s->text = moved(r, t->text);
  s->mesh_name = moved(r, t->mesh_name);
  s->offset = t->offset + r->offset;
  if (t->nelements) clone_tuple_arrays(a, r, t, s, mem + sizeof(md_sharding));
  return s;
}

static md_sharding *clone_whole(sc_arena *a, const rebase *r, const md_sharding *t, char *mem) {
  md_sharding *s = (md_sharding *)mem;
  *s = *t;
  s->text = moved(r, t->text);
  s->mesh_name = moved(r, t->mesh_name);
  s->offset = t->offset + r->offset;
  clone_tuple_arrays(a, r, t, s, mem + sizeof(md_sharding));
  return s;
}

static void clone_tuple_arrays(sc_arena *a, const rebase *r, const md_sharding *t, md_sharding *s, char *mem) {
  uint32_t ndims = t->dims ? t->rank : 0;
  md_dim_sharding *dims = (md_dim_sharding *)mem;
  md_axis_ref *refs = (md_axis_ref *)(dims + ndims);
  if (ndims) {
    s->dims = dims;
    for (uint32_t d = 0; d < ndims; d++) {
      dims[d] = t->dims[d];
      if (t->dims[d].naxes) dims[d].axes = moved_refs(refs, r, t->dims[d].axes, t->dims[d].naxes);
      refs += t->dims[d].naxes;
    }
  }
  if (t->nreplicated) s->replicated = moved_refs(refs, r, t->replicated, t->nreplicated);
  refs += t->nreplicated;
  if (t->nunreduced) s->unreduced = moved_refs(refs, r, t->unreduced, t->nunreduced);
  refs += t->nunreduced;
  if (t->nmanual_axes) s->manual_axes = moved_refs(refs, r, t->manual_axes, t->nmanual_axes);
  refs += t->nmanual_axes;
  if (t->nelements) {
    s->elements = (md_sharding **)refs;
    for (uint32_t i = 0; i < t->nelements; i++) {
      const md_sharding *e = t->elements[i];
      size_t size = sizeof(md_sharding) + (e->dims ? e->rank : 0) * sizeof(md_dim_sharding) +
                    refs_in(e) * sizeof(md_axis_ref) + e->nelements * sizeof(md_sharding *);
      s->elements[i] = clone_whole(a, r, e, ar_alloc(a, size));
    }
  }
}

ir_span md_sharding_pos(const md_sharding *s, ir_span name) {
  const md_sharding *first = s ? s->same_as : NULL;
  if (!first || first == s || !name.p) return name;
  uintptr_t lo = (uintptr_t)first->text.p, p = (uintptr_t)name.p;
  if (p < lo || p + name.n > lo + first->text.n) return name;
  return ir_span_of(s->text.p + (p - lo), name.n);
}

/* The shift of the op annotation of `op` that holds `s` (0 when none shares an earlier parse). */
static uint32_t occurrence_shift(const md_model *model, const ir_op *op, const md_sharding *s) {
  const md_op_info *info = md_model_op(model, op);
  if (!info) return 0;
  const md_annotation *own[] = {md_info_sdy(info), md_info_gspmd(info), md_info_sharding(info)};
  for (size_t k = 0; k < sizeof own / sizeof *own; k++)
    for (uint32_t i = 0; own[k]->shift && i < own[k]->nvalues; i++)
      if (own[k]->values[i] == s) return own[k]->shift;
  return 0;
}

const md_sharding *md_sharding_occurrence(sc_arena *a, const md_model *model, const ir_op *op, const md_sharding *s) {
  uint32_t shift = s && !s->nelements ? occurrence_shift(model, op, s) : 0;
  if (!shift) return s;
  /* offsets are below 2^32, so the occurrence's lies at s->offset + shift (mod 2^32); what the parse
   * read from the input moves, what it built (an unquoted GSPMD string) stays */
  int64_t delta = (int64_t)(uint32_t)(s->offset + shift) - (int64_t)s->offset;
  const ir_module *m = model->module;
  rebase r = {(uintptr_t)m->buf, (uintptr_t)m->buf + m->len, m->buf + delta, shift};
  return clone_moved(a, &r, s, ar_alloc(a, sizeof(md_sharding)));
}

/* Copies of the shardings `t[0..n)` and the array holding them, in one allocation of `size` bytes
 * (clones_size()). */
static size_t clones_size(md_sharding *const *t, uint32_t n) {
  size_t size = n * sizeof(md_sharding *);
  for (uint32_t i = 0; i < n; i++) size += clone_size(t[i]);
  return size;
}

static md_sharding **clone_all(sc_arena *a, const rebase *r, md_sharding *const *t, uint32_t n, size_t size) {
  if (!n) return NULL;
  char *mem = ar_alloc(a, size);
  md_sharding **vals = (md_sharding **)mem;
  mem += n * sizeof(md_sharding *);
  if (n == 1) { /* the usual case: no need to size each one */
    vals[0] = clone_moved(a, r, t[0], mem);
    return vals;
  }
  for (uint32_t i = 0; i < n; i++) {
    vals[i] = clone_moved(a, r, t[i], mem);
    mem += clone_size(t[i]);
  }
  return vals;
}

/* True if the parser gave `s` (or an element) a mesh of its own: an inline mesh, which is not copied. */
static bool has_inline_mesh(const md_sharding *s) {
  if (!s) return false;
  if (s->mesh) return true;
  for (uint32_t i = 0; i < s->nelements; i++)
    if (has_inline_mesh(s->elements[i])) return true;
  return false;
}

/* True if the Shardy text `v` may reference one of the module's aliases (`#name`, not `#sdy...`). */
static bool mentions_alias(const ir_module *m, ir_span v) {
  if (!m->naliases) return false;
  for (const char *p = v.p, *e = v.p + v.n; (p = memchr(p, '#', (size_t)(e - p))) != NULL; p++)
    if (!(e - p >= 5 && memcmp(p, "#sdy.", 5) == 0)) return true;
  return false;
}

static void mark_same(md_sharding *s) {
  s->same_as = s;
  for (uint32_t i = 0; i < s->nelements; i++) mark_same(s->elements[i]);
}

/* Parses `v` (a `kind` text at `off`), then resolves (Shardy) or maps (GSPMD) what it gives. */
static void parse_text(builder *b, int kind, ir_span v, uint32_t off, parsed_text *p) {
  memset(p, 0, sizeof *p);
  p->text = v;
  p->offset = off;
  if (kind == TEXT_SDY_LIST) {
    if (md_parse_sdy_sharding_per_value(b->a, &b->aliases, v, off, &p->values, &p->nvalues, &p->error) == 0) p->error = NULL;
    if (p->nvalues > MD_MAX_VALUES) { /* more than an annotation counts (a 4 GB list): refused as text */
      p->values = NULL, p->nvalues = 0;
      p->error = "a sharding list longer than 2^29 - 1 values";
    }
  } else {
    md_sharding *s =
        kind == TEXT_SDY ? md_parse_sdy_sharding(b->a, &b->aliases, v, off, &p->error) : parse_gspmd_text(b, v, off, &p->error);
    if (s) {
      p->values = ar_alloc(b->a, sizeof *p->values);
      p->values[0] = s;
      p->nvalues = 1;
      p->error = NULL;
    }
  }
  /* another occurrence of the text is a copy with its positions moved, unless positions are not the
   * text's: an inline mesh, or an alias's definition read in its place */
  p->shared = kind == TEXT_GSPMD || !mentions_alias(b->m, v);
  for (uint32_t i = 0; i < p->nvalues; i++) p->shared &= !has_inline_mesh(p->values[i]);
  for (uint32_t i = 0; i < p->nvalues; i++) {
    if (kind == TEXT_GSPMD) map_gspmd(b->a, p->values[i], b->model->effective);
    else resolve(b->model, p->values[i]);
    if (p->shared) mark_same(p->values[i]);
  }
  if (p->shared) p->clone_bytes = clones_size(p->values, p->nvalues);
}

/* True if no value of a parse is a tuple: those are shared whole between occurrences. */
static bool all_plain(const parsed_text *p) {
  for (uint32_t i = 0; i < p->nvalues; i++)
    if (p->values[i]->nelements) return false;
  return true;
}

/* The shardings written as `v` at `off` into `an` (values, nvalues, shift): false with *error if the text
 * does not parse (values as the parser leaves them). A later occurrence of a text shares the first one's
 * shardings when `share` allows (an op's own annotations: md_sharding_occurrence() finds the occurrence
 * from the op) and none is a tuple; else it gets copies with their positions moved. */
static bool shardings_of(builder *b, int kind, ir_span v, uint32_t off, bool share, md_annotation *an,
                         const char **error) {
  bool found;
  void **slot = md_memo_slot(&b->parsed, (uint64_t)kind, v, ir_span_of(NULL, 0), &found);
  parsed_text *p = *slot, fresh;
  if (!found) {
    p = ar_alloc(b->a, sizeof *p);
    *slot = p;
    parse_text(b, kind, v, off, p);
  } else if (p->shared && share && all_plain(p)) {
    an->values = p->values;
    an->nvalues = p->nvalues;
    an->shift = off - p->offset; /* mod 2^32 */
    *error = p->error;
    return !p->error;
  } else if (p->shared) {
    rebase r = {(uintptr_t)p->text.p, (uintptr_t)p->text.p + p->text.n, v.p, off - p->offset};
    an->values = clone_all(b->a, &r, p->values, p->nvalues, p->clone_bytes);
    an->nvalues = p->nvalues;
    *error = p->error;
    return !p->error;
  } else {
    parse_text(b, kind, v, off, &fresh);
    p = &fresh;
  }
  an->values = p->values;
  an->nvalues = p->nvalues;
  *error = p->error;
  return !p->error;
}

/* ---- build -------------------------------------------------------------------------------------- */

/* An op's GSPMD sharding attribute: `mhlo.sharding`, or HLO's `sharding` unless it is a Shardy op's own
 * (`<@mesh, ...>`, `#sdy...`; an sdy op's `sharding` always is); NULL if none. */
static const ir_attr *op_gspmd_attr(const ir_attrs *attrs, bool sdy_op) {
  const ir_attr *at = FIND_ATTR(attrs, "mhlo.sharding");
  if (!at && !sdy_op) at = FIND_ATTR(attrs, "sharding");
  ir_span v = at ? ir_span_trim(at->value) : ir_span_of(NULL, 0);
  return at && !ir_span_starts(v, "<") && !ir_span_starts(v, "#sdy") ? at : NULL;
}

static void parse_value_attrs(builder *b, md_value_annotations *va, const ir_attrs *attrs, const ir_op *func,
                              const char *what) {
  const ir_attr *at = FIND_ATTR(attrs, "sdy.sharding");
  if (at) parse_annotation(b, &va->sdy, at, TEXT_SDY, false, func, func->pos.offset, what);
  at = FIND_ATTR(attrs, "mhlo.sharding");
  if (!at) at = FIND_ATTR(attrs, "sharding");
  if (at) parse_annotation(b, &va->gspmd, at, TEXT_GSPMD, false, func, func->pos.offset, what);
}

/* Fills `info` and, for sdy / round-trip manual ops, `x` (the caller keeps it apart if it is not empty). */
static void parse_op_annotations(builder *b, ir_op *op, md_op_more *info, op_annotations *ann, md_sdy_op_info *x) {
  sc_arena *a = b->a;
  ir_module *m = b->m;
  if (is_func(op)) {
    md_func_annotations *fa = NULL; /* made for the first annotated argument or result */
    ir_block *entry = (op->nregions && ir_op_regions(op)[0]->nblocks) ? ir_op_regions(op)[0]->blocks[0] : NULL;
    if (entry && m->format != SC_FMT_HLO) { /* HLO: the parameter instructions carry the shardings */
      bool any = false;
      for (uint32_t k = 0; k < entry->nargs && !any; k++) any = ir_value_attrs(entry->args[k])->n > 0;
      if (any) {
        fa = ar_calloc(a, 1, sizeof *fa);
        fa->nargs = entry->nargs;
        fa->args = ar_calloc(a, entry->nargs + 1, sizeof *fa->args);
        for (uint32_t k = 0; k < entry->nargs; k++)
          if (ir_value_attrs(entry->args[k])->n)
            parse_value_attrs(b, &fa->args[k], ir_value_attrs(entry->args[k]), op, md_indexed_name(a, "arg", k));
      }
    }
    bool any = false;
    for (uint32_t k = 0; k < ir_op_nresult_attrs(op) && !any; k++) any = ir_op_result_attrs(op)[k].n > 0;
    if (any) {
      if (!fa) fa = ar_calloc(a, 1, sizeof *fa);
      fa->nresults = ir_op_nresult_attrs(op);
      fa->results = ar_calloc(a, ir_op_nresult_attrs(op) + 1, sizeof *fa->results);
      for (uint32_t k = 0; k < ir_op_nresult_attrs(op); k++)
        if (ir_op_result_attrs(op)[k].n)
          parse_value_attrs(b, &fa->results[k], &ir_op_result_attrs(op)[k], op, md_indexed_name(a, "result", k));
    }
    if (fa) info->func = fa;
    return;
  }
  if (op == m->module || op->kind == SC_OP_SDY_MESH) return;
  if (ir_op_attrs(op)->n) {
    const ir_attr *at = FIND_ATTR(ir_op_attrs(op), "sdy.sharding");
    if (at) parse_annotation(b, &ann->sdy, at, TEXT_SDY_LIST, true, op, op->pos.offset, NULL);
    at = op_gspmd_attr(ir_op_attrs(op), ir_op_kind_is_sdy(op->kind));
    if (at) parse_annotation(b, &ann->gspmd, at, TEXT_GSPMD, true, op, op->pos.offset, NULL);
  }
  if (ir_op_kind_is_sdy(op->kind)) parse_sdy_op(b, op, info, ann, x);
  else if (ir_op_attrs(op)->n) parse_roundtrip_manual(b, op, x);
}

static bool sdy_op_empty(const md_sdy_op_info *x) {
  return !x->in_shardings.present && !x->out_shardings.present && !x->has_manual_axes;
}

static bool info_empty(const md_op_more *i, const op_annotations *ann) {
  return !ann->sdy.present && !ann->gspmd.present && !ann->sharding.present && !i->items->n && i->func == &md_no_func;
}

static bool annotation_written(const md_annotation *an) { return an->present || an->failed || an->nvalues; }

/* The record of an annotation that was written (md_no_annotation for one that was not). */
static const md_annotation *keep_annotation(sc_arena *a, const md_annotation *an) {
  if (!annotation_written(an)) return &md_no_annotation;
  md_annotation *kept = ar_alloc(a, sizeof *kept);
  *kept = *an;
  return kept;
}

/* An op's record (zeroed): its one annotation in place when it has nothing else, else `full` behind
 * `more` with each annotation kept apart. */
static void keep_info(sc_arena *a, md_op_info *info, md_op_more *full, const op_annotations *ann) {
  const md_annotation *each[3] = {&ann->sdy, &ann->gspmd, &ann->sharding};
  int written = 0, kind = MD_ANN_NONE;
  for (int k = 0; k < 3; k++)
    if (annotation_written(each[k])) written++, kind = MD_ANN_SDY + k;
  if (written <= 1 && full->sdy_op == &md_no_sdy_op && full->func == &md_no_func && full->items == &md_no_items) {
    if (written) info->ann = *each[kind - MD_ANN_SDY], info->ann_kind = (uint8_t)kind;
    return;
  }
  full->sdy = keep_annotation(a, &ann->sdy);
  full->gspmd = keep_annotation(a, &ann->gspmd);
  full->sharding = keep_annotation(a, &ann->sharding);
  md_op_more *more = ar_alloc(a, sizeof *more);
  *more = *full;
  info->more = more;
}

static bool is_jax_name(ir_span n) { return ir_span_starts(n, "jit_") || ir_span_starts(n, "pjit_"); }

static bool has_jax_attr(const ir_attrs *attrs) {
  for (uint32_t i = 0; attrs && i < attrs->n; i++)
    if (ir_span_starts(attrs->v[i].name, "jax.")) return true;
  return false;
}

/* JAX's own markers (see md_model.jax_produced). Linear in functions, arguments and results. */
static bool jax_markers(const ir_module *m) {
  if (m->exported) return true;
  if (m->module && (is_jax_name(ir_op_sym_name(m->module)) || has_jax_attr(ir_op_attrs(m->module)))) return true;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const ir_op *f = m->funcs[i];
    if (is_jax_name(ir_op_sym_name(f))) return true;
    for (uint32_t r = 0; r < ir_op_nresult_attrs(f); r++)
      if (has_jax_attr(&ir_op_result_attrs(f)[r])) return true;
    const ir_block *b = f->nregions && ir_op_regions(f)[0]->nblocks ? ir_op_regions(f)[0]->blocks[0] : NULL;
    for (uint32_t k = 0; b && k < b->nargs; k++)
      if (has_jax_attr(ir_value_attrs(b->args[k]))) return true;
  }
  return false;
}

sc_severity md_model_jax_policy_severity(const md_model *model, const ir_op *func, sc_severity sev) {
  if (!model || !model->jax_produced) return SC_SEV_NOTE;
  if (func && model->module && func != model->module->entry) return SC_SEV_NOTE;
  return sev;
}

/* The first of `names` (NULL-terminated) present in `attrs`: its leading integer into *out when it
 * has one (else *out is left as it was). */
static void first_int_attr(const ir_attrs *attrs, const char *const *names, int64_t *out) {
  for (; *names; names++) {
    const ir_attr *at = md_find_attr(attrs, *names);
    if (!at) continue;
    bool ok;
    int64_t v = leading_int(at->value, &ok);
    if (ok) *out = v;
    return;
  }
}

/* Folds the GSPMD sharding `attrs` hold (each distinct text parsed once, through `seen`) into `g`. */
static void fold_gspmd_attrs(builder *b, md_memo *seen, const ir_attrs *attrs, bool sdy_op, md_gspmd_axes *g) {
  const ir_attr *at = attrs && attrs->n ? op_gspmd_attr(attrs, sdy_op) : NULL;
  ir_span v = at ? ir_span_trim(at->value) : ir_span_of(NULL, 0);
  if (!v.n) return;
  bool found;
  md_memo_slot(seen, 0, v, ir_span_of(NULL, 0), &found);
  if (found) return;
  const char *err = NULL;
  md_gspmd_mesh_fold(g, parse_gspmd_text(b, v, off_of(b->m, v.p), &err));
}

/* The mesh a GSPMD module without one gets, as XLA's Shardy import makes it (gspmd_mesh.c): the axes
 * every tiled sharding of the module factors into, named "_axis_0", "_axis_1", ...; or, when those say
 * no more than one axis (no tiled sharding, one factor, no common factors, another device count), one
 * axis "_partitions" of num_partitions devices. Either way it names no axis of the user's. Without
 * num_partitions (`devices` 0) the shardings alone give the mesh, as they do to XLA's import, and a
 * module whose shardings give no axes (none tiled, or no common factors) gets none: NULL. Linear: each
 * distinct sharding text is parsed once. */
static md_mesh *synthesized_mesh(builder *b, int64_t devices) {
  const ir_module *m = b->m;
  md_gspmd_axes g;
  memset(&g, 0, sizeof g);
  md_memo seen;
  md_memo_init(&seen, b->a);
  for (uint32_t i = 0; i < m->nops && !g.failed; i++) {
    const ir_op *op = m->ops[i];
    ar_step(b->a, 1);
    if (!is_func(op)) {
      if (ir_op_attrs(op)->n && op->kind != SC_OP_SDY_MESH) fold_gspmd_attrs(b, &seen, ir_op_attrs(op), ir_op_kind_is_sdy(op->kind), &g);
      continue;
    }
    const ir_block *entry = op->nregions && ir_op_regions(op)[0]->nblocks ? ir_op_regions(op)[0]->blocks[0] : NULL;
    for (uint32_t k = 0; entry && k < entry->nargs; k++) fold_gspmd_attrs(b, &seen, ir_value_attrs(entry->args[k]), false, &g);
    for (uint32_t k = 0; k < ir_op_nresult_attrs(op); k++) fold_gspmd_attrs(b, &seen, &ir_op_result_attrs(op)[k], false, &g);
  }
  int64_t product = 1;
  for (uint32_t k = 0; k < g.naxes; k++) product *= g.axes[k];
  if (devices <= 0) {
    if (g.failed || !g.naxes || product < 2) return NULL;
    devices = product;
  }
  bool factored = !g.failed && g.naxes > 1 && product == devices;
  md_mesh *syn = ar_calloc(b->a, 1, sizeof *syn);
  syn->name = ir_span_of("_partitions", 11);
  syn->naxes = factored ? g.naxes : 1;
  syn->axes = ar_calloc(b->a, syn->naxes, sizeof *syn->axes);
  for (uint32_t k = 0; k < syn->naxes; k++) {
    const char *name = factored ? ar_printf(b->a, "_axis_%u", k) : "_partitions";
    syn->axes[k].name = ir_span_of(name, (uint32_t)strlen(name));
    syn->axes[k].size = factored ? g.axes[k] : devices;
  }
  syn->devices = devices;
  syn->synthesized = true;
  return syn;
}

/* The ops' records while they are made (see md_model.info_blocks). */
typedef struct {
  SC_VEC(md_op_info *) blocks;
  uint64_t *has_info; /* one bit per op id */
  uint32_t n;         /* records kept */
} info_store;

/* Where the next kept record goes (zeroed): keep_info() writes it, info_keep() keeps it as an op's. */
static md_op_info *info_slot(sc_arena *a, info_store *s) {
  if (s->n / MD_INFO_BLOCK == s->blocks.n) {
    md_op_info *block = ar_calloc(a, MD_INFO_BLOCK, sizeof *block);
    SC_PUSH(a, s->blocks, block);
  }
  return &s->blocks.v[s->n / MD_INFO_BLOCK][s->n % MD_INFO_BLOCK];
}

/* Keeps the record info_slot() gave as `op`'s (ops come in module order). */
static void info_keep(info_store *s, const ir_op *op) {
  sc_bit_set(s->has_info, op->id);
  s->n++;
}

/* The model's index of the records: counts per 64 ops. */
static void index_infos(sc_arena *a, const ir_module *m, md_model *model, const info_store *s) {
  uint32_t nwords = m->nops / 64 + 1;
  uint32_t *rank = ar_alloc(a, nwords * sizeof *rank);
  model->nannotated = sc_bit_counts(s->has_info, nwords, rank);
  model->has_info = s->has_info;
  model->info_rank = rank;
  model->info_blocks = s->blocks.v;
}

md_model *md_model_build(sc_arena *a, ir_module *m, const sc_options *options) {
  builder b;
  memset(&b, 0, sizeof b);
  b.a = a;
  b.m = m;
  b.aliases = md_aliases_of(m);
  md_model *model = ar_alloc(a, sizeof *model);
  b.model = model;
  model->module = m;
  model->num_partitions = -1;
  model->num_replicas = -1;
  func_map *funcs = ar_alloc(a, sizeof *funcs);
  md_func_map_build(a, m, funcs);
  model->funcs = funcs;
  model->jax_produced = jax_markers(m);
  const ir_op *module = m->module;
  if (module) {
    static const char *const np[] = {"mhlo.num_partitions", "num_partitions", NULL};
    static const char *const nr[] = {"mhlo.num_replicas", "num_replicas", "replica_count", NULL};
    first_int_attr(ir_op_attrs(module), np, &model->num_partitions);
    first_int_attr(ir_op_attrs(module), nr, &model->num_replicas);
    add_roundtrip_meshes(&b, module);
  }
  /* pass 1: meshes */
  for (uint32_t i = 0; i < m->nops; i++)
    if (m->ops[i]->kind == SC_OP_SDY_MESH) add_mesh_op(&b, m->ops[i]);
  model->meshes = b.meshes.v;
  model->nmeshes = (uint32_t)b.meshes.n;
  if (model->nmeshes > 16) { /* name lookups per sharding stay O(1) however many meshes there are */
    ar_step(a, model->nmeshes);
    hs_name_map *index = ar_alloc(a, sizeof *index);
    hs_name_map_init(index, a, model->nmeshes);
    for (uint32_t i = 0; i < model->nmeshes; i++) hs_name_map_put(index, model->meshes[i].name.p, model->meshes[i].name.n, i, NULL);
    model->mesh_index = index;
  }
  /* target / effective mesh (before the annotations: GSPMD shardings are mapped onto it as they are parsed) */
  if (options && options->mesh) model->target = target_mesh(a, options->mesh);
  model->platform = options ? options->platform : SC_PLATFORM_UNSPECIFIED;
  if (!model->platform && options && options->mesh) model->platform = options->mesh->platform;
  if (model->target) {
    model->effective = model->target;
  } else {
    const md_mesh *best = NULL;
    for (uint32_t i = 0; i < model->nmeshes; i++) {
      const md_mesh *me = &model->meshes[i];
      if (me->maximal || me->naxes == 0) continue;
      if (!best || me->devices > best->devices) best = me;
    }
    if (best) model->effective = best;
    else model->effective = synthesized_mesh(&b, model->num_partitions > 0 ? model->num_partitions : 0);
  }
  /* pass 2: annotations (records only for ops that have some; each distinct text parsed once) */
  md_memo_init(&b.parsed, a);
  info_store store = {{0}, ar_calloc(a, m->nops / 64 + 1, sizeof(uint64_t)), 0};
  bool manual_sources = false; /* an op that can make a manual context (md_build_manual) */
  for (uint32_t i = 0; i < m->nops; i++) {
    ir_op *op = m->ops[i];
    ar_step(a, 1 + ir_op_text_len(op) / 64); /* annotations are parsed from the op's text */
    manual_sources |= op->kind == SC_OP_SDY_MANUAL_COMPUTATION || op->kind == SC_OP_CALL ||
                      op->cc == SC_CC_FULL_TO_SHARD || op->cc == SC_CC_SHARD_TO_FULL;
    if (!ir_op_attrs(op)->n && !is_func(op) && !ir_op_kind_is_sdy(op->kind)) continue; /* nothing to parse */
    md_op_more full;
    memset(&full, 0, sizeof full);
    md_sdy_op_info x;
    memset(&x, 0, sizeof x);
    op_annotations ann;
    memset(&ann, 0, sizeof ann);
    parse_op_annotations(&b, op, &full, &ann, &x);
    if (!full.func) full.func = &md_no_func;
    if (!full.items) full.items = &md_no_items;
    if (sdy_op_empty(&x)) {
      full.sdy_op = &md_no_sdy_op;
    } else {
      md_sdy_op_info *kept = ar_alloc(a, sizeof *kept);
      *kept = x;
      full.sdy_op = kept;
    }
    if (full.sdy_op == &md_no_sdy_op && info_empty(&full, &ann)) continue;
    keep_info(a, info_slot(a, &store), &full, &ann);
    info_keep(&store, op);
    manual_sources |= ann.gspmd.present || x.has_manual_axes; /* GSPMD manual shardings, round-trip manual ops */
  }
  index_infos(a, m, model, &store);
  /* without an op that makes one, every op is in no manual context (model->manual16/32 stay NULL) */
  if (manual_sources) md_build_manual(&b);
  model->errors = b.errs.v;
  model->nerrors = (uint32_t)b.errs.n;
  return model;
}

const char *md_indexed_name(sc_arena *a, const char *kind, uint32_t i) {
  static const char *const k_args[] = {"arg 0", "arg 1", "arg 2", "arg 3", "arg 4", "arg 5", "arg 6", "arg 7"};
  static const char *const k_results[] = {"result 0", "result 1", "result 2", "result 3",
                                          "result 4", "result 5", "result 6", "result 7"};
  static const char *const k_operands[] = {"operand 0", "operand 1", "operand 2", "operand 3",
                                           "operand 4", "operand 5", "operand 6", "operand 7"};
  const char *const *table = !strcmp(kind, "arg")       ? k_args
                             : !strcmp(kind, "result")  ? k_results
                             : !strcmp(kind, "operand") ? k_operands
                                                        : NULL;
  if (table && i < 8) return table[i];
  return ar_printf(a, "%s %u", kind, i);
}

/* ---- queries ------------------------------------------------------------------------------------ */

const md_op_info *md_model_op(const md_model *model, const ir_op *op) {
  static const md_op_info empty; /* no annotation, no more */
  if (!model || !op || !model->module || op->id >= model->module->nops) return NULL;
  if (!sc_bit_test(model->has_info, op->id)) return &empty;
  return md_model_info_at(model, sc_bit_rank(model->has_info, model->info_rank, op->id));
}

const md_manual_context *md_model_manual(const md_model *model, const ir_op *op) {
  static const md_manual_context none;
  if (!model || !op || !model->module || op->id >= model->module->nops) return &none;
  uint32_t k = model->manual32 ? model->manual32[op->id] : model->manual16 ? model->manual16[op->id] : 0;
  return k ? model->manual_contexts[k - 1] : &none;
}

bool md_model_fully_manual(const md_model *model, const ir_op *op) {
  const md_mesh *mesh = model ? model->effective : NULL;
  if (!mesh || mesh->devices <= 1) return true;
  const md_manual_context *c = md_model_manual(model, op);
  if (c->gspmd_manual) return !c->gspmd_partial;
  /* The manual axes name axes of the manual computation's mesh; judge against that mesh unless the
   * target mesh has another device count (then the module's manual axes cannot cover it). */
  const md_mesh *m = c->mesh ? c->mesh : mesh;
  if (model->target && (!c->mesh || c->mesh->devices != model->target->devices)) m = model->target;
  for (uint32_t i = 0; i < m->naxes; i++) {
    if (m->axes[i].size <= 1 || m->axes[i].type == SC_AXIS_MANUAL) continue;
    bool man = false;
    for (uint32_t k = 0; k < c->nmanual_axes; k++) man |= ir_span_same(c->manual_axes[k], m->axes[i].name);
    if (!man) return false;
  }
  return true;
}

static const md_sharding *pick(const md_sharding *s, uint32_t index, uint32_t nresults) {
  if (!s) return NULL;
  if (s->kind == SC_SHARDING_TUPLE && nresults > 1) return index < s->nelements ? s->elements[index] : NULL;
  return index == 0 ? s : NULL;
}

const md_sharding *md_model_result_sharding(const md_model *model, const ir_op *op, uint32_t index) {
  const md_op_info *info = md_model_op(model, op);
  if (!info) return NULL;
  const md_sdy_op_info *x = md_info_sdy_op(info);
  if (md_info_sharding(info)->nvalues && index == 0) return md_info_sharding(info)->values[0];
  if (x->out_shardings.present) return index < x->out_shardings.nvalues ? x->out_shardings.values[index] : NULL;
  if (md_info_sdy(info)->nvalues) return index < md_info_sdy(info)->nvalues ? md_info_sdy(info)->values[index] : NULL;
  if (md_info_gspmd(info)->nvalues) return pick(md_info_gspmd(info)->values[0], index, op->nresults);
  return NULL;
}

static const md_sharding *value_ann(const md_value_annotations *va) {
  if (va->sdy.nvalues) return va->sdy.values[0];
  if (va->gspmd.nvalues) return va->gspmd.values[0];
  return NULL;
}

const md_sharding *md_model_arg_sharding(const md_model *model, const ir_op *func, uint32_t index) {
  const md_op_info *info = md_model_op(model, func);
  if (!info || index >= md_info_func(info)->nargs) return NULL;
  return value_ann(&md_info_func(info)->args[index]);
}

const md_sharding *md_model_func_result_sharding(const md_model *model, const ir_op *func, uint32_t index) {
  const md_op_info *info = md_model_op(model, func);
  if (!info || index >= md_info_func(info)->nresults) return NULL;
  return value_ann(&md_info_func(info)->results[index]);
}

const md_sharding *md_model_value_sharding(const md_model *model, const ir_value *v) {
  if (!model || !v) return NULL;
  if (ir_value_def(v)) return md_model_result_sharding(model, ir_value_def(v), v->index);
  if (ir_value_block(v) && ir_value_block(v)->parent && ir_value_block(v)->parent->parent) {
    const ir_op *owner = ir_value_block(v)->parent->parent;
    if (is_func(owner) && owner->nregions && ir_op_regions(owner)[0]->nblocks && ir_op_regions(owner)[0]->blocks[0] == ir_value_block(v))
      return md_model_arg_sharding(model, owner, v->index);
  }
  return NULL;
}

const md_sdy_item *md_model_sdy_item(const md_model *model, const ir_op *op, const char *name) {
  const md_op_info *info = md_model_op(model, op);
  return info ? items_named(md_info_items(info), name) : NULL;
}

bool md_model_sharding_group_id(const md_model *model, const ir_op *op, int64_t *out) {
  const ir_attr *a = ir_op_attr(op, "group_id");
  const md_sdy_item *it = a ? NULL : md_model_sdy_item(model, op, "group_id");
  if (!a && !it) return false;
  ir_span v = ir_span_trim(a ? a->value : it->value);
  int64_t x = 0;
  uint32_t i = 0;
  for (; i < v.n && v.p[i] >= '0' && v.p[i] <= '9' && x < INT64_MAX / 10; i++) x = x * 10 + (v.p[i] - '0');
  *out = x;
  return i > 0;
}

const ir_op *md_model_func(const md_model *model, ir_span name) {
  return model && model->funcs ? md_func_map_get(model->funcs, name) : NULL;
}
