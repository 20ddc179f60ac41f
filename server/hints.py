"""Inlay hints: where a kernel's time goes, written into the code.

At a loop: its share of the kernel's memory traffic, ``≈62% of memory traffic`` (the time of a
memory-bound kernel goes where its traffic goes, a compute-bound kernel's does not: the label says which
it is). At a global access that is
not contiguous: its pattern, ``stride 32`` / ``stride rows`` / ``gather`` / ``same for all``. Contiguous
accesses get no hint: they are what the hardware wants, and a hint on every line is noise.

Hints come from the newest analysis, shifted by how far the kernel moved since (matched by name), and are
clipped to the kernel's current lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clperf.core import units as fmt
from clperf.core.frontend import Kernel
from clperf.server.engine import Analysis
from clperf.server.views import Hint


def access_label(access: Any) -> str | None:
    pattern = access.pattern
    if pattern == "strided":
        stride = access.stride if access.stride is not None else access.stride_expr
        return f"stride {stride}" if stride is not None else "strided"
    if pattern == "indirect":
        return "gather" if access.kind == "load" else "scatter"
    if pattern == "uniform" and access.address_space == "global":
        return "same for all"
    return None


def access_tooltip(access: Any) -> str:
    stride = access.stride if access.stride is not None else access.stride_expr
    return (f"{access.kind} of {access.param or 'memory'} ({access.address_space}): {access.pattern}"
            + (f", {stride} elements between neighbouring work-items" if stride is not None else ""))


def kernel_hints(kernels: Sequence[Kernel], analysis: Analysis | None, lines: Sequence[str]) -> list[Hint]:
    if analysis is None:
        return []
    hints: list[Hint] = []
    for k in kernels:
        result = analysis.kernels.get(k.name)
        if result is None or result.report is None:
            continue
        shift = k.line - result.report.line

        def inside(line: int, k: Kernel = k) -> bool:
            return k.header_line <= line <= k.end_line and line <= len(lines)

        for loop_line, share in result.loop_shares.items():
            line = loop_line + shift
            if inside(line):
                hints.append(Hint(line, len(lines[line - 1].rstrip()) + 1,
                                  f"≈{fmt.percent(share)} of memory traffic",
                                  "share of the kernel's memory traffic issued inside this loop "
                                  "(the roofline's traffic model for the current scenario)",
                                  padding_left=True))
        for access in result.report.accesses:
            label = access_label(access)
            line = access.line + shift
            if label and inside(line):
                hints.append(Hint(line, access.column, f"{label}:", access_tooltip(access),
                                  padding_right=True))
    return sorted(hints, key=lambda h: (h.line, h.column))
