#!/bin/sh
# `check --format html` in a real browser: Debian's headless chromium loads each page from file:// with
# the network cut off, and the DOM it built (--dump-dom) must hold the expected diagnostics, device grids
# and tensor tiles; a hostile module must yield no element from its names. A screenshot of the sharding
# page is kept in $SC_BUILD/html/report.png (docs/images/report.png is made the same way).
# chromium missing is a failure, not a skip (scripts/deps.sh --test installs it).
set -u
BUILD=${SC_BUILD:-build}
CLI=$BUILD/bin/shardcheck
C=../shared/corpus
OUT=$BUILD/html
pass=0 fail=0
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
  echo "FAIL: chromium is not installed (scripts/deps.sh --test installs it)"
  exit 1
fi
# No network: every host resolves to nothing and every request goes to a closed proxy port.
browse() { # dom PAGE | png PAGE PNG
  url="file://$(realpath "$2")"
  if [ "$1" = dom ]; then
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" --no-first-run \
      --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server=127.0.0.1:9 --dump-dom "$url" 2>"$tmp/chrome.err"
  else
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" --no-first-run \
      --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server=127.0.0.1:9 --hide-scrollbars --window-size=1100,1500 \
      --screenshot="$3" "$url" >/dev/null 2>"$tmp/chrome.err"
  fi
}

# Checks a DOM (stdin) against expectations (argv): code=SC0210 (a diagnostic card), tensors=N (drawn
# tensors), blocks=N,N (their data-blocks in order), devices=N (device cells in all grids),
# mesh=N (the first mesh grid's data-devices), text=S (visible text contains S), noscript.
cat >"$tmp/check_dom.py" <<'EOF'
import sys
from html.parser import HTMLParser

class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.codes, self.blocks, self.meshes, self.devices, self.scripts, self.text = [], [], [], 0, 0, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "section" and "diag" in cls.split():
            self.codes.append(a.get("data-code"))
        if tag == "svg" and cls == "tensor":
            self.blocks.append(a.get("data-blocks"))
        if tag == "svg" and cls == "mesh":
            self.meshes.append(a.get("data-devices"))
        if tag == "g" and cls == "device":
            self.devices += 1
        if tag in ("script", "img", "iframe", "object", "embed") or any(k.startswith("on") for k in a):
            self.scripts += 1
    def handle_data(self, data):
        self.text.append(data)

p = P()
dom = sys.stdin.read()
p.feed(dom)
text = "".join(p.text)
errors = []
if "<main>" not in dom:
    errors.append("the browser produced no page")
for want in sys.argv[1:]:
    k, _, v = want.partition("=")
    if k == "code" and v not in p.codes:
        errors.append(f"no diagnostic {v} (have {p.codes})")
    elif k == "tensors" and len(p.blocks) != int(v):
        errors.append(f"{len(p.blocks)} tensors drawn, want {v}")
    elif k == "blocks" and p.blocks[:len(v.split(','))] != v.split(","):
        errors.append(f"blocks {p.blocks}, want {v}")
    elif k == "devices" and p.devices != int(v):
        errors.append(f"{p.devices} device cells, want {v}")
    elif k == "mesh" and (not p.meshes or p.meshes[0] != v):
        errors.append(f"mesh grids {p.meshes}, want the first of {v} devices")
    elif k == "text" and v not in text:
        errors.append(f"no text {v!r}")
    elif k == "noscript" and p.scripts:
        errors.append(f"{p.scripts} active elements (script/img/on*) in the DOM")
for e in errors:
    print("   ", e)
sys.exit(1 if errors else 0)
EOF
check_dom() { /usr/bin/python3 "$tmp/check_dom.py" "$@"; }

page_case() { # name "cli args" expectations...
  name=$1 args=$2
  shift 2
  # shellcheck disable=SC2086
  $CLI check --no-config --format html $args >"$OUT/$name.html" 2>"$tmp/err"
  rc=$?
  if [ $rc -ge 2 ]; then bad "$name: shardcheck exit $rc"; head -3 "$tmp/err"; return; fi
  if grep -Eq "(src|href)=['\"]?(https?:)?//" "$OUT/$name.html"; then bad "$name: the page refers to the network"; fi
  browse dom "$OUT/$name.html" >"$tmp/dom.html"
  if [ ! -s "$tmp/dom.html" ]; then bad "$name: chromium produced no DOM"; head -5 "$tmp/chrome.err"; return; fi
  if check_dom "$@" <"$tmp/dom.html"; then ok; else bad "$name: DOM"; fi
}

S=tests/modules/sharding
# Uneven/indivisible dims and a rank mismatch: 3 tensors of 4 blocks each; mesh grids of 8, 4, 4 devices
# and a tensor grid each (8 + 4 + 4 devices + 4 + 4 + 8 in the tensors' grids).
page_case sharding "$S/sharding-divisibility.bad.mlir $S/sharding-uneven-constraint.bad.mlir $S/sharding-rank.bad.mlir" \
  code=SC0210 code=SC0218 code=SC0204 tensors=3 blocks=4,4,4 devices=32 \
  "text=padded to 8" "text=devs 6,7" "text=4:6, 0:8" "text=the sharding has 2 dimensions, the value 1" noscript
# A real JAX module (Pallas matmul, bytecode) checked for a 4-device mesh: the mesh grid and SC0301.
page_case jax_pallas "--mesh data=4 $C/jax/jax_backcompat/pallas_mosaic_matmul__0.mlirbc" \
  code=SC0301 mesh=4 devices=4 tensors=0 "text=jax.shard_map" noscript
# Shardy's own tests: indivisible function arguments drawn over their module meshes.
page_case shardy_reduce "--split-input-file $C/shardy/propagation/insert_explicit_reshards__reduce.mlir" \
  code=SC0210 tensors=2 noscript
# XLA's GSPMD: 5 rows over 2 tiles of 3 (one padding row), each tile replicated 4 times.
page_case gspmd "$C/xla/hlo/sharding_propagation__ShardAsWithShardBarrier2.hlo" \
  code=SC0218 tensors=1 blocks=2 "text=3:5" "text=devs 0,1,2+1" "text=replicated over replicated" noscript
# Markup in axis, function and file names stays text in the browser.
cat >"$tmp/hostile.mlir" <<'EOF'
#loc1 = loc("<img src=x onerror=alert(1)>.py":3:1)
sdy.mesh @mesh = <["<script>alert(1)</script>"=4]>
func.func @"</pre><script>x()</script>"(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"<script>alert(1)</script>"}]>}) -> tensor<6xf32> {
  return %arg0 : tensor<6xf32>
} loc(#loc1)
EOF
page_case hostile "$tmp/hostile.mlir" code=SC0210 tensors=1 "text=<script>alert(1)</script>" noscript

# The screenshot of the sharding page.
rm -f "$OUT/report.png"
browse png "$OUT/sharding.html" "$OUT/report.png"
if [ -s "$OUT/report.png" ] && [ "$(head -c 8 "$OUT/report.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ]; then ok
else bad "no screenshot"; head -5 "$tmp/chrome.err"; fi

echo "html_browser_test: $pass passed, $fail failed (pages and screenshot in $OUT)"
[ "$fail" -eq 0 ]
