"""OpenCL device discovery and the measured profile of each device.

Listing devices is cheap and happens in this process. Peak bandwidth (a float4 copy) and peak single
precision FLOP rate (8 independent FMA chains per work-item) are measured once in a worker process and
cached as JSON per device and driver under ``state_dir()/devices/``: a new driver is a new device.
A cached file is checked when read (its device's key, finite positive peaks): one that is not right is
ignored with a warning naming it, and measured again where the caller may measure. A state folder that
cannot be written keeps the peaks just measured for this run, with a warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clperf.benchmark.isolation import Worker, WorkerGone
from clperf.core.errors import DeviceError
from clperf.core.paths import ensure, state_dir
from clperf.core.records import Device

if TYPE_CHECKING:
    import pyopencl as cl

log = logging.getLogger(__name__)

_PEAKS_FILE_LIMIT = 64 * 1024  # bytes: a peaks file is a few hundred


def _kind(t: int) -> str:
    import pyopencl as cl

    if t & cl.device_type.GPU:
        return "gpu"
    if t & cl.device_type.CPU:
        return "cpu"
    return "accelerator"


def _host_mhz() -> int:
    """The host CPU's clock from /proc/cpuinfo (the fastest core), 0 when unknown."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            mhz = [float(line.split(":")[1]) for line in f if line.lower().startswith("cpu mhz")]
    except (OSError, ValueError, IndexError):
        return 0
    return int(max(mhz)) if mhz else 0


def _describe(platform: cl.Platform, dev: cl.Device) -> Device:
    import pyopencl as cl

    clock = int(dev.max_clock_frequency)
    if clock <= 0 and dev.type & cl.device_type.CPU:
        clock = _host_mhz()  # Intel's CPU runtime reports 0 MHz; cycles need a clock
    return Device(
        name=dev.name.strip(),
        platform=platform.name.strip(),
        type=_kind(dev.type),  # type: ignore[arg-type]
        compute_units=int(dev.max_compute_units),
        clock_mhz=clock,
        local_mem_bytes=int(dev.local_mem_size),
        max_work_group_size=int(dev.max_work_group_size),
        driver=dev.driver_version.strip(),
        global_mem_bytes=int(dev.global_mem_size),
        cache_bytes=int(dev.global_mem_cache_size),
    )


def _listed() -> list[Device]:
    import pyopencl as cl

    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        if "PLATFORM_NOT_FOUND" in str(e) or getattr(e, "code", None) == -1001:
            return []
        raise DeviceError(f"cannot list OpenCL platforms: {e}") from e
    out: list[Device] = []
    for p in platforms:
        try:
            devs = p.get_devices()
        except cl.Error:
            continue  # a platform with no devices reports DEVICE_NOT_FOUND
        out.extend(_describe(p, d) for d in devs)
    return out


def cache_path(device: Device) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{device.platform}-{device.name}").strip("-")[:60]
    digest = hashlib.sha256(device.key.encode()).hexdigest()[:12]
    return state_dir() / "devices" / f"{slug}-{digest}.json"


def _positive(data: dict[str, Any], name: str) -> float:
    x = data[name]
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} is not a finite positive number: {x!r}"[:120])
    return float(x)


def checked_peaks(data: Any, device: Device) -> dict[str, Any]:
    """The peaks of a cached file's JSON when they are ``device``'s and finite positive numbers (the cache's
    bandwidth may be absent or null); else ValueError saying what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("key") != device.key:
        raise ValueError("measured on another device or driver")
    try:
        out: dict[str, Any] = {"peak_bandwidth_gbs": _positive(data, "peak_bandwidth_gbs"),
               "peak_gflops": _positive(data, "peak_gflops")}
        if "cache_bandwidth_gbs" in data:
            cache = data["cache_bandwidth_gbs"]
            out["cache_bandwidth_gbs"] = _positive(data, "cache_bandwidth_gbs") if cache is not None else None
    except KeyError as e:
        raise ValueError(f"no {e.args[0]}") from e
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _cached_peaks(device: Device) -> dict[str, Any] | None:
    path = cache_path(device)
    try:
        if not path.is_file():  # none yet (or a FIFO or folder where the file should be: never read)
            if path.exists():
                log.warning("ignoring the device-peak file %s: not a regular file", path)
            return None
        with open(path, "rb") as f:
            raw = f.read(_PEAKS_FILE_LIMIT + 1)
        if len(raw) > _PEAKS_FILE_LIMIT:
            raise ValueError(f"larger than {_PEAKS_FILE_LIMIT} bytes")
        return checked_peaks(json.loads(raw, parse_constant=_no_constant), device)
    except (OSError, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        log.warning("ignoring the device-peak file %s: %s", path, reason)
        return None


def measure_peaks(device: Device, timeout_s: float = 300.0, cancel: threading.Event | None = None) -> Device:
    """Measure and cache the device's peaks (in a worker process); returns the device with them. Once
    ``cancel`` is set, the worker is killed and DeviceError says the measurement was cancelled; nothing is
    cached then."""
    try:
        with Worker(device) as w:
            w.send({"op": "peaks"})
            reply = w.receive(timeout_s, cancel)
    except WorkerGone as e:
        raise DeviceError(f"measuring {device.name} was cancelled" if e.cancelled
                          else f"measuring {device.name} failed: {e}") from e
    if reply.get("type") != "peaks":
        raise DeviceError(f"measuring {device.name} failed: {reply.get('error')}")
    data = {"key": device.key, "peak_bandwidth_gbs": reply.get("peak_bandwidth_gbs"),
            "peak_gflops": reply.get("peak_gflops"), "cache_bandwidth_gbs": reply.get("cache_bandwidth_gbs")}
    try:
        checked = checked_peaks(data, device)
    except ValueError as e:
        raise DeviceError(f"measuring {device.name} gave no usable peaks: {e}") from e
    path = cache_path(device)
    try:
        ensure(path.parent)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(path)
    except OSError as e:  # a read-only or full state folder: the peaks serve this run
        log.warning("device peaks not stored (%s): %s", path, e.strerror or e)
    return _with_peaks(device, checked)


def _with_peaks(device: Device, data: dict[str, Any]) -> Device:
    from dataclasses import replace

    cache = data.get("cache_bandwidth_gbs")
    return replace(device, peak_bandwidth_gbs=round(float(data["peak_bandwidth_gbs"]), 2),
                   peak_gflops=round(float(data["peak_gflops"]), 2),
                   cache_bandwidth_gbs=round(float(cache), 2) if cache else None)


def discover(measure: bool = True, remeasure: bool = False) -> list[Device]:
    """Every OpenCL device, GPUs first. With ``measure`` the peaks are measured where not cached yet
    (seconds per device, once); without, devices carry peaks only when cached."""
    devices = []
    for d in _listed():
        cached = None if remeasure else _cached_peaks(d)
        # peaks cached before the cache's bandwidth was measured serve until a caller may measure
        if cached is not None and ("cache_bandwidth_gbs" in cached or not measure):
            d = _with_peaks(d, cached)
        elif measure:
            d = measure_peaks(d)
        devices.append(d)
    return sorted(devices, key=lambda d: d.type != "gpu")


def select(text: str | None, measure: bool = False) -> Device:
    """The device whose device or platform name contains ``text`` (case-insensitive; "pocl" also matches
    PoCL's platform); None picks the first GPU, else the first device. Raises DeviceError naming the
    devices that exist."""
    devices = discover(measure=measure)
    if not devices:
        raise DeviceError("no OpenCL device found (is an ICD installed? see OCL_ICD_VENDORS)")
    if text is None or not text.strip():
        return devices[0]
    for d in devices:
        if d.matches(text):
            return d
    known = "; ".join(f"{d.name} ({d.platform})" for d in devices)
    raise DeviceError(f"no OpenCL device matches {text!r}; devices: {known}")
