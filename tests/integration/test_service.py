#!/usr/bin/python3
"""Integration tests for shardcheckd as a network service (issue 21), with the same independent
client as test_daemon.py (Debian's python3-grpcio, descriptor-built messages).

Run by tests/integration/run.sh, which starts the daemons. Groups:
  retry   the CLI retries a call answered UNAVAILABLE before any byte of it was sent (a connection
          refused at the connection cap), and the call then succeeds
  budget  the memory budget counts real bytes: a stream holding one byte is charged a few KiB; one
          connection cannot take more than its share while another is served; an answer the client
          does not read (zero HTTP/2 window) is cancelled after send_timeout_ms and its charge released
  slots   connection slots cannot be held: a trickled preface is closed at handshake_timeout_ms, what is
          not HTTP/2 at once; one address has at most max_per_peer connections (another is still
          served); Health.Watch is capped per connection and ends after watch_max_ms; idle metrics
          connections cannot keep a scrape out
  fair    checks of large modules use at most workers-1 workers: a small check sent after several
          large ones is answered while they are still running or waiting
  noise   calls the client reset or let expire are counted and logged as CANCELLED and
          DEADLINE_EXCEEDED (not INVALID_ARGUMENT); per-call warnings are rate-limited with a
          summary line per interval
Every wait is a bounded poll; nothing asserts on elapsed time."""
import argparse
import os
import socket
import struct
import subprocess
import sys
import tempfile

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scproto import Client, Proto  # noqa: E402
from test_daemon import (Ctx, big_module, check_req, corpus_files, daemon_args, daemon_ctx, expect_status,  # noqa: E402
                         fail, log_lines, metrics, poll, run_group)
from test_hostile import HeldStream, header_chunk  # noqa: E402

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


# --- group: budget -----------------------------------------------------------------------------------

def memory_used(ctx):
    return metrics(ctx)["shardcheckd_memory_used_bytes"]


def own_connection(ctx):
    """A Client whose channel has a connection of its own (grpcio shares subchannels otherwise)."""
    c = Client(ctx.p, f"127.0.0.1:{ctx.port}")
    c.channel.close()
    c.channel = grpc.insecure_channel(c.target, options=[("grpc.use_local_subchannel_pool", 1)])
    c.check = c.channel.unary_unary(f"/shardcheck.v1.ShardCheck/Check", request_serializer=c.CheckRequest.SerializeToString,
                                    response_deserializer=c.CheckResponse.FromString)
    c.check_stream = c.channel.stream_unary("/shardcheck.v1.ShardCheck/CheckStream",
                                            request_serializer=c.CheckChunk.SerializeToString,
                                            response_deserializer=c.CheckResponse.FromString)
    return c


def t_one_byte_stream_charged_its_bytes(ctx):
    """A CheckStream holding one byte is charged its buffer (a few KiB), not a megabyte."""
    h = HeldStream(ctx, [header_chunk(ctx, "one.mlir", b"/")])
    try:
        if not h.sent.wait(30):
            fail("the stream did not send")
        used = poll(lambda: memory_used(ctx) or None, "the held byte to be charged")
        if used > 64 << 10:
            fail(f"a stream holding 1 byte is charged {int(used)} bytes")
    finally:
        h.fut.cancel()
        h.release()
    poll(lambda: memory_used(ctx) == 0, "the charge to be released")


def t_connection_share(ctx):
    """Streams on one connection buffer past its share (a quarter of the budget): refused with the
    connection's share named; a call on another connection is served meanwhile."""
    share = int(metrics(ctx)["shardcheckd_memory_connection_limit_bytes"])
    chunk = 256 << 10
    hog = own_connection(ctx)
    held = []
    try:
        chunks = [header_chunk(ctx, "hog.mlir", b"/" * chunk)] + [hog.CheckChunk(data=b"/" * chunk)
                                                                   for _ in range(share // chunk + 2)]
        held.append(HeldStream(hog_ctx(ctx, hog), chunks))
        e = held[0].error(30)
        expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, "connection memory share", "connection_memory_bytes")
        other = own_connection(ctx)
        try:
            r = other.check(check_req(ctx, corpus_files()[2]), timeout=30)
            if not r.report:
                fail("another connection got no report")
        finally:
            other.close()
    finally:
        for h in held:
            h.fut.cancel()
            h.release()
        hog.close()
    poll(lambda: memory_used(ctx) == 0, "the budget to be released")
    if metrics(ctx)["shardcheckd_rejected_connection_memory_total"] < 1:
        fail("metrics: the connection-share rejection was not counted")


def hog_ctx(ctx, client):
    c = Ctx()
    c.c = client
    return c


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(name, value):
    """A header as 'literal without indexing, new name', no Huffman (names and values < 127 bytes)."""
    n, v = name.encode(), value.encode()
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


def t_unread_answer_released(ctx):
    """A client that announces a zero receive window and never reads: its answer cannot be sent; after
    send_timeout_ms the call is cancelled and its charge released."""
    before = metrics(ctx)["shardcheckd_send_timeouts_total"]
    req = ctx.c.CheckRequest(file_name="stalled.mlir", module=open("examples/unknown_axis.mlir", "rb").read())
    body = req.SerializeToString()
    headers = b"".join(hpack_literal(k, v) for k, v in [
        (":method", "POST"), (":scheme", "http"), (":path", "/shardcheck.v1.ShardCheck/Check"),
        (":authority", "127.0.0.1"), ("content-type", "application/grpc"), ("te", "trailers")])
    s = socket.create_connection(("127.0.0.1", ctx.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        s.sendall(PREFACE + frame(4, 0, 0, struct.pack(">HI", 4, 0)) +  # SETTINGS_INITIAL_WINDOW_SIZE = 0
                  frame(4, 1, 0) +  # ACK the server's SETTINGS (whatever they are)
                  frame(1, 4, 1, headers) + frame(0, 1, 1, b"\x00" + struct.pack(">I", len(body)) + body))
        poll(lambda: metrics(ctx)["shardcheckd_send_timeouts_total"] > before, "the unread answer to be cancelled",
             tries=400)
        poll(lambda: memory_used(ctx) == 0, "the unread answer's charge to be released")
    finally:
        s.close()
    r = ctx.c.check(check_req(ctx, corpus_files()[2]), timeout=30)  # others are served
    if not r.report:
        fail("no report after the stalled call")


BUDGET = [t_one_byte_stream_charged_its_bytes, t_connection_share, t_unread_answer_released]


# --- group: slots ------------------------------------------------------------------------------------

def refused(ctx, reason):
    return metrics(ctx).get(f'shardcheckd_connections_refused_total{{reason="{reason}"}}', 0)


def closed_by_server(sock, timeout=30):
    """True once the server closes sock (EOF or reset) within timeout seconds; False if it stays open."""
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def expect_refused(ctx, data, reason, what):
    """A connection that sends `data` is closed by the listener and counted under `reason`."""
    before = refused(ctx, reason)
    s = socket.create_connection(("127.0.0.1", ctx.port), timeout=5)
    try:
        s.sendall(data)
        if not closed_by_server(s):
            fail(f"{what} was not closed")
    finally:
        s.close()
    if refused(ctx, reason) <= before:
        fail(f"metrics: {what} was not counted ({reason})")


def t_trickled_preface_closed(ctx):
    """Part of the HTTP/2 preface, then nothing: closed at handshake_timeout_ms, never given to gRPC."""
    expect_refused(ctx, PREFACE[:10], "handshake_timeout", "a connection that sent 10 bytes of the preface")


def t_not_http2_closed(ctx):
    expect_refused(ctx, b"GET /metrics HTTP/1.1\r\nHost: shardcheckd\r\nAccept: */*\r\n\r\n", "not_http2",
                   "an HTTP/1.1 request")


def http2_connect(src="127.0.0.1", port=0):
    """A connection (from source address src) that sent the preface and an empty SETTINGS frame."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    s.sendall(PREFACE + frame(4, 0, 0))
    return s


def served(sock):
    """The server answered the preface with its SETTINGS frame (type 4)."""
    sock.settimeout(10)
    try:
        head = sock.recv(9)
    except (socket.timeout, ConnectionResetError):
        return False
    return len(head) == 9 and head[3] == 4


def t_per_peer_cap(ctx):
    """max_per_peer connections from 127.0.0.1 held: the next from it is refused at once, one from
    127.0.0.2 is served; once they close, 127.0.0.1 is served again."""
    before = refused(ctx, "max_connections_per_peer")
    ctx.c.channel.close()  # this client's own connection would count too
    held = []
    try:
        for _ in range(ctx.max_per_peer):
            held.append(http2_connect(port=ctx.port))
        for h in held:
            if not served(h):
                fail("a connection under the per-peer cap was not served")
        extra = http2_connect(port=ctx.port)
        try:
            if not closed_by_server(extra):
                fail("a connection over the per-peer cap was not closed")
        finally:
            extra.close()
        other = http2_connect("127.0.0.2", ctx.port)
        try:
            if not served(other):
                fail("a connection from another address was not served while 127.0.0.1 was at its cap")
        finally:
            other.close()
    finally:
        for h in held:
            h.close()
    if refused(ctx, "max_connections_per_peer") <= before:
        fail("metrics: the per-peer refusal was not counted")

    # The daemon sees the closes in its own time (late under valgrind): wait until it holds no connection,
    # so 127.0.0.1 is served again and the next tests' connections are not counted against old ones.
    def none_open():
        return metrics(ctx)["shardcheckd_connections"] == 0
    poll(none_open, "the daemon to close the held connections", tries=200, delay=0.1)
    s = http2_connect(port=ctx.port)
    try:
        if not served(s):
            fail("127.0.0.1 was not served again once its connections closed")
    finally:
        s.close()
    poll(none_open, "the daemon to close the last connection", tries=200, delay=0.1)
    ctx.c = Client(ctx.p, f"127.0.0.1:{ctx.port}")


def t_watch_capped_and_ends(ctx):
    """watch_per_connection Watches on one connection, the next refused; each ends (OK) after watch_max_ms."""
    c = own_connection(ctx)
    watch = c.channel.unary_stream("/grpc.health.v1.Health/Watch", request_serializer=c.HealthCheckRequest.SerializeToString,
                                   response_deserializer=c.HealthCheckResponse.FromString)
    try:
        streams = [watch(c.HealthCheckRequest(), timeout=60) for _ in range(ctx.watch_per_connection)]
        for st in streams:
            if next(st).status != 1:
                fail("a Watch did not report SERVING")
        extra = watch(c.HealthCheckRequest(), timeout=60)
        try:
            next(extra)
            fail("a Watch over watch_per_connection was not refused")
        except grpc.RpcError as e:
            expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, "watch_per_connection")
        for st in streams:
            for _ in st:  # ends with OK once watch_max_ms is over (an error status raises)
                pass
            if st.code() != grpc.StatusCode.OK:
                fail(f"a Watch ended with {st.code()}")
    finally:
        c.close()
    if metrics(ctx)["shardcheckd_watch_expired_total"] < ctx.watch_per_connection:
        fail("metrics: the ended Watches were not counted")


def t_metrics_not_blocked_by_idle(ctx):
    """As many idle connections as metrics.max_connections: a scrape still gets its page."""
    socks = [socket.create_connection(("127.0.0.1", ctx.metrics_port), timeout=5) for _ in range(ctx.metrics_cap)]
    try:
        m = metrics(ctx)
        if "shardcheckd_serving" not in m:
            fail("the scrape got no page")
    finally:
        for s in socks:
            s.close()


SLOTS = [t_trickled_preface_closed, t_not_http2_closed, t_per_peer_cap, t_watch_capped_and_ends,
         t_metrics_not_blocked_by_idle]


# --- group: fair -------------------------------------------------------------------------------------

def t_small_check_not_behind_big_ones(ctx):
    """4 large checks, then a small one (every check waits --debug-delay-ms first): with 2 workers the
    large ones run one at a time, so the small one is answered while at least 3 of them are
    unanswered (in arrival order it would run after all 4 started, and 2 had ended)."""
    data = big_module(ctx, 1 << 20)
    bigs = [ctx.c.check.future(check_req(ctx, f"big{i}.mlir", data=data + b"// %d\n" % i), timeout=300) for i in range(4)]
    poll(lambda: metrics(ctx).get("shardcheckd_inflight", 0) >= 4, "the large checks to be accepted")
    r = ctx.c.check(check_req(ctx, corpus_files()[2]), timeout=300)
    unanswered = sum(not f.done() for f in bigs)
    for f in bigs:
        f.result()
    if not r.report:
        fail("the small check got no report")
    if unanswered < 3:
        fail(f"the small check was answered after {4 - unanswered} of 4 large ones")


FAIR = [t_small_check_not_behind_big_ones]


# --- group: noise ------------------------------------------------------------------------------------

def requests_total(ctx, method, code):
    return metrics(ctx).get(f'shardcheckd_requests_total{{method="{method}",code="{code}"}}', 0)


def t_expired_calls_counted_deadline_exceeded(ctx):
    """Checks with a deadline that passes before the request arrives: DEADLINE_EXCEEDED, never
    INVALID_ARGUMENT."""
    n = 300
    req = check_req(ctx, corpus_files()[2])
    futs = [ctx.c.check.future(req, timeout=0.0005) for _ in range(n)]
    for f in futs:
        try:
            f.result()
        except grpc.RpcError:
            pass
    poll(lambda: metrics(ctx).get("shardcheckd_open_calls", 1) == 0, "the calls to end")
    if requests_total(ctx, "Check", "INVALID_ARGUMENT"):
        fail(f"{int(requests_total(ctx, 'Check', 'INVALID_ARGUMENT'))} expired Checks counted as INVALID_ARGUMENT")


def t_reset_streams_counted_cancelled(ctx):
    """CheckStreams the client resets, with or without a chunk sent: CANCELLED, never INVALID_ARGUMENT."""
    import threading
    n = 200
    gate = threading.Event()

    def chunks(first):
        if first:
            yield header_chunk(ctx, "reset.mlir", b"/")
        gate.wait(30)
    before = requests_total(ctx, "CheckStream", "CANCELLED")
    futs = [ctx.c.check_stream.future(chunks(i % 2 == 0), timeout=60) for i in range(n)]
    # reset only once the daemon holds the streams: a stream reset before it reaches the daemon is never
    # seen there, and how many do depends on the machine's load, not on the daemon
    poll(lambda: metrics(ctx).get("shardcheckd_open_calls", 0) >= n // 2, "the streams to reach the daemon",
         tries=2400)
    for f in futs:
        f.cancel()
    gate.set()
    poll(lambda: requests_total(ctx, "CheckStream", "CANCELLED") - before >= n // 2 and
         metrics(ctx).get("shardcheckd_open_calls", 1) == 0, "the reset streams to be counted", tries=2400)
    if requests_total(ctx, "CheckStream", "INVALID_ARGUMENT"):
        fail(f"{int(requests_total(ctx, 'CheckStream', 'INVALID_ARGUMENT'))} reset streams counted as INVALID_ARGUMENT")


def t_empty_stream_still_invalid(ctx):
    """A CheckStream half-closed without a chunk is still INVALID_ARGUMENT (after the short wait)."""
    e = None
    try:
        ctx.c.check_stream(iter([]), timeout=30)
    except grpc.RpcError as err:
        e = err
    if e is None:
        fail("an empty CheckStream was answered OK")
    expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, "no chunks")


def t_warnings_rate_limited(ctx):
    """A flood of calls that all reach the daemon and all fail (an unknown method: UNIMPLEMENTED), after
    the floods above: at most WARNINGS_PER_INTERVAL (100) request warnings per interval, and a summary
    line counting the rest. The flood is its own because expired calls may never reach a slow daemon."""
    nope = ctx.c.raw("/shardcheck.v1.ShardCheck/NoSuchMethod")
    for _ in range(250):
        try:
            nope(b"", timeout=60)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNIMPLEMENTED:
                fail(f"an unknown method answered {e.code()}")
    lines = []

    def summary():
        lines[:] = log_lines(ctx)
        return any(r.get("msg") == "request warnings suppressed" for r in lines)
    poll(summary, "a summary line of suppressed warnings", tries=900, delay=0.1)
    s = next(r for r in lines if r.get("msg") == "request warnings suppressed")
    if s.get("suppressed", 0) < 1 or not s.get("by_status"):
        fail(f"summary line without counts: {s}")
    warns = [r for r in lines if r.get("msg") == "request" and r.get("level") == "warn"]
    suppressed = sum(r.get("suppressed", 0) for r in lines if r.get("msg") == "request warnings suppressed")
    if len(warns) >= 750:  # the 750 failing calls above, some of which never reached the server
        fail(f"{len(warns)} request warnings logged, {suppressed} suppressed")


NOISE = [t_expired_calls_counted_deadline_exceeded, t_reset_streams_counted_cancelled, t_empty_stream_still_invalid,
         t_warnings_rate_limited]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--group", choices=["retry", "budget", "slots", "noise", "fair"], required=True)
    daemon_args(ap)
    ap.add_argument("--cli", default="build/bin/shardcheck")
    ap.add_argument("--max-per-peer", type=int, default=8)
    ap.add_argument("--watch-per-connection", type=int, default=2)
    ap.add_argument("--metrics-cap", type=int, default=4)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    ctx = daemon_ctx(a)
    ctx.cli = a.cli
    ctx.max_per_peer, ctx.watch_per_connection, ctx.metrics_cap = a.max_per_peer, a.watch_per_connection, a.metrics_cap
    ctx.tmp = tempfile.mkdtemp(prefix="sc-itest-")
    run_group(ctx, a.group, {"retry": RETRY, "budget": BUDGET, "slots": SLOTS, "noise": NOISE, "fair": FAIR}[a.group], a.only)


if __name__ == "__main__":
    main()
