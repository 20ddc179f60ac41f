"""Peaks of local devices, measured once, in the background, on first use.

An estimate needs the device's peak bandwidth and FLOP rate. A local device with none cached (a new
machine, a new driver) would give "no estimate" on every kernel until something measured them, so the
first analysis that targets such a device starts their measurement (``clperf.measurePeaks``, on unless
the user turns it off): clperf's own copy and FMA kernels, a few seconds in an isolated worker, cached
per device and driver for every later run. No kernel of the user's runs for it.

One measurement per device: a benchmark of the device waits for the one under way and uses its result,
or measures them itself first. A measurement that failed or was cancelled is not started again by an
analysis (the views say why, and that a benchmark measures them); a benchmark tries again.

Plain logic: the protocol side shows the progress and, through ``on_measured``, hands the measured
device to ``Targets`` and analyses the open documents again, so the estimates change without a restart.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from clperf.api import measure_peaks
from clperf.core.errors import DeviceError
from clperf.core.records import Device

log = logging.getLogger("clperf.server")
Measure = Callable[..., Device]  # (device, *, cancel) -> the device with its peaks; DeviceError
Status = Literal["measuring", "measured", "failed", "cancelled"]


@dataclass
class _Entry:
    device: Device
    status: Status = "measuring"
    result: Device | None = None
    error: str = ""
    done: threading.Event = field(default_factory=threading.Event)


def missing(device: Device | None) -> bool:
    """A local device with no peaks measured on it yet (profiles carry theirs). Until they are, a shipped
    profile of the same device lends its own (``profiles.describes``), else there is no estimate."""
    return (device is not None and device.source == "discovered"
            and not (device.peak_bandwidth_gbs and device.peak_gflops))


class Peaks:
    def __init__(self, measure: Measure = measure_peaks,
                 on_measured: Callable[[Device], None] = lambda d: None) -> None:
        self._measure = measure
        self.on_measured = on_measured  # called in the measuring thread, with the measured device
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    def status(self, device: Device) -> Status | None:
        with self._lock:
            entry = self._entries.get(device.key)
        return entry.status if entry is not None else None

    def claim(self, device: Device) -> bool:
        """True when the caller is to measure ``device`` now (``run``): nothing measured or measuring it
        yet. Called for every analysis; only the first one for a device gets True."""
        with self._lock:
            if device.key in self._entries:
                return False
            self._entries[device.key] = _Entry(device)
            return True

    def run(self, device: Device, cancel: threading.Event) -> Device | None:
        """Measure the device claimed with ``claim``; its measured copy, or None (failed, cancelled)."""
        with self._lock:
            entry = self._entries.setdefault(device.key, _Entry(device))
        return self._run(entry, cancel)

    def _run(self, entry: _Entry, cancel: threading.Event) -> Device | None:
        try:
            measured = self._measure(entry.device, cancel=cancel)
        except Exception as e:  # noqa: BLE001 - whatever stops it, the views must not say "measuring" forever
            reason = str(e) if isinstance(e, DeviceError) else f"{type(e).__name__}: {e}"
            entry.status, entry.error = ("cancelled" if cancel.is_set() else "failed"), reason
            log.warning("peaks of %s not measured: %s", entry.device.name, reason,
                        exc_info=not isinstance(e, DeviceError))
            entry.done.set()
            return None
        entry.status, entry.result = "measured", measured
        entry.done.set()
        log.info("peaks of %s: %.1f GB/s, %.1f GFLOP/s", measured.name, measured.peak_bandwidth_gbs or 0,
                 measured.peak_gflops or 0)
        try:
            self.on_measured(measured)
        except Exception:  # noqa: BLE001 - the peaks are measured and cached whatever the listener does
            log.error("handing on the peaks of %s failed", measured.name, exc_info=True)
        return measured

    def ensure(self, device: Device, cancel: threading.Event,
               on_progress: Callable[[float, str], None]) -> Device:
        """``device`` with its peaks, for a benchmark: as it is when it has them, the result of the
        measurement under way, else measured now (also after a failed or cancelled one: the user asked
        for real runs). Where they cannot be measured the device comes back without them (the benchmark
        still runs; it has no estimate beside it)."""
        if not missing(device):
            return device
        with self._lock:
            entry = self._entries.get(device.key)
            if entry is None or entry.status in ("failed", "cancelled"):
                entry = self._entries[device.key] = _Entry(device)
                mine = True
            else:
                mine = False
        if mine:
            on_progress(0.0, f"measuring the peaks of {device.name} (once)")
            return self._run(entry, cancel) or device
        if entry.status == "measuring":
            on_progress(0.0, f"waiting for the peaks of {device.name}")
            while not entry.done.wait(0.1):
                if cancel.is_set():
                    return device
        return entry.result or device

    def problem(self, device: Device, enabled: bool) -> str:
        """Why ``device`` (``missing``) has no estimate yet, in words for a lens or hover."""
        with self._lock:
            entry = self._entries.get(device.key)
        later = "a benchmark measures them, as does the command clperf devices"
        if entry is None or entry.status == "measured":
            if not enabled:
                return f"{device.name} has no measured peaks (clperf.measurePeaks is off): {later}"
            return f"the peaks of {device.name} are not measured yet"
        if entry.status == "measuring":
            return f"measuring the peaks of {device.name} (once, a few seconds)"
        if entry.status == "cancelled":
            return f"measuring the peaks of {device.name} was cancelled: {later}"
        return f"cannot measure the peaks of {device.name}: {entry.error}; {later}"
