"""The work-group size recommendation: a scenario change, not a code edit.

Candidates are the usual power-of-two shapes that divide the global size and fit the device; each is
estimated with the same predictor as everything else, and the best one is recommended when it is predicted
to be faster than the current choice. Its edit changes (or adds) ``--local`` in the kernel's
``// clperf:`` directive, so the estimate, the benchmark and the user's host code can follow.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from clperf.core.errors import ClperfError
from clperf.core.records import Device, Scenario
from clperf.predictor.model import profiles
from clperf.predictor.model.estimate import estimate
from clperf.predictor.rewrites.rewrite import Rewrite, directive_local, scenario_for, speedup_text

MIN_GAIN = 1.02  # below this the recommendation is noise in the model, not a gain


def candidates(scenario: Scenario, device: Device) -> list[tuple[int, ...]]:
    g = scenario.global_size
    limit = device.max_work_group_size
    shapes: list[tuple[int, ...]]
    if len(g) == 1:
        shapes = [(n,) for n in (32, 64, 128, 256, 512, 1024)]
    elif len(g) == 2:
        shapes = [(a, b) for a in (8, 16, 32, 64, 128, 256) for b in (1, 2, 4, 8, 16, 32)]
    else:
        shapes = [(a, b, 1) for a in (8, 16, 32, 64) for b in (1, 2, 4, 8)]
    out: list[tuple[int, ...]] = []
    for s in shapes:
        n = 1
        for x in s:
            n *= x
        if n <= limit and all(gg % ss == 0 for gg, ss in zip(g, s, strict=True)):
            out.append(s)
    return out


def recommend(text: str, kernel: Any, device: Device | None, scenario: Scenario | None,
              path: Path | None, build_options: str) -> Any:
    title = "Change the work-group size"
    if re.search(r"reqd_work_group_size", text):
        return Rewrite("work-group", kernel.name, "work-group", title, (),
                       "the kernel requires a work-group size (reqd_work_group_size)")
    if any(p.pointer and p.address_space == "local" for p in kernel.params):
        return Rewrite("work-group", kernel.name, "work-group", title, (),
                       "a __local buffer argument is sized for the current work-group")
    try:
        device = device or profiles.select_device(None)
        scenario = scenario or scenario_for(text, kernel)
        # the roofline or the learned model: PoCL's own code would take a run per candidate shape
        base = estimate(kernel, scenario, device, source=text, build_options=build_options, calibrate=False)
        scored = []
        for s in candidates(scenario, device):
            e = estimate(kernel, replace(scenario, local_size=s), device, source=text,
                         build_options=build_options, calibrate=False)
            scored.append((e.time_ms, s))
    except ClperfError as e:
        return Rewrite("work-group", kernel.name, "work-group", title, (), f"not predicted: {e}")
    if not scored:
        return Rewrite("work-group", kernel.name, "work-group", title, (),
                       "no power-of-two work-group shape divides the global size")
    best_ms, best = min(scored)
    gain = base.time_ms / best_ms if best_ms > 0 else 1.0
    cur = "x".join(map(str, scenario.local_size)) if scenario.local_size else "chosen by the runtime"
    value = "x".join(map(str, best))
    note = (f"{base.model_name} {base.model_version} on {device.name}: {base.time_ms:.4g} ms at local {cur}, "
            f"{best_ms:.4g} ms at {value}")
    if gain < MIN_GAIN or scenario.local_size == best:
        return Rewrite("work-group", kernel.name, "work-group", title, (),
                       f"no work-group size is predicted to be faster than {cur} ({note})",
                       predicted_speedup=gain, prediction=note)
    return Rewrite("work-group", kernel.name, "work-group",
                   f"Use work-group size {value} instead of {cur} ({speedup_text(gain)})",
                   directive_local(text, kernel, best), predicted_speedup=gain, prediction=note,
                   scenario_change={"local": list(best)})
