"""Code lenses: one line above each kernel with its estimate, a measured time once benchmarked, and a
``Benchmark`` action.

``≈ 0.84 ms · 1.66 M cycles on NVIDIA H200 · memory-bound``, ``measured 0.91 ms (est. 0.84 ms)``,
``Benchmark``

Lenses are placed with the cheap parse of the current text and filled from the newest analysis, matched
by kernel name, so they stay on their kernel while the user types between saves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clperf.core.frontend import Kernel
from clperf.server import formatting as fmt
from clperf.server.documents import Measured
from clperf.server.engine import Analysis, KernelResult
from clperf.server.views import Lens

BENCHMARK_COMMAND = "clperf.benchmark"


def estimate_title(result: KernelResult, device_name: str) -> str:
    est = result.estimate
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


def kernel_lenses(uri: str, kernels: Sequence[Kernel], analysis: Analysis | None,
                  measured: Mapping[str, Measured], lines: Sequence[str] = ()) -> list[Lens]:
    lenses: list[Lens] = []
    for k in kernels:
        result = analysis.kernels.get(k.name) if analysis is not None else None
        if result is not None:
            device = analysis.device.name if analysis is not None and analysis.device else "no device"
            lenses.append(Lens(k.header_line, estimate_title(result, device)))
        elif analysis is None:
            lenses.append(Lens(k.header_line, "clperf: estimating…"))
        if k.name in measured:
            m = measured[k.name]
            lenses.append(Lens(k.header_line, measured_title(m, bool(lines) and m.stale(lines, k))))
        lenses.append(Lens(k.header_line, "Benchmark", BENCHMARK_COMMAND, ({"uri": uri, "kernel": k.name},)))
    return lenses
