"""Numeric features of (kernel, scenario, device): what the learned model and the baselines read.

The groups below are functions of what is known before the kernel runs, but for the trace:

* **traffic**: the analysis' counts evaluated for the scenario (``roofline.traffic``): bytes issued, bytes
  reaching DRAM, useful bytes, ``__local`` bytes, flops, integer ops, atomics, barriers;
* **accesses**: the share of executed bytes by pattern (contiguous, strided, indirect, uniform, unknown),
  loads vs stores, the largest stride, loops (count, depth, trip counts, unroll pragmas);
* **launch**: global and local sizes per dimension, work-groups, work-groups per compute unit;
* **device**: measured peaks, compute units, clock, local memory, type, launch floor;
* **roofline**: the analytical estimate and its parts (the network predicts a correction to it);
* **trace**: after a counting run, what its trace gives: the bytes that miss L1, L1's clocks for the
  warps' requests (their lines and bank conflicts), the longest work-item's chain over the mean (zero and
  ``m_traced`` 0 for a static one).

Counts enter as ``log2(1 + x)`` so kernels a million times apart sit on one scale. The names are saved
with the model; a model refuses features whose names differ from those it was trained on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from clperf.core.records import Device, Scenario
from clperf.predictor.model import profiles
from clperf.predictor.model import roofline as rl

PATTERNS = ("contiguous", "strided", "indirect", "uniform", "unknown")
UTIL_BINS = (0.1, 0.3, 0.6)  # bandwidth-utilisation classes: <10%, 10-30%, 30-60%, >=60% of peak


def _l(x: float) -> float:
    return math.log2(1.0 + max(0.0, float(x)))


def names() -> list[str]:
    return list(_vector_template().keys())


def _vector_template() -> dict[str, float]:
    return vector_dict(None, None, None, None, None)


# Operations the analysis counts as one flop but a GPU executes as many instructions (special-function
# unit, range reduction, Newton steps): the main reason compute-heavy kernels run far slower than peak.
_TRANSC = re.compile(r"\b(?:native_|half_)?(?:exp|exp2|exp10|expm1|log|log2|log10|log1p|sin|cos|tan|sincos|"
                     r"pow|powr|pown|rootn|tanh|sinh|cosh|asin|acos|atan|atan2|erf|erfc|cbrt|sqrt|rsqrt|"
                     r"hypot|fmod|remainder|tgamma|lgamma)\s*\(")
_ARITH = re.compile(r"[-+*/%^&|]=?|<<|>>|\bfma\s*\(|\bmad\s*\(")
_DIV = re.compile(r"(?<![/*])/(?![/*])|%")
_VEC = re.compile(r"\b(?:char|uchar|short|ushort|int|uint|long|ulong|float|double|half)(2|3|4|8|16)\b")
_WORD = {k: re.compile(rf"\b{k}\b") for k in ("if", "for", "while", "__local", "local")}
_DOUBLE = re.compile(r"\bdouble(?:2|3|4|8|16)?\b")
_NARROW = re.compile(r"\b(?:char|uchar|short|ushort)\d*\b")
_ATOMIC = re.compile(r"\batomic?_\w+\s*\(|\batom_\w+\s*\(")


def code_counts(code: str | None) -> dict[str, float]:
    """Counts over the kernel's own text (``tokenizer.kernel_text``, up to ``[SEP]``): what the IR
    analysis does not tell apart (a sine from an add, a double from a float, a char division)."""
    body = (code or "").split("[SEP]")[0]
    transc = len(_TRANSC.findall(body))
    arith = len(_ARITH.findall(body))
    vec = [int(m) for m in _VEC.findall(body)]
    return {
        "transc": float(transc), "arith": float(arith), "div": float(len(_DIV.findall(body))),
        "double": float(bool(_DOUBLE.search(body))), "narrow": float(bool(_NARROW.search(body))),
        "vec": float(max(vec, default=1)), "atomic": float(len(_ATOMIC.findall(body))),
        "branch": float(len(_WORD["if"].findall(body)) + body.count("?")),
        "loops": float(len(_WORD["for"].findall(body)) + len(_WORD["while"].findall(body))),
        "local": float(len(_WORD["__local"].findall(body)) + len(_WORD["local"].findall(body))),
        "chars": float(len(body)),
    }


def util_class(utilization: float) -> int:
    """The bandwidth-utilisation class (0..3) of a share of peak bandwidth."""
    return sum(utilization >= b for b in UTIL_BINS)


def vector_dict(kernel: Any, scenario: Scenario | None, device: Device | None,
                traffic: rl.Traffic | None, roof: rl.Roofline | None,
                code: str | None = None) -> dict[str, float]:
    """Named features; with ``None`` arguments, the names with zeros (the template)."""
    f: dict[str, float] = {}
    _traffic_features(f, traffic)
    _code_features(f, code, traffic, device)
    _access_features(f, kernel, scenario)
    _launch_features(f, scenario, device)
    _device_features(f, device)
    _roofline_features(f, roof, device)
    f["r_serial_over_busy"] = (math.log2((rl.serial_ms(traffic, device) + 1e-9) /
                                         (max(roof.memory_ms, roof.compute_ms) + 1e-9))
                               if traffic is not None and roof is not None and device is not None else 0.0)
    busy = max(roof.memory_ms, roof.compute_ms) if roof is not None else 0.0
    f["r_chain_over_busy"] = math.log2((roof.chain_ms + 1e-9) / (busy + 1e-9)) if roof is not None else 0.0
    # how much of the smaller of memory and work the roofline adds to the larger (``roofline.unhidden_share``)
    f["r_unhidden_share"] = (rl.unhidden_share(traffic, device)
                             if traffic is not None and device is not None else 0.0)
    # the share of global loads a loop's exit or next address waits for (``analysis.gating``)
    loads = traffic.global_loads if traffic is not None else 0.0
    f["waited_load_share"] = min(1.0, traffic.waited_global_loads / loads) if traffic and loads else 0.0
    _trace_features(f, traffic)
    return f


def _trace_features(f: dict[str, float], t: rl.Traffic | None) -> None:
    traced = t is not None and t.l2_bytes is not None
    f["m_traced"] = float(traced)
    f["m_l2_bytes"] = _l(t.l2_bytes or 0.0) if t is not None and traced else 0.0
    f["m_l1_wavefront_bytes"] = _l(t.l1_wavefront_bytes) if t is not None and traced else 0.0
    f["m_longest_item"] = math.log2(max(1.0, t.longest_item)) if t is not None else 0.0


def _traffic_features(f: dict[str, float], t: rl.Traffic | None) -> None:
    n = t.work_items if t else 0
    f["t_work_items"] = _l(n)
    f["t_dram_bytes"] = _l(t.dram_bytes) if t else 0.0
    f["t_issued_bytes"] = _l(t.issued_bytes) if t else 0.0
    f["t_useful_bytes"] = _l(t.useful_bytes) if t else 0.0
    f["t_local_bytes"] = _l(t.local_bytes) if t else 0.0
    f["t_flops"] = _l(t.flops) if t else 0.0
    f["t_int_ops"] = _l(t.int_ops) if t else 0.0
    f["t_flops_per_item"] = _l(t.flops / n) if t and n else 0.0
    f["t_int_per_item"] = _l(t.int_ops / n) if t and n else 0.0
    f["t_bytes_per_item"] = _l(t.useful_bytes / n) if t and n else 0.0
    f["t_fp64_per_item"] = _l(t.fp64_ops / n) if t and n else 0.0
    f["t_special_per_item"] = _l(t.special_ops / n) if t and n else 0.0
    f["t_barriers"] = _l(t.barriers) if t else 0.0
    f["t_waste"] = math.log2((t.issued_bytes + 1) / (t.useful_bytes + 1)) if t else 0.0
    f["t_reuse"] = math.log2((t.issued_bytes + 1) / (t.dram_bytes + 1)) if t else 0.0
    f["t_intensity"] = math.log2((t.flops + 1) / (t.dram_bytes + 1)) if t else 0.0


def _code_features(f: dict[str, float], code: str | None, t: rl.Traffic | None, d: Device | None) -> None:
    c = code_counts(code)
    n = t.work_items if t else 0
    fl_item = (t.flops / n) if t and n else 0.0
    op_item = ((t.flops + t.int_ops) / n) if t and n else 0.0
    share = c["transc"] / (c["transc"] + c["arith"] + 1.0)
    f["c_transc"] = _l(c["transc"])
    f["c_arith"] = _l(c["arith"])
    f["c_div"] = _l(c["div"])
    f["c_double"] = c["double"]
    f["c_narrow"] = c["narrow"]
    f["c_vec"] = math.log2(c["vec"])
    f["c_atomic"] = _l(c["atomic"])
    f["c_branch"] = _l(c["branch"])
    f["c_loops"] = _l(c["loops"])
    f["c_local"] = _l(c["local"])
    f["c_chars"] = _l(c["chars"])
    f["c_transc_share"] = share
    # the analysis' per-item op counts split by what the text says they are: special functions, divisions
    # and double-precision work cost several times an FMA on a GPU
    f["c_transc_per_item"] = _l(fl_item * share)
    f["c_div_per_item"] = _l(op_item * c["div"] / (c["arith"] + 1.0))
    f["c_double_flops"] = _l(t.flops) * c["double"] if t else 0.0
    cus = d.compute_units if d else 0
    f["c_ops_per_cu"] = _l((t.flops + t.int_ops) / cus) if t and cus else 0.0


def _access_features(f: dict[str, float], kernel: Any, scenario: Scenario | None) -> None:
    by_pattern = dict.fromkeys(PATTERNS, 0.0)
    loads = stores = atomics = local = 0.0
    max_stride = 0.0
    n_access = 0
    counts: list[tuple[Any, float]] = []
    counting = rl.count_args(scenario) if scenario is not None else {}  # arguments and launch sizes
    if kernel is not None and scenario is not None:
        try:
            counts = list(kernel.access_counts_for(counting))
        except Exception:  # noqa: BLE001 - a kernel the analysis could not count has no access features
            counts = []
    for a, per_item in counts:
        n_access += 1
        b = float(per_item) * float(a.element_size or 4)
        if a.address_space == "local":
            local += b
            continue
        by_pattern[a.pattern if a.pattern in by_pattern else "unknown"] += b
        if a.kind == "store":
            stores += b
        elif a.kind == "atomic":
            atomics += b
        else:
            loads += b
        if a.pattern == "strided":
            s = rl._stride_elems(a, dict(scenario.args)) if scenario is not None else None
            max_stride = max(max_stride, s if s is not None else 1024.0)
    total = sum(by_pattern.values()) or 1.0
    for p in PATTERNS:
        f[f"a_share_{p}"] = by_pattern[p] / total
    f["a_store_share"] = stores / total
    f["a_atomic_share"] = atomics / total
    f["a_local_per_global"] = _l(local / total)
    f["a_max_stride"] = _l(max_stride)
    f["a_accesses"] = _l(n_access)
    loops = tuple(getattr(kernel, "loops", ()) or ()) if kernel is not None else ()
    trips = []
    unknown = 0
    for lp in loops:
        v = lp.trips_for(counting) if scenario is not None and hasattr(lp, "trips_for") \
            else lp.trip_count
        if v is None:
            unknown += 1
        else:
            trips.append(v)
    f["l_loops"] = float(len(loops))
    f["l_max_depth"] = float(max((lp.depth for lp in loops), default=0))
    f["l_max_trip"] = _l(max(trips, default=0))
    f["l_unknown_trips"] = float(unknown)
    f["l_unrolled"] = float(sum(1 for lp in loops if lp.unroll is not None))
    # counts that are an upper bound (the loop can break out: an escape loop) or differ per work-item
    f["l_bounded"] = float(sum(1 for lp in loops if getattr(getattr(lp, "trip", None), "bound", False)))
    f["l_varies"] = float(sum(1 for lp in loops if getattr(lp, "varies", False)))
    params = tuple(getattr(kernel, "params", ()) or ()) if kernel is not None else ()
    f["p_double"] = float(any(p.type.startswith("double") for p in params))
    f["p_vector"] = float(any(p.type[-1:].isdigit() for p in params))
    f["p_local_args"] = float(sum(1 for p in params if p.pointer and p.address_space == "local"))
    f["p_buffers"] = float(sum(1 for p in params if p.pointer))
    f["k_dims"] = float(getattr(kernel, "dims", 1) or 1) if kernel is not None else 0.0


def _launch_features(f: dict[str, float], s: Scenario | None, device: Device | None) -> None:
    g = list(s.global_size) if s else []
    loc = list(s.local_size) if s and s.local_size else []
    for i in range(3):
        f[f"g_global{i}"] = _l(g[i]) if i < len(g) else 0.0
        f[f"g_local{i}"] = _l(loc[i]) if i < len(loc) else 0.0
    f["g_dims"] = float(len(g))
    f["g_local_auto"] = float(bool(s) and s.local_size is None)  # type: ignore[union-attr]
    items = math.prod(loc) if loc else 0
    f["g_group_items"] = _l(items)
    groups = (s.work_items / items) if s and items else 0.0
    f["g_groups"] = _l(groups)
    cus = device.compute_units if device else 0
    f["g_groups_per_cu"] = _l(groups / cus) if cus else 0.0
    f["g_items_per_cu"] = _l(s.work_items / cus) if s and cus else 0.0


def _device_features(f: dict[str, float], d: Device | None) -> None:
    bw, fl = (profiles.peaks(d)[:2] if d is not None else (0.0, 0.0))
    f["d_bandwidth"] = _l(bw)
    f["d_gflops"] = _l(fl)
    f["d_cus"] = _l(d.compute_units) if d else 0.0
    f["d_clock"] = _l(d.clock_mhz) if d else 0.0
    f["d_local_mem"] = _l(d.local_mem_bytes) if d else 0.0
    f["d_gpu"] = float(d is not None and d.type == "gpu")
    f["d_cpu"] = float(d is not None and d.type == "cpu")
    f["d_floor_us"] = _l(profiles.facts(d).launch_overhead_ms * 1e3) if d else 0.0


def _roofline_features(f: dict[str, float], r: rl.Roofline | None, d: Device | None) -> None:
    us = 1e3  # features in log2 microseconds
    f["r_time"] = math.log2(r.time_ms * us) if r else 0.0
    f["r_memory"] = _l(r.memory_ms * us) if r else 0.0
    f["r_compute"] = _l(r.compute_ms * us) if r else 0.0
    f["r_busy_over_floor"] = math.log2((max(r.memory_ms, r.compute_ms) + 1e-9) / r.floor_ms) if r else 0.0
    for b in ("memory", "compute", "latency"):
        f[f"r_bound_{b}"] = float(r is not None and r.bound == b)


def compute(kernel: Any, scenario: Scenario, device: Device, code: str | None = None,
            traffic: rl.Traffic | None = None) -> tuple[dict[str, float], rl.Traffic, rl.Roofline]:
    """Features plus the traffic and roofline they came from (``code``: ``tokenizer.kernel_text``;
    ``traffic``: the launch's, when already known, e.g. through the caches from a counting run's trace)."""
    bw, fl, measured = profiles.peaks(device)
    t = traffic if traffic is not None else rl.traffic(kernel, scenario, device.type)
    r = rl.roofline(t, device, bw, fl, profiles.facts(device).launch_overhead_ms, peaks_measured=measured)
    return vector_dict(kernel, scenario, device, t, r, code), t, r


def as_list(f: Mapping[str, float], order: list[str]) -> list[float]:
    return [float(f.get(k, 0.0)) for k in order]
