#!/bin/sh
# The jax.export container: flatc builds Exported flatbuffers (tests/exported/exported.fbs) around a
# real corpus module; shardcheck reads them (detected by shape), finds what the bare module gives, and
# checks the recorded platforms against --platform (SC0701, failing and passing).
CLI=${CLI:-build/bin/shardcheck}
C=../shared/corpus
PY=/usr/bin/python3
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v flatc >/dev/null 2>&1; then echo "FAIL: flatc (flatbuffers-compiler) is not installed"; exit 1; fi

mod=$C/jax/jax_backcompat/pallas_mosaic_matmul__0.mlirbc
$PY - "$mod" "$tmp/x.json" <<'PYEOF'
import json, sys
data = list(open(sys.argv[1], 'rb').read())
json.dump({"serialization_version": 5, "function_name": "matmul_f", "platforms": ["tpu"], "nr_devices": 1,
           "calling_convention_version": 9, "mlir_module_serialized": [b - 256 if b > 127 else b for b in data]},
          open(sys.argv[2], 'w'))
PYEOF
flatc -b -o "$tmp" tests/exported/exported.fbs "$tmp/x.json" || { echo "FAIL: flatc"; exit 1; }
x=$tmp/x.bin

findings() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; print(r["input"]["format"], r["input"]["ops"], sorted((d["code"], d["location"].get("function")) for d in r["diagnostics"]))' "$1"; }

$CLI check --format json --mesh data=4 "$x" >"$tmp/e.json"
$CLI check --format json --mesh data=4 "$mod" >"$tmp/b.json"
e=$(findings "$tmp/e.json" | cut -d' ' -f2-); b=$(findings "$tmp/b.json" | cut -d' ' -f2-)
[ "$(findings "$tmp/e.json" | cut -d' ' -f1)" = exported ] && ok || bad "container not detected: $(findings "$tmp/e.json")"
[ "$e" = "$b" ] && ok || bad "container findings '$e' differ from the module's '$b'"
echo "$e" | grep -q SC0301 && ok || bad "the kernel finding is missing: $e"

$CLI check --format json --platform gpu "$x" >"$tmp/g.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; d=[d for d in r["diagnostics"] if d["code"]=="SC0701"]; assert len(d)==1, r["diagnostics"]; assert "is not among the platforms required by the module: [tpu]" in d[0]["message"], d[0]["message"]; assert d[0]["location"]["line"] is None' "$tmp/g.json" \
  && ok || bad "exported for tpu, checked for gpu: no SC0701"
$CLI check --format json --platform tpu "$x" >"$tmp/t.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; assert not [d for d in r["diagnostics"] if d["code"]=="SC0701"]' "$tmp/t.json" \
  && ok || bad "exported for tpu, checked for tpu: SC0701"

head -c 200 "$x" >"$tmp/trunc.bin"
$CLI check --format json --input-format exported "$tmp/trunc.bin" >"$tmp/tr.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; assert [d for d in r["diagnostics"] if d["code"]=="SC0001"], r' "$tmp/tr.json" \
  && ok || bad "truncated container without a syntax diagnostic"
$CLI check --format json --input-format exported "$mod" >"$tmp/nb.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; d=[d for d in r["diagnostics"] if d["code"]=="SC0001"]; assert d and "Exported" in d[0]["message"], r' "$tmp/nb.json" \
  && ok || bad "bare bytecode forced as exported: no clear diagnostic"

echo "exported: $pass passed, $fail failed"
[ "$fail" = 0 ]
