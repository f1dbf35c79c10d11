"""Remote checks: the daemon's errors as RemoteError, bad meshes named as the daemon names them,
the UNAVAILABLE retries, deadlines, bearer tokens and (m)TLS. A small in-test gRPC server (Debian's
python3-grpcio) plays a daemon where the real one cannot be made to misbehave on cue."""
import subprocess
import tempfile
import threading
import time
import unittest
from concurrent import futures
from pathlib import Path

import grpc

import support
from support import Lowered

import shardcheck
from shardcheck import _api, _remote
from test_mesh import BadMeshTest

GOOD = "tests/modules/kernel/kernel-outside-manual.toplevel.good.mlir"


def read(path):
    return (support.REPO / path).read_text()


class FakeDaemon:
    """Answers Check with the in-process report of the request (so answers are real reports), after
    `unavailable` UNAVAILABLE answers; `hang` makes Check wait until the client gives up."""

    def __init__(self, unavailable=0, hang=False, server_credentials=None):
        self.pb = _remote.pb2()
        self.unavailable, self.hang = unavailable, hang
        self.attempts, self.metadata = 0, []
        self.lock = threading.Lock()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.method_handlers_generic_handler("shardcheck.v1.ShardCheck", {
            "Check": grpc.unary_unary_rpc_method_handler(
                self.check, request_deserializer=self.pb.CheckRequest.FromString,
                response_serializer=self.pb.CheckResponse.SerializeToString)})
        self.server.add_generic_rpc_handlers((handler,))
        if server_credentials:
            self.port = self.server.add_secure_port("127.0.0.1:0", server_credentials)
        else:
            self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{self.port}"
        self.server.start()

    def check(self, req, context):
        with self.lock:
            self.attempts += 1
            self.metadata.append(dict(context.invocation_metadata()))
            if self.attempts <= self.unavailable:
                context.abort(grpc.StatusCode.UNAVAILABLE, "draining")
        if self.hang:
            done = threading.Event()
            context.add_callback(done.set)
            done.wait(60)
            context.abort(grpc.StatusCode.CANCELLED, "client went away")
        report = shardcheck.check(req.module, name=req.file_name)
        return self.pb.CheckResponse(report=report.to_json(pretty=req.options.pretty))

    def stop(self):
        self.server.stop(None)


class FakeDaemonTest(unittest.TestCase):
    def setUp(self):
        self.text = read(GOOD)
        self.want = shardcheck.check(self.text, name="m").to_json()

    def test_retries_unavailable(self):
        fake = FakeDaemon(unavailable=2)
        try:
            r = shardcheck.check(self.text, name="m", server=fake.address, timeout=30)
            self.assertEqual(r.to_json(), self.want)
            self.assertEqual(fake.attempts, 3)
        finally:
            fake.stop()

    def test_retries_are_bounded(self):
        fake = FakeDaemon(unavailable=100)
        try:
            with self.assertRaises(shardcheck.RemoteError) as cm:
                shardcheck.check(self.text, server=fake.address, timeout=30)
            self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
            self.assertEqual(cm.exception.details, "draining")
            self.assertEqual(fake.attempts, len(_remote.RETRY_DELAYS) + 1)
        finally:
            fake.stop()

    def test_retries_stay_within_the_deadline(self):
        fake = FakeDaemon(unavailable=100)
        try:
            with self.assertRaises(shardcheck.RemoteError):
                shardcheck.check(self.text, server=fake.address, timeout=0.05)
            self.assertEqual(fake.attempts, 1)  # the first retry's delay would pass the deadline
        finally:
            fake.stop()

    def test_deadline(self):
        fake = FakeDaemon(hang=True)
        try:
            with self.assertRaises(shardcheck.RemoteError) as cm:
                shardcheck.check(self.text, server=fake.address, timeout=0.5)
            self.assertEqual(cm.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
            self.assertIn(fake.address, str(cm.exception))
        finally:
            fake.stop()

    def test_bearer_token(self):
        fake = FakeDaemon()
        try:
            shardcheck.check(self.text, server=fake.address, token="s3cret")
            shardcheck.check(self.text, server=fake.address)
            self.assertEqual(fake.metadata[0].get("authorization"), "Bearer s3cret")
            self.assertNotIn("authorization", fake.metadata[1])
        finally:
            fake.stop()

    def test_mtls(self):
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)

            def cert(name, san):
                subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                "-nodes", "-days", "2", "-subj", f"/CN={name}", "-addext", f"subjectAltName={san}",
                                "-keyout", t / f"{name}.key", "-out", t / f"{name}.pem"],
                               check=True, capture_output=True)
            cert("server", "IP:127.0.0.1")
            cert("client", "DNS:client")
            creds = grpc.ssl_server_credentials([((t / "server.key").read_bytes(), (t / "server.pem").read_bytes())],
                                                root_certificates=(t / "client.pem").read_bytes(),
                                                require_client_auth=True)
            fake = FakeDaemon(server_credentials=creds)
            try:
                r = shardcheck.check(self.text, name="m", server=fake.address, timeout=30, tls_ca=t / "server.pem",
                                     tls_cert=t / "client.pem", tls_key=t / "client.key", token="tok")
                self.assertEqual(r.to_json(), self.want)
                self.assertEqual(fake.metadata[-1].get("authorization"), "Bearer tok")
                with self.assertRaises(shardcheck.RemoteError):  # TLS without a client certificate: refused
                    shardcheck.check(self.text, server=fake.address, timeout=10, tls_ca=t / "server.pem")
                with self.assertRaises(shardcheck.RemoteError):  # plaintext to a TLS server
                    shardcheck.check(self.text, server=fake.address, timeout=10)
                with self.assertRaisesRegex(ValueError, "tls_cert and tls_key"):
                    shardcheck.check(self.text, server=fake.address, tls_ca=t / "server.pem", tls_cert=t / "client.pem")
                with self.assertRaisesRegex(ValueError, "tls_ca: cannot read"):
                    shardcheck.check(self.text, server=fake.address, tls_ca=t / "missing.pem")
            finally:
                fake.stop()


class DaemonErrorsTest(unittest.TestCase):
    def test_daemon_down(self):
        address = f"127.0.0.1:{support.free_port()}"
        with self.assertRaises(shardcheck.RemoteError) as cm:
            shardcheck.check(read(GOOD), server=address, timeout=30)
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(cm.exception.server, address)
        with self.assertRaises(shardcheck.RemoteError):
            shardcheck.rules(server=address, timeout=30)

    def test_bad_mesh_messages_are_the_daemons(self):
        """The ValueError for a bad mesh is the daemon's INVALID_ARGUMENT message for the same mesh."""
        c = _remote.client(support.daemon().address)
        compared = 0
        for mesh, message in BadMeshTest.CASES:
            if isinstance(mesh, str) or any(isinstance(v, float) for v in getattr(mesh, "values", lambda: [])()):
                continue  # spec syntax and non-integer sizes never reach the daemon's validation
            target = shardcheck.TargetMesh(tuple(shardcheck.MeshAxis(n, s) for n, s in mesh.items())) \
                if isinstance(mesh, dict) else _mesh_unvalidated(mesh)
            req = c._request("m", _api.CheckOptions(mesh=target), "json")
            req.module = b"module {}"
            with self.assertRaises(grpc.RpcError) as cm:
                c._check(req, timeout=30)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertEqual(cm.exception.details(), message)
            with self.assertRaises(ValueError) as cm2:
                shardcheck.check("module {}", mesh=mesh, server=support.daemon().address)
            self.assertEqual(str(cm2.exception), message)
            compared += 1
        self.assertGreaterEqual(compared, 6)

    def test_input_format_names(self):
        address = support.daemon().address
        self.assertEqual(shardcheck.check(read(GOOD), input_format="mlir", server=address, name="m").to_json(),
                         shardcheck.check(read(GOOD), input_format="stablehlo", name="m").to_json())
        if "INPUT_FORMAT_BYTECODE" not in _remote.pb2().InputFormat.keys():
            with self.assertRaisesRegex(ValueError, "^input_format: the shardcheck.v1 API has no 'bytecode' input"):
                shardcheck.check(read(GOOD), input_format="bytecode", server=address)

    def test_invalid_argument_from_the_daemon(self):
        with self.assertRaises(shardcheck.RemoteError) as cm:
            shardcheck.check(read(GOOD), rules="no-such-rule", server=support.daemon().address, timeout=30)
        self.assertEqual(cm.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("no-such-rule", cm.exception.details)

    def test_rules_explain_text_sarif(self):
        address = support.daemon().address
        self.assertEqual(shardcheck.rules(server=address), shardcheck.rules())
        self.assertEqual(shardcheck.explain("SC0301", server=address), shardcheck.explain("SC0301"))
        with self.assertRaisesRegex(ValueError, "unknown code 'SC9999'"):
            shardcheck.explain("SC9999", server=address)
        obj = Lowered(read("examples/pallas_kernel_outside_shard_map.mlir"))
        local = shardcheck.check(obj, mesh="data=4", name="x.mlir")
        remote = shardcheck.check(obj, mesh="data=4", name="x.mlir", server=address, timeout=30)
        self.assertFalse(remote.ok)
        self.assertEqual(remote.to_sarif(), local.to_sarif())
        self.assertEqual(remote.to_text(color=True), local.to_text(color=True))
        with self.assertRaises(shardcheck.ShardingError) as cm:
            remote.raise_for_errors()
        self.assertEqual(str(cm.exception), str(local))

    def test_stream_boundary(self):
        """Just under the room left for the header: Check; just over: CheckStream (chunked)."""
        d = support.daemon()
        room = support.DAEMON_MAX_MESSAGE_BYTES - support.DAEMON_MAX_MESSAGE_BYTES // 8
        base = read(GOOD)
        for size, method in ((room, "Check"), (room + 1, "CheckStream"), (5 * room, "CheckStream")):
            text = base + "//" + "x" * (size - len(base.encode()) - 3) + "\n"
            self.assertEqual(len(text.encode()), size)
            before = len(d.log_lines(f'"method":"{method}"'))
            r = shardcheck.check(text, name="big.mlir", server=d.address, timeout=60)
            self.assertEqual(r.to_json(), shardcheck.check(text, name="big.mlir").to_json())
            self.assertEqual(len(d.log_lines(f'"method":"{method}"')), before + 1, size)


class RemotePropagateTest(unittest.TestCase):
    PROPAGATION = "../shared/corpus/shardy/propagation"

    def test_propagate_through_the_daemon_is_in_process_propagate(self):
        """server= sends Propagate; the text is what in-process propagate() returns (text and JSON, each
        strategy, a GSPMD mesh), and a module the library refuses is the same ValueError."""
        address = support.daemon().address
        before = len(support.daemon().log_lines('"method":"Propagate"'))
        cases = [("user_priority_propagation.mlir", "user-priority"),
                 ("basic_propagation_keep_sharding_rules.mlir", "pipeline"),
                 ("basic_propagation_manual_computation.mlir", "basic")]
        for base, strategy in cases:
            path = support.REPO / self.PROPAGATION / base
            for fmt in ("text", "json"):
                local = shardcheck.propagate(path, strategy=strategy, format=fmt, split_input_file=True)
                self.assertGreater(len(local), 200)
                self.assertEqual(shardcheck.propagate(path, strategy=strategy, format=fmt, split_input_file=True,
                                                      server=address, timeout=60), local, (base, fmt))
        gspmd = read("examples/pallas_kernel_outside_shard_map.mlir")
        self.assertEqual(shardcheck.propagate(gspmd, mesh="data=4", format="json", server=address, timeout=60),
                         shardcheck.propagate(gspmd, mesh="data=4", format="json"))
        self.assertEqual(len(support.daemon().log_lines('"method":"Propagate"')), before + 7)
        with self.assertRaises(ValueError) as local_error:
            shardcheck.propagate("this is not a module {", name="g.mlir")
        with self.assertRaises(ValueError) as remote_error:
            shardcheck.propagate("this is not a module {", name="g.mlir", server=address, timeout=30)
        self.assertIn(str(local_error.exception).split(": ")[-1], str(remote_error.exception))


def _mesh_unvalidated(mesh):
    from shardcheck import _mesh
    return _mesh.from_jax(mesh)


if __name__ == "__main__":
    unittest.main()
