"""Record types shared by the predictor, the benchmark runner and the server.

Plain frozen dataclasses with ``to_json`` giving the documented JSON shapes. Nothing here imports
pyopencl, torch or pygls.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

AddressSpace = Literal["global", "local", "constant", "private"]

# Bytes per element of OpenCL C scalar types (vector types multiply by their width; 3-vectors take 4 slots).
SCALAR_SIZES: dict[str, int] = {
    "char": 1, "uchar": 1, "unsigned char": 1, "bool": 1,
    "short": 2, "ushort": 2, "unsigned short": 2, "half": 2,
    "int": 4, "uint": 4, "unsigned int": 4, "unsigned": 4, "float": 4,
    "long": 8, "ulong": 8, "unsigned long": 8, "double": 8, "size_t": 8, "ptrdiff_t": 8,
    "intptr_t": 8, "uintptr_t": 8,
}


def split_vector(type_name: str) -> tuple[str, int]:
    """``'float4'`` -> ``('float', 4)``; ``'uint'`` -> ``('uint', 1)``; 3-vectors occupy 4 lanes."""
    base = type_name.strip()
    digits = ""
    while base and base[-1].isdigit():
        digits = base[-1] + digits
        base = base[:-1]
    if digits and base in SCALAR_SIZES:
        width = int(digits)
        return base, 4 if width == 3 else width
    return type_name.strip(), 1


def type_size(type_name: str) -> int | None:
    """Size in bytes of an OpenCL C scalar or vector type, or None when unknown (a struct, a typedef)."""
    base, width = split_vector(type_name)
    size = SCALAR_SIZES.get(base)
    return None if size is None else size * width


@dataclass(frozen=True)
class Param:
    """One kernel parameter as written in the source."""

    name: str
    type: str  # element type for pointers ("float4"), the type itself for scalars ("int")
    address_space: AddressSpace
    pointer: bool
    const: bool = False

    @property
    def element_size(self) -> int | None:
        return type_size(self.type)


@dataclass(frozen=True)
class Scenario:
    """How a kernel is launched, fully resolved to numbers.

    ``args`` holds a scalar's value, or for a pointer parameter its length in elements.
    ``fills`` maps pointer parameters (and ``param.field`` of struct buffers) to fills in the language of
    ``clperf.core.fills`` (random when absent), and the name of each matrix or graph to its definition.
    ``defaulted`` names what came from the documented defaults instead of the user.
    """

    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    args: dict[str, int | float]
    fills: dict[str, str] = field(default_factory=dict)
    defaulted: tuple[str, ...] = ()

    @property
    def dims(self) -> int:
        return len(self.global_size)

    @property
    def work_items(self) -> int:
        n = 1
        for g in self.global_size:
            n *= g
        return n

    def to_json(self) -> dict[str, Any]:
        return {
            "global": list(self.global_size),
            "local": list(self.local_size) if self.local_size is not None else None,
            "args": dict(self.args),
            "fills": dict(self.fills),
            "defaulted": list(self.defaulted),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Scenario:
        return cls(
            global_size=tuple(d["global"]),
            local_size=tuple(d["local"]) if d.get("local") is not None else None,
            args=dict(d.get("args", {})),
            fills=dict(d.get("fills", {})),
            defaulted=tuple(d.get("defaulted", ())),
        )


PLATFORM_NICKNAMES = {"Portable Computing Language": "PoCL", "Intel(R) OpenCL": "Intel CPU runtime"}


def device_matches(text: str, name: str, platform: str) -> bool:
    """``--device TEXT``: a case-insensitive substring of the device name, the platform name or the
    platform's common name ("pocl" for PoCL's "Portable Computing Language")."""
    needle = text.strip().lower()
    names = (name, platform, PLATFORM_NICKNAMES.get(platform, ""))
    return bool(needle) and any(needle in n.lower() for n in names if n)


@dataclass(frozen=True)
class Device:
    """A discovered OpenCL device or a shipped profile of one the model was trained on."""

    name: str
    platform: str
    type: Literal["gpu", "cpu", "accelerator"]
    compute_units: int
    clock_mhz: int
    local_mem_bytes: int
    max_work_group_size: int
    driver: str
    global_mem_bytes: int = 0
    peak_bandwidth_gbs: float | None = None  # measured with a copy kernel
    peak_gflops: float | None = None  # measured with an FMA kernel (single precision)
    cache_bytes: int = 0  # the global memory cache (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE): a CPU's last level
    cache_bandwidth_gbs: float | None = None  # the copy kernel's, on a quarter of ``cache_bytes`` (CPUs)
    source: Literal["discovered", "profile"] = "discovered"

    def matches(self, text: str) -> bool:
        """``--device TEXT``: a case-insensitive substring of the device name, the platform name or the
        platform's common name ("pocl" for PoCL's "Portable Computing Language")."""
        return device_matches(text, self.name, self.platform)

    @property
    def is_pocl(self) -> bool:
        """PoCL's CPU device (whose compiled kernels ``predictor/model/cpu_code.py`` can read and count)."""
        return self.type == "cpu" and PLATFORM_NICKNAMES.get(self.platform) == "PoCL"

    @property
    def key(self) -> str:
        """Stable identity for caches and datasets: device, platform and driver."""
        return f"{self.platform}|{self.name}|{self.driver}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Device:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


Status = Literal["ok", "build-error", "crash", "timeout", "invalid-scenario", "out-of-memory"]


@dataclass(frozen=True)
class Measurement:
    """One real benchmark result. Only real runs produce Measurements; every repetition is kept."""

    kernel: str
    file: str
    source_hash: str
    build_options: str
    scenario: Scenario
    device: Device
    status: Status
    error: str | None
    times_ms: tuple[float, ...]  # every repetition, in run order, from OpenCL profiling events
    median_ms: float | None
    min_ms: float | None
    cv: float | None  # coefficient of variation after outlier removal
    outliers_removed: int
    checked: bool  # outputs compared (determinism or a reference kernel)
    timestamp: str
    clperf_version: str
    data_hashes: dict[str, str] = field(default_factory=dict)  # buffer -> sha256 of its file: data file

    @property
    def repetitions(self) -> int:
        return len(self.times_ms)

    def to_json(self) -> dict[str, Any]:
        out = {
            "kernel": self.kernel,
            "file": self.file,
            "source_hash": self.source_hash,
            "build_options": self.build_options,
            "device": self.device.to_json(),
            "scenario": self.scenario.to_json(),
            "status": self.status,
            "error": self.error,
            "median_ms": self.median_ms,
            "min_ms": self.min_ms,
            "cv": self.cv,
            "repetitions": self.repetitions,
            "outliers_removed": self.outliers_removed,
            "times_ms": list(self.times_ms),
            "checked": self.checked,
            "timestamp": self.timestamp,
            "clperf_version": self.clperf_version,
        }
        if self.data_hashes:  # only measurements made from data files name them
            out["data_hashes"] = dict(self.data_hashes)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Measurement:
        return cls(
            kernel=d["kernel"],
            file=d.get("file", ""),
            source_hash=d["source_hash"],
            build_options=d.get("build_options", ""),
            scenario=Scenario.from_json(d["scenario"]),
            device=Device.from_json(d["device"]),
            status=d["status"],
            error=d.get("error"),
            times_ms=tuple(d.get("times_ms", ())),
            median_ms=d.get("median_ms"),
            min_ms=d.get("min_ms"),
            cv=d.get("cv"),
            outliers_removed=d.get("outliers_removed", 0),
            checked=d.get("checked", False),
            timestamp=d.get("timestamp", ""),
            clperf_version=d.get("clperf_version", ""),
            data_hashes=dict(d.get("data_hashes", {})),
        )


Bound = Literal["memory", "compute", "latency"]


@dataclass(frozen=True)
class Estimate:
    """A predicted run time. Names its model, so every number shown is traceable."""

    time_ms: float
    cycles: float  # time x device clock
    interval_ms: tuple[float, float]
    bound: Bound
    bandwidth_utilization: float  # predicted share of the device's measured peak bandwidth, 0..1
    model_name: str
    model_version: str
    cached: bool = False
    calibrated: bool = False
    calibration_measurements: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "time_ms": self.time_ms,
            "cycles": self.cycles,
            "interval_ms": list(self.interval_ms),
            "bound": self.bound,
            "bandwidth_utilization": self.bandwidth_utilization,
            "model": {"name": self.model_name, "version": self.model_version},
            "cached": self.cached,
            "calibrated": self.calibrated,
            "calibration_measurements": self.calibration_measurements,
        }
