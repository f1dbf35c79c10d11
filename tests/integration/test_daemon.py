#!/usr/bin/python3
"""Integration tests for shardcheckd with an independent client: Debian's python3-grpcio, generic calls,
message classes from the FileDescriptorSet protoc produced (see scproto.py).

Run by tests/integration/run.sh, which starts the daemons. Groups:
  main   a daemon with defaults (and small message/module limits): API, reports vs local mode,
         errors, cache, reflection, 200 concurrent calls, metrics, SIGHUP reload
  slow   a daemon whose checks wait --debug-delay-ms first: deadlines and cancellation inside the
         analysis, the in-flight bound
  drain  SIGTERM while calls are in flight: every accepted call completes, the rest are refused,
         watchers see NOT_SERVING, the daemon exits 0
  grace  a check longer than grace_ms is cancelled after SIGTERM and the daemon still exits
Every wait is a bounded poll; nothing asserts on elapsed time."""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scproto import Client, Proto  # noqa: E402

CORPUS = "../shared/corpus"
UNDECODABLE = b"\x12\xff\x01\x78"  # field 2, length 255, 1 byte present: truncated


class Ctx:
    pass


def fail(msg):
    raise AssertionError(msg)


def check_eq(a, b, what):
    if a != b:
        fail(f"{what}: {a!r} != {b!r}")


def rpc_error(fn, *args, **kw):
    """Calls fn expecting a gRPC error; returns it."""
    try:
        fn(*args, **kw)
    except grpc.RpcError as e:
        return e
    fail(f"expected a gRPC error from {getattr(fn, '_method', fn)}")


def expect_status(e, code, *needles):
    if e.code() != code:
        fail(f"status {e.code()} ({e.details()}), expected {code}")
    for n in needles:
        if n not in (e.details() or ""):
            fail(f"status details {e.details()!r} lack {n!r}")


def wait_all(futs, timeout):
    """Waits for gRPC futures (not concurrent.futures); returns how many did not finish in time."""
    deadline = time.monotonic() + timeout
    late = 0
    for f in futs:
        try:
            f.exception(timeout=max(0.0, deadline - time.monotonic()))
        except grpc.FutureTimeoutError:
            late += 1
        except grpc.FutureCancelledError:
            pass
    return late


def poll(pred, what, tries=200, delay=0.05):
    for _ in range(tries):
        v = pred()
        if v:
            return v
        time.sleep(delay)
    fail(f"gave up waiting for {what}")


def corpus_files(limit=None):
    files = sorted(glob.glob(f"{CORPUS}/**/*.mlir", recursive=True) + glob.glob(f"{CORPUS}/**/*.hlo", recursive=True))
    if not files:
        fail(f"no corpus modules under {CORPUS}")
    if limit and len(files) > limit:
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    return files


def local(ctx, args):
    """Local mode: the CLI in-process. Returns (exit code, stdout)."""
    p = subprocess.run([ctx.cli] + args, capture_output=True, text=True)
    return p.returncode, p.stdout


def log_lines(ctx):
    out = []
    with open(ctx.log) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def requests_logged(ctx, method):
    return [r for r in log_lines(ctx) if r.get("msg") == "request" and r.get("method") == method]


def metrics(ctx):
    with urllib.request.urlopen(f"http://127.0.0.1:{ctx.metrics_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    vals = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            vals[k] = float(v)
    return vals


def check_req(ctx, path=None, data=None, **kw):
    c = ctx.c
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    opts = kw.pop("options", {})
    req = c.CheckRequest(module=data, file_name=path or "", **kw)
    for k, v in opts.items():
        if k == "rules":
            req.options.rules.extend(v)
        elif k == "thresholds":
            for tk, tv in v.items():
                setattr(req.options.thresholds, tk, tv)
        else:
            setattr(req.options, k, v)
    return req


# --- group: main -----------------------------------------------------------------------------------

def t_health(ctx):
    c = ctx.c
    SERVING = ctx.p.enum("grpc.health.v1.HealthCheckResponse.ServingStatus", "SERVING")
    check_eq(c.health(c.HealthCheckRequest(), timeout=10).status, SERVING, "health('')")
    check_eq(c.health(c.HealthCheckRequest(service="shardcheck.v1.ShardCheck"), timeout=10).status, SERVING,
             "health(shardcheck.v1.ShardCheck)")
    e = rpc_error(c.health, c.HealthCheckRequest(service="no.such.Service"), timeout=10)
    expect_status(e, grpc.StatusCode.NOT_FOUND, "no.such.Service")
    # Watch: the current status first; the stream stays open until we cancel it.
    it = c.health_watch(c.HealthCheckRequest(), timeout=30)
    check_eq(next(it).status, SERVING, "watch first message")
    it.cancel()
    it = c.health_watch(c.HealthCheckRequest(service="no.such.Service"), timeout=30)
    check_eq(next(it).status, ctx.p.enum("grpc.health.v1.HealthCheckResponse.ServingStatus", "SERVICE_UNKNOWN"),
             "watch of an unknown service")
    it.cancel()


def t_capabilities(ctx):
    c = ctx.c
    caps = c.capabilities(ctx.p.msg("shardcheck.v1.GetCapabilitiesRequest")(), timeout=10)
    _, v = local(ctx, ["version"])
    if caps.version not in v or caps.rules_version not in v:
        fail(f"capabilities {caps.version}/{caps.rules_version} vs CLI {v!r}")
    check_eq(caps.report_schema, "shardcheck.report.v1", "report_schema")
    check_eq(caps.limits.max_message_bytes, ctx.max_message_bytes, "limits.max_message_bytes")
    check_eq(caps.limits.max_module_bytes, ctx.max_module_bytes, "limits.max_module_bytes")
    check_eq(len(caps.input_formats), 5, "input formats (auto, stablehlo, hlo, bytecode, exported)")
    check_eq(len(caps.report_formats), 4, "report formats (json, text, sarif, html)")


def t_rules_and_explain(ctx):
    c = ctx.c
    resp = c.list_rules(ctx.p.msg("shardcheck.v1.ListRulesRequest")(), timeout=10)
    rc, out = local(ctx, ["rules", "--format", "json"])
    check_eq(rc, 0, "shardcheck rules exit")
    want = json.loads(out)
    got = [{"code": r.code, "name": r.name, "family": r.family,
            "severity": ["note", "warning", "error"][r.severity], "summary": r.summary} for r in resp.rules]
    check_eq(got, want, "ListRules vs `shardcheck rules --format json`")
    for r in resp.rules:
        e = c.explain(c.ExplainRequest(code=r.code), timeout=10)
        rc, text = local(ctx, ["explain", r.code])
        check_eq(rc, 0, f"shardcheck explain {r.code} exit")
        check_eq(e.text, text, f"Explain({r.code}).text vs `shardcheck explain`")
        check_eq(e.code, r.code, "Explain code")
    expect_status(rpc_error(c.explain, c.ExplainRequest(code="SC9999"), timeout=10), grpc.StatusCode.NOT_FOUND, "SC9999")
    expect_status(rpc_error(c.explain, c.ExplainRequest(code=""), timeout=10), grpc.StatusCode.INVALID_ARGUMENT, "code")


def sarif_results(text):
    run = json.loads(text)["runs"][0]
    return [(r["ruleId"], r["level"], r["partialFingerprints"], r["message"]["text"].split(" (")[0])
            for r in run["results"]]


def compare_corpus(ctx, files, fmt_name, fmt_enum, extra_cli=(), **req_kw):
    mismatches = []
    for path in files:
        rc, want = local(ctx, ["check", "--format", fmt_name, "--no-color", *extra_cli, path])
        req = check_req(ctx, path, **req_kw)
        req.options.report_format = fmt_enum
        req.options.pretty = True
        try:
            resp = ctx.c.check(req, timeout=120)
        except grpc.RpcError as e:
            if rc == 2:  # local mode could not check it either
                continue
            mismatches.append(f"{path}: server {e.code()} {e.details()}, local exit {rc}")
            continue
        if fmt_name == "json":  # the CLI wraps reports in shardcheck.results.v1; each is the daemon's object
            got, want = json.loads(resp.report), json.loads(want)["reports"][0]
        elif fmt_name == "sarif":  # the CLI knows the filesystem (source root, Python files): same results
            got, want = sarif_results(resp.report), sarif_results(want)
        else:
            got = resp.report
        if got != want:
            mismatches.append(f"{path}: report differs from local mode")
        elif (resp.summary.errors > 0) != (rc == 1):
            mismatches.append(f"{path}: summary errors {resp.summary.errors} but local exit {rc}")
    if mismatches:
        fail(f"{len(mismatches)}/{len(files)} differ, e.g.\n  " + "\n  ".join(mismatches[:5]))
    return len(files)


def t_reports_match_local(ctx):
    files = corpus_files(ctx.corpus_limit)
    J = ctx.p.enum("shardcheck.v1.ReportFormat", "REPORT_FORMAT_JSON")
    T = ctx.p.enum("shardcheck.v1.ReportFormat", "REPORT_FORMAT_TEXT")
    S = ctx.p.enum("shardcheck.v1.ReportFormat", "REPORT_FORMAT_SARIF")
    H = ctx.p.enum("shardcheck.v1.ReportFormat", "REPORT_FORMAT_HTML")
    n = compare_corpus(ctx, files, "json", J)
    compare_corpus(ctx, files[::7], "text", T)
    compare_corpus(ctx, files[::11], "sarif", S)
    compare_corpus(ctx, files[::13], "html", H)  # the daemon's page is the CLI's, byte for byte
    bytecode = sorted(glob.glob(f"{CORPUS}/jax/**/*.mlirbc", recursive=True))[::9]
    if not bytecode:
        fail("no .mlirbc corpus modules")
    mesh = ctx.p.msg("shardcheck.v1.TargetMesh")()
    mesh.axes.add(name="data", size=4, type=ctx.p.enum("shardcheck.v1.AxisType", "AXIS_TYPE_AUTO"))
    compare_corpus(ctx, bytecode, "json", J, ["--mesh", "data=4"], mesh=mesh)
    print(f"    {n} corpus modules: identical JSON reports (text, SARIF and HTML on subsets); "
          f"{len(bytecode)} MLIR bytecode modules sent as bytes: identical")


def t_options_match_local(ctx):
    """Options travel: split-input-file, target mesh, platform, rule globs, severity floor."""
    J = ctx.p.enum("shardcheck.v1.ReportFormat", "REPORT_FORMAT_JSON")
    verifier = sorted(glob.glob(f"{CORPUS}/shardy/verifier/*.mlir"))[:12]
    compare_corpus(ctx, verifier, "json", J, ["--split-input-file"], options={"split_input_file": True})
    jax = sorted(glob.glob(f"{CORPUS}/jax/jax_backcompat/*.mlir"))[:12]
    mesh = ctx.p.msg("shardcheck.v1.TargetMesh")(platform=ctx.p.enum("shardcheck.v1.Platform", "PLATFORM_TPU"))
    mesh.axes.add(name="x", size=2, type=ctx.p.enum("shardcheck.v1.AxisType", "AXIS_TYPE_AUTO"))
    mesh.axes.add(name="y", size=4, type=ctx.p.enum("shardcheck.v1.AxisType", "AXIS_TYPE_EXPLICIT"))
    compare_corpus(ctx, jax, "json", J, ["--mesh", "x=2,y=4:explicit", "--platform", "tpu"], mesh=mesh,
                   options={"platform": ctx.p.enum("shardcheck.v1.Platform", "PLATFORM_TPU")})
    compare_corpus(ctx, jax[:6], "json", J, ["--min-severity", "error", "--rules", "syntax"],
                   options={"min_severity": 2, "rules": ["syntax"]})
    # Propagation off and the cost thresholds: the communication modules' reports change with both.
    comm = sorted(glob.glob("tests/modules/communication/*.mlir")) + sorted(glob.glob("tests/modules/memory/*.mlir"))
    if len(comm) < 6:
        fail(f"tests/modules/communication and memory hold {len(comm)} modules (run from the repository root)")
    compare_corpus(ctx, comm, "json", J, ["--no-propagate"], options={"no_propagate": True})
    compare_corpus(ctx, comm, "json", J, ["--max-implicit-collective-bytes", "1KiB"],
                   options={"thresholds": {"max_implicit_collective_bytes": 1024}})
    bad = "tests/modules/communication/comm-boundary-reshard.bad.mlir"
    on = json.loads(ctx.c.check(check_req(ctx, bad), timeout=60).report)
    off = json.loads(ctx.c.check(check_req(ctx, bad, options={"no_propagate": True}), timeout=60).report)
    if [d["code"] for d in on["diagnostics"]] != ["SC0903"] or off["diagnostics"] or off["cost"]["collectives"] is not None:
        fail(f"no_propagate did not travel: {[d['code'] for d in on['diagnostics']]} / {off['diagnostics']}")


def t_cache(ctx):
    path = corpus_files()[3]
    r1 = ctx.c.check(check_req(ctx, path, options={"pretty": True}), timeout=60)
    r2 = ctx.c.check(check_req(ctx, path, options={"pretty": True}), timeout=60)
    if not r2.cache_hit:
        fail("a repeated identical Check was not answered from the cache")
    check_eq(r2.report, r1.report, "cached report")
    r3 = ctx.c.check(check_req(ctx, path + ".renamed", data=open(path, "rb").read(), options={"pretty": True}),
                     timeout=60)
    if r3.cache_hit:
        fail("a different file name was answered from the cache (the name is in the report)")
    # (A compact JSON of this module may be cached already: `check --server` asks for exactly that.)
    r4 = ctx.c.check(check_req(ctx, path, options={"pretty": False}), timeout=60)
    if r4.report == r1.report or json.loads(r4.report) != json.loads(r1.report):
        fail("different rendering options were answered with the other rendering")


def t_errors(ctx):
    c = ctx.c
    for m in ["Check", "Propagate", "Explain", "ListRules", "GetCapabilities"]:
        expect_status(rpc_error(c.raw(f"/shardcheck.v1.ShardCheck/{m}"), UNDECODABLE, timeout=10),
                      grpc.StatusCode.INVALID_ARGUMENT, "cannot decode")
    expect_status(rpc_error(c.raw("/grpc.health.v1.Health/Check"), UNDECODABLE, timeout=10),
                  grpc.StatusCode.INVALID_ARGUMENT, "cannot decode")
    expect_status(rpc_error(c.raw("/shardcheck.v1.ShardCheck/NoSuchMethod"), b"", timeout=10),
                  grpc.StatusCode.UNIMPLEMENTED, "NoSuchMethod")
    expect_status(rpc_error(c.raw("/other.Service/Method"), b"", timeout=10), grpc.StatusCode.UNIMPLEMENTED)
    path = corpus_files()[0]
    # Bad meshes name the field.
    req = check_req(ctx, path)
    req.mesh.platform = 0
    expect_status(rpc_error(c.check, req, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, "mesh.axes")
    for axes, needle in [([("x", 0)], "mesh.axes[0].size"), ([("x", 2), ("x", 2)], "mesh.axes[1].name"),
                         ([("", 2)], "mesh.axes[0].name")]:
        req = check_req(ctx, path)
        for name, size in axes:
            req.mesh.axes.add(name=name, size=size)
        expect_status(rpc_error(c.check, req, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, needle)
    req = check_req(ctx, path)
    req.mesh.axes.add(name="x", size=4)
    req.mesh.device_ids.extend([0, 1, 2])
    expect_status(rpc_error(c.check, req, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, "mesh.device_ids")
    req.mesh.device_ids.append(1)
    expect_status(rpc_error(c.check, req, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, "mesh.device_ids[3]")
    req = check_req(ctx, path)
    req.format = 9
    expect_status(rpc_error(c.check, req, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, "format")
    for field, value, needle in [("replicated_fraction", 1.5, "options.thresholds.replicated_fraction"),
                                 ("padding_fraction", float("nan"), "options.thresholds.padding_fraction"),
                                 ("max_implicit_collective_bytes", -1, "options.thresholds.max_implicit_collective_bytes")]:
        req = check_req(ctx, path, options={"thresholds": {field: value}})
        expect_status(rpc_error(c.check, req, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, needle)
    # Rule selection the library rejects.
    req = check_req(ctx, path, options={"rules": ["no-such-rule-xyz"]})
    rc, _ = local(ctx, ["check", "--rules", "no-such-rule-xyz", path])
    if rc == 2:
        expect_status(rpc_error(c.check, req, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, "options")
    # Findings are never errors: a module that does not parse is an OK response with a diagnostic.
    resp = c.check(check_req(ctx, "broken.mlir", data=b"module {\n  %0 = \"stablehlo.add\"(\n"), timeout=10)
    if resp.summary.errors < 1 or "SC0001" not in resp.report:
        fail(f"a syntax error should be a diagnostic in an OK response, got {resp.summary}")


def big_module(ctx, size):
    """A valid module of about `size` bytes: a corpus module padded with comment lines."""
    base = open(sorted(glob.glob(f"{CORPUS}/jax/jax_backcompat/*.mlir"))[0], "rb").read()
    line = b"// " + b"x" * 1020 + b"\n"
    return base + line * max(0, (size - len(base)) // len(line))


def stream(ctx, header, data, chunk=256 << 10, timeout=120):
    def chunks():
        first = True
        for off in range(0, max(len(data), 1), chunk):
            ch = ctx.c.CheckChunk(data=data[off:off + chunk])
            if first:
                ch.header.CopyFrom(header)
                first = False
            yield ch
    return ctx.c.check_stream(chunks(), timeout=timeout)


def t_size_limits(ctx):
    c = ctx.c
    data = big_module(ctx, ctx.max_message_bytes + (256 << 10))
    e = rpc_error(c.check, check_req(ctx, "big.mlir", data=data), timeout=60)
    expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, str(ctx.max_message_bytes))
    # The same module through CheckStream gives local mode's report.
    with tempfile.NamedTemporaryFile(suffix=".mlir", dir=ctx.tmp, delete=False) as f:
        f.write(data)
    rc, want = local(ctx, ["check", "--format", "json", f.name])
    hdr = c.CheckRequest(file_name=f.name)
    hdr.options.pretty = True
    resp = stream(ctx, hdr, data)
    check_eq(json.loads(resp.report), json.loads(want)["reports"][0], "CheckStream report vs local mode")
    check_eq(resp.module_bytes, len(data), "module_bytes")
    # Over max_module_bytes: refused with the limit named.
    over = b"// pad\n" * ((ctx.max_module_bytes + (1 << 20)) // 7)
    e = rpc_error(stream, ctx, c.CheckRequest(file_name="over.mlir"), over)
    expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, f"max_module_bytes={ctx.max_module_bytes}")
    # Stream protocol errors.
    e = rpc_error(ctx.c.check_stream, iter([c.CheckChunk(data=b"module {}")]), timeout=10)
    expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, "header")
    bad = c.CheckRequest(module=b"module {}")
    e = rpc_error(stream, ctx, bad, b"")
    expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, "header.module")
    e = rpc_error(ctx.c.check_stream, iter([]), timeout=10)
    expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, "no chunks")


def t_concurrent_200(ctx):
    files = corpus_files(20)
    expected = {}
    for p in files:
        expected[p] = ctx.c.check(check_req(ctx, p, options={"pretty": True}), timeout=60).report
    reqs = [(files[i % len(files)], check_req(ctx, files[i % len(files)], options={"pretty": True,
            "rules": [] if i < 100 else ["*"]})) for i in range(200)]
    t0 = time.monotonic()
    futs = [ctx.c.check.future(r, timeout=300) for _, r in reqs]
    late = wait_all(futs, 600)
    elapsed = time.monotonic() - t0
    if late:
        fail(f"{late} of 200 concurrent calls never finished")
    bad = []
    for (p, _), f in zip(reqs, futs):
        try:
            if f.result().report != expected[p]:
                bad.append(f"{p}: report differs")
        except grpc.RpcError as e:
            bad.append(f"{p}: {e.code()} {e.details()}")
    if bad:
        fail(f"{len(bad)}/200 concurrent calls failed, e.g. {bad[:3]}")
    print(f"    200 concurrent Checks: all answered OK in {elapsed:.2f}s ({200 / elapsed:.0f}/s)")


def refl_roundtrip(ctx, version):
    Req, call = ctx.c.reflection(version)
    reqs = [Req(list_services=""), Req(file_containing_symbol="shardcheck.v1.ShardCheck"),
            Req(file_containing_symbol="shardcheck.v1.CheckRequest.module"),
            Req(file_by_filename="grpc/health/v1/health.proto"),
            Req(file_containing_symbol="no.such.Symbol"),
            Req(all_extension_numbers_of_type="shardcheck.v1.CheckRequest")]
    resps = list(call(iter(reqs), timeout=30))
    check_eq(len(resps), len(reqs), f"{version}: responses")
    services = sorted(s.name for s in resps[0].list_services_response.service)
    check_eq(services, sorted(["shardcheck.v1.ShardCheck", "grpc.health.v1.Health",
                               "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]),
             f"{version}: list_services")
    built = {fd.name: fd for fd in ctx.p.fds.file}
    from google.protobuf import descriptor_pb2
    for i, name in [(1, "shardcheck/v1/shardcheck.proto"), (2, "shardcheck/v1/shardcheck.proto"),
                    (3, "grpc/health/v1/health.proto")]:
        files = resps[i].file_descriptor_response.file_descriptor_proto
        if not files:
            fail(f"{version}: request {i} returned no file ({resps[i]})")
        fd = descriptor_pb2.FileDescriptorProto.FromString(files[0])
        check_eq(fd.name, name, f"{version}: file of request {i}")
        check_eq(fd, built[name], f"{version}: descriptor of {name} vs the build's descriptor set")
    check_eq(resps[4].error_response.error_code, 5, f"{version}: unknown symbol -> NOT_FOUND")
    check_eq(resps[5].all_extension_numbers_response.base_type_name, "shardcheck.v1.CheckRequest",
             f"{version}: all_extension_numbers_of_type")
    check_eq(resps[1].original_request.file_containing_symbol, "shardcheck.v1.ShardCheck", "original_request")


def t_reflection(ctx):
    refl_roundtrip(ctx, "v1")
    refl_roundtrip(ctx, "v1alpha")
    # A dynamic call built only from what reflection returned, as grpcurl would.
    Req, call = ctx.c.reflection("v1")
    r = list(call(iter([Req(file_containing_symbol="shardcheck.v1.ShardCheck")]), timeout=30))[0]
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    for b in r.file_descriptor_response.file_descriptor_proto:
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(b))
    svc = pool.FindServiceByName("shardcheck.v1.ShardCheck")
    m = svc.methods_by_name["Explain"]
    f = message_factory.MessageFactory(pool)
    In, Out = f.GetPrototype(m.input_type), f.GetPrototype(m.output_type)
    code = ctx.c.list_rules(ctx.p.msg("shardcheck.v1.ListRulesRequest")(), timeout=10).rules[0].code
    out = ctx.c.channel.unary_unary(f"/{svc.full_name}/{m.name}", request_serializer=In.SerializeToString,
                                    response_deserializer=Out.FromString)(In(code=code), timeout=10)
    check_eq(out.code, code, "Explain via reflected descriptors")


def t_metrics_and_log(ctx):
    v = metrics(ctx)
    if v.get('shardcheckd_requests_total{method="Check",code="OK"}', 0) < 1:
        fail("metrics: no OK Check counted")
    if v.get("shardcheckd_cache_hits_total", 0) < 1:
        fail("metrics: no cache hit counted")
    if v.get('shardcheckd_requests_total{method="unknown",code="UNIMPLEMENTED"}', 0) < 1:
        fail("metrics: UNIMPLEMENTED not counted")
    reqs = requests_logged(ctx, "Check")
    if not reqs:
        fail("no request log lines")
    for k in ["method", "bytes", "status", "ms", "cache_hit"]:
        if k not in reqs[-1]:
            fail(f"request log line lacks {k}: {reqs[-1]}")
    if not any(r["cache_hit"] for r in reqs):
        fail("no request log line with cache_hit=true")


def t_log_formats(ctx):
    """--log-format text writes readable lines; auto is text on a terminal and JSON through a pipe."""
    import pty
    daemon = os.path.join(os.path.dirname(ctx.cli), "shardcheckd")
    for fmt, tty in (("text", False), ("auto", True), ("auto", False), ("json", True)):
        portfile = os.path.join(ctx.tmp, f"port-{fmt}-{tty}")
        master = slave = None
        if tty:
            master, slave = pty.openpty()
        p = subprocess.Popen([daemon, "--listen", "127.0.0.1:0", "--port-file", portfile, "--log-format", fmt],
                             stdout=subprocess.DEVNULL, stderr=slave if tty else subprocess.PIPE)
        poll(lambda: os.path.exists(portfile) and os.path.getsize(portfile) > 0, f"the {fmt} daemon to listen")
        p.send_signal(signal.SIGTERM)
        if tty:
            p.wait(timeout=60)
            os.close(slave)
            data = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
            os.close(master)
        else:
            data = p.communicate(timeout=60)[1]
        first = data.decode(errors="replace").splitlines()[0]
        if fmt == "text" or (fmt == "auto" and tty):
            if not re.match(r"^\d{4}-\d\d-\d\dT[0-9:.]+Z (info|warn) +\S", first):
                fail(f"--log-format {fmt} (tty={tty}): not a text line: {first!r}")
        else:
            try:
                json.loads(first)
            except ValueError:
                fail(f"--log-format {fmt} (tty={tty}): not JSON: {first!r}")


def t_reload(ctx):
    """SIGHUP re-reads the config file; flags still win; a bad file keeps the running config."""
    caps = lambda: ctx.c.capabilities(ctx.p.msg("shardcheck.v1.GetCapabilitiesRequest")(), timeout=10)
    before = caps().limits.max_inflight
    with open(ctx.config) as f:
        cfg = json.load(f)
    cfg["max_inflight"] = before + 7
    with open(ctx.config, "w") as f:
        json.dump(cfg, f)
    os.kill(ctx.pid, signal.SIGHUP)
    poll(lambda: caps().limits.max_inflight == before + 7, "max_inflight to change after SIGHUP")
    with open(ctx.config, "w") as f:
        f.write("{ not json")
    n = len([r for r in log_lines(ctx) if r.get("msg", "").startswith("config reload failed")])
    os.kill(ctx.pid, signal.SIGHUP)
    poll(lambda: len([r for r in log_lines(ctx) if r.get("msg", "").startswith("config reload failed")]) > n,
         "the reload failure to be logged")
    check_eq(caps().limits.max_inflight, before + 7, "max_inflight after a failed reload")
    cfg["max_inflight"] = before
    with open(ctx.config, "w") as f:
        json.dump(cfg, f)
    os.kill(ctx.pid, signal.SIGHUP)
    poll(lambda: caps().limits.max_inflight == before, "max_inflight to return")


# Target mesh specs through local mode (`--mesh SPEC`) and the daemon (the same mesh as a request):
# one validator (sc_mesh_validate), so the same verdict and the same words for every spec.
MESH_SPECS = [
    "x=2", "data=2,model=4", "x=4:explicit,y=2:manual", "x=2,y=2;devices=3,2,1,0", "x=1",
    "data=2,model=4;devices=0,0,0,0,0,0,0,0",  # duplicate device id (accepted locally before)
    "x=2,x=2", "x=0", "x=4;devices=0,1,2", "x=4;devices=0,1,2,9", "x=4;devices=0,1,2,1",
    "a=2,b=2,a=3", "x=16777217", "x=4096,y=4097", "x=2;platform=gpu", "x=2,y=0:explicit",
]


PROPAGATION = f"{CORPUS}/shardy/propagation"
# Shardy's own tests with the flags of their RUN lines (one under another strategy): the CLI's flags and
# the same options as PropagateRequest fields. JSON needs a strategy (the last two run none).
PROPAGATE_CASES = [("user_priority_propagation.mlir", ["--strategy", "user-priority"], {"strategy": "user-priority"}),
                   ("propagation_pipeline.mlir", ["--strategy", "pipeline"], {"strategy": "pipeline"}),
                   ("basic_propagation_keep_sharding_rules.mlir", ["--strategy", "basic", "--keep-sharding-rules"],
                    {"strategy": "basic", "keep_sharding_rules": True}),
                   ("basic_propagation_manual_computation.mlir", ["--strategy", "aggressive"],
                    {"strategy": "aggressive"}),
                   ("insert_explicit_reshards__reshape.mlir", ["--strategy", "none", "--insert-reshards"],
                    {"strategy": "none", "insert_reshards": True}, ("text",)),
                   ("insert_explicit_reshards__dot_dot_general.mlir",
                    ["--strategy", "none", "--insert-reshards=partial"],
                    {"strategy": "none", "insert_reshards": True, "insert_reshards_partial": True}, ("text",)),
                   ("propagation_pipeline.mlir", ["--strategy", "none", "--propagate-to-func-results"],
                    {"strategy": "none", "propagate_to_func_results": True}, ("text",)),
                   # the one that prints a message (a warning about an op without a rule)
                   ("op_sharding_rule_registry_failures.mlir", ["--annotate-rules"], {"annotate_rules": True},
                    ("text",))]


def propagate_local(ctx, args):
    """`shardcheck propagate ARGS`: (exit code, stdout, stderr)."""
    p = subprocess.run([ctx.cli, "propagate"] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def messages_text(name, resp, p):
    sev = {p.enum("shardcheck.v1.Severity", f"SEVERITY_{s.upper()}"): s for s in ("note", "warning", "error")}
    return "".join(f"{name}:{m.line}:{m.column}: {sev[m.severity]}: {m.message}\n" for m in resp.messages)


def t_propagate_matches_local(ctx):
    """Propagate answers what `shardcheck propagate` prints (text and JSON, split input, each strategy),
    the daemon's messages are its stderr, and `propagate --server` prints the same as local mode."""
    messages = 0
    for base, flags, fields, *formats in PROPAGATE_CASES:
        path = f"{PROPAGATION}/{base}"
        with open(path, "rb") as f:
            data = f.read()
        for fmt in formats[0] if formats else ("text", "json"):
            args = ["--split-input-file"] + flags + ["--format", fmt, path]
            rc, out, err = propagate_local(ctx, args)
            check_eq(rc, 0, f"local propagate {' '.join(args)}")
            if len(out) < 200:
                fail(f"local propagate of {base} printed only {out!r}")
            req = ctx.c.PropagateRequest(module=data, file_name=path, split_input_file=True, json=fmt == "json",
                                         **fields)
            resp = ctx.c.propagate(req, timeout=60)
            check_eq(resp.text, out, f"Propagate text of {' '.join(args)}")
            check_eq(messages_text(path, resp, ctx.p), err, f"Propagate messages of {' '.join(args)}")
            messages += len(resp.messages)
            check_eq(propagate_local(ctx, ["--server", ctx.c.target] + args), (0, out, err),
                     f"propagate --server {' '.join(args)}")
    if not messages:
        fail("no case printed a message: the messages went untested")
    if not any(requests_logged(ctx, "Propagate")):
        fail("no Propagate request was logged")


def t_propagate_errors(ctx):
    """A module that does not parse and a bad option are INVALID_ARGUMENT with the library's message;
    `propagate --server` reports it and exits 2, as local mode does."""
    garbage = b"this is not a module {"
    with tempfile.NamedTemporaryFile("wb", suffix=".mlir") as f:
        f.write(garbage)
        f.flush()
        rc, out, err = propagate_local(ctx, [f.name])
        check_eq((rc, out), (2, ""), "local propagate of garbage")
        failure = err.split(": error: ", 1)[1].strip()
        e = rpc_error(ctx.c.propagate, ctx.c.PropagateRequest(module=garbage, file_name=f.name), timeout=30)
        expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, failure)
        rc, out, err = propagate_local(ctx, ["--server", ctx.c.target, f.name])
        check_eq((rc, out), (2, ""), "propagate --server of garbage")
        if "INVALID_ARGUMENT" not in err or failure not in err:
            fail(f"propagate --server of garbage printed {err!r}")
    path = f"{PROPAGATION}/{PROPAGATE_CASES[0][0]}"
    e = rpc_error(ctx.c.propagate, ctx.c.PropagateRequest(module=open(path, "rb").read(), strategy="fastest"),
                  timeout=30)
    expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, "strategy", "fastest")
    # options the library refuses together: its own words
    e = rpc_error(ctx.c.propagate, ctx.c.PropagateRequest(module=open(path, "rb").read(), annotate_rules=True,
                                                          json=True), timeout=30)
    expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, "--format json prints propagated shardings")
    mesh = ctx.p.msg("shardcheck.v1.TargetMesh")()
    mesh.axes.add(name="x", size=0)
    e = rpc_error(ctx.c.propagate, ctx.c.PropagateRequest(module=open(path, "rb").read(), mesh=mesh), timeout=30)
    expect_status(e, grpc.StatusCode.INVALID_ARGUMENT, "mesh")


def mesh_request(ctx, path, spec):
    req = check_req(ctx, path)
    axes, *sections = spec.split(";")
    types = {"auto": "AXIS_TYPE_AUTO", "explicit": "AXIS_TYPE_EXPLICIT", "manual": "AXIS_TYPE_MANUAL"}
    for ax in axes.split(","):
        name, rest = ax.split("=")
        size, _, typ = rest.partition(":")
        req.mesh.axes.add(name=name, size=int(size), type=ctx.p.enum("shardcheck.v1.AxisType", types[typ or "auto"]))
    for sec in sections:
        key, val = sec.split("=")
        if key == "devices":
            req.mesh.device_ids.extend(int(d) for d in val.split(","))
        else:
            req.mesh.platform = ctx.p.enum("shardcheck.v1.Platform", "PLATFORM_" + val.upper())
    return req


def t_mesh_validator_matches_local(ctx):
    path = "tests/modules/kernel/kernel-cpu-platform.good.mlir"
    rejected = 0
    for spec in MESH_SPECS:
        p = subprocess.run([ctx.cli, "check", "--format", "json", "--mesh", spec, path], capture_output=True, text=True)
        local_err = None
        if p.returncode == 2:
            prefix = "shardcheck: --mesh: "
            line = p.stderr.strip()
            if not line.startswith(prefix):
                fail(f"--mesh {spec}: unexpected local error {line!r}")
            local_err = line[len(prefix):]
        elif p.returncode not in (0, 1):
            fail(f"--mesh {spec}: local exit {p.returncode}")
        try:
            ctx.c.check(mesh_request(ctx, path, spec), timeout=30)
            remote_err = None
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.INVALID_ARGUMENT:
                fail(f"--mesh {spec}: daemon said {e.code()} {e.details()}")
            remote_err = e.details()
        check_eq(remote_err, local_err, f"mesh {spec!r}: daemon vs local verdict")
        rejected += local_err is not None
    if rejected != 10:
        fail(f"{rejected} of {len(MESH_SPECS)} specs rejected, expected 10")
    print(f"    {len(MESH_SPECS)} mesh specs: local and daemon agree ({rejected} rejected with the same text)")


MAIN = [t_health, t_capabilities, t_rules_and_explain, t_reports_match_local, t_options_match_local, t_cache,
        t_errors, t_propagate_matches_local, t_propagate_errors, t_mesh_validator_matches_local, t_size_limits, t_concurrent_200, t_reflection, t_metrics_and_log, t_log_formats, t_reload]


# --- group: slow (--debug-delay-ms, small --max-inflight) -----------------------------------------

def t_deadline_inside_analysis(ctx):
    path = corpus_files()[2]
    n = len(requests_logged(ctx, "Check"))
    e = rpc_error(ctx.c.check, check_req(ctx, path), timeout=0.5)
    expect_status(e, grpc.StatusCode.DEADLINE_EXCEEDED)
    # The server saw the deadline and stopped that check (it would otherwise finish OK after the delay).
    line = poll(lambda: requests_logged(ctx, "Check")[n:], "the Check to be logged")[0]
    # gRPC core reports the expiry as CANCELLED when the client's reset reaches the server before the
    # server's own deadline timer fires (seen under valgrind on a loaded machine); either way the check
    # was stopped, not completed.
    if line["status"] not in ("DEADLINE_EXCEEDED", "CANCELLED"):
        check_eq(line["status"], "DEADLINE_EXCEEDED", "server-side status of the expired check")
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] == 0, "in-flight count to return to 0")


def t_propagate_deadline(ctx):
    """Propagate runs under the call's deadline as Check does (the analysis here waits first)."""
    path = f"{PROPAGATION}/{PROPAGATE_CASES[0][0]}"
    n = len(requests_logged(ctx, "Propagate"))
    req = ctx.c.PropagateRequest(module=open(path, "rb").read(), split_input_file=True)
    expect_status(rpc_error(ctx.c.propagate, req, timeout=0.5), grpc.StatusCode.DEADLINE_EXCEEDED)
    line = poll(lambda: requests_logged(ctx, "Propagate")[n:], "the Propagate to be logged")[0]
    if line["status"] not in ("DEADLINE_EXCEEDED", "CANCELLED"):  # as in t_deadline_inside_analysis
        check_eq(line["status"], "DEADLINE_EXCEEDED", "server-side status of the expired Propagate")
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] == 0, "in-flight count to return to 0")


def t_cancel_inside_analysis(ctx):
    path = corpus_files()[4]
    n = len(requests_logged(ctx, "Check"))
    fut = ctx.c.check.future(check_req(ctx, path), timeout=60)
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] == 1, "the check to be in flight")
    fut.cancel()
    line = poll(lambda: requests_logged(ctx, "Check")[n:], "the cancelled Check to be logged")[0]
    check_eq(line["status"], "CANCELLED", "server-side status of the cancelled check")


def t_inflight_bound(ctx):
    path = corpus_files()[5]
    futs = [ctx.c.check.future(check_req(ctx, path), timeout=60) for _ in range(ctx.max_inflight)]
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] == ctx.max_inflight, "the bound to be reached")
    e = rpc_error(ctx.c.check, check_req(ctx, path), timeout=30)
    expect_status(e, grpc.StatusCode.RESOURCE_EXHAUSTED, f"max_inflight={ctx.max_inflight}")
    # Cheap methods are not bounded by it.
    ctx.c.health(ctx.c.HealthCheckRequest(), timeout=10)
    for f in futs:
        f.cancel()
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] == 0, "the held checks to be released")
    if metrics(ctx)["shardcheckd_rejected_busy_total"] < 1:
        fail("metrics: the busy rejection was not counted")


def t_zero_deadline(ctx):
    """A call whose deadline has already passed (checks here wait 30 s first, so it cannot win a race)."""
    req = check_req(ctx, corpus_files()[1])
    for _ in range(5):
        expect_status(rpc_error(ctx.c.check, req, timeout=0), grpc.StatusCode.DEADLINE_EXCEEDED)
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] == 0, "nothing left in flight")
    SERVING = ctx.p.enum("grpc.health.v1.HealthCheckResponse.ServingStatus", "SERVING")
    check_eq(ctx.c.health(ctx.c.HealthCheckRequest(), timeout=10).status, SERVING, "health after zero deadlines")


SLOW = [t_zero_deadline, t_deadline_inside_analysis, t_propagate_deadline, t_cancel_inside_analysis, t_inflight_bound]


# --- group: drain (SIGTERM under load) -------------------------------------------------------------

def t_sigterm_under_load(ctx):
    files = corpus_files(10)
    SERVING = ctx.p.enum("grpc.health.v1.HealthCheckResponse.ServingStatus", "SERVING")
    NOT_SERVING = ctx.p.enum("grpc.health.v1.HealthCheckResponse.ServingStatus", "NOT_SERVING")
    watch = ctx.c.health_watch(ctx.c.HealthCheckRequest(), timeout=120)
    check_eq(next(watch).status, SERVING, "watch before SIGTERM")
    n = ctx.load
    futs = [ctx.c.check.future(check_req(ctx, files[i % len(files)]), timeout=300) for i in range(n)]
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] >= min(n, ctx.max_inflight) // 2, "calls to be in flight")
    os.kill(ctx.pid, signal.SIGTERM)
    check_eq(next(watch).status, NOT_SERVING, "watch after SIGTERM")
    # Draining: calls started now are refused, not queued. gRPC core answers UNAVAILABLE once the
    # client saw GOAWAY, and CANCELLED for a call that reached the server's pending queue first.
    REFUSED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
    for _ in range(5):
        e = rpc_error(ctx.c.check, check_req(ctx, files[0]), timeout=60)
        if e.code() not in REFUSED:
            fail(f"a call sent while draining ended with {e.code()} {e.details()}")
    e = rpc_error(lambda: next(watch))
    if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        fail(f"watch ended with {e.code()}")
    late = wait_all(futs, 600)
    if late:
        fail(f"{late} calls never finished")
    ok = refused = 0
    for f in futs:
        try:
            f.result()
            ok += 1
        except grpc.RpcError as ex:
            if ex.code() not in REFUSED:
                fail(f"a call ended with {ex.code()} {ex.details()} during the drain")
            refused += 1
    poll(lambda: any(r.get("msg") == "stopped" for r in log_lines(ctx)), "the daemon to stop", tries=1200)
    logged = [r for r in requests_logged(ctx, "Check")]
    accepted_ok = [r for r in logged if r["status"] == "OK"]
    check_eq(len(logged), len(accepted_ok), "every check the server accepted finished OK")
    check_eq(len(accepted_ok), ok, "OK responses vs accepted checks")
    if ok < 1:
        fail("no call was in flight at SIGTERM")
    print(f"    SIGTERM with {n} checks in flight: {ok} completed OK, {refused} refused; 5 sent after SIGTERM: refused")


def t_grace_period_cancels(ctx):
    """A check that outlives grace_ms is cancelled (inside the analysis) and the daemon still exits."""
    fut = ctx.c.check.future(check_req(ctx, corpus_files()[0]), timeout=300)
    poll(lambda: metrics(ctx)["shardcheckd_inflight"] == 1, "the check to be in flight")
    os.kill(ctx.pid, signal.SIGTERM)
    e = fut.exception(timeout=120)
    if e is None or e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        fail(f"the check outliving the grace period ended with {e and e.code()}")
    poll(lambda: any(r.get("msg") == "stopped" for r in log_lines(ctx)), "the daemon to stop", tries=1200)
    if not any("grace period" in r.get("msg", "") for r in log_lines(ctx)):
        fail("no grace-period log line")
    check_eq([r["status"] for r in requests_logged(ctx, "Check")], ["CANCELLED"], "server-side status")
    line = requests_logged(ctx, "Check")[0]
    if "drain" not in line.get("detail", "") or line.get("client_cancelled"):
        fail(f"a check cancelled when the grace period ended is logged as {line}")


DRAIN = [t_sigterm_under_load]
GRACE = [t_grace_period_cancels]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--group", choices=["main", "slow", "drain", "grace"], required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--metrics-port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--config", default="")
    ap.add_argument("--cli", default="build/bin/shardcheck")
    ap.add_argument("--fds", default="build/gen/descriptors.pb")
    ap.add_argument("--max-message-bytes", type=int, default=4 << 20)
    ap.add_argument("--max-module-bytes", type=int, default=256 << 20)
    ap.add_argument("--max-inflight", type=int, default=256)
    ap.add_argument("--corpus-limit", type=int, default=0)
    ap.add_argument("--load", type=int, default=40)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    ctx = Ctx()
    ctx.p = Proto(a.fds)
    ctx.c = Client(ctx.p, f"127.0.0.1:{a.port}")
    ctx.metrics_port, ctx.pid, ctx.log, ctx.config, ctx.cli = a.metrics_port, a.pid, a.log, a.config, a.cli
    ctx.max_message_bytes, ctx.max_module_bytes, ctx.max_inflight = a.max_message_bytes, a.max_module_bytes, a.max_inflight
    ctx.corpus_limit, ctx.load = a.corpus_limit or None, a.load
    ctx.tmp = tempfile.mkdtemp(prefix="sc-itest-")

    run_group(ctx, a.group, {"main": MAIN, "slow": SLOW, "drain": DRAIN, "grace": GRACE}[a.group], a.only)


def daemon_args(ap):
    """The arguments every group runner takes: the daemon under test and the descriptor set."""
    for name in ("--port", "--metrics-port", "--pid"):
        ap.add_argument(name, type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--fds", default="build/gen/descriptors.pb")


def daemon_ctx(a):
    """A Ctx for the daemon named by daemon_args, with a client of it."""
    ctx = Ctx()
    ctx.p = Proto(a.fds)
    ctx.c = Client(ctx.p, f"127.0.0.1:{a.port}")
    ctx.port, ctx.metrics_port, ctx.pid, ctx.log = a.port, a.metrics_port, a.pid, a.log
    return ctx


def run_group(ctx, group, tests, only=""):
    """Runs the tests (those named in `only`, comma-separated, if given), reports each, then exits."""
    if only:
        tests = [t for t in tests if t.__name__ in only.split(",")]
    failed = 0
    for t in tests:
        t0 = time.monotonic()
        try:
            t(ctx)
            print(f"  PASS {t.__name__} ({time.monotonic() - t0:.1f}s)")
        except Exception as e:  # noqa: BLE001 - report every failure, then exit non-zero
            failed += 1
            print(f"  FAIL {t.__name__}: {e}")
            if not isinstance(e, AssertionError):
                traceback.print_exc()
    ctx.c.close()
    print(f"  {group}: {len(tests) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
