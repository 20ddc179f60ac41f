"""The time a rewrite's speedup is predicted from: the roofline, applied to the kernel as the device's own
compiler builds it and with the device's costs of an integer division and of a barrier.

A speedup compares two versions of one kernel, so what the device's compiler does to both matters more
than for one estimate. Four device facts (``profiles.ProfileFacts``, each profile says where its values
come from) change the roofline's inputs here, and only here: ``estimate`` and the learned model's features
(``features.compute``) keep the plain roofline they were built and trained on.

* **The compiler's own unrolling** (``compiler_unroll_threshold``). The analysis compiles with loops kept
  rolled so trip counts can be read. A device compiler that fully unrolls small constant-trip loops itself
  (NVIDIA's) runs the original kernel unrolled already, so an unroll pragma or a manual unroll gains
  nothing there. Both versions are analysed again as LLVM's full unroller at that size threshold builds
  them (``report.analyze_text(..., unroll_threshold=...)``).
* **SIMD across work-items on a CPU** (``loop_free_simd_lanes``). PoCL runs each part of a kernel
  between barriers (a parallel region) as a loop over the work-items and vectorises that loop only when
  the region has no loop left inside (LLVM vectorises innermost loops). So unrolling the last loop of a
  kernel multiplies its compute rate by the SIMD width, and in a kernel with barriers (a ``__local``
  tile: the loader's loops, a barrier, loop-free reads) the work outside loops runs at that rate; the
  FLOP peak itself was measured by a kernel with a loop, i.e. at the scalar rate. "No loop left" is a
  guess from the IR; when the device is the local PoCL, its own machine code answers instead for a
  kernel without barriers (``cpu_code``, ``benchmark/compiled.py``): the vectoriser refuses some
  loop-free bodies (a guard whose loads it cannot if-convert, a remainder loop it meets before
  unrolling it) and an unroll pragma is PoCL's to honour. For a version with no loop of its own, that
  code's work-item loop is also costed by llvm-mca, LLVM's scheduling model of the host CPU (masked
  vector stores, folded loads, unrolled scalar loops): its cycles per work-item replace the counted
  compute.
* **Barriers on a CPU** (``barrier_item_ns``). A CPU runtime runs each region between barriers as a loop
  over the work-items of its own and keeps the values live across the barrier in per-work-item arrays:
  each barrier adds a fixed time per work-item (``bench/barrier_cost.py`` measures it), which a ``__local``
  tile pays on top of its loader.
* **Integer division** (``int_div_ops``). A division or remainder by a run-time value is one IR op but
  many instructions on a GPU, which has no integer divider: index arithmetic with ``/`` or ``%`` by an
  argument costs more than the plain roofline counts.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from clperf.predictor import profiles
from clperf.predictor import roofline as rl
from clperf.predictor.analysis.records import Ops

from clperf.records import Device, Scenario

MODEL = f"roofline+compiler {rl.MODEL_VERSION}"  # named in each prediction's note
log = logging.getLogger(__name__)


def as_compiled(text: str, kernel: Any, device: Device, path: Path | None = None,
                build_options: str = "") -> Any:
    """``kernel`` (a KernelReport of ``text``) as ``device``'s compiler builds it: analysed again with the
    compiler's own full unrolling when the device does that, else unchanged."""
    threshold = profiles.facts(device).compiler_unroll_threshold
    if threshold <= 0:
        return kernel
    from clperf.predictor.report import analyze_text

    k = analyze_text(text, path, build_options, unroll_threshold=threshold).kernel(kernel.name)
    return k if k is not None and k.analyzed else kernel


def has_loops(kernel: Any) -> bool:
    """Whether a loop is left in the compiled kernel (one the optimiser removed or unrolled is not)."""
    return any(chain for chain, _ops in getattr(kernel, "op_groups", ())) or any(
        a.in_loop for a in getattr(kernel, "accesses", ()))


def cpu_code(text: str, kernel: str, scenario: Scenario, device: Device, build_options: str = "",
             own_loops: bool = True) -> Any:
    """PoCL's own code for ``kernel`` (``benchmark/compiled.py``: whether its work-item loop became SIMD
    code and, for a kernel without ``own_loops``, llvm-mca's cycles per work-item), when ``device`` is
    the local PoCL device; else None. Needs the benchmark side (pyopencl)."""
    if device.source != "discovered":  # the code of the PoCL at hand, not of a profile's machine
        return None
    try:
        from clperf.benchmark import compiled
    except ImportError:  # the benchmark side is optional at estimate time
        return None
    try:
        return compiled.cpu_code(text, kernel, scenario, device, build_options=build_options,
                                 own_loops=own_loops)
    except Exception as e:  # noqa: BLE001 - a broken runtime must not stop the prediction
        log.info("no PoCL code for %s: %s", kernel, e)
        return None


def roofline_for(kernel: Any, scenario: Scenario, device: Device, code: Any = None) -> rl.Roofline:
    """The roofline of ``kernel`` (already ``as_compiled``) with the device's compute facts applied;
    ``code`` (``cpu_code``), when known, says whether a kernel without barriers runs in SIMD lanes."""
    bw, fl, measured = profiles.peaks(device)
    facts = profiles.facts(device)
    t = rl.traffic(kernel, scenario, device.type)
    t = replace(t, int_ops=t.int_ops + (facts.int_div_ops - 1.0) * t.int_divs)  # a division as its ops
    lanes = float(facts.loop_free_simd_lanes)
    barriers = int(getattr(kernel, "barriers", 0) or 0)
    simd = code.vectorized if code is not None and not barriers else not has_loops(kernel)
    if lanes > 1 and simd:
        t = replace(t, flops=t.flops / lanes, int_ops=t.int_ops / lanes, fp64_ops=t.fp64_ops / lanes,
                    special_ops=t.special_ops / lanes)
    elif lanes > 1 and int(getattr(kernel, "barriers", 0) or 0) > 0:
        # the loop-free work of a kernel with barriers is in regions of its own (an approximation: a
        # region holding both a loop and straight-line work runs that work scalar too)
        free = sum((ops for chain, ops in getattr(kernel, "op_groups", ()) if not chain), Ops())
        k = (1.0 - 1.0 / lanes) * t.work_items
        t = replace(t, flops=t.flops - k * free.flops,
                    int_ops=t.int_ops - k * (free.int_ops + (facts.int_div_ops - 1.0) * free.int_divs),
                    fp64_ops=t.fp64_ops - k * free.fp64_ops, special_ops=t.special_ops - k * free.special_ops)
    cycles = getattr(code, "item_cycles", None) if not barriers else None
    compute_ms = None  # the work-item loop's own cost, from the device's machine code, when known
    if cycles and device.clock_mhz:
        compute_ms = t.work_items * cycles / (max(1, device.compute_units) * device.clock_mhz * 1e3)
    r = rl.roofline(t, device, bw, fl, facts.launch_overhead_ms, peaks_measured=measured,
                    compute_ms=compute_ms)
    if facts.barrier_item_ns and barriers:  # a CPU runtime's cost of splitting the work-item loop
        r = replace(r, time_ms=r.time_ms + barriers * t.work_items * facts.barrier_item_ns * 1e-6)
    return r
