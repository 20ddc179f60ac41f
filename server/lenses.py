"""Code lenses: one line above each kernel with its estimate, a measured time once benchmarked, and a
``Benchmark`` action.

``≈ 0.84 ms · 1.66 M cycles on NVIDIA H200 · memory-bound``, ``measured 0.91 ms (est. 0.84 ms) on …``,
``Benchmark on pthread-…``

Each names its device: the estimate the current device, the measurement the device it ran on, and the
Benchmark lens, when the current device is a profile, the local device it will run on (when the current
device is local, the benchmark runs on it).

Lenses are placed with the cheap parse of the current text and filled from the newest analysis, matched
by kernel name, so they stay on their kernel while the user types between saves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clperf.core import units as fmt
from clperf.core.frontend import Kernel
from clperf.core.records import Device
from clperf.server.documents import Measured
from clperf.server.engine import Analysis, KernelResult
from clperf.server.views import Lens

BENCHMARK_COMMAND = "clperf.benchmark"


def estimate_title(result: KernelResult, device_name: str) -> str:
    est = result.estimate
    if est is None and result.pending:
        return f"clperf: {result.estimate_problem}…"
    if est is None:
        return f"clperf: no estimate ({result.estimate_problem or 'unknown reason'})"
    title = f"≈ {fmt.ms(est.time_ms)} · {fmt.count(est.cycles)} cycles on {device_name} · {est.bound}-bound"
    if result.scenario is not None and "global" in result.scenario.defaulted:
        title += " · default scenario"
    return title


def measured_title(m: Measured, stale: bool = False) -> str:
    meas = m.measurement
    before = " before your last edit" if stale else ""
    if meas.status != "ok" or meas.median_ms is None:
        reason = meas.error.splitlines()[0][:80] if meas.error else "no time"
        return f"benchmark {meas.status}{before}: {reason}"
    est = f" (est. {fmt.ms(m.estimate.time_ms)})" if m.estimate is not None and not stale else ""
    return f"measured {fmt.ms(meas.median_ms)}{est} on {meas.device.name}{before}"


def benchmark_lens(uri: str, kernel: Kernel, analysis: Analysis | None) -> Lens:
    """``Benchmark``; ``Benchmark on X`` when the estimates are for a profile (X: the local device it runs
    on); plain text when this machine has no device to run it on."""
    title = "Benchmark"
    current: Device | None = analysis.device if analysis is not None else None
    if analysis is not None and current is not None and current.source == "profile":
        if analysis.bench_device is None:
            return Lens(kernel.header_line, "no local OpenCL device to benchmark on")
        title = f"Benchmark on {analysis.bench_device.name}"
    return Lens(kernel.header_line, title, BENCHMARK_COMMAND, ({"uri": uri, "kernel": kernel.name},))


def _shown_by_measurement(result: KernelResult, analysis: Analysis, m: Measured | None) -> bool:
    """No "no estimate" lens beside a measurement of the current device that carries its estimate."""
    if result.estimate is not None or m is None or m.estimate is None or analysis.device is None:
        return False
    return m.measurement.device.key == analysis.device.key


def kernel_lenses(uri: str, kernels: Sequence[Kernel], analysis: Analysis | None,
                  measured: Mapping[str, Measured], lines: Sequence[str] = ()) -> list[Lens]:
    lenses: list[Lens] = []
    for k in kernels:
        result = analysis.kernels.get(k.name) if analysis is not None else None
        m = measured.get(k.name)
        stale = m is not None and bool(lines) and m.stale(lines, k)
        if analysis is not None and result is not None \
                and not _shown_by_measurement(result, analysis, None if stale else m):
            device = analysis.device.name if analysis.device else "no device"
            lenses.append(Lens(k.header_line, estimate_title(result, device)))
        elif analysis is None:
            lenses.append(Lens(k.header_line, "clperf: estimating…"))
        if m is not None:
            lenses.append(Lens(k.header_line, measured_title(m, stale)))
        lenses.append(benchmark_lens(uri, k, analysis))
    return lenses
