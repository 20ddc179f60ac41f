"""The ``clperf.benchmark`` command's logic: run kernels for real, in the isolated runner, on request only.

Plain logic with callbacks (the protocol side turns ``on_progress`` into work-done progress and a client's
cancel into ``cancel``). Each kernel runs in a fresh worker process (``clperf.benchmark.runner``), so a
kernel that crashes the OpenCL runtime ends as a Measurement with status ``crash`` and the server carries
on. Every real result is stored for calibration, next to the estimate for the device it actually ran on
(the estimate target may be a profile of a device this machine does not have).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clperf.server.documents import Measured, kernel_text
from clperf.server.engine import scenario_for
from clperf.server.settings import Settings

from clperf.core import frontend
from clperf.core.errors import ClperfError
from clperf.core.records import Device, Estimate, Measurement

log = logging.getLogger("clperf.server")
Progress = Callable[[float, str], None]  # (fraction of all work done, message)


@dataclass(frozen=True)
class Outcome:
    kernel: str
    measured: Measured
    not_stored: str | None = None  # why the measurement is not in the store (None: stored, or not ok)

    def to_json(self) -> dict[str, object]:
        m = self.measured.measurement
        est = self.measured.estimate
        return {"kernel": self.kernel, "status": m.status, "error": m.error, "median_ms": m.median_ms,
                "repetitions": m.repetitions, "device": m.device.name,
                "estimate_ms": est.time_ms if est is not None else None, "not_stored": self.not_stored}


def pick_kernels(kernels: Sequence[frontend.Kernel], name: str | None,
                 line: int | None) -> list[frontend.Kernel]:
    """The named kernel, else the kernel around 1-based ``line``, else every kernel of the file."""
    if name:
        return [k for k in kernels if k.name == name]
    if line is not None:
        k = frontend.kernel_at(list(kernels), line)
        return [k] if k is not None else []
    return list(kernels)


def _estimate_on(text: str, path: str, kernel: str, settings: Settings, options: str, device: Device,
                 scenario: object) -> Estimate | None:
    from clperf.predictor.analysis.pipeline import analyze_text
    from clperf.predictor.model.estimate import estimate

    try:
        report = analyze_text(text, Path(path) if path else None, settings.build_options)
        kr = next((k for k in report.kernels if k.name == kernel), None)
        if kr is None:
            return None
        return estimate(kr, scenario, device, source=text, build_options=options,
                        count_code=settings.pocl_code)
    except (ClperfError, ImportError) as e:
        log.info("no estimate of %s on %s: %s", kernel, device.name, e)
        return None


def _with_peaks(device: Device, on_progress: Progress) -> Device:
    """The device with measured peaks (needed to estimate it); measured once, now, since the user asked
    for real runs — the server never runs anything on its own."""
    if device.peak_bandwidth_gbs and device.peak_gflops:
        return device
    from clperf.benchmark.devices import measure_peaks

    on_progress(0.0, f"measuring the peaks of {device.name} (once)")
    try:
        return measure_peaks(device)
    except ClperfError as e:
        log.warning("cannot measure peaks of %s: %s", device.name, e)
        return device


def run(text: str, path: str, kernels: Sequence[frontend.Kernel], device: Device, settings: Settings, *,
        policy_name: str, timeout_s: float, on_progress: Progress, cancel: threading.Event) -> list[Outcome]:
    from clperf.benchmark.runner import benchmark, options_text
    from clperf.benchmark.timing import Policy

    from clperf.core.buildopts import gather_build_options

    # what the analysis compiled: clperf.toml, the file's directives and the setting, refused ones left out
    options = options_text(gather_build_options(Path(path) if path else None, text, settings.build_options,
                                                extra_source="the clperf.buildOptions setting").options)
    device = _with_peaks(device, on_progress)
    policy = Policy.named(policy_name)
    outcomes: list[Outcome] = []
    lines = text.split("\n")
    for i, k in enumerate(kernels):
        if cancel.is_set():
            break
        scenario, _ = scenario_for(k, k.params, settings)

        def progress(fraction: float, message: str, i: int = i, name: str = k.name) -> None:
            on_progress((i + fraction) / len(kernels), f"{name}: {message}")

        m = benchmark(text, k.name, scenario, device, file=path, build_options=options,
                      policy=policy, timeout_s=timeout_s, on_progress=progress, cancel=cancel)
        est = _estimate_on(text, path, k.name, settings, options, device, scenario) if m.status == "ok" \
            else None
        not_stored = _store(m)
        if not_stored:
            progress(1.0, f"measurement not stored: {not_stored}")
        outcomes.append(Outcome(k.name, Measured(m, est, kernel_text(lines, k)), not_stored))
    return outcomes


def _store(m: Measurement) -> str | None:
    """Store a successful measurement; the reason when it could not be (the result is kept and shown)."""
    if m.status != "ok":
        return None
    from clperf.core import store
    try:
        store.record(m)
    except store.NotStored as e:  # a read-only or full state folder must not lose the result on screen
        log.warning("measurement not stored: %s", e)
        return str(e)
    return None
