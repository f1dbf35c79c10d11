#!/bin/sh
# `make demo`: build (the Makefile installed missing packages and built everything), start
# shardcheckd on a free loopback port, check examples/*.mlir through it with the CLI in human-readable
# form, show the daemon's health and what it logged, and stop it with SIGTERM.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DAEMON=$BUILD/bin/shardcheckd
CLI=$BUILD/bin/shardcheck
[ -x "$DAEMON" ] && [ -x "$CLI" ] || make --no-print-directory all || exit 2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/shardcheck-demo.XXXXXX")
PID=""
cleanup() {
  [ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

"$DAEMON" --config config/shardcheckd.json --listen 127.0.0.1:0 --port-file "$TMP/port" 2>"$TMP/daemon.log" &
PID=$!
i=0
while [ ! -s "$TMP/port" ]; do
  i=$((i + 1))
  if [ $i -gt 200 ] || ! kill -0 "$PID" 2>/dev/null; then
    echo "demo: shardcheckd did not start:"
    cat "$TMP/daemon.log"
    exit 1
  fi
  sleep 0.05
done
SERVER=127.0.0.1:$(cat "$TMP/port")
echo "== shardcheckd listening on $SERVER (pid $PID)"
printf '== health: '
"$CLI" health --server "$SERVER"
echo

found=0
for f in examples/*.mlir; do
  [ -f "$f" ] || continue
  echo "== shardcheck check --server $SERVER $f"
  "$CLI" check --server "$SERVER" "$f"
  rc=$?
  [ $rc -ge 2 ] && { echo "demo: checking $f through the daemon failed (exit $rc)"; exit 1; }
  [ $rc -eq 1 ] && found=$((found + 1))
  echo
done
echo "== $found of $(ls examples/*.mlir | wc -l) examples have error diagnostics (exit status 1 from the CLI)"
# What jax.export serializes (MLIR bytecode), read without MLIR: a Pallas kernel exported for one device,
# checked for deployment on four.
bc=../shared/corpus/jax/jax_backcompat/pallas_mosaic_matmul__0.mlirbc
if [ -f "$bc" ]; then
  echo
  echo "== shardcheck check --server $SERVER --mesh data=4 $bc   (MLIR bytecode, as jax.export writes it)"
  "$CLI" check --server "$SERVER" --mesh data=4 "$bc"
  [ $? -ge 2 ] && { echo "demo: checking $bc through the daemon failed"; exit 1; }
  echo
fi
for f in examples/*.mlir; do "$CLI" check --server "$SERVER" "$f" >/dev/null; done
echo "== checking them again: $(grep -c '"cache_hit":true' "$TMP/daemon.log") answered from the daemon's result cache; its request log:"
grep '"msg":"request"' "$TMP/daemon.log" | tail -2
echo
kill -TERM "$PID"
wait "$PID"
rc=$?
PID=""
echo "== shardcheckd stopped after SIGTERM (exit status $rc); its last log lines:"
tail -3 "$TMP/daemon.log"
exit $rc
