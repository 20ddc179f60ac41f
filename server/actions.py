"""Code actions: the quick fixes offered next to findings, and the scenario directive for kernels on defaults.

* ``unroll-candidate`` and ``local-cache-candidate`` -> the rewrites of ``clperf.predictor.rewrites``
  (``#pragma unroll N``, a manual unroll, the ``__local`` tile), each titled with its predicted speedup
  (the edited file is compiled and estimated in a worker thread); unsafe ones come back disabled.
* any kernel whose scenario uses defaults -> "Add a scenario directive" with the values now in use.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clperf.predictor.frontend import Kernel
from clperf.server import fixes
from clperf.server.engine import Analysis
from clperf.server.views import Action, Edit, Problem, Span

from clperf.records import Scenario

log = logging.getLogger("clperf.server")
# On the local PoCL device a quick fix's speedup comes from PoCL's own code, counted in a run of each
# version (about 2 s each, benchmark/compiled.py): a code action request waits this long for all of it,
# then shows the profile's guess; the runs go on in the background and a later request shows their figure.
CODE_WAIT_S = 1.0

def rewrite_actions(problems: Sequence[Problem], text: str, path: str, build_options: str, device: Any,
                    scenarios: Mapping[str, Scenario], with_disabled: bool) -> list[Action]:
    """Fixes from ``clperf.predictor.rewrites`` (pragma and manual unroll, the ``__local`` tile), titled with
    their predicted speedup. Rewrites that would not be equivalent come back disabled, with the reason."""
    from clperf.predictor import rewrites
    from clperf.predictor.report import analyze_text

    candidates = [p for p in problems if p.code in ("unroll-candidate", "local-cache-candidate") and p.data]
    if not candidates:
        return []
    report = analyze_text(text, Path(path) if path else None, build_options)
    deadline = time.monotonic() + CODE_WAIT_S
    out: list[Action] = []
    for p in candidates:
        kernel = str(p.data.get("kernel", "")) if p.data else ""
        try:
            found = rewrites.available(text, report, p.data, path=Path(path) if path else None,
                                       build_options=build_options, device=device,
                                       scenario=scenarios.get(kernel), code_deadline=deadline)
        except Exception:  # one broken rewrite must not take the other actions with it
            log.error("rewrites for %s failed", p.code, exc_info=True)
            continue
        for i, r in enumerate(found):
            if r.disabled_reason is not None and not with_disabled:
                continue
            edits = tuple(Edit(Span(e.line, e.column, e.end_line, e.end_column), e.new_text) for e in r.edits)
            out.append(Action(r.title, "quickfix", edits, (p,), preferred=i == 0 and r.enabled,
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
