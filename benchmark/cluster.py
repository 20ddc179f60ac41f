"""Sweeps on a Ray cluster: the kernels split into shards, one Ray task per shard, one dataset writer.

The driver (the ``clperf sweep --ray`` process) reads the dataset, works out every kernel's variants and
which of them are still to measure, writes the sources file, and submits one task per shard: a GPU task
(``num_gpus=1``, so Ray hands each task one device of its node) when the device is a GPU, a CPU task
otherwise. A task runs an ordinary sweep of its kernels (``sweep.run_sweep``, with its worker process and
background builds) on the node Ray picked, and yields each record as it is made; the driver alone appends
them to the dataset, so the file is written by one process, resumes as a plain sweep does, and never
holds a record twice.

A task whose worker process dies, or that raises, is retried once by Ray (``max_retries=1``). A retried
task measures its shard again from the start: Ray drops the outputs the first attempt already delivered
(the records come in the same order), and the driver drops any record whose key it already wrote. A task
that fails a second time has each of its variants not yet written recorded as a crash, as a plain sweep
records a variant whose worker died.

Ray is imported inside the functions: without ``--ray`` nothing here loads it.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from clperf.benchmark import dataset
from clperf.benchmark.runner import DEFAULT_SEED, source_hash
from clperf.benchmark.sweep import (
    MAX_BUFFER_BYTES,
    Event,
    Summary,
    SweepKernel,
    Variant,
    keyed_variants,
    run_sweep,
    sources_path,
    variant_record,
    variants,
)
from clperf.benchmark.timing import Policy
from clperf.core.errors import ClperfError, ScenarioError
from clperf.core.records import Device

TASKS_PER_SLOT = 2  # shards per GPU (or CPU) of the cluster: a slow shard does not leave the others idle
FLUSH_EVERY_S = 2.0


@dataclass
class ClusterSummary(Summary):
    tasks: int = 0
    tasks_done: int = 0
    tasks_failed: int = 0  # failed twice; their variants not yet written are recorded as crashes
    duplicates: int = 0  # records a retried task sent again, dropped by the driver
    nodes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TaskSettings:
    """What every task's sweep runs with (the ``run_sweep`` arguments that are not per shard)."""

    max_variants: int
    policy: Policy
    variant_timeout_s: float
    build_timeout_s: float
    max_buffer_bytes: int
    seed: int
    lookahead: int


@dataclass
class _Shard:
    index: int
    kernels: list[SweepKernel]
    todo: dict[str, tuple[SweepKernel, Variant]]  # key -> the variant it measures
    done: set[str]  # keys of these kernels already in the dataset


def connect(address: str | None) -> bool:
    """Join the Ray cluster at ``address`` ("auto": the one ``ray start`` runs here; None or "": the
    one this process already joined, else a new local one). True when this call started Ray.

    A new local instance listens on 127.0.0.1 only: nothing outside this machine has to reach it.
    """
    if not address:
        # without this Ray swaps a loopback node address for the host's own (read when ray first loads)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray

    if ray.is_initialized():
        return False
    local: dict[str, Any] = {} if address else {"_node_ip_address": "127.0.0.1", "include_dashboard": False}
    try:
        ray.init(address=address or None, log_to_driver=False, **local)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ClperfError(f"cannot reach a Ray cluster at {address or 'a new local instance'}: {e}") from e
    return True


def run_sweep_on_ray(kernels: Sequence[SweepKernel], device: Device, out: str | Path, *,
                     address: str | None = None, tasks: int | None = None, max_variants: int = 40,
                     policy: Policy | None = None, time_budget_s: float | None = None,
                     variant_timeout_s: float = 20.0, build_timeout_s: float = 120.0,
                     max_buffer_bytes: int = MAX_BUFFER_BYTES, seed: int = DEFAULT_SEED, lookahead: int = 6,
                     on_event: Event | None = None) -> ClusterSummary:
    """``sweep.run_sweep`` over a Ray cluster (module docstring). ``tasks``: how many shards (default:
    ``TASKS_PER_SLOT`` per GPU, or per CPU for a CPU device, of the cluster, at most one per kernel).

    ``on_event`` gets ``"skip"`` and ``"result"`` as from ``run_sweep`` (``result`` with the task), and
    ``"task-start"`` (task, pid, node) and ``"task"`` (one finished: tasks, done, failed).
    """
    import ray

    out = Path(out)
    started = time.monotonic()
    emit = on_event or (lambda kind, info: None)
    summary = ClusterSummary()
    written = dataset.keys(out)
    planned = _plan(kernels, device, max_variants, max_buffer_bytes, written, summary, emit)
    busy = [k for k, _, todo in planned if todo]
    _write_sources(out, busy)
    if not busy:  # all in the dataset already: no cluster needed
        summary.seconds = time.monotonic() - started
        return summary
    started_ray = connect(address)
    try:
        shards = _shards(planned, tasks or _slots(device))
        summary.tasks = len(shards)
        settings = TaskSettings(max_variants, policy or Policy.sweep(), variant_timeout_s, build_timeout_s,
                                max_buffer_bytes, seed, max(0, lookahead))
        deadline = None if time_budget_s is None else time.time() + time_budget_s
        # a GPU task also takes a CPU: it compiles the next kernels while one is measured
        task = ray.remote(max_retries=1, retry_exceptions=True, num_cpus=1,
                          num_gpus=1 if device.type == "gpu" else 0)(sweep_shard)
        running = {task.remote(s.kernels, device, s.done, settings, deadline): s for s in shards}
        _collect(running, out, written, device, summary, emit)
    finally:
        if started_ray:
            ray.shutdown()
        summary.seconds = time.monotonic() - started
    return summary


def sweep_shard(kernels: list[SweepKernel], device: Device, done: set[str], settings: TaskSettings,
                deadline: float | None) -> Iterator[dict[str, Any]]:
    """The Ray task: a sweep of ``kernels`` on this node, yielding ``start``, each ``record`` in the
    order the sweep makes them, then ``end`` with the sweep's summary."""
    yield {"type": "start", "pid": os.getpid(), "node": socket.gethostname()}
    budget = None if deadline is None else deadline - time.time()
    if budget is not None and budget < 1.0:
        yield {"type": "end", "summary": asdict(Summary(stopped_by_budget=True))}
        return
    # run_sweep calls back with each record; a thread lets the generator hand them on as they come
    q: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        args = {f.name: getattr(settings, f.name) for f in fields(settings)}
        try:
            s = run_sweep(kernels, device, None, done=done, sink=lambda r: q.put(("record", r)),
                          time_budget_s=budget, **args)
            q.put(("end", asdict(s)))
        except BaseException as e:  # handed to the generator, which raises it in the task
            q.put(("error", e))

    threading.Thread(target=work, daemon=True).start()
    while True:
        kind, item = q.get()
        if kind == "error":
            raise item
        yield {"type": kind, "record" if kind == "record" else "summary": item}
        if kind == "end":
            return


Planned = list[tuple[SweepKernel, list[tuple[Variant, str]], list[tuple[Variant, str]]]]


def _plan(kernels: Sequence[SweepKernel], device: Device, max_variants: int, max_buffer_bytes: int,
          written: set[str], summary: Summary, emit: Event) -> Planned:
    """Each kernel with all its keyed variants and those not yet in the dataset."""
    out = []
    for k in kernels:
        try:
            keyed = keyed_variants(k, device, variants(k, device, max_variants, max_buffer_bytes))
        except ScenarioError as e:
            summary.kernels_skipped.append(f"{k.ident}: {e}")
            emit("skip", {"kernel": k.ident, "why": str(e)})
            continue
        todo = [(v, key) for v, key in keyed if key not in written]
        summary.kernels += 1
        summary.resumed += len(keyed) - len(todo)
        out.append((k, keyed, todo))
    return out


def _write_sources(out: Path, kernels: list[SweepKernel]) -> None:
    path = sources_path(out)
    known = {r.get("source_hash") for r in dataset.read(path)}
    with dataset.Writer(path) as w:
        for k in kernels:
            if (shash := source_hash(k.source)) not in known:
                w.write({"source_hash": shash, "file": k.file, "source": k.source})
                known.add(shash)


def _slots(device: Device) -> int:
    import ray

    resources = ray.cluster_resources()
    return TASKS_PER_SLOT * max(1, int(resources.get("GPU" if device.type == "gpu" else "CPU", 1)))


def _shards(planned: Planned, n: int) -> list[_Shard]:
    """Kernels with work left, dealt round-robin into at most ``n`` shards (equal counts; the file order
    is already a shuffle, see ``sweep.find_files``)."""
    busy = [(k, keyed, todo) for k, keyed, todo in planned if todo]
    if not busy:
        return []
    n = max(1, min(n, len(busy)))
    shards = []
    for i in range(n):
        part = busy[i::n]
        todo = {key: (k, v) for k, _, vs in part for v, key in vs}
        done = {key for _, keyed, _ in part for _, key in keyed if key not in todo}
        shards.append(_Shard(i, [k for k, _, _ in part], todo, done))
    return shards


class _Collector:
    """The driver's side: takes each task's outputs as they come and alone writes the dataset."""

    def __init__(self, out: Path, written: set[str], device: Device, summary: ClusterSummary,
                 emit: Event) -> None:
        self.writer = dataset.Writer(out)
        self.written = written
        self.device = device
        self.summary = summary
        self.emit = emit
        self.flushed = time.monotonic()

    def take(self, shard: _Shard, item: dict[str, Any]) -> None:
        s = self.summary
        if item["type"] == "start":
            if item["node"] not in s.nodes:
                s.nodes.append(item["node"])
            self.emit("task-start", {"task": shard.index, "pid": item["pid"], "node": item["node"]})
        elif item["type"] == "record":
            self.write(shard, item["record"])
        elif item["type"] == "end":
            part = item["summary"]
            s.restarts += part["restarts"]
            s.stopped_by_budget |= part["stopped_by_budget"]
            for phase, secs in part["phases"].items():
                s.phases[phase] = s.phases.get(phase, 0.0) + secs

    def write(self, shard: _Shard, rec: dict[str, Any]) -> None:
        s = self.summary
        if rec["key"] in self.written:
            s.duplicates += 1
            return
        self.writer.write(rec)
        self.written.add(rec["key"])
        s.measured += 1
        if rec["status"] == "ok":
            s.ok += 1
        else:
            s.failed[rec["status"]] = s.failed.get(rec["status"], 0) + 1
        k = shard.todo[rec["key"]][0] if rec["key"] in shard.todo else None
        self.emit("result", {"kernel": k.ident if k else rec["kernel"], "status": rec["status"],
                             "error": rec.get("error"), "median_ms": rec.get("median_ms"),
                             "task": shard.index})
        if time.monotonic() - self.flushed > FLUSH_EVERY_S:
            self.writer.flush()
            self.flushed = time.monotonic()

    def finish(self, shard: _Shard, error: BaseException | None) -> None:
        s = self.summary
        s.tasks_done += 1
        if error is not None:
            s.tasks_failed += 1
            why = f"not run: its Ray task failed twice ({task_failure(error)})"
            for key, (k, v) in shard.todo.items():
                if key not in self.written:
                    self.write(shard, variant_record(k, v, key, self.device, "crash", why))
        self.writer.flush()
        self.emit("task", {"tasks": s.tasks, "done": s.tasks_done, "failed": s.tasks_failed})


def task_failure(e: BaseException) -> str:
    """The cause of a Ray task's failure in one line: the worker's exception where Ray wraps one, else the
    last line of the traceback it reports."""
    cause = getattr(e, "cause", None)
    if isinstance(cause, BaseException) and str(cause).strip():
        return f"{type(cause).__name__}: {str(cause).strip().splitlines()[0]}"[:300]
    text = [line for line in str(e).strip().splitlines() if line.strip()]
    return (text[-1] if text else type(e).__name__)[:300]


def _collect(running: dict[Any, _Shard], out: Path, written: set[str], device: Device,
             summary: ClusterSummary, emit: Event) -> None:
    """Wait on every task's generator until all have ended; each output goes to the collector."""
    import ray

    collector = _Collector(out, written, device, summary, emit)
    try:
        while running:
            ready: list[Any] = ray.wait(list(running), num_returns=1, timeout=1.0)[0]
            for gen in ready:
                shard = running[gen]
                try:
                    item: dict[str, Any] = ray.get(next(gen))
                except StopIteration:
                    del running[gen]
                    collector.finish(shard, None)
                    continue
                except ray.exceptions.RayError as e:
                    del running[gen]
                    collector.finish(shard, e)
                    continue
                collector.take(shard, item)
    finally:
        collector.writer.close()
