/* op_rule_text.c — Shardy's `#sdy.op_sharding_rule<...>` syntax: printing (prop_rule_str,
 * prop_factor_symbol) and parsing (prop_rule_parse), for rules written on ops as `sdy.sharding_rule`. */
#include "propagate/op_rule.h"

#include <ctype.h>
#include <string.h>

/* Symbols i..z are factors 0..17; then z_1, z_2, ... (Shardy's factorSymbolString). */
#define SYMBOL_LAST_LETTER 17u

void prop_factor_symbol(ar_str *out, uint32_t index) {
  if (index <= SYMBOL_LAST_LETTER) {
    char c = (char)('i' + index);
    ar_str_put(out, &c, 1);
  } else {
    ar_str_printf(out, "z_%u", index - SYMBOL_LAST_LETTER);
  }
}

static void put_tensors(ar_str *s, const prop_tensor *t, uint32_t n) {
  ar_str_puts(s, "(");
  for (uint32_t i = 0; i < n; i++) {
    ar_str_puts(s, i ? ", [" : "[");
    for (uint32_t d = 0; d < t[i].rank; d++) {
      if (d) ar_str_puts(s, ", ");
      for (uint32_t k = 0; k < t[i].dims[d].nfactors; k++) prop_factor_symbol(s, t[i].dims[d].factors[k]);
    }
    ar_str_puts(s, "]");
  }
  ar_str_puts(s, ")");
}

/* ` kind={i, k}` listing the factors for which `pick` holds, nothing when there are none. */
static void put_kind(ar_str *s, const prop_rule *r, const char *kind, int type, bool blocked) {
  bool any = false;
  for (uint32_t f = 0; f < r->nfactors; f++) {
    bool pick = blocked ? r->factors[f].blocked : r->factors[f].type == type;
    if (!pick) continue;
    ar_str_printf(s, any ? ", " : " %s={", kind);
    prop_factor_symbol(s, f);
    any = true;
  }
  if (any) ar_str_puts(s, "}");
}

const char *prop_rule_str(sc_arena *a, const prop_rule *r) {
  ar_str s = SC_ASTR_INIT(a);
  ar_str_puts(&s, "#sdy.op_sharding_rule<");
  put_tensors(&s, r->operands, r->noperands);
  ar_str_puts(&s, "->");
  put_tensors(&s, r->results, r->nresults);
  if (r->nfactors) {
    ar_str_puts(&s, " {");
    for (uint32_t f = 0; f < r->nfactors; f++) {
      if (f) ar_str_puts(&s, ", ");
      prop_factor_symbol(&s, f);
      ar_str_printf(&s, "=%lld", (long long)r->factors[f].size);
    }
    ar_str_puts(&s, "}");
  }
  put_kind(&s, r, "reduction", PROP_FACTOR_REDUCTION, false);
  put_kind(&s, r, "need_replication", PROP_FACTOR_NEED_REPLICATION, false);
  put_kind(&s, r, "permutation", PROP_FACTOR_PERMUTATION, false);
  put_kind(&s, r, "blocked_propagation", 0, true);
  if (r->custom) ar_str_puts(&s, ", custom");
  ar_str_puts(&s, ">");
  return ar_str_str(&s);
}

/* ---- parsing ---- */

typedef struct {
  sc_arena *a;
  const char *p, *end;
  const char *err;
} rp;

static void skip_ws(rp *r) { r->p = ir_skip_space(r->p, r->end); }
static bool eat(rp *r, const char *lit) {
  skip_ws(r);
  size_t n = strlen(lit);
  if ((size_t)(r->end - r->p) >= n && memcmp(r->p, lit, n) == 0) {
    r->p += n;
    return true;
  }
  return false;
}
static bool fail(rp *r, const char *msg) {
  if (!r->err) r->err = ar_printf(r->a, "malformed #sdy.op_sharding_rule: %s", msg);
  return false;
}

/* One factor symbol at r->p (`i`..`z` or `z_N`, N without leading zeros). */
static bool read_symbol(rp *r, uint32_t *index) {
  if (r->p >= r->end || *r->p < 'i' || *r->p > 'z') return fail(r, "expected a factor symbol i..z or z_N");
  if (*r->p == 'z' && r->p + 1 < r->end && r->p[1] == '_') {
    const char *q = r->p + 2;
    if (q >= r->end || *q < '1' || *q > '9') return fail(r, "expected a positive integer after 'z_'");
    uint64_t n = 0;
    while (q < r->end && isdigit((unsigned char)*q)) {
      n = n * 10 + (uint64_t)(*q - '0');
      if (n > UINT32_MAX - SYMBOL_LAST_LETTER) return fail(r, "factor symbol index too large");
      q++;
    }
    *index = (uint32_t)n + SYMBOL_LAST_LETTER;
    r->p = q;
    return true;
  }
  *index = (uint32_t)(*r->p++ - 'i');
  return true;
}

static bool symbol_char(char c) { return (c >= 'i' && c <= 'z') || c == '_' || isdigit((unsigned char)c); }

typedef SC_VEC(uint32_t) u32vec;

/* `[ij, k]`: one tensor's dimensions, each a run of symbols. */
static bool read_tensor(rp *r, prop_tensor *t) {
  if (!eat(r, "[")) return fail(r, "expected '[' opening a tensor mapping");
  SC_VEC(prop_dim) dims = {0};
  skip_ws(r);
  if (!eat(r, "]")) {
    do {
      skip_ws(r);
      u32vec f = {0};
      while (r->p < r->end && symbol_char(*r->p)) {
        uint32_t idx;
        if (!read_symbol(r, &idx)) return false;
        SC_PUSH(r->a, f, idx);
      }
      if (f.n == 0) return fail(r, "a dimension maps to no factor");
      prop_dim d = {f.v, (uint32_t)f.n};
      SC_PUSH(r->a, dims, d);
    } while (eat(r, ","));
    if (!eat(r, "]")) return fail(r, "expected ']' closing a tensor mapping");
  }
  t->dims = dims.v;
  t->rank = (uint32_t)dims.n;
  return true;
}

static bool read_tensors(rp *r, prop_tensor **out, uint32_t *n) {
  if (!eat(r, "(")) return fail(r, "expected '(' opening the tensor mappings");
  SC_VEC(prop_tensor) v = {0};
  if (!eat(r, ")")) {
    do {
      prop_tensor t;
      if (!read_tensor(r, &t)) return false;
      SC_PUSH(r->a, v, t);
    } while (eat(r, ","));
    if (!eat(r, ")")) return fail(r, "expected ')' closing the tensor mappings");
  }
  *out = v.v;
  *n = (uint32_t)v.n;
  return true;
}

/* `{i=2, j=4}`: sizes in symbol order i, j, k, ... */
static bool read_sizes(rp *r, prop_rule *rule) {
  SC_VEC(prop_factor) f = {0};
  if (!eat(r, "}")) {
    do {
      skip_ws(r);
      uint32_t idx;
      if (!read_symbol(r, &idx)) return false;
      if (idx != f.n) return fail(r, "factor sizes must be listed in symbol order i, j, k, ...");
      if (!eat(r, "=")) return fail(r, "expected '=' after a factor symbol");
      skip_ws(r);
      const char *q = r->p;
      bool neg = q < r->end && *q == '-';
      if (neg) q++;
      if (q >= r->end || !isdigit((unsigned char)*q)) return fail(r, "expected a factor size");
      int64_t v = 0;
      while (q < r->end && isdigit((unsigned char)*q)) {
        if (v > (INT64_MAX - 9) / 10) return fail(r, "factor size too large");
        v = v * 10 + (*q++ - '0');
      }
      r->p = q;
      prop_factor pf = {neg ? -v : v, PROP_FACTOR_PASS_THROUGH, false};
      SC_PUSH(r->a, f, pf);
    } while (eat(r, ","));
    if (!eat(r, "}")) return fail(r, "expected '}' closing the factor sizes");
  }
  rule->factors = f.v;
  rule->nfactors = (uint32_t)f.n;
  return true;
}

/* `kind={i, k}` after its keyword: marks each factor. */
static bool read_kind(rp *r, prop_rule *rule, int type, bool blocked) {
  if (!eat(r, "=") || !eat(r, "{")) return fail(r, "expected '={' after a factor kind");
  if (eat(r, "}")) return true;
  int64_t prev = -1;
  do {
    skip_ws(r);
    uint32_t idx;
    if (!read_symbol(r, &idx)) return false;
    if (idx >= rule->nfactors) return fail(r, "a factor kind names a factor without a size");
    if ((int64_t)idx <= prev)
      return fail(r, (int64_t)idx == prev ? "indices of special factors must be unique"
                                          : "indices of special factors must be sorted");
    prev = idx;
    prop_factor *f = &rule->factors[idx];
    if (blocked) f->blocked = true;
    else if (f->type != PROP_FACTOR_PASS_THROUGH && f->type != type)
      return fail(r, "a factor is in two of reduction, need_replication and permutation");
    else f->type = (uint8_t)type;
  } while (eat(r, ","));
  if (!eat(r, "}")) return fail(r, "expected '}' closing a factor kind list");
  return true;
}

static bool check_indices(rp *r, const prop_tensor *t, uint32_t n, uint32_t nfactors) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t d = 0; d < t[i].rank; d++)
      for (uint32_t k = 0; k < t[i].dims[d].nfactors; k++)
        if (t[i].dims[d].factors[k] >= nfactors) return fail(r, "a dimension uses a factor without a size");
  return true;
}

static bool read_rule(rp *r, prop_rule *rule) {
  eat(r, "#sdy.op_sharding_rule");
  if (!eat(r, "<")) return fail(r, "expected '<'");
  if (!read_tensors(r, &rule->operands, &rule->noperands)) return false;
  if (!eat(r, "->")) return fail(r, "expected '->' between operand and result mappings");
  if (!read_tensors(r, &rule->results, &rule->nresults)) return false;
  if (eat(r, "{") && !read_sizes(r, rule)) return false;
  static const struct {
    const char *kw;
    int type;
    bool blocked;
  } kinds[] = {{"reduction", PROP_FACTOR_REDUCTION, false},
               {"need_replication", PROP_FACTOR_NEED_REPLICATION, false},
               {"permutation", PROP_FACTOR_PERMUTATION, false},
               {"blocked_propagation", 0, true}};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    if (eat(r, kinds[k].kw) && !read_kind(r, rule, kinds[k].type, kinds[k].blocked)) return false;
  if (eat(r, ",")) {
    if (!eat(r, "custom")) return fail(r, "expected 'custom' after ','");
    rule->custom = true;
  }
  if (!eat(r, ">")) return fail(r, "expected '>' closing the rule");
  skip_ws(r);
  if (r->p != r->end) return fail(r, "unexpected text after the rule");
  return check_indices(r, rule->operands, rule->noperands, rule->nfactors) &&
         check_indices(r, rule->results, rule->nresults, rule->nfactors);
}

const prop_rule *prop_rule_parse(sc_arena *a, ir_span text, const char **err) {
  if (!text.p) { /* no text at all: `p + n` on a null pointer is undefined even for n = 0 */
    if (err) *err = "malformed #sdy.op_sharding_rule: empty";
    return NULL;
  }
  rp r = {a, text.p, text.p + text.n, NULL};
  prop_rule *rule = ar_calloc(a, 1, sizeof *rule);
  if (!read_rule(&r, rule)) {
    if (err) *err = r.err ? r.err : "malformed #sdy.op_sharding_rule: empty";
    return NULL;
  }
  if (err) *err = NULL;
  return rule;
}
