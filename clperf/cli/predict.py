"""Subcommands of this package (registered by clperf.cli).

* ``clperf analyze FILE``: per kernel, how it touches memory (accesses, loops, counts) and the findings.
* ``clperf check PATH...``: findings and compile errors of many files, as text, JSON or SARIF, with an
  exit status for CI.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

from clperf.cli import add_build_options, add_json_flag
from clperf.cli import fix as fix_cli
from clperf.cli import model as model_cli
from clperf.cli.sarif import invocation_now, to_sarif
from clperf.core.errors import InputError
from clperf.predictor.analysis.pipeline import analyze_file

EXIT_OK = 0
EXIT_FINDINGS = 1
SEVERITY_RANK = {"hint": 0, "information": 1, "warning": 2, "error": 3}
FAIL_ON = ("error", "warning", "information", "never")

CHECK_EPILOG = """\
exit status:
  0  nothing at or above the --fail-on severity
  1  at least one finding or compile diagnostic at or above --fail-on (default: warning)
  2  bad usage or input (a path that does not exist, bad --build-options)
 70  internal error (a bug: please report it)

severities: barrier-divergence is an error; a strided global access is a warning; gathers,
__local caching and unroll candidates are information. A file clang rejects gives error diagnostics.
"""


def register(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    p = sub.add_parser(
        "analyze",
        help="show how each kernel of a file touches memory",
        description="Compile an OpenCL file with clang and show, per kernel, its parameters, "
        "memory accesses (pattern along work-item dimension 0, and 1 for 2-D "
        "kernels), loops with trip counts, barriers, per-work-item operation counts "
        "and findings. Exit status 1 when clang reports an error.",
    )
    p.add_argument("file", type=Path, help="an OpenCL C file (.cl)")
    add_json_flag(p)
    add_build_options(p)
    p.set_defaults(run=run_analyze)

    c = sub.add_parser(
        "check",
        help="report performance findings and compile errors (text, JSON, SARIF)",
        description="Check OpenCL files (folders are searched for *.cl) and report findings "
        "and compile diagnostics.",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="files or folders")
    c.add_argument(
        "--format",
        choices=("text", "json", "sarif"),
        default="text",
        help="output format (default: text); --json is the same as --format json",
    )
    add_json_flag(c)
    c.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="warning",
        help="exit 1 when anything at or above this severity is found (default: warning)",
    )
    c.add_argument("--output", "-o", type=Path, help="write the report to this file instead of stdout")
    add_build_options(c)
    c.set_defaults(run=run_check)


    model_cli.register(sub)

    fix_cli.register(sub)


# ---- analyze -----------------------------------------------------------------------------------------


def run_analyze(ns: argparse.Namespace) -> int:

    path: Path = ns.file
    if not path.exists():
        raise InputError(f"{path}: no such file")
    report = analyze_file(path, ns.build_options)  # a FIFO, device or folder: its "io" diagnostic says so
    if ns.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        print(format_report(report))
    return EXIT_FINDINGS if any(d.severity == "error" for d in report.diagnostics) else EXIT_OK


def _pattern(pattern: str | None, stride: int | None, expr: str | None) -> str:
    if pattern is None:
        return ""
    if pattern == "strided":
        return f"stride {stride if stride is not None else expr}"
    if pattern == "contiguous" and stride not in (None, 1):
        return f"contiguous ({stride})"
    return pattern


def _bytes(n: float) -> str:
    return f"{n:g} B"


def _table(rows: list[list[str]], indent: str) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def format_report(report) -> str:  # noqa: ANN001 - FileReport, imported lazily
    out: list[str] = [report.file]
    for d in report.diagnostics:
        out.append(f"  {d.line}:{d.column}: {d.severity}: {d.message}")
    for k in report.kernels:
        out.append("")
        head = f"{k.name}  (line {k.line}, {k.dims}-D, {k.barriers} barrier{'s' if k.barriers != 1 else ''})"
        if not k.analyzed:
            head += "  not compiled: parse only"
        out.append(head)
        params = []
        for p in k.params:
            if p.pointer:
                use = "/".join(u for u, f in (("read", p.read), ("written", p.written)) if f) or "unused"
                const = "const " if p.const else ""
                params.append(f"{p.name}: {p.address_space} {const}{p.type}* ({use})")
            else:
                params.append(f"{p.name}: {p.type}")
        out += textwrap.wrap(
            "params: " + ", ".join(params), 108, initial_indent="  ", subsequent_indent="    "
        )
        if k.accesses:
            two_d = any(a.dim1_pattern for a in k.accesses)
            header = ["line:col", "access", "buffer", "space", "bytes", "dim 0"] + (
                ["dim 1"] if two_d else []
            )
            rows = [header + ["loop"]]
            for a in k.accesses:
                row = [
                    f"{a.line}:{a.column}",
                    a.kind,
                    a.param or "?",
                    a.address_space,
                    str(a.element_size),
                    _pattern(a.pattern, a.stride, a.stride_expr),
                ]
                if two_d:
                    row.append(_pattern(a.dim1_pattern, a.dim1_stride, a.dim1_stride_expr) or "-")
                row.append(f"line {a.loop_line}" if a.loop_line else "-")
                rows.append(row)
            out += _table(rows, "  ")
        for lp in k.loops:
            trips = (
                str(lp.trip_count)
                if lp.trip_count is not None
                else lp.trip_expr or ("varies per work-item" if lp.varies else "unknown")
            )
            pragma = (
                "" if lp.unroll is None else f", #pragma unroll{' ' + str(lp.unroll) if lp.unroll else ''}"
            )
            out.append(f"  loop line {lp.line}: depth {lp.depth}, runs {trips}{pragma}")
        if k.analyzed:
            o = k.ops
            mem = [f"global {_bytes(o.global_load_bytes)} load / {_bytes(o.global_store_bytes)} store"]
            if o.local_load_bytes or o.local_store_bytes:
                mem.append(f"local {_bytes(o.local_load_bytes)} / {_bytes(o.local_store_bytes)}")
            if o.constant_load_bytes:
                mem.append(f"constant {_bytes(o.constant_load_bytes)}")
            if o.atomics:
                mem.append(f"{o.atomics:g} atomics")
            note = " (loops without a constant trip count counted once)" if o.trip_unknown else ""
            out.append(f"  per work-item: {o.flops:g} flops, {o.int_ops:g} int ops, {', '.join(mem)}{note}")
        for f in (f for f in report.findings if f.kernel == k.name):
            out += textwrap.wrap(
                f"{f.line}:{f.column} {f.severity} [{f.rule}] {f.message}",
                108,
                initial_indent="  ! ",
                subsequent_indent="      ",
            )
    return "\n".join(out)


# ---- check -------------------------------------------------------------------------------------------


def _files(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.cl") if q.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return out


def run_check(ns: argparse.Namespace) -> int:
    started = invocation_now()  # SARIF's invocation starts before the first file is read
    files = _files(ns.paths)
    reports = [analyze_file(f, ns.build_options) for f in files]
    fmt = "json" if ns.json else ns.format
    if fmt == "sarif":
        text = json.dumps(to_sarif(reports, started), indent=1)
    elif fmt == "json":
        text = json.dumps({"files": [r.to_json() for r in reports]}, indent=1)
    else:
        lines = []
        for r in reports:
            for d in r.diagnostics:
                lines.append(f"{r.file}:{d.line}:{d.column}: {d.severity}: {d.message} [{d.code}]")
            for f in r.findings:
                lines.append(f"{r.file}:{f.line}:{f.column}: {f.severity}: {f.message} [{f.rule}]")
        n_find = sum(len(r.findings) for r in reports)
        n_err = sum(1 for r in reports for d in r.diagnostics if d.severity == "error")
        lines.append(
            f"{len(reports)} file{'s' if len(reports) != 1 else ''} checked: {n_find} finding"
            f"{'s' if n_find != 1 else ''}, {n_err} compile error{'s' if n_err != 1 else ''}"
        )
        text = "\n".join(lines)
    if ns.output:
        try:
            ns.output.write_text(text + "\n", encoding="utf-8")
        except OSError as e:
            raise InputError(f"cannot write {ns.output}: {e.strerror or e}") from e
    else:
        sys.stdout.write(text + "\n")
    return EXIT_FINDINGS if failing(reports, ns.fail_on) else EXIT_OK


def failing(reports: Iterable, fail_on: str) -> bool:  # noqa: ANN001
    """True when a finding or diagnostic is at or above ``fail_on`` (``never``: never)."""
    if fail_on == "never":
        return False
    bar = SEVERITY_RANK[fail_on]
    for r in reports:
        for sev in [d.severity for d in r.diagnostics] + [f.severity for f in r.findings]:
            if SEVERITY_RANK.get(sev, 0) >= bar:
                return True
    return False
