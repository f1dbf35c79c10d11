/* cli_config.c — shardcheck.json: found upward from the current directory (or --config FILE).
 *
 *   {"rules": "sharding-*,-sharding-priority" | ["kernel-*", ...],
 *    "severity": {"SC0303": "warning", "callback-wrong-platform": "note"},
 *    "mesh": "data=4,model=2", "platform": "tpu", "fail_on": "warning",
 *    "source_root": ".", "include": ["*.txt"], "exclude": ["old_*"],
 *    "baseline": ".shardcheck-baseline.json", "help_uri_base": "https://...",
 *    "device_memory": "16GiB" | 17179869184,
 *    "thresholds": {"replicated_fraction": 0.1, "replicated_min_bytes": "64MiB", "padding_fraction": 0.25,
 *                   "padding_min_bytes": "16MiB", "max_implicit_collective_bytes": "256MiB"}}
 *
 * Paths are relative to the file's directory. Flags win over the file. Unknown keys, wrong types and
 * unknown values are errors (exit 2), so a typo never silently changes what CI checks. */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CONFIG_NAME "shardcheck.json"

/* shardcheck.json in the cwd or its nearest ancestor: a malloc'd path, or NULL. */
static char *discover(void) {
  char dir[PATH_MAX];
  if (!getcwd(dir, sizeof dir)) return NULL;
  for (;;) {
    char path[PATH_MAX + sizeof CONFIG_NAME + 1];
    snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", CONFIG_NAME);
    if (access(path, R_OK) == 0) return xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) {
      if (strcmp(dir, "/") == 0) return NULL;
      strcpy(dir, "/");
      continue;
    }
    *slash = '\0';
  }
}

/* `rel` against the config file's directory (absolute paths as they are); malloc'd. */
static char *relative_to(const char *config_path, const char *rel) {
  if (rel[0] == '/') return xstrdup(rel);
  const char *slash = strrchr(config_path, '/');
  if (!slash) return xstrdup(rel);
  size_t n = (size_t)(slash - config_path) + 1 + strlen(rel) + 1;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%.*s/%s", (int)(slash - config_path), config_path, rel);
  return s;
}

static int bad(const char *path, const char *key, const char *why) {
  fprintf(stderr, "shardcheck: %s: \"%s\": %s\n", path, key, why);
  return EXIT_TROUBLE;
}

static int string_list(const char *path, const char *key, json_t *v, str_list *out) {
  if (json_is_string(v)) v = json_pack("[O]", v);
  else if (json_is_array(v)) json_incref(v);
  else return bad(path, key, "expected a string or an array of strings");
  size_t i;
  json_t *e;
  json_array_foreach(v, i, e) {
    if (!json_is_string(e)) {
      json_decref(v);
      return bad(path, key, "expected strings");
    }
    char **nv = realloc(out->v, (out->n + 1) * sizeof *nv);
    if (!nv) break;
    out->v = nv;
    out->v[out->n++] = xstrdup(json_string_value(e));
  }
  json_decref(v);
  return 0;
}

/* "rules": a glob string or an array joined with commas. */
static int rules_value(const char *path, json_t *v, char **out) {
  str_list l = {0};
  if (string_list(path, "rules", v, &l)) return EXIT_TROUBLE;
  size_t n = 1;
  for (size_t i = 0; i < l.n; i++) n += strlen(l.v[i]) + 1;
  char *s = calloc(1, n);
  for (size_t i = 0; s && i < l.n; i++) {
    if (i) strcat(s, ",");
    strcat(s, l.v[i]);
  }
  for (size_t i = 0; i < l.n; i++) free(l.v[i]);
  free(l.v);
  free(*out);
  *out = s;
  return 0;
}

static int severity_value(const char *path, json_t *v, check_settings *s) {
  if (!json_is_object(v)) return bad(path, "severity", "expected an object {\"CODE or rule\": \"error|warning|note\"}");
  const char *k;
  json_t *e;
  json_object_foreach(v, k, e) {
    sc_severity sev;
    if (!json_is_string(e) || parse_severity(json_string_value(e), &sev))
      return bad(path, "severity", "values are error, warning or note");
    if (!sc_catalog_find(k)) {
      fprintf(stderr, "shardcheck: %s: \"severity\": unknown code or rule '%s'\n", path, k);
      return EXIT_TROUBLE;
    }
    severity_override *no = realloc(s->overrides, (s->noverrides + 1) * sizeof *no);
    if (!no) return EXIT_TROUBLE;
    s->overrides = no;
    s->overrides[s->noverrides].rule = xstrdup(k);
    s->overrides[s->noverrides++].severity = sev;
  }
  return 0;
}

static int string_value(const char *path, const char *key, json_t *v, const char **out) {
  if (!json_is_string(v)) return bad(path, key, "expected a string");
  *out = json_string_value(v);
  return 0;
}

/* A byte count: a JSON integer or a string with a unit ("16GiB"). */
static int bytes_value(const char *path, const char *key, json_t *v, int64_t *out) {
  if (json_is_integer(v) && json_integer_value(v) > 0) *out = (int64_t)json_integer_value(v);
  else if (!json_is_string(v) || parse_bytes(json_string_value(v), out))
    return bad(path, key, "expected a positive byte count (an integer, or a string such as \"16GiB\")");
  return 0;
}

static int fraction_value(const char *path, const char *key, json_t *v, double *out) {
  if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1)
    return bad(path, key, "expected a number in (0, 1]");
  *out = json_number_value(v);
  return 0;
}

/* "thresholds": {...} of the memory and communication rules (docs/cost.md#thresholds); a flag given
 * (`flagged`: --max-implicit-collective-bytes) wins over the file. */
static int thresholds_value(const char *path, json_t *v, sc_cost_thresholds *t, bool flagged) {
  if (!json_is_object(v)) return bad(path, "thresholds", "expected an object");
  const char *k;
  json_t *e;
  json_object_foreach(v, k, e) {
    int rc;
    if (!strcmp(k, "replicated_fraction")) rc = fraction_value(path, k, e, &t->replicated_fraction);
    else if (!strcmp(k, "replicated_min_bytes")) rc = bytes_value(path, k, e, &t->replicated_min_bytes);
    else if (!strcmp(k, "padding_fraction")) rc = fraction_value(path, k, e, &t->padding_fraction);
    else if (!strcmp(k, "padding_min_bytes")) rc = bytes_value(path, k, e, &t->padding_min_bytes);
    else if (!strcmp(k, "max_implicit_collective_bytes")) {
      int64_t bytes = 0;
      rc = bytes_value(path, k, e, &bytes);
      if (!rc && !flagged) t->max_implicit_collective_bytes = bytes;
    } else {
      fprintf(stderr, "shardcheck: %s: \"thresholds\": unknown key \"%s\" (replicated_fraction, replicated_min_bytes, "
                      "padding_fraction, padding_min_bytes, max_implicit_collective_bytes)\n", path, k);
      return EXIT_TROUBLE;
    }
    if (rc) return rc;
  }
  return 0;
}

static int apply_key(const char *path, const char *key, json_t *v, check_settings *s, const flags_given *g) {
  const char *str = NULL;
  if (!strcmp(key, "rules")) return g->rules ? 0 : rules_value(path, v, &s->rules);
  if (!strcmp(key, "severity")) return severity_value(path, v, s);
  if (!strcmp(key, "include")) return g->include ? 0 : string_list(path, key, v, &s->include);
  if (!strcmp(key, "exclude")) return g->exclude ? 0 : string_list(path, key, v, &s->exclude);
  if (!strcmp(key, "device_memory")) {
    int64_t bytes;
    if (bytes_value(path, key, v, &bytes)) return EXIT_TROUBLE;
    if (!g->device_memory) s->opt.device_memory_bytes = bytes;
    return 0;
  }
  if (!strcmp(key, "thresholds")) return thresholds_value(path, v, &s->opt.thresholds, g->max_implicit_collective_bytes);
  if (!strcmp(key, "mesh") || !strcmp(key, "platform") || !strcmp(key, "fail_on") || !strcmp(key, "source_root") ||
      !strcmp(key, "baseline") || !strcmp(key, "help_uri_base")) {
    if (string_value(path, key, v, &str)) return EXIT_TROUBLE;
  } else {
    fprintf(stderr, "shardcheck: %s: unknown key \"%s\" (rules, severity, mesh, platform, fail_on, source_root, "
                    "include, exclude, baseline, help_uri_base, device_memory, thresholds)\n", path, key);
    return EXIT_TROUBLE;
  }
  if (!strcmp(key, "mesh") && !g->mesh) {
    free(s->mesh_spec);
    s->mesh_spec = xstrdup(str);
  } else if (!strcmp(key, "platform") && !g->platform) {
    if (sc_platform_parse(str, &s->opt.platform)) return bad(path, key, "tpu, gpu or cpu");
  } else if (!strcmp(key, "fail_on") && !g->fail_on) {
    if (parse_fail_on(str, &s->fail_on)) return bad(path, key, "error, warning, note or never");
  } else if (!strcmp(key, "source_root") && !g->source_root) {
    free(s->source_root);
    s->source_root = relative_to(path, str);
  } else if (!strcmp(key, "baseline") && !g->baseline) {
    free(s->baseline);
    s->baseline = relative_to(path, str);
  } else if (!strcmp(key, "help_uri_base") && !g->help_uri_base) {
    free(s->help_uri_base);
    s->help_uri_base = xstrdup(str);
  }
  return 0;
}

int config_load(const char *path, bool discover_it, check_settings *s, const flags_given *given) {
  char *found = path ? xstrdup(path) : discover_it ? discover() : NULL;
  if (!found) return 0;
  json_error_t jerr;
  json_t *root = json_load_file(found, JSON_REJECT_DUPLICATES, &jerr);
  int rc = 0;
  if (!root) {
    fprintf(stderr, "shardcheck: %s:%d:%d: %s\n", found, jerr.line, jerr.column, jerr.text);
    rc = EXIT_TROUBLE;
  } else if (!json_is_object(root)) {
    fprintf(stderr, "shardcheck: %s: expected a JSON object\n", found);
    rc = EXIT_TROUBLE;
  } else {
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
      if ((rc = apply_key(found, key, v, s, given))) break;
    }
  }
  json_decref(root);
  free(found);
  return rc;
}
