"""Source edits behind the quick fixes, as plain text edits (no protocol types).

* ``unroll_edit``: ``#pragma unroll N`` on its own line right above a loop, indented like the loop.
* ``directive_edit``: a ``// clperf:`` scenario directive above a kernel that runs on the defaults, written
  with the values the estimate currently uses so the user starts from what they see and edits from there.
"""

from __future__ import annotations

from collections.abc import Sequence

from clperf.predictor.frontend import Kernel
from clperf.server.views import Edit, Span

from clperf.records import Scenario
from clperf.scenario import ScenarioSpec


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def unroll_edit(lines: Sequence[str], loop_line: int, factor: int) -> Edit:
    """Insert ``#pragma unroll factor`` above 1-based ``loop_line``."""
    indent = _indent(lines[loop_line - 1]) if loop_line <= len(lines) else ""
    return Edit(Span.at(loop_line, 1), f"{indent}#pragma unroll {factor}\n")


def unrolled_text(text: str, loop_line: int, factor: int) -> str:
    """The whole file with the pragma inserted, for estimating the fixed variant."""
    lines = text.split("\n")
    edit = unroll_edit(lines, loop_line, factor)
    return "\n".join(lines[: loop_line - 1] + [edit.new_text.rstrip("\n")] + lines[loop_line - 1:])


def scenario_flags(scenario: Scenario, kernel: Kernel) -> str:
    """The resolved scenario as directive flags: launch sizes plus every argument value."""
    args = {name: (f"{v:g}" if isinstance(v, float) else str(v)) for name, v in scenario.args.items()}
    spec = ScenarioSpec(
        global_size=tuple(str(g) for g in scenario.global_size),
        local_size=tuple(str(x) for x in scenario.local_size) if scenario.local_size else None,
        args={p.name: args[p.name] for p in kernel.params if p.name in args},
        fills=dict(scenario.fills),
    )
    return spec.to_flags()


def directive_edit(kernel: Kernel, scenario: Scenario) -> Edit:
    return Edit(Span.at(kernel.header_line, 1), f"// clperf: {scenario_flags(scenario, kernel)}\n")


def speedup_text(before_ms: float | None, after_ms: float | None) -> str:
    if before_ms is None or after_ms is None or after_ms <= 0:
        return "speedup not predicted"
    ratio = before_ms / after_ms
    if abs(ratio - 1.0) < 0.005:
        return "predicted: no change"
    return f"predicted {ratio:.2f}x " + ("faster" if ratio > 1 else "slower")
