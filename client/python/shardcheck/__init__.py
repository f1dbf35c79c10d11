"""shardcheck: check JAX/XLA modules for sharding errors before they reach hardware.

    import shardcheck
    report = shardcheck.check(jax.jit(f).lower(x), mesh=mesh)   # in-process (libshardcheck.so)
    print(report)                                                # the text report
    report.raise_for_errors()                                    # ShardingError if there are errors

Pass server="HOST:PORT" to check through a shardcheckd daemon instead. jax is never imported: JAX
objects are recognised by their attributes, so this package works where jax is not installed."""
from ._api import CheckOptions, assert_no_errors, check, explain, propagate, rules, to_target_mesh
from ._errors import CheckError, LibraryNotFoundError, RemoteError, ShardingError
from ._mesh import MeshAxis, TargetMesh
from ._report import Diagnostic, Edit, Fix, Location, Related, Report, Rule, SourceLocation

__version__ = "0.1.0"

__all__ = [
    "check", "propagate", "assert_no_errors", "explain", "rules", "to_target_mesh",
    "Report", "Diagnostic", "Location", "SourceLocation", "Fix", "Edit", "Related", "Rule", "MeshAxis", "TargetMesh",
    "CheckOptions", "ShardingError", "RemoteError", "LibraryNotFoundError", "CheckError",
]
