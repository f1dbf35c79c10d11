"""Report: the result of check(). Everything is read from the report JSON the library (or the daemon)
rendered, so fields added to the report later appear in to_dict() and in each dataclass's `extra`."""
from __future__ import annotations

import dataclasses
import html
import json
import threading
from typing import Any, Callable

from ._errors import ShardingError


def _split(cls, d):
    """cls's fields from dict d; keys cls does not know go to `extra`."""
    names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
    known = {k: v for k, v in d.items() if k in names}
    return known, {k: v for k, v in d.items() if k not in names}


class _FromDict:
    @classmethod
    def from_dict(cls, d):
        if d is None:
            return None
        known, extra = _split(cls, d)
        return cls(**known, extra=extra)


@dataclasses.dataclass(frozen=True)
class Location(_FromDict):
    """Where in the module: 1-based line/column of the offending token and the end of its span (line 0 =
    the whole module; None for bytecode input, which has no lines: `op_path` names the op there)."""
    line: int | None = None
    column: int | None = None
    offset: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    end_offset: int | None = None
    op_path: str | None = None
    function: str | None = None
    op: str | None = None
    target: str | None = None
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class SourceLocation(_FromDict):
    """Where in the user's Python, from the module's debug info."""
    file: str | None = None
    line: int | None = None
    column: int | None = None
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Edit(_FromDict):
    """A byte replacement of the module text (of a machine-applicable fix)."""
    offset: int = 0
    length: int = 0
    replacement: str = ""
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Fix:
    title: str = ""
    applicability: str = "manual"  # "manual" or "machine"
    snippet: str | None = None     # Python to paste, naming this module's axes and specs
    note: str | None = None        # why the fix is what it is, when the title does not say
    edits: tuple[Edit, ...] = ()
    extra: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, d):
        known, extra = _split(cls, d)
        known["edits"] = tuple(Edit.from_dict(e) for e in known.get("edits") or ())
        return cls(**known, extra=extra)


@dataclasses.dataclass(frozen=True)
class Related(_FromDict):
    """Another site of the same mistake, folded into the diagnostic that is its root."""
    code: str | None = None
    message: str = ""
    location: Location | None = None
    source_location: SourceLocation | None = None
    extra: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, d):
        r = super().from_dict(d)
        return dataclasses.replace(r, location=Location.from_dict(r.location),
                                   source_location=SourceLocation.from_dict(r.source_location))


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    code: str
    rule: str
    severity: str  # "error", "warning" or "note"
    message: str
    location: Location | None = None
    source_location: SourceLocation | None = None
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    context: dict = dataclasses.field(default_factory=dict)
    extra: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, d):
        known, extra = _split(cls, d)
        known["related"] = tuple(Related.from_dict(r) for r in known.get("related") or ())
        known["location"] = Location.from_dict(known.get("location"))
        known["source_location"] = SourceLocation.from_dict(known.get("source_location"))
        known["fixes"] = tuple(Fix.from_dict(f) for f in known.get("fixes") or ())
        known["context"] = known.get("context") or {}
        return cls(**known, extra=extra)


# Rendering kinds a backend can produce: the library's report JSON indented or compact (compact = the
# CLI's `reports[i]` dumped compactly), text with or without ANSI colours, SARIF of this report alone,
# the HTML page (the CLI's --format html for this input alone).
KINDS = ("json", "json-compact", "text", "text-color", "sarif", "html")


class Report:
    """The findings of one check. `str(report)` is the text report the CLI prints for this input alone;
    `to_dict()` is the report JSON (`shardcheck.report.v1`) the CLI's `--format json` holds in
    `reports[i]`; `to_json()` the library's text of it."""

    def __init__(self, json_text: str, render: Callable[[str], str], native=None):
        self._native = native  # the in-process library's report (for rendering several together), or None
        self._json = json_text
        self._data = json.loads(json_text)
        self._render = render
        self._rendered: dict[str, str] = {"json": json_text}
        self._lock = threading.Lock()
        self.diagnostics: tuple[Diagnostic, ...] = tuple(
            Diagnostic.from_dict(d) for d in self._data.get("diagnostics") or ())

    def _get(self, kind: str) -> str:
        with self._lock:
            if kind not in self._rendered:
                self._rendered[kind] = self._render(kind)
            return self._rendered[kind]

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    @property
    def notes(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "note"]

    @property
    def ok(self) -> bool:
        """No error diagnostics."""
        return self.summary.get("errors", len(self.errors)) == 0

    @property
    def cost(self) -> dict[str, Any] | None:
        """What the module costs per device (docs/cost.md): {"memory": {"device_memory_bytes", "device_kind",
        "per_device": {"arguments_bytes", "results_bytes", "donated_bytes", "peak_bytes_lower_bound"},
        "largest": [...]}, "collectives": [...]}, or None when there was no entry function."""
        c = self._data.get("cost")
        return json.loads(json.dumps(c)) if c is not None else None

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self._data.get("summary") or {})

    @property
    def name(self) -> str:
        return (self._data.get("input") or {}).get("name", "")

    def to_dict(self) -> dict[str, Any]:
        """The report JSON (the CLI's `--format json` element `reports[i]`), as a fresh dict."""
        return json.loads(self._json)

    def to_json(self, pretty: bool = True) -> str:
        """The report JSON text as the library renders it: indented, or compact (byte for byte the CLI's
        `reports[i]` dumped compactly)."""
        return self._get("json" if pretty else "json-compact")

    def to_text(self, color: bool = False) -> str:
        return self._get("text-color" if color else "text")

    def to_sarif(self) -> str:
        """SARIF 2.1.0 of this report alone as the library and the daemon render it (no source root:
        `python3 -m shardcheck check --format sarif` renders the CLI's log of several reports)."""
        return self._get("sarif")

    def to_html(self) -> str:
        """The self-contained HTML page (mesh, diagnostics, flagged tensors drawn over the devices) as the
        library and the daemon render it: byte for byte `shardcheck check --format html` of this input."""
        return self._get("html")

    def _repr_html_(self) -> str:
        """Jupyter/Colab: the page in a sandboxed iframe, so its styles do not leak into the notebook."""
        return ('<iframe sandbox style="width:100%;height:640px;border:1px solid #d1d9e0;border-radius:6px" '
                f'srcdoc="{html.escape(self.to_html(), quote=True)}"></iframe>')

    def raise_for_errors(self) -> "Report":
        """Raises ShardingError (a ValueError) with the text report if there is an error; else returns self."""
        if not self.ok:
            raise ShardingError(self)
        return self

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        s = self.summary

        def count(key, word):
            n = s.get(key, 0)
            return f"{n} {word}{'' if n == 1 else 's'}"
        return (f"<shardcheck.Report {self.name}: {count('errors', 'error')}, {count('warnings', 'warning')}, "
                f"{count('notes', 'note')}>")


@dataclasses.dataclass(frozen=True)
class Rule:
    code: str
    name: str
    family: str
    severity: str
    summary: str
