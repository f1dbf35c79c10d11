/* shardcheck.h — the public API of libshardcheck.
 *
 * libshardcheck reads a serialized JAX/XLA module (StableHLO/MLIR text or bytecode, the jax.export
 * container, or XLA HLO text), checks its
 * shardings against a device mesh and returns a report of diagnostics.
 *
 * Ownership: every object the library returns lives in the sc_arena the caller passed in and dies
 * with sc_arena_free(). Functions that return `char *` documented as "malloc'd" hand the caller a
 * heap string to free(). The input buffer is borrowed: it must outlive the report (diagnostics and
 * the IR point into it).
 *
 * Threads: the library has no mutable global state. Any thread may call any function; one arena
 * (and everything allocated from it) must be used by one thread at a time. */
#ifndef SHARDCHECK_H
#define SHARDCHECK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- arenas ---------------------------------------------------------------------------------------
 * Every call takes an arena: the region the report and everything behind it live in. One arena per
 * request; free it when done with the report. */
typedef struct sc_arena sc_arena;
/* A new arena that may hold at most limit_bytes (0 = unlimited); past it a check stops with
 * SC_ERR_LIMIT. Returns NULL if malloc fails. */
sc_arena *sc_arena_new(size_t limit_bytes);
/* Frees the arena and everything allocated in it. NULL is a no-op. */
void sc_arena_free(sc_arena *a);
/* Bytes the arena holds (what its chunks took from malloc). */
size_t sc_arena_used(const sc_arena *a);
/* Bounds the work a check may do in this arena (0 = unlimited): a deterministic CPU budget, in the
 * library's own steps (about one per byte parsed or element visited). Past it the check stops with
 * SC_ERR_LIMIT, as for the byte limit. */
void sc_arena_set_step_limit(sc_arena *a, unsigned long long limit);

#define SC_VERSION "0.1.0"
#define SC_REPORT_SCHEMA "shardcheck.report.v1"

/* SC_FMT_BYTECODE: MLIR bytecode (the StableHLO portable artifact, `Exported.mlir_module_serialized`);
 * SC_FMT_EXPORTED: the `Exported.serialize()` flatbuffer around it. Neither has lines. */
typedef enum { SC_FMT_AUTO = 0, SC_FMT_STABLEHLO, SC_FMT_HLO, SC_FMT_BYTECODE, SC_FMT_EXPORTED } sc_format;
typedef enum { SC_SEV_NOTE = 0, SC_SEV_WARNING, SC_SEV_ERROR } sc_severity;
typedef enum { SC_AXIS_AUTO = 0, SC_AXIS_EXPLICIT, SC_AXIS_MANUAL } sc_axis_type;
typedef enum { SC_PLATFORM_UNSPECIFIED = 0, SC_PLATFORM_TPU, SC_PLATFORM_GPU, SC_PLATFORM_CPU } sc_platform;

/* Outcome of sc_check(). Findings in the module are diagnostics with SC_OK; only these stop it. */
typedef enum {
  SC_OK = 0,
  SC_ERR_CANCELLED, /* *options.cancel became non-zero */
  SC_ERR_LIMIT,     /* arena byte limit exceeded (message in report->failure) */
  SC_ERR_INVALID,   /* bad options (e.g. unknown rule glob); message in report->failure */
} sc_status;

typedef struct {
  const char *name;
  int64_t size;
  sc_axis_type type;
} sc_mesh_axis;

/* A target mesh: the mesh the module will be deployed on. */
typedef struct {
  sc_mesh_axis *axes;
  size_t naxes;
  int64_t *device_ids; /* NULL = iota order */
  size_t ndevice_ids;
  sc_platform platform;
  const char *device_kind; /* JAX's device_kind ("TPU v5 lite", "NVIDIA H100 80GB HBM3") or a short name
                              ("v5e", "h100"): its memory per device (docs/cost.md); NULL = unknown */
} sc_target_mesh;

/* Thresholds of the memory and communication rules (docs/cost.md); a zero field takes its default. */
typedef struct {
  double replicated_fraction;     /* memory-replicated-parameters: share of the arguments' bytes left
                                     fully replicated above which it warns (default 0.1) */
  int64_t replicated_min_bytes;   /* ... and only when those replicated bytes per device reach this (64 MiB) */
  double padding_fraction;        /* memory-padding-waste: share of a tensor's shards that is padding (0.25) */
  int64_t padding_min_bytes;      /* ... and only when that padding is at least this many bytes per device (16 MiB) */
  int64_t max_implicit_collective_bytes; /* comm-implicit-collective: an inserted collective moving more bytes per
                                            device than this (1 GiB) */
} sc_cost_thresholds;

typedef struct {
  sc_format input_format;    /* SC_FMT_AUTO detects it */
  const char *input_name;    /* shown in reports; NULL = "<stdin>" */
  const char *rules;         /* comma-separated globs, '-' excludes: "sharding-*,-sharding-priority"; NULL = all */
  sc_severity min_severity;  /* diagnostics below are dropped */
  bool split_input_file;     /* "// -----" separates independent modules */
  const sc_target_mesh *mesh;/* NULL = the module's own meshes are the target */
  sc_platform platform;      /* overrides mesh->platform when set */
  uint32_t max_depth;        /* region/bracket nesting limit; 0 = default (SC_DEFAULT_MAX_DEPTH) */
  uint32_t max_ops;          /* op count limit; 0 = default (SC_DEFAULT_MAX_OPS) */
  const atomic_int *cancel;  /* polled during the analysis (another thread may set it); non-zero aborts with
                                SC_ERR_CANCELLED */
  const char *input_sha256;  /* the input's SHA-256 as 64 lowercase hex digits when the caller already has it
                                (the daemon hashes the module for its cache); NULL or malformed = computed here */
  bool sha256_by_caller;     /* leave report->sha256 empty: the caller fills it after sc_check returns (the CLI
                                hashes a large input on another thread while the check runs) */
  uint64_t hash_seed;        /* keys the check's hash tables so that crafted names cannot collide; callers facing
                                untrusted input pass random bits (the CLI, daemon and Python package do);
                                0 = bits of addresses. Reports never depend on it. */
  bool no_propagate;         /* rules read only the written shardings. By default they see the ones Shardy's
                                propagation derives (user-priority strategy, through calls), and diagnostics
                                name where a derived sharding came from (`related`); propagation may spend
                                half of what the request's limits leave, past that a note (SC0004) says the
                                rules read the written shardings */
  int64_t device_memory_bytes; /* memory of one device for the memory rules; 0 = from mesh->device_kind, else unknown */
  sc_cost_thresholds thresholds;
} sc_options;

#define SC_DEFAULT_MAX_DEPTH 256u
#define SC_DEFAULT_MAX_OPS 5000000u

/* One text edit of the module: replace bytes [offset, offset+length) with `replacement`. */
typedef struct {
  uint32_t offset, length;
  uint32_t line, col, end_line, end_col; /* 1-based; end is exclusive */
  const char *replacement;
} sc_edit;

typedef struct {
  const char *title;   /* one sentence */
  const char *note;    /* optional prose; NULL if none */
  bool machine;        /* true: `edits` are a safe text edit of the module */
  const char *snippet; /* Python a JAX user can paste (never prose or placeholders), or NULL */
  sc_edit *edits;
  size_t nedits;
} sc_fix;

/* A context entry: key -> one string (nvalues == 1, !is_list) or a list of strings. */
typedef struct {
  const char *key;
  const char **values;
  size_t nvalues;
  bool is_list;
} sc_context_entry;

/* Another site of the same mistake: a consequence folded into its root diagnostic, or the declaration
 * a diagnostic refers to (the mesh). Positions as in sc_diag. */
typedef struct {
  const char *message;        /* what is at this site, or NULL */
  const char *code;           /* the folded diagnostic's code, or NULL */
  uint32_t line, col, offset, end_line, end_col, end_offset;
  const char *function;
  const char *op;
  bool has_source;
  const char *source_file;
  uint32_t source_line, source_col;
} sc_related;

typedef struct {
  const char *code;    /* "SC0301" */
  const char *rule;    /* "kernel-outside-manual" */
  sc_severity severity;
  const char *message;
  uint32_t line, col, offset; /* module location of the op (1-based line/col); line 0 = whole module */
  uint32_t end_line, end_col, end_offset; /* end (exclusive) of the offending span; end_offset 0 = unknown */
  const char *op_path;        /* the op's path where the module has no lines (bytecode), e.g. "main/3/1"; else NULL */
  const char *function;       /* enclosing function or NULL */
  const char *op;             /* op name or NULL */
  const char *target;         /* custom call target or NULL */
  bool has_source;            /* source_location from debug info */
  const char *source_file;
  uint32_t source_line, source_col;
  sc_context_entry *context;
  size_t ncontext;
  sc_fix *fixes;
  size_t nfixes;
  sc_related *related;        /* other sites of the same mistake */
  size_t nrelated;
} sc_diag;

/* One tensor of the entry function with its per-device bytes (docs/cost.md). */
typedef struct {
  const char *name;        /* "arg 0", "result 1" */
  const char *kind;        /* "argument" or "result" */
  const char *type;        /* the tensor type as written */
  const char *sharding;    /* the sharding in effect as a PartitionSpec ("P('data', None)"), "replicated", or NULL */
  int64_t global_bytes;    /* the whole tensor */
  int64_t bytes_per_device;/* one device's shard, padded as XLA pads uneven shards */
  bool donated;            /* tf.aliasing_output / jax.buffer_donor (arguments) */
} sc_cost_tensor;

/* One collective the partitioner will insert (a reshard of the propagated shardings, docs/cost.md). */
typedef struct {
  uint32_t line, col;      /* of the op it belongs to; 0 without lines */
  const char *function;
  const char *op;          /* the op's name */
  const char *kind;        /* "all-gather", "all-slice", "all-to-all", "collective-permute", "all-reduce" */
  const char **axes;       /* mesh axes it runs over */
  size_t naxes;
  int64_t bytes_per_device;/* bytes one device sends (= receives) */
  const char *reason;      /* why: "operand 0 of stablehlo.dot_general: <@mesh, [{"x"}, {}]> -> <@mesh, [{}, {}]>" */
} sc_cost_collective;

/* What the module costs per device: the entry function's arguments and results from the shardings in
 * effect (propagated when propagation ran), and a lower bound on peak live bytes (docs/cost.md). */
typedef struct {
  bool computed;                 /* false: no entry function (the JSON says null) */
  int64_t device_memory_bytes;   /* -1 = unknown */
  const char *device_kind;       /* the device_kind that gave it, or NULL */
  int64_t arguments_bytes, results_bytes, donated_bytes, peak_bytes_lower_bound;
  sc_cost_tensor *largest;       /* the largest per device first, at most SC_COST_LARGEST */
  size_t nlargest;
  sc_cost_collective *collectives; /* what the partitioner's reshards become (with propagation), in the pass's
                                      order; NULL = not computed (the JSON says null) */
  size_t ncollectives;
} sc_cost_report;
#define SC_COST_LARGEST 5

typedef struct {
  const char *input_name;
  sc_format format;
  const char *buf; /* borrowed input, for rendering source lines */
  bool has_lines;  /* false for bytecode/exported input: locations are op paths and Python locations */
  size_t bytes;
  char sha256[65];
  size_t functions, ops;
  /* The mesh the module was checked against. */
  const char *mesh_source; /* "module", "request" or "none" */
  sc_mesh_axis *mesh_axes;
  size_t mesh_naxes;
  int64_t mesh_devices;
  sc_platform platform;
  size_t errors, warnings, notes;
  sc_diag *diags; /* sorted by offset, then code */
  size_t ndiags;
  const char *failure; /* set when sc_check did not return SC_OK */
  bool propagation_limited; /* propagation (SC0004) or the collectives computed from it (cost.collectives null)
                               stopped at its share of the limits: a caller that can give
                               the check a larger arena may run it again */
  sc_cost_report cost; /* the first module's (docs/cost.md) */
} sc_report;

/* Checks `len` bytes at `buf`. `*out` is always set (allocated in `arena`) unless the arena cannot
 * provide the first bytes, in which case SC_ERR_LIMIT is returned and *out is NULL. */
sc_status sc_check(sc_arena *arena, const char *buf, size_t len, const sc_options *options, sc_report **out);
/* ---- propagate: the module as Shardy's passes leave it ---------------------------------------- */
typedef enum {
  SC_PROPAGATE_PIPELINE = 0, /* -sdy-propagation-pipeline: user priority, op priority, aggressive */
  SC_PROPAGATE_NONE,         /* no propagation (only what the other options ask for) */
  SC_PROPAGATE_BASIC,        /* -sdy-basic-propagate */
  SC_PROPAGATE_AGGRESSIVE,   /* -sdy-aggressive-propagate */
  SC_PROPAGATE_OP_PRIORITY,  /* -sdy-op-priority-propagate */
  SC_PROPAGATE_USER_PRIORITY /* -sdy-user-priority-propagate */
} sc_propagate_strategy;

typedef struct {
  sc_propagate_strategy strategy;
  bool annotate_rules;       /* -sdy-populate-op-sharding-rules: attach each op's sharding rule, nothing else */
  bool conservative;         /* conservative-propagation=true */
  bool keep_sharding_rules;  /* keep-sharding-rules=true */
  bool dedup_functions_fully;
  bool split_input_file;     /* chunks between "// -----" lines are separate modules, printed likewise */
  sc_format input_format;    /* SC_FMT_AUTO sniffs */
  uint32_t max_depth, max_ops; /* 0 = defaults */
  uint64_t hash_seed;
  const atomic_int *cancel;     /* as sc_options.cancel */
  bool insert_reshards;         /* -sdy-insert-explicit-reshards='enable-full-version=true' (after the strategy) */
  bool reshards_to_collectives; /* -sdy-reshard-to-collectives (after the strategy) */
  bool json;                 /* text is a JSON document: every value's sharding with its location and origin
                                (docs/propagation.md); reads every input format */
  const sc_target_mesh *mesh;/* the target mesh (axis names for GSPMD shardings), as sc_options.mesh */
  bool keep_redundant_reshards; /* with reshards_to_collectives: keep-redundant-reshards=true (a reshard to the
                                   sharding its input already has stays) */
  bool insert_reshards_partial; /* with insert_reshards: enable-full-version=false (only the reshards Shardy's
                                   partial version inserts) */
  bool propagate_to_func_results; /* -sdy-propagate-to-func-results (with strategy none): every function but
                                     main takes its returned values' shardings on its results */
} sc_propagate_options;

/* A message of a pass about an op (Shardy's warnings and errors), at a 1-based line and column. */
typedef struct {
  sc_severity severity;
  uint32_t line, col;
  const char *message;
} sc_propagate_message;

typedef struct {
  const char *text;      /* the printed module(s), NUL-terminated */
  size_t len;
  sc_propagate_message *messages;
  size_t nmessages;
  const char *failure;   /* why the status is not SC_OK (also a module that does not parse), else NULL */
} sc_propagate_result;

/* Runs the requested passes on `len` bytes at `buf` and prints the module as sdy_opt prints it after
 * them (MLIR text in), or with options->json the shardings as JSON (any input format). Everything in
 * *out lives in `arena`. Returns SC_OK, SC_ERR_INVALID (bad options, an input the printer cannot print,
 * a syntax error: out->failure says which), SC_ERR_CANCELLED or SC_ERR_LIMIT. Any thread, one request
 * per arena. */
sc_status sc_propagate(sc_arena *arena, const char *buf, size_t len, const sc_propagate_options *options,
                       sc_propagate_result *out);
/* "pipeline", "none", "basic", "aggressive", "op-priority" or "user-priority" into *out: 0, or -1 for
 * another name. Pure; any thread. */
int sc_propagate_strategy_parse(const char *s, sc_propagate_strategy *out);
/* The name sc_propagate_strategy_parse reads ("pipeline" for an unknown value). Pure; any thread. */
const char *sc_propagate_strategy_name(sc_propagate_strategy s);

/* The SHA-256 of `len` bytes at `buf` as 64 lowercase hex digits (what report->sha256 holds). Pure; any
 * thread. */
void sc_sha256_hex(const char *buf, size_t len, char out[65]);

/* Parses a mesh spec "data=2,model=4:explicit" (optionally with ";devices=0,1,..."), into `arena`,
 * and validates it with sc_mesh_validate(). Returns 0, or -1 with a message (in arena) in *error. */
int sc_mesh_parse(sc_arena *arena, const char *spec, sc_target_mesh *out, const char **error);

/* The largest target mesh accepted (devices = product of the axis sizes). */
#define SC_MAX_MESH_DEVICES (1ll << 24)
/* Validates a target mesh however it was built (spec, RPC request, API): at least one axis; names
 * non-empty and unique; sizes >= 1; at most SC_MAX_MESH_DEVICES devices; known axis types and
 * platform; device ids, when given, one per device, each in [0, devices) and none twice. Returns 0,
 * or -1 with *error set to a message naming the field ("mesh.device_ids[1]: device id 0 is a
 * duplicate (mesh of 8 devices)"), allocated in `arena`. Linear in axes + device ids; thread-safe
 * (per arena). */
int sc_mesh_validate(sc_arena *arena, const sc_target_mesh *mesh, const char **error);

const char *sc_format_name(sc_format f);
const char *sc_severity_name(sc_severity s);
const char *sc_platform_name(sc_platform p);
const char *sc_axis_type_name(sc_axis_type t);
int sc_platform_parse(const char *s, sc_platform *out);   /* 0 or -1 */
int sc_format_parse(const char *s, sc_format *out);       /* 0 or -1; "auto|stablehlo|mlir|hlo|bytecode|exported" */
/* The memory of one device of `device_kind` (JAX's name or a short one, case and spacing ignored) from
 * docs/cost.md's table, or -1 when the kind is not in it. Pure; any thread. */
int64_t sc_device_memory_bytes(const char *device_kind);

/* Report emitters. Each returns a malloc'd NUL-terminated string the caller free()s, or NULL on OOM.
 * They read the report only; any thread may render any report it may read. */
char *sc_report_json(const sc_report *report, bool pretty);
char *sc_report_sarif(const sc_report *report); /* = sc_report_sarif_many(&report, 1, NULL) */
char *sc_report_text(const sc_report *report, bool color);

/* One self-contained HTML page (inline CSS and SVG; no script, no network: a Content-Security-Policy
 * forbids loads) for `nreports` reports in order: the summary, the mesh as a grid of devices, each
 * diagnostic with its Python and module locations, a module source excerpt, its context, related sites
 * and fixes, and each sharded tensor a diagnostic is about drawn as its blocks over the devices
 * (padding of uneven blocks hatched, replicas shaded). Everything from the input is HTML-escaped;
 * output is linear in the reports (pictures, devices and blocks drawn are capped with "and N more").
 * Deterministic: the same report renders the same bytes anywhere. */
char *sc_report_html_many(const sc_report *const *reports, size_t nreports);
char *sc_report_html(const sc_report *report); /* = sc_report_html_many(&report, 1) */

/* A Python source line for the text report: the caller reads `file` (the library does no I/O). Returns
 * the line's bytes without its newline (borrowed until the next call; *len set) or NULL when unknown. */
typedef const char *(*sc_source_line_fn)(void *user, const char *file, uint32_t line, size_t *len);

typedef struct {
  bool color;   /* ANSI colours */
  bool summary; /* end with the "NAME: E errors, W warnings, N notes" line */
  unsigned width; /* terminal columns: long source lines are windowed around the caret to fit; 0 = not a
                   * terminal (lines cut at 160 bytes) */
  sc_source_line_fn source_line; /* NULL: Python locations are named without their source line */
  void *source_user;
} sc_text_options;
/* Text with options (NULL = no colour, with the summary line). The input name, messages and source
 * lines are escaped (control characters as \xNN or '?'), names are cut at 256 bytes. A diagnostic with
 * a Python location leads with it (and its source line, when options->source_line gives it); its
 * headline is the message's first sentences (JAX's text), the rest a `= note:`. */
char *sc_report_text_ex(const sc_report *report, const sc_text_options *options);

/* Where a file named by a report is, for SARIF artifact URIs. */
typedef enum {
  SC_PATH_MISSING = 0, /* no such file */
  SC_PATH_UNDER_ROOT,  /* `out` holds the path relative to the source root ("src/model.py") */
  SC_PATH_ABSOLUTE,    /* `out` holds an absolute path outside the source root */
} sc_path_kind;

#define SC_HOMEPAGE "https://github.com/shardcheck/shardcheck"
/* A rule's page is SC_RULE_PAGE_BASE + code + ".md": docs/rules/, generated from the catalog. */
#define SC_RULE_PAGE_BASE SC_HOMEPAGE "/blob/main/docs/rules/"

typedef struct {
  /* helpUri of a rule = help_uri_base + code ("https://docs.example/rules/" -> ".../rules/SC0301");
   * NULL = the rule's page in the repository, SC_RULE_PAGE_BASE + code + ".md". */
  const char *help_uri_base;
  /* The source root as an absolute directory path: originalUriBaseIds["%SRCROOT%"]; NULL = left out. */
  const char *source_root;
  /* Resolves `path` (a module's input name, or a Python file from debug info when python_source) into
   * out[outsz]. The caller does the I/O (the library does none); called on the emitting thread.
   * NULL: module names are used as given (relative to %SRCROOT% unless absolute) and Python files
   * are never the primary location. */
  sc_path_kind (*locate)(void *user, const char *path, bool python_source, char *out, size_t outsz);
  void *user;
  /* fingerprints[i][k]: diagnostic k of report i (a caller that dropped diagnostics after computing
   * them passes the ones it kept); NULL = sc_report_fingerprints() of each report. */
  const char *const *const *fingerprints;
  /* Errors of the run itself (inputs that could not be checked): run.invocations[0] gets
   * executionSuccessful = (n == 0) and one error notification each. NULL/0 = none. */
  const char *const *tool_errors;
  size_t ntool_errors;
} sc_sarif_options;

/* One SARIF 2.1.0 log with one run for any number of reports (the order given). Rules carry
 * descriptions, help (text and markdown: the explain page), helpUri, tags and default levels;
 * results carry ruleId/ruleIndex/level, partialFingerprints (sc_report_fingerprints), regions with
 * end positions, logical locations, machine fixes. A result's primary location is the Python line
 * when `locate` finds the file under the source root (or the module has no lines), with the module
 * location as relatedLocation id 1 linked from the message; otherwise the module. */
char *sc_report_sarif_many(const sc_report *const *reports, size_t nreports, const sc_sarif_options *options);

/* A stable identity for each diagnostic of `report`, for baselines and SARIF partialFingerprints:
 * 16 hex digits of SHA-256 over code, function, op, custom call target and the occurrence number of
 * that tuple in the report — no line numbers, so unrelated edits keep it. Returns an array of
 * report->ndiags strings in `arena` (NULL if the arena is exhausted). Linear in the diagnostics. */
const char **sc_report_fingerprints(sc_arena *arena, const sc_report *report);

/* Rules and the code catalog (static data; valid for the life of the process). */
typedef struct sc_rule sc_rule;
typedef struct {
  const char *code;
  const char *title;       /* one line */
  const char *explanation; /* what it means, when it happens, how to fix (plain text, paragraphs) */
  const char *bad_example; /* a module that yields exactly this code, or NULL */
  const char *good_example;/* the fixed module, yields no diagnostic, or NULL */
  const char *bad_mesh;    /* target mesh spec the examples are checked with, or NULL */
} sc_catalog_entry;

size_t sc_rule_count(void);
/* Checks a rule selection (sc_options.rules syntax; globs match names, codes and families in any case):
 * 0, or -1 with a message in *error (allocated in `arena`) naming the selector that matches no rule.
 * Pure; any thread. */
int sc_rules_validate(sc_arena *arena, const char *globs, const char **error);
/* Rule i: name, family, code, default severity, one-line summary. */
void sc_rule_info(size_t i, const char **name, const char **family, const char **code, sc_severity *severity,
                  const char **summary);
const sc_catalog_entry *sc_catalog_find(const char *code); /* NULL if unknown */
size_t sc_catalog_count(void);
const sc_catalog_entry *sc_catalog_at(size_t i);
/* The long explanation page for `code` as text. malloc'd; NULL if the code is unknown. */
char *sc_explain_text(const char *code);
/* The same page as Markdown (SARIF help.markdown, `explain --format markdown`). */
char *sc_explain_markdown(const char *code);
/* A stable hash of the rule set and catalog, for cache keys ("rules version"). */
const char *sc_rules_version(void);

#endif
