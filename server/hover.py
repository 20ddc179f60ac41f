"""Hover: the estimate on a kernel's name, the access pattern on a memory access.

A kernel's hover fits on screen without scrolling: a heading (the estimate and the device) and a short
summary (bound, cycles, bandwidth, likely range, the kernel's most severe finding), then, in a second
section, the detail: traffic, model, scenario, cautions and the last real measurement. Every number names
where it came from: the model (name and version), the scenario (and which parts of it are the documented
defaults rather than the user's), the device, and the last real measurement.

A hover is a heading, summary lines and rows of plain text (``HoverText``), written for the client
(``render``): the detail as a Markdown table where the client names its Markdown parser (VS Code's
``general.markdown``), a Markdown list where it takes Markdown but may not draw tables (Neovim shows a
table's pipes as they are), plain lines where its hover takes no Markdown at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from clperf.core import units as fmt
from clperf.core.frontend import Kernel
from clperf.core.records import Measurement
from clperf.server.documents import Measured
from clperf.server.engine import Analysis, KernelResult
from clperf.server.hints import access_tooltip
from clperf.server.views import HoverText, Problem, Span

Style = Literal["table", "list", "plain"]
_MARKDOWN_SPECIAL = re.compile(r"([\\`*<>|\[\]])")


def hover_style(content_format: Sequence[str] | None, markdown_parser: bool) -> Style:
    """How a client with these hover ``contentFormat``s (and a declared Markdown parser or not) gets it."""
    if not content_format or "markdown" not in content_format:
        return "plain"
    return "table" if markdown_parser else "list"


def _md(text: str) -> str:
    """Plain text as Markdown that shows it as it is (a build log's ``<source>``, a ``float *``)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def render(h: HoverText, style: Style) -> str:
    """The heading and summary lines (one paragraph, a line each), then the rows as a second section."""
    if style == "plain":
        return "\n".join([h.name + h.rest, *h.summary, *([""] if h.rows else []),
                          *(f"{k}: {v}" for k, v in h.rows)])
    head = "  \n".join([f"**{_md(h.name)}**{_md(h.rest)}", *(_md(line) for line in h.summary)])
    if not h.rows:
        return head
    if style == "list":
        return "\n".join([head, "", "---", "", *(f"- **{_md(k)}**: {_md(v)}" for k, v in h.rows)])
    return "\n".join([head, "", "---", "", "| | |", "|---|---|",
                      *(f"| {_md(k)} | {_md(v)} |" for k, v in h.rows)])


SEVERITY_ORDER = ("error", "warning", "information", "hint")
FINDING_CHARS = 72  # the top finding's sentence is cut to this many characters


def _scenario_rows(result: KernelResult) -> list[tuple[str, str]]:
    s = result.scenario
    if s is None:
        return []
    rows = [("scenario", f"global {fmt.dims(s.global_size)}, local {fmt.dims(s.local_size)}; "
                         f"arguments {fmt.args(s.args) or 'none'}")]
    if s.defaulted:
        rows.append(("defaulted", ", ".join(s.defaulted) + " (add a // clperf: directive to set them)"))
    if result.scenario_problem:
        rows.append(("scenario problem", result.scenario_problem))
    return rows


def top_finding(findings: Sequence[Problem]) -> str | None:
    """The most severe finding (the first of them by line), as its first clause: ``'in' is read with a
    stride of 32 elements between neighbouring work-items (line 7)``."""
    if not findings:
        return None
    f = min(findings, key=lambda p: (SEVERITY_ORDER.index(p.severity), p.span.line, p.span.column))
    text = re.split(r"(?<=[^.])\.\s|:\s|, so\s", f.message, maxsplit=1)[0].rstrip(".")
    if len(text) > FINDING_CHARS:
        text = text[:FINDING_CHARS - 1].rsplit(" ", 1)[0] + "…"
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"{f.code or 'finding'} at line {f.span.line}: {text}{more}"


def _summary(result: KernelResult, findings: Sequence[Problem]) -> list[str]:
    est = result.estimate
    if est is None:
        lines = [f"no estimate{' yet' if result.pending else ''}: {result.estimate_problem}"]
    else:
        lo, hi = est.interval_ms
        lines = [f"{est.bound}-bound · {fmt.count(est.cycles)} cycles · "
                 f"{fmt.percent(est.bandwidth_utilization)} of the peak bandwidth · "
                 f"likely {fmt.ms(lo)} – {fmt.ms(hi)}"]
    top = top_finding(findings)
    if top:
        lines.append(top)
    return lines


def kernel_hover(result: KernelResult, device: Any, measured: Measured | None, span: Span,
                 stale: bool = False, findings: Sequence[Problem] = ()) -> HoverText:
    """The summary first (what fits without scrolling), the detail rows in a second section."""
    est = result.estimate
    rows: list[tuple[str, str]] = []
    if est is not None:
        if result.traffic is not None:
            rows.append(("traffic", f"{fmt.size(result.traffic.dram_bytes)} from DRAM, "
                                    f"{fmt.size(result.traffic.issued_bytes)} issued; "
                                    f"{fmt.count(result.traffic.flops)} flops, "
                                    f"{fmt.count(result.traffic.int_ops)} integer ops"))
        calibrated = f", calibrated on {est.calibration_measurements} measurements" if est.calibrated else ""
        rows.append(("model", f"{est.model_name} {est.model_version}{calibrated}"
                              + (" (cached)" if est.cached else "")))
        rows += [("caution", d) for d in result.doubts]
    rows += _scenario_rows(result)
    rows.append(("last measured", _measured_text(measured, result.last_measured)
                 + (" (before your last edit of this kernel)" if stale else "")))
    where = device.name if device else "no device"
    rest = f" ≈ {fmt.ms(est.time_ms)} on {where}" if est is not None else f" on {where}"
    return HoverText(span, result.name, rest, tuple(rows), tuple(_summary(result, findings)))


def _measured_text(measured: Measured | None, stored: Measurement | None) -> str:
    if measured is None and stored is None:
        return "never, for this exact source (run the Benchmark lens)"
    m = measured.measurement if measured is not None else stored
    assert m is not None
    if m.status != "ok" or m.median_ms is None:
        first = (m.error or "").strip().split("\n", 1)[0]  # one row: a build log has many lines
        return f"{m.status} on {m.device.name}" + (f": {first}" if first else "")
    cv = f", CV {m.cv * 100:.1f}%" if m.cv is not None else ""
    return f"{fmt.ms(m.median_ms)} median of {m.repetitions} runs on {m.device.name}{cv} ({m.timestamp})"


def hover_at(kernels: Sequence[Kernel], analysis: Analysis | None, measured: Mapping[str, Measured],
             lines: Sequence[str], line: int, column: int) -> HoverText | None:
    """Hover for 1-based ``line``/``column``: a kernel name, else an analysed access, else nothing."""
    if analysis is None:
        return None
    for k in kernels:
        span = Span.at(k.line, k.column, len(k.name))
        result = analysis.kernels.get(k.name)
        if result is not None and span.contains(line, column):
            m = measured.get(k.name)
            stale = m is not None and m.stale(lines, k)
            findings = [p for p in analysis.problems if p.data and p.data.get("kernel") == k.name]
            return kernel_hover(result, analysis.device, m, span, stale, findings)
    for k in kernels:
        result = analysis.kernels.get(k.name)
        if result is None or result.report is None or not k.header_line <= line <= k.end_line:
            continue
        shift = k.line - result.report.line
        for access in result.report.accesses:
            if access.line + shift != line or line > len(lines):
                continue
            span = access_span(lines[line - 1], line, access.column)
            if span.contains(line, column):
                return HoverText(span, access.param or "memory", f": {access_tooltip(access)}")
    return None


def access_span(text: str, line: int, column: int) -> Span:
    """From the access's column to its closing bracket (or the end of the word)."""
    start = column - 1
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth <= 0:
                i += 1
                break
        elif depth == 0 and not (ch.isalnum() or ch in "_*"):
            break
        i += 1
    return Span(line, column, line, max(i + 1, column + 1))
