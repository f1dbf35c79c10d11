#!/bin/sh
# Fleet test (`make fleet-test`, part of `make test`): on loopback, ONE redis-server (unix socket),
# three shardcheckd replicas sharing it as their result-cache tier, and Debian's nginx in front
# (grpc_pass over an upstream of the three, HTTP/2 on a free port, everything under a temp prefix).
#   1. shared cache: a module checked on replica 1 is answered from Redis by replica 2 (cache_hit in
#      its log line, its redis hit counter, the same report bytes);
#   2. load through nginx from the loadgen, replica 3 SIGKILLed mid-run: every call must complete OK
#      (nginx grpc_next_upstream + the client's retry policy on UNAVAILABLE, client/rpc.c);
#   2b. client-side round_robin over the three addresses (replica 3 dead): survivors share the load;
#   3. Redis slow (DEBUG SLEEP) then down: checks still answer OK, the tier logs and opens its breaker;
#   4. SIGTERM: the surviving replicas exit 0.
# Prints the figures (calls, completed, attempts, retried, per-replica calls and cache hits).
#
# usage: tests/integration/fleet.sh [BUILD_DIR]     (from the repository root)
set -u
BUILD=${1:-build}
DAEMON=$BUILD/bin/shardcheckd
CLI=$BUILD/bin/shardcheck
LOADGEN=$BUILD/tests/integration/loadgen
PY=/usr/bin/python3
CALLS=${FLEET_CALLS:-4000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sc-fleet.XXXXXX")
FAILS=0
PIDS=""
NGINX_PID=""
REDIS_PID=""

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

cleanup() {
  for p in $PIDS $NGINX_PID $REDIS_PID; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${FLEET_KEEP:-}" ] && echo "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

for b in "$DAEMON" "$CLI" "$LOADGEN"; do [ -x "$b" ] || { echo "fleet.sh: $b missing (make first)"; exit 2; }; done
for t in redis-server redis-cli nginx; do
  command -v $t >/dev/null 2>&1 || [ -x /usr/sbin/$t ] || { echo "fleet.sh: $t not installed (scripts/deps.sh --test)"; exit 2; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# waitfile FILE PID WHAT: until FILE is non-empty; fails if PID died or after 30 s.
waitfile() {
  i=0
  while [ ! -s "$1" ]; do
    i=$((i + 1))
    if [ $i -gt 600 ] || ! kill -0 "$2" 2>/dev/null; then
      echo "fleet.sh: $3 did not start"
      cat "$TMP"/*.log 2>/dev/null | tail -20
      exit 1
    fi
    sleep 0.05
  done
}

metric() { # metric MPORT NAME_WITH_LABELS -> value (0 when absent)
  $PY - "$1" "$2" <<'EOF'
import sys, urllib.request
port, name = sys.argv[1], sys.argv[2]
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
print(next((l.split()[-1] for l in text.splitlines() if l.split(" ")[0] == name), "0"))
EOF
}

# --- Redis on a unix socket (no TCP port: nothing to collide with) --------------------------------
SOCK=$TMP/redis.sock
redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --save '' --appendonly no --dir "$TMP" \
  --enable-debug-command local --logfile "$TMP/redis.log" &
REDIS_PID=$!
i=0
until redis-cli -s "$SOCK" ping >/dev/null 2>&1; do
  i=$((i + 1))
  [ $i -gt 200 ] && { echo "fleet.sh: redis-server did not start"; cat "$TMP/redis.log"; exit 1; }
  sleep 0.05
done

# --- three replicas --------------------------------------------------------------------------------
# A generous Redis timeout here: the box is shared with other test runs; phase 3 makes Redis slower.
for n in 1 2 3; do
  "$DAEMON" --listen 127.0.0.1:0 --port-file "$TMP/r$n.port" --metrics-listen 127.0.0.1:0 \
    --metrics-port-file "$TMP/r$n.mport" --workers 2 --max-inflight 1024 --log-level info \
    --redis "unix:$SOCK" --redis-timeout-ms 1000 --redis-breaker-s 2 2>"$TMP/r$n.log" &
  eval "PID$n=$!"
  PIDS="$PIDS $!"
done
for n in 1 2 3; do
  eval "p=\$PID$n"
  waitfile "$TMP/r$n.mport" "$p" "replica $n"
  waitfile "$TMP/r$n.port" "$p" "replica $n"
  eval "PORT$n=$(cat "$TMP/r$n.port") MPORT$n=$(cat "$TMP/r$n.mport")"
done
echo "== replicas on 127.0.0.1:$PORT1 $PORT2 $PORT3 sharing redis at $SOCK"

# --- nginx in front: grpc_pass, HTTP/2 (prior knowledge) on a free loopback port ------------------
mkdir -p "$TMP/nginx"
USERLINE=""
[ "$(id -u)" -eq 0 ] && USERLINE="user root root;" # workers write temp files under $TMP (mode 700)
start_nginx() {
  NPORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$TMP/nginx/nginx.conf" <<EOF
$USERLINE
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 4096; }
http {
  log_format fleet '\$status \$upstream_addr \$upstream_status attempts=\$http_grpc_previous_rpc_attempts';
  access_log $TMP/nginx/access.log fleet;
  client_body_temp_path $TMP/nginx/body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  upstream shardcheckd {
    server 127.0.0.1:$PORT1 max_fails=1 fail_timeout=30s;
    server 127.0.0.1:$PORT2 max_fails=1 fail_timeout=30s;
    server 127.0.0.1:$PORT3 max_fails=1 fail_timeout=30s;
    keepalive 32;
  }
  server {
    listen 127.0.0.1:$NPORT http2;
    client_max_body_size 8m;
    location / {
      grpc_pass grpc://shardcheckd;
      # A dead replica: try the next one (gRPC calls are POSTs, hence non_idempotent; checks are).
      grpc_next_upstream error timeout http_502 http_503 non_idempotent;
      grpc_next_upstream_tries 3;
      grpc_connect_timeout 1s;
      grpc_read_timeout 60s;
    }
    # As deploy/nginx/shardcheckd-front.conf: a call no replica could finish ends UNAVAILABLE (retried by
    # the client), not with an HTML page.
    error_page 502 503 504 = @grpc_unavailable;
    location @grpc_unavailable {
      internal;
      default_type application/grpc;
      add_header grpc-status 14 always;
      add_header grpc-message "no shardcheckd replica could answer; retry" always;
      return 204;
    }
  }
}
EOF
  "$NGINX" -p "$TMP/nginx/" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" -g 'daemon off;' &
  NGINX_PID=$!
  i=0
  until "$CLI" health --server "127.0.0.1:$NPORT" >/dev/null 2>&1; do
    i=$((i + 1))
    if ! kill -0 "$NGINX_PID" 2>/dev/null || [ $i -gt 100 ]; then
      kill -KILL "$NGINX_PID" 2>/dev/null
      wait "$NGINX_PID" 2>/dev/null
      NGINX_PID=""
      return 1
    fi
    sleep 0.1
  done
}
start_nginx || start_nginx || { echo "fleet.sh: nginx did not start"; cat "$TMP/nginx/error.log"; exit 1; }
echo "== nginx (grpc_pass) on 127.0.0.1:$NPORT"

# --- 1. the shared cache: checked on replica 1, answered by replica 2 from Redis ------------------
MOD=$TMP/shared_module.mlir
cp "$(ls ../shared/corpus/jax/jax_backcompat/*.mlir | head -1)" "$MOD"
"$CLI" check "$MOD" --format json --server "127.0.0.1:$PORT1" >"$TMP/report1.json"
rc1=$?
"$CLI" check "$MOD" --format json --server "127.0.0.1:$PORT2" >"$TMP/report2.json"
rc2=$?
[ $rc1 -eq $rc2 ] && [ $rc1 -le 1 ] || fail "shared cache: exit statuses $rc1 and $rc2"
cmp -s "$TMP/report1.json" "$TMP/report2.json" || fail "shared cache: replica 2's report differs from replica 1's"
tail -1 "$TMP/r2.log" | grep -q '"cache_hit":true' || fail "shared cache: replica 2 did not answer from the cache: $(tail -1 "$TMP/r2.log")"
tail -1 "$TMP/r1.log" | grep -q '"cache_hit":false' || fail "shared cache: replica 1 should have run the analysis"
h2=$(metric "$MPORT2" 'shardcheckd_redis_requests_total{result="hit"}')
[ "$h2" = 1 ] || fail "shared cache: replica 2 redis hits $h2, expected 1"
echo "shared cache: module checked on replica 1, replica 2 answered from redis (redis hits on replica 2: $h2)"

# --- 2. load through nginx; replica 3 killed mid-run ----------------------------------------------
LOADMOD=$(ls -S ../shared/corpus/jax/jax_backcompat/*.mlir | sed -n 20p)
: >"$TMP/nginx/access.log"
"$LOADGEN" "127.0.0.1:$NPORT" "$LOADMOD" -c 32 -n "$CALLS" -k 4 --unique >"$TMP/load.json" 2>"$TMP/load.err" &
LOAD_PID=$!
i=0
while [ "$(wc -l <"$TMP/nginx/access.log")" -lt $((CALLS / 3)) ] && kill -0 $LOAD_PID 2>/dev/null; do
  i=$((i + 1))
  [ $i -gt 1200 ] && break
  sleep 0.05
done
done_at_kill=$(wc -l <"$TMP/nginx/access.log")
killed_hits=$(metric "$MPORT3" 'shardcheckd_redis_requests_total{result="hit"}')
kill -KILL "$PID3"
wait "$PID3" 2>/dev/null
PIDS="$PID1 $PID2"
wait $LOAD_PID
load_rc=$?
[ $done_at_kill -lt "$CALLS" ] || fail "the load finished before replica 3 was killed ($done_at_kill calls)"
[ $load_rc -eq 0 ] || fail "not every call completed OK through nginx with a replica killed: $(cat "$TMP/load.json" "$TMP/load.err")"
ok=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["ok"])' "$TMP/load.json" 2>/dev/null || echo 0)
# Calls cut mid-answer when replica 3 died are sent again by the client (loadgen, like client/rpc.c):
# no more than were in flight then.
resent=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["resent"])' "$TMP/load.json" 2>/dev/null || echo 999)
[ "$resent" -le 32 ] || fail "$resent calls were sent again; at most the 32 in flight when the replica died may be"
[ "$ok" = "$CALLS" ] || fail "completed OK: $ok of $CALLS"

# --- 2b. client-side round_robin over the replicas' addresses (what a headless Service gives) -----
# Replica 3's address is dead now: the channel skips it; the survivors share the calls.
c1=$(metric "$MPORT1" 'shardcheckd_requests_total{method="Check",code="OK"}')
c2=$(metric "$MPORT2" 'shardcheckd_requests_total{method="Check",code="OK"}')
"$LOADGEN" "ipv4:127.0.0.1:$PORT1,127.0.0.1:$PORT2,127.0.0.1:$PORT3" "$LOADMOD" -c 16 -n 1000 --unique \
  >"$TMP/rr.json" 2>"$TMP/rr.err" || fail "round_robin load: $(cat "$TMP/rr.json" "$TMP/rr.err")"
rr1=$(($(metric "$MPORT1" 'shardcheckd_requests_total{method="Check",code="OK"}') - c1))
rr2=$(($(metric "$MPORT2" 'shardcheckd_requests_total{method="Check",code="OK"}') - c2))
[ $rr1 -gt 100 ] && [ $rr2 -gt 100 ] || fail "round_robin did not spread the calls: replica 1 $rr1, replica 2 $rr2"
echo "round_robin (no proxy, replica 3 dead): 1000 calls, replica 1 $rr1, replica 2 $rr2"

# --- 3. Redis slow, then down: local cache only, never a failed call ------------------------------
redis-cli -s "$SOCK" debug sleep 5 >"$TMP/debug_sleep.out" 2>&1 &
SLEEPER=$!
i=0 # until Redis stops answering: it sleeps
while timeout 0.3 redis-cli -s "$SOCK" ping >/dev/null 2>&1 && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.05; done
cp "$MOD" "$TMP/while_redis_slow.mlir"
"$CLI" check "$TMP/while_redis_slow.mlir" --server "127.0.0.1:$NPORT" >/dev/null
rc=$?
[ $rc -le 1 ] || fail "a check failed (exit $rc) while Redis was slow"
wait $SLEEPER
grep -q OK "$TMP/debug_sleep.out" || fail "redis DEBUG SLEEP: $(cat "$TMP/debug_sleep.out")"
redis-cli -s "$SOCK" shutdown nosave >/dev/null 2>&1
wait "$REDIS_PID" 2>/dev/null
REDIS_PID=""
cp "$MOD" "$TMP/while_redis_down.mlir"
for k in 1 2 3 4; do
  "$CLI" check "$TMP/while_redis_down.mlir" --server "127.0.0.1:$NPORT" >/dev/null
  rc=$?
  [ $rc -le 1 ] || fail "check $k failed (exit $rc) with Redis down"
done
grep -h '"redis cache tier unavailable' "$TMP/r1.log" "$TMP/r2.log" | grep -q . ||
  fail "no replica logged the Redis outage"
grep -h '"redis cache tier unavailable' "$TMP/r1.log" "$TMP/r2.log" | grep -q 'Resource temporarily unavailable' ||
  fail "no replica logged a Redis timeout while it slept"

# --- figures -------------------------------------------------------------------------------------
attempts=$(wc -l <"$TMP/nginx/access.log")
client_retries=$(grep -c 'attempts=[1-9]' "$TMP/nginx/access.log")
nginx_retries=$(grep -c ', ' "$TMP/nginx/access.log")
failed_attempts=$(grep -vc '^200 ' "$TMP/nginx/access.log")
echo "fleet: calls $CALLS, completed OK $ok, nginx log lines $attempts (non-200 $failed_attempts), retried by the client $client_retries, re-sent by nginx to another replica $nginx_retries; replica 3 killed after $done_at_kill; calls cut mid-answer and sent again $resent"
echo "load: $(cat "$TMP/load.json")"
for n in 1 2 3; do
  eval "p=\$PORT$n mp=\$MPORT$n"
  served=$(grep -c "127.0.0.1:$p" "$TMP/nginx/access.log")
  if [ $n -eq 3 ]; then
    echo "replica $n: upstream of $served logged attempts; killed (redis hits before the kill: $killed_hits)"
    continue
  fi
  echo "replica $n: upstream of $served logged attempts; local cache hits $(metric "$mp" shardcheckd_cache_hits_total)," \
    "redis hits $(metric "$mp" 'shardcheckd_redis_requests_total{result="hit"}')," \
    "misses $(metric "$mp" 'shardcheckd_redis_requests_total{result="miss"}')," \
    "stored $(metric "$mp" 'shardcheckd_redis_requests_total{result="stored"}')," \
    "errors $(metric "$mp" 'shardcheckd_redis_requests_total{result="error"}')," \
    "skipped (breaker) $(metric "$mp" 'shardcheckd_redis_requests_total{result="skipped"}')"
done

# --- 4. stop ---------------------------------------------------------------------------------------
kill -QUIT "$NGINX_PID" 2>/dev/null
wait "$NGINX_PID" 2>/dev/null
NGINX_PID=""
for n in 1 2; do
  eval "p=\$PID$n"
  kill -TERM "$p"
  wait "$p"
  rc=$?
  [ $rc -eq 0 ] || { fail "replica $n exited with status $rc after SIGTERM"; tail -5 "$TMP/r$n.log"; }
done
PIDS=""
if [ $FAILS -eq 0 ]; then
  echo "fleet test: 1 passed, 0 failed"
else
  echo "fleet test: 0 passed, 1 failed ($FAILS checks)"
  exit 1
fi
