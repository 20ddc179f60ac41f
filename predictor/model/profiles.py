"""Device profiles: the devices the predictor knows without the device being present.

A shipped profile is a JSON file in ``predictor/model/profiles/``
holding the fields of ``clperf.core.records.Device``
(measured on the real device with clperf's device profiler) plus a few facts the record has no field for:
``launch_overhead_ms`` (the time of the smallest kernels, which no estimate goes below) and, while a peak is
still unmeasured, the vendor's ``spec_*`` figure the roofline falls back to.

``select_device(text)`` is what ``--device TEXT`` means everywhere: a case-insensitive substring of the
device or platform name, matched among the discovered OpenCL devices first, then the shipped profiles.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from clperf.core.errors import DeviceError
from clperf.core.records import Device
from clperf.predictor.model.memory import GpuMemory

log = logging.getLogger(__name__)

PROFILE_DIR = Path(__file__).with_name("profiles")

# Used only for a device that neither has a shipped profile nor a measured launch floor: the order of
# magnitude of the smallest kernel times seen with OpenCL profiling events (H200: 4.5-6 us, PoCL: tens of us).
_DEFAULT_OVERHEAD_MS = {"gpu": 0.005, "cpu": 0.02, "accelerator": 0.01}


@dataclass(frozen=True)
class MathCosts:
    """What one special-function call costs a device, in flops of its peak rate (an FMA is 2), per cost
    class (``analysis.opcounts.special_class``), and what a call in double precision costs more: per class
    where the profile measured it (``fp64_short``, ``fp64_long``, ``fp64_pow``), else ``fp64_extra``."""

    short: float
    long: float
    pow: float
    fp64_extra: float
    fp64_short: float | None = None
    fp64_long: float | None = None
    fp64_pow: float | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MathCosts:
        def extra(key: str) -> float | None:
            return float(d[key]) if d.get(key) is not None else None
        return cls(float(d["short"]), float(d["long"]), float(d["pow"]), float(d.get("fp64_extra", 0.0)),
                   extra("fp64_short"), extra("fp64_long"), extra("fp64_pow"))

    def fp64_extra_of(self, short: float, long: float, pow: float) -> float:
        """What one double-precision call costs more, for a kernel whose calls fall ``short``, ``long`` and
        ``pow`` into the classes: each class's measured extra weighted by its calls (which of them are the
        double ones the analysis does not keep apart), ``fp64_extra`` where a class was not measured."""
        parts = ((short, self.fp64_short), (long, self.fp64_long), (pow, self.fp64_pow))
        calls = short + long + pow
        if calls <= 0:
            return self.fp64_extra
        return sum(n * (self.fp64_extra if e is None else e) for n, e in parts) / calls


@dataclass(frozen=True)
class ProfileFacts:
    """What a profile knows beyond the ``Device`` record."""

    launch_overhead_ms: float
    spec_bandwidth_gbs: float | None = None
    spec_gflops: float | None = None
    measured_on: str = ""
    # What the device's own compiler does, read by the rewrite speedup model (``rewrites/speedup_model.py``)
    # only: the roofline and the learned model's features do not use these. Each profile says where its
    # values come from (``compiler_notes``); the defaults are "unknown: assume nothing".
    compiler_unroll_threshold: int = 0  # LLVM size threshold of its own full unrolling; 0: loops stay rolled
    loop_free_simd_lanes: int = 1  # compute rate multiplier for a kernel with no loop left (CPU WI-loop SIMD)
    int_div_ops: float = 1.0  # integer ops one division or remainder by a run-time value compiles to
    barrier_item_ns: float = 0.0  # wall time a barrier adds per work-item (CPUs: bench/barrier_cost.py)
    # a compute unit's time to start one work-group (``roofline.dispatch_ms``); 0: not known, no bound
    group_dispatch_ns: float = 0.0
    # DRAM's round trip under a streaming load, ns: the bytes each compute unit keeps in flight over it is
    # the rate the loads reach (``roofline.stream_share``); 0: not known, loads stream at the peak
    stream_latency_ns: float = 0.0
    # a region with a loop in it runs one work-item at a time (not in SIMD lanes or warps): a chain of
    # checks stops at each work-item's own first match (the __local tile loader's read sites)
    scalar_loop_regions: bool = False
    # Arithmetic costs, in FMA-class operations, that the roofline itself applies (``roofline.compute_ops``).
    # The defaults are what most devices have: double precision at half the single-precision rate (CPU
    # SIMD: half the lanes; data-centre GPUs), special functions on units at an eighth of the FMA rate
    # (NVIDIA since Volta: 16 results per clock per SM against 128 FMAs). A profile may say otherwise.
    fp64_cost: float = 2.0
    special_op_cost: float = 8.0
    math_costs: MathCosts | None = None  # measured per cost class; None: special_op_cost for every one
    # A GPU's caches, __local banks and per-SM limits, read by the memory-hierarchy model (``memory.py``);
    # None where the profile does not give them (``memory_notes`` says where each value comes from).
    gpu_memory: GpuMemory | None = None


def _load(path: Path) -> tuple[Device, ProfileFacts]:
    data: dict[str, Any] = json.loads(path.read_text())
    device = replace(Device.from_json(data), source="profile")
    facts = ProfileFacts(
        launch_overhead_ms=float(data.get("launch_overhead_ms") or _DEFAULT_OVERHEAD_MS[device.type]),
        spec_bandwidth_gbs=data.get("spec_bandwidth_gbs"),
        spec_gflops=data.get("spec_gflops"),
        measured_on=str(data.get("measured_on", "")),
        compiler_unroll_threshold=int(data.get("compiler_unroll_threshold") or 0),
        loop_free_simd_lanes=int(data.get("loop_free_simd_lanes") or 1),
        int_div_ops=float(data.get("int_div_ops") or 1.0),
        barrier_item_ns=float(data.get("barrier_item_ns") or 0.0),
        group_dispatch_ns=float(data.get("group_dispatch_ns") or 0.0),
        stream_latency_ns=float(data.get("stream_latency_ns") or 0.0),
        scalar_loop_regions=bool(data.get("scalar_loop_regions", False)),
        fp64_cost=float(data.get("fp64_cost") or 2.0),
        special_op_cost=float(data.get("special_op_cost") or 8.0),
        math_costs=MathCosts.from_json(data["math_costs"]) if data.get("math_costs") else None,
        gpu_memory=GpuMemory.from_json(data["gpu_memory"]) if data.get("gpu_memory") else None,
    )
    return device, facts


@lru_cache(maxsize=1)
def _shipped() -> tuple[tuple[Device, ProfileFacts], ...]:
    return tuple(_load(p) for p in sorted(PROFILE_DIR.glob("*.json")))


def shipped() -> list[Device]:
    """The shipped device profiles (H200, PoCL CPU, Intel CPU runtime), in file-name order."""
    return [d for d, _ in _shipped()]


def facts(device: Device) -> ProfileFacts:
    """Profile facts for a device: those of the shipped profile with the same name, else type defaults."""
    for d, f in _shipped():
        if d.name == device.name and d.platform == device.platform:
            return f
    for d, f in _shipped():
        if d.name == device.name:
            return f
    return ProfileFacts(launch_overhead_ms=_DEFAULT_OVERHEAD_MS.get(device.type, 0.01))


def describes(profile: Device, device: Device) -> bool:
    """Whether a shipped profile's peaks are ``device``'s: the profile itself, or a discovered device of
    the same name, platform and compute units (PoCL names every AMD EPYC alike, whatever its cores)."""
    if profile.name != device.name:
        return False
    return device.source != "discovered" or (profile.platform == device.platform
                                             and profile.compute_units == device.compute_units)


def peaks(device: Device) -> tuple[float, float, bool]:
    """``(bandwidth GB/s, GFLOP/s, measured)``: the device's measured peaks, else those of the profile
    that ``describes`` it, else that profile's vendor figures (``measured`` is False then). Raises
    DeviceError when there are none."""
    bw, fl = device.peak_bandwidth_gbs, device.peak_gflops
    if bw and fl:
        return float(bw), float(fl), True
    for d, f in _shipped():
        if describes(d, device):
            bw = bw or d.peak_bandwidth_gbs
            fl = fl or d.peak_gflops
            if bw and fl:
                return float(bw), float(fl), True
            if (bw or f.spec_bandwidth_gbs) and (fl or f.spec_gflops):
                return float(bw or f.spec_bandwidth_gbs), float(fl or f.spec_gflops), False  # type: ignore[arg-type]
    raise DeviceError(f"no measured peak bandwidth and FLOP rate for {device.name!r}: "
                      "run `clperf devices` to measure them")


def select_device(text: str | None, local: Sequence[Device] = ()) -> Device:
    """The device ``--device TEXT`` names: the ``local`` (discovered) devices first, then shipped profiles
    (``clperf.api.select_device`` discovers them).

    With no text: the first local GPU, else the first local device, else the H200 profile.
    """
    local = list(local)
    profiles = shipped()
    if text is None or not text.strip():
        for d in local:
            if d.type == "gpu":
                return d
        if local:
            return local[0]
        for d in profiles:
            if d.type == "gpu":
                return d
        if profiles:
            return profiles[0]
        raise DeviceError("no OpenCL device found and no shipped device profile")
    for d in local + profiles:
        if d.matches(text):
            return d
    names = ", ".join(sorted({d.name for d in local + profiles})) or "none"
    raise DeviceError(f"no device matches {text!r} (known: {names})")
