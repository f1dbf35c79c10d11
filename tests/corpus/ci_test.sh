#!/bin/sh
# The CLI made for CI: SARIF validated against the official 2.1.0 schema plus GitHub's required fields,
# gating and output flags, the results JSON, directory walks over a fake XLA dump folder, -j, config
# discovery and precedence, baselines, inline ignores, `fix` on every machine-fixable module, help and
# format validation, colour, escaping. Prints "N passed, M failed"; exits non-zero on any failure.
# Needs the validator's npm packages in build/npm-sarif (the Makefile installs them: `make corpus`).
set -u
ROOT=$(pwd)
CLI=$ROOT/build/bin/shardcheck
NODE_MODULES=$ROOT/build/npm-sarif/node_modules
PY=/usr/bin/python3
C=$ROOT/../shared/corpus
M=$ROOT/tests/modules
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# run EXPECTED_RC DESCRIPTION CMD...: stdout in $tmp/out, stderr in $tmp/err
run() {
  want=$1 desc=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$desc: exit $got, want $want"; head -5 "$tmp/out" "$tmp/err"; fi
}
has() { grep -q -- "$2" "$1" && ok || { bad "$3: no '$2' in $1"; head -5 "$1"; }; }
lacks() { grep -q -- "$2" "$1" && { bad "$3: '$2' in $1"; head -5 "$1"; } || ok; }
pycheck() { # DESCRIPTION FILE PYTHON-EXPR-ON-d
  $PY -c "import json,sys; d=json.load(open(sys.argv[1])); assert $3, d if len(str(d)) < 2000 else str(d)[:2000]" "$2" \
    >"$tmp/py.err" 2>&1 && ok || { bad "$1"; tail -3 "$tmp/py.err"; }
}
[ -d "$NODE_MODULES/ajv" ] || { echo "ci_test: $NODE_MODULES missing (make corpus installs it)"; exit 1; }

BAD=$M/kernel/kernel-outside-manual.toplevel.bad.mlir   # one SC0301 error
WARN=$M/kernel/kernel-gpu-auto-partitioned.bad.mlir     # SC0303 warnings only
GOOD=$M/kernel/kernel-outside-manual.toplevel.good.mlir
EX=$ROOT/examples/pallas_kernel_outside_shard_map.mlir  # SC0301 from train.py:44
cd "$tmp" || exit 1 # no shardcheck.json above /tmp: discovery finds none unless a test makes one

# --- SARIF: several corpus modules, one log, valid, GitHub's fields --------------------------------
run 1 "sarif over many modules" "$CLI" check --format sarif "$BAD" "$WARN" "$GOOD" "$C/xla/hlo" "$C/jax/jax_backcompat"
cp out many.sarif
node "$ROOT/tests/sarif/validate_sarif.js" "$NODE_MODULES" many.sarif >val.out 2>&1 && ok || { bad "SARIF validation"; cat val.out; }
pycheck "one run, results from several modules" many.sarif \
  'len(d["runs"]) == 1 and len({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in d["runs"][0]["results"]}) >= 3'
# The Python file exists under --source-root: it is the primary location, the module is related id 1.
mkdir -p repo && $PY -c 'import sys; open(sys.argv[1], "w").write("".join(f"line{i}\n" for i in range(1, 60)))' repo/train.py
run 1 "sarif with a source root" "$CLI" check --format sarif --source-root repo "$EX"
cp out py.sarif
node "$ROOT/tests/sarif/validate_sarif.js" "$NODE_MODULES" py.sarif >val.out 2>&1 && ok || { bad "SARIF validation (Python primary)"; cat val.out; }
pycheck "Python file is the primary location" py.sarif \
  '(lambda r: r["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"} and r["locations"][0]["physicalLocation"]["region"]["startLine"] == 44 and r["relatedLocations"][0]["id"] == 1 and "[the module](1)" in r["message"]["text"] and r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("file:///") and d["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/repo/"))(d["runs"][0]["results"][0])'
run 1 "sarif without the Python file" "$CLI" check --format sarif "$EX"
pycheck "module primary when the Python file is absent" out \
  '(lambda r: r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("pallas_kernel_outside_shard_map.mlir") and r["relatedLocations"][0]["id"] == 1 and "](1)" in r["message"]["text"])(d["runs"][0]["results"][0])'
run 2 "sarif with an unreadable input" "$CLI" check --format sarif "$BAD" "$tmp/missing.mlir"
cp out err.sarif
node "$ROOT/tests/sarif/validate_sarif.js" "$NODE_MODULES" err.sarif >val.out 2>&1 && ok || { bad "SARIF validation (tool error)"; cat val.out; }
pycheck "tool errors in invocations" err.sarif \
  '(lambda inv: inv["executionSuccessful"] is False and "missing.mlir" in inv["toolExecutionNotifications"][0]["message"]["text"])(d["runs"][0]["invocations"][0]) and len(d["runs"][0]["results"]) == 1'
run 0 "stdin with a name" sh -c "printf 'module {}\n' | '$CLI' check --format sarif --stdin-filename 'my file#1.mlir' -"
run 1 "stdin with a name and a finding" sh -c "'$CLI' check --format sarif --stdin-filename 'my file#1.mlir' - < '$BAD'"
pycheck "stdin name percent-encoded" out 'd["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20file%231.mlir"'
run 1 "default help uri" "$CLI" check --format sarif "$BAD"
pycheck "helpUri = the rule's generated page, which exists" out 'all(r["helpUri"] == "https://github.com/shardcheck/shardcheck/blob/main/docs/rules/" + r["id"] + ".md" and __import__("os").path.isfile("'"$ROOT"'/docs/rules/" + r["id"] + ".md") for r in d["runs"][0]["tool"]["driver"]["rules"])'
run 1 "help uri base" "$CLI" check --format sarif --help-uri-base https://docs.example/rules/ "$BAD"
pycheck "helpUri = base + code" out 'all(r["helpUri"] == "https://docs.example/rules/" + r["id"] for r in d["runs"][0]["tool"]["driver"]["rules"])'

# --- gating and output ------------------------------------------------------------------------------
run 0 "warnings pass --fail-on error" "$CLI" check "$WARN"
run 1 "warnings fail --fail-on warning" "$CLI" check --fail-on warning "$WARN"
run 1 "warnings fail --fail-on note" "$CLI" check --fail-on note "$WARN"
run 0 "--fail-on never" "$CLI" check --fail-on never "$BAD"
run 0 "--exit-zero" "$CLI" check --exit-zero "$BAD"
run 2 "--exit-zero keeps trouble" "$CLI" check --exit-zero "$tmp/missing.mlir"
run 2 "bad --fail-on" "$CLI" check --fail-on sometimes "$BAD"
run 1 "--quiet" "$CLI" check --quiet "$BAD" "$WARN"
[ "$(wc -l <out)" = 1 ] && ok || bad "--quiet printed $(wc -l <out) lines"
has out "^2 inputs checked: 1 error, 1 warning, 0 notes$" "--quiet summary totals all inputs"
run 1 "--max-diagnostics" "$CLI" check --max-diagnostics 1 "$BAD" "$WARN" "$BAD"
[ "$(grep -c '^\S.*: \(error\|warning\):' out)" = 1 ] && ok || bad "--max-diagnostics 1 showed $(grep -c ': \(error\|warning\):' out)"
has out "3 inputs checked: 2 errors, 1 warning, 0 notes; 2 more not shown (--max-diagnostics 1)$" "--max-diagnostics: the summary counts every finding"
run 1 "--max-diagnostics 0 still gates on what it hides" "$CLI" check --max-diagnostics 0 "$BAD"
has out "kernel-outside-manual.toplevel.bad.mlir: 1 error, 0 warnings, 0 notes; 1 more not shown (--max-diagnostics 0)$" "--max-diagnostics 0: one input's line counts every finding"
run 1 "--statistics" "$CLI" check --statistics --quiet "$BAD" "$WARN"
has out "^     1  SC0303  kernel-gpu-auto-partitioned$" "--statistics count"
has out "^     1  SC0301  kernel-outside-manual$" "--statistics count"
run 1 "--output" "$CLI" check --output report.txt "$BAD"
[ ! -s out ] && ok || bad "--output still wrote to stdout"
has report.txt "error: Mosaic kernels cannot be automatically partitioned" "--output file"
# JSON: one shape for one and many inputs.
run 1 "json one" "$CLI" check --format json "$BAD"
pycheck "results.v1 with one report" out 'd["schema"] == "shardcheck.results.v1" and len(d["reports"]) == 1 and d["reports"][0]["schema"] == "shardcheck.report.v1" and d["summary"]["errors"] == 1'
run 1 "json many" "$CLI" check --format json --statistics "$BAD" "$WARN" "$GOOD"
pycheck "results.v1 with three reports" out 'len(d["reports"]) == 3 and d["summary"]["inputs"] == 3 and d["summary"]["warnings"] == 1 and d["statistics"] == {"SC0301": 1, "SC0303": 1}'
run 1 "gitlab" "$CLI" check --format gitlab "$BAD" "$WARN"
pycheck "gitlab code quality" out 'len(d) == 2 and {i["severity"] for i in d} == {"critical", "major"} and len({i["fingerprint"] for i in d}) == 2 and all(i["location"]["lines"]["begin"] > 0 for i in d)'

# --- directories: a fake XLA dump folder ------------------------------------------------------------
mkdir -p dump/sub
HLO=$(ls "$C"/xla/hlo/*.hlo | head -1)
cp "$HLO" dump/module_0001.jit_step.before_optimizations.txt
cp "$HLO" dump/module_0001.jit_step.sm_8.0_gpu_after_optimizations.txt
printf 'BufferAssignment:\nallocation 0: size 4\n' >dump/module_0001.jit_step.sm_8.0_gpu_after_optimizations-buffer-assignment.txt
printf 'define void @f() {\n  ret void\n}\n' >dump/module_0001.jit_step.ir-no-opt.ll
printf 'total memory: 12\n' >dump/module_0001.jit_step.memory-usage-report.txt
cp "$BAD" dump/sub/step.mlir
cp "$HLO" dump/sub/other.hlo
run 1 "walk a dump folder" "$CLI" check --quiet dump
has out "^4 inputs checked: .*; 3 files skipped$" "dump folder: modules by content, others skipped"
run 0 "a shell glob over the dump" sh -c "'$CLI' check --quiet dump/*.txt"
has out "^2 inputs checked: .*; 2 files skipped$" "dump/*.txt: reports skipped by content"
run 1 "walk with --exclude" "$CLI" check --quiet --exclude '*before_optimizations*' --exclude 'sub/*.hlo' dump
has out "^2 inputs checked: .*; 5 files skipped$" "--exclude"
run 1 "walk with --include" "$CLI" check --quiet --include '*.ll' dump
has out "^5 inputs checked: .*; 2 files skipped$" "--include"
run 1 "-j 1" "$CLI" check -j 1 --format json dump "$C/jax/jax_backcompat"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); [r["tool"].pop("rules_version") for r in d["reports"]]; json.dump(d, open(sys.argv[1] + ".n", "w"))' out && mv out.n j1
run 1 "-j 4" "$CLI" check -j 4 --format json dump "$C/jax/jax_backcompat"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); [r["tool"].pop("rules_version") for r in d["reports"]]; json.dump(d, open(sys.argv[1] + ".n", "w"))' out && mv out.n j4
cmp -s j1 j4 && ok || bad "-j 1 and -j 4 differ (output must be in input order)"
pycheck "walk order is sorted" j4 '[r["input"]["name"] for r in d["reports"]][:4] == ["dump/module_0001.jit_step.before_optimizations.txt", "dump/module_0001.jit_step.sm_8.0_gpu_after_optimizations.txt", "dump/sub/other.hlo", "dump/sub/step.mlir"]'
run 2 "-j 0" "$CLI" check -j 0 "$BAD"

# --- configuration: discovery upward, precedence, unknown keys --------------------------------------
mkdir -p proj/a/b && cp "$BAD" proj/a/b/m.mlir
printf '{"fail_on": "never", "severity": {"SC0301": "warning"}}\n' >proj/shardcheck.json
(cd proj/a/b && "$CLI" check --quiet m.mlir >../../../out 2>../../../err); rc=$?
[ $rc = 0 ] && ok || bad "config found upward: exit $rc"
has out "0 errors, 1 warning" "config severity override"
(cd proj/a/b && "$CLI" check --fail-on warning m.mlir >/dev/null 2>&1); rc=$?
[ $rc = 1 ] && ok || bad "--fail-on wins over the config: exit $rc"
(cd proj/a/b && "$CLI" check --no-config m.mlir >/dev/null 2>&1); rc=$?
[ $rc = 1 ] && ok || bad "--no-config: exit $rc"
printf '{"rules": ["-kernel-*"], "include": "*.ll", "source_root": "src"}\n' >other.json
run 0 "--config FILE with rules" "$CLI" check --config other.json "$BAD"
run 1 "--rules flag wins over the config" "$CLI" check --config other.json --rules 'kernel-*' "$BAD"
printf '{"fail_on": "never", "mesh": "data=4", "failon": 1}\n' >typo.json
run 2 "unknown config key" "$CLI" check --config typo.json "$BAD"
has err 'unknown key "failon"' "unknown key named"
printf '{"severity": {"SC9999": "note"}}\n' >typo.json
run 2 "unknown code in severity" "$CLI" check --config typo.json "$BAD"
printf '{"mesh": "data=2,data=2"}\n' >typo.json
run 2 "config mesh validated" "$CLI" check --config typo.json "$BAD"
has err 'mesh.axes\[1\].name: duplicate axis "data"' "config mesh error"

# --- baselines: write, re-run (0 new), unrelated edit (0 new), new finding (1 new) ------------------
cp "$M/sharding/sharding-axis-order.bad.mlir" base.mlir
run 0 "--write-baseline" "$CLI" check --write-baseline baseline.json base.mlir "$BAD"
pycheck "baseline file" baseline.json 'd["schema"] == "shardcheck.baseline.v1" and len(d["findings"]) == 2'
run 0 "re-run against the baseline" "$CLI" check --baseline baseline.json base.mlir "$BAD"
has out "0 errors, 0 warnings, 0 notes; 2 suppressed (0 inline, 2 baseline)" "0 new"
{ echo "// an unrelated comment"; echo "// moves every line"; cat base.mlir; } >moved.mlir && mv moved.mlir base.mlir
run 0 "unrelated edit" "$CLI" check --baseline baseline.json base.mlir "$BAD"
sed -i 's|replicated={"y", "x"}>})|replicated={"y", "x"}>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], replicated={"y", "x"}>})|' base.mlir
run 1 "one new finding" "$CLI" check --baseline baseline.json --fail-on note --format json base.mlir "$BAD"
pycheck "exactly one new" out 'sum(len(r["diagnostics"]) for r in d["reports"]) == 1 and d["summary"]["suppressed"]["baseline"] == 2'
run 0 "stale baseline entries" "$CLI" check --baseline baseline.json --quiet "$GOOD"
has out "2 baseline entries no longer occur" "stale entries counted"
printf '{"schema": "x"}\n' >notbase.json
run 2 "not a baseline" "$CLI" check --baseline notbase.json "$BAD"

# --- inline ignores -----------------------------------------------------------------------------------
$PY -c 'import sys; l=[f"line{i}\n" for i in range(1, 60)]; l[43]="    y = add_one(x)  # shardcheck: ignore[SC0303, SC0301]\n"; open(sys.argv[1], "w").write("".join(l))' repo/train.py
run 0 "inline ignore" "$CLI" check --source-root repo "$EX"
has out "0 errors, 0 warnings, 0 notes; 1 suppressed (1 inline, 0 baseline)" "inline suppressed count"
run 1 "--no-inline-ignores" "$CLI" check --source-root repo --no-inline-ignores "$EX"
sed -i 's/ignore\[SC0303, SC0301\]/ignore[SC0303]/' repo/train.py
run 1 "inline ignore of another code" "$CLI" check --source-root repo "$EX"
sed -i 's/ignore\[SC0303\]/ignore/' repo/train.py
run 0 "bare inline ignore" "$CLI" check --source-root repo "$EX"
sed -i 's/# shardcheck: ignore/#shardcheck:ignore[SC0301]/' repo/train.py
run 0 "inline ignore without spaces" "$CLI" check --source-root repo "$EX"
grep -q unused err && bad "a used ignore was reported unused" || ok
sed -i 's/ignore\[SC0301\]/ignore[SC0303]/' repo/train.py
run 1 "an ignore naming another code" "$CLI" check --source-root repo "$EX"
has err "^shardcheck: repo/train.py:44: unused \`# shardcheck: ignore\` (nothing it names is reported there)$" "unused ignore reported"
run 1 "no source root: file not found" "$CLI" check "$EX"
sed 's|"train.py"|"/dev/zero"|' "$EX" >zero.mlir
run 1 "a device named as the Python source is not read" timeout 60 "$CLI" check zero.mlir

# --- fix: every machine-fixable module of tests/modules ------------------------------------------------
nfix=0
for f in "$M"/*/*.bad.mlir "$M"/*/*.bad.hlo; do
  mesh=$(sed -n 's|^// mesh: \([^ ]*\).*|\1|p' "$f" | head -1)
  "$CLI" check --no-config --format json ${mesh:+--mesh "$mesh"} "$f" >j.json 2>/dev/null
  $PY -c 'import json,sys; r=json.load(open(sys.argv[1]))["reports"][0]; sys.exit(0 if any(x["applicability"]=="machine" for d in r["diagnostics"] for x in d["fixes"]) else 1)' j.json || continue
  nfix=$((nfix + 1))
  "$CLI" fix ${mesh:+--mesh "$mesh"} -o fixed.mlir "$f" >/dev/null 2>fix.err
  codes=$(sed -n 's/^applied: .* \[\(SC[0-9]*\)\] .*/\1/p' fix.err | sort -u)
  [ -n "$codes" ] || { bad "fix $f: nothing applied"; continue; }
  "$CLI" check --no-config --format json ${mesh:+--mesh "$mesh"} fixed.mlir >j2.json 2>/dev/null
  left=$($PY -c 'import json,sys; r=json.load(open(sys.argv[1]))["reports"][0]; print(" ".join(sorted({d["code"] for d in r["diagnostics"]} & set(sys.argv[2].split()))))' j2.json "$codes")
  [ -z "$left" ] && ok || bad "fix $f: re-check still has $left"
done
[ $nfix -ge 25 ] && ok || bad "only $nfix machine-fixable modules found"
run 1 "fix --diff with changes exits 1 (as diff does)" "$CLI" fix --diff "$M/sharding/sharding-axis-order.bad.mlir"
has out '^+func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, \[{}\], replicated={"x", "y"}>})' "unified diff"
has out '^@@ -1,5 +1,5 @@$' "diff hunk header"
has err "^applied: .*\[SC0208\]" "fix says what it applied"
run 0 "fix --diff without changes exits 0" "$CLI" fix --diff "$M/sharding/sharding-axis-order.good.mlir"
run 2 "fix DIR" "$CLI" fix "$M/sharding"
has err "^shardcheck: fix: .* is a directory; fix takes one module file" "fix DIR says why"
cp "$M/sharding/sharding-axis-order.bad.mlir" inplace.mlir
run 0 "fix --in-place" "$CLI" fix --in-place inplace.mlir
run 0 "fixed in place" "$CLI" check --fail-on note inplace.mlir
run 2 "fix -o and --in-place" "$CLI" fix -o x.mlir --in-place inplace.mlir

# --- help, formats, colour, escaping ----------------------------------------------------------------
for cmd in check fix rules explain; do
  run 0 "$cmd --help" "$CLI" $cmd --help
  has out "^usage: shardcheck $cmd" "$cmd --help is its own usage"
  has out "Examples:" "$cmd --help has examples"
done
run 2 "rules --format sarif" "$CLI" rules --format sarif
run 0 "rules --format json" "$CLI" rules --format json
run 2 "explain --format sarif" "$CLI" explain SC0301 --format sarif
run 0 "explain --format markdown" "$CLI" explain SC0301 --format markdown
has out '^## SC0301: ' "markdown page"
run 0 "explain --format json" "$CLI" explain --format json SC0301 kernel-outside-manual
pycheck "explain json" out 'len(d) == 2 and d[0]["code"] == "SC0301" and d[0]["family"] == "kernel" and d[1]["markdown"].startswith("## SC0301")'
run 2 "check --format xml" "$CLI" check --format xml "$BAD"
run 1 "--color=always" "$CLI" check --color=always "$BAD"
has out "$(printf '\033')\[1;31merror" "--color=always"
run 1 "FORCE_COLOR" env FORCE_COLOR=1 "$CLI" check "$BAD"
has out "$(printf '\033')\[" "FORCE_COLOR"
run 1 "CLICOLOR_FORCE with NO_COLOR" env CLICOLOR_FORCE=1 NO_COLOR=1 "$CLI" check "$BAD"
has out "$(printf '\033')\[" "CLICOLOR_FORCE wins over NO_COLOR"
run 1 "--color=never beats FORCE_COLOR" env FORCE_COLOR=1 "$CLI" check --color=never "$BAD"
lacks out "$(printf '\033')" "--color=never"
run 2 "--color=sometimes" "$CLI" check --color=sometimes "$BAD"
# A hostile input name cannot reach the terminal raw (issue 13).
run 1 "escaped input name" sh -c "'$CLI' check --no-color --stdin-filename \"\$(printf 'evil\\033[2J\\nfake.mlir:1:1: error: forged')\" - < '$BAD'"
lacks out "$(printf '\033')" "no raw ESC from the name"
has out 'evil\\x1b\[2J\\x0afake.mlir:1:1: error: forged' "name shown escaped"
[ "$(grep -c 'forged' out)" -ge 1 ] && [ "$(grep -c '^fake.mlir' out)" = 0 ] && ok || bad "a newline in the name forged a line"
long=$($PY -c 'print("n" * 5000)')
run 1 "long name capped" "$CLI" check --no-color --quiet --stdin-filename "$long" - <"$BAD"
[ "$(head -c 400 out | tr -d '\n' | wc -c)" -le 400 ] && has out "n…: 1 error" "name cut with …" || bad "long name not capped"

# A large input is hashed on a second thread while the check runs: the report's digest is still the file's.
big=$tmp/big.mlir
$PY -c "import sys; sys.stdout.write(open(sys.argv[1]).read() + '// ' + 'x' * (3 << 19) + '\n')" "$C/shardy/$(ls "$C/shardy" | head -1)/$(ls "$C/shardy/$(ls "$C/shardy" | head -1)" | grep '\.mlir$' | head -1)" >"$big"
"$CLI" check --format json "$big" >"$tmp/big.json" 2>/dev/null
want=$(sha256sum "$big" | cut -d' ' -f1)
pycheck "digest of a large input (hashed beside the check)" "$tmp/big.json" "d['reports'][0]['input']['sha256'] == '$want' and d['reports'][0]['input']['bytes'] > (1 << 20)"

echo "ci: $pass passed, $fail failed"
[ "$fail" = 0 ]
