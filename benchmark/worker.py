"""The child process that runs kernels: ``python -m clperf.benchmark.worker``.

Kernels run here and never in the caller, because a faulting kernel can kill its process (a segfault on
PoCL) or poison every later OpenCL call in it (error -9999 on NVIDIA). The parent (``isolation.Worker``)
writes one JSON request per line on our stdin; we answer with JSON lines on the original stdout, which is
moved to a private descriptor first so that anything a driver prints cannot corrupt the protocol.

Requests:

* ``{"op": "open", "device": Device JSON}`` -> ``{"type": "opened", "address_bits": ..}``
* ``{"op": "measure", "source", "kernel", "options", "params", "scenarios": [Scenario JSON], "policy",
  "seed", "check", "reference": [source, kernel] | null, "progress": bool, "deadline": epoch | null}``,
  optionally ``"types"`` (``argtypes.ArgInfo`` JSON per parameter: the compiler's element types, structs
  included), ``"data_root"`` (the kernel's folder, for ``file:`` fills) and ``"outputs"`` (a path: every
  global buffer after one run from the inputs is saved there, ``numpy.savez``)
  -> ``{"type": "built"}`` once the program is built, then for each scenario in order
  ``{"type": "result", "index": i, "status", "error", "times_ms", "checked"}`` (with ``"data_hashes"``,
  buffer -> sha256, when data files were read)
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
from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl

from clperf.benchmark.devbuffers import DeviceBuffers, compare
from clperf.benchmark.faults import KernelFault, build_program, classify
from clperf.benchmark.inputs import ArrayCache, BufferPlan, DataFiles, plan_buffers, scalar_value
from clperf.benchmark.peaks import Peaks, event_ms
from clperf.benchmark.timing import Policy, next_batch, should_stop
from clperf.core import children
from clperf.core.argtypes import ArgInfo
from clperf.core.errors import ScenarioError
from clperf.core.records import Param, Scenario

PROGRAMS_KEPT = 32
BUILDERS = max(1, min(6, (os.cpu_count() or 2) - 2))  # processes compiling ahead of the measurements


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
        return build_program(self.ctx, self.device, source, options)

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

    def measure(self, req: dict[str, Any], send: Send) -> bool:
        """Run every scenario of ``req``; returns False when the context may be poisoned."""
        scenarios = [Scenario.from_json(s) for s in req["scenarios"]]
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
        job = _Job(req, kernel, ref_kernel, send, self)
        plans: list[list[BufferPlan] | KernelFault] = []
        for sc in scenarios:
            try:
                plans.append(self._check_limits(job, sc))
            except KernelFault as f:
                plans.append(f)
        t_alloc = time.perf_counter()
        try:
            job.buffers.allocate([p for p in plans if not isinstance(p, KernelFault)])
        except KernelFault as f:
            plans = [f] * len(plans)
        self.seconds["setup"] += time.perf_counter() - t_alloc
        try:
            for i, (sc, plan) in enumerate(zip(scenarios, plans, strict=True)):
                if job.deadline is not None and time.time() > job.deadline:
                    send({"type": "done", "stopped": True, "seconds": self.seconds})
                    return True
                if not self._one(job, i, sc, plan):
                    return False
        finally:
            job.buffers.release()
        send({"type": "done", "stopped": False, "seconds": self.seconds})
        return True

    def _one(self, job: _Job, i: int, sc: Scenario, plan: list[BufferPlan] | KernelFault) -> bool:
        """Measure one scenario and send its result; False when the context may be poisoned."""
        result: dict[str, Any] = {"type": "result", "index": i, "times_ms": [], "checked": False,
                                  "status": "ok", "error": None}
        group = math.prod(sc.local_size) if sc.local_size is not None else None
        try:
            if isinstance(plan, KernelFault):
                raise plan
            if job.refused is not None and group is not None and group >= job.refused:
                raise KernelFault("invalid-scenario", f"not run: the device refused a work-group of "
                                  f"{job.refused} for this kernel (OUT_OF_RESOURCES)")
            times, checked, check_error = self._run(job, sc, plan)
            result.update(times_ms=times, checked=checked, error=check_error)
        except KernelFault as f:
            result.update(status=f.status, error=str(f))
            if f.group_too_big and group is not None:
                job.refused = group if job.refused is None else min(job.refused, group)
                if not self._healthy():
                    f.fatal = True
            if f.fatal:
                result["fatal"] = True
        except cl.Error as e:  # anything not classified where it happened
            fault = classify(e, "run")
            result.update(status=fault.status, error=str(fault), fatal=True)
        if not isinstance(plan, KernelFault) and (hashes := job.files.hashes(plan)):
            result["data_hashes"] = hashes
        job.send(result)
        return not result.get("fatal")

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

    def _check_limits(self, job: _Job, sc: Scenario) -> list[BufferPlan]:
        dev = self.device
        try:
            plan = plan_buffers(job.params, sc.args, sc.fills, self.address_bits, job.types)
            job.files.check(plan)
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
        local_bytes += job.kernel.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, dev)
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

    def _set_args(self, job: _Job, kernel: cl.Kernel, sc: Scenario) -> None:
        for i, p in enumerate(job.params):
            if p.pointer:
                if p.address_space == "local":
                    nbytes = int(sc.args[p.name]) * job.buffers.plan_et(p).nbytes
                    # pyopencl's stub omits LocalMemory from set_arg's accepted types
                    kernel.set_arg(i, cl.LocalMemory(nbytes))  # type: ignore[arg-type]
                else:
                    kernel.set_arg(i, job.buffers.buf[p.name])
                continue
            try:
                arg = job.types[i] if job.types is not None else None
                kernel.set_arg(i, scalar_value(p, sc.args[p.name], self.address_bits, arg))
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

    def _run(self, job: _Job, sc: Scenario, plan: list[BufferPlan]) -> tuple[list[float], bool, str | None]:
        t_fill = time.perf_counter()
        job.buffers.fill(plan, job.seed)
        self.seconds["setup"] += time.perf_counter() - t_fill
        checked, check_error = False, None
        if job.check or job.ref_kernel is not None:
            check_error = self._check(job, sc, plan)
            checked = True
        if job.outputs:
            outs = self._once(job, job.kernel, sc, plan)
            np.savez(job.outputs, **outs)  # type: ignore[arg-type]  # the stub types **arrays as allow_pickle
        self._set_args(job, job.kernel, sc)
        start = time.perf_counter()
        estimate = None
        for _ in range(max(job.policy.warmup, 0)):
            ev = self._launch(job.kernel, sc, 1)[0]
            estimate = event_ms(ev)
        job.buffers.check_guards(plan)
        times: list[float] = []
        previous = None
        while True:
            n = next_batch(times, estimate if estimate is not None else 1.0, job.policy)
            previous = float(np.median(times)) if times else None
            events = self._launch(job.kernel, sc, n)
            times.extend(event_ms(ev) for ev in events)
            estimate = float(np.median(times))
            if job.progress:
                frac = min(0.99, max(len(times) / max(job.policy.min_repetitions, 1),
                                     sum(times) / max(job.policy.min_total_ms, 1e-9)) * 0.5)
                job.send({"type": "progress", "fraction": frac, "message": f"{len(times)} repetitions"})
            if should_stop(times, previous, time.perf_counter() - start, job.policy):
                break
        if job.policy.warmup == 0:
            job.buffers.check_guards(plan)
        self.seconds["run"] += time.perf_counter() - start
        return times, checked, check_error

    def _once(self, job: _Job, kernel: cl.Kernel, sc: Scenario,
              plan: list[BufferPlan]) -> dict[str, np.ndarray]:
        """Every global buffer after one run from the scenario's inputs."""
        job.buffers.fill(plan, job.seed, force=True)
        self._set_args(job, kernel, sc)
        self._launch(kernel, sc, 1)
        job.buffers.check_guards(plan)
        return job.buffers.read(plan)

    def _check(self, job: _Job, sc: Scenario, plan: list[BufferPlan]) -> str | None:
        """Run from the same inputs twice (or kernel then reference) and compare every global buffer."""
        second = job.ref_kernel if job.ref_kernel is not None else job.kernel
        outs = [self._once(job, k, sc, plan) for k in (job.kernel, second)]
        what = "the reference kernel" if job.ref_kernel is not None else "a second run (not deterministic)"
        for name, a in outs[0].items():
            problem = compare(a, outs[1][name], job.rtol)
            if problem:
                return f"output differs from {what} in buffer {name!r}: {problem}"
        return None

    # -- device profile --------------------------------------------------------------------------------

    def peaks(self) -> dict[str, str | float | None]:
        return Peaks(self.ctx, self.queue, self.device, self.program).measure()


Send = Callable[[dict[str, Any]], None]


class _Job:
    """One measure request: its kernels, inputs, options and buffers."""

    def __init__(self, req: dict[str, Any], kernel: cl.Kernel, ref_kernel: cl.Kernel | None, send: Send,
                 runner: Runner) -> None:
        self.params = [Param(**p) for p in req["params"]]
        types = req.get("types")
        self.types = [ArgInfo.from_json(t) for t in types] if types else None
        self.policy = Policy.from_json(req["policy"])
        self.seed = int(req.get("seed", 0))
        self.deadline: float | None = req.get("deadline")
        self.check = bool(req.get("check"))
        self.progress = bool(req.get("progress"))
        self.rtol = float(req.get("rtol", 1e-5))
        self.outputs: str | None = req.get("outputs")
        self.kernel, self.ref_kernel, self.send = kernel, ref_kernel, send
        self.files = DataFiles(Path(req["data_root"]) if req.get("data_root") else None)
        self.buffers = DeviceBuffers(runner.ctx, runner.queue, runner.arrays, self.files)
        self.refused: int | None = None  # smallest work-group the device refused for this kernel


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


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
        prg = build_program(*_BUILDER, source, options)
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
