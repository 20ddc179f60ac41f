"""The ``clperf.benchmark`` command's logic: run kernels for real, in the isolated runner, on request only.

Plain logic with callbacks (the protocol side turns ``on_progress`` into work-done progress and a client's
cancel into ``cancel``). Each kernel runs in a fresh worker process (``clperf.benchmark.runner``), so a
kernel that crashes the OpenCL runtime ends as a Measurement with status ``crash`` and the server carries
on. Every real result is stored for calibration, next to the estimate for the device it actually ran on
(the estimate target may be a profile of a device this machine does not have). The device comes with
its peaks (``server/peaks.py`` measures them first where they are missing), without which there is no
estimate to put beside the measurement.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clperf.api import Policy, Workspace
from clperf.core import frontend
from clperf.core.errors import ClperfError
from clperf.core.records import Device, Estimate, Scenario
from clperf.server.documents import Measured, kernel_text
from clperf.server.engine import workspace
from clperf.server.lenses import measured_title
from clperf.server.settings import Settings

log = logging.getLogger("clperf.server")
Progress = Callable[[float, str], None]  # (fraction of all work done, message)


@dataclass(frozen=True)
class Outcome:
    kernel: str
    measured: Measured
    not_stored: str | None = None  # why the measurement is not in the store (None: stored, or not ok)

    @property
    def stored(self) -> bool:
        """Whether the measurement went into the store, where it calibrates later estimates."""
        m = self.measured.measurement
        return m.status == "ok" and m.median_ms is not None and self.not_stored is None

    def to_json(self) -> dict[str, object]:
        m = self.measured.measurement
        est = self.measured.estimate
        return {"kernel": self.kernel, "status": m.status, "error": m.error, "median_ms": m.median_ms,
                "repetitions": m.repetitions, "device": m.device.name,
                "estimate_ms": est.time_ms if est is not None else None, "not_stored": self.not_stored,
                "summary": self.summary()}

    def summary(self) -> str:
        """One line for a client to print: ``fir8: measured 0.91 ms (est. 0.84 ms) on <device>``."""
        return f"{self.kernel}: {measured_title(self.measured, device_name=str)}" + (
            f" (not stored: {self.not_stored})" if self.not_stored else "")


def pick_kernels(kernels: Sequence[frontend.Kernel], name: str | None,
                 line: int | None) -> list[frontend.Kernel]:
    """The named kernel, else the kernel around 1-based ``line``, else every kernel of the file."""
    if name:
        return [k for k in kernels if k.name == name]
    if line is not None:
        k = frontend.kernel_at(list(kernels), line)
        return [k] if k is not None else []
    return list(kernels)


def _estimate_on(ws: Workspace, text: str, path: str, kernel: str, device: Device,
                 scenario: Scenario) -> Estimate | None:
    """The estimate for the device the kernel actually ran on, stored beside its measurement."""
    try:
        report = ws.analyze(text, Path(path) if path else None)
        kr = report.kernel(kernel)
        if kr is None:
            return None
        return ws.estimate(kr, scenario, device, text)
    except ClperfError as e:
        log.info("no estimate of %s on %s: %s", kernel, device.name, e)
        return None


def run(text: str, path: str, kernels: Sequence[frontend.Kernel], device: Device, settings: Settings, *,
        policy_name: str, timeout_s: float, on_progress: Progress, cancel: threading.Event,
        root: str = "") -> list[Outcome]:
    """Benchmark ``kernels`` of ``text`` on ``device``, one after the other, each with its scenario by the
    API's rule and built with the options the analysis compiled with; stops early on ``cancel``."""
    ws = workspace(settings, root)
    file = Path(path) if path else None
    policy = Policy.named(policy_name)
    outcomes: list[Outcome] = []
    lines = text.split("\n")
    for i, k in enumerate(kernels):
        if cancel.is_set():
            break
        # the scenario as written (toml < settings < directive), resolved by the runner with the compiler's
        # types and the file's folder for data files, as `clperf bench` does: one that cannot be
        # resolved is the run's error, never a silent run on the defaults
        spec, problems = ws.spec(k, path=file)
        for problem in problems:
            log.warning("%s: %s", k.name, problem)

        def progress(fraction: float, message: str, i: int = i, name: str = k.name) -> None:
            on_progress((i + fraction) / len(kernels), f"{name}: {message}")

        m = ws.benchmark(text, file, k.name, spec, device, policy=policy, timeout_s=timeout_s,
                         on_progress=progress, cancel=cancel)
        est = _estimate_on(ws, text, path, k.name, device, m.scenario) if m.status == "ok" else None
        not_stored = ws.store(m)
        if not_stored:
            log.warning("measurement not stored: %s", not_stored)
            progress(1.0, f"measurement not stored: {not_stored}")
        outcomes.append(Outcome(k.name, Measured(m, est, kernel_text(lines, k)), not_stored))
    return outcomes
