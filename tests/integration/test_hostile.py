#!/usr/bin/python3
"""Integration tests for shardcheckd against hostile or careless clients (issue 13), with the same
independent client as test_daemon.py (Debian's python3-grpcio, descriptor-built messages).

Run by tests/integration/run.sh, which starts the daemons. Groups:
  limits  small stream timeouts, max_inflight and memory budget: idle streams neither hold analysis
          slots nor stay open; module size and memory budget refuse at once; memory goes back
  conn    the daemon under a low open-file limit: more idle connections than descriptors, then a
          new client is still answered (or cleanly refused) and the listener recovers; idle
          connections (gRPC and metrics) are closed
  auth    bearer tokens (from a file, reloaded on SIGHUP), health open to probes
Every wait is a bounded poll; nothing asserts on elapsed time."""
import argparse
import os
import signal
import socket
import sys
import tempfile
import threading

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scproto import Client, Proto  # noqa: E402
from test_daemon import (Ctx, big_module, check_eq, check_req, corpus_files, expect_status, fail, log_lines,  # noqa: E402
                         metrics, poll, requests_logged, rpc_error, run_group, stream)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    fail("no VmRSS")


class HeldStream:
    """A CheckStream whose request iterator sends `chunks` and then blocks until release()."""

    def __init__(self, ctx, chunks, metadata=None):
        self.release_ev = threading.Event()
        self.sent = threading.Event()

        def gen():
            for ch in chunks:
                yield ch
            self.sent.set()
            self.release_ev.wait(60)
        self.fut = ctx.c.check_stream.future(gen(), timeout=120, metadata=metadata)

    def release(self):
        self.release_ev.set()

    def error(self, timeout):
        """The call's error, or fail if it does not end within `timeout` seconds."""
        try:
            e = self.fut.exception(timeout=timeout)
        except grpc.FutureTimeoutError:
            fail(f"the stream did not end within {timeout}s")
        return e


def header_chunk(ctx, name="held.mlir", data=b""):
    ch = ctx.c.CheckChunk(data=data)
    ch.header.CopyFrom(ctx.c.CheckRequest(file_name=name))
    return ch


# --- group: limits -----------------------------------------------------------------------------------

def t_idle_streams_hold_no_slots(ctx):
    """More header-only streams than max_inflight: Checks still run; the streams time out."""
    n = ctx.max_inflight + 2
    held = [HeldStream(ctx, [header_chunk(ctx)]) for _ in range(n)]
    for h in held:
        if not h.sent.wait(10):
            fail("a stream's header was not sent")
    poll(lambda: metrics(ctx)["shardcheckd_open_calls"] >= n, "the idle streams to be open")
    r = ctx.c.check(check_req(ctx, corpus_files()[0]), timeout=30)
    if r.summary is None:
        fail("no summary")
    for h in held:
        e = h.error(30)
        if e is None:
            fail("an idle stream ended OK")
        expect_status(e, grpc.StatusCode.DEADLINE_EXCEEDED, "stream_message_timeout_ms")
        h.release()
    poll(lambda: metrics(ctx)["shardcheckd_stream_timeouts_total"] >= n, "the timeouts to be counted")

    # The sweep counts a timeout when it cancels the call; the request line is written when the call's
    # pending receive completes, a loop turn or more later (many under valgrind on a loaded machine).
    def timed_out_logged():
        return [r for r in requests_logged(ctx, "CheckStream") if "stream_message_timeout_ms" in r.get("detail", "")]
    poll(lambda: len(timed_out_logged()) >= n, f"all {n} timed-out streams to be logged", tries=600)


def t_stream_max(ctx):
    """A stream that trickles (each message within the message timeout) is cut at stream_max_ms."""
    stop = threading.Event()

    def trickle():
        yield header_chunk(ctx, "trickle.mlir", b"// a\n")
        while not stop.wait(ctx.stream_msg_timeout_ms / 4000):
            yield ctx.c.CheckChunk(data=b"// more\n")
    fut = ctx.c.check_stream.future(trickle(), timeout=120)
    try:
        e = fut.exception(timeout=60)
    finally:
        stop.set()
    if e is None:
        fail("the trickling stream ended OK")
    expect_status(e, grpc.StatusCode.DEADLINE_EXCEEDED, "stream_max_ms")


def t_module_limit_per_chunk(ctx):
    """Over max_module_bytes: refused while the client is still sending (not after the last chunk)."""
    chunk = 512 << 10
    n = ctx.max_module_bytes // chunk + 1
    chunks = [header_chunk(ctx, "over.mlir", b"/" * chunk)] + [ctx.c.CheckChunk(data=b"/" * chunk) for _ in range(n)]
    h = HeldStream(ctx, chunks)
    e = h.error(30)  # the iterator is still blocked: the client never half-closed
    h.release()
    expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, "max_module_bytes")


def t_memory_budget(ctx):
    """Streams buffering most of memory_budget_bytes: the next large call is refused at once."""
    chunk = 512 << 10
    per = (ctx.max_module_bytes * 7 // 8) // chunk  # buffers to max_module_bytes each
    held = []
    for i in range(2):
        chunks = [header_chunk(ctx, f"buf{i}.mlir", b"/" * chunk)] + [ctx.c.CheckChunk(data=b"/" * chunk)
                                                                       for _ in range(per - 1)]
        held.append(HeldStream(ctx, chunks))
    for h in held:
        if not h.sent.wait(30):
            fail("the buffering streams did not send")
    poll(lambda: metrics(ctx)["shardcheckd_memory_used_bytes"] >= 2 * ctx.max_module_bytes * 7 // 8,
         "the buffered bytes to be charged")
    third = HeldStream(ctx, [header_chunk(ctx, "third.mlir", b"/" * chunk)] +
                       [ctx.c.CheckChunk(data=b"/" * chunk) for _ in range(per - 1)])
    e = third.error(30)
    third.release()
    expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, "memory budget")
    data = big_module(ctx, ctx.max_message_bytes - (64 << 10))
    e = rpc_error(ctx.c.check, check_req(ctx, "unary.mlir", data=data), timeout=30)
    expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, "memory budget")
    for h in held:
        h.fut.cancel()
        h.release()
    poll(lambda: metrics(ctx)["shardcheckd_memory_used_bytes"] == 0, "the budget to be released")
    ctx.c.check(check_req(ctx, corpus_files()[2]), timeout=30)  # and calls run again
    if metrics(ctx)["shardcheckd_rejected_memory_total"] < 2:
        fail("metrics: the memory rejections were not counted")


def t_rss_after_burst(ctx):
    """A burst of large streamed modules: RSS comes back near where it was."""
    base = rss_kib(ctx.pid)
    data = big_module(ctx, ctx.max_module_bytes * 3 // 4)
    peak = base
    errors = []

    def one(name):
        try:
            stream(ctx, ctx.c.CheckRequest(file_name=name), data, chunk=1 << 20)
        except grpc.RpcError as e:
            errors.append(f"{name}: {e.code()} {e.details()}")
    for rnd in range(3):  # own names: no cache hits, every stream is analysed
        threads = [threading.Thread(target=one, args=(f"burst{rnd}-{i}.mlir",)) for i in range(ctx.burst)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        peak = max(peak, rss_kib(ctx.pid))
    check_eq(errors, [], "streams of the burst")
    bound = base + ctx.rss_slack_mib * 1024
    try:
        poll(lambda: rss_kib(ctx.pid) <= bound, "RSS to come back", tries=100, delay=0.1)
    except AssertionError:
        fail(f"RSS {rss_kib(ctx.pid)} KiB after the burst (before {base} KiB, peak {peak} KiB, bound {bound} KiB)")
    print(f"    RSS before {base // 1024} MiB, peak {peak // 1024} MiB, after {rss_kib(ctx.pid) // 1024} MiB")


def t_zero_deadline_cached(ctx):
    """A zero deadline is DEADLINE_EXCEEDED even when the answer is in the cache (gRPC core rounds
    deadlines to milliseconds, so the server sees 1-2 ms left and could answer OK in time)."""
    path = corpus_files()[1]
    ctx.c.check(check_req(ctx, path), timeout=30)  # now cached
    codes = {}
    for _ in range(40):
        try:
            ctx.c.check(check_req(ctx, path), timeout=0)
            k = "OK"
        except grpc.RpcError as e:
            k = e.code().name
        codes[k] = codes.get(k, 0) + 1
    check_eq(codes, {"DEADLINE_EXCEEDED": 40}, "40 cached checks with a zero deadline")


LIMITS = [t_zero_deadline_cached, t_idle_streams_hold_no_slots, t_stream_max, t_module_limit_per_chunk, t_memory_budget, t_rss_after_burst]


# --- group: conn -------------------------------------------------------------------------------------

def health_ok(ctx, timeout=5):
    """Health over a fresh connection: True if SERVING, False if refused (UNAVAILABLE)."""
    c = Client(ctx.p, f"127.0.0.1:{ctx.port}")
    try:
        return c.health(c.HealthCheckRequest(), timeout=timeout).status == 1
    except grpc.RpcError as e:
        if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise
        return e.code()
    finally:
        c.close()


def flood_then_recover(ctx, n, what):
    """Holds n idle connections: a new client meanwhile is answered or refused (UNAVAILABLE), not
    left hanging; once they close, a new client is served."""
    socks = []
    try:
        for _ in range(n):
            socks.append(socket.create_connection(("127.0.0.1", ctx.port), timeout=5))
        r = health_ok(ctx, timeout=5)
        if r is not True and r != grpc.StatusCode.UNAVAILABLE:
            fail(f"a new client {what}: {r} (want SERVING or UNAVAILABLE)")
    finally:
        for s in socks:
            s.close()
    poll(lambda: health_ok(ctx) is True, f"a new client to be served after {what}", tries=100, delay=0.1)


def t_more_connections_than_descriptors(ctx):
    flood_then_recover(ctx, ctx.idle_conns, f"with {ctx.idle_conns} idle connections open")
    m = metrics(ctx)
    refused = sum(v for k, v in m.items() if k.startswith("shardcheckd_connections_refused_total"))
    if refused < 1:
        fail("metrics: no refused connection counted")
    check_eq(m["shardcheckd_listener_ok"], 1, "listener_ok")
    print(f"    {ctx.idle_conns} idle connections under a 256-descriptor limit: {int(refused)} refused, then served")


def t_out_of_descriptors(ctx):
    """The open-file limit drops under the connection cap (prlimit on the running daemon): the
    listener refuses what it cannot take (a reserved descriptor accepts and closes) and recovers."""
    import resource
    n_open = len(os.listdir(f"/proc/{ctx.pid}/fd"))
    resource.prlimit(ctx.pid, resource.RLIMIT_NOFILE, (n_open + 24, n_open + 24))
    flood_then_recover(ctx, 100, "out of descriptors")
    if metrics(ctx)['shardcheckd_connections_refused_total{reason="no_file_descriptors"}'] < 1:
        fail("metrics: no connection refused for lack of descriptors")


def t_idle_connection_closed(ctx):
    """A connection that never speaks is closed after handshake_timeout_ms."""
    s = socket.create_connection(("127.0.0.1", ctx.port), timeout=30)
    try:
        s.settimeout(30)
        if s.recv(1) != b"":
            fail("the server sent bytes to a silent client")
    except socket.timeout:
        fail("an idle connection was not closed")
    finally:
        s.close()


def t_metrics_idle_and_cap(ctx):
    socks = [socket.create_connection(("127.0.0.1", ctx.metrics_port), timeout=5) for _ in range(ctx.metrics_cap + 4)]
    try:
        closed = 0
        for s in socks:
            s.settimeout(30)  # over the cap: closed at once; the others after metrics.idle_ms
            try:
                if s.recv(1) == b"":
                    closed += 1
            except (socket.timeout, ConnectionResetError):
                pass
        check_eq(closed, len(socks), "idle metrics connections closed")
    finally:
        for s in socks:
            s.close()
    metrics(ctx)  # and it still answers


def t_tls_listener_failure_reported(ctx):
    """With TLS gRPC core owns the listener, which stops for good after running out of descriptors:
    health (over a connection made before) must then say NOT_SERVING, and the metrics show it."""
    creds = grpc.ssl_channel_credentials(root_certificates=open(ctx.tls_ca, "rb").read())
    ch = grpc.secure_channel(f"127.0.0.1:{ctx.port}", creds)
    health = ch.unary_unary("/grpc.health.v1.Health/Check", request_serializer=ctx.c.HealthCheckRequest.SerializeToString,
                            response_deserializer=ctx.c.HealthCheckResponse.FromString)
    check_eq(health(ctx.c.HealthCheckRequest(), timeout=10).status, 1, "health before")
    socks = []
    try:
        for _ in range(ctx.idle_conns):
            socks.append(socket.create_connection(("127.0.0.1", ctx.port), timeout=5))
        poll(lambda: health(ctx.c.HealthCheckRequest(), timeout=10).status == 2, "health to say NOT_SERVING")
    finally:
        for s in socks:
            s.close()
        ch.close()
    # The metrics endpoint (libuv's listener) survived running out of descriptors and tells why.
    check_eq(poll(lambda: metrics(ctx), "metrics")["shardcheckd_listener_ok"], 0, "listener_ok")


CONN = [t_more_connections_than_descriptors, t_idle_connection_closed, t_metrics_idle_and_cap, t_out_of_descriptors,
        t_tls_listener_failure_reported]


# --- group: auth -------------------------------------------------------------------------------------

def md(token):
    return [("authorization", f"Bearer {token}")]


def t_tokens(ctx):
    c = ctx.c
    path = corpus_files()[0]
    for meta in [None, md("wrong"), [("authorization", "Basic abc")], md(ctx.tokens[0] + "x")]:
        e = rpc_error(c.check, check_req(ctx, path), timeout=10, metadata=meta)
        expect_status(e, grpc.StatusCode.UNAUTHENTICATED, "bearer token")
    for t in ctx.tokens:
        c.check(check_req(ctx, path), timeout=30, metadata=md(t))
    # Health stays open for probes; everything else needs the token.
    check_eq(c.health(c.HealthCheckRequest(), timeout=10).status, 1, "health without a token")
    it = c.health_watch(c.HealthCheckRequest(), timeout=10)
    check_eq(next(it).status, 1, "watch without a token")
    it.cancel()
    Req, call = c.reflection("v1")
    e = rpc_error(lambda: list(call(iter([Req(list_services="")]), timeout=10)))
    expect_status(e, grpc.StatusCode.UNAUTHENTICATED)
    list(call(iter([Req(list_services="")]), timeout=10, metadata=md(ctx.tokens[0])))
    e = rpc_error(c.raw("/shardcheck.v1.ShardCheck/NoSuchMethod"), b"", timeout=10)
    expect_status(e, grpc.StatusCode.UNAUTHENTICATED)
    hdr = header_chunk(ctx, "s.mlir", open(path, "rb").read())
    e = rpc_error(c.check_stream, iter([hdr]), timeout=10)
    expect_status(e, grpc.StatusCode.UNAUTHENTICATED)
    c.check_stream(iter([hdr]), timeout=30, metadata=md(ctx.tokens[1]))
    if metrics(ctx)["shardcheckd_unauthenticated_total"] < 7:
        fail("metrics: refusals not counted")
    if any(t in open(ctx.log).read() for t in ctx.tokens):
        fail("a token appears in the log")


def t_token_reload(ctx):
    path = corpus_files()[0]
    old, new = ctx.tokens[0], "fresh-token-after-reload"
    with open(ctx.token_file, "w") as f:
        f.write(f"# rotated\n{new}\n")
    os.kill(ctx.pid, signal.SIGHUP)

    def rotated():
        try:
            ctx.c.check(check_req(ctx, path), timeout=10, metadata=md(new))
            return True
        except grpc.RpcError:
            return False
    poll(rotated, "the new token to be accepted")
    expect_status(rpc_error(ctx.c.check, check_req(ctx, path), timeout=10, metadata=md(old)),
                  grpc.StatusCode.UNAUTHENTICATED)
    # A token file that cannot be read keeps the tokens in use.
    os.unlink(ctx.token_file)
    n = len([r for r in log_lines(ctx) if r.get("msg", "").startswith("token reload failed")])
    os.kill(ctx.pid, signal.SIGHUP)
    poll(lambda: len([r for r in log_lines(ctx) if r.get("msg", "").startswith("token reload failed")]) > n,
         "the failed reload to be logged")
    ctx.c.check(check_req(ctx, path), timeout=10, metadata=md(new))


AUTH = [t_tokens, t_token_reload]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--group", choices=["limits", "conn", "auth"], required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--metrics-port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--fds", default="build/gen/descriptors.pb")
    ap.add_argument("--max-message-bytes", type=int, default=4 << 20)
    ap.add_argument("--max-module-bytes", type=int, default=256 << 20)
    ap.add_argument("--max-inflight", type=int, default=256)
    ap.add_argument("--stream-msg-timeout-ms", type=int, default=30000)
    ap.add_argument("--burst", type=int, default=8)
    ap.add_argument("--rss-slack-mib", type=int, default=64)
    ap.add_argument("--idle-conns", type=int, default=400)
    ap.add_argument("--metrics-cap", type=int, default=16)
    ap.add_argument("--token-file", default="")
    ap.add_argument("--tls-ca", default="")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    ctx = Ctx()
    ctx.p = Proto(a.fds)
    ctx.c = Client(ctx.p, f"127.0.0.1:{a.port}")
    ctx.port, ctx.metrics_port, ctx.pid, ctx.log = a.port, a.metrics_port, a.pid, a.log
    ctx.max_message_bytes, ctx.max_module_bytes, ctx.max_inflight = a.max_message_bytes, a.max_module_bytes, a.max_inflight
    ctx.stream_msg_timeout_ms, ctx.burst, ctx.rss_slack_mib = a.stream_msg_timeout_ms, a.burst, a.rss_slack_mib
    ctx.idle_conns, ctx.metrics_cap, ctx.token_file, ctx.tls_ca = a.idle_conns, a.metrics_cap, a.token_file, a.tls_ca
    ctx.tokens = [ln.strip() for ln in open(a.token_file) if ln.strip() and not ln.startswith("#")] if a.token_file else []
    ctx.tmp = tempfile.mkdtemp(prefix="sc-itest-")
    run_group(ctx, a.group, {"limits": LIMITS, "conn": CONN, "auth": AUTH}[a.group], a.only)

if __name__ == "__main__":
    main()
