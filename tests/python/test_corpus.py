"""Every corpus module and every tests/modules file, wrapped in the JAX fakes, checked in-process and
through the suite's daemon: the reports equal the C CLI's output byte for byte (JSON, text, SARIF),
without a mesh and with a jax Mesh (the CLI given the equivalent --mesh spec)."""
import json
import unittest

import support
from support import Compiled, Exported, Lowered, make_mesh, AxisType

import shardcheck
from shardcheck import _inputs, _remote

# A 2x4 mesh, the first axis Explicit, devices in a non-iota order, on TPU -- and the --mesh spec the
# CLI is given for it, written out by hand (not produced by the package under test).
MESH = make_mesh((2, 4), ("data", "model"), ids=[0, 2, 4, 6, 1, 3, 5, 7],
                 axis_types=(AxisType.Explicit, AxisType.Auto))
MESH_SPEC = "data=2:explicit,model=4;devices=0,2,4,6,1,3,5,7;platform=tpu"


def wrappers(path, text):
    """The JAX objects that would carry this module: Compiled for HLO, Lowered and Exported for MLIR."""
    if str(path).endswith(".hlo") or text.lstrip().startswith("HloModule"):
        return [Compiled(text)]
    return [Lowered(text), Exported(text)]


class CorpusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The corpus is text; the Exported fake's mlir_module_serialized is no real artifact, so the text
        # goes (test_api covers the bytecode choice).
        cls.saved_mode, _inputs.EXPORTED_INPUT = _inputs.EXPORTED_INPUT, "text"
        cls.paths = [support.rel(p) for p in support.module_files()]
        cls.texts = [(support.REPO / p).read_bytes().decode("utf-8") for p in cls.paths]

    @classmethod
    def tearDownClass(cls):
        _inputs.EXPORTED_INPUT = cls.saved_mode

    def cli(self, fmt, mesh_args):
        rc, out, err = support.run_cli("check", "--format", fmt, "--no-color", *mesh_args, *self.paths)
        self.assertIn(rc, (0, 1), err)
        self.assertEqual(err, "", "the CLI could not check every module")
        return out

    def first_difference(self, expected, got, what):
        for i, (e, g) in enumerate(zip(expected, got)):
            if e != g:
                self.fail(f"{what}: {self.paths[i]} differs:\n--- CLI\n{e[:2000]}\n--- shardcheck\n{g[:2000]}")
        self.assertEqual(len(expected), len(got), what)

    def check_variant(self, mesh, mesh_args):
        cli_json = self.cli("json", mesh_args)
        expected = [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in json.loads(cli_json)]
        reports = []
        for path, text in zip(self.paths, self.texts):
            objs = wrappers(path, text)
            got = [shardcheck.check(o, mesh=mesh, name=path) for o in objs]
            for o, r in zip(objs[1:], got[1:]):
                self.assertEqual(r.to_json(), got[0].to_json(), f"{path}: {type(o).__name__} differs")
            for o in objs:
                if isinstance(o, Lowered):
                    self.assertEqual(o.calls, [{"dialect": None, "debug_info": True}])
                if isinstance(o, Exported):
                    self.assertEqual(o.text_calls, 1)
            reports.append(got[0])
        # Byte for byte: the CLI's array of compact reports, and its text and SARIF output.
        got_json = "[" + ",".join(r.to_json(pretty=False) for r in reports) + "]\n"
        if got_json != cli_json:
            self.first_difference(expected, [json.dumps(json.loads(r.to_json()), separators=(",", ":"),
                                                        ensure_ascii=False) for r in reports], "in-process JSON")
            self.assertEqual(got_json, cli_json)
        self.assertEqual("".join(str(r) for r in reports), self.cli("text", mesh_args))
        self.assertEqual("".join(r.to_sarif() + "\n" for r in reports), self.cli("sarif", mesh_args))
        for r, path in list(zip(reports, self.paths))[::30]:  # the indented form of one report, on a sample
            rc, out, err = support.run_cli("check", "--format", "json", *mesh_args, path)
            self.assertEqual(r.to_json() + "\n", out, path)
            self.assertEqual(r.to_dict(), json.loads(out), path)
            self.assertEqual(r.ok, rc == 0, path)
        return reports

    def check_remote(self, mesh, local_reports):
        d = support.daemon()
        for i, (path, text, local) in enumerate(zip(self.paths, self.texts, local_reports)):
            objs = wrappers(path, text)
            obj = objs[i % len(objs)]
            r = shardcheck.check(obj, mesh=mesh, name=path, server=d.address, timeout=120)
            self.assertEqual(r.to_json(), local.to_json(), f"{path}: remote JSON differs")
            self.assertEqual(r.to_json(pretty=False), local.to_json(pretty=False), f"{path}: remote compact JSON")
            if i % 3 == 0:
                self.assertEqual(str(r), str(local), f"{path}: remote text differs")

    def test_no_mesh(self):
        reports = self.check_variant(None, [])
        self.assertTrue(any(not r.ok for r in reports) and any(r.ok for r in reports))
        self.check_remote(None, reports)

    def test_jax_mesh(self):
        reports = self.check_variant(MESH, ["--mesh", MESH_SPEC])
        self.assertTrue(all(r.to_dict()["mesh"]["source"] == "request" for r in reports))
        self.check_remote(MESH, reports)

    def test_large_modules_stream(self):
        """Modules above the daemon's message limit went through CheckStream, and came back equal."""
        d = support.daemon()
        room = support.DAEMON_MAX_MESSAGE_BYTES - support.DAEMON_MAX_MESSAGE_BYTES // 8
        big = [(p, t) for p, t in zip(self.paths, self.texts) if len(t.encode()) > room]
        self.assertTrue(big, "no corpus module is above the test daemon's message limit")
        before = len(d.log_lines('"method":"CheckStream"'))
        for path, text in big:
            r = shardcheck.check(Lowered(text) if not path.endswith(".hlo") else Compiled(text), name=path,
                                 server=d.address, timeout=120)
            self.assertEqual(r.to_json(), shardcheck.check(text, name=path).to_json(), path)
        streamed = [ln for ln in d.log_lines('"method":"CheckStream"')[before:] if '"status":"OK"' in ln]
        self.assertEqual(len(streamed), len(big))
        caps = _remote.client(d.address).capabilities()
        self.assertEqual(caps.limits.max_message_bytes, support.DAEMON_MAX_MESSAGE_BYTES)


if __name__ == "__main__":
    unittest.main()
