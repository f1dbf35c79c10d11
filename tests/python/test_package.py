"""The package as shipped: libshardcheck.so exports the public API and nothing else, the ctypes
structs match the C ones, the package imports without jax (and in-process without grpc), from a
checkout and after `pip install --no-build-isolation` (offline, Debian's setuptools)."""
import ctypes
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import support

from shardcheck import _lib

PUBLIC_HEADERS = ("lib/shardcheck.h", "lib/util/arena.h")


def declared_functions():
    """Functions the public headers declare (a C-aware scan: comments and macros removed)."""
    names = set()
    for h in PUBLIC_HEADERS:
        text = re.sub(r"/\*.*?\*/", " ", (support.REPO / h).read_text(), flags=re.S)
        text = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
        for decl in text.split(";"):
            m = re.search(r"\b(sc_\w+)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*(__attribute__\s*\(\(.*\)\))?\s*$", decl.strip(),
                          flags=re.S)
            if m and "typedef" not in decl and "{" not in decl.split(m.group(1))[0][-40:]:
                names.add(m.group(1))
    return names


def nm(path, *flags):
    out = subprocess.run(["nm", *flags, str(path)], capture_output=True, text=True, check=True).stdout
    return {ln.split()[-1] for ln in out.splitlines() if len(ln.split()) == 3 and ln.split()[1] in "TtDdBbRr"}


class SharedLibraryTest(unittest.TestCase):
    def test_exports_exactly_the_public_api(self):
        public = declared_functions()
        self.assertIn("sc_check", public)
        self.assertIn("sc_arena_new", public)
        exported = nm(support.LIB, "-D", "--defined-only")
        self.assertEqual(exported, public)
        defined = nm(support.BUILD / "lib" / "libshardcheck.a", "--defined-only")
        internal = defined - public
        self.assertTrue(internal, "the static library has internal functions")
        self.assertFalse(internal & exported)
        # sc_ is the public API's prefix only (internals carry their module's: ar_, ir_, md_, ru_, ...)
        self.assertEqual({s for s in defined if s.startswith("sc_")}, public)

    def test_struct_layouts_match_c(self):
        """ctypes mirrors sc_options, sc_target_mesh and sc_mesh_axis: sizes and offsets from the compiler."""
        structs = {"sc_options": _lib.OptionsStruct, "sc_target_mesh": _lib.TargetMeshStruct,
                   "sc_mesh_axis": _lib.MeshAxisStruct}
        lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "shardcheck.h"', "int main(void) {"]
        expected = []
        for cname, cls in structs.items():
            lines.append(f'printf("%zu\\n", sizeof({cname}));')
            expected.append(ctypes.sizeof(cls))
            for field, _ in cls._fields_:
                lines.append(f'printf("%zu\\n", offsetof({cname}, {field}));')
                expected.append(getattr(cls, field).offset)
        lines.append("return 0; }")
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = Path(tmp) / "layout.c", Path(tmp) / "layout"
            src.write_text("\n".join(lines))
            subprocess.run(["cc", "-std=c11", f"-I{support.REPO / 'lib'}", str(src), "-o", str(exe)], check=True)
            got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
        self.assertEqual(got, expected)


BLOCKER = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ImportError('blocked by the test: ' + name)
sys.meta_path.insert(0, Block())
"""


class ImportTest(unittest.TestCase):
    def run_blocked(self, blocked, body, env=None):
        code = f"BLOCKED = {blocked!r}\n" + BLOCKER + body
        rc, out, err = support.run_py(code=code, env=env)
        self.assertEqual(rc, 0, err)
        return out

    def test_no_jax_no_numpy_no_grpc_in_process(self):
        body = ("import sys, shardcheck\n"
                "sys.path.insert(0, 'tests/python')\n"
                "from support import Lowered, make_mesh\n"
                "r = shardcheck.check(Lowered(open('examples/pallas_kernel_outside_shard_map.mlir').read()),"
                " mesh=make_mesh((4,), ('data',)))\n"
                "assert not r.ok and r.errors[0].code == 'SC0301', r\n"
                "assert not any(m.split('.')[0] in BLOCKED for m in sys.modules), sorted(sys.modules)\n"
                "try:\n    shardcheck.check('module {}', server='127.0.0.1:1')\n"
                "except ImportError as e:\n    assert 'python3-grpcio' in str(e), e\n"
                "else:\n    raise AssertionError('remote without grpc')\n"
                "print('ok')\n")
        out = self.run_blocked(("jax", "jaxlib", "numpy", "grpc", "google"), body)
        self.assertEqual(out, "ok\n")

    def test_no_jax_remote(self):
        body = ("import sys, shardcheck\n"
                f"r = shardcheck.check('module {{}}', server={support.daemon().address!r}, timeout=30)\n"
                "assert r.ok\n"
                "assert 'jax' not in sys.modules\n"
                "print('ok')\n")
        self.assertEqual(self.run_blocked(("jax", "jaxlib", "numpy"), body), "ok\n")

    def test_from_checkout_without_settings(self):
        """PYTHONPATH=client/python finds build/lib/libshardcheck.so and build/python/ of the checkout."""
        code = ("import shardcheck, shardcheck._lib as l, shardcheck._remote as r\n"
                "print(l.library().path); print(r.pb2().__file__)\n")
        rc, out, err = support.run_py(code=code, env={"SHARDCHECK_LIB": None, "SHARDCHECK_PROTO_PATH": None},
                                      cwd="/")
        if support.BUILD == support.REPO / "build":
            self.assertEqual(rc, 0, err)
            self.assertEqual(out.split("\n")[:2], [str(support.LIB), str(support.BUILD / "python" / "shardcheck" / "v1"
                                                                          / "shardcheck_pb2.py")])
        else:  # a build elsewhere is found only through SHARDCHECK_LIB
            self.assertIn("LibraryNotFoundError", err)

    def test_pip_install(self):
        """pip install --no-build-isolation (offline) into a target directory: the package bundles the library
        and generated messages, and works from anywhere without settings."""
        if not shutil.which("protoc"):
            self.fail("protoc (protobuf-compiler) is needed to build the package")
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "site"
            r = subprocess.run([support.sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                                "--no-index", "--disable-pip-version-check", "--target", str(target),
                                str(support.PYTHONPATH)], capture_output=True, text=True, cwd=tmp,
                               env=dict(support.os.environ, SHARDCHECK_LIB=str(support.LIB), PIP_NO_CACHE_DIR="1"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertTrue((target / "shardcheck" / "libshardcheck.so").is_file())
            self.assertTrue((target / "shardcheck" / "_proto" / "shardcheck_pb2.py").is_file())
            code = ("import shardcheck, shardcheck._lib as l, shardcheck._remote as r\n"
                    "print(l.library().path); print(r.pb2().__file__)\n"
                    "print(shardcheck.check('module {}').ok)\n"
                    f"print(shardcheck.check('module {{}}', server={support.daemon().address!r}, timeout=30).ok)\n")
            env = dict(support.os.environ, PYTHONPATH=str(target))
            for k in ("SHARDCHECK_LIB", "SHARDCHECK_PROTO_PATH"):
                env.pop(k, None)
            r = subprocess.run([support.sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split("\n")[:4], [str(target / "shardcheck" / "libshardcheck.so"),
                                                        str(target / "shardcheck" / "_proto" / "shardcheck_pb2.py"),
                                                        "True", "True"])
        for leftover in ("build", "shardcheck.egg-info"):  # setuptools builds in the source tree
            shutil.rmtree(support.PYTHONPATH / leftover, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
