"""The child process that runs kernels: ``python -m clperf.benchmark.worker``.

Kernels run here and never in the caller, because a faulting kernel can kill its process (a segfault on
PoCL) or poison every later OpenCL call in it (error -9999 on NVIDIA). The parent (``isolation.Worker``)
writes one JSON request per line on our stdin; we answer with JSON lines on the original stdout, which is
moved to a private descriptor first so that anything a driver prints cannot corrupt the protocol.

Requests:

* ``{"op": "open", "device": Device JSON}`` -> ``{"type": "opened", "address_bits": ..}``
* ``{"op": "measure", "source", "kernel", "options", "params", "scenarios": [Scenario JSON], "policy",
  "seed", "check", "reference": [source, kernel] | null, "progress": bool, "deadline": epoch | null}``
  -> ``{"type": "built"}`` once the program is built, then for each scenario in order
  ``{"type": "result", "index": i, "status", "error", "times_ms", "checked"}``
  (``progress`` messages in between when asked), then ``{"type": "done", "stopped": bool, "seconds":
  {"build": s, "setup": s, "run": s}}`` (where the wall time went: waiting for the compiler, allocating
  and uploading buffers, launching and timing). A program is
  built once and kept for later requests; buffers are allocated once per request at the largest size any
  scenario needs and re-filled only when a scenario's sizes or fills change.
* ``{"op": "prebuild", "source", "options"}`` -> no reply: the program starts compiling in a pool of
  builder processes (each with its own context), so a sweep compiles the next kernels while this one
  runs. A later ``measure`` waits for it and loads the compiled binary; when that fails it builds from
  source here. On PoCL this hides the compiler; on the H200 it did not (sweeps still waited for builds
  65% of the time, as with threads), so the driver is the limit there.
* ``{"op": "peaks"}`` -> ``{"type": "peaks", "peak_bandwidth_gbs", "peak_gflops", "cache_bandwidth_gbs"}``
* ``{"op": "exit"}``

After a fault that may have poisoned the context the result carries ``"fatal": true`` and the worker exits;
the parent starts a new one.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import numpy as np
import pyopencl as cl
from clperf.benchmark.inputs import ArrayCache, BufferPlan, plan_buffers, scalar_value, seed_for
from clperf.benchmark.timing import Policy, next_batch, should_stop

from clperf.core import children
from clperf.core.errors import ScenarioError
from clperf.core.records import Param, Scenario

GUARD_BYTE = 0xCD
MIN_GUARD = 4096
MAX_GUARD = 1 << 20

_INVALID_LAUNCH = {"INVALID_WORK_GROUP_SIZE", "INVALID_WORK_ITEM_SIZE", "INVALID_GLOBAL_WORK_SIZE",
                   "INVALID_GLOBAL_OFFSET", "INVALID_KERNEL_ARGS", "INVALID_ARG_SIZE", "INVALID_ARG_VALUE",
                   "INVALID_WORK_DIMENSION"}
PROGRAMS_KEPT = 32
BUILDERS = max(1, min(6, (os.cpu_count() or 2) - 2))  # processes compiling ahead of the measurements
_NO_MEMORY = {"MEM_OBJECT_ALLOCATION_FAILURE", "OUT_OF_HOST_MEMORY", "INVALID_BUFFER_SIZE"}


class KernelFault(Exception):
    """A kernel or launch failed; ``status`` is the Measurement status it becomes. ``group_too_big``:
    the launch was refused for this work-group size only (registers or local memory), so larger groups
    of the same kernel need not be tried."""

    def __init__(self, status: str, message: str, fatal: bool = False, group_too_big: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.fatal = fatal
        self.group_too_big = group_too_big


def _code_name(e: cl.Error) -> str:
    code = getattr(e, "code", None)
    if isinstance(code, int):
        for name in dir(cl.status_code):
            if not name.startswith("_") and getattr(cl.status_code, name) == code:
                return name
        return str(code)
    return str(e).split(" - ")[0]


def classify(e: cl.Error, stage: str) -> KernelFault:
    """Map an OpenCL error raised while launching (``enqueue``) or finishing (``run``) a kernel."""
    name = _code_name(e)
    msg = str(e).split("\n")[0]
    if name in _NO_MEMORY:
        return KernelFault("out-of-memory", f"the device could not allocate memory ({name})")
    if stage == "enqueue" and name in _INVALID_LAUNCH:
        return KernelFault("invalid-scenario", f"the device rejected the launch ({name}): {msg}")
    if stage == "enqueue" and name == "OUT_OF_RESOURCES":
        return KernelFault("invalid-scenario", "the device cannot launch this kernel with this work-group "
                           "size (OUT_OF_RESOURCES: too many registers or too much local memory per group)",
                           group_too_big=True)
    return KernelFault("crash", f"the kernel failed while running ({name}): {msg}", True)


class Runner:
    """One OpenCL context and queue on one device, with the programs built so far."""

    def __init__(self, device_json: dict[str, Any]) -> None:
        self.device = _find_device(device_json)
        self.ctx = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.programs: OrderedDict[tuple[str, str], cl.Program] = OrderedDict()
        self.building: dict[tuple[str, str], Future[tuple[bytes | None, str]]] = {}
        self._builders: ProcessPoolExecutor | None = None
        self._device_json = device_json
        self.arrays = ArrayCache()
        self.seconds = {"build": 0.0, "setup": 0.0, "run": 0.0}
        self.address_bits = int(self.device.address_bits)

    # -- building --------------------------------------------------------------------------------------

    def _build(self, source: str, options: str) -> cl.Program:
        return _build_program(self.ctx, self.device, source, options)

    def prebuild(self, source: str, options: str) -> None:
        """Start compiling a program in a builder process; :meth:`program` picks the binary up."""
        key = (source, options)
        if key in self.programs or key in self.building:
            return
        if self._builders is None:
            self._builders = ProcessPoolExecutor(BUILDERS, multiprocessing.get_context("spawn"),
                                                 initializer=_builder_open, initargs=(self._device_json,))
        self.building[key] = self._builders.submit(_builder_compile, source, options)

    def _from_pending(self, pending: Future[tuple[bytes | None, str]], source: str,
                      options: str) -> cl.Program:
        try:
            binary, error = pending.result()
        except Exception:  # noqa: BLE001 - a builder died; build here, where faults are attributed
            return self._build(source, options)
        if binary is None:
            raise KernelFault("build-error", error)
        try:
            prg = cl.Program(self.ctx, [self.device], [binary])
            prg.build(options=options)
            return prg
        except cl.Error:
            return self._build(source, options)

    def program(self, source: str, options: str) -> cl.Program:
        key = (source, options)
        prg = self.programs.get(key)
        if prg is None:
            pending = self.building.pop(key, None)
            prg = self._from_pending(pending, source, options) if pending is not None \
                else self._build(source, options)
            self.programs[key] = prg
            while len(self.programs) > PROGRAMS_KEPT:
                self.programs.popitem(last=False)
        else:
            self.programs.move_to_end(key)
        return prg

    def close(self) -> None:
        if self._builders is not None:
            self._builders.shutdown(wait=False, cancel_futures=True)

    def kernel(self, source: str, name: str, options: str) -> cl.Kernel:
        prg = self.program(source, options)
        try:
            return cl.Kernel(prg, name)
        except cl.Error as e:
            raise KernelFault("build-error", f"no kernel named {name!r} in the built program") from e

    # -- measuring -------------------------------------------------------------------------------------

    def measure(self, req: dict[str, Any], send) -> bool:
        """Run every scenario of ``req``; returns False when the context may be poisoned."""
        params = [Param(**p) for p in req["params"]]
        scenarios = [Scenario.from_json(s) for s in req["scenarios"]]
        policy = Policy.from_json(req["policy"])
        seed = int(req.get("seed", 0))
        deadline = req.get("deadline")
        self.seconds = {"build": 0.0, "setup": 0.0, "run": 0.0}
        t0 = time.perf_counter()
        try:
            kernel = self.kernel(req["source"], req["kernel"], req.get("options", ""))
            ref_kernel = None
            if req.get("reference"):
                ref_src, ref_name = req["reference"]
                ref_kernel = self.kernel(ref_src, ref_name, req.get("options", ""))
        except KernelFault as f:
            self.seconds["build"] = time.perf_counter() - t0
            for i in range(len(scenarios)):
                send({"type": "result", "index": i, "status": f.status, "error": str(f), "times_ms": [],
                      "checked": False})
            send({"type": "done", "stopped": False, "seconds": self.seconds})
            return True
        self.seconds["build"] = time.perf_counter() - t0
        send({"type": "built"})
        plans: list[list[BufferPlan] | KernelFault] = []
        for sc in scenarios:
            try:
                plans.append(self._check_limits(kernel, params, sc))
            except KernelFault as f:
                plans.append(f)
        buffers = _Buffers(self)
        t_alloc = time.perf_counter()
        try:
            buffers.allocate([p for p in plans if not isinstance(p, KernelFault)])
        except KernelFault as f:
            plans = [f] * len(plans)
        self.seconds["setup"] += time.perf_counter() - t_alloc
        refused: int | None = None  # smallest work-group the device refused for this kernel
        try:
            for i, (sc, plan) in enumerate(zip(scenarios, plans, strict=True)):
                if deadline is not None and time.time() > deadline:
                    send({"type": "done", "stopped": True, "seconds": self.seconds})
                    return True
                result: dict[str, Any] = {"type": "result", "index": i, "times_ms": [], "checked": False,
                                          "status": "ok", "error": None}
                group = math.prod(sc.local_size) if sc.local_size is not None else None
                try:
                    if isinstance(plan, KernelFault):
                        raise plan
                    if refused is not None and group is not None and group >= refused:
                        raise KernelFault("invalid-scenario", f"not run: the device refused a work-group of "
                                          f"{refused} for this kernel (OUT_OF_RESOURCES)")
                    times, checked, check_error = self._run(kernel, ref_kernel, params, sc, plan, buffers,
                                                            policy, seed, req, send)
                    result.update(times_ms=times, checked=checked, error=check_error)
                except KernelFault as f:
                    result.update(status=f.status, error=str(f))
                    if f.group_too_big and group is not None:
                        refused = group if refused is None else min(refused, group)
                        if not self._healthy():
                            f.fatal = True
                    if f.fatal:
                        result["fatal"] = True
                        send(result)
                        return False
                except cl.Error as e:  # anything not classified where it happened
                    fault = classify(e, "run")
                    result.update(status=fault.status, error=str(fault), fatal=True)
                    send(result)
                    return False
                send(result)
        finally:
            buffers.release()
        send({"type": "done", "stopped": False, "seconds": self.seconds})
        return True

    def _healthy(self) -> bool:
        """Whether the context still works after a refused launch (a small fill and a wait)."""
        try:
            buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, 64)
            cl.enqueue_fill_buffer(self.queue, buf, np.uint8(0), 0, 64)  # type: ignore[arg-type]
            self.queue.finish()
            buf.release()
            return True
        except cl.Error:
            return False

    def _check_limits(self, kernel: cl.Kernel, params: list[Param], sc: Scenario) -> list[BufferPlan]:
        dev = self.device
        try:
            plan = plan_buffers(params, sc.args, sc.fills, self.address_bits)
        except ScenarioError as e:
            raise KernelFault("invalid-scenario", str(e)) from e
        if sc.local_size is not None:
            # Not CL_KERNEL_WORK_GROUP_SIZE: NVIDIA's driver 580 reports 256 for every kernel (even one
            # with reqd_work_group_size(1024)) and then runs groups of 1024 fine. The launch says no.
            group = math.prod(sc.local_size)
            if group > dev.max_work_group_size:
                raise KernelFault("invalid-scenario", f"work-group of {group} work-items exceeds the device "
                                  f"limit of {dev.max_work_group_size} on {dev.name}")
            for d, (lo, mx) in enumerate(zip(sc.local_size, dev.max_work_item_sizes, strict=False)):
                if lo > mx:
                    raise KernelFault("invalid-scenario", f"local size {lo} in dimension {d} exceeds the "
                                      f"device limit of {mx}")
        local_bytes = sum(b.nbytes for b in plan if b.param.address_space == "local")
        local_bytes += kernel.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, dev)
        if local_bytes > dev.local_mem_size:
            raise KernelFault("out-of-memory", f"needs {local_bytes} bytes of __local memory per work-group; "
                              f"{dev.name} has {dev.local_mem_size}")
        glob = [b for b in plan if b.param.address_space != "local"]
        for b in glob:
            if b.nbytes > dev.max_mem_alloc_size:
                raise KernelFault("out-of-memory", f"buffer {b.param.name!r} needs {_mb(b.nbytes)}; the "
                                  f"largest buffer {dev.name} allocates is {_mb(dev.max_mem_alloc_size)}")
        total = sum(b.nbytes for b in glob)
        if total > dev.global_mem_size:
            raise KernelFault("out-of-memory", f"buffers need {_mb(total)}; {dev.name} has "
                              f"{_mb(dev.global_mem_size)}")
        const_bytes = sum(b.nbytes for b in glob if b.param.address_space == "constant")
        if const_bytes > dev.max_constant_buffer_size:
            raise KernelFault("out-of-memory", f"__constant buffers need {_mb(const_bytes)}; {dev.name} "
                              f"allows {_mb(dev.max_constant_buffer_size)}")
        return plan

    def _set_args(self, kernel: cl.Kernel, params: list[Param], sc: Scenario, buffers: _Buffers) -> None:
        for i, p in enumerate(params):
            if p.pointer:
                if p.address_space == "local":
                    nbytes = int(sc.args[p.name]) * buffers.plan_et(p).nbytes
                    # pyopencl's stub omits LocalMemory from set_arg's accepted types
                    kernel.set_arg(i, cl.LocalMemory(nbytes))  # type: ignore[arg-type]
                else:
                    kernel.set_arg(i, buffers.buf[p.name])
            else:
                try:
                    kernel.set_arg(i, scalar_value(p, sc.args[p.name], self.address_bits))
                except ScenarioError as e:
                    raise KernelFault("invalid-scenario", str(e)) from e
                except cl.Error as e:
                    raise classify(e, "enqueue") from e

    def _launch(self, kernel: cl.Kernel, sc: Scenario, count: int) -> list[cl.Event]:
        events = []
        try:
            for _ in range(count):
                events.append(cl.enqueue_nd_range_kernel(self.queue, kernel, sc.global_size, sc.local_size))
        except cl.Error as e:
            raise classify(e, "enqueue") from e
        try:
            events[-1].wait()
        except cl.Error as e:
            raise classify(e, "run") from e
        return events

    def _run(self, kernel: cl.Kernel, ref_kernel: cl.Kernel | None, params: list[Param], sc: Scenario,
             plan: list[BufferPlan], buffers: _Buffers, policy: Policy, seed: int, req: dict[str, Any],
             send: Callable[[dict[str, Any]], None]) -> tuple[list[float], bool, str | None]:
        t_fill = time.perf_counter()
        buffers.fill(plan, seed)
        self.seconds["setup"] += time.perf_counter() - t_fill
        self._set_args(kernel, params, sc, buffers)
        checked, check_error = False, None
        if req.get("check") or ref_kernel is not None:
            check_error = self._check(kernel, ref_kernel, params, sc, plan, buffers, seed,
                                      float(req.get("rtol", 1e-5)))
            checked = True
            self._set_args(kernel, params, sc, buffers)
        start = time.perf_counter()
        estimate = None
        for _ in range(max(policy.warmup, 0)):
            ev = self._launch(kernel, sc, 1)[0]
            estimate = _ms(ev)
        buffers.check_guards(plan)
        times: list[float] = []
        previous = None
        while True:
            n = next_batch(times, estimate if estimate is not None else 1.0, policy)
            previous = float(np.median(times)) if times else None
            events = self._launch(kernel, sc, n)
            times.extend(_ms(ev) for ev in events)
            estimate = float(np.median(times))
            if req.get("progress"):
                frac = min(0.99, max(len(times) / max(policy.min_repetitions, 1),
                                     sum(times) / max(policy.min_total_ms, 1e-9)) * 0.5)
                send({"type": "progress", "fraction": frac, "message": f"{len(times)} repetitions"})
            if should_stop(times, previous, time.perf_counter() - start, policy):
                break
        if policy.warmup == 0:
            buffers.check_guards(plan)
        self.seconds["run"] += time.perf_counter() - start
        return times, checked, check_error

    def _check(self, kernel: cl.Kernel, ref_kernel: cl.Kernel | None, params: list[Param], sc: Scenario,
               plan: list[BufferPlan], buffers: _Buffers, seed: int, rtol: float) -> str | None:
        """Run from the same inputs twice (or kernel then reference) and compare every global buffer."""
        outs = []
        for k in (kernel, ref_kernel if ref_kernel is not None else kernel):
            buffers.fill(plan, seed, force=True)
            self._set_args(k, params, sc, buffers)
            self._launch(k, sc, 1)
            buffers.check_guards(plan)
            outs.append(buffers.read(plan))
        what = "the reference kernel" if ref_kernel is not None else "a second run (not deterministic)"
        for name, a in outs[0].items():
            problem = compare(a, outs[1][name], rtol)
            if problem:
                return f"output differs from {what} in buffer {name!r}: {problem}"
        return None

    # -- device profile --------------------------------------------------------------------------------

    def peaks(self, passes: int = 3) -> dict[str, str | float | None]:
        """The best of ``passes`` measurements of each peak: a peak is what the device can do, and on a
        shared machine one pass can fall in a busy spell (PoCL's copy measured 8.4 GB/s during a test run
        and 33.6 GB/s idle on the same 2 cores), which would otherwise stay cached for good."""
        # a CPU's global memory cache is its last level; each of two buffers is an eighth of it. A GPU's
        # (NVIDIA's H200: 4 MiB, its L1s) is too small for a copy there to measure more than its launch
        cpu = bool(self.device.type & cl.device_type.CPU)
        cache = int(self.device.global_mem_cache_size) // 8 if cpu else 0
        return {"type": "peaks", "peak_bandwidth_gbs": max(self._peak_bandwidth() for _ in range(passes)),
                "peak_gflops": max(self._peak_flops() for _ in range(passes)),
                "cache_bandwidth_gbs": max(self._peak_bandwidth(cache) for _ in range(passes))
                if cache >= 1 << 16 else None}

    def _median_ms(self, kernel: cl.Kernel, gsize: tuple[int, ...], lsize: tuple[int, ...] | None,
                   reps: int = 10) -> float:
        cl.enqueue_nd_range_kernel(self.queue, kernel, gsize, lsize).wait()
        evs = [cl.enqueue_nd_range_kernel(self.queue, kernel, gsize, lsize) for _ in range(reps)]
        evs[-1].wait()
        return float(np.median([_ms(e) for e in evs]))

    def _peak_bandwidth(self, nbytes: int = 0) -> float:
        """GB/s of a float4 copy between two buffers of ``nbytes`` (default: far larger than any cache),
        the best over launch shapes."""
        dev = self.device
        gpu = bool(dev.type & cl.device_type.GPU)
        nbytes = min(nbytes or (256 << 20 if gpu else 64 << 20), dev.max_mem_alloc_size // 2,
                     dev.global_mem_size // 8)
        n = nbytes // 16
        prg = self.program(_PEAK_SOURCE, "")
        k = cl.Kernel(prg, "clperf_copy")
        a = cl.Buffer(self.ctx, cl.mem_flags.READ_ONLY, n * 16)
        b = cl.Buffer(self.ctx, cl.mem_flags.WRITE_ONLY, n * 16)
        # the stub wants a buffer/array pattern; pyopencl accepts a numpy scalar at runtime
        cl.enqueue_fill_buffer(self.queue, a, np.float32(1), 0, n * 16).wait()  # type: ignore[arg-type]
        k.set_args(a, b)
        best = 0.0
        for lsize in (None, 64, 128, 256, 512, 1024):
            if lsize is not None and (lsize > dev.max_work_group_size or n % lsize):
                continue
            ms = self._median_ms(k, (n,), None if lsize is None else (lsize,))
            best = max(best, 2 * n * 16 / (ms * 1e6))
        a.release()
        b.release()
        return best

    def _peak_flops(self) -> float:
        dev = self.device
        gpu = bool(dev.type & cl.device_type.GPU)
        n = dev.max_compute_units * (8192 if gpu else 256)
        prg = self.program(_PEAK_SOURCE, "")
        k = cl.Kernel(prg, "clperf_fma")
        out = cl.Buffer(self.ctx, cl.mem_flags.WRITE_ONLY, n * 4)
        k.set_args(out, np.float32(0.999), np.float32(0.001))
        best = 0.0
        for lsize in (None, 128, 256):
            if lsize is not None and (lsize > dev.max_work_group_size or n % lsize):
                continue
            ms = self._median_ms(k, (n,), None if lsize is None else (lsize,))
            best = max(best, n * _FMA_FLOPS_PER_ITEM / (ms * 1e6))
        out.release()
        return best


_FMA_LOOP = 256
_FMA_CHAINS = 8
_FMA_FLOPS_PER_ITEM = 2 * _FMA_LOOP * _FMA_CHAINS
_PEAK_SOURCE = f"""
__kernel void clperf_copy(__global const float4* restrict a, __global float4* restrict b) {{
    size_t i = get_global_id(0);
    b[i] = a[i];
}}
__kernel void clperf_fma(__global float* out, float b, float c) {{
    float x = (float)get_global_id(0) * 1e-7f;
    {" ".join(f"float a{j} = x + {j}.0f;" for j in range(_FMA_CHAINS))}
    for (int k = 0; k < {_FMA_LOOP}; ++k) {{
        {" ".join(f"a{j} = fma(a{j}, b, c);" for j in range(_FMA_CHAINS))}
    }}
    out[get_global_id(0)] = {" + ".join(f"a{j}" for j in range(_FMA_CHAINS))};
}}
"""


class _Buffers:
    """Device buffers of one request, each followed by a guard zone that catches out-of-bounds writes."""

    def __init__(self, runner: Runner) -> None:
        self.r = runner
        self.buf: dict[str, cl.Buffer] = {}
        self.capacity: dict[str, int] = {}  # bytes of data before the guard
        self.guard: dict[str, int] = {}
        self.tag: dict[str, tuple] = {}
        self._et: dict[str, Any] = {}

    def plan_et(self, p: Param):
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
                buf = cl.Buffer(self.r.ctx, cl.mem_flags.READ_WRITE, nbytes + guard)
                # the stub wants a buffer/array pattern; pyopencl accepts a numpy scalar at runtime
                cl.enqueue_fill_buffer(self.r.queue, buf, np.uint8(GUARD_BYTE),  # type: ignore[arg-type]
                                       nbytes, guard)
                self.buf[name], self.capacity[name], self.guard[name] = buf, nbytes, guard
            self.r.queue.finish()
        except cl.Error as e:
            self.release()
            raise classify(e, "enqueue") from e

    def fill(self, plan: list[BufferPlan], seed: int, force: bool = False) -> None:
        """Upload each buffer's data unless the device already holds it (or a longer prefix of it)."""
        for b in plan:
            if b.param.address_space == "local":
                continue
            param_seed = seed_for(b.param.name, seed)
            key = self.r.arrays.key(b.et, b.fill, param_seed)
            held = self.tag.get(b.param.name)
            if not force and held is not None and held[0] == key and held[1] >= b.length:
                continue
            host = self.r.arrays.get(b.et, b.length, b.fill, param_seed)
            try:
                cl.enqueue_copy(self.r.queue, self.buf[b.param.name], host)
            except cl.Error as e:
                raise classify(e, "enqueue") from e
            self.tag[b.param.name] = (key, b.length)
        self.r.queue.finish()

    def read(self, plan: list[BufferPlan]) -> dict[str, np.ndarray]:
        out = {}
        for b in plan:
            if b.param.address_space == "local":
                continue
            host = np.empty(b.length * b.et.lanes, b.et.dtype)
            cl.enqueue_copy(self.r.queue, host, self.buf[b.param.name])
            out[b.param.name] = host
        return out

    def check_guards(self, plan: list[BufferPlan]) -> None:
        for b in plan:
            name = b.param.name
            if b.param.address_space == "local" or name not in self.buf:
                continue
            host = np.empty(self.guard[name], np.uint8)
            try:
                cl.enqueue_copy(self.r.queue, host, self.buf[name], src_offset=self.capacity[name])
            except cl.Error as e:
                raise classify(e, "run") from e
            bad = np.flatnonzero(host != GUARD_BYTE)
            if bad.size:
                first = (self.capacity[name] + int(bad[0])) // b.et.nbytes
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
    absolute floor of ``rtol * 1e-2 * max|b|`` so values that cancel to near zero do not fail alone."""
    if a.shape != b.shape:
        return f"shapes differ {a.shape} vs {b.shape}"
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


def _build_message(err: str, log: str) -> str:
    text = (log or "").strip() or err
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "build failed: " + "\n".join(lines[:40])


def _ms(ev: cl.Event) -> float:
    return round((ev.profile.end - ev.profile.start) * 1e-6, 6)  # profiling events count nanoseconds


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def _build_program(ctx: cl.Context, device: cl.Device, source: str, options: str) -> cl.Program:
    prg = cl.Program(ctx, source)
    try:
        prg.build(options=options)
    except cl.Error as e:
        try:
            log = prg.get_build_info(device, cl.program_build_info.LOG)
        except cl.Error:
            log = ""
        raise KernelFault("build-error", _build_message(str(e), log)) from e
    return prg


_BUILDER: tuple[cl.Context, cl.Device] | None = None


def _builder_open(device_json: dict[str, Any]) -> None:
    global _BUILDER
    # ends with the worker, even when the worker is killed; bounded like the worker on a CPU device
    children.limit_self(children.worker_memory_bytes() if device_json.get("type") == "cpu" else None)
    dev = _find_device(device_json)
    _BUILDER = (cl.Context([dev]), dev)


def _builder_compile(source: str, options: str) -> tuple[bytes | None, str]:
    """In a builder process: (the device binary, "") or (None, the build error and log)."""
    assert _BUILDER is not None
    try:
        prg = _build_program(*_BUILDER, source, options)
    except KernelFault as f:
        return None, str(f)
    binaries: list[bytes] = prg.get_info(cl.program_info.BINARIES)  # type: ignore[assignment]
    return bytes(binaries[0]), ""


def _find_device(d: dict[str, Any]) -> cl.Device:
    for platform in cl.get_platforms():
        if platform.name.strip() != d["platform"]:
            continue
        for dev in platform.get_devices():
            if dev.name.strip() == d["name"] and dev.driver_version.strip() == d["driver"]:
                return dev
    raise KernelFault("crash", f"device {d['name']!r} on {d['platform']!r} (driver {d['driver']}) not found")


def main() -> None:
    out_fd = os.dup(1)
    os.dup2(2, 1)  # stray prints from drivers go to stderr, never into the protocol
    out = os.fdopen(out_fd, "w", buffering=1)

    def send(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    runner: Runner | None = None
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "exit":
            break
        try:
            if op == "open":
                runner = Runner(req["device"])
                send({"type": "opened", "address_bits": runner.address_bits})
            elif op == "measure":
                assert runner is not None, "open a device first"
                if not runner.measure(req, send):
                    break
            elif op == "prebuild":
                assert runner is not None, "open a device first"
                runner.prebuild(req["source"], req.get("options", ""))
            elif op == "peaks":
                assert runner is not None, "open a device first"
                send(runner.peaks())
            else:
                send({"type": "error", "error": f"unknown op {op!r}"})
        except KernelFault as f:
            send({"type": "error", "status": f.status, "error": str(f)})
        except cl.Error as e:
            send({"type": "error", "status": "crash", "error": f"OpenCL error: {e}"})
            break
    if runner is not None:
        runner.close()
    out.close()


if __name__ == "__main__":
    main()
