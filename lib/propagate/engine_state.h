/* engine_state.h — the propagation engine's state, shared by the files of the engine (engine.c: the
 * passes; engine_print.c: printing the result). Internal to lib/propagate; the API is engine.h. One
 * engine lives in one request's arena and is used by one thread. */
#ifndef SC_PROPAGATE_ENGINE_STATE_H
#define SC_PROPAGATE_ENGINE_STATE_H

#include "propagate/engine.h"
#include "propagate/visit_memo.h"
#include "util/bits.h"
#include "util/hashset.h"

typedef const prop_sharding *sharding_ref;

/* A per-op table of non-decreasing numbers (prefix sums, e.g. where each op's operand slots start): a 32-bit
 * base per 64 entries and a 16-bit offset from it per entry, half the bytes of 32 bits each; 32 bits
 * each (wide) when some 64 entries span 2^16 or more. Read with prefix_at(). */
typedef struct {
  uint32_t *base;
  uint16_t *off;
  uint32_t *wide;
} prefix_table;

static inline uint32_t prefix_at(const prefix_table *t, uint32_t i) {
  return t->wide ? t->wide[i] : t->base[i / 64] + t->off[i];
}
/* Shardy's op-priority schedule: round r opens what rounds 0..r open. */
#define OP_SCHEDULE_LEN 5
#define REBASE_PTR(p, delta) ((void *)((char *)(p) - (delta)))

/* Element-wise ops by name and types (shared_elementwise_rule): open addressing, NULL = empty. */
typedef struct {
  sc_arena *a;
  uint64_t seed;
  const ir_op **ops;
  uint64_t *hashes;
  uint32_t cap, n;
} rule_share_table;

/* A manual or named computation's shardings as written (global view; NULL entries: none). */
typedef struct {
  const prop_sharding **in, **out;
} computation_globals;

/* A data-flow edge: its owner (the value whose sharding it keeps) and the sources that flow into it,
 * propagated as an op with an identity rule (Shardy's ShardableDataFlowOpInterface). */
typedef enum { EDGE_PLAIN = 0, EDGE_MANUAL_ARG, EDGE_MANUAL_RESULT } edge_kind;
typedef struct {
  const ir_op *op;
  const ir_value *owner_value;
  uint32_t owner;
  uint32_t *sources;
  const ir_value **source_values;
  uint32_t nsources;
  uint32_t index; /* the argument or result number */
  uint8_t kind;
  bool rule_known;
  const prop_rule *rule; /* identity over the owner's static dims, built on first visit; NULL = none */
} prop_edge;

typedef struct {
  sc_arena *a;
  uint32_t *stack; /* items pushed on top, visited before the rest of program order (grows: few are) */
  uint32_t n, cap;
  uint64_t *on_stack; /* bitmap: items on the stack */
  uint64_t *pending; /* bitmap: program positions >= cursor that may need a visit */
  uint32_t npending;
  uint32_t cursor; /* positions below it have had their program-order turn */
} worklist;


struct prop_engine {
  sc_arena *a;
  const ir_module *m;
  const md_model *model;
  prop_engine_options opt;
  prefix_table result_base;   /* per op id: the slot of its result 0 (prefix_at) */
  hs_name_map block_base;     /* block pointer bytes -> the slot of its argument 0 */
  uint32_t nslots;
  uint32_t *own_copy_at;      /* per op id: index into own_copy of its operand 0, UINT32_MAX = none (NULL: none at all) */
  uint32_t *own_copy;         /* per operand of those ops: the slot of its own copy of a constant expression, or UINT32_MAX */
  const ir_value **own_copy_value; /* per copy slot (the last ncopy_slots slots): the expression's value */
  uint32_t ncopy_slots;
  uint32_t *alias;            /* per slot: the slot it shares its sharding with (while's block args, groups,
                                 data-flow edges); NULL when no slot shares another's (alias_of) */
  sharding_ref *sh;           /* per slot: the current sharding (shared: equal ones are one pointer) */
  /* The shardings slots were seeded with (initial_of): a bit per slot, per 64 slots the number of seeded
   * slots before them, and the seeded slots' shardings in slot order (a pointer per slot was mostly NULL). */
  uint64_t *initial_bits;
  uint32_t *initial_rank;
  sharding_ref *initial_sh;
  uint64_t *written;          /* bitmap per slot: set after seeding (printing writes its sharding again); was_written() */
  uint32_t *origin;           /* per slot: the slot whose written sharding it grew from, UINT32_MAX = none */
  SC_VEC(prop_edge) edges;    /* data-flow edges (while, case, optimization_barrier, named/manual computations) */
  /* The edges each slot is a source or owner of (only with edges; slot_edges()): (slot, edge) pairs by
   * slot then edge, and a bit per slot that has any. Few slots have edges: a CSR row per slot was most
   * of what the index took. */
  uint64_t *edge_slot_bits;
  uint32_t *edge_slots, *edge_ids;
  uint32_t nedge_refs;
  hs_name_map edge_rules;     /* an owner's type text -> its edges' rule in edge_rule_list (edge_rule()) */
  SC_VEC(const prop_rule *) edge_rule_list;
  hs_name_map globals_index;  /* op id of a manual/named computation -> index into globals */
  SC_VEC(computation_globals) globals; /* their in_shardings and out_shardings as written */
  prefix_table use_start;      /* CSR: the ops (ids) reading each slot: users[use_start(s) .. use_start(s + 1)) */
  uint32_t *users;
  uint32_t *owner_start, *owners; /* CSR: per slot, the ops defining or owning (block arguments) its values;
                                     only when some slots are aliased (else slot_owner()) */
  bool aliased;                   /* some slot holds several values (while arguments, groups, data-flow edges) */
  SC_VEC(const ir_op *) flow_ops; /* the ops build_edges looks at (flows()), in program order */
  uint32_t noperands;             /* all ops' operands */
  prefix_table operand_start;     /* per op id (and nops): where its operands' slots start in operand_slots */
  uint32_t *operand_slots;        /* per operand, in program order: the slot it reads (operand_slot) */
  bool constant_starts;           /* some op starts a constant expression (split_constant_uses) */
  /* Each op's rule, built on first need (known_rule()): per op id 0 = not built yet, 1 = built, none,
   * else 2 + its index in rule_list. The rules are few (element-wise ops share theirs): a number per op
   * is half a pointer, and says whether the rule is built besides. */
  uint32_t *rule_of;
  SC_VEC(const prop_rule *) rule_list;
  rule_share_table share;     /* element-wise ops' name and types -> the op whose rule they share */
  uint8_t *grouped;           /* per raw slot: in an sdy.sharding_group (NULL when the module has none) */
  const prop_rule_facts *facts;
  bool aggressive;            /* the factor strategy of the running pass */
  int schedule;               /* op-priority round (0..OP_SCHEDULE_LEN-1), or -1: every op, both ways */
  /* Revisits that cannot change anything are skipped (see "the worklist"): every write to a slot is
   * logged; an item's visit in a schedule round is remembered by the log length at its start. */
  /* The log: slots, in the order their shardings were written (log_change, change_at), in blocks of
   * CHANGE_BLOCK that are never moved (a doubling array left as much again in abandoned copies). */
  SC_VEC(uint32_t *) change_blocks;
  uint32_t nchanges;
  uint32_t *last_change;      /* per slot: 1 + its latest entry in the log, 0 = never written */
  uint32_t *visited;          /* per item: 1 + log length when its last visit began, 0 = none */
  uint32_t *visit_key;        /* per item: what else that visit depended on (visit_key()), 0 = not comparable */
  bool round_seen[OP_SCHEDULE_LEN + 1];        /* per round (schedule + 1): a pass of it ran */
  uint32_t round_log_pos[OP_SCHEDULE_LEN + 1]; /* log length when that round's latest pass began */
  uint8_t *op_flags;          /* per op id: OPF_* bits, computed on first need */
  uint16_t *name_bits;        /* per ir_op.name_id: its NC_* bits | NC_KNOWN, 0 until classified (name_class()) */
  ir_span last_type;          /* the type type_rank() parsed last, and its rank */
  int32_t last_type_rank;
  /* per op id, one byte for two things (they fit in 8 bits): the rounds its directions change in
   * (ROUND_STEP_BITS, round_steps()) and what its visits need of it, noted at the first (VB_* bits,
   * first_visit_bits()) */
  uint8_t *op_bits;
  int last_schedule;          /* the schedule of the pass that ran last (-2: none yet) */
  uint32_t pass_end_log;      /* log length when that pass reached its fixed point */
  worklist work;              /* the passes' worklist, allocated once (see run_pass) */
  prop_sharding_set shardings; /* every sharding a pass wrote, once (set_slot) */
  hs_name_map seeds;          /* a written sharding's first occurrence (md_sharding.same_as) -> index in seeded */
  SC_VEC(sharding_ref) seeded; /* ... its engine sharding (seed_of) */
  prop_visit_memo memo;       /* visits of ops with a shared rule (propagate_op) */
  const ir_op **entry_funcs;  /* functions whose results follow their return values */
  uint32_t *entry_func_index; /* ... and their indices in m->funcs */
  uint32_t nentry_funcs;
  sharding_ref **func_results, **func_results_initial; /* per func index (m->funcs) */
  SC_VEC(prop_engine_message) messages; /* Shardy's warnings about the module (prop_engine_messages) */
  SC_VEC(prop_group_conflict) conflicts; /* sharding groups whose written shardings disagree */
};

/* The slot of a value (its own, before aliases), UINT32_MAX for none. */
static inline uint32_t raw_slot(const prop_engine *e, const ir_value *v) {
  if (!v) return UINT32_MAX;
  const ir_op *def = ir_value_def(v);
  if (def) return prefix_at(&e->result_base, def->id) + v->index;
  const ir_block *block = ir_value_block(v);
  if (block) {
    uint32_t base;
    if (hs_name_map_get(&e->block_base, (const char *)&block, sizeof block, &base)) return base + v->index;
  }
  return UINT32_MAX;
}

/* The sharding slot `s` was seeded with (NULL: none). */
static inline sharding_ref initial_of(const prop_engine *e, uint32_t s) {
  if (s >= e->nslots) return NULL;
  return sc_bit_test(e->initial_bits, s) ? e->initial_sh[sc_bit_rank(e->initial_bits, e->initial_rank, s)] : NULL;
}

/* Whether the rule of the op with id `id` is built, and that rule (NULL: none, or not built yet). */
static inline bool rule_known(const prop_engine *e, uint32_t id) { return e->rule_of[id] != 0; }
static inline const prop_rule *known_rule(const prop_engine *e, uint32_t id) {
  return e->rule_of[id] > 1 ? e->rule_list.v[e->rule_of[id] - 2] : NULL;
}

/* Slot `s` was written after seeding (mark_written). */
static inline bool was_written(const prop_engine *e, uint32_t s) { return sc_bit_test(e->written, s); }
static inline void mark_written(prop_engine *e, uint32_t s) { sc_bit_set(e->written, s); }

/* The slot raw slot `s` shares its sharding with (itself without aliases). */
static inline uint32_t alias_of(const prop_engine *e, uint32_t s) {
  return s < e->nslots && e->alias ? e->alias[s] : s;
}

static inline uint32_t slot_of(const prop_engine *e, const ir_value *v) { return alias_of(e, raw_slot(e, v)); }

/* `op`'s written in/out shardings when it is a manual or named computation with a body, else NULL. */
static inline const computation_globals *written_globals(const prop_engine *e, const ir_op *op) {
  uint32_t k;
  return e->globals.n && hs_name_map_get(&e->globals_index, (const char *)&op->id, sizeof op->id, &k) ? &e->globals.v[k] : NULL;
}

/* Operand k's slot of the op with id `id`, from the table index_uses() made (k below its operand count). */
static inline uint32_t indexed_operand_slot(const prop_engine *e, uint32_t id, uint32_t k) {
  return e->operand_slots[prefix_at(&e->operand_start, id) + k];
}

/* The slot operand `k` of `op` reads: its value's, or its own copy's (split constants). Once the uses are
 * indexed, read from the table index_uses() made. */
static inline uint32_t operand_slot(const prop_engine *e, const ir_op *op, uint32_t k) {
  if (e->operand_slots && op->id < e->m->nops && e->m->ops[op->id] == op) /* one of the module's ops */
    return k < op->noperands ? indexed_operand_slot(e, op->id, k) : UINT32_MAX;
  if (e->own_copy_at && e->own_copy_at[op->id] != UINT32_MAX && e->own_copy[e->own_copy_at[op->id] + k] != UINT32_MAX)
    return e->own_copy[e->own_copy_at[op->id] + k];
  return slot_of(e, op->operands[k]);
}

static inline const ir_value *block_arg(const ir_region *r, uint32_t i) {
  return r && r->nblocks && i < r->blocks[0]->nargs ? r->blocks[0]->args[i] : NULL;
}

static inline bool is_optimization_barrier(const ir_op *op) {
  size_t n = sizeof "stablehlo.optimization_barrier" - 1; /* lengths first: most ops' names stay unread */
  return (ir_op_name(op).n == n || ir_op_name(op).n == n + 2) && ir_span_eq(ir_op_bare_name(op), "stablehlo.optimization_barrier");
}

/* The op's sharding rule (built on first need; NULL = none). engine.c */
const prop_rule *prop_engine_rule(prop_engine *e, const ir_op *op);
/* Shardy's addFreeAxesToManualComputationSharding: `outer`'s leading manual axes, then `inner`'s axes,
 * open/closed and priority as `inner`, replicated/unreduced as `outer`. engine.c */
const prop_sharding *prop_engine_add_free(sc_arena *a, const ir_op *op, const md_model *model, const prop_sharding *outer,
                                          const prop_sharding *inner);

#endif
