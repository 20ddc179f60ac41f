"""SARIF 2.1.0 output of ``clperf check``, in the shape GitHub code scanning (and GitLab, VS Code's SARIF
viewer) reads: one run with the tool, its invocation, the files and one result per finding or diagnostic.

* Rules: the finding rules, with their page (``docs/rules/<rule>.md``) as help; compile diagnostics are one
  rule per clang diagnostic group, named as clang-tidy names them (``clang-diagnostic-unused-variable``
  for ``-Wunused-variable``, ``clang-diagnostic-error`` for an error with no group), and clperf's own
  messages about the input are ``clperf-<code>`` (``clperf-build-options``, ``clperf-timeout``, ...).
* Paths are relative to ``%SRCROOT%``, the repository root (the git top level of the checked files, else
  the current folder): code scanning matches them against its checkout.
* ``partialFingerprints`` hash the rule, the kernel and the whitespace-normalised source line (with a
  count for repeats), so an alert survives lines moving above it.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path
from typing import Any

from clperf import __version__
from clperf.cli import sarifrules
from clperf.cli.sarifrules import Rule
from clperf.core.compile import Diagnostic
from clperf.core.rulepages import rules_folder
from clperf.predictor.analysis.findings import Finding
from clperf.predictor.analysis.pipeline import FileReport

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
ROOT_TEXT = "The repository root of the checked files"
FINGERPRINT = "clperfLineHash/v1"  # versioned: a change of what is hashed gets a new key
_LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


@dataclass(frozen=True)
class Invocation:
    """How clperf was run, for the run's ``invocations``."""

    arguments: tuple[str, ...]  # the command line, the program first
    start: datetime
    end: datetime | None = None  # None: when the SARIF is made


def invocation_now(arguments: Sequence[str] | None = None) -> Invocation:
    """An invocation that starts now; ``arguments`` without the program (default: ``sys.argv[1:]``)."""
    return Invocation(("clperf", *(sys.argv[1:] if arguments is None else arguments)), datetime.now(UTC))


# ---- paths -------------------------------------------------------------------------------------------

def source_root(files: Iterable[str | Path]) -> Path:
    """The git top level holding all ``files`` (the nearest folder above them with a ``.git``), else the
    current folder."""
    folders = [os.path.dirname(os.path.abspath(f)) for f in files]
    if folders:
        common = Path(os.path.commonpath(folders))
        for d in (common, *common.parents):
            if (d / ".git").exists():
                return d
    return Path.cwd().resolve()


def _folder_uri(folder: Path) -> str:
    uri = folder.as_uri()
    return uri if uri.endswith("/") else uri + "/"  # a base URI ends with a slash (SARIF 3.14.14)


def _artifact_location(path: str, root: Path) -> dict[str, Any]:
    """``path`` relative to ``%SRCROOT%`` when it lies under ``root``, else its absolute file URI."""
    p = Path(os.path.abspath(path))
    for candidate in (p, p.resolve()):  # as given first: a link inside the repository stays inside it
        try:
            return {"uri": candidate.relative_to(root).as_posix(), "uriBaseId": SRCROOT}
        except ValueError:
            continue
    return {"uri": p.as_uri()}


# ---- fingerprints ------------------------------------------------------------------------------------

def _source_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return []


def line_hash(rule: str, kernel: str, line_text: str) -> str:
    """The stable part of a fingerprint: rule, kernel and the line with its whitespace collapsed."""
    normalised = " ".join(line_text.split())
    return hashlib.sha256(f"{rule}\0{kernel}\0{normalised}".encode()).hexdigest()[:32]


class _Fingerprints:
    """``line_hash`` plus how many results before this one in the same file had the same hash."""

    def __init__(self) -> None:
        self._seen: Counter[tuple[str, str]] = Counter()

    def __call__(self, uri: str, lines: list[str], rule: str, kernel: str, line: int) -> dict[str, str]:
        text = lines[line - 1] if 1 <= line <= len(lines) else ""
        h = line_hash(rule, kernel, text)
        self._seen[(uri, h)] += 1
        return {FINGERPRINT: f"{h}:{self._seen[(uri, h)]}"}


# ---- results -----------------------------------------------------------------------------------------

def _region(line: int, column: int, end_line: int | None = None,
            end_column: int | None = None) -> dict[str, int]:
    r = {"startLine": max(1, line), "startColumn": max(1, column)}
    if end_line is not None and end_column is not None and (end_line, end_column) > (line, column):
        r["endLine"] = end_line
        r["endColumn"] = end_column
    return r


def _location(artifact: dict[str, Any], region: dict[str, int]) -> list[dict[str, Any]]:
    return [{"physicalLocation": {"artifactLocation": artifact, "region": region}}]


def _finding_result(f: Finding, rule_index: int, artifact: dict[str, Any],
                    fingerprint: dict[str, str]) -> dict[str, Any]:
    return {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _LEVELS.get(f.severity, "note"),
        "message": {"text": f.message},
        "locations": _location(artifact, _region(f.line, f.column)),
        "partialFingerprints": fingerprint,
        "properties": {"kernel": f.kernel, "data": f.data},
    }


def _diagnostic_result(d: Diagnostic, rule: Rule, rule_index: int, artifact: dict[str, Any],
                       fingerprint: dict[str, str]) -> dict[str, Any]:
    return {
        "ruleId": rule.id,
        "ruleIndex": rule_index,
        "level": _LEVELS.get(d.severity, "note"),
        "message": {"text": d.message},
        "locations": _location(artifact, _region(d.line, d.column, d.end_line, d.end_column)),
        "partialFingerprints": fingerprint,
        "properties": {"code": d.code, "source": d.source},
    }


def _kernel_at(report: FileReport, line: int) -> str:
    """The kernel a diagnostic's line falls in: the last one starting at or above it ("" above all)."""
    starts = [k for k in report.kernels if k.line <= line]
    return max(starts, key=lambda k: k.line).name if starts else ""


class _Rules:
    """The run's rules, in the order results first use them after the finding rules."""

    def __init__(self) -> None:
        self.rules: list[Rule] = sarifrules.finding_rules()
        self._index = {r.id: i for i, r in enumerate(self.rules)}

    def index(self, rule: Rule) -> int:
        if rule.id not in self._index:
            self._index[rule.id] = len(self.rules)
            self.rules.append(rule)
        return self._index[rule.id]

    def of_finding(self, rule: str) -> int:
        return self._index[rule]


# ---- the run -----------------------------------------------------------------------------------------

def _timestamp(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _invocation(inv: Invocation, reports: Sequence[FileReport], root: Path) -> dict[str, Any]:
    failures = [(r, d) for r in reports for d in r.diagnostics if d.code in sarifrules.TOOL_FAILURES]
    out: dict[str, Any] = {
        # findings and compile errors are results, not failures; a file clperf could not analyse is one
        "executionSuccessful": not failures,
        "commandLine": shlex.join(inv.arguments),
        "startTimeUtc": _timestamp(inv.start),
        "endTimeUtc": _timestamp(inv.end or datetime.now(UTC)),
        "workingDirectory": {"uri": _folder_uri(Path.cwd().resolve())},
    }
    if failures:
        out["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": d.message},
             "descriptor": {"id": sarifrules.diagnostic_rule(d).id},
             "locations": _location(_artifact_location(r.file, root), _region(d.line, d.column))}
            for r, d in failures
        ]
    return out


def information_uri() -> str | None:
    """The project's home page from the installed package's metadata, else the rule pages' folder."""
    try:
        meta = metadata("clperf")
    except PackageNotFoundError:
        meta = None
    if meta is not None:
        for entry in meta.get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() in ("homepage", "repository", "source", "documentation") and url.strip():
                return url.strip()
        home = meta.get_all("Home-page") or []
        if home and home[0].strip():
            return home[0].strip()
    folder = rules_folder()
    return _folder_uri(folder) if folder is not None else None


def _driver(rules: list[Rule]) -> dict[str, Any]:
    driver: dict[str, Any] = {"name": "clperf", "fullName": f"clperf {__version__}", "version": __version__,
                              "semanticVersion": __version__}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = [r.to_sarif() for r in rules]
    return driver


def to_sarif(reports: Iterable[FileReport], invocation: Invocation | None = None,
             root: Path | None = None) -> dict[str, Any]:
    """The SARIF log of ``clperf check`` over ``reports``. ``invocation``: how clperf was run (default:
    this process's arguments, starting now); ``root``: ``%SRCROOT%`` (default: ``source_root``)."""
    inv = invocation or invocation_now()
    reports = list(reports)
    top = (root or source_root(r.file for r in reports)).resolve()
    rules = _Rules()
    fingerprint = _Fingerprints()
    artifacts: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for rep in reports:
        location = _artifact_location(rep.file, top)
        artifact = {**location, "index": len(artifacts)}
        artifacts.append({"location": location, "roles": ["analysisTarget"]})
        lines = _source_lines(rep.file)
        uri = location["uri"]
        for d in rep.diagnostics:
            rule = sarifrules.diagnostic_rule(d)
            fp = fingerprint(uri, lines, rule.id, _kernel_at(rep, d.line), d.line)
            results.append(_diagnostic_result(d, rule, rules.index(rule), artifact, fp))
        for f in rep.findings:
            fp = fingerprint(uri, lines, f.rule, f.kernel, f.line)
            results.append(_finding_result(f, rules.of_finding(f.rule), artifact, fp))
    run = {
        "tool": {"driver": _driver(rules.rules)},
        "invocations": [_invocation(inv, reports, top)],
        "originalUriBaseIds": {SRCROOT: {"uri": _folder_uri(top),
                                         "description": {"text": ROOT_TEXT}}},
        "artifacts": artifacts,
        "results": results,
        "columnKind": "unicodeCodePoints",  # columns count characters, as clperf's records do
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


__all__ = ["FINGERPRINT", "Invocation", "SCHEMA", "SRCROOT", "information_uri", "invocation_now", "line_hash",
           "source_root", "to_sarif"]
