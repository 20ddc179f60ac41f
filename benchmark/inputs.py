"""Kernel inputs from a resolved scenario: host arrays for buffers, typed values for scalars.

Element types come from the compiler (``clperf.core.argtypes``: typedefs, vectors, structs with their
layout); without it (no clang) from the parameter's type as written, which covers OpenCL's own scalar
and vector types. The data is ``clperf.core.datagen``'s, seeded, so a measurement can be repeated with the
same inputs and ``bench``, ``sweep`` and a test all see the same numbers.

Vector element types (``float4``) take ``width`` lanes per element (3-vectors take 4, as in OpenCL), so a
buffer of ``n`` ``float4`` is ``4n`` floats on the host; a struct buffer is a structured array. Scalars of
vector type get the value in every lane; a struct passed by value gets it in its float fields. Only numpy
is needed here; the worker turns these into OpenCL buffers.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from clperf.core import datafiles
from clperf.core.argtypes import ArgInfo
from clperf.core.datagen import PREFIX_STABLE, buffer_data, numpy_dtype
from clperf.core.errors import ScenarioError
from clperf.core.fills import RANDOM, Fill, read_fills
from clperf.core.records import Param, split_vector

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

    dtype: np.dtype  # a scalar dtype, or a structured one for a struct
    lanes: int  # 4 for float4 and float3, 1 for scalars and structs
    declared: int = 0  # lanes as written when they differ (3 for float3)

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * self.lanes

    @property
    def is_float(self) -> bool:
        return self.dtype.kind == "f"


def element_type(type_name: str, address_bits: int = 64) -> ElementType:
    """``'float4'`` -> (float32, 4 lanes), from the type's name alone (OpenCL's scalar and vector types)."""
    base, lanes = split_vector(type_name)
    if base in ("size_t", "ptrdiff_t", "intptr_t", "uintptr_t") and address_bits == 32:
        dt: type[np.generic] = np.uint32 if base in ("size_t", "uintptr_t") else np.int32
    else:
        found = _DTYPES.get(base)
        if found is None:
            raise ScenarioError(f"cannot generate inputs of type {type_name!r}: clperf reads typedefs and "
                                "structs from clang, which could not compile this kernel")
        dt = found
    suffix = type_name.strip()[len(base):]
    declared = int(suffix) if suffix.isdigit() and int(suffix) != lanes else 0
    return ElementType(np.dtype(dt), lanes, declared)


def arg_element_type(arg: ArgInfo) -> ElementType:
    """The element type of a parameter as the compiler describes it."""
    dtype, lanes = numpy_dtype(arg.type)
    declared = arg.type.count if arg.type.kind == "vector" and arg.type.count != lanes else 0
    return ElementType(dtype, lanes, declared)


@dataclass(frozen=True)
class BufferPlan:
    """What one pointer parameter needs: its element type, length, fill and any struct field fills."""

    index: int
    param: Param
    et: ElementType
    length: int
    fill: Fill = RANDOM
    fields: tuple[tuple[str, Fill], ...] = field(default=())

    @property
    def nbytes(self) -> int:
        return self.length * self.et.nbytes

    @property
    def prefix_stable(self) -> bool:
        """Whether this buffer's data for a shorter length is a prefix of its data for a longer one."""
        return self.fill.kind in PREFIX_STABLE and self.et.dtype.names is None and not self.fields

    def key(self, seed: int) -> tuple[object, ...]:
        """Identity of the data (without the length when a prefix of longer data is the same data)."""
        return (str(self.et.dtype), self.et.lanes, self.param.name, self.fill.key,
                tuple((n, f.key) for n, f in self.fields), seed,
                None if self.prefix_stable else self.length)

    def make(self, seed: int, load: Callable[[str], np.ndarray] | None = None) -> np.ndarray:
        return buffer_data(self.et.dtype, self.et.lanes, self.length, self.fill, seed, self.param.name,
                           dict(self.fields), load, self.et.declared or self.et.lanes)


def make_array(et: ElementType, length: int, fill: str, seed: int, name: str = "") -> np.ndarray:
    """Host data for a buffer of ``length`` elements with a simple fill (``random``, ``range:0:8``)."""
    fills, _ = read_fills({"x": fill})
    return BufferPlan(0, Param(name, "", "global", True), et, length, fills["x"]).make(seed)


class ArrayCache:
    """Host arrays by their data's identity, least recently used first out past a byte limit.

    Sweeps run many variants and kernels over the same few sizes: generating 16 MB of random numbers
    costs ~10 ms, re-using it costs nothing. A shorter request gets a prefix of a longer array already
    made when the fill allows it (a prefix of seeded random data is seeded random data), so a sweep that
    runs its largest variant first generates each buffer's data once. Callers must not modify the arrays.
    """

    def __init__(self, max_bytes: int = 1 << 30) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._bytes = 0

    def get(self, plan: BufferPlan, seed: int, load: Callable[[str], np.ndarray] | None = None) -> np.ndarray:
        key = plan.key(seed)
        count = plan.length * plan.et.lanes
        arr = self._items.get(key)
        if arr is not None and arr.size >= count:
            self._items.move_to_end(key)
            return arr[:count]
        if arr is not None:
            self._bytes -= self._items.pop(key).nbytes
        arr = plan.make(seed, load)
        arr.setflags(write=False)
        if plan.fill.kind == "file":  # a file may change between requests: ``DataFiles`` holds it for one
            return arr
        self._items[key] = arr
        self._bytes += arr.nbytes
        while self._bytes > self.max_bytes and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self._bytes -= old.nbytes
        return arr


def scalar_value(param: Param, value: int | float, address_bits: int = 64,
                 arg: ArgInfo | None = None) -> np.ndarray | np.generic:
    """The typed value for a scalar kernel argument; vector types get ``value`` in every lane, a struct
    in each float field (its integer fields are 0)."""
    et = arg_element_type(arg) if arg is not None else element_type(param.type, address_bits)
    if et.dtype.names:
        out = np.zeros(1, et.dtype)
        for name in et.dtype.names:
            if datafiles.field_dtype(et.dtype, name).base.kind == "f":
                out[name] = value
        return out
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


def plan_buffers(params: Sequence[Param], args: dict[str, int | float], fills: dict[str, str],
                 address_bits: int = 64, types: Sequence[ArgInfo] | None = None) -> list[BufferPlan]:
    """Buffers for every pointer parameter (``__local`` ones included; they get no host data).
    ``types``: the compiler's view of ``params`` (same order), when there is one."""
    by_buffer, _ = read_fills(fills)
    plans = []
    for i, p in enumerate(params):
        if not p.pointer:
            continue
        length = args.get(p.name)
        if not isinstance(length, int) or length <= 0:
            raise ScenarioError(f"buffer {p.name!r} needs a positive integer length, got {length!r}")
        et = arg_element_type(types[i]) if types is not None else element_type(p.type, address_bits)
        own = tuple((n.split(".", 1)[1], f) for n, f in by_buffer.items() if n.startswith(p.name + "."))
        if own and et.dtype.names is None:
            raise ScenarioError(f"--fill {p.name}.{own[0][0]}: {p.name} is a {p.type} buffer, not a struct")
        plans.append(BufferPlan(i, p, et, length, by_buffer.get(p.name, RANDOM), own))
    return plans


class DataFiles:
    """Reads the ``file:`` fills of one kernel (paths from its folder) and remembers each file's sha256."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.sha256: dict[str, str] = {}  # path as the scenario stores it -> digest
        self._arrays: dict[str, np.ndarray] = {}

    def load(self, text: str) -> np.ndarray:
        if text not in self._arrays:
            self._arrays[text], self.sha256[text] = datafiles.load(datafiles.data_path(self.root, text))
        return self._arrays[text]

    def check(self, plans: Sequence[BufferPlan]) -> None:
        """ScenarioError unless every data file fits its buffer (read from the files' headers only)."""
        for b in plans:
            if b.fill.kind == "file":
                dtype, shape = datafiles.header(datafiles.data_path(self.root, b.fill.path))
                datafiles.check_array(f"--fill {b.param.name}=file:{b.fill.path}", dtype, shape, b.et.dtype,
                                      b.et.lanes, b.length, b.et.declared or b.et.lanes)

    def hashes(self, plans: Sequence[BufferPlan]) -> dict[str, str]:
        """Buffer name -> sha256 of the file it was loaded from, for the files read so far."""
        return {b.param.name: self.sha256[b.fill.path] for b in plans
                if b.fill.kind == "file" and b.fill.path in self.sha256}
