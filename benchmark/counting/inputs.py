"""The counting run's kernel arguments: the same host data ``clperf bench`` uploads, or the caller's.

Buffers are planned from the resolved scenario and the compiler's parameter types exactly as the
benchmark does (``clperf.benchmark.inputs.plan_buffers``), and filled by the same seeded generator
(``BufferPlan.make``, seed ``runner.DEFAULT_SEED``; ``file:`` fills read from the kernel's folder), so
the counts are those of the launch ``clperf bench`` would time. An array the caller gives for a buffer
replaces its fill; it must have the buffer's element type and length (``(n,)``, or ``(n, lanes)`` /
flat ``n * lanes`` values for a vector type).

``identity`` names each buffer's data without making it (a generated fill by its plan key, a data file
or a given array by its sha256), so that a cached count is found without generating 64 MB of numbers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from clperf.benchmark.inputs import BufferPlan, DataFiles, plan_buffers, scalar_value
from clperf.benchmark.runner import DEFAULT_SEED, Signature, check_inputs
from clperf.core.errors import ScenarioError
from clperf.core.fills import Fill
from clperf.core.records import Scenario


@dataclass(frozen=True)
class Argument:
    """One kernel argument as the child sets it: exactly one of the three is given."""

    buffer: np.ndarray | None = None  # host data of a __global or __constant buffer
    local_bytes: int | None = None  # size of a __local buffer
    scalar: bytes | None = None  # a value passed by value, as the kernel's bytes


def digest(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes."""
    h = hashlib.sha256(f"{array.dtype.str}|{array.dtype.descr}|{array.shape}|".encode())
    h.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data)  # its buffer, not a copy of it
    return h.hexdigest()


class KernelInputs:
    """The arguments of one launch of a kernel with its scenario (``sig`` from
    ``runner.kernel_signature``; ``root`` the kernel's folder for ``file:`` fills)."""

    def __init__(self, sig: Signature, scenario: Scenario, root: Path | None,
                 data: Mapping[str, np.ndarray] | None = None) -> None:
        missing = [p.name for p in sig.params if p.name not in scenario.args]
        if missing:
            raise ScenarioError(f"the scenario has no value for {', '.join(missing)}")
        check_inputs(sig, scenario, root)
        self.sig, self.scenario = sig, scenario
        self.plans = {b.param.name: b for b in plan_buffers(sig.params, scenario.args, scenario.fills, 64,
                                                             sig.types)}
        self.data = dict(data or {})
        buffers = {n for n, b in self.plans.items() if b.param.address_space != "local"}
        unknown = sorted(set(self.data) - buffers)
        if unknown:
            raise ScenarioError(f"data for {', '.join(unknown)}: the kernel has no such __global buffer")
        self.files = DataFiles(root)

    def identity(self) -> dict[str, str]:
        """Buffer -> what its data is, for a cache key."""
        out = {}
        for name, b in self.plans.items():
            if b.param.address_space == "local":
                continue
            if name in self.data:
                out[name] = "array:" + digest(self.data[name])
            elif b.fill.kind == "file":
                self.files.load(b.fill.path)
                out[name] = "file:" + self.files.sha256[b.fill.path]
            else:
                out[name] = f"fill:{b.key(DEFAULT_SEED)!r}:{b.length}"
        return out

    def arguments(self) -> list[Argument]:
        """Every argument in the kernel's order, buffers' data made now."""
        out = []
        for i, p in enumerate(self.sig.params):
            b = self.plans.get(p.name)
            if b is None:
                arg = self.sig.types[i] if self.sig.types is not None else None
                value = scalar_value(p, self.scenario.args[p.name], 64, arg)
                out.append(Argument(scalar=np.asarray(value).tobytes()))
            elif p.address_space == "local":
                out.append(Argument(local_bytes=b.nbytes))
            elif p.name in self.data:
                out.append(Argument(buffer=_given(b, self.data[p.name])))
            else:
                out.append(Argument(buffer=b.make(DEFAULT_SEED, self.files.load)))
        return out


def _given(b: BufferPlan, array: np.ndarray) -> np.ndarray:
    """The caller's array for buffer ``b``, checked and laid out as a ``file:`` fill's array is. A flat array
    of a vector buffer's scalars takes its rows; a plain array exactly the size of a struct buffer is its
    structs' bytes, as a host program copies them."""
    a = np.asarray(array)
    widths = {b.et.lanes, b.et.declared or b.et.lanes}  # a float3's 4 lanes, or the 3 it declares
    width = next((w for w in sorted(widths) if a.ndim == 1 and a.size == b.length * w), None)
    if b.et.dtype.names is None and b.et.lanes > 1 and width is not None:
        a = a.reshape(b.length, width)
    elif b.et.dtype.names is not None and a.dtype.names is None and a.ndim == 1 \
            and a.nbytes == b.length * b.et.dtype.itemsize:
        a = np.ascontiguousarray(a).view(b.et.dtype)  # a host's array holding the structs' bytes
    name = b.param.name
    as_file = replace(b, fill=Fill("file", path=name), fields=())
    try:
        return as_file.make(DEFAULT_SEED, lambda _: a)
    except ScenarioError as e:
        raise ScenarioError(str(e).replace(f"--fill {name}=file:{name}", f"data[{name!r}]")) from e

