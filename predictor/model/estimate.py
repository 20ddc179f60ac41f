"""``estimate``: the predicted time of one kernel under one scenario on one device.

The public entry of the predictor, called by ``clperf predict`` and by the language server on every save.
It must answer fast: the roofline needs no torch; the learned model (torch) is loaded the first time a
device it was trained on is asked for, then kept. Results of the model are cached on disk (keyed by source,
build options, kernel, scenario, device and model version); the user's own measurements of the device then
calibrate the answer (``calibration.py``), which is never cached because measurements keep coming.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from clperf.core import cache as cache_mod
from clperf.core.errors import InputError, ModelError, ScenarioError
from clperf.core.records import Device, Estimate, Measurement, Param, Scenario, type_size
from clperf.core.scenario import check_sizes
from clperf.core.sourcefile import read_source
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import calibration, profiles
from clperf.predictor.model import roofline as rl
from clperf.predictor.model import speedup as speedup_model
from clperf.predictor.model.cpu_code import CompiledCode
from clperf.predictor.model.memory import MemoryTraffic

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).with_name("weights")

# Without an evaluated interval, the roofline's is this factor either side. The evaluation report shows
# how far off the roofline really is; train writes measured quantiles into the model's meta.
_UNCALIBRATED_FACTOR = 3.0

# The local PoCL device's estimate from its own code (``speedup.py``, ``cpu_code.py``, ``core_run.py``,
# counted by ``clperf.benchmark.pocl_code``): its interval is the 10% / 90% quantiles of log(measured /
# predicted) over the 93 corpus kernels of ``bench/pocl_code_times.py`` (reports/pocl_code_times.md: AMD
# Zen 4, costed on the cores; median 0.06)
COUNTED_MODEL = "pocl-code"
COUNTED_QUANTILES = [-0.33, 0.99]


class CodeCounter(Protocol):
    """Where PoCL's own code for a launch comes from (``clperf.benchmark.pocl_code.COUNTER`` builds and
    counts it in a run of the scenario): the model costs what it is given and runs nothing itself."""

    def __call__(self, source: str, kernel: str, scenario: Scenario, device: Device, build_options: str,
                 deadline: float | None) -> CompiledCode | None: ...

    def settled(self, source: str, kernel: str, scenario: Scenario, device: Device,
                build_options: str) -> bool: ...


def model_dir() -> Path:
    env = os.environ.get("CLPERF_MODEL_DIR")
    return Path(env) if env else MODEL_DIR


@lru_cache(maxsize=4)
def _meta(directory: str) -> dict[str, Any] | None:
    """The shipped model's ``meta.json`` (devices covered, version, intervals), read without torch."""
    path = Path(directory) / "meta.json"
    if not (path.exists() and (Path(directory) / "model.safetensors").exists()):
        return None
    try:
        return _checked_meta(json.loads(path.read_text()))
    except (OSError, ValueError) as e:
        log.warning("ignoring the learned model in %s: %s", directory, e)
        return None


def _checked_meta(meta: Any) -> dict[str, Any]:
    """``meta.json`` when it has the shape estimates read: ``devices`` an object, each interval two finite
    numbers (low first); else ValueError naming what is wrong."""
    if not isinstance(meta, dict) or not isinstance(meta.get("devices"), dict):
        raise ValueError("meta.json: no object of devices")
    for name in ("intervals", "roofline_intervals"):
        table = meta.get(name, {})
        if not isinstance(table, dict):
            raise ValueError(f"meta.json: {name} is not an object")
        for device, q in table.items():
            if not (isinstance(q, list) and len(q) == 2):
                raise ValueError(f"meta.json: {name} of {device} is not two numbers")
            lo, hi = (cache_mod.finite(x, f"meta.json: {name} of {device}") for x in q)
            if lo > hi:
                raise ValueError(f"meta.json: {name} of {device} is reversed")
    return meta


def learned_meta() -> dict[str, Any] | None:
    return _meta(str(model_dir()))


def covers(meta: dict[str, Any] | None, device: Device) -> bool:
    return bool(meta) and device.name in meta.get("devices", {})  # type: ignore[union-attr]


_model_lock = threading.Lock()
_models: dict[str, Any] = {}


def learned_model(directory: Path | None = None) -> Any:
    """The learned model (torch imported here, once), kept for the life of the process."""
    d = str(directory or model_dir())
    with _model_lock:
        if d not in _models:
            from clperf.predictor.model import network
            try:
                _models[d] = network.Predictor.load(Path(d))
            except Exception as e:
                raise ModelError(f"cannot load the learned model from {d}: {e}") from e
        return _models[d]


def _interval(time_ms: float, quantiles: list[float] | None) -> tuple[float, float]:
    if quantiles:
        # 10%/90% quantiles of log(measured / estimate); widened to hold the estimate itself (the roofline
        # underestimates nine kernels in ten on the H200, so its own quantiles both lie above it)
        lo, hi = min(quantiles[0], 0.0), max(quantiles[1], 0.0)
        return time_ms * math.exp(lo), time_ms * math.exp(hi)
    return time_ms / _UNCALIBRATED_FACTOR, time_ms * _UNCALIBRATED_FACTOR


def roofline_estimate(kernel: rl.KernelLike, scenario: Scenario, device: Device,
                      memory: MemoryTraffic | None = None, atomic_ns: float = 0.0
                      ) -> tuple[Estimate, rl.Traffic]:
    """The analytical estimate alone (no cache, no calibration); ``memory``: the launch's traffic through
    the device's caches, from a counting run's trace (``memory.memory_traffic``), replacing the static
    traffic model's bytes; else ``atomic_ns``, where not 0: a warp request of its global atomics' cost
    from a trace too short for the rest (``memory.partial_atomic_ns``)."""
    bw, fl, measured = profiles.peaks(device)
    facts = profiles.facts(device)
    t = rl.traffic(kernel, scenario, device.type)
    if memory is not None:
        t = rl.with_memory(t, memory)
    elif atomic_ns:
        t = replace(t, atomic_ns=atomic_ns)
    r = rl.roofline(t, device, bw, fl, facts.launch_overhead_ms, peaks_measured=measured)
    meta = learned_meta()
    q = (meta or {}).get("roofline_intervals", {}).get(device.name)
    version = rl.MODEL_VERSION + ("" if measured else "+spec-peaks")
    est = Estimate(r.time_ms, rl.cycles(r.time_ms, device), _interval(r.time_ms, q), r.bound,
                   r.bandwidth_utilization, rl.MODEL_NAME, version)
    return est, t


def estimate(
    kernel: rl.KernelLike,
    scenario: Scenario,
    device: Device,
    *,
    source: str | None = None,
    build_options: str = "",
    use_cache: bool = True,
    use_model: bool = True,
    calibrate: bool = True,
    counter: CodeCounter | None = None,
    code_deadline: float | None = None,
    memory: MemoryTraffic | None = None,
    atomic_ns: float = 0.0,
    model: Path | None = None,
) -> Estimate:
    """Predict ``kernel``'s time for ``scenario`` on ``device``.

    Uses the shipped learned model (or the one in the folder ``model``) when it exists and was trained on
    this device (it needs ``source``);
    on the local PoCL device with a ``counter``, the cycles of PoCL's own code for the launch
    (``counted``: the counter runs the kernel once, on one PoCL thread, in an isolated worker), waited for
    until ``code_deadline`` (``time.monotonic()``; None: until it is there); else the roofline.
    ``calibrate`` applies the user's stored measurements of the device to the roofline and the learned
    model.
    """
    base, traffic = roofline_estimate(kernel, scenario, device, memory, atomic_ns)
    meta = _meta(str(model or model_dir())) if use_model else None
    result = base
    if meta is not None and source is not None and covers(meta, device):
        result = _learned(kernel, scenario, device, source, build_options, base, traffic, meta, use_cache,
                          model)
    elif use_model and counter is not None and source is not None:
        result = counted(kernel, scenario, device, source, counter, build_options, code_deadline) or base
    if calibrate and result.model_name != COUNTED_MODEL:
        # PoCL's counted code is this machine's own: its stored measurements would each cost a PoCL build
        # and run to compare with, and the corpus check puts it at a median 0.93x of measured already
        result = calibration.apply_to(result, calibration_for(device), device)
    return result


def calibration_for(device: Device) -> calibration.Calibration:
    """The calibration of the shipped model and the roofline on ``device`` from the user's stored
    measurements of it, each compared with the uncalibrated estimate (``predict_stored``)."""
    meta = learned_meta() or {}
    return calibration.for_device(device, lambda m: predict_stored(m, device), meta.get("version"))


def predict_stored(m: Measurement, device: Device) -> float | None:
    """The uncalibrated estimate for a stored measurement, from its kernel file as it is now.

    Skipped (None) when the file is gone or changed since it was measured (its hash differs).
    """
    path = Path(m.file)
    try:
        text = read_source(path).text  # regular files only, size-limited
    except InputError:
        return None
    if m.source_hash and not cache_mod.source_hash(text).startswith(m.source_hash):
        return None  # the benchmark's hash is a prefix of the same sha256
    report = analyze_text(text, path, m.build_options)
    kernel = next((k for k in report.kernels if k.name == m.kernel), None)
    if kernel is None:
        return None
    # the models calibration corrects: PoCL's own code (no counter) is not calibrated
    est = estimate(kernel, m.scenario, device, source=text, build_options=m.build_options, calibrate=False)
    return est.time_ms


def counted(kernel: rl.KernelLike, scenario: Scenario, device: Device, source: str, counter: CodeCounter,
            build_options: str = "", code_deadline: float | None = None) -> Estimate | None:
    """The estimate from PoCL's own code on the local PoCL device (``speedup_model.roofline_for`` with
    the ``counter``'s code: every block of the work-group function counted in a run of the scenario,
    costed by llvm-mca with this CPU's measured corrections), or None on other devices and while the code
    is not there by ``code_deadline``."""
    if not speedup_model.own_code(device):
        return None
    code = counter(source, kernel.name, scenario, device, build_options, code_deadline)
    if code is None:
        return None
    k = speedup_model.as_compiled(source, kernel, device, None, build_options)
    r = speedup_model.roofline_for(k, scenario, device, code)
    return Estimate(r.time_ms, rl.cycles(r.time_ms, device), _interval(r.time_ms, COUNTED_QUANTILES), r.bound,
                    r.bandwidth_utilization, COUNTED_MODEL, f"{rl.MODEL_VERSION}+{code.costed_by}")


def counting(kernel: rl.KernelLike, scenario: Scenario, device: Device, source: str, counter: CodeCounter,
             build_options: str = "") -> bool:
    """Whether ``counted`` may still get PoCL's code for this version (it is being costed or waits for a
    turn): asking again later can give a better estimate."""
    if not speedup_model.own_code(device):
        return False
    return not counter.settled(source, kernel.name, scenario, device, build_options)


def _learned(kernel: rl.KernelLike, scenario: Scenario, device: Device, source: str, build_options: str,
             base: Estimate, traffic: rl.Traffic, meta: dict[str, Any], use_cache: bool,
             directory: Path | None = None) -> Estimate:
    version = str(meta.get("version", "0"))
    # what a counting run changed: its trip counts and the traffic through the caches
    measured = [getattr(lp, "measured", None) for lp in getattr(kernel, "loops", ())]
    k = cache_mod.key("estimate", cache_mod.source_hash(source), build_options, kernel.name,
                      scenario.to_json(), device.key, device.peak_bandwidth_gbs, device.peak_gflops,
                      meta.get("name"), version, rl.MODEL_VERSION, measured,
                      [traffic.issued_bytes, traffic.dram_bytes, traffic.local_bytes, traffic.l2_bytes,
                       traffic.l1_wavefront_bytes])
    c = cache_mod.default() if use_cache else None
    hit = c.get(k, _cached_estimate) if c is not None else None
    if hit is not None:
        return hit
    model = learned_model(directory)
    out = model.predict_one(kernel, scenario, device, source, base, traffic)
    time_ms = float(out["time_ms"])
    q = meta.get("intervals", {}).get(device.name)
    est = Estimate(time_ms, rl.cycles(time_ms, device), _interval(time_ms, q),
                   _bound(out), float(out["bandwidth_utilization"]),
                   str(meta.get("name", "learned")), version)
    if c is not None:
        c.set(k, est.to_json())
    return est


def _bound(out: dict[str, Any]) -> Any:
    """Latency-bound when the prediction is near the launch floor, else whichever roofline part dominates."""
    if out["time_ms"] <= 1.5 * out["floor_ms"]:
        return "latency"
    return "memory" if out["memory_ms"] >= out["compute_ms"] else "compute"


def _cached_estimate(d: Any) -> Estimate:
    """A cached estimate, checked (the cache holds data anyone could have written): a finite positive time
    inside a finite positive interval, cycles and utilisation finite and not negative, a known bound, the
    model named; else ValueError, TypeError or KeyError, and the cache drops the row."""
    if not isinstance(d, dict) or not isinstance(d.get("model"), dict):
        raise TypeError("not an estimate object")
    time_ms = cache_mod.positive(d["time_ms"], "time_ms")
    if not (isinstance(d["interval_ms"], list) and len(d["interval_ms"]) == 2):
        raise ValueError("interval_ms is not two numbers")
    lo, hi = (cache_mod.positive(x, "interval_ms") for x in d["interval_ms"])
    if not (lo <= time_ms * (1 + 1e-9) and time_ms <= hi * (1 + 1e-9)):
        raise ValueError("interval_ms does not hold time_ms")
    cycles, util = cache_mod.finite(d["cycles"], "cycles"), cache_mod.finite(d["bandwidth_utilization"],
                                                                              "bandwidth_utilization")
    if cycles < 0 or util < 0:
        raise ValueError("negative cycles or bandwidth utilisation")
    if d["bound"] not in ("memory", "compute", "latency"):
        raise ValueError(f"unknown bound {d['bound']!r}"[:80])
    name, version = d["model"]["name"], d["model"]["version"]
    if not (isinstance(name, str) and isinstance(version, str)):
        raise TypeError("the model's name and version are not text")
    return Estimate(time_ms=time_ms, cycles=cycles, interval_ms=(lo, hi), bound=d["bound"],
                    bandwidth_utilization=util, model_name=name, model_version=version, cached=True)


def with_time(est: Estimate, time_ms: float, device: Device) -> Estimate:
    """The same estimate moved to ``time_ms`` (interval scaled alike)."""
    f = time_ms / est.time_ms if est.time_ms > 0 else 1.0
    lo, hi = est.interval_ms
    util = min(1.0, est.bandwidth_utilization / f) if f > 0 else est.bandwidth_utilization
    return replace(est, time_ms=time_ms, cycles=rl.cycles(time_ms, device), interval_ms=(lo * f, hi * f),
                   bandwidth_utilization=util)


def check_launch(scenario: Scenario, device: Device, params: Sequence[Param] = ()) -> None:
    """Refuse a launch ``device`` would refuse: sizes no device runs, a work-group over its maximum size,
    and, for ``params`` (the kernel's), buffers over the memory it has (where its record says)."""
    check_sizes(scenario.global_size, scenario.local_size)
    group = math.prod(scenario.local_size) if scenario.local_size else 0
    if device.max_work_group_size and group > device.max_work_group_size:
        raise ScenarioError(f"a work-group of {group} work-items exceeds {device.name}'s maximum of "
                            f"{device.max_work_group_size}")
    memory, held, local = device.global_mem_bytes, 0, 0
    for p in params:
        if not p.pointer:
            continue
        nbytes = int(scenario.args.get(p.name, 0)) * (type_size(p.type) or 0)
        if p.address_space == "local":
            local += nbytes
            continue
        held += nbytes
        if memory and nbytes > memory:
            raise ScenarioError(f"buffer {p.name!r} needs {nbytes / 2**30:.1f} GiB; {device.name} has "
                                f"{memory / 2**30:.1f} GiB")
    if memory and held > memory:
        raise ScenarioError(f"the buffers need {held / 2**30:.1f} GiB together; {device.name} has "
                            f"{memory / 2**30:.1f} GiB")
    if device.local_mem_bytes and local > device.local_mem_bytes:
        raise ScenarioError(f"the __local buffers need {local} bytes per work-group; {device.name} has "
                            f"{device.local_mem_bytes}")


def doubts(kernel: Any, scenario: Scenario, device: Device) -> list[str]:
    """What makes an estimate doubtful: loops counted once, buffers larger than the device's memory."""
    out = []
    counting = rl.count_args(scenario)
    counted = {i for chain, _ in getattr(kernel, "op_groups", ()) for i in chain}  # loops left in the IR
    for i, lp in enumerate(getattr(kernel, "loops", ())):
        if i in counted and lp.trips_for(counting) is None:
            out.append(f"the loop at line {lp.line} runs a number of times clperf cannot tell "
                       "(it depends on data, on the work-item, or never ends): counted once, so the "
                       "estimate is a lower bound")
    total = sum(float(scenario.args.get(p.name, 0)) * float(type_size(p.type) or 0)
                for p in getattr(kernel, "params", ()) if p.pointer and p.address_space == "global")
    if device.global_mem_bytes and total > device.global_mem_bytes:
        out.append(f"the buffers need {total / 2**30:.1f} GiB; {device.name} has "
                   f"{device.global_mem_bytes / 2**30:.1f} GiB")
    return out
