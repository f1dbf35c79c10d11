#!/bin/sh
# CLI behaviour on real modules and on malformed input: exit codes, locations, Python source
# locations, formats. Prints "N passed, M failed" and exits non-zero on any failure.
set -u
CLI=${SC_BUILD:-build}/bin/shardcheck
C=../shared/corpus
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() { # expected_rc description cmd...
  want=$1 desc=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$desc: exit $got, want $want"; cat "$tmp/out" "$tmp/err" | head -5; fi
}

# A JAX module with debug info: module location and Python source location of an op.
m=$C/jax/jax_backcompat/shardy_sharding_ops_with_different_meshes__0.mlir
$CLI check --debug-dump-ops "$m" >"$tmp/dump" 2>&1
grep -q '^40:7 depth=3 op=stablehlo.collective_permute func=main .* src=third_party/py/jax/tests/export_back_compat_test.py:990:15$' "$tmp/dump" \
  && ok || bad "debug dump lacks the collective_permute location and Python source"
expect_rc 0 "clean JAX module" $CLI check "$m"
expect_rc 0 "json format" $CLI check --format json "$m"
/usr/bin/python3 -c 'import json,sys; w=json.load(open(sys.argv[1])); assert w["schema"]=="shardcheck.results.v1" and len(w["reports"])==1; r=w["reports"][0]; assert r["schema"]=="shardcheck.report.v1"; assert r["input"]["ops"]==8, r["input"]; assert r["summary"]=={"errors":0,"warnings":0,"notes":0}' "$tmp/out" \
  && ok || bad "report JSON shape"
expect_rc 0 "sarif format" $CLI check --format sarif "$m"
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["version"]=="2.1.0"; assert r["runs"][0]["tool"]["driver"]["name"]=="shardcheck"' "$tmp/out" \
  && ok || bad "SARIF shape"
expect_rc 0 "stdin input" sh -c "$CLI check - < $m"

# Malformed inputs: a syntax diagnostic and exit 1, never a crash.
head -c 700 "$m" >"$tmp/truncated.mlir"
printf 'module {\n  func.func @f() {\n    return\n  }\n}}\n' >"$tmp/unbalanced.mlir"
head -c 4096 /dev/urandom >"$tmp/garbage.mlir" 2>/dev/null || printf '\001\002\377' >"$tmp/garbage.mlir"
: >"$tmp/empty.mlir"
/usr/bin/python3 -c 'import sys; n=100000; open(sys.argv[1],"w").write("module attributes {x = " + "["*n + "]"*n + "} {\n}\n")' "$tmp/deep.mlir"
for f in truncated unbalanced garbage deep; do
  expect_rc 1 "malformed $f" $CLI check --format json "$tmp/$f.mlir"
  grep -q '"rule": "\(syntax\|input-limit\)"' "$tmp/out" && ok || bad "malformed $f: no syntax diagnostic"
done
# An empty text is an empty module, as MLIR reads it: nothing to report.
expect_rc 0 "empty input" $CLI check --format json "$tmp/empty.mlir"
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["reports"][0]; assert r["diagnostics"]==[] and r["input"]["ops"]==1, r' "$tmp/out" \
  && ok || bad "empty input: an empty module" 
$CLI check --no-color "$tmp/unbalanced.mlir" >"$tmp/text" 2>&1
grep -q "unbalanced.mlir:5:2: error: unexpected '}' with no open region \[SC0001\]" "$tmp/text" && ok || { bad "text format of a syntax error"; cat "$tmp/text"; }
grep -q '^    5 | }}$' "$tmp/text" && ok || bad "text format shows the source line"

# split-input-file keeps whole-file line numbers.
printf 'func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  %%0 = d.op(\n}\n' >"$tmp/split.mlir"
$CLI check --split-input-file --format json "$tmp/split.mlir" >"$tmp/out" 2>&1
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["reports"][0]; d=r["diagnostics"]; assert len(d)==1 and d[0]["location"]["line"]==7, d' "$tmp/out" \
  && ok || bad "split-input-file line numbers"

# A GSPMD/HLO module names no mesh axes: the made-up mesh never leaks into what users read.
for f in tests/modules/kernel/kernel-outside-manual.bad.hlo tests/modules/callback/callback-sharding-in-manual.bad.hlo; do
  expect_rc 1 "HLO kernel/callback module" $CLI check --format json "$f"
  grep -q '[^m]_partitions' "$tmp/out" && bad "$f: report mentions the synthesized axis '_partitions'" || ok
done

# A module with Python locations leads with the Python file:line and shows that line when the file is
# there (under --source-root, default .); `--format gitlab` points at the Python file too.
mkdir -p "$tmp/py/src"
printf 'import jax\n\ndef step(x):\n    return pl.pallas_call(add_one_kernel, out_shape=x)(x)\n' >"$tmp/py/src/model.py"
sed -e 's|#loc1 = loc("model.py":88:12)|#loc1 = loc("src/model.py":4:11)|' \
    -e 's|-> tensor<16x128xf32> // expect: SC0301|-> tensor<16x128xf32> loc(#loc1)|' \
    tests/modules/kernel/kernel-outside-manual.partial.bad.mlir >"$tmp/py/k.mlir"
(cd "$tmp/py" && "$OLDPWD/$CLI" check --no-color k.mlir) >"$tmp/text" 2>&1
head -4 "$tmp/text" >"$tmp/head"
printf '%s\n' \
  'src/model.py:4:11: error: Mosaic kernels cannot be automatically partitioned. Please wrap the call in a shard_map. [SC0301]' \
  '    4 |     return pl.pallas_call(add_one_kernel, out_shape=x)(x)' \
  '      |            ^~~~~~~~~~~~~~' \
  '      = module: k.mlir:6:34' | cmp -s - "$tmp/head" && ok || { bad "text leads with the Python location and line"; cat "$tmp/text"; }
(cd "$tmp/py" && "$OLDPWD/$CLI" check --format gitlab k.mlir) >"$tmp/out" 2>&1
/usr/bin/python3 -c 'import json,sys; i=json.load(open(sys.argv[1])); assert i[0]["location"]=={"path":"src/model.py","lines":{"begin":4}}, i' "$tmp/out" \
  && ok || bad "gitlab issue points at the Python file"

# A daemon that is not there: one line, once, for a whole directory (not one UNAVAILABLE per input).
expect_rc 2 "unreachable server" $CLI check "$C/jax/jax_backcompat" --server 127.0.0.1:1
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q '^shardcheck: cannot reach shardcheckd at 127.0.0.1:1 ' "$tmp/err" && [ ! -s "$tmp/out" ] \
  && ok || { bad "unreachable server: not one line"; head -3 "$tmp/err"; }

# Usage mistakes: one line, once, with the nearest spelling (never one error per input, never getopt's
# message and ours).
one_usage_line() { # description expected-stderr cmd...
  usage_desc=$1 usage_want=$2; shift 2
  expect_rc 2 "$usage_desc" "$@"
  [ "$(cat "$tmp/err")" = "$usage_want" ] && ok || { bad "$usage_desc: stderr"; head -3 "$tmp/err"; }
}
one_usage_line "option typo" "shardcheck: unknown option '--fromat' (did you mean --format?) (see \`shardcheck check --help\`)" \
  $CLI check --fromat json "$m"
one_usage_line "command typo" "shardcheck: unknown command 'chek' (did you mean 'check'?) (see \`shardcheck help\`)" $CLI chek "$m"
one_usage_line "value typo" "shardcheck: unknown --fail-on 'errors' (did you mean 'error'? error, warning, note or never)" \
  $CLI check --fail-on errors "$m"
one_usage_line "missing value" "shardcheck: --mesh needs a value (see \`shardcheck check --help\`)" $CLI check "$m" --mesh
one_usage_line "rules typo over a directory" \
  "shardcheck: --rules: rule selector 'no-such-rule' matches no rule (see \`shardcheck rules\`)" \
  $CLI check --rules no-such-rule "$C/jax/jax_backcompat"
expect_rc 1 "--rules takes a code in any case, as explain does" $CLI check --rules sc0301 --format json --mesh data=4 \
  "$C/jax/jax_backcompat/pallas_mosaic_matmul__0.mlir"
grep -q '"code": "SC0301"' "$tmp/out" && ok || bad "--rules sc0301 selects SC0301"

# A shell glob over a dump folder checks what the folder does (no .ll/.ptx/.json as SC0001); a folder
# with no module is an error, not a green CI job; a named file that reads like a module is checked.
mkdir -p "$tmp/dumpdir" "$tmp/nothing"
cp examples/*.mlir "$tmp/dumpdir/"
printf '; ModuleID = m\n' >"$tmp/dumpdir/m.ll"
printf '//\n// Generated by LLVM NVPTX Back-End\n.version 8.0\n' >"$tmp/dumpdir/m.ptx"
printf '{"a": 1}\n' >"$tmp/dumpdir/m.json"
$CLI check --format json "$tmp/dumpdir" >"$tmp/dir.json" 2>/dev/null
$CLI check --format json "$tmp/dumpdir"/* >"$tmp/glob.json" 2>/dev/null
/usr/bin/python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); assert a["summary"]==b["summary"] and a["summary"]["skipped"]==3, (a["summary"],b["summary"]); assert [r["input"]["name"] for r in a["reports"]]==[r["input"]["name"] for r in b["reports"]]' "$tmp/dir.json" "$tmp/glob.json" \
  && ok || bad "check dump/* differs from check dump"
printf '{"a": 1}\n' >"$tmp/nothing/m.json"
one_usage_line "a folder without modules" \
  "shardcheck: no modules found (1 file skipped: *.mlir, *.mlirbc, *.hlo and HLO dumps are checked; see --include)" \
  $CLI check "$tmp/nothing"
cp "$tmp/unbalanced.mlir" "$tmp/module.txt"
expect_rc 1 "a named .txt holding MLIR is checked" $CLI check "$tmp/module.txt"

# A file of `// -----`-separated modules checked whole gets one hint to use --split-input-file.
sv=$C/shardy/verifier/constant_verification.mlir
$CLI check --quiet "$sv" >/dev/null 2>"$tmp/err"
grep -q "^shardcheck: hint: $sv has \`// -----\` separators; pass --split-input-file" "$tmp/err" && ok || { bad "split hint"; cat "$tmp/err"; }
$CLI check --quiet --split-input-file "$sv" >/dev/null 2>"$tmp/err"
grep -q "hint" "$tmp/err" && bad "split hint with --split-input-file" || ok

# Addresses: the daemon refuses a listen address without a port; clients take http://HOST:PORT/ and
# refuse https:// without TLS; --help shows defaults.
D=${SC_BUILD:-build}/bin/shardcheckd
expect_rc 2 "listen without a port" $D --listen 127.0.0.1
grep -q "^shardcheckd: listen 127.0.0.1 has no port: give HOST:PORT" "$tmp/err" && ok || { bad "listen without a port: message"; cat "$tmp/err"; }
expect_rc 2 "http:// server" $CLI check "$m" --server http://127.0.0.1:1/
grep -q "^shardcheck: cannot reach shardcheckd at 127.0.0.1:1 " "$tmp/err" && ok || { bad "http:// prefix not dropped"; cat "$tmp/err"; }
expect_rc 2 "https:// without TLS" $CLI check "$m" --server https://127.0.0.1:1
grep -q "https:// needs TLS: set SHARDCHECK_TLS_CA" "$tmp/err" && ok || { bad "https:// without TLS: message"; cat "$tmp/err"; }
expect_rc 0 "daemon help" $D --help
grep -q -- "--listen .*(default 127.0.0.1:50051)" "$tmp/out" && grep -q -- "--workers .*(default 4)" "$tmp/out" \
  && ok || bad "daemon --help shows no defaults"

# Bad input says what is wrong: a truncated bytecode file says so; a binary file's bytes never reach the
# terminal raw (the text report is UTF-8).
head -c 1500 "$C/jax/jax_backcompat/pallas_mosaic_matmul__0.mlirbc" >"$tmp/cut.mlirbc"
expect_rc 1 "truncated bytecode" $CLI check --no-color "$tmp/cut.mlirbc"
grep -q "error: MLIR bytecode: the file looks truncated: " "$tmp/out" && ok || { bad "truncated bytecode: message"; head -2 "$tmp/out"; }
printf 'module {\n\377\376\200 binary \351\n}\n' >"$tmp/binary.mlir"
expect_rc 1 "binary file" $CLI check --no-color "$tmp/binary.mlir"
/usr/bin/python3 -c 'import sys; t=open(sys.argv[1],"rb").read(); t.decode("utf-8"); assert b"?" in t, t' "$tmp/out" \
  && ok || { bad "binary file: raw bytes in the text report"; head -3 "$tmp/out" | od -c | head -5; }

# The communication threshold: the flag, shardcheck.json's thresholds, and the flag winning over the file.
cm=tests/modules/communication/comm-implicit-collective.bad.mlir # an all-gather of 2 GiB per device
expect_rc 2 "--max-implicit-collective-bytes needs a byte count" $CLI check --max-implicit-collective-bytes lots "$cm"
$CLI check --format json "$cm" | grep -q '"SC0902"' && ok || bad "SC0902 at the 1 GiB default"
$CLI check --format json --max-implicit-collective-bytes 4GiB "$cm" | grep -q '"SC0902"' && bad "SC0902 under a 4 GiB flag" || ok
printf '{"thresholds": {"max_implicit_collective_bytes": "4GiB"}}\n' >"$tmp/comm.json"
$CLI check --format json --config "$tmp/comm.json" "$cm" | grep -q '"SC0902"' && bad "SC0902 under a 4 GiB config" || ok
$CLI check --format json --config "$tmp/comm.json" --max-implicit-collective-bytes 1GiB "$cm" | grep -q '"SC0902"' \
  && ok || bad "the flag wins over shardcheck.json's threshold"

# Usage and I/O errors exit 2.
expect_rc 2 "missing file" $CLI check "$tmp/does-not-exist.mlir"
expect_rc 2 "bad mesh" $CLI check --mesh "data=x" "$m"
expect_rc 2 "bad rule glob" $CLI check --rules "no-such-rule" "$m"
expect_rc 2 "no command" $CLI
expect_rc 0 "rules" $CLI rules
expect_rc 0 "explain" $CLI explain SC0001
grep -q "does not parse" "$tmp/out" && ok || bad "explain SC0001 text"
expect_rc 2 "explain unknown" $CLI explain SC9999

echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
