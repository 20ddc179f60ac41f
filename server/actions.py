"""Code actions: the quick fixes offered next to findings, and the scenario directive for kernels on defaults.

* ``unroll-candidate`` -> insert ``#pragma unroll N``; the title carries the predicted speedup (the fixed
  file is compiled and estimated in a worker thread; "speedup not predicted" when that is not possible).
* ``local-cache-candidate`` -> the ``__local`` caching rewrite, when ``clperf.predictor.rewrites`` offers it.
* any kernel whose scenario uses defaults -> "Add a scenario directive" with the values now in use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from clperf.predictor.frontend import Kernel
from clperf.server import fixes
from clperf.server.engine import Analysis
from clperf.server.views import Action, Edit, Problem, Span

log = logging.getLogger("clperf.server")

Speedup = Callable[[str, str], str]  # (kernel name, fixed text) -> title suffix


def unroll_factor(data: dict[str, Any]) -> int:
    for key in ("factor", "unroll", "suggested_unroll", "trip_count"):
        v = data.get(key)
        if isinstance(v, int) and v > 1:
            return min(v, 16) if key == "trip_count" else v
    return 4


def unroll_actions(problems: Sequence[Problem], text: str, speedup: Speedup) -> list[Action]:
    out = []
    lines = text.split("\n")
    for p in problems:
        if p.code != "unroll-candidate" or not p.data:
            continue
        loop_line = int(p.data.get("loop_line") or p.span.line)
        factor = unroll_factor(p.data)
        kernel = str(p.data.get("kernel", ""))
        edit = fixes.unroll_edit(lines, loop_line, factor)
        gain = speedup(kernel, fixes.unrolled_text(text, loop_line, factor))
        out.append(Action(f"Insert #pragma unroll {factor} ({gain})", "quickfix", (edit,), (p,),
                          preferred=True))
    return out


def local_cache_actions(problems: Sequence[Problem], text: str, path: str, speedup: Speedup) -> list[Action]:
    candidates = [p for p in problems if p.code == "local-cache-candidate" and p.data]
    if not candidates:
        return []
    try:
        from clperf.predictor import rewrites  # type: ignore[attr-defined]
    except ImportError:
        return []
    out = []
    for p in candidates:
        try:
            new_text = rewrites.apply(text, p.data)  # type: ignore[attr-defined]
        except Exception:
            log.info("no __local rewrite for %s", p.data, exc_info=True)
            continue
        if not isinstance(new_text, str) or new_text == text:
            continue
        lines = text.split("\n")
        whole = Edit(Span(1, 1, len(lines), len(lines[-1]) + 1), new_text)
        gain = speedup(str(p.data.get("kernel", "")), new_text)
        out.append(Action(f"Cache {p.data.get('param', 'the buffer')} in __local memory ({gain})", "quickfix",
                          (whole,), (p,)))
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
