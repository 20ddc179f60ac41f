"""Code lenses: one line above each kernel with its estimate, a measured time once benchmarked, and a
``Benchmark`` action.

``≈ 0.84 ms, memory-bound on NVIDIA H200``, ``measured 0.91 ms (est. 0.84 ms)``, ``Benchmark on …``

Each names its device: the estimate the current device, the measurement the device it ran on when that is
another one, and the Benchmark lens, when the current device is a profile, the local device it will run on
(when the current device is local, the benchmark runs on it). Device names are shortened
(``short_device``: no ``(R)``, ``(TM)``, clock speed).

One kernel's lenses share one editor line, so together, joined by `` | `` as editors draw them, they stay
within ``LINE_LIMIT`` characters: a 100-column editor with the kernel's indentation still shows the
Benchmark action. Where the full titles are longer, the least needed words go first (a measurement's
device and estimate where the estimate lens shows them, "default scenario" -> "defaults", then long device
names are cut and the benchmark's device left to the tooltip); every lens's tooltip keeps the full text.

Lenses are placed with the cheap parse of the current text and filled from the newest analysis, matched
by kernel name, so they stay on their kernel while the user types between saves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from clperf.core import units as fmt
from clperf.core.frontend import Kernel
from clperf.core.records import Device, Estimate
from clperf.server.documents import Measured
from clperf.server.engine import Analysis, KernelResult
from clperf.server.views import Lens

BENCHMARK_COMMAND = "clperf.benchmark"
LINE_LIMIT = 90  # one kernel's lens titles joined by SEPARATOR
SEPARATOR = " | "
_DEVICE_NOISE = re.compile(r"\((?:R|TM|C)\)|\bCPU\b|@\s*[\d.]+\s*[GM]Hz|\bProcessor\b|\b\d+-Core\b|"
                           r"\bwith Radeon Graphics\b", re.I)
SHORT_DEVICE = 20  # characters of a device name kept when the full lenses do not fit
SHORTEST_DEVICE = 14  # ... and when even that does not


def short_device(name: str) -> str:
    """``pthread-haswell-Intel(R) Core(TM) i7-4790 CPU @ 3.60GHz`` -> ``pthread-haswell-Intel Core
    i7-4790``: what tells devices apart, without the trademarks and the clock."""
    return " ".join(_DEVICE_NOISE.sub(" ", name).split()) or name


def _cut(name: str, limit: int = SHORT_DEVICE) -> str:
    return name if len(name) <= limit else name[:limit - 1].rstrip(" -") + "…"


def estimate_title(result: KernelResult, device_name: str, *, defaults: str = "default scenario") -> str:
    est = result.estimate
    if est is None and result.pending:
        return f"clperf: {result.estimate_problem}…"
    if est is None:
        return f"clperf: no estimate ({result.estimate_problem or 'unknown reason'})"
    title = f"≈ {fmt.ms(est.time_ms)}, {est.bound}-bound on {device_name}"
    if result.scenario is not None and "global" in result.scenario.defaulted and defaults:
        title += f" · {defaults}"
    return title


def estimate_tooltip(result: KernelResult, device_name: str) -> str:
    est = result.estimate
    if est is None:
        return estimate_title(result, device_name)
    lo, hi = est.interval_ms
    text = (f"estimated {fmt.ms(est.time_ms)} (likely {fmt.ms(lo)} – {fmt.ms(hi)}), {fmt.count(est.cycles)} "
            f"cycles on {device_name}: {est.bound}-bound ({est.model_name} {est.model_version})")
    if result.scenario is not None and "global" in result.scenario.defaulted:
        text += "; the launch size is the default scenario (add a // clperf: directive to set it)"
    return text


def measured_title(m: Measured, stale: bool = False, *, device: bool = True, estimate: bool = True,
                   device_name: Callable[[str], str] = short_device) -> str:
    """The measurement, its estimate when it was taken and its device; ``device_name`` writes the name
    (the benchmark's printed summary keeps it whole)."""
    meas = m.measurement
    before = " before your last edit" if stale else ""
    if meas.status != "ok" or meas.median_ms is None:
        reason = meas.error.splitlines()[0][:80] if meas.error else "no time"
        return f"benchmark {meas.status}{before}: {reason}"
    est = f" (est. {fmt.ms(m.estimate.time_ms)})" if m.estimate is not None and not stale and estimate else ""
    where = f" on {device_name(meas.device.name)}" if device else ""
    return f"measured {fmt.ms(meas.median_ms)}{est}{where}{before}"


@dataclass
class _Draft:
    """A lens and the shorter titles it can take, longest first (``level`` picks one)."""

    titles: list[str]
    tooltip: str
    command: str = ""
    arguments: tuple[object, ...] = ()
    level: int = 0

    @property
    def title(self) -> str:
        return self.titles[min(self.level, len(self.titles) - 1)]


def _estimate_draft(result: KernelResult, device: str) -> _Draft:
    short = short_device(device)
    titles = [estimate_title(result, short), estimate_title(result, short, defaults="defaults"),
              estimate_title(result, _cut(short), defaults="defaults"),
              estimate_title(result, _cut(short), defaults=""),
              estimate_title(result, _cut(short, SHORTEST_DEVICE), defaults="")]
    return _Draft(titles, estimate_tooltip(result, device))


def _measured_draft(m: Measured, stale: bool, current: Device | None, shown: Estimate | None) -> _Draft:
    """``shown``: the estimate the estimate lens beside it shows. The measurement's device goes when that
    lens names it; its estimate when that lens shows the same time."""
    same = shown is not None and current is not None and m.measurement.device.key == current.key
    repeated = shown is not None and m.estimate is not None and same \
        and fmt.ms(shown.time_ms) == fmt.ms(m.estimate.time_ms)
    titles = [measured_title(m, stale, device=not same, estimate=not repeated),
              measured_title(m, stale, device=not same, estimate=shown is None),
              measured_title(m, stale, device=not same, estimate=shown is None,
                             device_name=lambda n: _cut(short_device(n))),
              measured_title(m, stale, device=not same, estimate=shown is None,
                             device_name=lambda n: _cut(short_device(n), SHORTEST_DEVICE))]
    return _Draft(titles, measured_title(m, stale, device_name=str))


def benchmark_lens(uri: str, kernel: Kernel, analysis: Analysis | None) -> Lens:
    """``Benchmark``; ``Benchmark on X`` when the estimates are for a profile (X: the local device it runs
    on); plain text when this machine has no device to run it on."""
    d = _benchmark_draft(uri, kernel, analysis)
    return Lens(kernel.header_line, d.title, d.command, d.arguments, d.tooltip)


def _benchmark_draft(uri: str, kernel: Kernel, analysis: Analysis | None) -> _Draft:
    current: Device | None = analysis.device if analysis is not None else None
    args = ({"uri": uri, "kernel": kernel.name},)
    if analysis is not None and current is not None and current.source == "profile":
        if analysis.bench_device is None:
            return _Draft(["no local OpenCL device to benchmark on"],
                          f"the estimates are for the {current.name} profile; this machine has no OpenCL "
                          "device to run the kernel on")
        name = analysis.bench_device.name
        return _Draft([f"Benchmark on {short_device(name)}", f"Benchmark on {_cut(short_device(name))}",
                       "Benchmark"],
                      f"run {kernel.name} on {name} (this machine) and show the measured time",
                      BENCHMARK_COMMAND, args)
    where = f" on {current.name}" if current is not None else ""
    return _Draft(["Benchmark"], f"run {kernel.name}{where} and show the measured time", BENCHMARK_COMMAND,
                  args)


def _fit(drafts: list[tuple[str, _Draft]]) -> None:
    """Shorten titles, least needed words first, until the line is within ``LINE_LIMIT``."""
    order = [("measured", 1), ("estimate", 1), ("benchmark", 1), ("estimate", 2), ("measured", 2),
             ("benchmark", 2), ("estimate", 3), ("estimate", 4), ("measured", 3)]
    for kind, level in order:
        if len(SEPARATOR.join(d.title for _, d in drafts)) <= LINE_LIMIT:
            return
        for k, d in drafts:
            if k == kind:
                d.level = max(d.level, level)


def _shown_by_measurement(result: KernelResult, analysis: Analysis, m: Measured | None) -> bool:
    """No "no estimate" lens beside a measurement of the current device that carries its estimate."""
    if result.estimate is not None or m is None or m.estimate is None or analysis.device is None:
        return False
    return m.measurement.device.key == analysis.device.key


def _kernel_drafts(uri: str, k: Kernel, analysis: Analysis | None, m: Measured | None,
                   stale: bool) -> list[tuple[str, _Draft]]:
    result = analysis.kernels.get(k.name) if analysis is not None else None
    drafts: list[tuple[str, _Draft]] = []
    if analysis is not None and result is not None \
            and not _shown_by_measurement(result, analysis, None if stale else m):
        device = analysis.device.name if analysis.device else "no device"
        drafts.append(("estimate", _estimate_draft(result, device)))
    elif analysis is None:
        drafts.append(("estimate", _Draft(["clperf: estimating…"], "clperf is analysing this file")))
    if m is not None:
        shown = result.estimate if drafts and result is not None else None
        drafts.append(("measured", _measured_draft(m, stale, analysis.device if analysis else None, shown)))
    drafts.append(("benchmark", _benchmark_draft(uri, k, analysis)))
    _fit(drafts)
    return drafts


def kernel_lenses(uri: str, kernels: Sequence[Kernel], analysis: Analysis | None,
                  measured: Mapping[str, Measured], lines: Sequence[str] = ()) -> list[Lens]:
    lenses: list[Lens] = []
    for k in kernels:
        m = measured.get(k.name)
        stale = m is not None and bool(lines) and m.stale(lines, k)
        lenses += [Lens(k.header_line, d.title, d.command, d.arguments, d.tooltip)
                   for _, d in _kernel_drafts(uri, k, analysis, m, stale)]
    return lenses
