"""check(), assert_no_errors(), explain(), rules(): in-process through libshardcheck.so, or through a
shardcheckd daemon when server="HOST:PORT" is given."""
from __future__ import annotations

import dataclasses

from . import _inputs, _lib, _mesh, _remote
from ._report import Report, Rule

SEVERITIES = ("note", "warning", "error")
INPUT_FORMATS = ("auto", "stablehlo", "mlir", "hlo", "bytecode", "exported")  # as lib/shardcheck.h names them


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """Validated check options, shared by both backends."""
    mesh: _mesh.TargetMesh | None = None
    platform: str | None = None
    rules: tuple[str, ...] = ()
    min_severity: str = "note"
    input_format: str = "auto"
    split_input_file: bool = False
    max_depth: int = 0
    max_ops: int = 0
    max_memory: int = 0  # in-process analysis memory limit in bytes; 0 = none
    propagate: bool = True  # rules also see the shardings Shardy's propagation derives


def _options(mesh, platform, rules, min_severity, input_format, split_input_file, max_depth, max_ops, max_memory,
             propagate=True):
    if isinstance(rules, str):
        rules = (rules,)
    rules = tuple(rules or ())
    if not all(isinstance(r, str) for r in rules):
        raise TypeError("rules: a string of comma-separated globs ('sharding-*,-sharding-priority') or a list of them")
    min_severity = min_severity or "note"
    if min_severity not in SEVERITIES:
        raise ValueError(f"min_severity: unknown severity '{min_severity}' (note, warning or error)")
    input_format = input_format or "auto"
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format: unknown input format '{input_format}' ({', '.join(INPUT_FORMATS)})")
    for field, v, bound in (("max_depth", max_depth, 32), ("max_ops", max_ops, 32), ("max_memory", max_memory, 63)):
        if not isinstance(v, int) or not 0 <= v < 1 << bound:
            raise ValueError(f"{field}: {v!r} is not an integer in [0, 2**{bound})")
    return CheckOptions(_mesh.to_target_mesh(mesh), _mesh.platform_name(platform), rules, min_severity,
                        input_format, bool(split_input_file), max_depth, max_ops, max_memory, bool(propagate))


def check(obj, *, mesh=None, platform=None, rules=None, min_severity=None, server=None, timeout=None,
          name=None, input_format=None, split_input_file=False, max_depth=0, max_ops=0, max_memory=0,
          propagate=True, tls_ca=None, tls_cert=None, tls_key=None, token=None) -> Report:
    """Checks a module for sharding errors and returns its Report.

    obj: a jax.stages.Lowered (its text with debug info, so diagnostics carry Python source locations),
      a jax.stages.Compiled (its HLO), a jax.export.Exported, module text (str), bytes, or a path.
    mesh: the mesh it will run on: a jax.sharding.Mesh or AbstractMesh, a CLI spec string
      ('data=2,model=4:explicit'), or {name: size}; None checks against the module's own meshes.
    platform: 'tpu', 'gpu' or 'cpu'. rules: globs by name, code or family ('sharding-*,-SC0207').
    min_severity: 'note', 'warning' or 'error'. name: the input name shown in the report.
    server: 'HOST:PORT' of a shardcheckd to check through (tls_ca, tls_cert/tls_key for mTLS, token for
      a bearer token); else the check runs in-process. timeout: seconds (a deadline for the daemon).
    max_memory: bytes the in-process analysis may use (0 = no limit; a daemon applies its own).
    propagate: rules also see the shardings Shardy's propagation derives (False: only the written ones).
    """
    opts = _options(mesh, platform, rules, min_severity, input_format, split_input_file, max_depth, max_ops,
                    max_memory, propagate)
    if server is None:
        lib = _lib.library()
        m = _inputs.module_input(obj, lib.reads_bytecode, name)
        return lib.check(m.data, m.name, opts, timeout)
    if max_memory:
        raise ValueError("max_memory: limits in-process checks; a daemon applies its limits.max_arena_bytes")
    c = _remote.client(server, tls_ca, tls_cert, tls_key, token)
    m = _inputs.module_input(obj, lambda: c.reads_bytecode(timeout), name)
    return c.check(m.data, m.name, opts, timeout)


def propagate(obj, *, mesh=None, strategy="pipeline", format="text", conservative=False, name=None,
              input_format=None, split_input_file=False, max_memory=0, server=None, timeout=None, tls_ca=None,
              tls_cert=None, tls_key=None, token=None) -> str:
    """The module as Shardy's propagation leaves it (what `shardcheck propagate` prints), in-process, or
    through the shardcheckd at server='HOST:PORT' (its Propagate RPC; credentials and timeout as for check()).

    obj: as for check(). mesh: the target mesh (names the axes of GSPMD shardings), as for check().
    strategy: 'pipeline' (XLA's: user priorities through calls), 'user-priority', 'op-priority',
      'aggressive' or 'basic'. format: 'text' (the module, printed as sdy_opt prints it; MLIR text input)
      or 'json' (every value's sharding, location and origin; any input format). conservative: Shardy's
      conservative-propagation. Raises ValueError for an input or option the library refuses.
    """
    if strategy not in _lib.STRATEGIES or strategy == "none":
        raise ValueError(f"strategy: unknown strategy '{strategy}' (pipeline, user-priority, op-priority, "
                         "aggressive, basic)")
    if format not in ("text", "json"):
        raise ValueError(f"format: '{format}' is not 'text' or 'json'")
    input_format = input_format or "auto"
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format: unknown input format '{input_format}' ({', '.join(INPUT_FORMATS)})")
    if not isinstance(max_memory, int) or not 0 <= max_memory < 1 << 63:
        raise ValueError(f"max_memory: {max_memory!r} is not an integer in [0, 2**63)")
    if server is not None:
        if max_memory:
            raise ValueError("max_memory: limits in-process propagation; a daemon applies its limits.max_arena_bytes")
        c = _remote.client(server, tls_ca, tls_cert, tls_key, token)
        m = _inputs.module_input(obj, lambda: c.reads_bytecode(timeout), name)
        return c.propagate(m.data, m.name, _mesh.to_target_mesh(mesh), input_format, timeout, strategy=strategy,
                           conservative=bool(conservative), split_input_file=bool(split_input_file),
                           json=format == "json")
    lib = _lib.library()
    m = _inputs.module_input(obj, lib.reads_bytecode, name)
    popts = _lib.PropagateOptionsStruct()
    popts.strategy = _lib.STRATEGIES[strategy]
    popts.conservative, popts.split_input_file, popts.json = bool(conservative), bool(split_input_file), format == "json"
    popts.input_format = lib.format_code(input_format)
    return lib.propagate(m.data, popts, _mesh.to_target_mesh(mesh), max_memory)


def assert_no_errors(obj, *, mesh=None, **kwargs) -> Report:
    """check(obj, mesh=mesh, ...), raising ShardingError (a ValueError whose message is the text report,
    which pytest shows) if it found errors. For tests: `shardcheck.assert_no_errors(lowered, mesh=mesh)`."""
    return check(obj, mesh=mesh, **kwargs).raise_for_errors()


def explain(code: str, *, server=None, timeout=None, tls_ca=None, tls_cert=None, tls_key=None, token=None) -> str:
    """The explanation page of a diagnostic code (what `shardcheck explain CODE` prints)."""
    if server is None:
        return _lib.library().explain(code)
    return _remote.client(server, tls_ca, tls_cert, tls_key, token).explain(code, timeout)


def rules(*, server=None, timeout=None, tls_ca=None, tls_cert=None, tls_key=None, token=None) -> list[Rule]:
    """The rules, in registry order."""
    if server is None:
        return _lib.library().rules()
    return _remote.client(server, tls_ca, tls_cert, tls_key, token).rules(timeout)


def to_target_mesh(mesh) -> _mesh.TargetMesh | None:
    """The mesh check() would use for `mesh` (validated); `.spec()` is the CLI's --mesh for it."""
    return _mesh.to_target_mesh(mesh)


__all__ = ["check", "propagate", "assert_no_errors", "explain", "rules", "to_target_mesh", "CheckOptions"]
