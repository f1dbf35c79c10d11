#!/bin/sh
# make soak: shardcheckd on 127.0.0.1 under mixed hostile traffic for SOAK_SECONDS (default 60):
# valid checks (cached and not), undecodable and oversize requests, calls cancelled at once and
# CheckStreams that send their header and then nothing, CONCURRENCY (default 300) in flight over
# 8 connections. Asserts every call was answered exactly once with a status its kind allows, the
# daemon holds no call afterwards, RSS comes back under RSS_BOUND_MIB (default: start + 64) and
# SIGTERM exits 0. Prints the figures.
#
# usage: tests/integration/soak.sh [BUILD_DIR]     (from the repository root; `make soak`)
set -u
BUILD=${1:-build}
SECS=${SOAK_SECONDS:-60}
CONC=${CONCURRENCY:-300}
DAEMON=$BUILD/bin/shardcheckd
LOADGEN=$BUILD/tests/integration/loadgen
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sc-soak.XXXXXX")
PID=""
cleanup() {
  [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
  [ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[ -x "$DAEMON" ] && [ -x "$LOADGEN" ] || { echo "soak.sh: build first"; exit 2; }
MODULE=$(ls ../shared/corpus/jax/jax_backcompat/*.mlir 2>/dev/null | head -1)
[ -n "$MODULE" ] || { echo "soak.sh: no corpus module under ../shared/corpus"; exit 2; }

rss() { awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$PID/status"; }
metric() { /usr/bin/python3 -c "
import sys, urllib.request
t = urllib.request.urlopen('http://127.0.0.1:$MPORT/metrics', timeout=10).read().decode()
print(int(float(next(l.split()[-1] for l in t.splitlines() if l.startswith(sys.argv[1] + ' ')))))" "$1"; }

"$DAEMON" --listen 127.0.0.1:0 --port-file "$TMP/port" --metrics-listen 127.0.0.1:0 --metrics-port-file "$TMP/mport" \
  --workers 2 --max-inflight 64 --max-message-bytes 1MiB --stream-message-timeout-ms 1000 --log-level warn \
  2>"$TMP/daemon.log" &
PID=$!
i=0
while [ ! -s "$TMP/port" ] || [ ! -s "$TMP/mport" ]; do
  i=$((i + 1))
  [ $i -gt 200 ] && { echo "soak: the daemon did not start"; cat "$TMP/daemon.log"; exit 1; }
  sleep 0.05
done
PORT=$(cat "$TMP/port")
MPORT=$(cat "$TMP/mport")
"$LOADGEN" "127.0.0.1:$PORT" "$MODULE" -c 16 -n 200 >/dev/null || { echo "soak: warm-up failed"; exit 1; }
START=$(rss)
BOUND=${RSS_BOUND_MIB:-$((START + 64))}
: >"$TMP/rss"
(while kill -0 "$PID" 2>/dev/null; do rss >>"$TMP/rss"; sleep 0.5; done) &
SAMPLER=$!
echo "soak: ${SECS}s, $CONC in flight, daemon pid $PID on :$PORT (RSS ${START} MiB after warm-up)"
"$LOADGEN" "127.0.0.1:$PORT" "$MODULE" -c "$CONC" -k 8 --soak "$SECS" --oversize 1200000 >"$TMP/load.json"
lrc=$?
kill "$SAMPLER" 2>/dev/null
SAMPLER=""
PEAK=$(sort -n "$TMP/rss" | tail -1)
FAILS=0
fail() { echo "soak: FAIL: $*"; FAILS=$((FAILS + 1)); }
cat "$TMP/load.json"
[ $lrc -eq 0 ] || fail "loadgen: calls unanswered, answered twice or with a status their kind does not allow"
# Everything released: no call held, nothing in flight, the memory budget back to 0.
i=0
until [ "$(metric shardcheckd_open_calls)" -eq 0 ] && [ "$(metric shardcheckd_inflight)" -eq 0 ] &&
  [ "$(metric shardcheckd_memory_used_bytes)" -eq 0 ]; do
  i=$((i + 1))
  [ $i -gt 100 ] && { fail "calls still held after the load: open_calls $(metric shardcheckd_open_calls)"; break; }
  sleep 0.1
done
i=0
until [ "$(rss)" -le "$BOUND" ]; do
  i=$((i + 1))
  [ $i -gt 100 ] && { fail "RSS $(rss) MiB after the load, bound $BOUND MiB"; break; }
  sleep 0.1
done
AFTER=$(rss)
TIMEOUTS=$(metric shardcheckd_stream_timeouts_total)
kill -TERM "$PID"
wait "$PID"
rc=$?
PID=""
[ $rc -eq 0 ] || fail "the daemon exited with status $rc after SIGTERM"
echo "soak: RSS start ${START} MiB, peak ${PEAK} MiB, after ${AFTER} MiB (bound ${BOUND} MiB); idle streams timed out: $TIMEOUTS"
if grep -q '"level":"error"' "$TMP/daemon.log"; then
  fail "errors in the daemon log:"
  grep '"level":"error"' "$TMP/daemon.log" | head -5
fi
[ $FAILS -eq 0 ] || exit 1
echo "soak: passed"
