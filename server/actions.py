"""Code actions: the quick fixes offered next to findings, and the scenario directive for kernels on defaults.

* ``unroll-candidate`` and ``local-cache-candidate`` -> the rewrites of ``clperf.predictor.rewrites``
  (``#pragma unroll N``, a manual unroll, the ``__local`` tile), each titled with its predicted speedup on
  the current device, which the title names (the edited file is compiled and estimated in a worker
  thread); unsafe ones come back disabled. A rewrite is an improvement only where it is predicted
  faster: one predicted more than 10% slower (``SLOWER_LIMIT``) is not offered, one predicted a little
  slower says "not recommended", and only a rewrite predicted faster is the preferred fix.
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


SLOWER_LIMIT = 0.9  # predicted speedups below this are not offered at all
FASTER = 1.005  # above this a rewrite is predicted faster ("predicted: no change" within 0.5%)


def offered(speedup: float | None) -> bool:
    """Not a fix where clperf predicts it makes the kernel clearly slower on the current device."""
    return speedup is None or speedup >= SLOWER_LIMIT


def honest(title: str, speedup: float | None) -> str:
    """``Cache 'a' in __local memory (predicted 0.95x slower on X)`` -> ``... on X: not recommended)``."""
    if speedup is None or speedup >= 1 / FASTER or not title.endswith(")"):
        return title
    return f"{title[:-1]}: not recommended)"


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
        preferred_given = False
        for r in found:
            if r.disabled_reason is not None and not with_disabled:
                continue
            if not offered(r.predicted_speedup):
                log.info("not offered: %s (%s)", r.title, r.prediction)
                continue
            edits = tuple(Edit(Span(e.line, e.column, e.end_line, e.end_column), e.new_text) for e in r.edits)
            title = honest(on_device(r.title, r.predicted_speedup is not None, device), r.predicted_speedup)
            preferred = not preferred_given and r.enabled and (r.predicted_speedup or 0.0) > FASTER
            preferred_given = preferred_given or preferred
            out.append(Action(title, "quickfix", edits, (p,), preferred=preferred,
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
