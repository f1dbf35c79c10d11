#!/bin/sh
# `make redteam`: the HTTP/2 attacks of ../shared/redteam against the deployment as shipped — Debian's
# nginx with deploy/nginx/shardcheckd-front.conf in front, shardcheckd on loopback behind it
# (tests/redteam/front.py) — then per attack the other clients' outcome, the daemon's peak RSS
# against the configured limit and whether it was released (tests/redteam/verdict.py), and
# `redteam: N held, M degraded, K broke`. About 10 minutes on 2 cores; not part of `make test`.
# `--quick` runs the fast subset the integration suite runs (about 1 minute).
# Limits: 4096 MiB (compose mem_limit, systemd MemoryMax); the runs labelled k8s use the Kubernetes
# ConfigMap's values and its 2 GiB pod limit.
#
# usage: tests/redteam/run.sh [--quick] [BUILD_DIR]     (from the repository root)
set -u
QUICK=""
[ "${1:-}" = "--quick" ] && { QUICK=1; shift; }
BUILD=${1:-build}
RT=${REDTEAM_DIR:-../shared/redteam}
PY=/usr/bin/python3
HERE=$(dirname "$0")
[ -d "$RT" ] || { echo "redteam: $RT not found (run from the repository root)"; exit 2; }
[ -x "$BUILD/bin/shardcheckd" ] || { echo "redteam: build first (make)"; exit 2; }
[ "$BUILD" = build ] || { echo "redteam: the attack scripts use ./build"; exit 2; }
$PY -c 'import grpc, h2, hpack' 2>/dev/null || { echo "redteam: $PY lacks python3-grpcio / python3-h2"; exit 2; }
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { echo "redteam: nginx missing"; exit 2; }
RT_RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/sc-redteam.XXXXXX")
export RT_RESULTS REDTEAM_DIR="$RT"
K8S="--workers 2 --max-inflight 64 --max-module-bytes 64MiB --max-arena-bytes 512MiB --memory-budget-bytes 1280MiB \
--cache-bytes 128MiB --connection-max-age-ms 300000 --grace-ms 20000"

sh "$RT/mkpki.sh" >/dev/null 2>&1
$PY "$RT/mkmods.py" >/dev/null || exit 2
# attack SCRIPT ARGS...: one run; its output goes to the results directory, a line here.
attack() {
  echo "== $*"
  # shellcheck disable=SC2086
  timeout 300 $PY "$HERE/front.py" "$@" >"$RT_RESULTS/$(echo "$*" | tr ' /=' '___').out" 2>&1 ||
    echo "   (exit $?: see the .out file in RT_RESULTS)"
}
if [ -n "$QUICK" ]; then
  attack a1b_unknown_backlog.py rst 3             # 1c  Rapid Reset to an unknown method (CVE-2023-44487)
  attack a2b_hpack_cpu.py 1024 8 bigstring        # 2d  1 GiB header value in CONTINUATIONs (CVE-2023-33953)
  attack a5b_partial_messages.py huge 1 1         # 5d  a message declared 4 GiB
else
  attack a0_baseline.py
  attack a1b_unknown_backlog.py rst 5             # 1c
  attack a1b_unknown_backlog.py caps 5            # 1c
  attack a1_rapid_reset.py check                  # 1b
  attack a2_headers.py                            # 2a-2e
  attack a2b_hpack_cpu.py 1024 25 bigstring       # 2d
  attack a3c_zero_window.py budget 110            # 3e
  # shellcheck disable=SC2086
  attack a3c_zero_window.py bigreport 62 label=k8s $K8S   # 3f with the Kubernetes values
  attack a4_slowloris.py plain_partial            # 4a
  attack a4c_watch_hold.py slots                  # 4c
  attack a5b_partial_messages.py partial4m 4 50   # 5c
  attack a5b_partial_messages.py huge 1 1         # 5d
  attack a6b_stream_budget.py 9 240               # 6d
fi
echo
# Results named *k8s* are judged against the 2 GiB pod limit, the others against 4 GiB.
names=$(cd "$RT_RESULTS" && ls -- *.json 2>/dev/null | sed 's/\.json$//')
k8s=$(echo "$names" | grep k8s)
other=$(echo "$names" | grep -v k8s)
rc=0
# shellcheck disable=SC2086
[ -z "$other" ] || $PY "$HERE/verdict.py" "$RT_RESULTS" 4096 $other >"$RT_RESULTS/v1" || rc=1
# shellcheck disable=SC2086
[ -z "$k8s" ] || $PY "$HERE/verdict.py" "$RT_RESULTS" 2048 $k8s >"$RT_RESULTS/v2" || rc=1
cat "$RT_RESULTS"/v1 "$RT_RESULTS"/v2 2>/dev/null | grep -v '^redteam:'
echo "  (results, attack output: $RT_RESULTS; daemon and nginx logs: /tmp/rt/<run>/)"
cat "$RT_RESULTS"/v1 "$RT_RESULTS"/v2 2>/dev/null | awk '/^redteam:/ {h += $2; d += $4; b += $6}
  END {printf "redteam: %d held, %d degraded, %d broke\n", h, d, b}'
exit $rc
