/* Shardy attribute parsers: meshes, tensor shardings, per-value lists, axis lists, partition specs. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "model/model.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(sdy_sharding, .init = setup, .fini = teardown);

static ir_span S(const char *s) { return ir_span_of(s, (uint32_t)strlen(s)); }

static md_sharding *parse(const char *text) {
  const char *err = NULL;
  md_sharding *s = md_parse_sdy_sharding(A, NULL, S(text), 100, &err);
  cr_assert_not_null(s, "%s: %s", text, err);
  return s;
}

static const char *parse_error(const char *text) {
  const char *err = NULL;
  md_sharding *s = md_parse_sdy_sharding(A, NULL, S(text), 0, &err);
  cr_assert_null(s, "%s parsed", text);
  cr_assert_not_null(err);
  return err;
}

Test(sdy_sharding, mesh_forms) {
  const char *err = NULL;
  md_mesh *m = md_parse_sdy_mesh(A, S("<[\"x\"=2, \"y\"=4]>"), 7, &err);
  cr_assert_not_null(m, "%s", err);
  cr_assert_eq(m->naxes, 2);
  cr_assert(ir_span_eq(m->axes[1].name, "y"));
  cr_assert_eq(m->axes[1].size, 4);
  cr_assert_eq(m->devices, 8);
  cr_assert_not(m->maximal);
  cr_assert_eq(m->offset, 7);

  m = md_parse_sdy_mesh(A, S("<[\"a\"=3, \"b\"=2], device_ids=[0, 2, 4, 1, 3, 5]>"), 0, &err);
  cr_assert_not_null(m);
  cr_assert_eq(m->ndevice_ids, 6);
  cr_assert_eq(m->device_ids[1], 2);

  m = md_parse_sdy_mesh(A, S("<[], device_ids=[3]>"), 0, &err);
  cr_assert(m && m->maximal && m->device_ids[0] == 3 && m->devices == 1);
  m = md_parse_sdy_mesh(A, S("<[]>"), 0, &err);
  cr_assert(m && !m->maximal && m->naxes == 0 && m->devices == 1);
  m = md_parse_sdy_mesh(A, S("#sdy.mesh<[\"a\"=1]>"), 0, &err);
  cr_assert(m && m->naxes == 1);
  m = md_parse_sdy_mesh(A, S("mesh<[\"a\"=2]>"), 0, &err);
  cr_assert(m && m->naxes == 1);
  /* sizes and ids are kept as written; the mesh rules judge them */
  m = md_parse_sdy_mesh(A, S("<[\"a\"=2, \"b\"=0]>"), 0, &err);
  cr_assert(m && m->axes[1].size == 0);
  cr_assert_null(md_parse_sdy_mesh(A, S("<[a=2]>"), 0, &err));
  cr_assert_null(md_parse_sdy_mesh(A, S("<[\"a\"=2]"), 0, &err));
}

Test(sdy_sharding, tensor_sharding) {
  md_sharding *s = parse("#sdy.sharding<@mesh, [{\"x\"}, {\"y\", ?}, {}, {?}p2]>");
  cr_assert_eq(s->kind, SC_SHARDING_NAMED);
  cr_assert_eq(s->source, SC_SHARDING_FROM_SDY);
  cr_assert(ir_span_eq(s->mesh_name, "mesh"));
  cr_assert_eq(s->rank, 4);
  cr_assert(s->dims[1].open && s->dims[1].naxes == 1);
  cr_assert(!s->dims[2].open && s->dims[2].naxes == 0);
  cr_assert(s->dims[3].open && s->dims[3].priority == 2);
  cr_assert_eq(s->dims[0].priority, -1);
  cr_assert_eq(s->offset, 100);

  s = parse("<@foo, [{\"a\":(1)2, \"b\", \"a\":(2)2}, {}], replicated={\"c\"}, unreduced=max{\"d\"}>");
  cr_assert(s->dims[0].axes[0].sub && s->dims[0].axes[0].pre_size == 1 && s->dims[0].axes[0].size == 2);
  cr_assert(!s->dims[0].axes[1].sub);
  cr_assert_eq(s->nreplicated, 1);
  cr_assert_eq(s->nunreduced, 1);
  cr_assert_eq(s->unreduced_op, SC_REDUCE_MAX);
  /* unreduced before replicated also parses */
  s = parse("<@foo, [], unreduced={\"b\"}, replicated={\"a\"}>");
  cr_assert(s->rank == 0 && s->nreplicated == 1 && s->nunreduced == 1);
  /* inline meshes */
  s = parse("<mesh<[\"x\"=2, \"y\"=2]>, [{\"x\"}, {}]>");
  cr_assert_not_null(s->mesh);
  cr_assert_eq(s->mesh->devices, 4);
  cr_assert_eq(s->mesh_name.n, 0);
  s = parse("#sdy.sharding<mesh<[], device_ids=[3]>, []>");
  cr_assert(s->mesh && s->mesh->maximal);
}

Test(sdy_sharding, parse_errors_use_shardy_messages) {
  cr_assert(strstr(parse_error("<@foo, [{\"a\"}, {\"b\"}phigh]>"), "expecting priority in format 'p<number>', got: phigh"));
  cr_assert(strstr(parse_error("<@foo, [{\"a\"}p01]>"), "priorities with leading zeros are not allowed, got: p01"));
  cr_assert(strstr(parse_error("<@foo, [{\"a\"}p9999999999999999999]>"), "expecting integer priority"));
  cr_assert(strstr(parse_error("<@foo, [{}, {}], replicated{\"a\"}>"), "expected '='"));
  cr_assert(strstr(parse_error("<@foo, [{}, {}], unreduced={\"a\", \"b\"[]}>"), "expected '}'"));
  cr_assert(strstr(parse_error("<@foo, [{}, {}], unreduced={\"a\", b}>"), "expected string"));
  cr_assert(strstr(parse_error("<@foo, [{}, {}],>"), "expected valid named axis list after comma"));
  cr_assert(strstr(parse_error("<@foo, [{}], unknown={\"a\"}>"), "expected valid named axis list after comma"));
  cr_assert(strstr(parse_error("<@foo, [{}], replicated={\"a\"}, replicated={\"b\"}>"),
                   "expected valid named axis list after comma"));
  cr_assert(strstr(parse_error("<foo, [{}]>"), "expecting MeshAttr or FlatSymbolRefAttr"));
  cr_assert(strstr(parse_error("#sdy.sharding_per_value<[<@foo, [{}]>]>"), "TensorShardingAttr"));
  /* truncations never crash */
  const char *full = "#sdy.sharding<@mesh, [{\"x\":(1)2, ?}p1, {}], replicated={\"y\"}, unreduced=min{\"z\"}>";
  for (size_t n = 0; n < strlen(full); n++) {
    const char *err = NULL;
    cr_assert_null(md_parse_sdy_sharding(A, NULL, ir_span_of(full, (uint32_t)n), 0, &err));
  }
}

Test(sdy_sharding, per_value_and_axis_lists) {
  md_sharding **v;
  uint32_t n;
  const char *err = NULL;
  cr_assert_eq(md_parse_sdy_sharding_per_value(A, NULL, S("#sdy.sharding_per_value<[<@a, [{\"x\"}]>, #sdy.sharding<@b, []>]>"), 0,
                                               &v, &n, &err),
               0, "%s", err);
  cr_assert_eq(n, 2);
  cr_assert(ir_span_eq(v[1]->mesh_name, "b"));
  cr_assert_eq(md_parse_sdy_sharding_per_value(A, NULL, S("#sdy.sharding_per_value<[]>"), 0, &v, &n, &err), 0);
  cr_assert_eq(n, 0);
  cr_assert_eq(md_parse_sdy_sharding_per_value(A, NULL, S("[<@m, [{}, {?}]>]"), 0, &v, &n, &err), 0);
  cr_assert_eq(n, 1);
  cr_assert_neq(md_parse_sdy_sharding_per_value(A, NULL, S("#sdy.sharding<@m, []>"), 0, &v, &n, &err), 0);

  md_axis_ref *ax;
  cr_assert_eq(md_parse_sdy_axis_names(A, S("{\"a\", \"b\"}"), 0, &ax, &n, &err), 0);
  cr_assert(n == 2 && ir_span_eq(ax[1].name, "b"));
  cr_assert_eq(md_parse_sdy_axis_names(A, S("#sdy<manual_axes{\"a\"}>"), 0, &ax, &n, &err), 0);
  cr_assert(n == 1 && ir_span_eq(ax[0].name, "a"));
  cr_assert_eq(md_parse_sdy_axis_names(A, S("{}"), 0, &ax, &n, &err), 0);
  cr_assert_eq(n, 0);
}

Test(sdy_sharding, partition_spec) {
  cr_assert_str_eq(md_sharding_partition_spec(A, parse("<@m, [{\"data\"}, {}]>")), "P('data', None)");
  cr_assert_str_eq(md_sharding_partition_spec(A, parse("<@m, [{\"x\", \"y\"}, {?}]>")), "P(('x', 'y'), P.UNCONSTRAINED)");
  cr_assert_str_eq(md_sharding_partition_spec(A, parse("<@m, []>")), "P()");
}

Test(sdy_sharding, axis_verification_order_and_messages) {
  md_mesh *m = md_parse_sdy_mesh(A, S("<[\"a\"=8, \"b\"=2]>"), 0, NULL);
  struct {
    const char *sharding, *msg;
    int kind;
  } cases[] = {
      {"<@m, [{\"c\"}]>", "unknown axis name: \"c\"", SC_AXERR_UNKNOWN},
      {"<@m, [{\"a\", \"a\"}]>", "duplicate axis ref: \"a\"", SC_AXERR_DUPLICATE},
      {"<@m, [{}, {\"a\"}], replicated={\"a\"}>", "duplicate axis ref: \"a\"", SC_AXERR_DUPLICATE},
      {"<@m, [{\"a\"}], unreduced={\"a\":(2)2}>", "both sub-axis and full-axis are used for axis name: \"a\"",
       SC_AXERR_DUPLICATE},
      {"<@m, [{\"a\":(2)4}], replicated={\"a\":(1)4}>", "overlapping sub-axes: \"a\":(1)4, \"a\":(2)4", SC_AXERR_DUPLICATE},
      {"<@m, [{\"a\":(2)2, \"a\":(4)4}]>", "two consecutive sub-axes can be merged: \"a\":(2)2, \"a\":(4)4", SC_AXERR_SUB_AXIS},
      {"<@m, [{\"a\":(3)2}]>", "sub-axis next pre-size 6 doesn't divide the size of the full axis 8: \"a\":(3)2",
       SC_AXERR_SUB_AXIS},
      {"<@m, [{\"a\":(1)8}]>", "sub-axis size is equal to the full axis size: \"a\":(1)8", SC_AXERR_SUB_AXIS},
      {"<@m, [{\"a\":(2)1}]>", "sub-axis sizes must be greater than 1: \"a\":(2)1", SC_AXERR_SUB_AXIS},
      {"<@m, [], replicated={\"b\", \"a\"}>", "replicated axes are not ordered w.r.t. mesh", SC_AXERR_ORDER},
      {"<@m, [], unreduced={\"a\":(4)2, \"a\":(1)2}>", "unreduced axes are not ordered w.r.t. mesh", SC_AXERR_ORDER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int kind = 0;
    const char *e = md_sharding_verify_axes_kind(A, parse(cases[i].sharding), m, &kind);
    cr_assert_not_null(e, "%s accepted", cases[i].sharding);
    cr_assert_str_eq(e, cases[i].msg);
    cr_assert_eq(kind, cases[i].kind, "%s: kind %d", cases[i].sharding, kind);
  }
  cr_assert_null(md_sharding_verify_axes(A, parse("<@m, [{\"a\":(1)2, \"b\"}, {\"a\":(2)4}], replicated={}>"), m));
}
