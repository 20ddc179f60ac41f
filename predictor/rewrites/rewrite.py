"""What a rewrite is (a finding's fix: edits, why it is refused, what it is predicted to gain) and the small
helpers every rewrite shares: the kernel's scenario from its directive, a speedup as text, the edit that
sets a directive's ``--local``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from clperf.core import frontend
from clperf.core.errors import ClperfError
from clperf.core.records import Scenario
from clperf.core.scenario import ScenarioSpec, parse_flags, resolve
from clperf.predictor.rewrites.edits import TextEdit


class RewriteError(ClperfError):
    """No rewrite can be applied (the reason says why)."""


@dataclass(frozen=True)
class Rewrite:
    rule: str
    kernel: str
    kind: str  # "pragma-unroll" | "manual-unroll" | "local-cache" | "work-group"
    title: str
    edits: tuple[TextEdit, ...]
    disabled_reason: str | None = None
    predicted_speedup: float | None = None
    prediction: str = ""  # model, device and scenario the prediction is for
    scenario_change: dict[str, Any] | None = None  # work-group: {"local": [..]}
    notes: tuple[str, ...] = ()  # e.g. reads that stay global
    predict_edits: tuple[TextEdit, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def enabled(self) -> bool:
        return self.disabled_reason is None

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "kernel": self.kernel, "kind": self.kind, "title": self.title,
            "edits": [e.to_json() for e in self.edits], "disabled_reason": self.disabled_reason,
            "predicted_speedup": self.predicted_speedup, "prediction": self.prediction,
            "scenario_change": self.scenario_change, "notes": list(self.notes),
        }


def scenario_for(text: str, kernel: Any, spec: Any = None) -> Scenario:
    """The kernel's scenario: its ``// clperf:`` directive, overridden by ``spec`` (a ScenarioSpec)."""
    parsed = next((k for k in frontend.parse(text) if k.name == kernel.name), None)
    base = parse_flags(parsed.directive) if parsed is not None and parsed.directive else ScenarioSpec()
    merged = base.merged(spec) if spec is not None else base
    return resolve(merged, list(kernel.params), parsed.dims_used if parsed else 1,
                   getattr(kernel, "required_local", None))


def speedup_text(speedup: float | None) -> str:
    if speedup is None:
        return "speedup not predicted"
    if abs(speedup - 1.0) < 0.005:
        return "predicted: no change"
    return f"predicted {speedup:.2f}x " + ("faster" if speedup > 1 else "slower")


def directive_local(text: str, kernel: Any, local: tuple[int, ...]) -> tuple[TextEdit, ...]:
    """Edits that make the kernel's ``// clperf:`` directive say ``--local L``."""
    parsed = next((k for k in frontend.parse(text) if k.name == kernel.name), None)
    if parsed is None:
        return ()
    value = ",".join(map(str, local))
    lines = text.split("\n")
    if parsed.directive_line is not None:
        for i in range(parsed.directive_line - 1, parsed.header_line - 1):
            m = re.search(r"--local(\s+|=)(\S+)", lines[i])
            if m:
                return (TextEdit(i + 1, m.start(2) + 1, i + 1, m.end(2) + 1, value),)
        last = parsed.header_line - 2
        while last >= 0 and "clperf:" not in lines[last]:
            last -= 1
        end = len(lines[last]) + 1
        return (TextEdit(last + 1, end, last + 1, end, f" --local {value}"),)
    return (TextEdit(parsed.header_line, 1, parsed.header_line, 1, f"// clperf: --local {value}\n"),)
