/* Unit tests for the XLA HLO text front end (lib/front/hlo_text.c). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/front.h"
#include "helpers.h"
#include "ir/ir.h"
#include "model/model.h"

static sc_arena *arena;
static ir_linemap lines;

static void setup(void) { arena = sc_arena_new(256u << 20); }
static void teardown(void) { sc_arena_free(arena); }

TestSuite(hlo_parse, .init = setup, .fini = teardown);

static ir_module *parse_n(const char *text, size_t len, fe_parse_error *err, uint32_t max_depth, uint32_t max_ops,
                          const atomic_int *cancel) {
  lines = ir_linemap_build(arena, text, len);
  fe_parse_input in = {arena, text, len, 0, (uint32_t)len, &lines, max_depth, max_ops, cancel};
  memset(err, 0, sizeof *err);
  return fe_parse_hlo(&in, err);
}

static ir_module *parse(const char *text, fe_parse_error *err) {
  return parse_n(text, strlen(text), err, 0, 0, NULL);
}

static ir_module *parse_ok(const char *text) {
  fe_parse_error err;
  ir_module *m = parse(text, &err);
  if (!m) {
    ir_pos p = ir_linemap_pos(&lines, err.offset);
    cr_assert_fail("unexpected syntax error at %u:%u: %s", p.line, p.col, err.message);
  }
  cr_assert_not(err.failed);
  return m;
}

/* Parses `text`, which must fail; returns the error. */
static fe_parse_error parse_bad(const char *text) {
  fe_parse_error err;
  ir_module *m = parse(text, &err);
  cr_assert_null(m, "expected a syntax error for: %s", text);
  cr_assert(err.failed);
  cr_assert_not(err.limit);
  cr_assert_not(err.cancelled);
  cr_assert_not_null(err.message);
  cr_assert_leq(err.offset, strlen(text));
  return err;
}

static bool span_is(ir_span s, const char *lit) { return ir_span_eq(s, lit); }

#define assert_span(s, lit)                                                                                   \
  cr_assert(span_is((s), (lit)), "expected '%s', got '" SC_SPAN_FMT "'", (lit), SC_SPAN_ARG(s))

static ir_op *instr(ir_op *func, const char *name) {
  ir_block *b = ir_op_regions(func)[0]->blocks[0];
  for (uint32_t i = 0; i < b->nops; i++)
    if (span_is(ir_op_sym_name(b->ops[i]), name)) return b->ops[i];
  cr_assert_fail("no instruction %s", name);
  return NULL;
}

static const char *attr_value(const ir_op *op, const char *name, char *buf, size_t cap) {
  const ir_attr *a = ir_op_attr(op, name);
  if (!a) return NULL;
  snprintf(buf, cap, SC_SPAN_FMT, SC_SPAN_ARG(a->value));
  return buf;
}

#define assert_attr(op, name, want)                                                                           \
  do {                                                                                                        \
    char buf_[4096];                                                                                          \
    const char *got_ = attr_value((op), (name), buf_, sizeof buf_);                                           \
    cr_assert_not_null(got_, "missing attribute %s", (name));                                                 \
    cr_assert_str_eq(got_, (want));                                                                           \
  } while (0)

/* Every structural invariant a consumer relies on. */
static void check_invariants(const ir_module *m, const char *buf, size_t len) {
  cr_assert_not_null(m->module);
  cr_assert_not_null(m->entry);
  cr_assert_eq(m->ops[0], m->module);
  cr_assert_eq(m->module->nregions, 1);
  cr_assert_eq(ir_op_regions(m->module)[0]->blocks[0]->nops, m->nfuncs);
  for (uint32_t i = 0; i < m->nops; i++) {
    const ir_op *op = m->ops[i];
    cr_assert_eq(op->id, i);
    cr_assert(ir_op_name(op).n > 0);
    ir_span text = ir_op_text(m, op);
    cr_assert(text.p >= buf && text.p + text.n <= buf + len);
    cr_assert_eq((uint32_t)(text.p + text.n - buf), op->end);
    cr_assert_eq(op->pos.offset, (uint32_t)(text.p - buf));
    for (uint32_t k = 0; k < ir_op_attrs(op)->n; k++) {
      const ir_attr *a = &op->attr_v[k];
      cr_assert(a->name.p >= buf && a->value.p + a->value.n <= buf + len);
      cr_assert_eq(a->offset, (uint32_t)(a->name.p - buf));
      cr_assert_eq(a->end, (uint32_t)(a->value.p + a->value.n - buf));
    }
    if (ir_op_depth(op) == 2) {
      cr_assert_eq(op->nresults, 1);
      cr_assert_eq(ir_value_def(ir_op_result(op, 0)), op);
      cr_assert_not_null(ir_op_func(op));
      for (uint32_t k = 0; k < op->noperands; k++) cr_assert_not_null(op->operands[k]);
      if (ir_op_callee(op).n) cr_assert_not_null(ir_module_func(m, ir_op_callee(op)), "callee " SC_SPAN_FMT, SC_SPAN_ARG(ir_op_callee(op)));
    }
    if (ir_op_depth(op) == 1) {
      const ir_block *b = ir_op_regions(op)[0]->blocks[0];
      for (uint32_t k = 0; k < b->nargs; k++) {
        cr_assert_not_null(b->args[k]);
        cr_assert_eq(ir_value_block(b->args[k]), b);
        cr_assert(ir_op_is(ir_value_def(b->args[k]), "parameter"));
      }
    }
  }
}

static const char *const BASIC =
    "HloModule jit_f, entry_computation_layout={(f32[8,16]{1,0})->f32[8,16]{1,0}}, replica_count=1,\n"
    "    num_partitions=8, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=8]>}}\n"
    "\n"
    "%add_comp (a: f32[], b: f32[]) -> f32[] {\n"
    "  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n"
    "  ROOT %sum = f32[] add(f32[] %a, f32[] %b)\n"
    "}\n"
    "\n"
    "ENTRY %main (p: f32[8,16]) -> f32[8,16] {\n"
    "  %p = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n"
    "  %c = f32[] constant(0)\n"
    "  %r = f32[8] reduce(%p, %c), dimensions={1}, to_apply=%add_comp, metadata={op_name=\"jit(f)/reduce_sum\" "
    "source_file=\"/home/u/model.py\" source_line=42 source_column=7}\n"
    "  ROOT %out = f32[8,16]{1,0} custom-call(%p), custom_call_target=\"tpu_custom_call\", "
    "sharding={devices=[2,1]<=[2]}, backend_config=\"{\\\"custom_call_config\\\": {}}\"\n"
    "}\n";

Test(hlo_parse, module_header_and_computations) {
  ir_module *m = parse_ok(BASIC);
  check_invariants(m, BASIC, strlen(BASIC));
  cr_assert_eq(m->format, SC_FMT_HLO);
  cr_assert(ir_op_is(m->module, "builtin.module"));
  assert_span(ir_op_sym_name(m->module), "jit_f");
  cr_assert_eq(ir_op_attrs(m->module)->n, 4);
  assert_attr(m->module, "entry_computation_layout", "{(f32[8,16]{1,0})->f32[8,16]{1,0}}");
  assert_attr(m->module, "replica_count", "1");
  assert_attr(m->module, "num_partitions", "8");
  assert_attr(m->module, "frontend_attributes", "{xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=8]>}}");
  cr_assert_eq(ir_linemap_pos(&lines, m->module->pos.offset).line, 1);
  cr_assert_eq(ir_op_depth(m->module), 0);

  cr_assert_eq(m->nfuncs, 2);
  cr_assert_eq(m->nops, 1 + 2 + 3 + 4);
  assert_span(ir_op_sym_name(m->funcs[0]), "add_comp");
  assert_span(ir_op_sym_name(m->funcs[1]), "main");
  cr_assert_eq(m->entry, m->funcs[1]);
  cr_assert(ir_op_is(m->funcs[0], "func.func"));
  cr_assert_eq(ir_op_depth(m->funcs[0]), 1);
  cr_assert_eq(ir_linemap_pos(&lines, m->funcs[0]->pos.offset).line, 4);
  cr_assert_eq(ir_linemap_pos(&lines, m->funcs[1]->pos.offset).line, 10);
  cr_assert_eq(ir_linemap_pos(&lines, m->funcs[1]->pos.offset).col, 1);
  assert_span(ir_op_func_result_types(m->funcs[1])[0], "f32[8,16]");
  cr_assert_eq(ir_module_func(m, ir_span_of("add_comp", 8)), m->funcs[0]);
}

Test(hlo_parse, instructions_operands_attrs) {
  ir_module *m = parse_ok(BASIC);
  ir_op *add_comp = m->funcs[0], *main_ = m->funcs[1];
  ir_block *b = ir_op_regions(main_)[0]->blocks[0];
  cr_assert_eq(b->nops, 4);
  const char *opcodes[] = {"parameter", "constant", "reduce", "custom-call"};
  const char *names[] = {"p", "c", "r", "out"};
  for (int i = 0; i < 4; i++) {
    assert_span(ir_op_name(b->ops[i]), opcodes[i]);
    assert_span(ir_op_sym_name(b->ops[i]), names[i]);
    assert_span(ir_op_result(b->ops[i], 0)->name, names[i]);
    cr_assert_eq(ir_op_depth(b->ops[i]), 2);
    cr_assert_eq(ir_op_func(b->ops[i]), main_);
    cr_assert_eq(b->ops[i]->parent_op, main_);
    cr_assert_eq(ir_op_block(b->ops[i], NULL, NULL, NULL), b);
    cr_assert_eq(ir_linemap_pos(&lines, b->ops[i]->pos.offset).line, 11 + (uint32_t)i);
    cr_assert_eq(ir_linemap_pos(&lines, b->ops[i]->pos.offset).col, 3);
  }
  ir_op *p = b->ops[0], *r = b->ops[2], *out = b->ops[3];
  assert_span(ir_value_type(ir_op_result(p, 0)), "f32[8,16]{1,0}");
  assert_span(ir_op_result_types(p)[0], "f32[8,16]{1,0}");
  cr_assert_eq(ir_op_attrs(p)->n, 1);
  assert_attr(p, "sharding", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  cr_assert_eq(b->nargs, 1);
  cr_assert_eq(b->args[0], ir_op_result(p, 0));
  cr_assert_eq(ir_value_attrs(b->args[0])->n, 1);

  cr_assert_eq(r->noperands, 2);
  cr_assert_eq(r->operands[0], ir_op_result(p, 0));
  cr_assert_eq(r->operands[1], ir_op_result(b->ops[1], 0));
  assert_span(ir_op_operand_name(r, 0), "p");
  assert_span(ir_op_operand_types(r)[0], "f32[8,16]{1,0}");
  assert_span(ir_op_operand_types(r)[1], "f32[]");
  assert_span(ir_op_callee(r), "add_comp");
  assert_attr(r, "to_apply", "%add_comp");
  assert_attr(r, "dimensions", "{1}");
  cr_assert(ir_op_src(r).known);
  assert_span(ir_op_src(r).file, "/home/u/model.py");
  cr_assert_eq(ir_op_src(r).line, 42);
  cr_assert_eq(ir_op_src(r).col, 7);
  cr_assert_eq(ir_op_attrs(r)->n, 3);

  cr_assert_eq(ir_op_attrs(out)->n, 4);
  assert_span(ir_op_attrs(out)->v[0].name, "ROOT");
  cr_assert_eq(ir_op_attrs(out)->v[0].value.n, 0);
  cr_assert_eq(ir_op_attrs(out)->v[0].offset, out->pos.offset);
  assert_attr(out, "custom_call_target", "\"tpu_custom_call\"");
  assert_attr(out, "sharding", "{devices=[2,1]<=[2]}");
  assert_attr(out, "backend_config", "\"{\\\"custom_call_config\\\": {}}\"");
  assert_span(ir_op_custom_call_target(out), "tpu_custom_call");
  cr_assert_not(ir_op_src(out).known);
  cr_assert(span_is(ir_op_text(m, out), "ROOT %out = f32[8,16]{1,0} custom-call(%p), custom_call_target=\"tpu_custom_call\", "
                                "sharding={devices=[2,1]<=[2]}, backend_config=\"{\\\"custom_call_config\\\": {}}\""));
  const ir_attr *sh = ir_op_attr(out, "sharding");
  cr_assert_eq(strncmp(BASIC + sh->offset, "sharding=", 9), 0);
  cr_assert_eq(BASIC[sh->end], ',');

  /* add_comp: parameters as block args in number order, operands with inline shapes. */
  ir_block *ab = ir_op_regions(add_comp)[0]->blocks[0];
  cr_assert_eq(ab->nargs, 2);
  assert_span(ab->args[0]->name, "a");
  assert_span(ab->args[1]->name, "b");
  ir_op *sum = instr(add_comp, "sum");
  cr_assert_eq(sum->operands[0], ab->args[0]);
  cr_assert_eq(sum->operands[1], ab->args[1]);
  cr_assert_not_null(ir_op_attr(sum, "ROOT"));
  cr_assert_null(ir_op_attr(instr(add_comp, "a"), "ROOT"));
}

Test(hlo_parse, tuple_shapes_layouts_comments_escapes) {
  const char *t =
      "// leading comment\n"
      "HloModule m, entry_computation_layout={(f32[8,128]{1,0:T(8,128)}, /*index=1*/token[])->(f32[8,128]{1,0:T(8,128)}, token[])}\n"
      "ENTRY e {\n"
      "  p0 = f32[8,128]{1,0:T(8,128)} parameter(0) // trailing comment\n"
      "  tok = token[] parameter(1)\n"
      "  /* block comment */ t = ((f32[8,128]{1,0:T(8,128)}, s32[]), token[], /*index=2*/ (pred[], (u8[2]{0}))) "
      "custom-call(p0, tok), custom_call_target=\"x\\\"y\\\\\", "
      "sharding={{devices=[2,1]<=[2]}, {replicated}, {maximal device=0}, {manual}, {replicated}}, "
      "frontend_attributes={xla.sdy.sharding=\"#sdy.sharding_per_value<[<@mesh, [{\\\"x\\\"}, {}]>]>\"}\n"
      "  g = (f32[8,128]{1,0:T(8,128)}, s32[]) get-tuple-element(t), index=0\n"
      "  ROOT r = (f32[8,128], token[]) tuple(p0, tok)\n"
      "}\n";
  ir_module *m = parse_ok(t);
  check_invariants(m, t, strlen(t));
  cr_assert_eq(m->nfuncs, 1);
  cr_assert_eq(m->entry, m->funcs[0]);
  ir_op *f = m->funcs[0];
  cr_assert_eq(ir_op_regions(f)[0]->blocks[0]->nops, 5);
  cr_assert_eq(ir_op_regions(f)[0]->blocks[0]->nargs, 2);
  ir_op *tt = instr(f, "t");
  assert_span(ir_value_type(ir_op_result(tt, 0)), "((f32[8,128]{1,0:T(8,128)}, s32[]), token[], /*index=2*/ (pred[], (u8[2]{0})))");
  cr_assert_eq(ir_linemap_pos(&lines, tt->pos.offset).line, 6);
  cr_assert_eq(ir_linemap_pos(&lines, tt->pos.offset).col, 23);
  assert_attr(tt, "custom_call_target", "\"x\\\"y\\\\\"");
  assert_attr(tt, "sharding", "{{devices=[2,1]<=[2]}, {replicated}, {maximal device=0}, {manual}, {replicated}}");
  assert_attr(tt, "frontend_attributes",
              "{xla.sdy.sharding=\"#sdy.sharding_per_value<[<@mesh, [{\\\"x\\\"}, {}]>]>\"}");
  assert_span(ir_value_type(ir_op_result(instr(f, "tok"), 0)), "token[]");
  assert_span(ir_value_type(ir_op_result(instr(f, "p0"), 0)), "f32[8,128]{1,0:T(8,128)}");
  assert_span(ir_value_type(ir_op_result(instr(f, "g"), 0)), "(f32[8,128]{1,0:T(8,128)}, s32[])");
  cr_assert_eq(instr(f, "g")->operands[0], ir_op_result(tt, 0));
  cr_assert_eq(ir_op_attrs(instr(f, "p0"))->n, 0);
}

Test(hlo_parse, computations_without_signature_or_entry) {
  const char *t = "HloModule module\n\n"
                  "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT add = f32[] add(a, b)\n}\n\n"
                  "body {\n  x = s32[] parameter(0), sharding={manual}\n  ROOT y = s32[] copy(x)\n}\n"
                  "cond {\n  x = s32[] parameter(0)\n  c = s32[] constant(5)\n  ROOT lt = pred[] compare(x, c), direction=LT\n}\n"
                  "last {\n"
                  "  param = f32[2,2] parameter(0),\n"
                  "    sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}\n"
                  "  ar = f32[2,2]{1,0} all-reduce(param), to_apply=sum,\n"
                  "    replica_groups={{2,0},{1,3}}, use_global_device_ids=true, channel_id=1\n"
                  "  ag = f32[2,2] all-gather(ar), replica_groups=[1,4]<=[4], dimensions={0}\n"
                  "  mg = f32[2,2] all-reduce(ag), replica_groups=mesh['x'=2,'y'=2] {'x'}, to_apply=%sum\n"
                  "  z = s32[] constant(0)\n"
                  "  ROOT w = s32[] while(z), condition=cond, body=body, sharding={manual}\n"
                  "}, execution_thread=\"main\"\n";
  ir_module *m = parse_ok(t);
  check_invariants(m, t, strlen(t));
  cr_assert_eq(m->nfuncs, 4);
  cr_assert_eq(m->entry, m->funcs[3]);
  assert_span(ir_op_sym_name(m->entry), "last");
  cr_assert_null(ir_op_func_result_types(m->entry));
  cr_assert_eq(ir_op_attrs(m->entry)->n, 1);
  assert_attr(m->entry, "execution_thread", "\"main\"");
  ir_op *ar = instr(m->entry, "ar");
  assert_span(ir_op_callee(ar), "sum");
  cr_assert_eq(ir_op_attrs(ar)->n, 4);
  assert_attr(ar, "replica_groups", "{{2,0},{1,3}}");
  assert_attr(ar, "channel_id", "1");
  assert_attr(instr(m->entry, "param"), "sharding", "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}");
  assert_attr(instr(m->entry, "ag"), "replica_groups", "[1,4]<=[4]");
  ir_op *mg = instr(m->entry, "mg");
  assert_attr(mg, "replica_groups", "mesh['x'=2,'y'=2] {'x'}");
  assert_span(ir_op_callee(mg), "sum");
  ir_op *w = instr(m->entry, "w");
  cr_assert_eq(ir_op_callee(w).n, 0);
  assert_attr(w, "condition", "cond");
  assert_attr(w, "body", "body");
  cr_assert_eq(ir_op_attrs(w)->n, 4);
  assert_span(ir_op_attrs(w)->v[3].name, "sharding");
}

/* XLA reads computations without the `HloModule` header (hand-written .hlo files, runner inputs): the
 * ENTRY computation, else the last one, is the entry; and `s32 [8]` as `s32[8]`. */
Test(hlo_parse, module_without_header_and_spaced_shapes) {
  const char *t = "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\n"
                  "ENTRY e {\n  p = s32 [8] parameter(0), sharding={devices=[2]0,1}\n"
                  "  q = (f32 [4], f32[4]) parameter(1), sharding={{replicated}, {replicated}}\n"
                  "  ROOT r = s32 [8]{0} copy(p)\n}\n";
  ir_module *m = parse_ok(t);
  check_invariants(m, t, strlen(t));
  cr_assert_eq(m->nfuncs, 2);
  assert_span(ir_op_sym_name(m->entry), "e");
  cr_assert_eq(ir_op_sym_name(m->module).n, 0, "no module name");
  cr_assert_eq(fe_detect_format(t, strlen(t)), SC_FMT_HLO);
  md_shape sh;
  cr_assert(md_parse_shape(arena, ir_value_type(ir_op_result(instr(m->entry, "p"), 0)), &sh) && sh.kind == SC_SHAPE_ARRAY && sh.rank == 1 &&
            sh.dims[0] == 8);
  cr_assert(md_parse_shape(arena, ir_value_type(ir_op_result(instr(m->entry, "q"), 0)), &sh) && sh.kind == SC_SHAPE_TUPLE && sh.nelems == 2 &&
            sh.elems[0].kind == SC_SHAPE_ARRAY && sh.elems[0].dims[0] == 4);
  const char *last = "a {\n  ROOT x = f32[] constant(1)\n}\nb {\n  ROOT y = f32[] constant(2)\n}\n";
  m = parse_ok(last);
  assert_span(ir_op_sym_name(m->entry), "b");
}

Test(hlo_parse, parameters_sorted_by_number) {
  const char *t = "HloModule m\nENTRY %e (a: f32[], b: f32[], c: f32[]) -> f32[] {\n"
                  "  %c = f32[] parameter(2)\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
                  "  %s = f32[] add(%a, %b)\n  ROOT %t = f32[] add(%s, %c)\n}\n";
  ir_module *m = parse_ok(t);
  ir_block *b = ir_op_regions(m->entry)[0]->blocks[0];
  cr_assert_eq(b->nargs, 3);
  assert_span(b->args[0]->name, "a");
  assert_span(b->args[1]->name, "b");
  assert_span(b->args[2]->name, "c");
  cr_assert_eq(b->args[2], ir_op_result(b->ops[0], 0));
  cr_assert_eq(ir_value_def(b->args[2]), b->ops[0]);
}

/* Numbers with a gap and a repeat (broken text): sorted by number, ties in written order. */
Test(hlo_parse, parameters_with_gaps_and_repeats_sorted_stably) {
  const char *t = "HloModule m\nENTRY e {\n  d = f32[] parameter(7)\n  b = f32[] parameter(1)\n"
                  "  c = f32[] parameter(1)\n  a = f32[] parameter(0)\n  e = f32[] parameter(9)\n"
                  "  ROOT r = f32[] add(a, b)\n}\n";
  ir_module *m = parse_ok(t);
  ir_block *b = ir_op_regions(m->entry)[0]->blocks[0];
  static const char *const order[] = {"a", "b", "c", "d", "e"};
  cr_assert_eq(b->nargs, 5);
  for (uint32_t i = 0; i < 5; i++) assert_span(b->args[i]->name, order[i]);
}

Test(hlo_parse, nested_operand_instruction_and_compact_gte) {
  const char *t = "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                  "  t = (f32[], f32[]) tuple(x, y)\n"
                  "  ROOT z = f32[] add(f32[] maximum(x, y), %t#1)\n}\n";
  ir_module *m = parse_ok(t);
  check_invariants(m, t, strlen(t));
  ir_block *b = ir_op_regions(m->entry)[0]->blocks[0];
  cr_assert_eq(b->nops, 5);
  ir_op *mx = b->ops[3], *z = b->ops[4];
  assert_span(ir_op_name(mx), "maximum");
  cr_assert_eq(ir_op_sym_name(mx).n, 0);
  assert_span(ir_value_type(ir_op_result(mx, 0)), "f32[]");
  cr_assert_eq(mx->noperands, 2);
  cr_assert_eq(ir_op_attrs(mx)->n, 0);
  cr_assert_eq(z->operands[0], ir_op_result(mx, 0));
  assert_span(ir_op_operand_name(z, 1), "t#1");
  cr_assert_eq(z->operands[1], ir_op_result(b->ops[2], 0));
  cr_assert_eq(mx->id + 1, z->id);
}

Test(hlo_parse, shape_may_be_omitted_and_special_values) {
  const char *t = "HloModule m, is_scheduled=true\nENTRY e {\n  a = s32[] parameter(0)\n"
                  "  b = add(a, a)\n"
                  "  c = f32[2,2] constant({{1, 2}, {3, -inf}})\n"
                  "  ROOT d = f32[<=4,?] custom-call(b, c), custom_call_target=\"k\", "
                  "backend_config={attn_heads = 32 : i64, s = \"a,b}\"}, operand_layout_constraints={s32[], f32[2,2]{1,0}}\n"
                  "}\n";
  ir_module *m = parse_ok(t);
  check_invariants(m, t, strlen(t));
  ir_op *b = instr(m->entry, "b");
  cr_assert_eq(ir_value_type(ir_op_result(b, 0)).n, 0);
  cr_assert_eq(ir_op_nresult_types(b), 0);
  cr_assert_eq(instr(m->entry, "c")->noperands, 0);
  ir_op *d = instr(m->entry, "d");
  assert_span(ir_value_type(ir_op_result(d, 0)), "f32[<=4,?]");
  assert_attr(d, "backend_config", "{attn_heads = 32 : i64, s = \"a,b}\"}");
  assert_attr(d, "operand_layout_constraints", "{s32[], f32[2,2]{1,0}}");
  assert_attr(m->module, "is_scheduled", "true");
}

Test(hlo_parse, one_line_module_and_crlf) {
  const char *t = "HloModule m\r\nENTRY e { p = f32[] parameter(0) ROOT n = f32[] negate(p), sharding={replicated} }\r\n";
  ir_module *m = parse_ok(t);
  check_invariants(m, t, strlen(t));
  cr_assert_eq(ir_op_regions(m->entry)[0]->blocks[0]->nops, 2);
  assert_attr(instr(m->entry, "n"), "sharding", "{replicated}");
}

Test(hlo_parse, chunk_offsets_are_whole_file) {
  const char *t = "junk before\nHloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n// -----\nmore junk";
  size_t b = strstr(t, "HloModule") - t, e = strstr(t, "// -----") - t;
  lines = ir_linemap_build(arena, t, strlen(t));
  fe_parse_input in = {arena, t, strlen(t), (uint32_t)b, (uint32_t)e, &lines, 0, 0, NULL};
  fe_parse_error err;
  ir_module *m = fe_parse_hlo(&in, &err);
  cr_assert_not_null(m, "%s", err.message);
  cr_assert_eq(m->base_offset, b);
  cr_assert_eq(m->end_offset, e);
  cr_assert_eq(ir_linemap_pos(&lines, m->module->pos.offset).line, 2);
  cr_assert_eq(ir_linemap_pos(&lines, m->ops[2]->pos.offset).line, 4);
  cr_assert_eq(m->ops[2]->pos.offset, (uint32_t)(strstr(t, "ROOT") - t));
}

Test(hlo_parse, header_without_name_and_stack_frames) {
  const char *t = "HloModule , is_scheduled=true\n"
                  "FileNames\n1 \"a.py\"\nFunctionNames\n1 \"f\"\n"
                  "FileLocations\n1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=5}\n"
                  "StackFrames\n1 {file_location_id=1 parent_frame_id=0}\n\n"
                  "ENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=\"x\" stack_frame_id=1}\n}\n";
  ir_module *m = parse_ok(t);
  cr_assert_eq(ir_op_sym_name(m->module).n, 0);
  assert_attr(m->module, "is_scheduled", "true");
  cr_assert_eq(m->nfuncs, 1);
  cr_assert_not(ir_op_src(m->ops[2]).known);

  t = "HloModule\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n";
  m = parse_ok(t);
  cr_assert_eq(ir_op_sym_name(m->module).n, 0);
  assert_span(ir_op_sym_name(m->entry), "e");
  t = "HloModule\n%c (a: f32[]) -> f32[] {\n  ROOT a = f32[] parameter(0)\n}\nFileNames {\n  ROOT b = f32[] parameter(0)\n}\n";
  m = parse_ok(t);
  cr_assert_eq(ir_op_sym_name(m->module).n, 0);
  cr_assert_eq(m->nfuncs, 2);
  assert_span(ir_op_sym_name(m->entry), "FileNames");
}

/* ---- errors ---- */

static void expect_error(const char *t, const char *needle, const char *at) {
  fe_parse_error err = parse_bad(t);
  cr_assert(strstr(err.message, needle), "message '%s' lacks '%s'", err.message, needle);
  if (at) {
    const char *where = strstr(t, at);
    cr_assert_not_null(where);
    cr_assert_eq(err.offset, (uint32_t)(where - t), "offset %u, expected %u (message: %s)", err.offset,
                 (uint32_t)(where - t), err.message);
  }
}

Test(hlo_parse, error_messages_and_offsets) {
  expect_error("", "expected 'HloModule'", NULL);
  expect_error("  \n // only a comment\n", "expected 'HloModule'", NULL);
  expect_error("module @x {}", "expected 'HloModule'", "module");
  expect_error("HloModule m\n", "expected a computation", NULL);
  expect_error("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT s = f32[] add(a, a\n}\n",
               "expected ')' to close operand list of 'add' opened at line 4", "}\n");
  expect_error("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT s = f32[] add(a, a",
               "expected ')' to close operand list of 'add' opened at line 4", NULL);
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), sharding={devices=[2,1]<=[2]",
               "expected '}' to close value of attribute 'sharding' opened at line 3", NULL);
  /* The computation's '}' closes the sharding's '{', so the computation is what is left open. */
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), sharding={devices=[2,1]<=[2]\n}\n",
               "expected '}' to close computation 'e' opened at line 2", NULL);
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), sharding={devices=[2,1)<=[2]}\n}\n",
               "expected ']' to close '[' opened at line 3, found ')'", ")<=");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n", "expected '}' to close computation 'e' opened at line 2", NULL);
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), metadata={op_name=\"x}\n}\n",
               "unterminated string", "\"x}");
  expect_error("HloModule m\nENTRY e {\n  /* never closed\n  ROOT a = f32[] parameter(0)\n}\n", "unterminated /* comment", "/*");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] add(b, b)\n}\n", "unknown operand 'b' of 'add'", "b, b");
  expect_error("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT r = f32[] reduce(a, a), to_apply=%nope\n}\n",
               "unknown computation 'nope'", "%nope");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n",
               "only one ROOT", "ROOT b");
  expect_error("HloModule m\nENTRY a {\n  ROOT a = f32[] parameter(0)\n}\nENTRY b {\n  ROOT b = f32[] parameter(0)\n}\n",
               "only one ENTRY", "ENTRY b");
  expect_error("HloModule m\nENTRY e {\n  ROOT a f32[] parameter(0)\n}\n", "expected '=' after instruction name 'a'", "f32[] p");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), sharding\n}\n", "expected '=' after attribute name 'sharding'", "}\n");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0),\n}\n", "expected attribute name", "}\n");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), x=\n}\n", "expected a value for attribute 'x'", "}\n");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter\n}\n", "expected '(' after opcode 'parameter'", "}\n");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[ parameter(0)\n}\n", "", NULL);
  expect_error("HloModule m\nENTRY e {\n}\n", "has no instructions", "}\n");
  expect_error("HloModule m\nENTRY e (p: f32[]) f32[] {\n  ROOT p = f32[] parameter(0)\n}\n", "expected '->'", "f32[] {");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n@x\n", "expected a computation name", "@x");
  expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(x)\n}\n", "expected a parameter number", "ROOT");
}

Test(hlo_parse, deep_nesting_is_a_syntax_error) {
  size_t depth = 100000;
  const char *pre = "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), sharding=";
  size_t n = strlen(pre) + 2 * depth + 4;
  char *t = malloc(n);
  size_t k = 0;
  memcpy(t, pre, strlen(pre));
  k = strlen(pre);
  for (size_t i = 0; i < depth; i++) t[k++] = '{';
  for (size_t i = 0; i < depth; i++) t[k++] = '}';
  memcpy(t + k, "\n}\n", 3);
  k += 3;
  fe_parse_error err;
  ir_module *m = parse_n(t, k, &err, 0, 0, NULL);
  cr_assert_null(m);
  cr_assert(err.failed);
  cr_assert_str_eq(err.message, "nesting deeper than 256");
  cr_assert(err.limit);
  cr_assert_not(err.cancelled);
  /* The first brace past the limit: depth 2 (computation + instruction) + 254 braces. */
  cr_assert_eq(err.offset, strlen(pre) + 254);

  /* Just braces, and deep tuple shapes, and a deeper explicit limit. */
  memset(t, '{', k);
  m = parse_n(t, k, &err, 0, 0, NULL);
  cr_assert_null(m);
  cr_assert_eq(err.offset, 0);
  const char *pre2 = "HloModule m\nENTRY e {\n  ROOT a = ";
  memcpy(t, pre2, strlen(pre2));
  memset(t + strlen(pre2), '(', k - strlen(pre2));
  m = parse_n(t, k, &err, 100000, 0, NULL);
  cr_assert_null(m);
  cr_assert_str_eq(err.message, "nesting deeper than 100000");
  m = parse_n(t, k, &err, 1000000, 0, NULL);
  cr_assert_null(m);
  cr_assert_str_eq(err.message, "expected ')' to close tuple shape opened at line 3");
  cr_assert_eq(err.offset, k);
  free(t);
}

Test(hlo_parse, deep_nested_operand_instructions) {
  size_t depth = 100000;
  size_t cap = 128 + depth * 8;
  char *t = malloc(cap);
  size_t k = (size_t)sprintf(t, "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] ");
  for (size_t i = 0; i < depth; i++) k += (size_t)sprintf(t + k, "negate(");
  k += (size_t)sprintf(t + k, "x");
  for (size_t i = 0; i < depth; i++) t[k++] = ')';
  k += (size_t)sprintf(t + k, "\n}\n");
  fe_parse_error err;
  /* Even with a huge max_depth the recursion is bounded. */
  ir_module *m = parse_n(t, k, &err, 10000000, 0, NULL);
  cr_assert_null(m);
  cr_assert(err.limit);
  cr_assert_str_eq(err.message, "nested operand instructions deeper than 512");
  m = parse_n(t, k, &err, 0, 0, NULL);
  cr_assert_null(m);
  cr_assert_str_eq(err.message, "nesting deeper than 256");
  free(t);
}

Test(hlo_parse, max_ops_and_cancel) {
  size_t n = 20000;
  size_t cap = 64 + n * 40;
  char *t = malloc(cap);
  size_t k = (size_t)sprintf(t, "HloModule m\nENTRY e {\n  p0 = f32[] parameter(0)\n");
  for (size_t i = 1; i < n; i++) k += (size_t)sprintf(t + k, "  p%zu = f32[] negate(p%zu)\n", i, i - 1);
  k += (size_t)sprintf(t + k, "}\n");
  fe_parse_error err;
  ir_module *m = parse_n(t, k, &err, 0, 0, NULL);
  cr_assert_not_null(m, "%s", err.message);
  cr_assert_eq(m->nops, n + 2);
  m = parse_n(t, k, &err, 0, 1000, NULL);
  cr_assert_null(m);
  cr_assert_str_eq(err.message, "too many instructions (limit 1000)");
  cr_assert(err.limit);
  atomic_int cancel = 1;
  m = parse_n(t, k, &err, 0, 0, &cancel);
  cr_assert_null(m);
  cr_assert_str_eq(err.message, "cancelled");
  cr_assert(err.cancelled);
  cr_assert_not(err.limit);
  free(t);
}

/* Every prefix of a module either parses or fails cleanly; none crashes. */
Test(hlo_parse, truncation_never_crashes) {
  size_t len = strlen(BASIC);
  for (size_t cut = 0; cut < len; cut++) {
    char *t = malloc(cut ? cut : 1);
    memcpy(t, BASIC, cut);
    fe_parse_error err;
    ir_module *m = parse_n(t, cut, &err, 0, 0, NULL);
    if (m) check_invariants(m, t, cut);
    else cr_assert(err.failed && err.message && err.offset <= cut);
    /* Only prefixes that end with a complete computation parse. */
    if (m) {
      size_t e = cut;
      while (e && (t[e - 1] == '\n' || t[e - 1] == ' ')) e--;
      cr_assert(e && t[e - 1] == '}', "prefix of %zu bytes parsed", cut);
      cr_assert_eq(m->nfuncs, cut >= len - 1 ? 2u : 1u);
    }
    free(t);
  }
}

Test(hlo_parse, binary_garbage) {
  uint32_t x = 12345;
  for (int round = 0; round < 200; round++) {
    size_t n = 1 + (size_t)(round * 37 % 2000);
    char *t = malloc(n);
    for (size_t i = 0; i < n; i++) {
      x = x * 1664525u + 1013904223u;
      t[i] = (char)(x >> 24);
    }
    if (round % 2) memcpy(t, "HloModule m\nENTRY e {\n", n < 22 ? n : 22);
    fe_parse_error err;
    ir_module *m = parse_n(t, n, &err, 0, 0, NULL);
    cr_assert_null(m);
    cr_assert(err.failed && err.offset <= n);
    free(t);
  }
  fe_parse_error err;
  const char nul[] = "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\0\n}\n";
  cr_assert_null(parse_n(nul, sizeof nul - 1, &err, 0, 0, NULL));
  cr_assert_eq(err.offset, (uint32_t)strlen(nul));
}

/* ---- deterministic mutation smoke test over the corpus (the libFuzzer harness is tests/fuzz/fuzz_hlo.c) ---- */

static uint32_t rng_state = 0x9e3779b9u;
static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return n ? rng_state % n : 0;
}

static size_t mutate(const char *src, size_t len, char *out, size_t cap) {
  static const char *const tokens[] = {"{", "}", "(", ")", "[", "]", "\"", ",", "=", "/*", "*/", "//", "\n",
                                       "ROOT ", "ENTRY ", "%", "#", "\\", "->", "{{{{{{{{", "((((((((", "\0"};
  size_t n = len < cap ? len : cap;
  memcpy(out, src, n);
  int edits = 1 + (int)rnd(4);
  for (int e = 0; e < edits && n; e++) {
    size_t at = rnd((uint32_t)n);
    switch (rnd(6)) {
    case 0: /* flip a byte */
      out[at] = (char)rnd(256);
      break;
    case 1: { /* delete a range */
      size_t k = 1 + rnd(64);
      if (at + k > n) k = n - at;
      memmove(out + at, out + at + k, n - at - k);
      n -= k;
      break;
    }
    case 2: { /* insert a token */
      const char *tok = tokens[rnd(sizeof tokens / sizeof *tokens)];
      size_t k = strlen(tok) ? strlen(tok) : 1;
      if (n + k > cap) break;
      memmove(out + at + k, out + at, n - at);
      memcpy(out + at, tok, k);
      n += k;
      break;
    }
    case 3: /* truncate */
      n = at;
      break;
    case 4: { /* duplicate a range */
      size_t k = 1 + rnd(200);
      if (at + k > n) k = n - at;
      if (n + k > cap) break;
      size_t to = rnd((uint32_t)n);
      char tmp[200];
      memcpy(tmp, out + at, k);
      memmove(out + to + k, out + to, n - to);
      memcpy(out + to, tmp, k);
      n += k;
      break;
    }
    default: { /* swap two bytes */
      size_t b = rnd((uint32_t)n);
      char c = out[at];
      out[at] = out[b];
      out[b] = c;
      break;
    }
    }
  }
  return n;
}

Test(hlo_parse, mutation_smoke, .timeout = 120) {
  const char *dir = "../shared/corpus/xla/hlo";
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "corpus directory %s missing (run from the repository root)", dir);
  char *files[128];
  size_t lens[128], nfiles = 0;
  struct dirent *de;
  while ((de = readdir(d)) && nfiles < 128) {
    size_t nl = strlen(de->d_name);
    if (nl < 4 || strcmp(de->d_name + nl - 4, ".hlo") != 0) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    files[nfiles] = test_read_file(path, &lens[nfiles]);
    if (files[nfiles]) nfiles++;
  }
  closedir(d);
  cr_assert_gt(nfiles, 10);
  size_t parsed = 0, failed = 0;
  for (int iter = 0; iter < 5000; iter++) {
    size_t f = rnd((uint32_t)nfiles);
    size_t cap = lens[f] + 512;
    char *buf = malloc(cap);
    size_t n = mutate(files[f], lens[f], buf, cap);
    /* A fresh arena per input, bounded, as under sc_check. */
    sc_arena *a = sc_arena_new(64u << 20);
    ir_linemap lm = ir_linemap_build(a, buf, n);
    fe_parse_input in = {a, buf, n, 0, (uint32_t)n, &lm, 64, 100000, NULL};
    fe_parse_error err;
    ir_module *m = fe_parse_hlo(&in, &err);
    if (m) {
      parsed++;
      check_invariants(m, buf, n);
    } else {
      failed++;
      cr_assert(err.failed && err.message && err.offset <= n);
    }
    sc_arena_free(a);
    free(buf);
  }
  cr_assert_gt(failed, 0);
  cr_assert_gt(parsed, 0);
  for (size_t i = 0; i < nfiles; i++) free(files[i]);
}

/* Forms XLA's own tests write (../shared/corpus/upstream/xla_hlo): inline called computations, buffer
 * shapes, the legacy header, a custom call's literal, and a signature whose body brace ends the line. */
Test(hlo_parse, inline_called_computation_becomes_the_callee) {
  ir_module *m = parse_ok("HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n"
                          "  ROOT r = f32[4] all-reduce(p), replica_groups={}, to_apply={\n"
                          "    a = f32[] parameter(0)\n    b = f32[] parameter(1)\n    ROOT s = f32[] add(a, b)\n  }\n}\n");
  cr_assert_eq(m->nfuncs, 2);
  ir_op *r = instr(m->entry, "r");
  cr_assert_not_null(r);
  ir_op *callee = NULL;
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (ir_span_eq(ir_op_sym_name(m->funcs[i]), "r.to_apply")) callee = m->funcs[i];
  cr_assert_not_null(callee);
  assert_span(ir_op_callee(r), "r.to_apply");
  cr_assert_eq(ir_op_regions(callee)[0]->blocks[0]->nargs, 2);
  cr_assert_eq(ir_op_regions(callee)[0]->blocks[0]->nops, 3);
  cr_assert_eq(ir_op_regions(m->entry)[0]->blocks[0]->nops, 2, "the inline body's ops stay out of the caller");
}

Test(hlo_parse, computation_lists_stay_names) {
  parse_ok("HloModule m\n\nc1 {\n  ROOT x = f32[] constant(1)\n}\n\nENTRY e {\n"
           "  ROOT r = f32[] conditional(), branch_computations={c1, c1}\n}\n");
  fe_parse_error err = parse_bad("HloModule m\n\nENTRY e {\n  ROOT r = f32[] call(), to_apply={nope}\n}\n");
  cr_assert(strstr(err.message, "unknown computation 'nope'"), "%s", err.message);
}

Test(hlo_parse, buffer_shapes) {
  ir_module *m = parse_ok("HloModule m\n\nENTRY e {\n  p0 = f32[4,2]{1,0} parameter(0)\n"
                          "  a = b(f32[4,2]{0,1}) custom-call(p0), custom_call_target=\"Pin\"\n"
                          "  ROOT c = f32[4,2]{0,1} custom-call(b(f32[4,2]{0,1}) a), custom_call_target=\"Unpin\"\n}\n");
  ir_op *a = instr(m->entry, "a");
  cr_assert_not_null(a);
  assert_span(ir_op_result_types(a)[0], "b(f32[4,2]{0,1})");
}

Test(hlo_parse, legacy_header_with_colon) {
  ir_module *m = parse_ok("HloModule no_root:\nENTRY consts {\n  first = f32[1]{0} constant({1})\n"
                          "  last = f32[1]{0} constant({2})\n}\n");
  assert_span(ir_op_sym_name(m->module), "no_root");
}

Test(hlo_parse, custom_call_literal_with_shape) {
  ir_module *m = parse_ok("HloModule m\n\nENTRY e {\n  c = f32[2] constant({1, 2})\n"
                          "  ROOT cc = f32[2] custom-call(c), custom_call_target=\"foo\", literal=s32[2]{0} {4, 128}, "
                          "backend_config=\"x\"\n}\n");
  ir_op *cc = instr(m->entry, "cc");
  const ir_attr *lit = ir_op_attr(cc, "literal");
  cr_assert_not_null(lit);
  assert_span(lit->value, "s32[2]{0} {4, 128}");
  cr_assert_not_null(ir_op_attr(cc, "backend_config"));
}

Test(hlo_parse, body_brace_after_result_shape_is_no_layout) {
  ir_module *m = parse_ok("HloModule m\n\nadd (a: f32[], b: f32[]) -> f32[]{\n  a = f32[] parameter(0)\n"
                          "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
                          "ENTRY e (p: f32[4]) -> f32[4]{\n  p = f32[4]{0} parameter(0)\n"
                          "  ROOT r = f32[4]{0} all-reduce(p), to_apply=add, replica_groups={}\n}\n"
                          "\nx (p: f32[4]) -> f32[4]{0} {\n  ROOT p = f32[4]{0} parameter(0)\n}\n");
  cr_assert_eq(m->nfuncs, 3);
  assert_span(ir_op_decl_of(arena, m->funcs[2])->func_result_types[0], "f32[4]{0}");
}
