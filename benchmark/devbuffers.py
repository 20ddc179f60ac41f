"""Device buffers of one measurement request, each followed by a guard zone, and output comparison.

A buffer is allocated once per request at the largest size any scenario needs, plus room for a guard zone
of 4 KiB..1 MiB filled with ``GUARD_BYTE`` right after each scenario's data (a smaller variant of a sweep
gets its guard after its own length, not after the largest one's): a kernel that writes past the end of
its data changes the guard, and the run is reported as an out-of-bounds write instead of a silent
corruption. Host data is uploaded only when a scenario's fill or length changes what the device holds.
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from clperf.benchmark.faults import KernelFault, classify
from clperf.benchmark.inputs import ArrayCache, BufferPlan, DataFiles, ElementType
from clperf.core.errors import ScenarioError
from clperf.core.records import Param

GUARD_BYTE = 0xCD
MIN_GUARD = 4096
MAX_GUARD = 1 << 20


class DeviceBuffers:
    """The ``__global`` and ``__constant`` buffers of one request, by parameter name."""

    def __init__(self, ctx: cl.Context, queue: cl.CommandQueue, arrays: ArrayCache, files: DataFiles) -> None:
        self.ctx, self.queue, self.arrays, self.files = ctx, queue, arrays, files
        self.buf: dict[str, cl.Buffer] = {}
        self.capacity: dict[str, int] = {}  # bytes of data before the guard
        self.guard: dict[str, int] = {}
        self.tag: dict[str, tuple] = {}
        self._et: dict[str, ElementType] = {}

    def plan_et(self, p: Param) -> ElementType:
        return self._et[p.name]

    def allocate(self, plans: list[list[BufferPlan]]) -> None:
        need: dict[str, int] = {}
        for plan in plans:
            for b in plan:
                self._et[b.param.name] = b.et
                if b.param.address_space != "local":
                    need[b.param.name] = max(need.get(b.param.name, 0), b.nbytes)
        try:
            for name, nbytes in need.items():
                guard = min(max(MIN_GUARD, nbytes // 8), MAX_GUARD)
                buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, nbytes + guard)
                # the stub wants a buffer/array pattern; pyopencl accepts a numpy scalar at runtime
                cl.enqueue_fill_buffer(self.queue, buf, np.uint8(GUARD_BYTE),  # type: ignore[arg-type]
                                       nbytes, guard)
                self.buf[name], self.capacity[name], self.guard[name] = buf, nbytes, guard
            self.queue.finish()
        except cl.Error as e:
            self.release()
            raise classify(e, "enqueue") from e

    def fill(self, plan: list[BufferPlan], seed: int, force: bool = False) -> None:
        """Upload each buffer's data unless the device already holds it (or a longer prefix of it)."""
        for b in plan:
            if b.param.address_space == "local":
                continue
            key = b.key(seed)
            held = self.tag.get(b.param.name)
            if not force and held is not None and held[0] == key and held[1] >= b.length:
                continue
            try:
                host = self.arrays.get(b, seed, self.files.load)
            except ScenarioError as e:
                raise KernelFault("invalid-scenario", str(e)) from e
            try:
                cl.enqueue_copy(self.queue, self.buf[b.param.name], host)
            except cl.Error as e:
                raise classify(e, "enqueue") from e
            self.tag[b.param.name] = (key, b.length)
        self._guard(plan)
        self.queue.finish()

    def _guard(self, plan: list[BufferPlan]) -> None:
        """The guard right after each buffer's data for this scenario; what lies under it is no longer
        data the device holds."""
        for b in plan:
            name = b.param.name
            if b.param.address_space == "local" or name not in self.buf:
                continue
            try:  # the stub wants a buffer/array pattern; pyopencl accepts a numpy scalar at runtime
                cl.enqueue_fill_buffer(self.queue, self.buf[name], np.uint8(GUARD_BYTE),  # type: ignore[arg-type]
                                       b.nbytes, self.guard[name])
            except cl.Error as e:
                raise classify(e, "enqueue") from e
            held = self.tag.get(name)
            if held is not None and held[1] > b.length:
                self.tag[name] = (held[0], b.length)

    def read(self, plan: list[BufferPlan]) -> dict[str, np.ndarray]:
        out = {}
        for b in plan:
            if b.param.address_space == "local":
                continue
            host = np.empty(b.length * b.et.lanes, b.et.dtype)
            cl.enqueue_copy(self.queue, host, self.buf[b.param.name])
            out[b.param.name] = host
        return out

    def check_guards(self, plan: list[BufferPlan]) -> None:
        for b in plan:
            name = b.param.name
            if b.param.address_space == "local" or name not in self.buf:
                continue
            host = np.empty(self.guard[name], np.uint8)
            try:
                cl.enqueue_copy(self.queue, host, self.buf[name], src_offset=b.nbytes)
            except cl.Error as e:
                raise classify(e, "run") from e
            bad = np.flatnonzero(host != GUARD_BYTE)
            if bad.size:
                first = (b.nbytes + int(bad[0])) // b.et.nbytes
                raise KernelFault("crash", f"out-of-bounds write: the kernel wrote past the end of buffer "
                                  f"{name!r} ({b.length} elements; first bad element index {first}); is the "
                                  "buffer length in the scenario too small?")

    def release(self) -> None:
        for buf in self.buf.values():
            try:
                buf.release()
            except cl.Error:
                pass
        self.buf.clear()


def compare(a: np.ndarray, b: np.ndarray, rtol: float = 1e-5) -> str | None:
    """None when equal: integers exactly, floats within ``rtol`` relative (NaN equals NaN), with an
    absolute floor of ``rtol * 1e-2 * max|b|`` so values that cancel to near zero do not fail alone.
    Struct buffers are compared field by field (padding bytes are not data)."""
    if a.shape != b.shape:
        return f"shapes differ {a.shape} vs {b.shape}"
    if a.dtype.names:
        for name in a.dtype.names:
            problem = compare(a[name].reshape(-1), b[name].reshape(-1), rtol)
            if problem:
                return f"field {name!r}: {problem}"
        return None
    if a.dtype.kind == "f":
        af, bf = a.astype(np.float64), b.astype(np.float64)
        finite = np.isfinite(bf)
        scale = float(np.abs(bf[finite]).max()) if finite.any() else 0.0
        ok = np.isclose(af, bf, rtol=rtol, atol=rtol * 1e-2 * scale, equal_nan=True)
    else:
        ok = a == b
    bad = np.flatnonzero(~ok)
    if bad.size == 0:
        return None
    i = int(bad[0])
    return f"{bad.size} of {a.size} values differ (first at [{i}]: {a[i]!r} vs {b[i]!r})"
