"""The Python API on its own: what check() accepts, Report, errors, explain/rules, and
`python3 -m shardcheck` against the C CLI."""
import contextlib
import html
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import support
from support import Compiled, Exported, Lowered

import shardcheck
from shardcheck import _inputs, _lib
from shardcheck import __main__ as shardcheck_main

BAD = "examples/pallas_kernel_outside_shard_map.mlir"
GOOD = "tests/modules/kernel/kernel-outside-manual.toplevel.good.mlir"
HLO_BAD = "tests/modules/callback/callback-sharding-in-manual.bad.hlo"
SPLIT = "../shared/corpus/shardy/verifier/constant_verification.mlir"


def read(path):
    return (support.REPO / path).read_text()


class InputsTest(unittest.TestCase):
    def test_each_accepted_kind(self):
        text = read(BAD)
        want = shardcheck.check(pathlib.Path(support.REPO / BAD), name="m").to_json()
        for obj in (text, text.encode(), bytearray(text.encode()), memoryview(text.encode()),
                    support.REPO / BAD, Lowered(text), Exported(text, serialized=text.encode())):
            with self.subTest(kind=type(obj).__name__):
                self.assertEqual(shardcheck.check(obj, name="m").to_json(), want)
        hlo = read(HLO_BAD)
        c = Compiled(hlo)
        self.assertEqual(shardcheck.check(c, name="m").to_json(), shardcheck.check(hlo, name="m").to_json())
        self.assertEqual(c.calls, 1)

    def test_str_path(self):
        """check("model.mlir") is the file, as the CLI takes it; a str that is neither text nor a file is refused."""
        cwd = os.getcwd()
        try:
            os.chdir(support.REPO)
            r = shardcheck.check(BAD)
            self.assertEqual(r.name, BAD)
            self.assertEqual(r.to_json(), shardcheck.check(support.REPO / BAD, name=BAD).to_json())
            self.assertNotIn("SC0001", [d.code for d in r.diagnostics])
            with self.assertRaisesRegex(TypeError, "neither module text nor an existing file"):
                shardcheck.check("no/such/model.mlir")
        finally:
            os.chdir(cwd)

    def test_text_shows_the_python_line(self):
        """print(report) leads with the Python location and shows its line, as the CLI does from the same
        directory."""
        module = (read("tests/modules/kernel/kernel-outside-manual.partial.bad.mlir")
                  .replace('#loc1 = loc("model.py":88:12)', '#loc1 = loc("src/model.py":4:11)')
                  .replace("-> tensor<16x128xf32> // expect: SC0301", "-> tensor<16x128xf32> loc(#loc1)"))
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as d:
            try:
                os.chdir(d)
                os.mkdir("src")
                Path("src/model.py").write_text("import jax\n\ndef step(x):\n    return pl.pallas_call(k, out_shape=x)(x)\n")
                Path("k.mlir").write_text(module)
                text = str(shardcheck.check(Path("k.mlir"), name="k.mlir"))
                self.assertTrue(text.startswith("src/model.py:4:11: error: Mosaic kernels cannot be automatically "
                                                "partitioned. Please wrap the call in a shard_map. [SC0301]\n"
                                                "    4 |     return pl.pallas_call(k, out_shape=x)(x)\n"
                                                "      |            ^~~~~~~~~~~~~~\n"
                                                "      = module: k.mlir:6:34\n"), text)
                rc, out, err = support.run_cli("check", "--no-config", "--no-color", "k.mlir", cwd=d)
                self.assertEqual(text, out, err)
            finally:
                os.chdir(cwd)

    def test_default_names(self):
        text = read(GOOD)
        self.assertEqual(shardcheck.check(text).name, "<string>")
        self.assertEqual(shardcheck.check(text.encode()).name, "<bytes>")
        self.assertEqual(shardcheck.check(Lowered(text)).name, "<lowered>")
        self.assertEqual(shardcheck.check(Compiled(read(HLO_BAD))).name, "<compiled>")
        self.assertEqual(shardcheck.check(Exported(text, fun_name="step")).name, "<exported step>")
        self.assertEqual(shardcheck.check(pathlib.Path(support.REPO / GOOD)).name, str(support.REPO / GOOD))

    def test_unsupported_objects(self):
        class Jitted:  # jax.jit(f): callable, with .lower
            def __call__(self, *a):
                pass

            def lower(self, *a):
                pass
        for obj, extra in ((object(), ""), (42, ""), (None, ""), (["module {}"], ""), (Jitted(), "jax.jit(f).lower")):
            with self.subTest(obj=obj):
                with self.assertRaises(TypeError) as cm:
                    shardcheck.check(obj)
                msg = str(cm.exception)
                for accepted in ("jax.stages.Lowered", "jax.stages.Compiled", "jax.export.Exported", "str", "bytes",
                                 "os.PathLike", extra):
                    self.assertIn(accepted, msg)
        with self.assertRaises(TypeError):
            shardcheck.check(Compiled(12))  # as_text() returning neither str nor bytes
        none_text = Compiled(None)
        with self.assertRaisesRegex(ValueError, "Compiled.as_text\\(\\) returned None"):
            shardcheck.check(none_text)

    def test_exported_bytecode_choice(self):
        """auto: bytecode only when the backend reads it; the switch flips it either way."""
        text = read(BAD)
        serialized = b"ML\xefR\x00 not really bytecode"
        saved_mode, saved_probe = _inputs.EXPORTED_INPUT, _lib.Library.reads_bytecode
        try:
            _lib.Library.reads_bytecode = lambda self: False
            e = Exported(text, serialized=serialized)
            self.assertEqual(shardcheck.check(e).to_dict()["input"]["bytes"], len(text.encode()))
            self.assertEqual(e.text_calls, 1)
            _lib.Library.reads_bytecode = lambda self: True
            e = Exported(text, serialized=serialized)
            self.assertEqual(shardcheck.check(e).to_dict()["input"]["bytes"], len(serialized))
            self.assertEqual(e.text_calls, 0)
            _inputs.EXPORTED_INPUT = "text"
            self.assertEqual(shardcheck.check(Exported(text, serialized=serialized)).to_dict()["input"]["bytes"],
                             len(text.encode()))
            _inputs.EXPORTED_INPUT = "bytecode"
            _lib.Library.reads_bytecode = lambda self: False
            self.assertEqual(shardcheck.check(Exported(text, serialized=serialized)).to_dict()["input"]["bytes"],
                             len(serialized))
        finally:
            _inputs.EXPORTED_INPUT, _lib.Library.reads_bytecode = saved_mode, saved_probe
        # The library of this build: reads_bytecode() is what sc_format_parse("bytecode") says.
        self.assertIsInstance(_lib.library().reads_bytecode(), bool)


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.report = shardcheck.check(support.REPO / BAD, name=BAD, mesh="data=4")
        cls.cli = {fmt: support.run_cli("check", "--no-config", "--format", fmt, "--no-color", "--mesh", "data=4", BAD)
                   for fmt in ("json", "text", "sarif")}

    def test_matches_cli(self):
        r = self.report
        self.assertEqual(self.cli["json"][0], 1)
        results = json.loads(self.cli["json"][1])
        self.assertEqual(results["schema"], "shardcheck.results.v1")
        self.assertEqual(results["reports"], [r.to_dict()])
        self.assertEqual(json.dumps(results["reports"][0], separators=(",", ":"), ensure_ascii=False),
                         r.to_json(pretty=False))
        self.assertEqual(str(r), self.cli["text"][1])
        # The CLI's SARIF resolves paths against its source root; to_sarif() is the library's (and the
        # daemon's) log of this report alone, with the same results.
        self.assertEqual(_lib.library().sarif_log([r], [], str(support.REPO)) + "\n", self.cli["sarif"][1])
        sarif, cli_sarif = json.loads(r.to_sarif()), json.loads(self.cli["sarif"][1])
        self.assertEqual([(x["ruleId"], x["message"]["text"]) for x in sarif["runs"][0]["results"]],
                         [(x["ruleId"], x["message"]["text"]) for x in cli_sarif["runs"][0]["results"]])
        self.assertIn("\033[", r.to_text(color=True))

    def test_html(self):
        """to_html() is the CLI's --format html page, in-process and through the daemon; _repr_html_ holds
        that page in a sandboxed iframe (Jupyter/Colab), escaped once."""
        uneven = "tests/modules/sharding/sharding-uneven-constraint.bad.mlir"
        rc, page, _ = support.run_cli("check", "--no-config", "--format", "html", uneven)
        self.assertEqual(rc, 0)
        local = shardcheck.check(support.REPO / uneven, name=uneven)
        self.assertEqual(local.to_html(), page)
        self.assertIn("class='tensor' data-blocks='4'", page)
        remote = shardcheck.check(support.REPO / uneven, name=uneven, server=support.daemon().address)
        self.assertEqual(remote.to_html(), page)
        frame = local._repr_html_()
        self.assertTrue(frame.startswith("<iframe sandbox "), frame[:80])
        self.assertNotIn("<svg", frame)  # escaped into the srcdoc attribute
        self.assertEqual(html.unescape(frame.split('srcdoc="', 1)[1].rsplit('"></iframe>', 1)[0]), page)

    def test_cost(self):
        # 8 devices of the mesh's device_kind ("TPU v5 lite": 16 GiB); arg 0 f32[16, 128] sharded 8 ways on dim 0
        text = ('sdy.mesh @mesh = <["x"=8]>\n'
                'func.func public @main(%arg0: tensor<16x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})'
                ' -> (tensor<16x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {\n'
                '  return %arg0 : tensor<16x128xf32>\n}\n')
        r = shardcheck.check(text, mesh=support.make_mesh((8,), ("x",)))
        self.assertEqual(r.cost["memory"]["device_memory_bytes"], 16 << 30)
        self.assertEqual(r.cost["memory"]["device_kind"], "TPU v5 lite")
        self.assertEqual(r.cost["memory"]["per_device"],
                         {"arguments_bytes": 1024, "results_bytes": 1024, "donated_bytes": 0, "peak_bytes_lower_bound": 2048})
        self.assertEqual(r.cost["collectives"], [])  # propagation ran; nothing to reshard
        self.assertEqual(r.to_dict()["cost"], r.cost)

    def test_fields(self):
        r = self.report
        self.assertFalse(r.ok)
        data = r.to_dict()
        self.assertEqual(len(r.errors), data["summary"]["errors"])
        self.assertEqual(len(r.warnings), data["summary"]["warnings"])
        self.assertEqual(len(r.diagnostics), len(data["diagnostics"]))
        d, raw = r.diagnostics[0], data["diagnostics"][0]
        self.assertEqual((d.code, d.rule, d.severity, d.message), (raw["code"], raw["rule"], raw["severity"],
                                                                    raw["message"]))
        self.assertEqual(d.location.line, raw["location"]["line"])
        self.assertEqual(d.location.column, raw["location"]["column"])
        kernel = [x for x in r.errors if x.code == "SC0301"]
        self.assertTrue(kernel, "SC0301 expected")
        self.assertEqual(kernel[0].source_location.file, next(
            x for x in data["diagnostics"] if x["code"] == "SC0301")["source_location"]["file"])
        self.assertTrue(kernel[0].fixes and kernel[0].fixes[0].title)
        self.assertIn("SC0301", repr(r) + str(r))
        self.assertEqual(repr(r), f"<shardcheck.Report {BAD}: 1 error, 0 warnings, 0 notes>")
        # The user's Python location leads, with JAX's sentence alone; the module location follows.
        self.assertTrue(str(r).startswith("train.py:44:10: error: Mosaic kernels cannot be automatically partitioned. "
                                          "Please wrap the call in a shard_map. [SC0301]\n"), str(r))
        self.assertIn(f"\n      = module: {BAD}:11:32\n", str(r))
        r.to_dict()["diagnostics"].clear()  # to_dict() is a fresh copy
        self.assertTrue(r.to_dict()["diagnostics"])

    def test_raise_for_errors_and_assert_no_errors(self):
        with self.assertRaises(shardcheck.ShardingError) as cm:
            self.report.raise_for_errors()
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(str(cm.exception), self.cli["text"][1])
        self.assertIs(cm.exception.report, self.report)
        with self.assertRaises(shardcheck.ShardingError):
            shardcheck.assert_no_errors(Lowered(read(BAD)), mesh={"data": 4})
        ok = shardcheck.assert_no_errors(Lowered(read(GOOD)), mesh={"data": 4})
        self.assertTrue(ok.ok)
        self.assertIs(ok.raise_for_errors(), ok)

    def test_span_related_note_and_future_fields(self):
        """End positions, op paths, related sites and fix notes are fields; fields the report gains later
        are kept in `extra` and in to_dict()."""
        r = shardcheck.check(support.REPO / "tests/modules/callback/callback-device-not-in-assignment.bad.mlir",
                             mesh="data=4")
        d, raw = r.diagnostics[0], r.to_dict()["diagnostics"][0]
        self.assertEqual((d.location.end_line, d.location.end_column, d.location.end_offset),
                         (raw["location"]["end_line"], raw["location"]["end_column"], raw["location"]["end_offset"]))
        self.assertTrue(d.related, "a folded diagnostic with related sites expected")
        self.assertEqual([(x.code, x.message, x.location.line) for x in d.related],
                         [(x["code"], x["message"], x["location"]["line"]) for x in raw["related"]])
        data = json.loads(self.report.to_json())
        data["diagnostics"][0]["location"].update(op_path="main/3/1", future=1)
        data["diagnostics"][0]["fixes"][0]["note"] = "why"
        data["diagnostics"][0]["future"] = [2]
        text = json.dumps(data, indent=2)
        r = shardcheck.Report(text, lambda kind: "")
        self.assertEqual(r.to_dict(), data)
        self.assertEqual(r.to_json(), text)
        self.assertEqual((r.diagnostics[0].location.op_path, r.diagnostics[0].location.extra), ("main/3/1", {"future": 1}))
        self.assertEqual(r.diagnostics[0].extra, {"future": [2]})
        self.assertEqual(r.diagnostics[0].fixes[0].note, "why")

    def test_options_match_cli(self):
        cases = [
            ({"rules": "kernel-*", "min_severity": "error"}, ["--rules", "kernel-*", "--min-severity", "error"], BAD),
            ({"rules": ["sharding-*", "-SC0201"]}, ["--rules", "sharding-*,-SC0201"], BAD),
            ({"platform": "gpu", "mesh": {"data": 4}}, ["--platform", "gpu", "--mesh", "data=4"], BAD),
            ({"split_input_file": True}, ["--split-input-file"], SPLIT),
            ({"input_format": "hlo"}, ["--input-format", "hlo"], GOOD),
            ({"max_ops": 3}, ["--max-ops", "3"], BAD),
        ]
        for kwargs, args, path in cases:
            with self.subTest(args=args):
                r = shardcheck.check(support.REPO / path, name=path, **kwargs)
                rc, out, err = support.run_cli("check", "--no-config", "--format", "json", *args, path)
                self.assertEqual(json.loads(out)["reports"], [r.to_dict()], err)


class ErrorsTest(unittest.TestCase):
    def test_bad_options(self):
        for kwargs, pattern in (({"platform": "mips"}, "^platform: unknown platform 'mips'"),
                                ({"min_severity": "fatal"}, "^min_severity: unknown severity"),
                                ({"input_format": "onnx"}, "^input_format: unknown input format"),

                                ({"max_ops": -1}, "^max_ops: "),
                                ({"mesh": {"x": 0}}, r'^mesh.axes\[0\].size: axis "x" has size 0'),
                                ({"rules": "no-such-rule"}, "rule selector 'no-such-rule' matches no rule")):
            with self.subTest(kwargs=kwargs):
                with self.assertRaisesRegex(ValueError, pattern):
                    shardcheck.check(read(GOOD), **kwargs)
        with self.assertRaises(TypeError):
            shardcheck.check(read(GOOD), rules=[1, 2])
        # Formats lib/shardcheck.h names but this library may not read yet: refused by name, not misread.
        for fmt in ("bytecode", "exported"):
            try:
                _lib.library().format_code(fmt)
            except ValueError:
                with self.assertRaisesRegex(ValueError, f"^input_format: this libshardcheck does not read '{fmt}'"):
                    shardcheck.check(read(GOOD), input_format=fmt)

    def test_timeout_in_process(self):
        """A deadline already past cancels the analysis (the library polls the flag): TimeoutError."""
        with self.assertRaisesRegex(TimeoutError, "did not finish within 0 s"):
            shardcheck.check(read(BAD), timeout=0)
        self.assertFalse(shardcheck.check(read(BAD), timeout=60, mesh={"data": 4}).ok)

    def test_timeout_stops_a_running_analysis(self):
        """A 0.8 MB module takes far longer than 1 ms to check: the flag set at the deadline stops it."""
        with tempfile.TemporaryDirectory() as tmp:
            big = Path(tmp) / "large.mlir"
            subprocess.run([sys.executable, str(support.REPO / "tests/bench/gen_module.py"), "pretty", "0.8", str(big)],
                           check=True)
            with self.assertRaisesRegex(TimeoutError, "did not finish within 0.001 s"):
                shardcheck.check(big, timeout=0.001)
            self.assertEqual(shardcheck.check(big, timeout=600).to_dict()["input"]["bytes"], big.stat().st_size)

    def test_memory_limit_in_process(self):
        big = support.CORPUS / "xla/real_world/nv_maxtext_1n1g_jit_train_step_before_optimization.hlo"
        for obj, limit in ((read(BAD), 256), (big, 256 << 10)):  # too small for the report; for the analysis
            with self.assertRaisesRegex(shardcheck.CheckError, "^m: the request needs more memory or work than its limit allows"):
                shardcheck.check(obj, name="m", max_memory=limit)
        self.assertFalse(shardcheck.check(read(BAD), mesh="data=4", max_memory=64 << 20).ok)
        with self.assertRaisesRegex(ValueError, "^max_memory: limits in-process checks"):
            shardcheck.check(read(BAD), max_memory=4096, server="127.0.0.1:1")

    def test_library_not_found(self):
        code = ("import shardcheck\n"
                "try:\n    shardcheck.check('module {}')\n"
                "except ImportError as e:\n    print(type(e).__name__, e)\n")
        for lib in ("/nonexistent/libshardcheck.so", str(support.REPO / "README.md")):
            rc, out, err = support.run_py(env={"SHARDCHECK_LIB": lib}, code=code)
            self.assertEqual(rc, 0, err)
            self.assertTrue(out.startswith("LibraryNotFoundError shardcheck: libshardcheck.so not found"), out)
            self.assertIn("Build it with `make`", out)
            self.assertIn(lib, out)

    def test_server_addresses(self):
        """server= as the C CLI's --server takes it: a host alone is port 50051, http:// is dropped, https:// needs TLS."""
        from shardcheck._remote import grpc_target
        self.assertEqual(grpc_target("localhost", False), "localhost:50051")
        self.assertEqual(grpc_target("[::1]", False), "[::1]:50051")
        self.assertEqual(grpc_target("http://127.0.0.1:8080/", False), "127.0.0.1:8080")
        self.assertEqual(grpc_target("unix:/run/shardcheckd.sock", False), "unix:/run/shardcheckd.sock")
        self.assertEqual(grpc_target("https://host:443", True), "host:443")
        with self.assertRaisesRegex(ValueError, "https:// needs TLS"):
            grpc_target("https://host:443", False)

    def test_install_hints(self):
        """What a fresh install trips over: no grpcio names the pip extra; the build requires wheel; the
        package's CLI says what it is and what it does with a directory."""
        code = ("import sys\nsys.modules['grpc'] = None\nimport shardcheck\n"
                "try:\n    shardcheck.check('module {}', server='127.0.0.1:1')\n"
                "except ImportError as e:\n    print(e)\n")
        rc, out, err = support.run_py(code=code)
        self.assertEqual(rc, 0, err)
        self.assertIn("pip install 'shardcheck[remote]'", out)
        import tomllib
        pyproject = tomllib.loads((support.REPO / "client/python/pyproject.toml").read_text())
        self.assertIn("wheel", pyproject["build-system"]["requires"])
        rc, out, err = support.run_py("check", "--help")
        self.assertIn("the C CLI", " ".join(out.split()))
        rc, out, err = support.run_py("check", "examples")
        self.assertEqual(rc, 2)
        self.assertIn("examples: a directory: python3 -m shardcheck checks files only", err)
        self.assertIn("Debian packages", (support.REPO / "scripts/deps.sh").read_text())
        self.assertIn('echo "shardcheck: running: ${SUDO}apt-get', (support.REPO / "scripts/deps.sh").read_text())

    def test_explain_and_rules(self):
        rc, out, _ = support.run_cli("explain", "SC0301")
        self.assertEqual(shardcheck.explain("SC0301"), out)
        with self.assertRaisesRegex(ValueError, "unknown code 'SC9999'"):
            shardcheck.explain("SC9999")
        rc, out, _ = support.run_cli("rules", "--format", "json")
        self.assertEqual([r.__dict__ for r in shardcheck.rules()], json.loads(out))


class PythonCliTest(unittest.TestCase):
    """python3 -m shardcheck mirrors the C CLI: output and exit status."""

    def same(self, *args, server=None):
        """The C CLI in a child process; the module's main() in this one (test_stdin runs `-m` for real)."""
        extra = ["--server", server] if server else []
        if args and args[0] == "check":  # no shardcheck.json found above the checkout changes the C CLI
            args = ("check", "--no-config", *args[1:])
        rc, out, err = support.run_cli(*args)
        pout, perr = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(support.REPO)
        try:
            with contextlib.redirect_stderr(perr):
                try:
                    prc = shardcheck_main.main([*args, *extra], out=pout)
                except SystemExit as e:  # argparse's usage errors
                    prc = e.code
        finally:
            os.chdir(cwd)
        self.assertEqual((prc, pout.getvalue()), (rc, out), f"{args}: {perr.getvalue()}")
        return rc, perr.getvalue()

    def test_check_outputs(self):
        d = support.daemon()
        for server in (None, d.address):
            for fmt in ("json", "text", "sarif") if server is None else ("json", "text"):
                self.same("check", "--format", fmt, "--no-color", BAD, GOOD, HLO_BAD, server=server)
                self.same("check", "--no-color", "--format", fmt, GOOD, "--mesh", "data=4:explicit", server=server)
            self.assertEqual(self.same("check", GOOD, server=server)[0], 0)
            self.assertEqual(self.same("check", "--no-color", "--mesh", "data=4", BAD, server=server)[0], 1)
            rc, err = self.same("check", "no/such/file.mlir", server=server)
            self.assertEqual(rc, 2)
            self.assertIn("no/such/file.mlir: No such file or directory", err)
            rc, err = self.same("check", "--mesh", "x=0", GOOD, server=server)
            self.assertEqual(rc, 2)
            self.assertIn('--mesh: mesh.axes[0].size: axis "x" has size 0, must be >= 1', err)
            self.same("check", "--format", "json", "--no-color", BAD, "no/such/file.mlir", server=server)
            self.same("check", "--format", "text", "--no-color", "no/such/file.mlir", GOOD, server=server)
            self.assertEqual(self.same("check", "--format", "yaml", GOOD, server=server)[0], 2)
            self.same("rules", server=server)
            self.same("rules", "--format", "json", server=server)
            self.same("explain", "SC0301", "SC0101", server=server)
            self.assertEqual(self.same("explain", "SC9999", server=server)[0], 2)
        self.assertEqual(self.same("check")[0], 2)
        self.same("check", "--format", "sarif", BAD, "no/such/file.mlir")  # the input not checked, in the log
        perr = io.StringIO()
        with contextlib.redirect_stderr(perr):
            rc = shardcheck_main.main(["check", "--format", "sarif", "--server", d.address, BAD], out=io.StringIO())
        self.assertEqual(rc, 2)
        self.assertIn("--format sarif works in-process only", perr.getvalue())

    def test_remote_without_library(self):
        """Through a daemon the package needs no libshardcheck.so: the results JSON (its tool from the
        daemon's capabilities when no input was checked) is still the C CLI's."""
        d = support.daemon()
        for files in ([BAD, GOOD], ["no/such/file.mlir"]):
            rc, out, err = support.run_cli("check", "--no-config", "--format", "json", "--mesh", "data=4", *files)
            p = support.run_py("check", "--format", "json", "--mesh", "data=4", "--server", d.address, *files,
                               env={"SHARDCHECK_LIB": "/nonexistent/libshardcheck.so"})
            self.assertEqual(p[:2], (rc, out), p[2])

    def test_stdin(self):
        import subprocess
        text = (support.REPO / BAD).read_bytes()
        c = subprocess.run([str(support.CLI), "check", "--no-config", "--format", "json", "-"], input=text,
                           capture_output=True)
        p = subprocess.run([os.sys.executable, "-m", "shardcheck", "check", "--format", "json", "-"], input=text,
                           capture_output=True, env=dict(os.environ, PYTHONPATH=str(support.PYTHONPATH)))
        self.assertEqual((p.returncode, p.stdout), (c.returncode, c.stdout), p.stderr)


if __name__ == "__main__":
    unittest.main()


PROPAGATE = "../shared/corpus/shardy/propagation/user_priority_propagation.mlir"


class PropagateTest(unittest.TestCase):
    """shardcheck.propagate() is `shardcheck propagate` in-process: the same bytes for the same flags."""

    def cli(self, *args):
        return subprocess.run([str(support.REPO / "build" / "bin" / "shardcheck"), "propagate", *args],
                              capture_output=True, check=True, cwd=support.REPO).stdout.decode()

    def test_same_as_the_cli(self):
        for strategy in ("pipeline", "user-priority", "basic"):
            with self.subTest(strategy=strategy):
                got = shardcheck.propagate(support.REPO / PROPAGATE, strategy=strategy, split_input_file=True)
                self.assertEqual(got, self.cli("--strategy", strategy, "--split-input-file", PROPAGATE))
                self.assertIn("sdy.sharding", got)

    def test_json_names_each_value_and_origin(self):
        text = ('sdy.mesh @mesh = <["data"=4]>\n'
                'func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})'
                ' -> tensor<8x16xf32> {\n'
                '  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x16xf32>\n'
                '  return %0 : tensor<8x16xf32>\n}\n')
        doc = json.loads(shardcheck.propagate(text, format="json"))
        self.assertEqual(doc["schema"], "shardcheck.propagation.v1")
        values = {v["value"]: v for v in doc["modules"][0]["values"]}
        self.assertEqual(values["%0"]["sharding"], '<@mesh, [{"data"}, {}]>')  # the pipeline closes shardings
        basic = json.loads(shardcheck.propagate(text, format="json", strategy="basic"))
        self.assertEqual({v["value"]: v for v in basic["modules"][0]["values"]}["%0"]["sharding"],
                         '<@mesh, [{"data", ?}, {?}]>')  # a single pass leaves its dimensions open
        self.assertEqual((values["%0"]["line"], values["%0"]["origin"]), (3, {"value": "%arg0", "line": 2, "col": 24}))

    def test_gspmd_named_by_the_mesh(self):
        text = ('func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})'
                ' -> tensor<8x16xf32> {\n  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>\n'
                '  return %0 : tensor<8x16xf32>\n}\n')
        doc = json.loads(shardcheck.propagate(text, format="json", mesh={"data": 4}))
        values = {v["value"]: v["sharding"] for v in doc["modules"][0]["values"]}
        self.assertIn('[{"data"}, {}]', values["%0"])

    def test_refusals(self):
        with self.assertRaisesRegex(ValueError, "unknown strategy"):
            shardcheck.propagate(read(BAD), strategy="fastest")
        with self.assertRaisesRegex(ValueError, "expected an operation"):
            shardcheck.propagate(b"garbage")
        with self.assertRaisesRegex(ValueError, "--format json reads every format"):
            shardcheck.propagate(read(HLO_BAD))

    def test_check_propagates_unless_told_not_to(self):
        """A kernel fed a value sharded only through propagation: flagged by default, not with propagate=False."""
        text = ('sdy.mesh @mesh = <["data"=4]>\n'
                'func.func public @main(%arg0: tensor<8x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})'
                ' -> tensor<8x128xf32> {\n'
                '  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x128xf32>\n'
                '  %1 = stablehlo.custom_call @tpu_custom_call(%0) {backend_config = "{}"} : (tensor<8x128xf32>)'
                ' -> tensor<8x128xf32>\n  return %1 : tensor<8x128xf32>\n}\n')
        codes = [d.code for d in shardcheck.check(text, mesh="data=4:explicit").diagnostics]
        self.assertIn("SC0302", codes)
        codes = [d.code for d in shardcheck.check(text, mesh="data=4:explicit", propagate=False).diagnostics]
        self.assertNotIn("SC0302", codes)
