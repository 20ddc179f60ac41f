"""Kernel inputs from a resolved scenario: host arrays for buffers, typed values for scalars.

Everything is seeded so a measurement can be repeated with the same data. Fills:

* ``random`` (default): floats uniform in [0, 1); integers uniform in [0, 64) so that a value used as a
  trip count or an index offset stays small; ``bool``-like chars in the same range.
* ``zeros`` / ``ones``.
* ``range:LO:HI``: integers uniform in [LO, HI) (HI exclusive), for index arrays (``range:0:n``); in a
  floating-point buffer the same integers, converted.

Vector element types (``float4``) take ``width`` lanes per element (3-vectors take 4, as in OpenCL), so a
buffer of ``n`` ``float4`` is ``4n`` floats on the host. Scalars of vector type get the value in every
lane. Only numpy is needed here; the worker turns these into OpenCL buffers.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from clperf.core.errors import ScenarioError
from clperf.core.records import Param, split_vector

RANDOM_INT_HIGH = 64

_DTYPES: dict[str, type[np.generic]] = {
    "char": np.int8, "uchar": np.uint8, "unsigned char": np.uint8, "bool": np.uint8,
    "short": np.int16, "ushort": np.uint16, "unsigned short": np.uint16,
    "int": np.int32, "uint": np.uint32, "unsigned int": np.uint32, "unsigned": np.uint32,
    "long": np.int64, "ulong": np.uint64, "unsigned long": np.uint64,
    "half": np.float16, "float": np.float32, "double": np.float64,
    "size_t": np.uint64, "ptrdiff_t": np.int64, "intptr_t": np.int64, "uintptr_t": np.uint64,
}


@dataclass(frozen=True)
class ElementType:
    """How one element of an OpenCL C type lies in memory."""

    dtype: np.dtype
    lanes: int  # 4 for float4 and float3, 1 for scalars

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * self.lanes

    @property
    def is_float(self) -> bool:
        return self.dtype.kind == "f"


def element_type(type_name: str, address_bits: int = 64) -> ElementType:
    """``'float4'`` -> (float32, 4 lanes). ScenarioError for types clperf cannot fill (structs, images)."""
    base, lanes = split_vector(type_name)
    if base in ("size_t", "ptrdiff_t", "intptr_t", "uintptr_t") and address_bits == 32:
        dt: type[np.generic] = np.uint32 if base in ("size_t", "uintptr_t") else np.int32
    else:
        found = _DTYPES.get(base)
        if found is None:
            raise ScenarioError(f"cannot generate inputs of type {type_name!r} (structs, images and "
                                "typedefs are not supported)")
        dt = found
    return ElementType(np.dtype(dt), lanes)


def seed_for(name: str, base_seed: int) -> int:
    """A per-parameter seed that does not depend on Python's hash randomisation."""
    h = base_seed & 0xFFFFFFFF
    for ch in name.encode():
        h = (h * 1000003 ^ ch) & 0xFFFFFFFFFFFF
    return h


def make_array(et: ElementType, length: int, fill: str, seed: int) -> np.ndarray:
    """Host data for a buffer of ``length`` elements (``length * lanes`` scalars)."""
    count = length * et.lanes
    if fill == "zeros":
        return np.zeros(count, et.dtype)
    if fill == "ones":
        return np.ones(count, et.dtype)
    rng = np.random.default_rng(seed)
    if fill.startswith("range:"):
        _, lo_s, hi_s = fill.split(":")
        lo, hi = int(float(lo_s)), int(float(hi_s))
        if et.is_float:
            return rng.integers(lo, hi, count).astype(et.dtype)
        info = np.iinfo(et.dtype)
        if lo < info.min or hi - 1 > info.max:
            raise ScenarioError(f"range {lo}..{hi} does not fit in {et.dtype.name}")
        return rng.integers(lo, hi, count, dtype=et.dtype)
    if fill != "random":
        raise ScenarioError(f"unknown fill {fill!r}")
    if et.is_float:
        if et.dtype == np.float16:
            return rng.random(count, dtype=np.float32).astype(np.float16)
        return rng.random(count, dtype=et.dtype)  # type: ignore[call-overload]
    return rng.integers(0, RANDOM_INT_HIGH, count, dtype=et.dtype)


class ArrayCache:
    """Host arrays by (dtype, lanes, fill, seed), least recently used first out past a byte limit.

    Sweeps run many variants and kernels over the same few sizes: generating 16 MB of random numbers
    costs ~10 ms, re-using it costs nothing. A shorter request gets a prefix of a longer array already
    made (a prefix of seeded random data is seeded random data), so a sweep that runs its largest variant
    first generates each buffer's data once. Callers must not modify the arrays they get.
    """

    def __init__(self, max_bytes: int = 1 << 30) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._bytes = 0

    @staticmethod
    def key(et: ElementType, fill: str, seed: int) -> tuple:
        return (et.dtype.str, et.lanes, fill, seed)

    def get(self, et: ElementType, length: int, fill: str, seed: int) -> np.ndarray:
        key = self.key(et, fill, seed)
        count = length * et.lanes
        arr = self._items.get(key)
        if arr is not None and arr.size >= count:
            self._items.move_to_end(key)
            return arr[:count]
        if arr is not None:
            self._bytes -= self._items.pop(key).nbytes
        arr = make_array(et, length, fill, seed)
        arr.setflags(write=False)
        self._items[key] = arr
        self._bytes += arr.nbytes
        while self._bytes > self.max_bytes and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self._bytes -= old.nbytes
        return arr


def scalar_value(param: Param, value: int | float, address_bits: int = 64) -> np.ndarray | np.generic:
    """The typed value for a scalar kernel argument; vector types get ``value`` in every lane."""
    et = element_type(param.type, address_bits)
    if not et.is_float:
        if isinstance(value, float) and not value.is_integer():
            raise ScenarioError(f"{param.name!r} is a {param.type}, got {value!r}")
        info = np.iinfo(et.dtype)
        if not info.min <= int(value) <= info.max:
            raise ScenarioError(f"{param.name!r} = {value} does not fit in a {param.type}")
        value = int(value)
    elif not abs(value) <= float(np.finfo(et.dtype).max):  # NaN too: a stored scenario may hold one
        raise ScenarioError(f"{param.name!r} = {value} is not a finite {param.type}")
    if et.lanes == 1:
        return et.dtype.type(value)
    return np.full(et.lanes, value, dtype=et.dtype)


@dataclass(frozen=True)
class BufferPlan:
    """What one pointer parameter needs: its element type, length and fill."""

    index: int
    param: Param
    et: ElementType
    length: int
    fill: str

    @property
    def nbytes(self) -> int:
        return self.length * self.et.nbytes


def plan_buffers(params: tuple[Param, ...] | list[Param], args: dict[str, int | float],
                 fills: dict[str, str], address_bits: int = 64) -> list[BufferPlan]:
    """Buffers for every pointer parameter (``__local`` ones included; they get no host data)."""
    plans = []
    for i, p in enumerate(params):
        if not p.pointer:
            continue
        length = args.get(p.name)
        if not isinstance(length, int) or length <= 0:
            raise ScenarioError(f"buffer {p.name!r} needs a positive integer length, got {length!r}")
        et = element_type(p.type, address_bits)
        plans.append(BufferPlan(i, p, et, length, fills.get(p.name, "random")))
    return plans
