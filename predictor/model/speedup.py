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
  guess from the IR. When the device is the local PoCL, its own code answers instead (``cpu_code``,
  ``predictor/model/cpu_code.py``): PoCL's work-group function, each block run as often as an instrumented
  run of the scenario counts, costed by llvm-mca (LLVM's scheduling model of the host CPU). Its cycles
  replace the roofline's compute time, and the SIMD and barrier guesses with it: vector or scalar code,
  masked loads and stores, unswitched loops, remainder loops, the loops a barrier splits the kernel
  into, are all in that code. llvm-mca takes every read as an L1 hit: reads that cannot stay in this
  CPU's L1 cache because their lines map to too few of its sets (a matrix column with a power-of-two
  pitch: ``refill_cycles``) bound the launch's cycles by their refills, which the rest overlaps; reads
  that wait on writes elsewhere with the same low 12 bits (rows 4 KB apart: ``alias_cycles``) add theirs.
* **Barriers on a CPU** (``barrier_item_ns``). A CPU runtime runs each region between barriers as a loop
  over the work-items of its own and keeps the values live across the barrier in per-work-item arrays:
  each barrier adds a fixed time per work-item (``bench/barrier_cost.py`` measures it), which a ``__local``
  tile pays on top of its loader.
* **Integer division** (``int_div_ops``). A division or remainder by a run-time value is one IR op but
  many instructions on a GPU, which has no integer divider: index arithmetic with ``/`` or ``%`` by an
  argument costs more than the plain roofline counts.
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from clperf.core.records import Device, Scenario
from clperf.predictor.analysis import poly
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.analysis.records import Ops
from clperf.predictor.model import core_run, profiles
from clperf.predictor.model import cpu_code as compiled
from clperf.predictor.model import roofline as rl

MODEL = f"roofline+compiler {rl.MODEL_VERSION}"  # named in each prediction's note
log = logging.getLogger(__name__)


def as_compiled(text: str, kernel: Any, device: Device, path: Path | None = None,
                build_options: str = "") -> Any:
    """``kernel`` (a KernelReport of ``text``) as ``device``'s compiler builds it: analysed again with the
    compiler's own full unrolling when the device does that, else unchanged."""
    threshold = profiles.facts(device).compiler_unroll_threshold
    if threshold <= 0:
        return kernel
    k = analyze_text(text, path, build_options, unroll_threshold=threshold).kernel(kernel.name)
    return k if k is not None and k.analyzed else kernel


def has_loops(kernel: Any) -> bool:
    """Whether a loop is left in the compiled kernel (one the optimiser removed or unrolled is not)."""
    return any(chain for chain, _ops in getattr(kernel, "op_groups", ())) or any(
        a.in_loop for a in getattr(kernel, "accesses", ()))


def own_code(device: Device) -> bool:
    """Whether ``device``'s own code can be counted: the PoCL at hand, not a profile of some machine."""
    return device.source == "discovered" and device.is_pocl


REFILL_PASS_LIMIT = 1 << 14  # reads and writes of one work-item's loops that refill_cycles follows


def refill_cycles(kernel: Any, scenario: Scenario) -> float:
    """Core cycles of L1 refills in the launch that llvm-mca does not see in PoCL's code (it takes every
    read as an L1 hit): one work-item's reads and writes of one buffer in one loop nest, followed in order
    through this CPU's L1 cache (``compiled.conflict_misses``), miss when their lines map to too few sets
    to stay there (a column of a matrix with a power-of-two pitch, also when unrolled into several
    reads), at ``compiled.L1_FILL_CYCLES`` each, for every work-item. Byte offsets come from the
    analysis (each access's polynomial in the loop counters ``it:<loop>`` and the arguments) at the
    scenario's arguments and work-item 0; a nest whose offsets or trip counts are not known there, or
    longer than ``REFILL_PASS_LIMIT`` accesses, is left out."""
    cache = compiled.l1_data_cache()
    if cache is None:
        return 0.0
    args = rl.count_args(scenario)
    values = {f"arg:{k}": float(v) for k, v in args.items()}
    nests: dict[tuple[Any, tuple[int, ...]], list[Any]] = {}
    for a in getattr(kernel, "accesses", ()):
        if a.address_space == "global" and a.loops and getattr(a, "offset", None):
            nests.setdefault((a.param, tuple(a.loops)), []).append(poly.thaw(a.offset))
    refills = 0.0
    for (_param, loops), offsets in nests.items():
        trips = [kernel.loops[i].trips_for(args) for i in loops]
        if any(n is None or n < 1 for n in trips) or math.prod(trips) * len(offsets) > REFILL_PASS_LIMIT:
            continue
        first = {s: 0.0 for p in offsets for s in poly.symbols(p) if s.startswith(("gid", "lid"))}
        sequence: list[int] = []
        for counters in itertools.product(*(range(n) for n in trips)):
            at = {**values, **first, **{f"it:{i}": float(c) for i, c in zip(loops, counters, strict=True)}}
            known = [poly.evaluate(p, at) for p in offsets]
            if None in known:
                break
            sequence += [int(x) for x in known if x is not None]
        else:
            refills += compiled.conflict_misses(sequence, cache) * scenario.work_items
    return refills * compiled.L1_FILL_CYCLES


PAGE_BYTES = 4096  # buffers start on a page; loads and stores compare addresses by their low 12 bits
# Core cycles a vector pass of the work-item loop waits when one of its reads starts at the low 12 bits where
# a write to another place started d passes before it (index d - 1; none further back), times the square
# root of the reads that do: fitted by least squares to three kernels in groups 8-64 wide over rows 4 KB apart
# and 4160 bytes apart (``bench/alias_cost.py``, which prints the fit; 3 passes, which none of them meets:
# the geometric mean of 2 and 4)
ALIAS_CYCLES = (25.4, 2.9, 2.8, 2.7)


def alias_cycles(kernel: Any, scenario: Scenario) -> float:
    """Core cycles of the launch that reads wait on writes elsewhere with the same low 12 bits (4K
    aliasing), which the code's costing does not see (it runs reads and writes in regions apart). A core
    first compares a read with the pending writes by the low 12 bits of their addresses, and a read that
    starts where an earlier write to another place started waits for it. PoCL runs a loop-free kernel as a
    loop over each group's work-items, a vector of them at a time along dimension 0, then the next row, and
    buffers start on a page: where a group's rows are one to four vectors wide and the data's rows a
    multiple of 4 KB apart, the reads of a row meet the writes of the row before (``jacobi`` over rows of
    1024 floats in 16x16 groups: 2.35 core cycles a work-item, 1.25 over rows of 1040). Each such pass
    (``aliased_reads``) waits ``ALIAS_CYCLES`` by its nearest such write, times the square root of its
    reads that wait (they wait together, not quite at once: ``bench/alias_cost.py``)."""
    passes = aliased_reads(kernel, scenario)
    if not passes or not scenario.local_size:
        return 0.0
    per_group = sum(ALIAS_CYCLES[d - 1] * math.sqrt(n) for d, n in passes)
    return per_group * scenario.work_items / math.prod(scenario.local_size)


def aliased_reads(kernel: Any, scenario: Scenario) -> list[tuple[int, int]]:
    """For each vector pass of one work-group inside the grid (``alias_cycles``) whose global reads start
    at the low 12 bits where a write to another place started at most ``len(ALIAS_CYCLES)`` passes before:
    (passes back to the nearest such write, reads that start so). Only contiguous reads and writes are
    vectors of a pass (a strided one is a gather of elements). Empty for a kernel with loops left (scalar
    code: its work-items a whole pass apart) or offsets not known at the scenario."""
    accesses = [a for a in getattr(kernel, "accesses", ())
                if a.address_space == "global" and a.pattern == "contiguous"]
    width = max((int(a.element_size or 4) for a in accesses), default=4)
    if has_loops(kernel) or not any(a.kind == "store" for a in accesses) or any(
            not getattr(a, "offset", None) for a in accesses) or not scenario.local_size:
        return []
    local = tuple(scenario.local_size) + (1, 1)
    values: dict[str, float] = {f"arg:{k}": float(v) for k, v in rl.count_args(scenario).items()}
    step = max(1, min(core_run.WORK_ITEM_VECTOR // width, local[0]))
    writes: list[tuple[int, str | None, int]] = []  # (pass, buffer, byte offset) of the recent writes
    out = []
    for n, (z, y, x) in enumerate(itertools.product(range(local[2]), range(local[1]),
                                                    range(0, local[0], step))):
        at = {**values, "gid0": float(local[0] + x), "gid1": float(local[1] + y),
              "gid2": float(local[2] + z), "lid0": float(x), "lid1": float(y), "lid2": float(z)}
        offsets = [(a, poly.evaluate(poly.thaw(a.offset), at)) for a in accesses]
        if any(off is None for _a, off in offsets):
            return []
        places = [(a.kind, a.param, int(off or 0)) for a, off in offsets]
        writes = [w for w in writes if n - w[0] <= len(ALIAS_CYCLES)]
        waits = [min((n - p for p, param, start in writes
                      if (start - off) % PAGE_BYTES == 0 and (param, start) != (buffer, off)), default=0)
                 for kind, buffer, off in places if kind != "store"]
        if any(waits):
            out.append((min(d for d in waits if d), sum(1 for d in waits if d)))
        writes += [(n, buffer, off) for kind, buffer, off in places if kind == "store"]
    return out


def cached_stream(kernel: Any, traffic: rl.Traffic, device: Device) -> bool:
    """Whether a launch streams data that stays in the device's cache between launches: every global
    access contiguous (or the same element for all), and what the launch moves at most half the cache.
    Its traffic then moves at the copy kernel's bandwidth within the cache (``cache_bandwidth_gbs``;
    PoCL on this host: 92-98 GB/s against 28-34 GB/s from memory). Gathers and strided reads keep the
    memory's: what bounds them is each line's latency, which the memory's bandwidth stands in for."""
    if not device.cache_bandwidth_gbs or traffic.dram_bytes > device.cache_bytes / 2:
        return False
    patterns = {a.pattern for a in getattr(kernel, "accesses", ())
                if a.address_space in ("global", "constant")}
    return bool(patterns) and patterns <= {"contiguous", "uniform"}


def roofline_for(kernel: Any, scenario: Scenario, device: Device, code: Any = None,
                 unhidden: float | None = None) -> rl.Roofline:
    """The roofline of ``kernel`` (already ``as_compiled``) with the device's compute facts applied, or,
    when ``code`` (``cpu_code``) is known, with the cycles of PoCL's own code as its compute time;
    ``unhidden``: as ``roofline.roofline``'s (another version's, to compare the two alike)."""
    bw, fl, measured = profiles.peaks(device)
    facts = profiles.facts(device)
    t = rl.traffic(kernel, scenario, device.type)
    t = replace(t, int_ops=t.int_ops + (facts.int_div_ops - 1.0) * t.int_divs)  # a division as its ops
    if code is not None and device.clock_mhz:
        cycles = max(code.cycles + alias_cycles(kernel, scenario), refill_cycles(kernel, scenario))
        compute_ms = cycles / (max(1, device.compute_units) * device.clock_mhz * 1e3)
        if cached_stream(kernel, t, device):
            bw = max(bw, float(device.cache_bandwidth_gbs or 0.0))
        # the code's loads and stores are in its cycles (llvm-mca's ports, L1 refills): of the traffic only
        # what reaches memory is left, not the roofline's issued bytes, which count a GPU's segments
        t = replace(t, issued_bytes=t.dram_bytes, local_bytes=0.0)
        return rl.roofline(t, device, bw, fl, facts.launch_overhead_ms, peaks_measured=measured,
                           compute_ms=compute_ms, unhidden=unhidden)
    lanes = float(facts.loop_free_simd_lanes)
    barriers = int(getattr(kernel, "barriers", 0) or 0)
    if lanes > 1 and not has_loops(kernel):
        t = replace(t, flops=t.flops / lanes, int_ops=t.int_ops / lanes, fp64_ops=t.fp64_ops / lanes,
                    special_ops=t.special_ops / lanes)
    elif lanes > 1 and barriers:
        # the loop-free work of a kernel with barriers is in regions of its own (an approximation: a
        # region holding both a loop and straight-line work runs that work scalar too)
        free = sum((ops for chain, ops in getattr(kernel, "op_groups", ()) if not chain), Ops())
        k = (1.0 - 1.0 / lanes) * t.work_items
        t = replace(t, flops=t.flops - k * free.flops,
                    int_ops=t.int_ops - k * (free.int_ops + (facts.int_div_ops - 1.0) * free.int_divs),
                    fp64_ops=t.fp64_ops - k * free.fp64_ops, special_ops=t.special_ops - k * free.special_ops)
    r = rl.roofline(t, device, bw, fl, facts.launch_overhead_ms, peaks_measured=measured, unhidden=unhidden)
    if facts.barrier_item_ns and barriers:  # a CPU runtime's cost of splitting the work-item loop
        r = replace(r, time_ms=r.time_ms + barriers * t.work_items * facts.barrier_item_ns * 1e-6)
    return r
