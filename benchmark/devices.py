"""OpenCL device discovery and the measured profile of each device.

Listing devices is cheap and happens in this process. Peak bandwidth (a float4 copy) and peak single
precision FLOP rate (8 independent FMA chains per work-item) are measured once in a worker process and
cached as JSON per device and driver under ``state_dir()/devices/``: a new driver is a new device.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pyopencl as cl

from clperf.errors import DeviceError
from clperf.paths import ensure, state_dir
from clperf.records import Device


def _kind(t: int) -> str:
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


def _cached_peaks(device: Device) -> dict[str, float] | None:
    try:
        data = json.loads(cache_path(device).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != device.key:
        return None
    return data


def measure_peaks(device: Device, timeout_s: float = 300.0) -> Device:
    """Measure and cache the device's peaks (in a worker process); returns the device with them."""
    from clperf.benchmark.isolation import Worker, WorkerGone

    try:
        with Worker(device) as w:
            w.send({"op": "peaks"})
            reply = w.receive(timeout_s)
    except WorkerGone as e:
        raise DeviceError(f"measuring {device.name} failed: {e}") from e
    if reply.get("type") != "peaks":
        raise DeviceError(f"measuring {device.name} failed: {reply.get('error')}")
    data = {"key": device.key, "peak_bandwidth_gbs": reply["peak_bandwidth_gbs"],
            "peak_gflops": reply["peak_gflops"], "cache_bandwidth_gbs": reply.get("cache_bandwidth_gbs")}
    path = cache_path(device)
    ensure(path.parent)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)
    return _with_peaks(device, data)


def _with_peaks(device: Device, data: dict[str, float]) -> Device:
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
