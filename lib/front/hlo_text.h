/* hlo_text.h — what the two files of the XLA HLO text front end share (hlo_text.c: errors, lexing,
 * attributes, shapes, computations and the module; hlo_instr.c: instructions and name resolution):
 * the parser state `P`, the character classes and inline scanners, and the functions each lends the
 * other (prefix hlo_). Internal to lib/front; one parser state per parse, owned by the thread running
 * it. */
#ifndef SC_FRONT_HLO_TEXT_H
#define SC_FRONT_HLO_TEXT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "front/front.h"
#include "ir/ir.h"

#define CANCEL_POLL_INTERVAL 4096u
#define MAX_NESTED_INSTR_DEPTH 512u

typedef struct {
  ir_op **v;
  uint32_t n, cap;
} opvec;

typedef struct {
  const char *buf;        /* whole input */
  const char *s;          /* cursor */
  const char *beg, *end;  /* this chunk */
  sc_arena *a;
  const ir_linemap *lines;
  ir_linemap own_lines;
  uint32_t max_depth, max_ops;
  const atomic_int *cancel;
  fe_parse_error *err;
  jmp_buf fail_jmp;
  uint32_t ninstr;
  /* Bracket stack for skip_group: expected closer and opener offset per level. */
  char *stk_close;
  uint32_t *stk_off;
  uint32_t stk_cap;
  /* Scratch stacks (instructions nest only through nested operand instructions). */
  ir_span *scratch_names, *scratch_types;
  ir_value **scratch_vals;
  uint32_t scratch_n, scratch_cap;
  ir_attr *at_v;
  uint32_t at_n, at_cap;
  /* The name-resolution hash table's buffer (see htab_init). */
  struct hslot *ht_v;
  uint32_t ht_cap;
  /* Instructions of the computation being parsed (computations do not nest); copied out exactly. */
  opvec cur_ops;
  uint32_t total_ops;
  /* Output. */
  opvec funcs;
  opvec allops;
  ir_op *module;          /* the module op and its block, parents of every computation */
  ir_block *mblock;
} P;

#if defined(__GNUC__) || defined(__clang__)
#define SC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SC_PRINTF(a, b)
#endif

#define OOM "out of memory (request arena limit reached)"

enum { C_WS = 1, C_NAME = 2, C_NAME0 = 4, C_GROUP = 8, C_VALSTOP = 16, C_NODASH = 32, C_IDENT = 64, C_DIM = 128 };
#define L (C_NAME | C_NAME0 | C_NODASH | C_IDENT)
#define D (C_NAME | C_NODASH | C_IDENT | C_DIM)
#define W (C_WS | C_VALSTOP)
#define G (C_GROUP | C_VALSTOP)
/* Character classes: name start, name char (C_NODASH: one that is not '-', the only name char that
 * may begin "->"), shape element type char (C_IDENT), dimension or layout list char (C_DIM), white
 * space, group scan stops, value scan stops. */
static const unsigned char ctab[256] = {
    ['a'] = L, ['b'] = L, ['c'] = L, ['d'] = L, ['e'] = L, ['f'] = L, ['g'] = L, ['h'] = L, ['i'] = L,
    ['j'] = L, ['k'] = L, ['l'] = L, ['m'] = L, ['n'] = L, ['o'] = L, ['p'] = L, ['q'] = L, ['r'] = L,
    ['s'] = L, ['t'] = L, ['u'] = L, ['v'] = L, ['w'] = L, ['x'] = L, ['y'] = L, ['z'] = L, ['A'] = L,
    ['B'] = L, ['C'] = L, ['D'] = L, ['E'] = L, ['F'] = L, ['G'] = L, ['H'] = L, ['I'] = L, ['J'] = L,
    ['K'] = L, ['L'] = L, ['M'] = L, ['N'] = L, ['O'] = L, ['P'] = L, ['Q'] = L, ['R'] = L, ['S'] = L,
    ['T'] = L, ['U'] = L, ['V'] = L, ['W'] = L, ['X'] = L, ['Y'] = L, ['Z'] = L, ['_'] = L,
    ['0'] = D, ['1'] = D, ['2'] = D, ['3'] = D, ['4'] = D, ['5'] = D, ['6'] = D, ['7'] = D, ['8'] = D,
    ['9'] = D, ['.'] = C_NAME | C_NODASH, ['-'] = C_NAME,
    [' '] = W, ['\t'] = W, ['\n'] = W, ['\r'] = W, ['\f'] = W, ['\v'] = W,
    ['('] = G, [')'] = G, ['['] = G, [']'] = G, ['{'] = G, ['}'] = G, ['"'] = G, ['/'] = G,
    [','] = C_VALSTOP | C_DIM,
};
#undef L
#undef D
#undef W
#undef G

/* Past the run of bytes of class `cls` from `s` (bounded by `e`): four bytes per bounds check. */
static inline const char *skip_cls(const char *s, const char *e, unsigned cls) {
  while (e - s >= 4) {
    if (!(ctab[(unsigned char)s[0]] & cls)) return s;
    if (!(ctab[(unsigned char)s[1]] & cls)) return s + 1;
    if (!(ctab[(unsigned char)s[2]] & cls)) return s + 2;
    if (!(ctab[(unsigned char)s[3]] & cls)) return s + 3;
    s += 4;
  }
  while (s < e && (ctab[(unsigned char)*s] & cls)) s++;
  return s;
}

/* A span equals a string literal (length known at compile time: no strlen per call). */
#define SPAN_IS(sp, lit) ((sp).n == sizeof(lit) - 1 && memcmp((sp).p, lit, sizeof(lit) - 1) == 0)

static inline bool is_ws(char c) { return ctab[(unsigned char)c] & C_WS; }
static inline bool is_name(char c) { return ctab[(unsigned char)c] & C_NAME; }
static inline bool is_name0(char c) { return ctab[(unsigned char)c] & C_NAME0; }
static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

static inline bool at_word_n(const P *p, const char *s, const char *w, size_t n) {
  if ((size_t)(p->end - s) < n || memcmp(s, w, n) != 0) return false;
  return s + n == p->end || !is_name(s[n]);
}
#define at_word(p, s, lit) at_word_n(p, s, lit, sizeof(lit) - 1)

/* What a bracket group is, for messages: "operand list of 'add'", "value of attribute 'sharding'". */
typedef struct {
  const char *what;
  ir_span name;
} gctx;

typedef struct {
  ir_op *func;
  ir_block *block;
  opvec params;
  uint32_t *param_nums; /* parallel to params */
  uint32_t param_cap;
  bool have_root;
} comp;

_Noreturn void hlo_fail(P *p, const char *at, const char *fmt, ...) SC_PRINTF(3, 4);

_Noreturn void hlo_fail_limit(P *p, const char *at, const char *fmt, ...) SC_PRINTF(3, 4);

_Noreturn void hlo_fail_cancelled(P *p, const char *at);

void *hlo_alloc(P *p, size_t n);

void *hlo_alloc_array(P *p, size_t count, size_t size);

void *hlo_grow(P *p, void *old, size_t oldn, size_t newn, size_t size);

/* The func/call record of an op that has its side record (every instruction and computation). */
ir_op_decl *hlo_decl_of(P *p, ir_op *op);

void hlo_opvec_push(P *p, opvec *v, ir_op *op);

uint32_t hlo_off(const P *p, const char *at);

uint32_t hlo_line_at(const P *p, const char *at);

ir_span hlo_span(const char *a, const char *b);

/* Skips white space and comments from `s`; returns the new position. */
const char *hlo_skip_ws_slow(P *p, const char *s);

void hlo_skip_ws(P *p);

/* A name: [%]?[A-Za-z_][A-Za-z0-9_.-]* (after '%' a digit may start it). Stops before "->".
 * Returns the end, or `s` if there is no name. `*bare` receives the name without '%'. */
const char *hlo_lex_name_at(const P *p, const char *s, bool allow_percent, ir_span *bare);

/* At an opener ( [ {: skips to just past its matching closer, over strings and comments.
 * `depth` is the structural depth the group opens at (counts against max_depth). */
const char *hlo_skip_group_at(P *p, const char *s, uint32_t depth, gctx g);

/* A bare or bracketed value: balanced groups, strings and other characters up to ',' or an
 * unmatched closer or white space at depth 0. `mesh[...] {axes}` (replica groups) is one value. */
const char *hlo_scan_value_at(P *p, const char *s, uint32_t depth, gctx g);

uint32_t hlo_parse_u32_span(ir_span v);

void hlo_attr_push(P *p, ir_attr at);

/* Parses (',' name '=' value)* at the cursor, pushing onto the attr scratch stack. `owner` names
 * what the attributes belong to, for messages. Returns the end of the last value (or `last_end`).
 * With `src` (instructions), each metadata= value sets *src (the last one wins). */
const char *hlo_parse_attrs(P *p, uint32_t depth, const char *last_end, const char *owner_kind,
                               ir_span owner, ir_op *instr, ir_srcloc *src);

ir_attrs hlo_attrs_take(P *p, uint32_t from);

ir_span hlo_strip_percent(ir_span s);

bool hlo_parse_shape(P *p, uint32_t depth, bool layout_adjacent, ir_span *out);

void hlo_count_op(P *p, const char *at);

void hlo_parse_instruction(P *p, comp *c, uint32_t depth);

void hlo_resolve_operands(P *p, comp *c);

/* Attributes whose values name computations. */
bool hlo_is_comp_attr(ir_span n);

void hlo_resolve_computations(P *p, ir_op **ops, uint32_t nops);

/* At '{' of a computation-valued attribute: does an instruction list follow (`to_apply={ p0 = ...`)
 * rather than computation names (`calls={%a, %b}`)? */
bool hlo_starts_inline_body(P *p, const char *s);

/* The same, inline for the common cases (nothing to skip, or one space before a token): most calls. */
static inline const char *skip_ws_at(P *p, const char *s) {
  const char *e = p->end;
  if (s < e && !is_ws(*s) && *s != '/') return s;
  if (s + 1 < e && *s == ' ' && !is_ws(s[1]) && s[1] != '/') return s + 1;
  return hlo_skip_ws_slow(p, s);
}

#endif
