"""SARIF 2.1.0 output of ``clperf check``: one run, the four rules plus compile diagnostics, one result per
finding or diagnostic, so CI systems (GitHub code scanning, GitLab) show them on the right lines."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clperf import __version__
from clperf.core.compile import Diagnostic
from clperf.predictor.analysis.findings import RULES, Finding
from clperf.predictor.analysis.pipeline import FileReport

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
_DESCRIPTIONS = {
    "uncoalesced-access": "Strided or indirect global memory access along work-item dimension 0",
    "local-cache-candidate": "Global data read by neighbouring work-items: stage it in __local memory",
    "unroll-candidate": "Small loop with a constant trip count and no #pragma unroll",
    "barrier-divergence": "barrier() under work-item dependent control flow",
    "compile": "A message from clang (or from clperf about the input)",
}
DOCS = "docs/rules/{}.md"  # in the clperf repository


def _uri(path: str) -> str:
    p = Path(path)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return p.as_posix() if not p.is_absolute() else p.as_uri()


def _region(
    line: int, column: int, end_line: int | None = None, end_column: int | None = None
) -> dict[str, int]:
    r = {"startLine": max(1, line), "startColumn": max(1, column)}
    if end_line is not None and end_column is not None and (end_line, end_column) > (line, column):
        r["endLine"] = end_line
        r["endColumn"] = end_column
    return r


def _location(uri: str, region: dict[str, int]) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}


def _finding_result(f: Finding, uri: str) -> dict[str, Any]:
    return {
        "ruleId": f.rule,
        "ruleIndex": RULES.index(f.rule),
        "level": _LEVELS.get(f.severity, "note"),
        "message": {"text": f.message},
        "locations": [_location(uri, _region(f.line, f.column))],
        "properties": {"kernel": f.kernel, "data": f.data},
    }


def _diagnostic_result(d: Diagnostic, uri: str) -> dict[str, Any]:
    return {
        "ruleId": "compile",
        "ruleIndex": len(RULES),
        "level": _LEVELS.get(d.severity, "note"),
        "message": {"text": d.message},
        "locations": [_location(uri, _region(d.line, d.column, d.end_line, d.end_column))],
        "properties": {"code": d.code, "source": d.source},
    }


def to_sarif(reports: Iterable[FileReport]) -> dict[str, Any]:
    rules = [
        {
            "id": r,
            "name": "".join(w.title() for w in r.split("-")),
            "shortDescription": {"text": _DESCRIPTIONS[r]},
            "help": {"text": f"What it means and how to fix it: {DOCS.format(r)}"},
        }
        for r in RULES
    ]
    rules.append({"id": "compile", "name": "Compile", "shortDescription": {"text": _DESCRIPTIONS["compile"]}})
    results: list[dict[str, Any]] = []
    artifacts: list[dict[str, Any]] = []
    for rep in reports:
        uri = _uri(rep.file)
        artifacts.append({"location": {"uri": uri}})
        results += [_diagnostic_result(d, uri) for d in rep.diagnostics]
        results += [_finding_result(f, uri) for f in rep.findings]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "clperf", "version": __version__, "rules": rules}},
                "artifacts": artifacts,
                "results": results,
            }
        ],
    }
