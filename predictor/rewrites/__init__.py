"""Verified optimisation rewrites: what a quick fix changes in a kernel, whether that is safe, and what
it is predicted to gain.

Plain API shared by ``clperf fix`` and the language server:

* ``available(text, report, finding, ...) -> list[Rewrite]``: the rewrites for one finding (rules
  ``unroll-candidate`` and ``local-cache-candidate``) or, with ``rule="work-group"``, the work-group size
  recommendation. A rewrite that would not be equivalent is still returned, with ``disabled_reason`` set,
  so an editor can show it greyed out with the reason.
* ``available(..., run_kernels=False)``: predictions that run nothing (the language server's code actions):
  on the local PoCL device, PoCL's counted code only where a costing is already cached, else the static
  model. With ``run_kernels`` (``clperf fix`` on a device the user named) both versions are counted, which
  runs them once each.
* ``apply(text, rewrite) -> str``: the edited text. ``apply(text, finding_data)`` (a finding's ``data``
  dict with ``rule`` and ``kernel``, as the server keeps it in a diagnostic) picks the first enabled
  rewrite for that finding, or raises ``RewriteError`` with the reason.

The predicted speedup is ``time(original) / time(rewritten)`` for the same scenario and device, from the
roofline applied to both versions as the device's compiler builds them (``speedup_model.py``). For the
``__local`` rewrite the rewritten kernel analysed is the fast path (tile reads without the global
fallback), which is what runs when the scenario's work-group fits the tile; the applied text keeps the
fallback.
Equivalence is tested by running original and rewritten kernels on PoCL (``tests/rewrites``), and
``bench/rewrite_speedups.py`` measures predicted against real speedups.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from clperf.benchmark import pocl_code
from clperf.core.errors import ClperfError
from clperf.core.records import Device, Scenario, type_size
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import profiles
from clperf.predictor.model import speedup as speedup_model
from clperf.predictor.rewrites import csource, local_tile, unroll, workgroup
from clperf.predictor.rewrites.edits import TextEdit, apply_edits
from clperf.predictor.rewrites.rewrite import (
    Rewrite,
    RewriteError,
    directive_local,
    scenario_for,
    speedup_text,
)

__all__ = ["Rewrite", "RewriteError", "TextEdit", "apply", "available", "directive_local", "scenario_for",
           "speedup_text", "RULES"]

log = logging.getLogger(__name__)
RULES = ("unroll-candidate", "local-cache-candidate", "work-group")
DEFAULT_MAX_GROUP = 1024
DEFAULT_LOCAL_BYTES = 32768


def apply(text: str, rewrite: Rewrite | dict[str, Any]) -> str:
    if isinstance(rewrite, Rewrite):
        if not rewrite.edits:
            raise RewriteError(f"{rewrite.title}: nothing to edit in the source")
        return apply_edits(text, rewrite.edits)
    data = dict(rewrite)
    rule, kernel = str(data.get("rule", "local-cache-candidate")), str(data.get("kernel", ""))
    report = analyze_text(text)
    if not kernel and len(report.kernels) == 1:
        kernel = report.kernels[0].name
    found = available(text, report, {**data, "rule": rule, "kernel": kernel}, predict=False)
    for r in found:
        if r.enabled:
            return apply_edits(text, r.edits)
    raise RewriteError(found[0].disabled_reason if found else f"no {rule} rewrite for kernel {kernel!r}")


def _finding_parts(finding: Any) -> tuple[str, str, dict[str, Any]]:
    if isinstance(finding, dict):
        return str(finding.get("rule", "")), str(finding.get("kernel", "")), finding
    return finding.rule, finding.kernel, dict(finding.data)


def available(text: str, report: Any, finding: Any, *, path: Path | None = None, build_options: str = "",
              device: Device | None = None, scenario: Scenario | None = None,
              predict: bool = True, code_deadline: float | None = None,
              run_kernels: bool = True) -> list[Rewrite]:
    """The rewrites for ``finding`` (a Finding, or a dict with ``rule``, ``kernel`` and the finding data).
    ``code_deadline``: until when (``time.monotonic()``) predictions wait for PoCL's counted code on the
    local PoCL device (``predicted_speedup``; None: until it is there). ``run_kernels`` False: no kernel
    runs for a prediction (only costings already cached are used)."""
    rule, kernel, data = _finding_parts(finding)
    k = report.kernel(kernel) if report is not None else None
    if rule == "unroll-candidate":
        out = _unroll(text, kernel, data, k)
    elif rule == "local-cache-candidate":
        out = _local(text, kernel, data, device, scenario, k)
    elif rule == "work-group":
        if k is None:
            return []
        return [workgroup.recommend(text, k, device, scenario, path, build_options)]
    else:
        return []
    if predict and k is not None:
        out = [_with_prediction(r, text, k, path, build_options, device, scenario, code_deadline,
                                run_kernels) for r in out]
    return out


def _unroll(text: str, kernel: str, data: dict[str, Any], k: Any) -> list[Rewrite]:
    b = csource.parse_kernel(text, kernel)
    line = int(data.get("loop_line") or data.get("line") or 0)
    loop = unroll.loop_at(b, line) if b is not None else None
    if b is None or loop is None:
        return [Rewrite("unroll-candidate", kernel, "pragma-unroll", "Unroll the loop", (),
                        f"no loop at line {line} of kernel {kernel}")]
    trips = data.get("trip_count")
    n = int(data["factor"]) if isinstance(data.get("factor"), int) else unroll.factor(trips)
    try:  # the compiler does what the manual form does: estimate that (the analysis drops pragmas)
        as_compiled: tuple[TextEdit, ...] | None = (unroll.manual_edit(b, loop, n),)
    except unroll.Refused:
        as_compiled = None
    out = [Rewrite("unroll-candidate", kernel, "pragma-unroll", f"Insert #pragma unroll {n}",
                   (unroll.pragma_edit(b, loop, n),), predict_edits=as_compiled)]
    manual_n = min(n, 8)
    try:
        out.append(Rewrite("unroll-candidate", kernel, "manual-unroll",
                           f"Unroll by {manual_n} by hand (remainder loop)",
                           (unroll.manual_edit(b, loop, manual_n),)))
    except unroll.Refused as e:
        out.append(Rewrite("unroll-candidate", kernel, "manual-unroll",
                           f"Unroll by {manual_n} by hand (remainder loop)", (), str(e)))
    return out


def _local(text: str, kernel: str, data: dict[str, Any], device: Device | None, scenario: Scenario | None,
           k: Any) -> list[Rewrite]:
    param = str(data.get("param", ""))
    title = f"Cache '{param}' in __local memory"
    b = csource.parse_kernel(text, kernel)
    if b is None:
        return [Rewrite("local-cache-candidate", kernel, "local-cache", title, (),
                        "the kernel is unfinished")]
    try:
        pl = local_tile.plan(b, param)
    except local_tile.Refused as e:
        return [Rewrite("local-cache-candidate", kernel, "local-cache", title, (), str(e))]
    max_group = device.max_work_group_size if device else DEFAULT_MAX_GROUP
    budget = (device.local_mem_bytes // 2 if device and device.local_mem_bytes else DEFAULT_LOCAL_BYTES)
    elem = _elem_size(pl.elem_type)
    local = scenario.local_size if scenario is not None else None
    if local is None and k is not None:
        try:
            local = scenario_for(text, k).local_size
        except ClperfError:
            local = None
    full, scen = local_tile.capacity(pl, max_group, local)
    cap = full if full * elem <= budget else scen
    if cap * elem > budget:
        return [Rewrite("local-cache-candidate", kernel, "local-cache", title, (),
                        f"the tile needs {cap * elem} bytes of __local memory; the budget is {budget} "
                        f"(half of the device's local memory)")]
    edits = tuple(local_tile.generate(b, pl, cap, max_group=max_group))
    # what runs when the tile fits; where the loader's loop runs one work-item at a time (PoCL), each
    # work-item stops at the first read site that serves an element (see local_tile.generate)
    scalar = device is not None and profiles.facts(device).scalar_loop_regions
    fast = tuple(local_tile.generate(b, pl, cap, fallback=False, settle_first=scalar, max_group=max_group))
    shape = _shape_text(pl)
    notes = tuple(f"line {ln}: stays a global read ({why})" for ln, why in pl.skipped)
    return [Rewrite("local-cache-candidate", kernel, "local-cache",
                    f"Cache '{param}' in __local memory ({shape})",
                    edits, None, notes=notes, predict_edits=fast)]


def _shape_text(pl: local_tile.Plan) -> str:
    sx = f"group + {pl.max_x - pl.min_x}" if pl.cx else str(pl.max_x - pl.min_x + 1)
    sy = f"group + {pl.max_y - pl.min_y}" if pl.cy else str(pl.max_y - pl.min_y + 1)
    if pl.cy or pl.max_y > pl.min_y:
        return f"tile of ({sx}) x ({sy}) elements"
    return f"tile of {sx} elements".replace("group", "work-group")


def _elem_size(type_name: str) -> int:
    return type_size(type_name) or 16


def _with_prediction(r: Rewrite, text: str, k: Any, path: Path | None, build_options: str,
                     device: Device | None, scenario: Scenario | None,
                     code_deadline: float | None, run_kernels: bool = True) -> Rewrite:
    if not r.enabled:
        return r
    try:
        new_text = apply_edits(text, r.predict_edits or r.edits)
        checked = apply_edits(text, r.edits)
        speedup, note = predicted_speedup(text, new_text, k, path=path, build_options=build_options,
                                          device=device, scenario=scenario, verify_text=checked,
                                          code_deadline=code_deadline, run_kernels=run_kernels)
    except RewriteError as e:
        return replace(r, disabled_reason=str(e))
    except ClperfError as e:
        log.info("no prediction for %s: %s", r.title, e)
        return replace(r, prediction=f"not predicted: {e}")
    return replace(r, predicted_speedup=speedup, prediction=note,
                   title=f"{r.title} ({speedup_text(speedup)})")


def predicted_speedup(text: str, new_text: str, kernel: Any, *, path: Path | None = None,
                      build_options: str = "", device: Device | None = None,
                      scenario: Scenario | None = None, verify_text: str | None = None,
                      code_deadline: float | None = None, run_kernels: bool = True) -> tuple[float, str]:
    """``time(original) / time(rewritten)`` (``speedup_model``) and a note naming model, device and
    scenario. On the local PoCL device both versions' own code is counted and costed, waited for until
    ``code_deadline`` (``time.monotonic()``; None: until it is there); the profile's guesses stand in
    until then. ``run_kernels`` False: counting (which runs each version) is never started, a costing
    already cached is used, else the profile's guesses.

    Raises RewriteError when the rewritten text (``verify_text``, default ``new_text``) does not compile.
    """
    for t in {new_text, verify_text or new_text}:
        rep = analyze_text(t, path, build_options)
        errors = [d for d in rep.diagnostics if d.severity == "error"]
        if errors:
            raise RewriteError(f"the rewritten kernel does not compile: line {errors[0].line}: "
                               f"{errors[0].message}")
    after = analyze_text(new_text, path, build_options).kernel(kernel.name)
    if after is None or not after.analyzed:
        raise RewriteError("the rewritten kernel could not be analysed")
    device = device or profiles.select_device(None)
    scenario = scenario or scenario_for(text, kernel)
    # The roofline, not the learned model: on the H200 test rewrites (bench/rewrite_speedups.py) the
    # roofline's speedups were off by a median 12% with the direction right in 86% of cases, the learned
    # model's by 16% and 46%: its small errors do not cancel between two versions of one kernel. Both
    # versions as the device's compiler builds them, with its integer costs (speedup_model.py).
    k0 = speedup_model.as_compiled(text, kernel, device, path, build_options)
    k1 = speedup_model.as_compiled(new_text, after, device, path, build_options)
    # on the local PoCL device, its own code is counted and costed (the rewrite as written: a pragma is
    # PoCL's to honour)
    c0 = pocl_code.cached(text, kernel.name, scenario, device, build_options, code_deadline, run=run_kernels)
    c1 = pocl_code.cached(verify_text or new_text, kernel.name, scenario, device, build_options,
                          code_deadline, run=run_kernels)
    pending = (c0 is None) != (c1 is None)  # one version's code is there: compare like with like
    if pending:
        c0 = c1 = None
    e0 = speedup_model.roofline_for(k0, scenario, device, c0)
    # both versions overlap memory and work alike: the rewrite changes the terms, and the original's
    # dependent share stands for the rewritten one's (a compiler unrolls the original's loop as well)
    e1 = speedup_model.roofline_for(k1, scenario, device, c1, unhidden=e0.unhidden)
    g = "x".join(map(str, scenario.global_size))
    loc = "x".join(map(str, scenario.local_size)) if scenario.local_size else "runtime"
    costed = "".join(f"; {which}: {c.item_cycles:.3g} cycles per work-item in PoCL's code (counted, llvm-mca)"
                     for which, c in (("original", c0), ("rewritten", c1)) if c is not None)
    if pending or (c0 is None and speedup_model.own_code(device)):
        costed += ("; PoCL's code not counted (yet): the profile's SIMD and barrier guesses" if run_kernels
                   else "; PoCL's code not counted (this prediction runs no kernel): the profile's SIMD "
                        "and barrier guesses")
    note = (f"{speedup_model.MODEL} on {device.name}: "
            f"{e0.time_ms:.4g} ms -> {e1.time_ms:.4g} ms "
            f"(global {g}, local {loc}{costed})")
    return (e0.time_ms / e1.time_ms if e1.time_ms > 0 else 1.0), note
