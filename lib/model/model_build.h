/* model_build.h — what the files that build the sharding model share (model.c: annotations, sdy ops'
 * syntax, meshes, shardings, the build and queries; model_manual.c: manual contexts): the builder of
 * one md_model_build call and the helpers each lends the other (prefix md_, like the rest of the layer). Internal to lib/model;
 * a builder lives on the stack of the thread running the build. */
#ifndef SC_MODEL_MODEL_BUILD_H
#define SC_MODEL_MODEL_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "model/memo.h"
#include "model/model.h"
#include "util/hashset.h"

/* What an op that is no sdy op has (every md_op_info.sdy_op points somewhere). */
extern const md_sdy_op_info md_no_sdy_op;
/* What an op that is no function (or a function without argument or result annotations) has. */
extern const md_func_annotations md_no_func;

#define FIND_ATTR(attrs, lit) md_find_attr_n((attrs), (lit), sizeof(lit) - 1)

typedef SC_VEC(md_model_error) errvec;

typedef struct {
  sc_arena *a;
  ir_module *m;
  md_model *model;
  errvec errs;
  SC_VEC(md_mesh) meshes;
  md_memo parsed; /* sharding text -> its parse (each distinct text is parsed once) */
  md_aliases aliases; /* the module's alias table for the Shardy parsers, with their shared budget */
  /* Scratch for the custom-syntax items of the sdy op being scanned: each op's items are copied to an
   * exact-size array (most sdy ops have one; a vector per op took room for two). */
  SC_VEC(md_sdy_item) items;
} builder;

/* An op's annotations while the builder parses them (kept as records only when written). */
typedef struct {
  md_annotation sdy, gspmd, sharding;
} op_annotations;

/* Function lookup by symbol name (open addressing; modules may have thousands of functions, and HLO
 * control flow names its computations: a linear search per reference would be quadratic). */
typedef struct md_func_index {
  hs_name_map names; /* symbol name -> index in funcs (keyed with the arena's seed) */
  ir_op *const *funcs;
} func_map;

const ir_attr *md_find_attr_n(const ir_attrs *attrs, const char *name, size_t n);

const ir_attr *md_find_attr(const ir_attrs *attrs, const char *name);

void md_func_map_build(sc_arena *a, const ir_module *m, func_map *fm);

ir_op *md_func_map_get(const func_map *fm, ir_span name);

void md_build_manual(builder *b);

/* The mesh axes XLA's Shardy import gives a GSPMD module without a mesh (gspmd_mesh.c): fold every
 * tiled sharding of the module in; the axes are valid while `failed` is false and naxes > 0. */
#define MD_GSPMD_MAX_AXES 16
typedef struct {
  int64_t axes[MD_GSPMD_MAX_AXES];
  uint32_t naxes;
  bool failed; /* a tile assignment with no iota form, or no factor sequence common to all */
} md_gspmd_axes;
/* Folds `s` (a GSPMD sharding as parsed, not yet mapped; tuples element by element) into `g`. Returns
 * false once `g` has failed. */
bool md_gspmd_mesh_fold(md_gspmd_axes *g, const md_sharding *s);

#endif
