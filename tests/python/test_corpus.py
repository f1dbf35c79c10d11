"""Every corpus module and every tests/modules file, wrapped in the JAX fakes, checked in-process and
through the suite's daemon: each report equals the C CLI's `reports[i]` byte for byte, and the
package's CLI renders the C CLI's whole outputs (results JSON, text, SARIF); an Exported carrying a
real .mlirbc twin gives its text twin's findings. Without a mesh and with a jax Mesh (the CLI given the equivalent --mesh spec)."""
import json
import unittest

import support
from support import Compiled, Exported, Lowered, make_mesh, AxisType

import shardcheck
from shardcheck import _inputs, _lib, _remote
from shardcheck import __main__ as shardcheck_main

# A 2x4 mesh, the first axis Explicit, devices in a non-iota order, on TPU -- and the --mesh spec the
# CLI is given for it, written out by hand (not produced by the package under test).
MESH = make_mesh((2, 4), ("data", "model"), ids=[0, 2, 4, 6, 1, 3, 5, 7],
                 axis_types=(AxisType.Explicit, AxisType.Auto))
MESH_SPEC = "data=2:explicit,model=4;devices=0,2,4,6,1,3,5,7;platform=tpu;device_kind=TPU v5 lite"


def twin_path(path):
    """The serialized artifact JAX stored beside a corpus .mlir (Exported.mlir_module_serialized), or None."""
    p = support.REPO / path
    bc = p.with_suffix(".mlirbc")
    return support.rel(bc) if p.suffix == ".mlir" and bc.is_file() else None


def twin(path):
    bc = twin_path(path)
    return (support.REPO / bc).read_bytes() if bc else None


def wrappers(path, text):
    """The JAX objects that would carry this module: Compiled for HLO, Lowered and Exported for MLIR (the
    Exported with the real bytecode twin when the corpus has one)."""
    if str(path).endswith(".hlo") or text.lstrip().startswith("HloModule"):
        return [Compiled(text)]
    serialized = twin(path)
    return [Lowered(text), Exported(text, serialized=serialized) if serialized else Exported(text)]


def findings(report, with_source):
    """What a text module and its bytecode twin must agree on (the C corpus test's key)."""
    return sorted((d.code, d.severity, d.location.function if d.location else None,
                   (d.source_location.file, d.source_location.line, d.source_location.column)
                   if with_source and d.source_location else None) for d in report.diagnostics)


class CorpusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.saved_mode = _inputs.EXPORTED_INPUT
        cls.paths = [support.rel(p) for p in support.module_files()]
        cls.texts = [(support.REPO / p).read_bytes().decode("utf-8") for p in cls.paths]

    @classmethod
    def tearDownClass(cls):
        _inputs.EXPORTED_INPUT = cls.saved_mode

    def check_wrapped(self, path, obj, **kwargs):
        # An Exported without a bytecode twin carries fake bytes: its text goes. With a twin, the default.
        fake = isinstance(obj, Exported) and twin(path) is None
        _inputs.EXPORTED_INPUT = "text" if fake else self.saved_mode
        try:
            return shardcheck.check(obj, name=path, **kwargs)
        finally:
            _inputs.EXPORTED_INPUT = self.saved_mode

    def cli(self, fmt, mesh_args):
        rc, out, err = support.run_cli("check", "--no-config", "--format", fmt, "--no-color", *mesh_args, *self.paths)
        self.assertIn(rc, (0, 1), err)
        # Only the hint that some corpus files hold `// -----`-separated modules may go to stderr.
        problems = [line for line in err.splitlines() if not line.startswith("shardcheck: hint: ")]
        self.assertEqual(problems, [], "the CLI could not check every module")
        return out

    def first_difference(self, expected, got, what):
        for i, (e, g) in enumerate(zip(expected, got)):
            if e != g:
                self.fail(f"{what}: {self.paths[i]} differs:\n--- CLI\n{e[:2000]}\n--- shardcheck\n{g[:2000]}")
        self.assertEqual(len(expected), len(got), what)

    def check_exported_twin(self, path, text, lowered, exported, cli_twins):
        """A bytecode Exported: read as bytecode (its text never asked for), the C CLI's report of the
        .mlirbc file (but for the name), and the text twin's findings."""
        data = exported.to_dict()
        self.assertEqual(data["input"]["format"], "bytecode", path)
        expected = cli_twins[twin_path(path)]
        expected["input"]["name"] = path
        self.assertEqual(data, expected, path)
        self.assertEqual(findings(exported, "loc(" in text), findings(lowered, "loc(" in text), path)

    def check_variant(self, mesh, mesh_args):
        cli = json.loads(self.cli("json", mesh_args))
        self.assertEqual(cli["schema"], "shardcheck.results.v1")
        self.assertEqual((cli["summary"]["inputs"], cli["failures"]), (len(self.paths), []))
        # Each element of the CLI's `reports`, dumped compactly, is the library's compact report JSON.
        expected = [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in cli["reports"]]
        twin_paths = [t for t in map(twin_path, self.paths) if t]
        rc, out, err = support.run_cli("check", "--no-config", "--format", "json", *mesh_args, *twin_paths)
        self.assertEqual(err, "", "the CLI could not check every .mlirbc twin")
        cli_twins = {r["input"]["name"]: r for r in json.loads(out)["reports"]}
        reports, local, twins = [], [], 0
        for path, text in zip(self.paths, self.texts):
            objs = wrappers(path, text)
            got = [self.check_wrapped(path, o, mesh=mesh) for o in objs]
            for o, r in zip(objs[1:], got[1:]):
                if isinstance(o, Exported) and twin(path) is not None:
                    self.check_exported_twin(path, text, got[0], r, cli_twins)
                    self.assertEqual(o.text_calls, 0, path)
                    twins += 1
                else:
                    self.assertEqual(r.to_json(), got[0].to_json(), f"{path}: {type(o).__name__} differs")
                    if isinstance(o, Exported):
                        self.assertEqual(o.text_calls, 1)
            for o in objs:
                if isinstance(o, Lowered):
                    self.assertEqual(o.calls, [{"dialect": None, "debug_info": True}])
            reports.append(got[0])
            local.append(got)
        self.assertGreater(twins, 50, "the corpus's .mlirbc twins were not found")
        got_json = [r.to_json(pretty=False) for r in reports]
        if got_json != expected:
            self.first_difference(expected, got_json, "in-process JSON")
        self.assertEqual([r.to_dict() for r in reports], cli["reports"])
        # The whole outputs of `python3 -m shardcheck check`, byte for byte (text, results JSON, SARIF).
        results = [(p, r, None) for p, r in zip(self.paths, reports)]
        self.assertEqual(shardcheck_main._text(results, False), self.cli("text", mesh_args))
        self.assertEqual(shardcheck_main._results_json(results), self.cli("json", mesh_args))
        self.assertEqual(_lib.library().sarif_log(reports, [], str(support.REPO)) + "\n", self.cli("sarif", mesh_args))
        for r, path in list(zip(reports, self.paths))[::30]:  # one input: the same wrapper, one report
            rc, out, err = support.run_cli("check", "--no-config", "--format", "json", *mesh_args, path)
            self.assertEqual(json.loads(out)["reports"], [r.to_dict()], path)
            self.assertEqual(r.ok, rc == 0, path)
        return local

    def check_remote(self, mesh, local_reports):
        d = support.daemon()
        for i, (path, text, local) in enumerate(zip(self.paths, self.texts, local_reports)):
            objs = wrappers(path, text)
            k = i % len(objs)
            r = self.check_wrapped(path, objs[k], mesh=mesh, server=d.address, timeout=120)
            self.assertEqual(r.to_json(), local[k].to_json(), f"{path}: remote JSON differs")
            self.assertEqual(r.to_json(pretty=False), local[k].to_json(pretty=False), f"{path}: remote compact JSON")
            if i % 3 == 0:
                self.assertEqual(str(r), str(local[k]), f"{path}: remote text differs")

    def test_no_mesh(self):
        reports = self.check_variant(None, [])
        self.assertTrue(any(not r[0].ok for r in reports) and any(r[0].ok for r in reports))
        self.check_remote(None, reports)

    def test_jax_mesh(self):
        reports = self.check_variant(MESH, ["--mesh", MESH_SPEC])
        self.assertTrue(all(r[0].to_dict()["mesh"]["source"] == "request" for r in reports))
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
