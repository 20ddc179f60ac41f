"""Code actions: the quick fixes offered next to findings, and the scenario directive for kernels on defaults.

* ``unroll-candidate`` and ``local-cache-candidate`` -> the rewrites of ``clperf.predictor.rewrites``
  (``#pragma unroll N``, a manual unroll, the ``__local`` tile), each titled with its predicted speedup on
  the current device, which the title names (the edited file is compiled and estimated in a worker
  thread); unsafe ones come back disabled.
* any kernel whose scenario uses defaults -> "Add a scenario directive" with the values now in use.

A code action never runs a kernel: editors ask for them on their own (the cursor entering a line), and a
kernel is native code the file's author wrote. On the local PoCL device a speedup comes from PoCL's
counted code only where that costing is already cached (a benchmark, ``clperf predict``, or
``clperf.poclCode`` counted it); otherwise from the static model (``rewrites.available(...,
run_kernels=False)``). Kernels run on an explicit action only: the ``clperf.benchmark`` command,
``clperf bench``, ``clperf predict`` or ``clperf fix`` on a CPU device the user typed, and the counting
runs of ``clperf.poclCode``, which only the user's own settings can turn on (VS Code: a machine setting).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from clperf.api import Workspace
from clperf.core.frontend import Kernel
from clperf.core.records import Scenario
from clperf.server import fixes
from clperf.server.engine import Analysis
from clperf.server.views import Action, Edit, Problem, Span

log = logging.getLogger("clperf.server")


def on_device(title: str, predicted: bool, device: Any) -> str:
    """``Insert #pragma unroll 8 (predicted 1.12x faster)`` -> ``... faster on NVIDIA H200)``: the speedup
    is for one device, and the title says which."""
    if not predicted or device is None or not title.endswith(")"):
        return title
    return f"{title[:-1]} on {device.name})"


def rewrite_actions(problems: Sequence[Problem], text: str, path: str, ws: Workspace, device: Any,
                    scenarios: Mapping[str, Scenario], with_disabled: bool) -> list[Action]:
    """Fixes from ``clperf.predictor.rewrites`` (pragma and manual unroll, the ``__local`` tile), titled with
    their predicted speedup, which runs no kernel. Rewrites that would not be equivalent come back
    disabled, with the reason."""
    candidates = [p for p in problems if p.code in ("unroll-candidate", "local-cache-candidate") and p.data]
    if not candidates:
        return []
    report = ws.analyze(text, Path(path) if path else None)
    ws = replace(ws, run_kernels=False)  # a code action never runs a kernel: only cached countings count
    out: list[Action] = []
    for p in candidates:
        kernel = str(p.data.get("kernel", "")) if p.data else ""
        try:
            found = ws.fixes(text, report, p.data, path=Path(path) if path else None, device=device,
                             scenario=scenarios.get(kernel))
        except Exception:  # one broken rewrite must not take the other actions with it
            log.error("rewrites for %s failed", p.code, exc_info=True)
            continue
        for i, r in enumerate(found):
            if r.disabled_reason is not None and not with_disabled:
                continue
            edits = tuple(Edit(Span(e.line, e.column, e.end_line, e.end_column), e.new_text) for e in r.edits)
            title = on_device(r.title, r.predicted_speedup is not None, device)
            out.append(Action(title, "quickfix", edits, (p,), preferred=i == 0 and r.enabled,
                              disabled=r.disabled_reason))
    return out


def directive_actions(kernels: Sequence[Kernel], analysis: Analysis | None, first: int,
                      last: int) -> list[Action]:
    """For kernels whose header or body overlaps lines ``first..last`` and that run on defaults."""
    if analysis is None:
        return []
    out = []
    for k in kernels:
        result = analysis.kernels.get(k.name)
        if result is None or result.scenario is None or not result.scenario.defaulted:
            continue
        if k.directive is not None or last < k.header_line or first > k.end_line:
            continue
        out.append(Action(f"Add a scenario directive for {k.name} (now on defaults: "
                          f"{', '.join(result.scenario.defaulted)})", "quickfix",
                          (fixes.directive_edit(k, result.scenario),)))
    return out
