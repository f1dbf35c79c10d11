/* HloSharding text: the full grammar, iota expansion, tuples, named (V3) shardings, serialized
 * OpSharding protos, shapes, and HloSharding::Validate. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "model/model.h"

static sc_arena *A;
static void setup(void) { A = sc_arena_new(0); }
static void teardown(void) { sc_arena_free(A); }
TestSuite(gspmd_sharding, .init = setup, .fini = teardown);

static ir_span S(const char *s) { return ir_span_of(s, (uint32_t)strlen(s)); }

static md_sharding *parse(const char *text) {
  const char *err = NULL;
  md_sharding *s = md_parse_gspmd_sharding(A, S(text), 0, &err);
  cr_assert_not_null(s, "%s: %s", text, err);
  return s;
}

static const char *error_of(const char *text) {
  const char *err = NULL;
  cr_assert_null(md_parse_gspmd_sharding(A, S(text), 0, &err), "%s parsed", text);
  return err;
}

static const char *validate(const char *sharding, const char *shape, int64_t n) {
  md_shape sh;
  cr_assert(md_parse_shape(A, S(shape), &sh), "shape %s", shape);
  return md_gspmd_validate(A, parse(sharding), &sh, n, false);
}

Test(gspmd_sharding, kinds) {
  cr_assert_eq(parse("{replicated}")->kind, SC_SHARDING_REPLICATED);
  cr_assert_eq(parse("{manual}")->kind, SC_SHARDING_MANUAL);
  cr_assert_eq(parse("{unknown shard_as 2}")->shard_group, 2);
  cr_assert_eq(parse("{unreduced}")->kind, SC_SHARDING_UNREDUCED);
  md_sharding *s = parse("{maximal device=3 metadata={op_name=\"a\"}}");
  cr_assert(s->kind == SC_SHARDING_MAXIMAL && s->maximal_device == 3);
  s = parse("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
  cr_assert_eq(s->kind, SC_SHARDING_TILED);
  cr_assert(s->tiles->ntile_dims == 3 && s->tiles->ntile_devices == 4 && s->tiles->tile_devices[1] == 2);
  cr_assert(s->tiles->last_tile_dim_replicate && s->tiles->nlast_tile_dims == 1 && s->tiles->last_tile_dims[0] == 2);
  s = parse("{devices=[2,2,2,2]<=[16] last_tile_dims={manual, replicated}}");
  cr_assert(s->tiles->nlast_tile_dims == 2 && s->tiles->last_tile_dims[0] == 1 && s->tiles->last_tile_dims[1] == 2);
}

Test(gspmd_sharding, iota_expansion) {
  md_sharding *s = parse("{devices=[4,4,1]<=[4,2,2]T(1,0,2)}");
  int64_t want[] = {0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15};
  cr_assert_eq(s->tiles->ntile_devices, 16);
  for (int i = 0; i < 16; i++) cr_assert_eq(s->tiles->tile_devices[i], want[i], "device %d", i);
  s = parse("{devices=[2,4]<=[4,2]T(1,0)}");
  int64_t want2[] = {0, 2, 4, 6, 1, 3, 5, 7};
  for (int i = 0; i < 8; i++) cr_assert_eq(s->tiles->tile_devices[i], want2[i]);
  cr_assert(s->tiles->niota_reshape == 2 && s->tiles->iota_perm[0] == 1);
}

Test(gspmd_sharding, tuples_and_comments) {
  md_sharding *s = parse("{{replicated}, {devices=[2,1]<=[2]}, {maximal device=0}, {manual}, {manual}, /*index=5*/{manual}}");
  cr_assert_eq(s->kind, SC_SHARDING_TUPLE);
  cr_assert_eq(s->nelements, 6);
  cr_assert_eq(s->elements[5]->kind, SC_SHARDING_MANUAL);
  cr_assert(ir_span_eq(s->elements[1]->text, "{devices=[2,1]<=[2]}"));
  cr_assert_eq(parse("{}")->nelements, 0);
  /* split across lines */
  cr_assert_eq(parse("{devices=[2,1,2]<=[2,2]T(1,0)\n    last_tile_dims={manual}}")->tiles->nlast_tile_dims, 1);
}

Test(gspmd_sharding, named_v3) {
  md_sharding *s = parse("{mesh['a'=2,'b'=4], [{'a'}, {'b':(2)2, ?}], replicated={'b':(1)2}}");
  cr_assert_eq(s->kind, SC_SHARDING_NAMED);
  cr_assert_eq(s->source, SC_SHARDING_FROM_GSPMD);
  cr_assert(s->mesh && s->mesh->devices == 8);
  cr_assert(s->rank == 2 && s->dims[1].open && s->dims[1].axes[0].sub);
  s = parse("{mesh['x'=8,'y'=4], manual}");
  cr_assert(s->kind == SC_SHARDING_MANUAL && s->nmanual_axes == 2);
  s = parse("{maximal_mesh[device_id=5]}");
  cr_assert(s->kind == SC_SHARDING_MAXIMAL && s->maximal_device == 5);
  s = parse("{mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)), [{'a'}]}");
  cr_assert(s->mesh->ndevice_ids == 64 && s->mesh->device_ids[1] == 16);
  s = parse("{mesh['a'=2], [{'0'}]}"); /* axes may be given by index */
  cr_assert(ir_span_eq(s->dims[0].axes[0].name, "a"));
  cr_assert(strstr(error_of("{mesh['a'=2], [{'b'}]}"), "axis 'b' is not a valid axis name or index in mesh mesh['a'=2]"));
  cr_assert(strstr(error_of("{mesh['a'=2], [{?, 'a'}]}"), "Saw axis ref after '?'"));
}

/* Today's XLA prints axis names bare (`mesh[a=2,b=4]`, `{b:(2)2}`) and refs by index unquoted; its
 * older printer quoted them. Both read the same. */
Test(gspmd_sharding, named_v3_bare_axis_names) {
  md_sharding *s = parse("{mesh[a=2,b=4,c=3,d=8], [{a}], replicated={c}, unreduced={d:(4)2}, manual={b:(2)2}, "
                         "metadata={{op_name=\"foo\"}, {op_name=\"bar\"}}}");
  cr_assert(s->mesh && s->mesh->naxes == 4 && s->mesh->devices == 192);
  cr_assert(ir_span_eq(s->mesh->axes[3].name, "d"));
  cr_assert(s->nunreduced == 1 && s->unreduced[0].sub && s->unreduced[0].pre_size == 4);
  s = parse("{mesh[a=2,b=4,c=3,d=8], [{b, a}, {c, d, ?}]}");
  cr_assert(s->rank == 2 && s->dims[0].naxes == 2 && ir_span_eq(s->dims[0].axes[0].name, "b") && s->dims[1].open);
  s = parse("{mesh[x=2,y=2], device_ids=(0,2,1,3), [{x}]}");
  cr_assert(s->mesh->ndevice_ids == 4 && s->mesh->device_ids[1] == 2);
  s = parse("{mesh[a=2,b=4], [{1}, {0}]}");
  cr_assert(ir_span_eq(s->dims[0].axes[0].name, "b") && ir_span_eq(s->dims[1].axes[0].name, "a"));
  s = parse("{{replicated}, {mesh[a=2,b=4], replicated}, {maximal device=5}, {maximal_mesh[device_id=5]}}");
  cr_assert_eq(s->nelements, 4);
  cr_assert(strstr(error_of("{mesh[a=2], [{b}]}"), "axis 'b' is not a valid axis name or index"));
}

Test(gspmd_sharding, parse_errors_are_xla_messages) {
  cr_assert_str_eq(error_of("{devices=[2,2]<=[2,2]}"), "expected 'T(' to start sharding devices iota_transpose_perm");
  cr_assert_str_eq(error_of("{devices=[2,1]<=[2,1]T(0)}"),
                   "iota_transpose_perm should have the same rank as iota_reshape_dims : expected 2, saw 1.");
  cr_assert_str_eq(error_of("{maximal}"), "maximal shardings should have exactly one device assigned");
  cr_assert_str_eq(error_of("{replicated devices=[2]0,1}"), "replicated shardings should not have any devices assigned");
  cr_assert_str_eq(error_of("{devices=[1]0}"), "non-maximal shardings must have more than one device assigned");
  cr_assert_str_eq(error_of("{devices=[2]0,1} extra"), "Extra content after sharding");
  cr_assert(strstr(error_of("{devices=[2,2]0,1,2}"), "lists 3 devices"));
  cr_assert(strstr(error_of("{devices=[2,2]<=[8]}"), "iota tile assignment reshapes 8 devices"));
  cr_assert(strstr(error_of("devices=[2]0,1"), "expected '{' to start sharding attribute"));
}

Test(gspmd_sharding, validate) {
  cr_assert_null(validate("{devices=[2,2]0,3,2,1}", "f32[3,5]", 4)); /* uneven shards are legal */
  cr_assert_str_eq(validate("{devices=[2,2]0,1,2,3}", "f32[4,2]", 2), "device 2 >= num_devices (2) in tile assignment");
  cr_assert_str_eq(validate("{maximal device=-1}", "f32[4,2]", 2), "device -1 is negative in tile assignment");
  cr_assert_str_eq(validate("{devices=[2,2]0,0,2,3}", "f32[4,6]", 4), "device 0 is not unique in tile assignment");
  cr_assert_str_eq(validate("{devices=[2,2]0,1,2,3}", "u32[4,6]", 5), "tile_assignment should have 5 devices but has 4");
  cr_assert(strstr(validate("{devices=[1,2,2,1]0,1,2,3}", "f32[4,2]", 0), "is different than the input rank"));
  cr_assert_null(validate("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "f32[4,2]", 4));
  cr_assert_str_eq(validate("{{replicated}, {maximal device=0}}", "f32[]", 0),
                   "Sharding is tuple-shaped but validation shape is not.");
  cr_assert(strstr(validate("{{replicated}, {replicated}}", "(f32[4], f32[4], f32[4])", 0), "has 3 leaf nodes"));
  cr_assert_null(validate("{replicated}", "token[]", 4));
  cr_assert(strstr(validate("{devices=[1]<=[1]}", "f32[4]", 0), "Tile assignment only contains a single device"));
  cr_assert_null(validate("{devices=[2]0,1}", "tensor<8xf32>", 2)); /* MLIR types too */
  cr_assert(strstr(validate("{mesh['x'=2,'y'=2], [{'x'}, {'y'}]}", "f32[4,6]", 2), "sharding should have 2 devices but has 4"));
  /* A named sharding with an empty dimension list shards no dimension, whatever the rank (XLA prints it). */
  cr_assert_null(validate("{mesh['x'=2] []}", "f32[8,4]", 2));
  cr_assert_null(validate("{mesh['x'=2] [], unreduced={'x'}}", "f32[8]", 2));
  cr_assert(strstr(validate("{mesh['x'=2] [{'x'}]}", "f32[8,4]", 2), "is different than the input rank"));
}

Test(gspmd_sharding, opsharding_protos) {
  static const unsigned char dev2[] = {0x08, 0x03, 0x1A, 0x01, 0x02, 0x22, 0x02, 0x00, 0x01};
  cr_assert_str_eq(md_gspmd_proto_to_text(A, dev2, sizeof dev2), "{devices=[2]0,1}");
  static const unsigned char ltdr[] = {0x08, 0x03, 0x1A, 0x03, 0x02, 0x01, 0x02, 0x22, 0x04, 0x00, 0x01, 0x02, 0x03, 0x42, 0x01, 0x00};
  cr_assert_str_eq(md_gspmd_proto_to_text(A, ltdr, sizeof ltdr), "{devices=[2,1,2]0,1,2,3 last_tile_dims={replicated}}");
  cr_assert_str_eq(md_gspmd_proto_to_text(A, "", 0), "{replicated}");
  static const unsigned char maximal[] = {0x08, 0x01, 0x22, 0x01, 0x07};
  cr_assert_str_eq(md_gspmd_proto_to_text(A, maximal, sizeof maximal), "{maximal device=7}");
  static const unsigned char bad[] = {0xff, 0xff};
  cr_assert_null(md_gspmd_proto_to_text(A, bad, sizeof bad));
}

Test(gspmd_sharding, shapes) {
  md_shape s;
  cr_assert(md_parse_shape(A, S("tensor<8x?x16xf32>"), &s));
  cr_assert(s.kind == SC_SHAPE_ARRAY && s.rank == 3 && s.dims[1] == -1);
  cr_assert(md_parse_shape(A, S("tensor<f32>"), &s) && s.rank == 0);
  /* MPMD wraps the tensor a mesh holds */
  cr_assert(md_parse_shape(A, S("!mpmd.mesh_tensor<\"m1\", tensor<4x8xf32>>"), &s));
  cr_assert(s.kind == SC_SHAPE_ARRAY && s.rank == 2 && s.dims[1] == 8);
  cr_assert(md_parse_shape(A, S("!mpmd.mesh_tensor<\"m\", tensor<16xf32>, sharding=<@mesh, [{\"x\"}]>>"), &s));
  cr_assert(s.kind == SC_SHAPE_ARRAY && s.rank == 1 && s.dims[0] == 16);
  cr_assert(md_parse_shape(A, S("!other.type<\"m\", tensor<4xf32>>"), &s) && s.kind == SC_SHAPE_OTHER);
  cr_assert(md_parse_shape(A, S("tensor<*xf32>"), &s) && s.kind == SC_SHAPE_UNRANKED);
  cr_assert(md_parse_shape(A, S("!stablehlo.token"), &s) && s.kind == SC_SHAPE_TOKEN);
  cr_assert(md_parse_shape(A, S("tuple<tensor<8xf32>, tensor<4x4xi32>>"), &s) && s.kind == SC_SHAPE_TUPLE && s.nelems == 2);
  cr_assert(md_parse_shape(A, S("f32[8,16]{1,0:T(8,128)}"), &s) && s.rank == 2 && s.dims[1] == 16);
  cr_assert(md_parse_shape(A, S("(s32[], f32[2560]{0}, /*index=2*/f32[4,4])"), &s) && s.nelems == 3);
  cr_assert_eq(md_shape_leaf_count(&s), 3);
  cr_assert(md_parse_shape(A, S("f32[<=4,?]"), &s) && s.dims[0] == 4 && s.dims[1] == -1);
  cr_assert(md_parse_shape(A, S("()"), &s) && s.kind == SC_SHAPE_TUPLE && s.nelems == 0);
}
