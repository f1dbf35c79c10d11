"""What check() accepts, turned into module bytes: JAX stage objects (duck-typed; jax is never
imported), module text, bytes, or a path."""
from __future__ import annotations

import dataclasses
import inspect
import os

# How a jax.export.Exported is sent:
#   "auto"      MLIR bytecode (`mlir_module_serialized`) when the backend (the library, or the daemon's
#               GetCapabilities) lists the bytecode input format, else the text of `mlir_module()`
#   "bytecode"  always `mlir_module_serialized`
#   "text"      always `mlir_module()`
# Text keeps line/column locations in the report; bytecode avoids JAX's re-printing of the module.
EXPORTED_INPUT = "auto"

ACCEPTED = ("a jax.stages.Lowered (jax.jit(f).lower(...)), a jax.stages.Compiled, a jax.export.Exported, "
            "module text (str), bytes, or a path (os.PathLike)")


@dataclasses.dataclass
class ModuleInput:
    data: bytes
    name: str  # shown in the report, as the CLI shows the file name


def _to_bytes(text, what):
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"{what} returned {type(text).__name__}, expected str or bytes")


def _accepts_debug_info(as_text):
    """Lowered.as_text(dialect=None, *, debug_info=False) takes debug_info; Compiled.as_text() does not."""
    try:
        params = inspect.signature(as_text).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False
    return "debug_info" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _exported(obj, bytecode_supported) -> ModuleInput:
    name = f"<exported {obj.fun_name}>" if isinstance(getattr(obj, "fun_name", None), str) else "<exported>"
    mode = EXPORTED_INPUT
    has_text = callable(getattr(obj, "mlir_module", None))
    if mode not in ("auto", "bytecode", "text"):
        raise ValueError(f"shardcheck._inputs.EXPORTED_INPUT: {mode!r} (auto, bytecode or text)")
    use_bytes = mode == "bytecode" or not has_text or (mode == "auto" and bytecode_supported())
    if use_bytes:
        return ModuleInput(_to_bytes(obj.mlir_module_serialized, "Exported.mlir_module_serialized"), name)
    return ModuleInput(_to_bytes(obj.mlir_module(), "Exported.mlir_module()"), name)


def _reads_like_module_text(text: str) -> bool:
    """Module text has a newline or an op/attribute character; a path on one line has neither."""
    return "\n" in text or any(c in text for c in "{}=%@(")


def _path_input(path) -> ModuleInput:
    path = path.decode("utf-8", "replace") if isinstance(path, bytes) else path
    with open(path, "rb") as f:
        return ModuleInput(f.read(), path)


def module_input(obj, bytecode_supported, name=None) -> ModuleInput:
    """The module bytes and report name of `obj`. bytecode_supported() is asked only for an Exported.
    A str naming an existing file that does not read like module text is that file (check("model.mlir")
    as the CLI takes it); a str that reads like neither is refused."""
    if isinstance(obj, str) and obj.strip() and not _reads_like_module_text(obj):
        if os.path.isfile(obj):
            m = _path_input(obj)
        else:
            raise TypeError(f"shardcheck.check() got the str {obj[:200]!r}, which is neither module text nor an "
                            "existing file: pass module text, or a path (pathlib.Path) to a module file")
    elif isinstance(obj, str):
        m = ModuleInput(obj.encode("utf-8"), "<string>")
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        m = ModuleInput(bytes(obj), "<bytes>")
    elif isinstance(obj, os.PathLike):
        m = _path_input(os.fspath(obj))
    elif hasattr(obj, "mlir_module_serialized"):
        m = _exported(obj, bytecode_supported)
    elif callable(getattr(obj, "as_text", None)):
        if _accepts_debug_info(obj.as_text):  # Lowered: keep the Python source locations
            m = ModuleInput(_to_bytes(obj.as_text(debug_info=True), "Lowered.as_text()"), "<lowered>")
        else:  # Compiled: the optimized HLO
            text = obj.as_text()
            if text is None:
                raise ValueError("Compiled.as_text() returned None: this backend cannot print the compiled "
                                 "module; check the Lowered (jax.jit(f).lower(...)) instead")
            m = ModuleInput(_to_bytes(text, "Compiled.as_text()"), "<compiled>")
    else:
        hint = ""
        if callable(obj) and hasattr(obj, "lower"):
            hint = " (a jitted function: pass jax.jit(f).lower(*args) instead)"
        raise TypeError(f"shardcheck.check() accepts {ACCEPTED}; got {type(obj).__module__}."
                        f"{type(obj).__qualname__}{hint}")
    if name is not None:
        m.name = os.fspath(name)
    return m
