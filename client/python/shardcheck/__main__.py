"""python3 -m shardcheck: the `shardcheck` CLI's check, rules, explain and version, through this package
(in-process, or through a daemon with --server). For the options it has, the output of the C CLI's
`check --no-config` (the shardcheck.results.v1 JSON, one SARIF log, the text with one summary line) and
its exit status: 0 no error diagnostics, 1 error diagnostics, 2 usage, I/O or internal error. No config
file, directory walking, baselines or suppressions: those are the C CLI's."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from . import _api, _errors, _mesh

EXIT_FINDINGS, EXIT_TROUBLE = 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"shardcheck: {message}", file=sys.stderr)
        sys.exit(EXIT_TROUBLE)


def _remote_args(p):
    p.add_argument("--server", metavar="HOST:PORT", help="check through a shardcheckd daemon")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="deadline per call (default: SHARDCHECK_TIMEOUT_MS, else none)")
    p.add_argument("--tls-ca", metavar="PEM", help="TLS, trusting this CA (default: SHARDCHECK_TLS_CA)")
    p.add_argument("--tls-cert", metavar="PEM", help="client certificate for mTLS")
    p.add_argument("--tls-key", metavar="PEM", help="client private key for mTLS")
    p.add_argument("--token", help="bearer token sent to the daemon (default: SHARDCHECK_TOKEN)")


def _parsers():
    """One parser per command (not subparsers: those cannot take options after the files, as getopt can)."""
    prog = "python3 -m shardcheck"
    c = _Parser(prog=f"{prog} check", description="Check StableHLO/MLIR or XLA HLO modules ('-' = stdin). The Python "
                "package's small CLI: files only (a directory is refused), no --fail-on/--quiet/gitlab/config; the C "
                "CLI `shardcheck` has those.")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--mesh", metavar="SPEC", help="target mesh: name=size[:auto|explicit|manual],...[;devices=..]")
    c.add_argument("--platform", choices=("tpu", "gpu", "cpu"))
    c.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    c.add_argument("--input-format", choices=("auto", "stablehlo", "mlir", "hlo", "bytecode", "exported"),
                   default="auto")
    c.add_argument("--rules", metavar="GLOBS")
    c.add_argument("--min-severity", choices=("note", "warning", "error"), default="note")
    c.add_argument("--split-input-file", action="store_true")
    c.add_argument("--max-depth", type=int, default=0)
    c.add_argument("--max-ops", type=int, default=0)
    c.add_argument("--no-config", action="store_true",
                   help="accepted for the C CLI's sake: this command never reads shardcheck.json")
    color = c.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_true", default=None)
    color.add_argument("--no-color", dest="color", action="store_false")
    _remote_args(c)
    r = _Parser(prog=f"{prog} rules", description="List the rules.")
    r.add_argument("--format", choices=("text", "json"), default="text")
    _remote_args(r)
    e = _Parser(prog=f"{prog} explain", description="Print the explanation page of diagnostic codes.")
    e.add_argument("codes", nargs="+", metavar="CODE")
    _remote_args(e)
    return {"check": c, "rules": r, "explain": e}


USAGE = """usage: python3 -m shardcheck check FILE... [options]   (see check --help)
       python3 -m shardcheck rules [--format text|json]
       python3 -m shardcheck explain CODE...
       python3 -m shardcheck version
check, rules and explain run in-process, or through a shardcheckd daemon with --server HOST:PORT.
This is the Python package's small CLI: it checks the files it is given (no directory walk, config
file, --fail-on, --quiet, baselines, inline ignores or gitlab format). For those, use the C CLI
`shardcheck` (`make` builds build/bin/shardcheck); its output for the same options is the same.
"""


def _remote_kwargs(a):
    timeout_ms = os.environ.get("SHARDCHECK_TIMEOUT_MS")
    timeout = a.timeout if a.timeout is not None else int(timeout_ms) / 1000 if timeout_ms else None
    return {"server": a.server, "timeout": timeout, "tls_ca": a.tls_ca or os.environ.get("SHARDCHECK_TLS_CA") or None,
            "tls_cert": a.tls_cert, "tls_key": a.tls_key, "token": a.token or os.environ.get("SHARDCHECK_TOKEN")}


def _check_one(a, path, mesh, kwargs):
    """The Report of one input, or the error the C CLI prints for it ("PATH: why")."""
    try:
        if path == "-":
            obj, name = sys.stdin.buffer.read(), "<stdin>"
        else:
            obj, name = Path(path), path
        return _api.check(obj, mesh=mesh, platform=a.platform, rules=a.rules, min_severity=a.min_severity,
                          name=name, input_format=a.input_format, split_input_file=a.split_input_file,
                          max_depth=a.max_depth, max_ops=a.max_ops, **kwargs), None
    except OSError as e:
        if os.path.isdir(path):
            return None, (f"{path}: a directory: python3 -m shardcheck checks files only; the C CLI `shardcheck "
                          f"check {path}` walks directories")
        return None, f"{path}: {e.strerror or e}"
    except (ValueError, TimeoutError, _errors.CheckError, _errors.RemoteError) as e:
        return None, f"{path}: {e}"


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def _text(results, color):
    """The C CLI's text: one input's report as the library prints it; else each report without its summary
    lines (per device and counts, the last two), a blank line between reports with diagnostics, then one line totalling all inputs."""
    if len(results) == 1 and results[0][1] is not None:
        return results[0][1].to_text(color)
    parts, counts = [], {"error": 0, "warning": 0, "note": 0}
    for _, report, _ in results:
        if report is None:
            continue
        text = report.to_text(color)
        text = text[:text.rstrip("\n").rfind("\n") + 1]  # without the count line
        if report.cost is not None:  # nor the per-device line before it (the C CLI shows both for one input only)
            text = text[:text.rstrip("\n").rfind("\n") + 1]
        parts.append(text)
        for d in report.diagnostics:
            counts[d.severity] += 1
    failed = sum(1 for _, report, _ in results if report is None)
    tail = f"; {_plural(failed, 'input')} not checked" if failed else ""
    return "\n".join(p for p in parts if p) + (f"{_plural(len(results) - failed, 'input')} checked: {_plural(counts['error'], 'error')}, "
                             f"{_plural(counts['warning'], 'warning')}, {_plural(counts['note'], 'note')}{tail}\n")


def _tool(reports, remote_kwargs):
    """The results' "tool": a report's; with none, the library's (the C CLI's own), else the daemon's."""
    if reports:
        return reports[0].to_dict()["tool"]
    from . import _lib, _remote  # noqa: PLC0415
    try:
        rules_version = _lib.library().lib.sc_rules_version().decode()
    except ImportError:
        if not remote_kwargs:
            raise
        k = remote_kwargs
        caps = _remote.client(k["server"], k["tls_ca"], k["tls_cert"], k["tls_key"], k["token"]).capabilities(
            k["timeout"])
        rules_version = caps.rules_version if caps is not None else ""
    return {"name": "shardcheck", "version": _version(), "rules_version": rules_version}


def _results_json(results, remote_kwargs=None):
    """shardcheck.results.v1, as the C CLI prints it (jansson's 2-space indent = json.dumps(indent=2))."""
    reports = [r for _, r, _ in results if r is not None]
    diags = [d for r in reports for d in r.diagnostics]
    tool = _tool(reports, remote_kwargs)
    doc = {"schema": "shardcheck.results.v1", "tool": tool,
           "summary": {"inputs": len(results), "skipped": 0, "failed": len(results) - len(reports),
                       "errors": sum(d.severity == "error" for d in diags),
                       "warnings": sum(d.severity == "warning" for d in diags),
                       "notes": sum(d.severity == "note" for d in diags),
                       "suppressed": {"inline": 0, "baseline": 0}, "baseline_stale": 0, "not_shown": 0},
           "reports": [r.to_dict() for r in reports],
           "failures": [{"input": path, "error": err} for path, r, err in results if r is None]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _version():
    from . import __version__  # noqa: PLC0415
    return __version__


def _check(a, out):
    try:
        mesh = _mesh.to_target_mesh(a.mesh) if a.mesh is not None else None
    except ValueError as e:
        print(f"shardcheck: --mesh: {e}", file=sys.stderr)
        return EXIT_TROUBLE
    if a.server and a.format == "sarif":
        # One SARIF log for many inputs is rendered from the library's reports; through a daemon there
        # are only its report JSON texts.
        print("shardcheck: --format sarif works in-process only (without --server); the C CLI renders "
              "remote reports as SARIF", file=sys.stderr)
        return EXIT_TROUBLE
    color = a.color if a.color is not None else out.isatty() and "NO_COLOR" not in os.environ
    kwargs = _remote_kwargs(a) if a.server else {"timeout": a.timeout}
    results = []
    for path in a.files:
        report, error = _check_one(a, path, mesh, kwargs)
        if error:
            print(f"shardcheck: {error}", file=sys.stderr)
        results.append((path, report, error))
    if a.format == "json":
        out.write(_results_json(results, kwargs if a.server else None))
    elif a.format == "sarif":
        from . import _lib  # noqa: PLC0415
        out.write(_lib.library().sarif_log([r for _, r, _ in results if r is not None],
                                           [e for _, r, e in results if r is None]) + "\n")
    else:
        out.write(_text(results, color))
    if any(r is None for _, r, _ in results):
        return EXIT_TROUBLE
    return EXIT_FINDINGS if any(not r.ok for _, r, _ in results) else 0


def _rules(a, out):
    rules = _api.rules(**_remote_kwargs(a))
    if a.format == "json":
        doc = [{"code": r.code, "name": r.name, "family": r.family, "severity": r.severity, "summary": r.summary}
               for r in rules]
        out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        for r in rules:
            out.write(f"{r.code:<7} {r.name:<34} {r.family:<10} {r.severity:<8} {r.summary}\n")
    return 0


def _explain(a, out):
    rc = 0
    for i, code in enumerate(a.codes):
        try:
            text = _api.explain(code, **_remote_kwargs(a))
        except ValueError:
            print(f"shardcheck: unknown code '{code}' (see `shardcheck rules`)", file=sys.stderr)
            rc = EXIT_TROUBLE
            continue
        out.write(text + ("\n" if i + 1 < len(a.codes) else ""))
    return rc


def main(argv=None, out=None) -> int:
    out = out or sys.stdout
    argv = sys.argv[1:] if argv is None else list(argv)
    cmd = argv[0] if argv else None
    if cmd in ("help", "--help", "-h"):
        out.write(USAGE)
        return 0
    if cmd in ("version", "--version"):
        out.write(f"shardcheck {_version()} (python)\n")
        return 0
    parsers = _parsers()
    if cmd not in parsers:
        sys.stderr.write((f"shardcheck: unknown command '{cmd}'\n" if cmd else "") + USAGE)
        return EXIT_TROUBLE
    a = parsers[cmd].parse_intermixed_args(argv[1:])
    try:
        return {"check": _check, "rules": _rules, "explain": _explain}[cmd](a, out)
    except (ImportError, _errors.RemoteError) as e:  # no library, no grpc, or the daemon failed
        print(f"shardcheck: {e}", file=sys.stderr)
        return EXIT_TROUBLE


if __name__ == "__main__":
    sys.exit(main())
