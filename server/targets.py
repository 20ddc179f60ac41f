"""Which device estimates are for, and which real device a benchmark runs on.

Estimates may target a device the user does not have (a shipped profile, e.g. the H200), so choosing one
never needs OpenCL. Local devices are discovered lazily in a background thread after ``initialized`` —
never on the ``initialize`` path, and without running any kernel (the server runs kernels only when the
user asks for a benchmark).

Default target when ``clperf.device`` is empty: the shipped H200 profile if it exists, else the first
discovered device.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from clperf.api import discover, shipped_profiles
from clperf.core.errors import DeviceError
from clperf.core.records import Device

log = logging.getLogger("clperf.server")
DISCOVERY_WAIT_S = 20.0


@dataclass(frozen=True)
class Choice:
    """A device as offered to a client that lets the user pick one."""

    label: str
    text: str  # what to pass back to clperf.selectDevice
    type: str
    source: str  # "profile" | "discovered"
    platform: str
    current: bool = False  # the device estimates are for now


class Targets:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._started = False
        self._discovered: list[Device] = []
        self.override: str | None = None  # set by clperf.selectDevice, wins over the setting

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

    @staticmethod
    def profiles() -> list[Device]:
        try:
            return shipped_profiles()
        except Exception:
            log.warning("cannot read the shipped device profiles", exc_info=True)
            return []

    def target(self, setting: str) -> Device:
        """The estimate target for the setting (or the selectDevice override). Raises DeviceError."""
        text = (self.override or setting or "").strip()
        profiles = self.profiles()
        if not text:
            for d in profiles:
                if "h200" in d.name.lower():
                    return d
            local = self.discovered()
            if local:
                return local[0]
            raise DeviceError("no target device: no shipped profile and no OpenCL device found")
        for d in self.discovered() + profiles:
            if d.matches(text):
                return d
        known = ", ".join(sorted({d.name for d in self.discovered(0) + profiles})) or "none"
        raise DeviceError(f"no device matches {text!r} (known: {known})")

    def runnable(self, target: Device | None) -> Device:
        """A local device to benchmark on: the target itself when present here, else the first found."""
        local = self.discovered()
        if target is not None:
            for d in local:
                if d.name == target.name and d.platform == target.platform:
                    return d
            for d in local:
                if d.name == target.name:
                    return d
        if not local:
            raise DeviceError("no OpenCL device on this machine to benchmark on")
        return local[0]

    def choices(self, setting: str = "") -> list[Choice]:
        """Every device a client may offer, the current target marked (so a client can show it)."""
        try:
            now: Device | None = self.target(setting)
        except DeviceError:
            now = None

        def is_now(d: Device) -> bool:
            return now is not None and (d.name, d.platform, d.source) == (now.name, now.platform, now.source)

        out = [Choice(d.name, d.name, d.type, "discovered", d.platform, is_now(d)) for d in self.discovered()]
        out += [Choice(f"{d.name} (profile)", d.name, d.type, "profile", d.platform, is_now(d))
                for d in self.profiles()]
        return out
