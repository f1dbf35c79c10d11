#!/bin/sh
# `make bench-daemon`: shardcheckd throughput and latency on this machine (client and daemon share
# it). Closed loop with tests/integration/loadgen; one JSON line per configuration:
#   small module, cached      (the repeated CI check: answered from the result cache)
#   small module, --unique    (every call runs the analysis)
#   a real-world HLO dump, --unique
# at 1 and 200 calls in flight. Informational: nothing here asserts on speed.
set -u
BUILD=${1:-build}
DAEMON=$BUILD/bin/shardcheckd
LOADGEN=$BUILD/tests/integration/loadgen
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sc-bench.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
"$DAEMON" --listen 127.0.0.1:0 --port-file "$TMP/port" --workers "${WORKERS:-2}" --max-inflight 1024 \
  --log-level warn 2>"$TMP/log" &
PID=$!
i=0
while [ ! -s "$TMP/port" ]; do
  i=$((i + 1))
  [ $i -gt 200 ] && { cat "$TMP/log"; exit 1; }
  sleep 0.05
done
S=127.0.0.1:$(cat "$TMP/port")
SMALL=../shared/corpus/jax/jax_backcompat/$(ls ../shared/corpus/jax/jax_backcompat | head -1)
BIG=$(ls -S ../shared/corpus/xla/real_world/*.hlo | head -1)
"$LOADGEN" "$S" "$SMALL" -c 1 -n 2000
"$LOADGEN" "$S" "$SMALL" -c 200 -n 20000 -k 4
"$LOADGEN" "$S" "$SMALL" -c 1 -n 2000 --unique
"$LOADGEN" "$S" "$SMALL" -c 200 -n 20000 -k 4 --unique
"$LOADGEN" "$S" "$BIG" -c 1 -n 50 --unique
"$LOADGEN" "$S" "$BIG" -c 16 -n 200 -k 4 --unique
printf 'daemon peak RSS: '
grep VmHWM /proc/$PID/status | awk '{print $2, $3}'
kill -TERM "$PID"
wait "$PID"
PID=""
