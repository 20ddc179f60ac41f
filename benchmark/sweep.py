"""Sweeps: measure many launches of many kernels and append every result to a dataset.

A kernel takes part when its comment block has a ``// clperf:`` directive and a ``// clperf-sweep:``
spec (grammar in ``clperf.benchmark.corpus.sweepspec``)::

    // clperf: --global n --local 256 --arg n=1048576 --arg a=n --arg b=n
    // clperf-sweep: n=1024..4194304 local=16..1024

Variants: every ``NAME=LO..HI`` gives ``NAME`` (an ``--arg`` of the directive) each power of two in the
range and the directive's other expressions follow; ``local=LO..HI`` gives dimension 0 of the work-group
each power of two in the range that divides the global size and keeps the group within the device's
limit (other dimensions keep the directive's local size); without it the directive's local size stays.
Variants with a ``__global`` buffer larger than ``max_buffer_bytes`` (16 MiB) are dropped; the cross
product is then subsampled to ``max_variants`` with a random generator seeded by the kernel's identity
(the same variants every time) and ordered largest first, so buffers are generated and uploaded once.

One persistent worker process builds each file once and runs all variants of its kernels, re-using
buffers. While it measures one kernel it compiles the next ``lookahead`` ones on background threads
(``prebuild``): in the first H200 sweeps about a second passed between two generated kernels, against
0.2 s spent measuring one. A crash or a timeout is recorded for the variant that caused it; the worker is
restarted and the kernel's remaining variants go on. Resuming: variants whose key is already in the
output are skipped.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clperf.benchmark import dataset
from clperf.benchmark.corpus.sweepspec import SweepSpec, sweep_above
from clperf.benchmark.isolation import Worker, WorkerGone
from clperf.benchmark.runner import (
    DEFAULT_SEED,
    Signature,
    check_inputs,
    data_root,
    make_measurement,
    source_hash,
)
from clperf.benchmark.timing import Policy
from clperf.core.argtypes import ArgInfo, kernel_args
from clperf.core.errors import ClperfError, CompileError, ScenarioError
from clperf.core.frontend import parse
from clperf.core.records import Device, Param, Scenario
from clperf.core.scenario import ScenarioSpec, parse_flags, resolve

MAX_BUFFER_BYTES = 16 << 20


@dataclass(frozen=True)
class SweepKernel:
    """A kernel with a directive and a sweep spec, as found in a file."""

    file: str
    name: str
    source: str
    options: str
    params: tuple[Param, ...]
    dims_used: int
    directive: str
    spec: SweepSpec
    types: tuple[ArgInfo, ...] | None = None  # the compiler's view of ``params``, when it had one

    @property
    def ident(self) -> str:
        return f"{self.file}::{self.name}"

    @property
    def signature(self) -> Signature:
        return Signature(self.params, self.dims_used, self.types, "clang could not compile the file")


@dataclass(frozen=True)
class Variant:
    index: int  # position in the kernel's full, deterministic variant list
    scenario: Scenario
    values: dict[str, int]  # the swept values, "local" included when swept


@dataclass
class Summary:
    kernels: int = 0
    kernels_skipped: list[str] = field(default_factory=list)  # "file::kernel: why"
    measured: int = 0
    ok: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    resumed: int = 0  # variants already in the output
    restarts: int = 0
    stopped_by_budget: bool = False
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # worker seconds: build (waited), setup, run

    @property
    def rate(self) -> float:
        return self.measured / self.seconds if self.seconds > 0 else 0.0


def find_files(paths: Iterable[str | Path]) -> list[Path]:
    """``.cl`` files named or under the folders named, without duplicates.

    A folder's files come in a deterministic shuffle (by a hash of the name), not by name: a sweep cut
    short by its time budget then still covers every kind of kernel, not the first few in the alphabet.
    """
    out: dict[Path, None] = {}
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*.cl"), key=lambda f: hashlib.sha256(f.name.encode()).digest()):
                out[f] = None
        elif p.exists():
            out[p] = None
        else:
            raise ClperfError(f"no such file or folder: {p}")
    return list(out)


def kernels_in_file(path: Path, options: str = "") -> tuple[list[SweepKernel], list[str]]:
    """Sweepable kernels of a file and ``file::kernel: why`` for those that are not. Parameter types
    come from the compiler (one clang call per file), as for ``bench``."""
    source = path.read_text(encoding="utf-8", errors="replace")
    lines = source.split("\n")
    found, skipped = [], []
    try:
        typed = kernel_args(source, path, options)
    except CompileError:
        typed = {}  # the front end's parameters; a kernel clang rejects fails to build, and says why
    for k in parse(source):
        try:
            spec = sweep_above(lines, k.header_line)
        except ScenarioError as e:
            skipped.append(f"{path}::{k.name}: {e}")
            continue
        if k.directive is None or spec is None:
            skipped.append(f"{path}::{k.name}: no // clperf: directive and // clperf-sweep: spec")
            continue
        types = typed.get(k.name)
        params = tuple(a.param() for a in types) if types is not None else k.params
        found.append(SweepKernel(str(path), k.name, source, options, params, k.dims_used, k.directive,
                                 spec, types))
    return found, skipped


def shard_of(k: SweepKernel, shards: int) -> int:
    """Deterministic shard (0-based) of a kernel: a hash of its file and name."""
    digest = hashlib.sha256(k.ident.encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> (1, 4): shard 2 of 4, 1-based on the command line, 0-based inside."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError as e:
        raise ClperfError(f"--shard takes K/N, e.g. 1/4, got {text!r}") from e
    if not 1 <= k <= n:
        raise ClperfError(f"--shard {text}: K must be between 1 and N")
    return k - 1, n


def _buffer_bytes(sc: Scenario, k: SweepKernel) -> list[int]:
    sizes = k.signature.element_bytes
    return [int(sc.args[p.name]) * sizes.get(p.name, 4) for p in k.params
            if p.pointer and p.address_space != "local" and p.name in sc.args]


def variants(k: SweepKernel, device: Device, max_variants: int = 40,
             max_buffer_bytes: int = MAX_BUFFER_BYTES) -> list[Variant]:
    """The kernel's variants on ``device`` (see the module docstring). ScenarioError when the spec or the
    directive cannot work at all."""
    base = parse_flags(k.directive)
    ranges = k.spec.args
    for r in ranges:
        if r.name not in base.args:
            raise ScenarioError(f"sweep range {r.name!r} is not an --arg of the directive")
    combos = list(itertools.product(*(r.values() for r in ranges)))
    rng = random.Random(hashlib.sha256(k.ident.encode()).hexdigest())
    if len(combos) > 8 * max_variants:  # keep resolving cheap for wide specs
        combos = rng.sample(combos, 8 * max_variants)
    points: list[tuple[Scenario, dict[str, int]]] = []
    first_error: ScenarioError | None = None
    for combo in combos:
        values = {r.name: v for r, v in zip(ranges, combo, strict=True)}
        spec = ScenarioSpec(base.global_size, base.local_size,
                            {**base.args, **{n: str(v) for n, v in values.items()}}, base.fills)
        try:
            sc = resolve(spec, k.params, k.dims_used, data_root=data_root(k.file))
            check_inputs(k.signature, sc, data_root(k.file))
        except ScenarioError as e:
            first_error = first_error or e
            continue
        if any(b > max_buffer_bytes for b in _buffer_bytes(sc, k)):
            continue
        for local in _locals(sc, k.spec, device):
            vals = dict(values)
            if local is not None and k.spec.local is not None:
                vals["local"] = local[0]
            points.append((replace(sc, local_size=local), vals))
    if not points:
        why = f" (e.g. {first_error})" if first_error else f" (buffers over {max_buffer_bytes >> 20} MiB?)"
        raise ScenarioError("no variant of the sweep spec is valid on this device" + why)
    picked = sorted(rng.sample(range(len(points)), max_variants)) if len(points) > max_variants \
        else list(range(len(points)))
    out = [Variant(i, points[i][0], points[i][1]) for i in picked]
    out.sort(key=lambda v: (-sum(_buffer_bytes(v.scenario, k)), v.scenario.local_size or ()))
    return out


def _locals(sc: Scenario, spec: SweepSpec, device: Device) -> list[tuple[int, ...] | None]:
    r = spec.local
    if r is None:
        return [sc.local_size]
    rest = sc.local_size[1:] if sc.local_size is not None else tuple(1 for _ in sc.global_size[1:])
    rest_items = math.prod(rest)
    out: list[tuple[int, ...] | None] = []
    for v in r.values():
        if sc.global_size[0] % v or v * rest_items > device.max_work_group_size:
            continue
        if any(g % lo for g, lo in zip(sc.global_size[1:], rest, strict=True)):
            continue
        out.append((v, *rest))
    return out or [sc.local_size]


Event = Callable[[str, dict[str, Any]], None]


class _Flusher:
    """Writes records to the dataset and makes them durable every few seconds."""

    def __init__(self, path: Path, every_s: float = 2.0) -> None:
        self.writer = dataset.Writer(path)
        self.every_s = every_s
        self.last = time.monotonic()

    def write(self, rec: dict[str, Any]) -> None:
        self.writer.write(rec)
        if time.monotonic() - self.last > self.every_s:
            self.writer.flush()
            self.last = time.monotonic()

    def close(self) -> None:
        self.writer.flush()


class _Sink:
    """Hands records to a callable instead of a file (a sweep run as a Ray task, see ``cluster``)."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write

    def close(self) -> None:
        pass


def sources_path(out: Path) -> Path:
    """The side file holding each swept source once: ``x.jsonl.gz`` -> ``x.sources.jsonl.gz``."""
    name = out.name
    for suffix in (".jsonl.gz", ".jsonl", ".gz"):
        if name.endswith(suffix):
            return out.with_name(name[: -len(suffix)] + ".sources" + suffix)
    return out.with_name(name + ".sources.jsonl")


def run_sweep(
    kernels: Sequence[SweepKernel],
    device: Device,
    out: str | Path | None,
    *,
    max_variants: int = 40,
    policy: Policy | None = None,
    time_budget_s: float | None = None,
    variant_timeout_s: float = 20.0,
    build_timeout_s: float = 120.0,
    max_buffer_bytes: int = MAX_BUFFER_BYTES,
    seed: int = DEFAULT_SEED,
    lookahead: int = 6,
    on_event: Event | None = None,
    done: set[str] | None = None,
    sink: Callable[[dict[str, Any]], None] | None = None,
) -> Summary:
    """Measure every variant of every kernel not already in ``out``; append one record per variant.

    ``on_event(kind, info)`` is called with ``"kernel"`` (starting one), ``"result"`` (one variant
    measured) and ``"skip"``. ``lookahead`` kernels after the current one are compiled in the background
    (0: none). With ``time_budget_s`` no variant starts after the budget and the call
    returns, with everything flushed, within about a second of it.

    With ``sink`` each record goes to ``sink(record)`` instead of ``out``, no sources file is written
    and ``done`` (keys already measured) stands for what ``out`` holds: the caller keeps the dataset.
    """
    policy = policy or Policy.sweep()
    started = time.monotonic()
    deadline = started + time_budget_s if time_budget_s is not None else None
    emit = on_event or (lambda kind, info: None)
    flusher: _Flusher | _Sink
    src_writer: dataset.Writer | None = None
    known_sources: set[Any] = set()
    if sink is not None:
        flusher = _Sink(sink)
    elif out is not None:
        out = Path(out)
        done = dataset.keys(out) if done is None else done
        known_sources = {r.get("source_hash") for r in dataset.read(sources_path(out))}
        flusher, src_writer = _Flusher(out), dataset.Writer(sources_path(out))
    else:
        raise ValueError("run_sweep needs out or sink")
    done = done if done is not None else set()
    summary = Summary()
    worker: Worker | None = None
    prebuilt: set[tuple[str, str]] = set()  # sent to the current worker
    queue = _prepared(kernels, device, max_variants, max_buffer_bytes, done, summary, emit)
    window: list[tuple[SweepKernel, list[tuple[Variant, str]], int]] = []
    try:
        while True:
            while len(window) <= lookahead and (nxt := next(queue, None)) is not None:
                window.append(nxt)
            if not window:
                break
            k, todo, total = window.pop(0)
            if deadline is not None and time.monotonic() > deadline - 1.0:
                summary.stopped_by_budget = True
                break
            summary.kernels += 1
            summary.resumed += total - len(todo)
            emit("kernel", {"kernel": k.ident, "variants": len(todo), "total": total})
            if not todo:
                continue
            shash = source_hash(k.source)
            if src_writer is not None and shash not in known_sources:
                src_writer.write({"source_hash": shash, "file": k.file, "source": k.source})
                src_writer.flush()
                known_sources.add(shash)
            if worker is None or not worker.alive:
                worker, prebuilt = _restart(worker, device, summary), set()
            for nk, ntodo, _ in window:
                if ntodo and (nk.source, nk.options) not in prebuilt:
                    worker.send({"op": "prebuild", "source": nk.source, "options": nk.options})
                    prebuilt.add((nk.source, nk.options))
            worker, stopped = _run_kernel(k, todo, device, worker, policy, deadline, variant_timeout_s,
                                          build_timeout_s, seed, flusher, summary, emit)
            if stopped:
                summary.stopped_by_budget = True
                break
    finally:
        flusher.close()
        if src_writer is not None:
            src_writer.close()
        if worker is not None:
            worker.close()
        summary.seconds = time.monotonic() - started
    return summary


def _prepared(kernels: Sequence[SweepKernel], device: Device, max_variants: int, max_buffer_bytes: int,
              done: set[str], summary: Summary, emit: Event
              ) -> Iterator[tuple[SweepKernel, list[tuple[Variant, str]], int]]:
    """Each sweepable kernel with its variants not yet in the output (and how many it has in all)."""
    for k in kernels:
        try:
            todo_all = variants(k, device, max_variants, max_buffer_bytes)
        except ScenarioError as e:
            summary.kernels_skipped.append(f"{k.ident}: {e}")
            emit("skip", {"kernel": k.ident, "why": str(e)})
            continue
        keyed = keyed_variants(k, device, todo_all)
        yield k, [(v, key) for v, key in keyed if key not in done], len(keyed)


def keyed_variants(k: SweepKernel, device: Device, vs: Sequence[Variant]) -> list[tuple[Variant, str]]:
    """Each variant with its dataset key (``dataset.record_key``)."""
    shash = source_hash(k.source)
    return [(v, dataset.record_key(shash, k.name, k.options, v.scenario, device.key)) for v in vs]


def _restart(worker: Worker | None, device: Device, summary: Summary) -> Worker:
    if worker is not None:
        worker.close()
        summary.restarts += 1
    fresh = Worker(device)
    fresh.start()
    return fresh


def _run_kernel(k: SweepKernel, todo: list[tuple[Variant, str]], device: Device, worker: Worker | None,
                policy: Policy, deadline: float | None, variant_timeout_s: float, build_timeout_s: float,
                seed: int, flusher: _Flusher | _Sink, summary: Summary, emit: Event
                ) -> tuple[Worker | None, bool]:
    """Measure ``todo`` for one kernel, restarting the worker after a fault. Returns (worker, stopped)."""
    pending = list(todo)
    deaths_before_build = 0
    while pending:
        if worker is None or not worker.alive:
            worker = _restart(worker, device, summary)
        worker.send({
            "op": "measure", "source": k.source, "kernel": k.name, "options": k.options,
            "params": [p.__dict__ for p in k.params], "types": k.signature.to_json(),
            "data_root": str(root) if (root := data_root(k.file)) else None,
            "scenarios": [v.scenario.to_json() for v, _ in pending],
            "policy": policy.to_json(), "seed": seed, "check": False, "reference": None, "progress": False,
            "deadline": None if deadline is None else time.time() + (deadline - 1.0 - time.monotonic()),
        })
        got = 0
        first = True
        built = False
        try:
            while True:
                wait = variant_timeout_s + (build_timeout_s if first else 0.0)
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise _OutOfTime
                    wait = min(wait, left)
                try:
                    reply = worker.receive(wait)
                except WorkerGone as e:
                    if e.timed_out and deadline is not None and time.monotonic() >= deadline - 0.05:
                        raise _OutOfTime from e
                    raise
                first = False
                if reply["type"] == "built":
                    built = True
                    continue
                if reply["type"] == "done":
                    for phase, secs in (reply.get("seconds") or {}).items():
                        summary.phases[phase] = summary.phases.get(phase, 0.0) + float(secs)
                    return worker, bool(reply.get("stopped"))
                if reply["type"] != "result":
                    continue
                v, key = pending[reply["index"]]
                _record(k, v, key, device, reply["status"], reply.get("error"), reply.get("times_ms", ()),
                        flusher, summary, emit, reply.get("data_hashes"))
                got += 1
                if reply.get("fatal"):
                    worker.close()
                    pending = pending[reply["index"] + 1:]
                    break
        except _OutOfTime:
            worker.close()
            return None, True
        except WorkerGone as e:
            worker.close()
            crashed = got  # variants run in order: the one after the last result was running
            if crashed < len(pending):
                v, key = pending[crashed]
                status = e.status
                msg = f"still running after {variant_timeout_s:g} s; stopped" if e.timed_out else str(e)
                _record(k, v, key, device, status, msg, (), flusher, summary, emit)
            pending = pending[crashed + 1:]
            deaths_before_build = 0 if built else deaths_before_build + 1
            if deaths_before_build >= 2:  # building kills the worker: mark the rest, move on
                for v, key in pending:
                    _record(k, v, key, device, "crash", f"not run: the worker died twice in a row ({e})", (),
                            flusher, summary, emit)
                pending = []
    return worker, False


class _OutOfTime(Exception):
    pass


def _record(k: SweepKernel, v: Variant, key: str, device: Device, status: str, error: str | None,
            times: Sequence[float], flusher: _Flusher | _Sink, summary: Summary, emit: Event,
            data_hashes: dict[str, str] | None = None) -> None:
    rec = variant_record(k, v, key, device, status, error, times, data_hashes)
    flusher.write(rec)
    summary.measured += 1
    if status == "ok":
        summary.ok += 1
    else:
        summary.failed[status] = summary.failed.get(status, 0) + 1
    emit("result", {"kernel": k.ident, "status": status, "error": error, "median_ms": rec["median_ms"]})


def variant_record(k: SweepKernel, v: Variant, key: str, device: Device, status: str, error: str | None,
                   times: Sequence[float] = (), data_hashes: dict[str, str] | None = None) -> dict[str, Any]:
    """The dataset record of one measured (or failed) variant."""
    m = make_measurement(kernel=k.name, file=k.file, source=k.source, options=k.options,
                         scenario=v.scenario, device=device, status=status, error=error, times_ms=times,
                         data_hashes=data_hashes)
    rec = dataset.to_record(m, sweep={"variant": v.index, "values": v.values, "spec": k.spec.to_text()})
    rec["key"] = key
    return rec
