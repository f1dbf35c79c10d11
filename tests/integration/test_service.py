#!/usr/bin/python3
"""Integration tests for shardcheckd as a network service (issue 21), with the same independent
client as test_daemon.py (Debian's python3-grpcio, descriptor-built messages).

Run by tests/integration/run.sh, which starts the daemons. Groups:
  retry   the CLI retries a call answered UNAVAILABLE before any byte of it was sent (a connection
          refused at the connection cap), and the call then succeeds
Every wait is a bounded poll; nothing asserts on elapsed time."""
import argparse
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scproto import Client, Proto  # noqa: E402
from test_daemon import Ctx, fail, metrics, poll, run_group  # noqa: E402

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def refused_at_cap(ctx):
    return metrics(ctx).get('shardcheckd_connections_refused_total{reason="max_connections"}', 0)


# --- group: retry ------------------------------------------------------------------------------------

def t_cli_retries_refused_connection(ctx):
    """The daemon takes one connection (--max-connections 1), held here: the CLI's first connection
    is closed at once (UNAVAILABLE). Once the holder leaves, the CLI's retry is served."""
    holder = socket.create_connection(("127.0.0.1", ctx.port), timeout=5)
    holder.sendall(PREFACE)  # now gRPC's: counted until it closes
    before = refused_at_cap(ctx)
    env = dict(os.environ, SHARDCHECK_TIMEOUT_MS="30000")
    cli = subprocess.Popen([ctx.cli, "health", "--server", f"127.0.0.1:{ctx.port}"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, text=True)
    try:
        poll(lambda: refused_at_cap(ctx) > before or cli.poll() is not None, "the CLI's connection to be refused")
    finally:
        holder.close()
    try:
        out, err = cli.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        cli.kill()
        cli.communicate()
        fail("the CLI did not finish")
    if cli.returncode != 0 or out.strip() != "SERVING":
        fail(f"CLI health after a refused connection: exit {cli.returncode}, {out.strip()!r} {err.strip()!r}")
    if refused_at_cap(ctx) <= before:
        fail("the CLI's first connection was not refused (the test did not exercise a retry)")


RETRY = [t_cli_retries_refused_connection]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--group", choices=["retry"], required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--metrics-port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--fds", default="build/gen/descriptors.pb")
    ap.add_argument("--cli", default="build/bin/shardcheck")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    ctx = Ctx()
    ctx.p = Proto(a.fds)
    ctx.c = Client(ctx.p, f"127.0.0.1:{a.port}")
    ctx.port, ctx.metrics_port, ctx.pid, ctx.log, ctx.cli = a.port, a.metrics_port, a.pid, a.log, a.cli
    ctx.tmp = tempfile.mkdtemp(prefix="sc-itest-")
    run_group(ctx, a.group, {"retry": RETRY}[a.group], a.only)


if __name__ == "__main__":
    main()
