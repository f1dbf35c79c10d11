#!/bin/sh
# The jax.export container: flatc builds Exported flatbuffers (tests/exported/exported.fbs) around a
# real corpus module; shardcheck reads them (detected by shape), finds what the bare module gives, and
# checks the recorded platforms against --platform (SC0701), the recorded device count against --mesh
# (SC0702) and the stored in/out shardings (serialized xla.OpSharding protos) against the mesh (SC0703),
# each failing and passing.
CLI=${CLI:-${SC_BUILD:-build}/bin/shardcheck}
C=../shared/corpus
PY=/usr/bin/python3
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v flatc >/dev/null 2>&1; then echo "FAIL: flatc (flatbuffers-compiler) is not installed"; exit 1; fi

mod=$C/jax/jax_backcompat/pallas_mosaic_matmul__0.mlirbc
# Containers: x (1 device, the JAX default), d8 (8 devices, inputs tiled over all 8), old (nr_devices not
# recorded, an explicit tile assignment naming device 5), junk (a stored sharding that is no protobuf),
# d2 (around a module lowered for 2 devices, as JAX records it).
mod2=$C/jax/jax_backcompat/tpu_Sharding__1.mlirbc
$PY - "$mod" "$tmp" "$mod2" <<'PYEOF'
import json, sys
def signed(bs): return [b - 256 if b > 127 else b for b in bs]
data = signed(open(sys.argv[1], 'rb').read())
def varint(v):
    out = b""
    while True:
        out += bytes([(v & 0x7f) | (0x80 if v > 0x7f else 0)]); v >>= 7
        if not v: return out
def field(num, wt, payload): return varint(num << 3 | wt) + payload
def packed(num, vals):
    body = b"".join(varint(v) for v in vals)
    return field(num, 2, varint(len(body)) + body)
# xla.OpSharding: type=1, tile_assignment_dimensions=3, tile_assignment_devices=4, iota_reshape_dims=9, iota_transpose_perm=10
OTHER, REPLICATED = 3, 0
def tiled(dims, devices=None, iota=None):
    p = field(1, 0, varint(OTHER)) + packed(3, dims)
    return p + (packed(4, devices) if devices is not None else packed(9, iota) + packed(10, list(range(len(iota)))))
replicated = field(1, 0, varint(REPLICATED))
def sharding(proto): return {"kind": 1, "hlo_sharding_proto": signed(proto)}
def container(name, module=data, **extra):
    x = {"serialization_version": 5, "function_name": "matmul_f", "platforms": ["tpu"],
         "calling_convention_version": 9, "mlir_module_serialized": module}
    x.update(extra)
    json.dump(x, open(f"{sys.argv[2]}/{name}.json", "w"))
container("x", nr_devices=1)
container("d8", nr_devices=8, in_shardings=[sharding(tiled([8, 1], iota=[8])), sharding(tiled([8, 1], iota=[8]))],
          out_shardings=[sharding(replicated)])
container("old", in_shardings=[sharding(tiled([2, 2], devices=[0, 1, 2, 5])), {"kind": 0}])
container("junk", nr_devices=1, in_shardings=[sharding(b"\xff\xff")])
container("d2", module=signed(open(sys.argv[3], 'rb').read()), nr_devices=2,
          in_shardings=[sharding(tiled([2], devices=[0, 1]))], out_shardings=[sharding(replicated)])
PYEOF
for c in x d8 old junk d2; do flatc -b -o "$tmp" tests/exported/exported.fbs "$tmp/$c.json" || { echo "FAIL: flatc $c"; exit 1; }; done
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

# SC0702/SC0703: `python3 -c 'cond' report.json` over the codes' diagnostics (list d, per code).
codes() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; d={c: [x for x in r["diagnostics"] if x["code"]==c] for c in ("SC0107","SC0702","SC0703")}; assert eval(sys.argv[2]), (sys.argv[2], r["diagnostics"])' "$@"; }
$CLI check --format json --mesh data=4 "$tmp/d8.bin" >"$tmp/d8_4.json"
codes "$tmp/d8_4.json" 'len(d["SC0702"])==1 and d["SC0702"][0]["message"]=="Function matmul_f was exported for 8 devices and is called in a context with 4 devices, which is not allowed."' \
  && ok || bad "exported for 8 devices, checked on 4: no SC0702 with JAX's text"
codes "$tmp/d8_4.json" 'not d["SC0703"] and len(d["SC0702"][0].get("related") or [])==2 and "jax.make_mesh((4,)" in d["SC0702"][0]["fixes"][0]["snippet"]' \
  && ok || bad "the 8-device input shardings are not folded into SC0702 as related sites (or no mesh snippet)"
$CLI check --format json --mesh data=8 "$tmp/d8.bin" >"$tmp/d8_8.json"
codes "$tmp/d8_8.json" 'not d["SC0702"] and not d["SC0703"]' && ok || bad "exported for 8 devices, checked on 8: reported"
$CLI check --format json --mesh data=2,model=4 "$tmp/d8.bin" >"$tmp/d8_24.json"
codes "$tmp/d8_24.json" 'not d["SC0702"] and not d["SC0703"]' && ok || bad "exported for 8 devices, checked on a 2x4 mesh: reported"
$CLI check --format json --mesh data=4 "$tmp/d2.bin" >"$tmp/d2_4.json"
codes "$tmp/d2_4.json" 'len(d["SC0702"])==1 and not d["SC0107"] and not d["SC0703"] and len(d["SC0702"][0].get("related") or [])==2' \
  && ok || bad "a 2-device export on 4 devices: not one SC0702 with the module's SC0107 and the input sharding as related sites"
$CLI check --format json --mesh data=2 "$tmp/d2.bin" >"$tmp/d2_2.json"
codes "$tmp/d2_2.json" 'not d["SC0107"] and not d["SC0702"] and not d["SC0703"]' && ok || bad "a 2-device export on 2 devices: reported"
$CLI check --format json --mesh data=4 "$x" >"$tmp/x_4.json"
codes "$tmp/x_4.json" 'not d["SC0702"]' && ok || bad "exported for 1 device (JAX allows any mesh): SC0702"
$CLI check --format json --mesh data=4 "$tmp/old.bin" >"$tmp/old_4.json"
codes "$tmp/old_4.json" 'len(d["SC0703"])==1 and "device 5 >= num_devices (4) in tile assignment" in d["SC0703"][0]["message"] and "in_shardings[0]" in d["SC0703"][0]["message"]' \
  && ok || bad "a stored tile assignment naming device 5 on a 4-device mesh: no SC0703"
$CLI check --format json --mesh data=8 "$tmp/old.bin" >"$tmp/old_8.json"
codes "$tmp/old_8.json" 'len(d["SC0703"])==1 and "tile_assignment should have 8 devices but has 4" in d["SC0703"][0]["message"]' \
  && ok || bad "a stored 4-device tile assignment on an 8-device mesh: no SC0703"
$CLI check --format json "$tmp/old.bin" >"$tmp/old_none.json"
codes "$tmp/old_none.json" 'not d["SC0702"] and not d["SC0703"]' && ok || bad "device checks without --mesh"
$CLI check --format json "$tmp/junk.bin" >"$tmp/junk.json"
codes "$tmp/junk.json" 'len(d["SC0703"])==1 and "not a readable xla.OpSharding" in d["SC0703"][0]["message"]' \
  && ok || bad "a stored sharding that is no protobuf: no clear SC0703"

head -c 200 "$x" >"$tmp/trunc.bin"
$CLI check --format json --input-format exported "$tmp/trunc.bin" >"$tmp/tr.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; assert [d for d in r["diagnostics"] if d["code"]=="SC0001"], r' "$tmp/tr.json" \
  && ok || bad "truncated container without a syntax diagnostic"
$CLI check --format json --input-format exported "$mod" >"$tmp/nb.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r.get("reports",[r])[0]; d=[d for d in r["diagnostics"] if d["code"]=="SC0001"]; assert d and "Exported" in d[0]["message"], r' "$tmp/nb.json" \
  && ok || bad "bare bytecode forced as exported: no clear diagnostic"

echo "exported: $pass passed, $fail failed"
[ "$fail" = 0 ]
