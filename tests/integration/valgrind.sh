#!/bin/sh
# The integration load (tests/integration/run.sh on a corpus sample) with every shardcheckd, and
# the C client library test, under valgrind: any memory error, or any definitely/indirectly/possibly lost block, fails the run
# (--error-exitcode makes the daemon exit non-zero, which run.sh reports, and the logs are checked).
#
# usage: tests/integration/valgrind.sh [BUILD_DIR]     (`make valgrind-daemon`)
set -u
BUILD=${1:-build}
command -v valgrind >/dev/null 2>&1 || { echo "valgrind-daemon: valgrind is not installed"; exit 2; }
HERE=$(dirname "$0")
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/sc-valgrind.XXXXXX")
trap '[ -n "${KEEP_LOGS:-}" ] || rm -rf "$LOGS"' EXIT INT TERM
VG="valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible \
--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 --num-callers=30 \
--suppressions=$HERE/valgrind.supp"
export DAEMON_WRAPPER="$VG --log-file=$LOGS/vg.%p.log"
# The C client library too (rpc_smoke: Check, CheckStream, rules, explain, health, errors).
export CLIENT_WRAPPER="$VG --log-file=$LOGS/vg-client.%p.log"
export SC_QUICK=1
# A daemon under valgrind answers slowly: the CLI gives a failing connection this long (client/rpc.c).
export SHARDCHECK_CONNECT_TIMEOUT_MS=60000
sh "$HERE/run.sh" "$BUILD"
rc=$?
n=0
bad=0
for f in "$LOGS"/vg*.log; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  # --quiet: a clean run leaves an empty log.
  if [ -s "$f" ]; then
    bad=$((bad + 1))
    echo "valgrind-daemon: $f:"
    head -60 "$f"
  fi
done
[ $n -gt 0 ] || { echo "valgrind-daemon: no valgrind logs (did the daemons start?)"; exit 1; }
if [ $rc -ne 0 ] || [ $bad -ne 0 ]; then
  echo "valgrind-daemon: FAILED ($n daemons, $bad with valgrind reports, integration exit $rc)"
  exit 1
fi
echo "valgrind-daemon: $n processes (daemons and the C client) under valgrind: 0 errors, 0 leaks"
