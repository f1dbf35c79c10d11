"""In-process checks: libshardcheck.so through ctypes (no compiler at install time).

The library is found through SHARDCHECK_LIB, then next to this package (an installed package bundles
it), then in the checkout this package sits in (build/lib/, written by `make`). Only the structs of
the options and the target mesh are mirrored here; reports are read from the JSON the library renders,
so this file does not change when the report grows."""
from __future__ import annotations

import ctypes
import json
import os
import threading
import weakref
from ctypes import POINTER, Structure, byref, c_bool, c_char_p, c_int, c_int64, c_size_t, c_uint32, c_uint64, c_void_p
from pathlib import Path

from ._errors import CheckError, LibraryNotFoundError
from ._report import Report, Rule

SEVERITIES = {"note": 0, "warning": 1, "error": 2}
AXIS_TYPES = {"auto": 0, "explicit": 1, "manual": 2}
PLATFORMS = {None: 0, "tpu": 1, "gpu": 2, "cpu": 3}
SC_OK, SC_ERR_CANCELLED, SC_ERR_LIMIT, SC_ERR_INVALID = 0, 1, 2, 3


class MeshAxisStruct(Structure):  # sc_mesh_axis
    _fields_ = [("name", c_char_p), ("size", c_int64), ("type", c_int)]


class TargetMeshStruct(Structure):  # sc_target_mesh
    _fields_ = [("axes", POINTER(MeshAxisStruct)), ("naxes", c_size_t), ("device_ids", POINTER(c_int64)),
                ("ndevice_ids", c_size_t), ("platform", c_int), ("device_kind", c_char_p)]


class CostThresholdsStruct(Structure):  # sc_cost_thresholds
    _fields_ = [("replicated_fraction", ctypes.c_double), ("replicated_min_bytes", c_int64),
                ("padding_fraction", ctypes.c_double), ("padding_min_bytes", c_int64),
                ("max_implicit_collective_bytes", c_int64)]


class OptionsStruct(Structure):  # sc_options
    _fields_ = [("input_format", c_int), ("input_name", c_char_p), ("rules", c_char_p), ("min_severity", c_int),
                ("split_input_file", c_bool), ("mesh", POINTER(TargetMeshStruct)), ("platform", c_int),
                ("max_depth", c_uint32), ("max_ops", c_uint32), ("cancel", POINTER(c_int)),
                ("input_sha256", c_char_p), ("sha256_by_caller", c_bool), ("hash_seed", c_uint64), ("no_propagate", c_bool),
                ("device_memory_bytes", c_int64), ("thresholds", CostThresholdsStruct)]


class PropagateOptionsStruct(Structure):  # sc_propagate_options
    _fields_ = [("strategy", c_int), ("annotate_rules", c_bool), ("conservative", c_bool),
                ("keep_sharding_rules", c_bool), ("dedup_functions_fully", c_bool), ("split_input_file", c_bool),
                ("input_format", c_int), ("max_depth", c_uint32), ("max_ops", c_uint32), ("hash_seed", c_uint64),
                ("cancel", POINTER(c_int)), ("insert_reshards", c_bool), ("reshards_to_collectives", c_bool),
                ("json", c_bool), ("mesh", POINTER(TargetMeshStruct)), ("keep_redundant_reshards", c_bool),
                ("insert_reshards_partial", c_bool), ("propagate_to_func_results", c_bool)]


class PropagateMessageStruct(Structure):  # sc_propagate_message
    _fields_ = [("severity", c_int), ("line", c_uint32), ("col", c_uint32), ("message", c_char_p)]


class PropagateResultStruct(Structure):  # sc_propagate_result
    _fields_ = [("text", c_void_p), ("len", c_size_t), ("messages", POINTER(PropagateMessageStruct)),
                ("nmessages", c_size_t), ("failure", c_char_p)]


# sc_propagate_strategy, by the names `shardcheck propagate --strategy` takes
STRATEGIES = {"pipeline": 0, "none": 1, "basic": 2, "aggressive": 3, "op-priority": 4, "user-priority": 5}


LOCATE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, c_bool, c_void_p, c_size_t)
SC_PATH_MISSING, SC_PATH_UNDER_ROOT, SC_PATH_ABSOLUTE = 0, 1, 2


SOURCE_LINE_FN = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_char_p, c_uint32, POINTER(c_size_t))


class TextOptionsStruct(Structure):  # sc_text_options
    _fields_ = [("color", c_bool), ("summary", c_bool), ("width", ctypes.c_uint), ("source_line", SOURCE_LINE_FN),
                ("source_user", c_void_p)]


def _source_line_reader():
    """The Python line a diagnostic names, read from the current directory as the CLI reads it from its
    source root; the buffer lives until the next call (what sc_source_line_fn promises)."""
    held, files = [], {}

    def read(_user, file, line, length):
        path = os.fsdecode(file)
        if path not in files:
            try:
                with open(path, "rb") as f:
                    files[path] = f.read(64 << 20).split(b"\n")
            except OSError:
                files[path] = None
        lines = files[path]
        if not lines or not 1 <= line <= len(lines):
            return None
        text = lines[line - 1].rstrip(b"\r")
        held[:] = [ctypes.create_string_buffer(text, len(text) + 1)]
        length[0] = len(text)
        return ctypes.cast(held[0], c_void_p).value
    return SOURCE_LINE_FN(read)


class SarifOptionsStruct(Structure):  # sc_sarif_options
    _fields_ = [("help_uri_base", c_char_p), ("source_root", c_char_p), ("locate", LOCATE_FN), ("user", c_void_p),
                ("fingerprints", c_void_p), ("tool_errors", POINTER(c_char_p)), ("ntool_errors", c_size_t)]


def candidates() -> list[Path]:
    """Where the library is looked for, in order."""
    env = os.environ.get("SHARDCHECK_LIB")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    found = [here / "libshardcheck.so"]
    if len(here.parents) >= 3:  # a checkout: client/python/shardcheck -> the repository root
        found.append(here.parents[2] / "build" / "lib" / "libshardcheck.so")
    return found


def _declare(lib):
    sig = {
        "sc_arena_new": (c_void_p, [c_size_t]),
        "sc_arena_free": (None, [c_void_p]),
        "sc_check": (c_int, [c_void_p, c_char_p, c_size_t, POINTER(OptionsStruct), POINTER(c_void_p)]),
        "sc_propagate": (c_int, [c_void_p, c_char_p, c_size_t, POINTER(PropagateOptionsStruct),
                                 POINTER(PropagateResultStruct)]),
        "sc_mesh_parse": (c_int, [c_void_p, c_char_p, POINTER(TargetMeshStruct), POINTER(c_char_p)]),
        "sc_format_parse": (c_int, [c_char_p, POINTER(c_int)]),
        "sc_report_json": (c_void_p, [c_void_p, c_bool]),
        "sc_report_text": (c_void_p, [c_void_p, c_bool]),
        "sc_report_text_ex": (c_void_p, [c_void_p, POINTER(TextOptionsStruct)]),
        "sc_report_sarif": (c_void_p, [c_void_p]),
        "sc_report_html": (c_void_p, [c_void_p]),
        "sc_report_sarif_many": (c_void_p, [POINTER(c_void_p), c_size_t, POINTER(SarifOptionsStruct)]),
        "sc_rule_count": (c_size_t, []),
        "sc_rule_info": (None, [c_size_t] + [POINTER(c_char_p)] * 3 + [POINTER(c_int), POINTER(c_char_p)]),
        "sc_severity_name": (c_char_p, [c_int]),
        "sc_explain_text": (c_void_p, [c_char_p]),
        "sc_rules_version": (c_char_p, []),
    }
    for name, (restype, argtypes) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


class Library:
    """libshardcheck.so, loaded once per process."""

    def __init__(self, path: Path):
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        _declare(self.lib)
        libc = ctypes.CDLL(None)
        self._free = libc.free
        self._free.argtypes, self._free.restype = [c_void_p], None

    def take_string(self, ptr) -> str:
        """A malloc'd NUL-terminated string from the library, decoded and freed."""
        if not ptr:
            raise MemoryError("libshardcheck: out of memory rendering")
        try:
            return ctypes.string_at(ptr).decode("utf-8", "replace")
        finally:
            self._free(ptr)

    def format_code(self, name: str) -> int:
        """The library's sc_format for an input format name (it knows which formats it reads)."""
        fmt = c_int()
        if self.lib.sc_format_parse(name.encode(), byref(fmt)) != 0:
            raise ValueError(f"input_format: this libshardcheck does not read '{name}' input")
        return fmt.value

    def reads_bytecode(self) -> bool:
        try:
            self.format_code("bytecode")
        except ValueError:
            return False
        return True

    def rules(self) -> list[Rule]:
        out = []
        for i in range(self.lib.sc_rule_count()):
            name, family, code, summary = c_char_p(), c_char_p(), c_char_p(), c_char_p()
            sev = c_int()
            self.lib.sc_rule_info(i, byref(name), byref(family), byref(code), byref(sev), byref(summary))
            out.append(Rule(code.value.decode(), name.value.decode(), family.value.decode(),
                            self.lib.sc_severity_name(sev.value).decode(), summary.value.decode()))
        return out

    def explain(self, code: str) -> str:
        ptr = self.lib.sc_explain_text(code.encode("utf-8"))
        if not ptr:
            raise ValueError(f"unknown code '{code}' (see shardcheck.rules())")
        return self.take_string(ptr)

    def sarif_log(self, reports, tool_errors, source_root=".") -> str:
        """One SARIF log with one run for in-process `reports` (as the C CLI's --format sarif): artifact
        paths relative to `source_root` when under it, Python files as primary locations when they exist
        there; `tool_errors` are the inputs that could not be checked."""
        states = [r._native for r in reports]
        if any(st is None or not st.report for st in states):
            raise ValueError("sarif_log: only reports checked in-process can be rendered together")
        root = os.path.realpath(source_root) if os.path.isdir(source_root) else None
        ptrs = (c_void_p * max(len(states), 1))(*[st.report for st in states])
        errors = [e.encode("utf-8") for e in tool_errors]
        errs = (c_char_p * max(len(errors), 1))(*errors)
        o = SarifOptionsStruct()
        o.source_root = root.encode("utf-8") if root else None
        o.locate = LOCATE_FN(lambda user, path, python, out, outsz: _locate(root, path, python, out, outsz))
        o.tool_errors, o.ntool_errors = errs, len(errors)
        return self.take_string(self.lib.sc_report_sarif_many(ptrs, len(states), byref(o)))

    def check(self, data: bytes, name: str, opts, timeout=None) -> Report:
        """Runs sc_check on a worker thread so a timeout or Ctrl-C can set the cancel flag the library polls."""
        input_format = self.format_code(opts.input_format)
        arena = self.lib.sc_arena_new(opts.max_memory)
        if not arena:
            raise MemoryError("libshardcheck: cannot allocate an arena")
        # The arena and the input (the report borrows it; bytes are passed without a copy) live as long
        # as the Report.
        buf = bytes(data)
        keep = _CheckState(self, arena, buf)
        cancel = c_int(0)
        o, keep.refs = _options(name, opts, cancel)
        o.input_format = input_format
        o.hash_seed = int.from_bytes(os.urandom(8), "little")  # crafted names cannot collide in its tables
        report_ptr = c_void_p()
        result = {}

        def run():
            result["status"] = self.lib.sc_check(arena, buf, len(data), byref(o), byref(report_ptr))

        expired = timeout is not None and timeout <= 0  # a deadline already past: cancelled at the start
        cancel.value = int(expired)
        worker = threading.Thread(target=run, name="shardcheck-check", daemon=True)
        worker.start()
        try:
            worker.join(None if expired else timeout)
            timed_out = expired or worker.is_alive()
            if timed_out:
                cancel.value = 1
                worker.join()
        except BaseException:  # KeyboardInterrupt: stop the analysis, then let it propagate
            cancel.value = 1
            worker.join()
            keep.close()
            raise
        status = result["status"]
        keep.report = report_ptr.value
        if status != SC_OK:
            # No report at all: the arena could not even hold it (the library's words for its limit).
            failure = "the request needs more memory or work than its limit allows"
            if keep.report:
                failure = json.loads(keep.render("json-compact")).get("failure") or failure
            keep.close()
            if status == SC_ERR_CANCELLED and timed_out:
                raise TimeoutError(f"shardcheck: the check of {name} did not finish within {timeout} s")
            if status == SC_ERR_INVALID:
                raise ValueError(failure)
            raise CheckError(f"{name}: {failure}")
        report = Report(keep.render("json"), keep.render, native=keep)
        weakref.finalize(report, keep.close)
        return report


    def propagate(self, data: bytes, popts, mesh, max_memory: int) -> str:
        """sc_propagate on `data`: the module as Shardy's passes leave it, or the shardings as JSON.
        ValueError with the library's words for an input or options it refuses."""
        arena = self.lib.sc_arena_new(max_memory)
        if not arena:
            raise MemoryError("libshardcheck: cannot allocate an arena")
        try:
            refs = []
            if mesh is not None:
                o, refs = _options("", CheckOptionsLike(mesh), c_int(0))
                popts.mesh = o.mesh
            popts.hash_seed = int.from_bytes(os.urandom(8), "little")
            result = PropagateResultStruct()
            status = self.lib.sc_propagate(arena, data, len(data), byref(popts), byref(result))
            del refs
            if status != SC_OK:
                failure = result.failure.decode("utf-8", "replace") if result.failure else "propagation failed"
                if status == SC_ERR_INVALID:
                    raise ValueError(failure)
                raise CheckError(failure)
            return ctypes.string_at(result.text, result.len).decode("utf-8", "replace")
        finally:
            self.lib.sc_arena_free(arena)


class CheckOptionsLike:
    """The fields _options() reads, for a propagate call that only sets the mesh."""

    def __init__(self, mesh):
        self.mesh, self.rules, self.min_severity, self.split_input_file = mesh, (), "note", False
        self.platform, self.max_depth, self.max_ops, self.propagate = None, 0, 0, True


class _CheckState:
    """The arena, the input buffer and the report of one check, for rendering on demand."""

    def __init__(self, library, arena, buf):
        self.library, self.arena, self.buf, self.report, self.refs = library, arena, buf, None, None

    def render(self, kind: str) -> str:
        lib = self.library.lib
        ptr = {"json": lambda: lib.sc_report_json(self.report, True),
               "json-compact": lambda: lib.sc_report_json(self.report, False),
               "text": lambda: self.text(False),
               "text-color": lambda: self.text(True),
               "sarif": lambda: lib.sc_report_sarif(self.report),
               "html": lambda: lib.sc_report_html(self.report)}[kind]()
        return self.library.take_string(ptr)

    def text(self, color: bool):
        """The text report with the Python lines diagnostics name, when readable from here."""
        reader = _source_line_reader()
        opts = TextOptionsStruct(color, True, 0, reader, None)
        return self.library.lib.sc_report_text_ex(self.report, byref(opts))

    def close(self):
        if self.arena:
            self.library.lib.sc_arena_free(self.arena)
            self.arena = self.report = None


def _locate(root, path, python, out, outsz) -> int:
    """sc_sarif_options.locate as the C CLI's: a file under `root` relative to it, a module elsewhere
    absolute, a Python file only under `root`. Never raises (it is called from C)."""
    try:
        if root is None:
            return SC_PATH_MISSING
        p = os.fsdecode(path)
        if python and not p.startswith("/"):
            p = os.path.join(root, p)
        if not os.path.exists(p):
            return SC_PATH_MISSING
        real = os.path.realpath(p)
        if root == "/" or real.startswith(root + "/"):
            kind, text = SC_PATH_UNDER_ROOT, real[len(root.rstrip("/")) + 1:]
        elif python:
            return SC_PATH_MISSING
        else:
            kind, text = SC_PATH_ABSOLUTE, real
        data = os.fsencode(text)[:max(outsz - 1, 0)] + b"\0"
        ctypes.memmove(out, data, len(data))
        return kind
    except Exception:  # noqa: BLE001 -- an exception cannot cross into C
        return SC_PATH_MISSING


def _options(name, opts, cancel):
    """An sc_options for `opts` (see _api.CheckOptions), and the objects it points into: the report
    borrows some of them (the input name), so they must live as long as the report."""
    name_bytes = name.encode("utf-8")
    rules = ",".join(opts.rules).encode("utf-8") if opts.rules else None
    refs = [name_bytes, rules]
    o = OptionsStruct()
    o.input_name = name_bytes
    o.rules = rules
    o.min_severity = SEVERITIES[opts.min_severity]
    o.split_input_file = opts.split_input_file
    o.platform = PLATFORMS[opts.platform]
    o.max_depth, o.max_ops = opts.max_depth, opts.max_ops
    o.cancel = ctypes.pointer(cancel)
    o.no_propagate = not opts.propagate
    m = opts.mesh
    if m is not None:
        axes = (MeshAxisStruct * len(m.axes))(*[(a.name.encode("utf-8"), a.size, AXIS_TYPES[a.type]) for a in m.axes])
        kind = m.device_kind.encode("utf-8") if m.device_kind else None
        tm = TargetMeshStruct(axes, len(m.axes), None, 0, PLATFORMS[m.platform], kind)
        refs.append(kind)
        if m.device_ids is not None:
            ids = (c_int64 * len(m.device_ids))(*m.device_ids)
            tm.device_ids, tm.ndevice_ids = ids, len(m.device_ids)
            refs.append(ids)
        refs += [axes, tm]
        o.mesh = ctypes.pointer(tm)
    refs.append(o)
    return o, refs


_loaded: Library | None = None
_lock = threading.Lock()


def library() -> Library:
    """The loaded library; LibraryNotFoundError (an ImportError) says how to get one."""
    global _loaded
    with _lock:
        if _loaded is None:
            tried = []
            for path in candidates():
                if path.is_file():
                    try:
                        _loaded = Library(path)
                        break
                    except OSError as e:
                        tried.append(f"{path} ({e})")
                else:
                    tried.append(f"{path} (missing)")
            else:
                raise LibraryNotFoundError(
                    "shardcheck: libshardcheck.so not found: " + "; ".join(tried) + ". Build it with `make` in "
                    "a shardcheck checkout (it writes build/lib/libshardcheck.so), point SHARDCHECK_LIB at it, "
                    "or check through a daemon with server='HOST:PORT'.")
        return _loaded
