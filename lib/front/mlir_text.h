/* mlir_text.h — what the files of the MLIR text front end share (mlir_text.c: lexer, value scopes,
 * ops, blocks and regions, the entry point; mlir_structure.c: groups, types, attribute dicts, locs;
 * mlir_op.c: the op pieces and the generic form's properties; mlir_fast.c: the byte-level fast path):
 * the token and the parser state `P`, the character classes, the hot lexer primitives as inline
 * functions, and the functions each file lends the others (prefix mt_). Internal to lib/front; one
 * parser state per parse, owned by the thread running it. */
#ifndef SC_FRONT_MLIR_TEXT_H
#define SC_FRONT_MLIR_TEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "front/front.h"
#include "ir/ir.h"

typedef enum {
  T_EOF = 0,
  T_PERCENT, /* %id, %id#N */
  T_AT,      /* @id, @"quoted" */
  T_HASH,    /* #id */
  T_BANG,    /* !id */
  T_CARET,   /* ^id */
  T_STRING,
  T_WORD,    /* bare identifier, keyword or number */
  T_ARROW,   /* -> */
  T_PUNCT,   /* one character: ( ) [ ] { } < > , : = ? * + - | etc. */
  T_OP2,     /* two-character operator that is not a bracket: <= >= */
  T_RESOURCES, /* {-# ... #-} file-level metadata */
  T_BAD,     /* lexical error; message in the parser */
} tok_kind;

#define LOOKAHEAD 128u /* mt_begins_op() looks at most ~2 tokens per result name, 64 names */

typedef struct {
  uint8_t kind;
  bool bol; /* first token on its line */
  char ch;  /* its first byte (0 at EOF): punctuation tests read no buffer */
  uint32_t off, len;
} tok;

typedef SC_VEC(ir_attr) attr_vec;
typedef SC_VEC(ir_value *) value_vec;
typedef SC_VEC(ir_span) span_vec;
typedef SC_VEC(ir_region *) region_vec;
typedef SC_VEC(ir_op *) op_vec;

/* The head of a one-result op on one line: `%name = op-name` (offsets of both). */
typedef struct {
  uint32_t res, res_end, name, name_end;
} raw_head;

typedef struct {
  const fe_parse_input *in;
  sc_arena *a;
  const char *buf;
  uint32_t begin, end;
  tok la[LOOKAHEAD]; /* ring buffer */
  uint32_t la_head, nla;
  uint32_t lex_off;  /* where lexing continues after the lookahead buffer */
  uint32_t last_end; /* one past the last token next() consumed */
  fe_parse_error *err;
  const char *bad_msg;
  uint32_t bad_off;
  ir_module *m;
  uint32_t nops; /* ops made so far, the implicit root included (m->ops is built once they are all made) */
  SC_VEC(ir_op *) funcs;
  ir_name_table names;     /* op names, interned as they are parsed (ir_op.name_id) */
  SC_VEC(ir_alias) aliases;
  uint32_t depth; /* region nesting */
  /* Scoped value table: open addressing, with an undo log for region exits. */
  struct slot {
    ir_span name;
    ir_value *v;
  } *slots;
  uint32_t nslots, nused;
  uint64_t seed; /* the request's hash key (util/hash.h): value names come from the input */
  SC_VEC(struct undo { uint32_t slot; ir_value *prev; }) undo;
  /* Scratch stacks for the lists of the op (or block) being parsed: each pushes above what the ops
   * around it pushed, then copies its entries to an exact-size arena array and pops them (take()),
   * so no per-op list grows by doubling or is copied more than once. */
  attr_vec s_attrs;
  value_vec s_values;
  span_vec s_spans;
  op_vec s_ops;
  /* Block arguments' types and attributes, until their block is made (mt_attach_arg_info): a block
   * keeps its arguments' types and attributes, not each value. */
  SC_VEC(struct arg_info { ir_value *arg; const ir_attrs *attrs; ir_span type; }) s_arg_info;
  /* The last `word<...>` unit (a type, #attr<..>, !type<..>) scanned as bytes: modules repeat a few
   * types and shardings thousands of times, and bytes equal to it scan the same way, so a memcmp
   * replaces the scan. One for types in lists (mt_raw_type_at), one for values (mt_skip_unit), so that a
   * sharding between two types does not evict the type. */
  ir_span last_type, last_unit;
  /* The last `<...>` group and `loc(...)` an op's fast pieces scanned (shardings and locations
   * repeat on consecutive ops), as last_unit. */
  ir_span last_group, last_loc;
  /* The last few type lists of trailers taken (mt_take_types): ops repeat their neighbours' trailers,
   * and a list written with the same bytes shares the array (its spans in the first one's text). */
  struct type_list {
    ir_span key; /* the bytes from the first type to the end of the last */
    ir_span *v;
    uint32_t n;
  } type_lists[4];
  uint32_t type_list_next;
  ir_op_types_cache op_types; /* ops repeat their neighbours' trailers: they share one record */
  /* The op head mt_fast_line() found after the line it ended (valid while lex_off == head_after). */
  raw_head head;
  uint32_t head_after; /* lex_off + 1 when `head` is valid, else 0 */
} P;

/* Copies vec.v[base, n) to an exact-size arena array (NULL when empty) and pops those entries. */
#define TAKE(p, vec, base, out, out_n)                                                \
  do {                                                                                \
    uint32_t n_ = (uint32_t)((vec).n - (base));                                       \
    (out) = NULL;                                                                     \
    if (n_) {                                                                         \
      (out) = ar_alloc((p)->a, n_ * sizeof *(vec).v);                           \
      memcpy((out), (vec).v + (base), n_ * sizeof *(vec).v);                          \
    }                                                                                 \
    (out_n) = n_;                                                                     \
    (vec).n = (base);                                                                 \
  } while (0)

/* TAKE for a trailer's types: P.s_spans[base, n) as an array (NULL when empty), the array of a recent
 * list written with the same bytes when there is one (nobody writes to type arrays); pops them. */
ir_span *mt_take_types(P *p, size_t base, uint32_t *n);
/* Takes the trailer's types pushed since `base` as op's: operands [base, outs), results [outs, top). */
void mt_take_op_types(P *p, ir_op *op, size_t base, size_t outs);
/* Takes a plain type list pushed since `base` (`: a, b`) as op's: its result types, or with no results
 * its operand types. */
void mt_take_type_list(P *p, ir_op *op, size_t base);

/* Character classes without locale calls, one table lookup per byte: the lexer's hot loop.
 * WORD = [A-Za-z0-9_$.], ID adds '-'; SPACE is white space other than '\n'; STEP is punctuation a
 * balanced-group scan steps over without looking at its neighbours. */
enum { C_SPACE = 1, C_NL = 2, C_WORD = 4, C_DIGIT = 8, C_STEP = 16, C_STR_STOP = 32 };
#define C_WS (C_SPACE | C_NL)
#define C_PLAIN (C_WS | C_WORD | C_STEP) /* what a balanced-group scan steps over byte by byte */
static const uint8_t k_cls[256] = {
    ['"'] = C_STR_STOP, ['\\'] = C_STR_STOP,
    [','] = C_STEP, [':'] = C_STEP, ['?'] = C_STEP, ['*'] = C_STEP, ['+'] = C_STEP, ['|'] = C_STEP,
    ['&'] = C_STEP, ['~'] = C_STEP, [';'] = C_STEP, ['='] = C_STEP, ['!'] = C_STEP,
    [' '] = C_SPACE, ['\t'] = C_SPACE, ['\r'] = C_SPACE, ['\f'] = C_SPACE, ['\v'] = C_SPACE, ['\n'] = C_NL,
    ['_'] = C_WORD,  ['$'] = C_WORD,   ['.'] = C_WORD,
    ['0'] = C_WORD | C_DIGIT, ['1'] = C_WORD | C_DIGIT, ['2'] = C_WORD | C_DIGIT, ['3'] = C_WORD | C_DIGIT,
    ['4'] = C_WORD | C_DIGIT, ['5'] = C_WORD | C_DIGIT, ['6'] = C_WORD | C_DIGIT, ['7'] = C_WORD | C_DIGIT,
    ['8'] = C_WORD | C_DIGIT, ['9'] = C_WORD | C_DIGIT,
    ['a'] = C_WORD, ['b'] = C_WORD, ['c'] = C_WORD, ['d'] = C_WORD, ['e'] = C_WORD, ['f'] = C_WORD, ['g'] = C_WORD,
    ['h'] = C_WORD, ['i'] = C_WORD, ['j'] = C_WORD, ['k'] = C_WORD, ['l'] = C_WORD, ['m'] = C_WORD, ['n'] = C_WORD,
    ['o'] = C_WORD, ['p'] = C_WORD, ['q'] = C_WORD, ['r'] = C_WORD, ['s'] = C_WORD, ['t'] = C_WORD, ['u'] = C_WORD,
    ['v'] = C_WORD, ['w'] = C_WORD, ['x'] = C_WORD, ['y'] = C_WORD, ['z'] = C_WORD,
    ['A'] = C_WORD, ['B'] = C_WORD, ['C'] = C_WORD, ['D'] = C_WORD, ['E'] = C_WORD, ['F'] = C_WORD, ['G'] = C_WORD,
    ['H'] = C_WORD, ['I'] = C_WORD, ['J'] = C_WORD, ['K'] = C_WORD, ['L'] = C_WORD, ['M'] = C_WORD, ['N'] = C_WORD,
    ['O'] = C_WORD, ['P'] = C_WORD, ['Q'] = C_WORD, ['R'] = C_WORD, ['S'] = C_WORD, ['T'] = C_WORD, ['U'] = C_WORD,
    ['V'] = C_WORD, ['W'] = C_WORD, ['X'] = C_WORD, ['Y'] = C_WORD, ['Z'] = C_WORD,
};

/* Bracket stack shared by the balanced-group skippers. */
typedef struct {
  char open;
  uint32_t off;
} bracket;

/* What the pieces of the op being parsed add to. */
typedef struct {
  ir_op *op;
  bool call_like, func_like, sdy_sharded, seen_trailer;
  size_t attrs, operands, names; /* where the op's entries begin on P.s_attrs, P.s_values, P.s_spans */
  value_vec pending_args; /* block arguments written before the op's first region */
  region_vec regions;
} op_state;

void mt_fail_at(P *p, uint32_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

ir_pos mt_pos_of(const P *p, uint32_t off);

/* From just after an opening '"': memchr to the closing quote, skipping backslash escapes; linear
 * even for long escape-heavy blobs. Sets *after one past the closing quote; false if unterminated. */
bool mt_scan_string(const char *b, uint32_t i, uint32_t end, uint32_t *after);

/* word ::= [A-Za-z0-9_$.]+ with an exponent sign inside a number (1.0e-05) */
uint32_t mt_word_end(const char *b, uint32_t off, uint32_t i, uint32_t end);

/* Lexes until the lookahead buffer holds k + 1 tokens. Out of line: most peeks hit the buffer. */
void mt_fill(P *p, uint32_t k);

void mt_check_bad(P *p, tok t);

void mt_define_value(P *p, ir_value *v);

ir_value *mt_lookup_value(P *p, ir_span name);

void mt_scope_pop(P *p, size_t mark);

/* Does `t` (with what follows) begin an op or block? `at_line_start` relaxes nothing; it is used for
 * the dotted-name-before-'}' case (a terminator without operands). */
bool mt_begins_op(P *p, uint32_t k);

bool mt_begins_toplevel_item(P *p, uint32_t k);

/* The fast path of mt_skip_group: scans the bytes of a group that opens at `open` directly, without
 * making tokens, when every byte is one the token path would merely step over (identifiers, numbers,
 * white space, simple punctuation, string literals, balanced brackets). Anything else (comments,
 * `{-#`, lone sigils, bad characters, mismatched brackets, deep nesting, a string that does not close)
 * returns false, and the token path runs from the start with its precise errors. On success *end is
 * one past the closer, exactly where the token path would stop. */
bool mt_raw_skip_group(const P *p, uint32_t open, uint32_t *end);

/* Skips one balanced group starting at the opener token (consumed here). Returns the offset one past
 * its closer. */
uint32_t mt_skip_group(P *p);

/* A value unit: a token plus a following balanced '<...>' (for #attr<..>, !type<..>, tensor<..>,
 * dense<..>), or a balanced group. Returns the end offset. Consumes. */
uint32_t mt_skip_unit(P *p);

/* Parses '{ name [= value], ... }' (the '{' is next) into `out`. */
void mt_parse_attr_dict(P *p, attr_vec *out);

/* One `word<...>` type at b[i] (after spaces), as fast_type() reads it, into *out; returns the
 * offset past it, or 0 when the bytes there are something else. */
uint32_t mt_raw_type_at(P *p, uint32_t i, ir_span *out);

/* A type: one unit (tensor<..>, !x.y<..>, i32, (..) -> ..). Returns its span. */
ir_span mt_parse_type(P *p);

/* Types separated by ',' inside '(' ... ')' (the '(' is next). */
void mt_parse_type_list_parens(P *p, span_vec *out);

ir_value *mt_new_value(P *p, ir_span name, uint32_t off);

/* `loc(...)`: the 'loc' word is next. Returns its span. */
ir_span mt_parse_loc(P *p);

bool mt_at_loc(P *p);

/* Block argument `%x: type {attrs}? loc(..)?` (the %x is next). */
ir_value *mt_parse_block_arg(P *p);

bool mt_is_call_like(ir_span name);

bool mt_is_func_like(ir_span name);

/* A func.func result list after '->': `(type {attrs}? loc(..)?, ...)` or a single type. */
void mt_parse_func_results(P *p, ir_op *op);

/* '(' type (',' type)* ')' of raw types at b[i] (after spaces): pushed on P.s_spans; returns the
 * offset past ')', or 0 (nothing pushed) for any other shape. */
uint32_t mt_raw_type_list_at(P *p, uint32_t i);

/* trailer ::= ':' function-type | ':' type (',' type)*      (the ':' is next)
 * The types are pushed on P.s_spans and taken as exact-size arrays. */
void mt_parse_trailer_types(P *p, ir_op *op, bool *seen);

void mt_add_region(P *p, ir_op *op, region_vec *regions, value_vec *pending);

void mt_map_generic_properties(P *p, ir_op *op, bool func_like);

/* result-list ::= result (',' result)* '='    result ::= %name (':' integer)?
 * (mt_begins_op() already checked the shape.) Returns false after an error. */
bool mt_parse_result_list(P *p, ir_op *op);
/* Gives op its n results, named names[i] (spans into the input, where each is defined), as one array. */
void mt_set_results(P *p, ir_op *op, const ir_span *names, uint32_t n);

/* operand ::= %name — pushed on the op's operand stacks (P.s_spans names, P.s_values values). */
void mt_push_operand(P *p, tok t);

/* A parenthesised group in an op: '(' (operand | block-arg | %iter '=' %init | loc(...) | other)* ')'.
 * Operand names, block-argument definitions (for the op's first region) and `%x = %init` pairs are
 * classified; everything else is stepped over. The '(' is next. Returns false after an error. */
/* End of a value name `%id` (id ::= [A-Za-z0-9_$.]+ ('-' [A-Za-z0-9_$.]+)* ('#' digits)?) starting
 * at b[i] == '%', or i when there is none: the lexer's T_PERCENT rule, without making a token. */
uint32_t mt_value_name_end(const char *b, uint32_t i, uint32_t end);

/* Generic form keeps symbols in properties: sym_name = "main", callee = @f, sym_visibility. */
void mt_complete_symbols(sc_arena *a, ir_op *op, bool call_like, bool func_like);

/* A new op at the next token, within the max_ops bound and not cancelled; NULL after an error. */
ir_op *mt_new_op(P *p, ir_op *parent_op, uint32_t at);

/* op-name ::= string-literal (generic form) | bare-id (custom form)
 * The elided builtins module/return/call/func get their dialect. Returns false after an error. */
bool mt_parse_op_name(P *p, op_state *st, tok name);

/* One piece of the op at token t. Returns false after an error. */
bool mt_parse_op_piece(P *p, op_state *st, tok t);

/* Fills *h when b[i] begins such a head, which mt_begins_op() accepts too; false for any other shape
 * (result groups, several results, line breaks or comments inside the head), left to the tokens. */
bool mt_raw_op_head(const P *p, uint32_t i, raw_head *h);

/* Where the next token would begin, when only white space (no comment) comes before it. */
uint32_t mt_skip_white(const P *p, uint32_t i);

/* Consumes the fast pieces from the lexing position (nothing buffered) to the end of the line or the
 * first piece the token path must read. True when the line ended and the next one begins an op with
 * a head mt_raw_op_head() reads: there the token path would end this op too. */
bool mt_fast_line(P *p, op_state *st);

ir_region *mt_parse_region(P *p, ir_op *parent, value_vec *entry_args);
/* Gives block `b` the types and attributes of its arguments (set: b->args, their block and index)
 * that mt_parse_block_arg noted last. */
void mt_attach_arg_info(P *p, ir_block *b);

static inline bool failed(const P *p) { return p->err->failed; }

static inline bool is_word_char(unsigned char c) { return k_cls[c] & C_WORD; }

/* Past the word characters from b[i]: four bytes a step while all four are (names are long). */
static inline uint32_t skip_word_chars(const char *b, uint32_t i, uint32_t end) {
  while (i + 4 <= end && (k_cls[(unsigned char)b[i]] & k_cls[(unsigned char)b[i + 1]] & k_cls[(unsigned char)b[i + 2]] &
                          k_cls[(unsigned char)b[i + 3]] & C_WORD))
    i += 4;
  while (i < end && (k_cls[(unsigned char)b[i]] & C_WORD)) i++;
  return i;
}

static inline tok peek(P *p, uint32_t k) {
  if (k >= p->nla) mt_fill(p, k);
  if (k >= LOOKAHEAD) k = LOOKAHEAD - 1;
  return p->la[(p->la_head + k) & (LOOKAHEAD - 1)];
}

static inline tok next(P *p) {
  if (!p->nla) mt_fill(p, 0);
  tok t = p->la[p->la_head];
  if (t.kind != T_EOF) p->last_end = t.off + t.len;
  p->la_head = (p->la_head + 1) & (LOOKAHEAD - 1);
  p->nla--;
  return t;
}

static inline bool is_punct(tok t, const P *p, char c) {
  (void)p;
  return t.kind == T_PUNCT && t.ch == c;
}

static inline bool tok_is_word(tok t, const P *p, const char *w) {
  size_t n = strlen(w);
  return t.kind == T_WORD && t.len == n && memcmp(p->buf + t.off, w, n) == 0;
}

static inline ir_span tspan(const P *p, tok t) { return ir_span_of(p->buf + t.off, t.len); }

/* Do the bytes at b[i] repeat `unit` (a token with its bracket group, or a group, scanned before)?
 * Equal bytes scan the same way, except that a closing '>' followed here by '=' is the `>=` operator
 * and the group would go on. */
static inline bool repeats(const P *p, uint32_t i, ir_span unit) {
  uint32_t n = unit.n;
  if (!n || p->end - i < n || !sc_bytes_eq(p->buf + i, unit.p, n)) return false;
  return unit.p[n - 1] != '>' || i + n >= p->end || p->buf[i + n] != '=';
}

#endif
