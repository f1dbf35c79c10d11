/* communication.c — the communication family (SC09xx): the collectives the partitioner inserts where
 * the propagated shardings disagree with an op's sharding rule (lib/cost cost_collectives, the
 * explicit-reshard pass). A reshard that all-gathers a sharded tensor to fully replicated (SC0901, XLA's
 * "Involuntary full rematerialization"), any inserted collective above a size threshold (SC0902).
 * Without propagation (--no-propagate) there are no collectives and these rules say nothing. */
#include <inttypes.h>
#include <string.h>

#include "cost/cost.h"
#include "rules/fixes.h"
#include "rules/rules.h"

/* True when `s` (NULL = replicated) shards no dimension. */
static bool replicated(const prop_sharding *s) {
  for (uint32_t d = 0; s && d < s->rank; d++)
    if (s->dims[d].axes.n) return false;
  return true;
}

static const char *spec_of(sc_arena *a, const prop_sharding *s) {
  return s ? md_sharding_partition_spec(a, prop_sharding_to_model(a, s)) : NULL;
}

/* "'data'" or "('data', 'model')": a collective's mesh axes as JAX names them (the first 8). */
static const char *axes_text(sc_arena *a, const sc_cost_collective *k) {
  ar_str b = SC_ASTR_INIT(a);
  if (k->naxes != 1) ar_str_puts(&b, "(");
  size_t shown = k->naxes < 8 ? k->naxes : 8; /* bounded on hostile meshes */
  for (size_t i = 0; i < shown; i++) ar_str_printf(&b, "%s'%s'", i ? ", " : "", k->axes[i]);
  if (shown < k->naxes) ar_str_printf(&b, ", and %zu more", k->naxes - shown);
  if (k->naxes != 1) ar_str_puts(&b, ")");
  return ar_str_str(&b);
}

/* "model.py:12: " when the op's debug info names the user's Python line, else "". A module without
 * lines (bytecode) is located at that Python line already: no lead then. */
static const char *python_lead(ru_ctx *ctx, const ir_op *op) {
  if (!ctx->lines || !ctx->lines->nlines) return "";
  const char *site = ru_py_call_site(ctx, op);
  return site ? ar_printf(ctx->arena, "%s: ", site) : "";
}

static void add_context(ru_ctx *ctx, sc_diag *d, const sc_cost_collective *k) {
  ru_diag_context(ctx, d, "collective", k->kind);
  ru_diag_context_list(ctx, d, "axes", k->axes, k->naxes);
  ru_diag_context(ctx, d, "bytes_per_device", ar_printf(ctx->arena, "%" PRId64, k->bytes_per_device));
  ru_diag_context(ctx, d, "reason", k->reason);
}

/* A mesh a fix can name: named axes, more than one device. */
static const md_mesh *named_mesh(const prop_sharding *s) {
  const md_mesh *m = s ? s->mesh : NULL;
  return m && !m->synthesized && !m->maximal && m->naxes && m->devices > 1 ? m : NULL;
}

/* False for a reshard the compiled program will not have: a value returned as a function result that has
 * no sharding written (JAX's unspecified out_shardings) takes the value's sharding when the partitioner
 * propagates, where the reshard pass alone reads it as replicated. */
static bool inserted(ru_ctx *ctx, const prop_reshard *r) {
  /* Left to the manual family (SC05xx): edges of a manual computation and ops inside one, whose shardings
   * mix manual and free axes. GSPMD modules' made-up mesh has no axes a message or fix could name. */
  if (!named_mesh(r->from ? r->from : r->to)) return false;
  for (const ir_op *p = r->op; p; p = p->parent_op)
    if (p->kind == SC_OP_SDY_MANUAL_COMPUTATION || p->kind == SC_OP_SDY_RETURN) return false;
  if (r->op->kind != SC_OP_RETURN || !ir_op_func(r->op)) return true;
  for (uint32_t k = 0; k < r->op->noperands; k++)
    if (r->op->operands[k] == r->value && !md_model_func_result_sharding(ctx->model, ir_op_func(r->op), k)) return false;
  return true;
}

/* SC0901's case: an all-gather of a result or returned value whose reshard ends fully replicated (a
 * written sharding forces it after the op computed it sharded). An operand gathered to replicated is how a
 * sharded contraction runs (FSDP gathers its weights so): SC0902's when it is large. */
static bool full_rematerialization(const sc_cost_collective *k, const prop_reshard *r) {
  bool after_op = r->op->kind == SC_OP_RETURN || !strncmp(r->what, "result", 6);
  return after_op && !strcmp(k->kind, "all-gather") && r->from && !replicated(r->from) && replicated(r->to);
}

/* The fix that leaves the value as the op makes it: a result resharded after its op is constrained to the
 * sharding the op computes it in (`from`); a returned value gets it as the jitted function's out_shardings.
 * NULL for an operand (the op's other tensors decide; no one-line fix is right in general). */
static const char *keep_snippet(ru_ctx *ctx, const prop_reshard *r, const char *note) {
  const md_mesh *mesh = named_mesh(r->from);
  const char *from = spec_of(ctx->arena, r->from);
  if (!mesh || !from) return NULL;
  const char *mk = ru_py_make_mesh(ctx->arena, mesh);
  if (r->op->kind == SC_OP_RETURN)
    return ar_printf(ctx->arena, "mesh = %s\nf = jax.jit(f, out_shardings=NamedSharding(mesh, %s))  # %s: %s", mk, from,
                           r->what, note);
  if (strncmp(r->what, "result", 6)) return NULL;
  return ar_printf(ctx->arena, "mesh = %s\ny = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, %s))  # %s of %.*s: %s",
                         mk, from, r->what, SC_SPAN_ARG(ir_op_name(r->op)), note);
}

/* SC0901: an all-gather whose reshard ends fully replicated: every device rebuilds the whole tensor. */
void ru_check_comm_full_rematerialization(ru_ctx *ctx);
void ru_check_comm_full_rematerialization(ru_ctx *ctx) {
  const cost_analysis *c = ctx->cost;
  if (!c || !c->collective_reshards) return;
  sc_arena *a = ctx->arena;
  for (size_t i = 0; i < c->report.ncollectives; i++) {
    const sc_cost_collective *k = &c->report.collectives[i];
    const prop_reshard *r = c->collective_reshards[i];
    if (!full_rematerialization(k, r) || !inserted(ctx, r)) continue;
    const char *from = spec_of(a, r->from), *axes = axes_text(a, k);
    const char *bytes = cost_bytes_str(a, k->bytes_per_device);
    sc_diag *d = ru_emit(ctx, r->op,
                         "%s%s of %.*s (%.*s) is sharded %s but is needed fully replicated: the partitioner all-gathers "
                         "it over %s, %s received per device, and every device holds the whole tensor (XLA: "
                         "\"Involuntary full rematerialization\").",
                         python_lead(ctx, r->op), r->what, SC_SPAN_ARG(ir_op_name(r->op)), SC_SPAN_ARG(ir_value_type(r->value)), from, axes,
                         bytes);
    add_context(ctx, d, k);
    const char *fix = keep_snippet(ctx, r, ar_printf(a, "stays sharded over %s instead of gathering %s per device", axes, bytes));
    if (fix) ru_diag_fix(ctx, d, "Keep the value sharded as the op computes it instead of replicating it", fix);
  }
}

/* SC0902: any inserted collective above max_implicit_collective_bytes (default 1 GiB). */
void ru_check_comm_implicit_collective(ru_ctx *ctx);
void ru_check_comm_implicit_collective(ru_ctx *ctx) {
  const cost_analysis *c = ctx->cost;
  int64_t max = ctx->options->thresholds.max_implicit_collective_bytes;
  if (max <= 0) max = INT64_C(1) << 30; /* the documented default: 1 GiB per device */
  if (!c || !c->collective_reshards) return;
  sc_arena *a = ctx->arena;
  for (size_t i = 0; i < c->report.ncollectives; i++) {
    const sc_cost_collective *k = &c->report.collectives[i];
    const prop_reshard *r = c->collective_reshards[i];
    /* a full rematerialization is SC0901's, a kernel or callback boundary SC0903's (one mistake, one diagnostic) */
    if (k->bytes_per_device <= max || full_rematerialization(k, r) || r->boundary || !inserted(ctx, r)) continue;
    const char *axes = k->naxes ? axes_text(a, k) : "the devices of its axes";
    sc_diag *d = ru_emit(ctx, r->op,
                         "%sthe partitioner inserts a%s %s over %s for %s of %.*s (%.*s): %s per device, over the "
                         "--max-implicit-collective-bytes limit of %s (%s).",
                         python_lead(ctx, r->op), strchr("aeiou", k->kind[0]) ? "n" : "", k->kind, axes, r->what,
                         SC_SPAN_ARG(ir_op_name(r->op)), SC_SPAN_ARG(ir_value_type(r->value)), cost_bytes_str(a, k->bytes_per_device),
                         cost_bytes_str(a, max), k->reason);
    add_context(ctx, d, k);
    const char *fix = strcmp(k->kind, "all-reduce") ? keep_snippet(ctx, r, ar_printf(a, "no %s inserted", k->kind)) : NULL;
    if (fix) ru_diag_fix(ctx, d, "Keep the value sharded as the op computes it", fix); /* partial sums: inherent */
  }
}

/* ---- SC0903: reshards at a kernel or callback boundary ------------------------------------------------ */

static bool kernel_or_callback(const ir_op *op) {
  return op->kind == SC_OP_CUSTOM_CALL &&
         (op->cc == SC_CC_MOSAIC_TPU || op->cc == SC_CC_TRITON || op->cc == SC_CC_MOSAIC_GPU ||
          op->cc == SC_CC_HOST_CALLBACK_CPU || op->cc == SC_CC_HOST_CALLBACK_GPU);
}

/* For each manual computation (by op id), the first kernel or host callback it runs: in its body or in a
 * function its body calls (the model's manual contexts follow calls: JAX's shard_map body is often
 * `func.call @shmap_body`). One pass over the module; NULL entries for the rest. */
static const ir_op **callees_by_manual_computation(ru_ctx *ctx) {
  const ir_module *m = ctx->module;
  const ir_op **by_id = ar_calloc(ctx->arena, m->nops ? m->nops : 1, sizeof *by_id);
  ar_step(ctx->arena, m->nops);
  for (uint32_t i = 0; i < m->nops; i++) {
    if (!kernel_or_callback(m->ops[i])) continue;
    const md_manual_context *mc = md_model_manual(ctx->model, m->ops[i]);
    const ir_op *owner = mc ? mc->manual_op : NULL;
    if (owner && owner->kind == SC_OP_SDY_MANUAL_COMPUTATION && owner->id < m->nops && !by_id[owner->id])
      by_id[owner->id] = m->ops[i];
  }
  return by_id;
}

static bool is_callback(const ir_op *op) { return op->cc == SC_CC_HOST_CALLBACK_CPU || op->cc == SC_CC_HOST_CALLBACK_GPU; }

/* "Pallas kernel `matmul_kernel`" or "host callback `xla_ffi_python_cpu_callback`". */
static const char *callee_text(sc_arena *a, const ir_op *op) {
  if (is_callback(op)) return ar_printf(a, "host callback `%.*s`", SC_SPAN_ARG(ir_op_custom_call_target(op)));
  return ar_printf(a, "%s kernel %s", op->cc == SC_CC_TRITON ? "Triton" : op->cc == SC_CC_MOSAIC_GPU ? "Mosaic GPU" : "Pallas",
                   ru_kernel_name(a, op));
}

/* A callback gathered to its device: run it per shard instead, in a shard_map over the operand's spec. */
static const char *callback_fix(ru_ctx *ctx, const ir_op *op, const prop_reshard *r) {
  const md_mesh *mesh = named_mesh(r->from);
  const char *spec = spec_of(ctx->arena, r->from);
  const char *fn = ru_py_caller(ctx, op, NULL);
  if (!fn) fn = ru_py_fn_name(ctx);
  if (!mesh || !spec) return NULL;
  const char *ins[1] = {spec};
  return ru_shard_map_snippet(ctx->arena, mesh, fn, ins, 1, ins, 1, NULL,
                              ar_printf(ctx->arena, "# the callback in %s then runs on each device's %s shard, nothing gathered",
                                        fn, spec));
}

/* A kernel's shard_map fed another sharding: give the operand the in_specs' sharding where it is made. */
static const char *in_specs_fix(ru_ctx *ctx, const prop_reshard *r, const char *callee) {
  const md_mesh *mesh = named_mesh(r->to);
  const char *spec = spec_of(ctx->arena, r->to);
  if (!mesh || !spec) return NULL;
  const ir_block *b = ir_value_block(r->value);
  if (b && b->nargs == 1 && b->parent && b->parent->parent == ctx->module->entry) { /* the jitted function's only argument */
    const char *fn = ru_py_fn_name(ctx);
    return ar_printf(ctx->arena, "mesh = %s\n%s = jax.jit(%s, in_shardings=NamedSharding(mesh, %s))  # the argument arrives as "
                                 "the shard_map calling %s takes it",
                     ru_py_make_mesh(ctx->arena, mesh), fn, fn, spec, callee);
  }
  return ar_printf(ctx->arena,
                   "mesh = %s\nx = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, %s))  # %s of the shard_map "
                   "calling %s, sharded as its in_specs where it is computed",
                   ru_py_make_mesh(ctx->arena, mesh), spec, r->what, callee);
}

/* Boundary reshards moving less per device are left alone (docs/cost.md#communication-rules). */
#define BOUNDARY_RESHARD_MIN_BYTES (INT64_C(1) << 20)

/* SC0903: a reshard the partitioner inserts because a kernel's shard_map (in_specs) or a host callback
 * (one device) takes its operand in another sharding than the operand has. */
void ru_check_comm_boundary_reshard(ru_ctx *ctx);
void ru_check_comm_boundary_reshard(ru_ctx *ctx) {
  const cost_analysis *c = ctx->cost;
  if (!c || !c->collective_reshards) return;
  sc_arena *a = ctx->arena;
  const ir_op **callees = NULL; /* built on the first reshard at a manual computation */
  for (size_t i = 0; i < c->report.ncollectives; i++) {
    const sc_cost_collective *k = &c->report.collectives[i];
    const prop_reshard *r = c->collective_reshards[i];
    /* below the floor: a debug print of a small array, a bias gathered into a kernel */
    if (k->bytes_per_device < BOUNDARY_RESHARD_MIN_BYTES || !named_mesh(r->from ? r->from : r->to)) continue;
    const ir_op *callee = NULL;
    if (r->boundary) callee = r->op;
    else if (r->op->kind == SC_OP_SDY_MANUAL_COMPUTATION && !strncmp(r->what, "operand", 7) && ctx->model) {
      if (!callees) callees = callees_by_manual_computation(ctx);
      callee = r->op->id < ctx->module->nops ? callees[r->op->id] : NULL;
    }
    if (!callee) continue;
    const char *who = callee_text(a, callee), *axes = axes_text(a, k);
    const char *bytes = cost_bytes_str(a, k->bytes_per_device), *from = spec_of(a, r->from);
    sc_diag *d;
    if (r->boundary) {
      d = ru_emit(ctx, r->op,
                  "%s%s of %s (%.*s) is sharded %s, but the callback runs on one device: the partitioner all-gathers it "
                  "over %s first, %s received per device.",
                  python_lead(ctx, r->op), r->what, who, SC_SPAN_ARG(ir_value_type(r->value)), from ? from : "P()", axes, bytes);
    } else {
      const char *to = spec_of(a, r->to);
      d = ru_emit(ctx, r->op,
                  "%s%s of the shard_map calling %s (%.*s) arrives sharded %s, but its in_specs take it as %s: the "
                  "partitioner inserts a%s %s over %s before the kernel, %s per device.",
                  python_lead(ctx, callee), r->what, who, SC_SPAN_ARG(ir_value_type(r->value)), from ? from : "P()", to ? to : "P()",
                  strchr("aeiou", k->kind[0]) ? "n" : "", k->kind, axes, bytes);
    }
    add_context(ctx, d, k);
    if (callee != r->op) ru_diag_related(ctx, d, callee->pos.offset, callee, is_callback(callee) ? "the callback" : "the kernel");
    const char *fix = r->boundary ? callback_fix(ctx, callee, r) : in_specs_fix(ctx, r, who);
    if (fix)
      ru_diag_fix(ctx, d,
                  r->boundary ? "Run the callback on each device's shard (shard_map) instead of on one device"
                              : "Make the operand arrive in the sharding the shard_map's in_specs take",
                  fix);
  }
}
