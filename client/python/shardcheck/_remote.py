"""Checks through shardcheckd: Debian's python3-grpcio, message classes protoc generated from
proto/shardcheck/v1/shardcheck.proto at build time (into the package when installed, else into the
checkout's build/python/). grpc is imported only when a server is used.

Modules above the daemon's message limit (GetCapabilities, else the documented 4 MiB) go through
CheckStream, the first chunk carrying the request header as the C client does (client/rpc.c). A call
answered UNAVAILABLE (a daemon draining, a balancer with no ready backend) is retried a few times
within the deadline."""
from __future__ import annotations

import importlib.util
import os
import random
import sys
import threading
import time
from pathlib import Path

from ._errors import LibraryNotFoundError, RemoteError
from ._report import Report, Rule

DEFAULT_MAX_MESSAGE_BYTES = 4 << 20  # the daemon's default limits.max_message_bytes
# Delays before the retries of a call answered UNAVAILABLE (so at most 1 + 3 attempts), each with up
# to 50% jitter, all within the call's deadline.
RETRY_DELAYS = (0.1, 0.3, 0.9)
_SERVICE = "/shardcheck.v1.ShardCheck/"


def pb2_candidates() -> list[Path]:
    env = os.environ.get("SHARDCHECK_PROTO_PATH")  # a directory holding shardcheck/v1/shardcheck_pb2.py
    here = Path(__file__).resolve().parent
    found = [Path(env) / "shardcheck" / "v1" / "shardcheck_pb2.py"] if env else []
    found.append(here / "_proto" / "shardcheck_pb2.py")
    if len(here.parents) >= 3:
        found.append(here.parents[2] / "build" / "python" / "shardcheck" / "v1" / "shardcheck_pb2.py")
    return found


_pb2 = None
_pb2_lock = threading.Lock()


def pb2():
    """The generated shardcheck.v1 message classes (loaded once, under a private module name)."""
    global _pb2
    with _pb2_lock:
        if _pb2 is None:
            for path in pb2_candidates():
                if path.is_file():
                    spec = importlib.util.spec_from_file_location("shardcheck._shardcheck_pb2", path)
                    mod = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(mod)
                    sys.modules[spec.name] = mod
                    _pb2 = mod
                    break
            else:
                raise LibraryNotFoundError(
                    "shardcheck: the generated gRPC message classes (shardcheck_pb2.py) were not found in "
                    + ", ".join(str(p) for p in pb2_candidates()) + ". Run `make` in the shardcheck checkout "
                    "(protoc writes build/python/), or install the package with pip.")
        return _pb2


def _read(path, what):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"{what}: cannot read {path}: {e.strerror}") from None


DEFAULT_PORT = 50051


def grpc_target(server, tls):
    """What a user typed as the gRPC target, as the C CLI takes it: "localhost" -> "localhost:50051",
    "http://host:port/" -> "host:port"; "https://" needs TLS (tls_ca)."""
    target = server
    if target.startswith("http://"):
        target = target[len("http://"):]
    elif target.startswith("https://"):
        if not tls:
            raise ValueError(f"{server}: https:// needs TLS: pass tls_ca (the CA that signed the daemon's certificate)")
        target = target[len("https://"):]
    target = target.rstrip("/")
    has_port = "]:" in target if target.startswith("[") else ":" in target
    return target if has_port else f"{target}:{DEFAULT_PORT}"


class Client:
    """One channel to one daemon (reused across calls) and its capabilities, fetched once."""

    def __init__(self, server, tls_ca=None, tls_cert=None, tls_key=None, token=None):
        try:
            import grpc  # noqa: PLC0415 - only remote checks need grpc
        except ImportError as e:
            raise ImportError("shardcheck: checks through a daemon need grpcio and protobuf "
                              "(pip install 'shardcheck[remote]'; Debian: apt-get install python3-grpcio "
                              "python3-protobuf)") from e

        self.grpc = grpc
        self.server = server = grpc_target(server, bool(tls_ca or tls_cert))
        self.p = pb2()
        opts = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1),
                # Reconnect quickly so the retries of a restarting daemon can succeed.
                ("grpc.initial_reconnect_backoff_ms", 100), ("grpc.min_reconnect_backoff_ms", 100),
                ("grpc.max_reconnect_backoff_ms", 1000)]
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key: give both (a client certificate and its key) or neither")
        if tls_ca or tls_cert:
            creds = grpc.ssl_channel_credentials(
                root_certificates=_read(tls_ca, "tls_ca") if tls_ca else None,
                private_key=_read(tls_key, "tls_key") if tls_key else None,
                certificate_chain=_read(tls_cert, "tls_cert") if tls_cert else None)
            self.channel = grpc.secure_channel(server, creds, options=opts)
        else:
            self.channel = grpc.insecure_channel(server, options=opts)
        self.metadata = (("authorization", f"Bearer {token}"),) if token else None
        self._caps = None
        self._caps_lock = threading.Lock()
        p = self.p

        def unary(method, req, resp):
            return self.channel.unary_unary(_SERVICE + method, request_serializer=req.SerializeToString,
                                            response_deserializer=resp.FromString)
        self._check = unary("Check", p.CheckRequest, p.CheckResponse)
        self._check_stream = self.channel.stream_unary(
            _SERVICE + "CheckStream", request_serializer=p.CheckChunk.SerializeToString,
            response_deserializer=p.CheckResponse.FromString)
        self._rules = unary("ListRules", p.ListRulesRequest, p.ListRulesResponse)
        self._explain = unary("Explain", p.ExplainRequest, p.ExplainResponse)
        self._capabilities = unary("GetCapabilities", p.GetCapabilitiesRequest, p.Capabilities)
        self._propagate = unary("Propagate", p.PropagateRequest, p.PropagateResponse)

    def call(self, fn, make_request, timeout, retries=len(RETRY_DELAYS)):
        """fn(make_request(), ...) with the deadline and the UNAVAILABLE retries; gRPC errors -> RemoteError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for attempt in range(retries + 1):
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            try:
                return fn(make_request(), timeout=remaining, metadata=self.metadata)
            except self.grpc.RpcError as e:
                code = e.code() if callable(getattr(e, "code", None)) else self.grpc.StatusCode.UNKNOWN
                details = e.details() if callable(getattr(e, "details", None)) else str(e)
                if code != self.grpc.StatusCode.UNAVAILABLE or attempt == retries:
                    raise RemoteError(code, details, self.server) from None
                delay = RETRY_DELAYS[attempt] * (1 + random.random() / 2)
                if deadline is not None and time.monotonic() + delay >= deadline:
                    raise RemoteError(code, details, self.server) from None
                time.sleep(delay)
        raise AssertionError("unreachable")

    def capabilities(self, timeout=None):
        """GetCapabilities, asked once per client (no retries: the defaults do); None if it is not answered."""
        with self._caps_lock:
            if self._caps is None:
                try:
                    self._caps = self.call(self._capabilities, self.p.GetCapabilitiesRequest, timeout, retries=0)
                except RemoteError:
                    return None
            return self._caps

    def reads_bytecode(self, timeout=None) -> bool:
        enum = self.p.InputFormat
        if "INPUT_FORMAT_BYTECODE" not in enum.keys():
            return False
        caps = self.capabilities(timeout)
        return caps is not None and enum.Value("INPUT_FORMAT_BYTECODE") in caps.input_formats

    def max_message_bytes(self, timeout=None) -> int:
        caps = self.capabilities(timeout)
        limit = caps.limits.max_message_bytes if caps is not None and caps.HasField("limits") else 0
        return limit if limit >= 4096 else DEFAULT_MAX_MESSAGE_BYTES

    def _input_format(self, input_format):
        fmt_name = "INPUT_FORMAT_" + ("stablehlo" if input_format == "mlir" else input_format).upper()
        if fmt_name not in self.p.InputFormat.keys():
            raise ValueError(f"input_format: the shardcheck.v1 API has no '{input_format}' input")
        return self.p.InputFormat.Value(fmt_name)

    def _set_mesh(self, req, m):
        p = self.p
        for a in m.axes:
            req.mesh.axes.add(name=a.name, size=a.size, type=p.AxisType.Value("AXIS_TYPE_" + a.type.upper()))
        req.mesh.device_ids.extend(m.device_ids or ())
        req.mesh.platform = p.Platform.Value("PLATFORM_" + (m.platform or "unspecified").upper())
        req.mesh.device_kind = m.device_kind or ""

    def propagate(self, data: bytes, name: str, mesh, input_format: str, timeout=None, **flags) -> str:
        """Propagate: the text `shardcheck propagate` prints; flags are PropagateRequest's fields (strategy,
        conservative, split_input_file, json, ...). INVALID_ARGUMENT (a module that does not parse, bad
        options) -> ValueError with the daemon's message."""
        def request():
            req = self.p.PropagateRequest(module=data, file_name=name, format=self._input_format(input_format),
                                          **flags)
            if mesh is not None:
                self._set_mesh(req, mesh)
            return req
        try:
            return self.call(self._propagate, request, timeout).text
        except RemoteError as e:
            if e.code == self.grpc.StatusCode.INVALID_ARGUMENT:
                raise ValueError(e.details) from None
            raise

    def _request(self, name, opts, kind):
        p = self.p
        report_format = {"json": "REPORT_FORMAT_JSON", "json-compact": "REPORT_FORMAT_JSON",
                         "text": "REPORT_FORMAT_TEXT", "text-color": "REPORT_FORMAT_TEXT",
                         "sarif": "REPORT_FORMAT_SARIF", "html": "REPORT_FORMAT_HTML"}[kind]
        req = p.CheckRequest(format=self._input_format(opts.input_format), file_name=name)
        o = req.options
        o.rules.extend(opts.rules)
        o.min_severity = p.Severity.Value("SEVERITY_" + opts.min_severity.upper())
        o.split_input_file = opts.split_input_file
        o.platform = p.Platform.Value("PLATFORM_" + (opts.platform or "unspecified").upper())
        o.report_format = p.ReportFormat.Value(report_format)
        o.pretty = kind == "json"
        o.color = kind == "text-color"
        o.max_depth, o.max_ops = opts.max_depth, opts.max_ops
        o.no_propagate = not opts.propagate
        if opts.mesh is not None:
            self._set_mesh(req, opts.mesh)
        return req

    def check_render(self, data: bytes, name: str, opts, kind: str, timeout=None) -> str:
        """The report of `data` rendered as `kind` (see _report.KINDS): Check, or CheckStream when large."""
        header = self._request(name, opts, kind)
        start = time.monotonic()
        limit = self.max_message_bytes(timeout) if len(data) > 4096 else DEFAULT_MAX_MESSAGE_BYTES
        if timeout is not None:  # one deadline for GetCapabilities and the check
            timeout = max(timeout - (time.monotonic() - start), 0.0)
        room = limit - limit // 8  # the header fields and framing need some of the message
        if len(data) <= room:
            def one():
                req = self.p.CheckRequest()
                req.CopyFrom(header)
                req.module = data
                return req
            return self.call(self._check, one, timeout).report
        chunk = max(room // 2, 1)

        def chunks():  # a fresh iterator per attempt
            view = memoryview(data)
            for i, off in enumerate(range(0, len(data), chunk)):
                c = self.p.CheckChunk(data=bytes(view[off:off + chunk]))
                if i == 0:
                    c.header.CopyFrom(header)
                yield c
        return self.call(self._check_stream, chunks, timeout).report

    def check(self, data: bytes, name: str, opts, timeout=None) -> Report:
        def render(kind):
            return self.check_render(data, name, opts, kind, timeout)
        return Report(render("json"), render)

    def rules(self, timeout=None) -> list[Rule]:
        resp = self.call(self._rules, self.p.ListRulesRequest, timeout)
        sev = {v: k.removeprefix("SEVERITY_").lower() for k, v in self.p.Severity.items()}
        return [Rule(r.code, r.name, r.family, sev.get(r.severity, "note"), r.summary) for r in resp.rules]

    def explain(self, code: str, timeout=None) -> str:
        try:
            return self.call(self._explain, lambda: self.p.ExplainRequest(code=code), timeout).text
        except RemoteError as e:
            if e.code == self.grpc.StatusCode.NOT_FOUND:
                raise ValueError(f"unknown code '{code}' (see shardcheck.rules())") from None
            raise


_clients: dict[tuple, Client] = {}
_clients_lock = threading.Lock()


def client(server, tls_ca=None, tls_cert=None, tls_key=None, token=None) -> Client:
    """A Client per (server, credentials), shared by calls so connections are reused."""
    key = (server, tls_ca and os.fspath(tls_ca), tls_cert and os.fspath(tls_cert), tls_key and os.fspath(tls_key),
           token)
    with _clients_lock:
        c = _clients.get(key)
        if c is None:
            c = _clients[key] = Client(*key)
        return c


def close_clients():
    """Closes every shared channel (they reconnect on the next call)."""
    with _clients_lock:
        for c in _clients.values():
            c.channel.close()
        _clients.clear()
