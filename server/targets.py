"""Which device estimates are for (the current device), and which real device a benchmark runs on.

One current device per server, from one source: the ``clperf.device`` setting, or, until that setting
changes, what ``clperf.selectDevice TEXT`` chose. Without either it is the best device of this machine (a
local GPU, else the local CPU device), else a shipped profile (``clperf.api.choose_device``), so that an
estimate is for the machine the user has and a benchmark runs on the device the estimate names. A profile
(e.g. the H200) is an estimate target only: benchmarks then run on a local device (``runnable``).

Local devices are discovered in a background thread after ``initialized``, never on the ``initialize``
path and without running any kernel; peaks measured later (``server/peaks.py``) replace a device's entry.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from clperf.api import choose_device, discover, shipped_profiles
from clperf.core.errors import DeviceError
from clperf.core.records import Device

log = logging.getLogger("clperf.server")
DISCOVERY_WAIT_S = 20.0


@dataclass(frozen=True)
class Choice:
    """A device as offered to a client that lets the user pick one."""

    label: str
    text: str  # what to pass back to clperf.selectDevice (or write into clperf.device)
    type: str
    source: str  # "profile" | "discovered"
    platform: str
    current: bool = False  # the device estimates are for now

    @classmethod
    def of(cls, device: Device, current: bool = False) -> Choice:
        label = f"{device.name} (profile)" if device.source == "profile" else device.name
        return cls(label, device.name, device.type, device.source, device.platform, current)


def same(a: Device | None, b: Device | None) -> bool:
    """The same device, whatever peaks each copy carries."""
    if a is None or b is None:
        return False
    return (a.name, a.platform, a.source) == (b.name, b.platform, b.source)


class Targets:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._started = False
        self._discovered: list[Device] = []
        # set by clperf.selectDevice TEXT, cleared when clperf.device changes (``apply_settings``)
        self.override: str | None = None

    def start_discovery(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._discover, name="clperf-discovery", daemon=True).start()

    def _discover(self) -> None:
        try:
            found = list(discover(measure=False))
            with self._lock:
                self._discovered = found
            log.info("discovered OpenCL devices: %s", ", ".join(d.name for d in found) or "none")
        except Exception:
            log.warning("OpenCL device discovery failed; estimates still work for shipped profiles",
                        exc_info=True)
        finally:
            self._done.set()

    def discovered(self, wait_s: float = DISCOVERY_WAIT_S) -> list[Device]:
        """Local devices; starts discovery if needed and waits for it (call from a worker thread only)."""
        self.start_discovery()
        self._done.wait(wait_s)
        with self._lock:
            return list(self._discovered)

    def update(self, device: Device) -> None:
        """A local device with its peaks measured since discovery: every later target carries them."""
        with self._lock:
            self._discovered = [device if d.key == device.key else d for d in self._discovered]

    @staticmethod
    def profiles() -> list[Device]:
        try:
            return shipped_profiles()
        except Exception:
            log.warning("cannot read the shipped device profiles", exc_info=True)
            return []

    def target(self, setting: str) -> Device:
        """The current device for the setting (or the selectDevice override). Raises DeviceError, whose
        message a person can act on (it names the devices that exist)."""
        text = (self.override or setting or "").strip()
        return choose_device(text or None, self.discovered())

    def runnable(self, target: Device | None) -> Device:
        """The local device a benchmark runs on: the target itself when it is here, else one of the same
        name (a profile of a device this machine has), else the best local device."""
        local = self.discovered()
        if target is not None:
            for d in local:
                if same(d, target):
                    return d
            for d in local:
                if d.name == target.name:
                    return d
        if not local:
            raise DeviceError("no OpenCL device on this machine to benchmark on")
        return choose_device(None, local)

    def bench_device(self, target: Device | None) -> Device | None:
        """``runnable``, or None where this machine has no OpenCL device."""
        try:
            return self.runnable(target)
        except DeviceError:
            return None

    def choices(self, setting: str = "") -> list[Choice]:
        """Every device a client may offer, the current one marked (so a client can show it)."""
        try:
            now: Device | None = self.target(setting)
        except DeviceError:
            now = None
        return [Choice.of(d, same(d, now)) for d in self.discovered() + self.profiles()]
