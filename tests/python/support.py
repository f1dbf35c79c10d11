"""Shared by the tests/python suite: paths, the C CLI, one shardcheckd for the whole suite, and fakes of
the JAX objects shardcheck accepts, with JAX's attribute names and call signatures.

Run from the repository root with Debian's /usr/bin/python3 (`make python-test`); BUILD names the
build directory (default build/)."""
import atexit
import enum
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / os.environ.get("BUILD", "build")
CLI = BUILD / "bin" / "shardcheck"
DAEMON = BUILD / "bin" / "shardcheckd"
LIB = BUILD / "lib" / "libshardcheck.so"
CORPUS = REPO.parent / "shared" / "corpus"
PYTHONPATH = REPO / "client" / "python"
# A small message limit so that the larger corpus modules go through CheckStream.
DAEMON_MAX_MESSAGE_BYTES = 64 << 10

os.environ["SHARDCHECK_LIB"] = str(LIB)
os.environ.setdefault("GRPC_VERBOSITY", "NONE")  # the refused handshakes of the TLS tests are expected
os.environ["SHARDCHECK_PROTO_PATH"] = str(BUILD / "python")
sys.path.insert(0, str(PYTHONPATH))

import shardcheck  # noqa: E402,F401


def module_files():
    """Every corpus module (../shared/corpus .mlir/.hlo) and every tests/modules file, sorted."""
    corpus = [p for p in CORPUS.rglob("*") if p.suffix in (".mlir", ".hlo") and p.is_file()]
    own = [p for p in (REPO / "tests" / "modules").rglob("*") if p.is_file()]
    if len(corpus) < 100 or not own:
        raise RuntimeError(f"corpus not found: {CORPUS} ({len(corpus)} modules), tests/modules ({len(own)})")
    return sorted(corpus) + sorted(own)


def rel(p):
    """A path as the tests hand it to the CLI and to check(name=...): relative to the repository root."""
    return os.path.relpath(p, REPO)


def run_cli(*args, stdin=None, cwd=REPO):
    r = subprocess.run([str(CLI), *map(str, args)], cwd=cwd, input=stdin, capture_output=True, timeout=600)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


def run_py(*args, env=None, cwd=REPO, code=None):
    """/usr/bin/python3 -m shardcheck ARGS (or -c CODE) in a child process."""
    cmd = [sys.executable] + (["-c", code] if code is not None else ["-m", "shardcheck"]) + [str(a) for a in args]
    full_env = dict(os.environ, PYTHONPATH=str(PYTHONPATH))
    full_env.update(env or {})
    r = subprocess.run(cmd, cwd=cwd, env={k: v for k, v in full_env.items() if v is not None},
                       capture_output=True, timeout=600)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


# --- one daemon for the suite ------------------------------------------------------------------------

class Daemon:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sc-pytest.")
        self.log_path = Path(self.dir) / "daemon.log"
        port_file = Path(self.dir) / "port"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [str(DAEMON), "--listen", "127.0.0.1:0", "--port-file", str(port_file), "--workers", "2",
             "--max-message-bytes", str(DAEMON_MAX_MESSAGE_BYTES), "--log-level", "info"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(1200):  # bounded poll, 60 s
            if port_file.exists() and port_file.read_text().strip():
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"shardcheckd exited: {self.log_path.read_text()}")
            time.sleep(0.05)
        else:
            raise RuntimeError("shardcheckd did not write its port")
        self.address = f"127.0.0.1:{port_file.read_text().strip()}"

    def log_lines(self, needle):
        return [ln for ln in self.log_path.read_text().splitlines() if needle in ln]

    def stop(self):
        from shardcheck import _remote
        _remote.close_clients()  # an open connection would hold the daemon's drain for seconds
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_daemon = None
_daemon_lock = threading.Lock()


def daemon() -> Daemon:
    global _daemon
    with _daemon_lock:
        if _daemon is None:
            _daemon = Daemon()
            atexit.register(_daemon.stop)
        return _daemon


def free_port():
    """A port nothing listens on (bound, then closed)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- fakes of the JAX objects, with JAX's names and signatures ------------------------------------------

class Lowered:
    """jax.stages.Lowered: as_text(dialect=None, *, debug_info=False). Without debug_info JAX drops the
    locations; this fake marks that text so a test that loses debug info cannot pass."""

    def __init__(self, text):
        self._text = text
        self.calls = []

    def as_text(self, dialect=None, *, debug_info=False):
        self.calls.append({"dialect": dialect, "debug_info": debug_info})
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"unknown dialect {dialect}")
        return self._text if debug_info else "// printed without debug info\n" + self._text

    def compile(self):
        return Compiled(self._text)


class Compiled:
    """jax.stages.Compiled: as_text() is the optimized HLO."""

    def __init__(self, text):
        self._text = text
        self.calls = 0

    def as_text(self):
        self.calls += 1
        return self._text


class Exported:
    """jax.export.Exported: mlir_module_serialized (MLIR bytecode) and mlir_module() (its text)."""

    def __init__(self, text, fun_name="f", serialized=b"ML\xefR fake bytecode"):
        self._text = text
        self.fun_name = fun_name
        self.mlir_module_serialized = serialized
        self.text_calls = 0
        self.nr_devices = 1

    def mlir_module(self):
        self.text_calls += 1
        return self._text


class AxisType(enum.Enum):
    """jax.sharding.AxisType."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class Device:
    """jax.Device: .id and .platform."""

    def __init__(self, id, platform="tpu"):
        self.id = id
        self.platform = platform
        self.device_kind = {"tpu": "TPU v5 lite", "gpu": "NVIDIA H100", "cpu": "cpu"}.get(platform, platform)

    def __repr__(self):
        return f"{self.platform.upper()}Device(id={self.id})"


class DeviceArray:
    """The numpy object ndarray a Mesh holds (numpy is not needed): .shape, .ndim, .size, .flat (row-major)."""

    def __init__(self, flat, shape):
        assert len(flat) == math.prod(shape)
        self._flat = list(flat)
        self.shape = tuple(shape)
        self.ndim = len(shape)
        self.size = len(flat)

    @property
    def flat(self):
        return iter(self._flat)


class Mesh:
    """jax.sharding.Mesh(devices, axis_names, axis_types=None)."""

    def __init__(self, devices, axis_names, axis_types=None):
        self.devices = devices
        self.axis_names = tuple(axis_names)
        self.axis_types = axis_types if axis_types is not None else (AxisType.Auto,) * len(self.axis_names)

    @property
    def shape(self):
        return OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self):
        return self.devices.shape

    @property
    def size(self):
        return self.devices.size


class AbstractMesh:
    """jax.sharding.AbstractMesh(axis_sizes, axis_names, axis_types=None): no devices."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = axis_types if axis_types is not None else (AxisType.Auto,) * len(self.axis_names)

    @property
    def shape(self):
        return OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def devices(self):
        raise AttributeError("AbstractMesh has no devices")


def make_mesh(shape, names, ids=None, platform="tpu", axis_types=None):
    n = math.prod(shape)
    ids = list(range(n)) if ids is None else ids
    return Mesh(DeviceArray([Device(i, platform) for i in ids], shape), names, axis_types)
