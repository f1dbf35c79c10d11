/* sdy_lex.h — internal: a small MLIR-attribute tokenizer shared by the Shardy attribute parsers
 * (lib/model/sdy_sharding.c), the model (lib/model/model.c) and the rules that read sdy ops' custom syntax.
 *
 * Tokens follow MLIR's lexer: "strings" with escapes, integers (a leading '-' is part of the number),
 * bare identifiers [A-Za-z_][A-Za-z0-9_$.]*, @symbols (also @"quoted"), #aliases (#sdy.sharding),
 * '->' and single punctuation characters. Nothing here allocates except error messages. */
#ifndef SC_SDY_LEX_H
#define SC_SDY_LEX_H

#include <stdbool.h>
#include <stdint.h>

#include "util/arena.h"
#include "ir/ir.h"
#include "model/model.h"

typedef enum {
  SDY_EOF = 0,
  SDY_STR,    /* "..." ; span excludes the quotes */
  SDY_INT,    /* -?[0-9]+ ; `ival` holds it unless `overflow` */
  SDY_IDENT,  /* bare identifier / keyword */
  SDY_SYM,    /* @name ; span excludes '@' (and quotes) */
  SDY_HASH,   /* #name.with.dots ; span includes '#' */
  SDY_ARROW,  /* -> */
  SDY_VALUE,  /* %name or %0#1 ; span includes '%' */
  SDY_PUNCT,  /* one character: < > [ ] { } ( ) , = : ? * etc. */
  SDY_BAD,    /* unterminated string or a character we do not know */
} sdy_tok_kind;

typedef struct {
  sdy_tok_kind kind;
  ir_span text;    /* the token's text (STR/SYM: contents) */
  const char *at;  /* first byte of the token in the buffer */
  int64_t ival;
  bool overflow;
  char ch;         /* SDY_PUNCT: the character */
} sdy_tok;

/* How deep `#a = #b`-style alias definitions nest before a reference is left as a plain token. */
#define SDY_ALIAS_DEPTH IR_ALIAS_DEPTH

/* Where the lexer reads: the text being lexed and the input offset of its start. */
typedef struct {
  const char *start, *p, *end;
  uint32_t base;
} sdy_frame;

typedef struct {
  sc_arena *a;
  const char *start, *p, *end;
  uint32_t base;        /* input offset of `start` */
  const char *err;      /* first error message (arena) or NULL */
  uint32_t err_offset;  /* input offset of the error */
  /* With aliases (sdy_lex_use_aliases), a `#name` the module's alias table defines reads as the alias's
   * value: the lexer descends into the definition's text and returns to the reference's after it. */
  md_aliases *aliases;
  uint8_t depth;                     /* definitions entered */
  sdy_frame outer[SDY_ALIAS_DEPTH];  /* where each entered definition was referenced */
} sdy_lex;

void sdy_lex_init(sdy_lex *lx, sc_arena *a, ir_span text, uint32_t offset);
/* Resolves `#alias` references through the module's alias table from here on, within the aliases'
 * budget (NULL: none). Offsets are then the input's (`text` must lie in the module's buffer, at
 * `offset` = its position there). */
void sdy_lex_use_aliases(sdy_lex *lx, md_aliases *aliases);
sdy_tok sdy_peek(sdy_lex *lx);
sdy_tok sdy_next(sdy_lex *lx);
/* Consumes the punctuation `c` if it is next. */
bool sdy_eat(sdy_lex *lx, char c);
/* Consumes the identifier `kw` if it is next. */
bool sdy_eat_kw(sdy_lex *lx, const char *kw);
/* Requires punctuation `c`; else records "expected 'c'" and returns false. */
bool sdy_expect(sdy_lex *lx, char c);
/* Records an error at the current position (only the first error is kept). Returns false. */
bool sdy_fail(sdy_lex *lx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool sdy_fail_at(sdy_lex *lx, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Skips one balanced bracket group or a single token. */
void sdy_skip_value(sdy_lex *lx);
bool sdy_at_end(sdy_lex *lx);
uint32_t sdy_offset(const sdy_lex *lx, const char *at);

/* Parsers positioned on the lexer (exported for the model and rules). On failure they return NULL/false
 * with lx->err set. */
/* `<` mesh-or-ref `,` `[` dims `]` ... `>` (the stripped TensorShardingAttr), or `#sdy.sharding<...>`. */
md_sharding *sdy_parse_tensor_sharding(sdy_lex *lx);
/* `<[...] (, device_ids=[...])? >` */
md_mesh *sdy_parse_mesh_body(sdy_lex *lx);
/* `{` axis-ref (`,` axis-ref)* `}` ; returns count via *n. */
bool sdy_parse_axis_list(sdy_lex *lx, md_axis_ref **out, uint32_t *n);
/* `"x"` or `"x":(pre)size` */
bool sdy_parse_axis_ref(sdy_lex *lx, md_axis_ref *out);
/* `[` tensor-sharding (`,` tensor-sharding)* `]` (stripped or full entries). */
bool sdy_parse_sharding_list(sdy_lex *lx, md_sharding ***out, uint32_t *n);

#endif
