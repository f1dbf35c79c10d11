/* front.h — the front ends: each reads one input format into the IR (ir/ir.h).
 *
 * lib/front/mlir_text.c (StableHLO/MLIR text, pretty and generic), hlo_text.c (XLA HLO text),
 * bytecode.c + bytecode_attr.c (MLIR bytecode: builtin, VHLO, sdy), exported.c (the jax.export
 * flatbuffer around bytecode); front.c sniffs the format and dispatches. Every function here runs on
 * the caller's thread, allocates only from in->arena (the module and error message live there) and
 * never aborts on bad input. */
#ifndef SC_FRONT_H
#define SC_FRONT_H

#include "ir/ir.h"

/* A syntax error from a front end: the first one, precisely. */
typedef struct {
  bool failed;
  bool cancelled;      /* stopped because *cancel became non-zero (not a syntax error) */
  bool limit;          /* a max_depth / max_ops bound was hit (reported as input-limit, SC0002) */
  uint32_t offset;
  const char *message; /* arena */
} fe_parse_error;

/* Front ends. They parse buf[begin, end) (whole-file offsets are kept for locations) and never fail
 * by crashing: on bad input they return NULL and fill *err. `max_depth`/`max_ops` bound the work. */
typedef struct {
  sc_arena *arena;
  const char *buf;
  size_t len;            /* whole buffer */
  uint32_t begin, end;   /* this chunk */
  const ir_linemap *lines;
  uint32_t max_depth, max_ops;
  const atomic_int *cancel;
} fe_parse_input;

/* True if the text at `p` starts an HLO computation: `ENTRY name {`, or `name {` / `name (params) ->
 * shape {` (names may hold '.', '-' and a leading '%'), which is how HLO without its `HloModule` header
 * starts. A top-level MLIR op is `module {`, `"op"(...)`, `%x = ...`, `#a = ...` or a dotted name
 * followed by `@symbol`, never a name and then '{' or '('. Pure; any thread. */
bool fe_starts_hlo_computation(const char *p, const char *end);

ir_module *fe_parse_mlir(const fe_parse_input *in, fe_parse_error *err);
ir_module *fe_parse_hlo(const fe_parse_input *in, fe_parse_error *err);
/* MLIR bytecode (lib/front/bytecode.c): buf[begin, end) is the whole artifact. The module's `buf` is
 * the reader's text pool, not the input: offsets are synthetic preorder positions (no lines). */
ir_module *fe_parse_bytecode(const fe_parse_input *in, fe_parse_error *err);
/* The same for bytecode at `p` (n bytes) inside a larger input (the Exported container); error
 * offsets are reported relative to `base_off`. */
ir_module *fe_read_bytecode(sc_arena *a, const uint8_t *p, size_t n, uint32_t base_off, const fe_parse_input *in,
                            fe_parse_error *err);
bool fe_is_bytecode(const char *buf, size_t len);
/* The front end for `format` (SC_FMT_AUTO/STABLEHLO: MLIR text). */
ir_module *fe_parse_format(sc_format format, const fe_parse_input *in, fe_parse_error *err);
/* The jax.export container (lib/front/exported.c) around MLIR bytecode. */
ir_module *fe_parse_exported(const fe_parse_input *in, fe_parse_error *err);
/* True if buf looks like Exported.serialize() output: a flatbuffer whose module field is MLIR bytecode. */
bool fe_is_exported(const char *buf, size_t len);
/* Sniffs the format: the bytecode magic => bytecode, "HloModule" first word => HLO, else StableHLO/MLIR. */
sc_format fe_detect_format(const char *buf, size_t len);

/* split-input-file (mlir-opt's -split-input-file): the chunks of buf between lines that begin with
 * "// -----"; one chunk for the whole buffer when `split` is false. Linear in len. */
typedef struct {
  uint32_t begin, end;
} fe_chunk;
size_t fe_split_chunks(sc_arena *a, const char *buf, size_t len, bool split, fe_chunk **out);
/* Only blanks and // comments: a chunk between separators that is no module at all. */
bool fe_chunk_is_blank(const char *buf, fe_chunk c);

#endif
