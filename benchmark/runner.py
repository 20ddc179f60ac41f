"""``benchmark()``: run one kernel with one scenario on one device, isolated, and return a Measurement.

The kernel runs in a fresh worker process with a timeout (see ``isolation``), so nothing a kernel does
(build errors, segfaults, out-of-bounds writes, infinite loops, running out of memory) raises here: each
ends as a Measurement whose ``status`` says what happened and whose ``error`` says it in words.

Checking: ``check=True`` runs the kernel twice from the same inputs and compares every ``__global``
buffer (determinism); ``reference=(source, kernel)`` runs a second kernel, with the same signature, from the
same inputs and compares its buffers instead. Integers must match exactly, floats within ``rtol``
(default 1e-5) relative. The Measurement then has ``checked=True``; a mismatch keeps status ``"ok"`` (the
timing is still valid) and puts the difference in ``error``, so ``m.status == "ok" and m.error is None``
means "ran and matched".

Parameter types come from the compiler (``clperf.core.argtypes``: typedefs, vectors, structs), read with
one cached clang call; the parameters as the tolerant front end reads them are the fallback when clang
cannot compile the file. ``file:`` fills are found from the kernel file's folder; a measurement made from
data files records each file's sha256 (``Measurement.data_hashes``).
"""

from __future__ import annotations

import hashlib
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clperf import __version__
from clperf.benchmark.inputs import DataFiles, element_type, plan_buffers
from clperf.benchmark.isolation import Worker, WorkerGone
from clperf.benchmark.timing import Policy, summarize
from clperf.core.argtypes import ArgInfo, kernel_args
from clperf.core.buildopts import check_options
from clperf.core.errors import ClperfError, CompileError, ScenarioError
from clperf.core.frontend import parse
from clperf.core.records import Device, Measurement, Param, Scenario
from clperf.core.scenario import ScenarioSpec, check_sizes, resolve

DEFAULT_SEED = 1234


def source_hash(source: str) -> str:
    """Identity of a kernel's source text in datasets and stores (sha256, 16 hex digits)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def options_text(build_options: Sequence[str] | str) -> str:
    if isinstance(build_options, str):
        return build_options.strip()
    return " ".join(shlex.quote(o) for o in build_options)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def make_measurement(*, kernel: str, file: str, source: str, options: str, scenario: Scenario, device: Device,
                     status: str, error: str | None, times_ms: Sequence[float] = (),
                     checked: bool = False, data_hashes: Mapping[str, str] | None = None) -> Measurement:
    """A Measurement with statistics computed from the raw repetitions (none when there are none)."""
    times = tuple(float(t) for t in times_ms)
    stats = summarize(times) if times else None
    return Measurement(
        kernel=kernel, file=file, source_hash=source_hash(source), build_options=options,
        scenario=scenario, device=device, status=status, error=error,  # type: ignore[arg-type]
        times_ms=times,
        median_ms=stats.median_ms if stats else None,
        min_ms=stats.min_ms if stats else None,
        cv=stats.cv if stats else None,
        outliers_removed=stats.outliers_removed if stats else 0,
        checked=checked, timestamp=now_iso(), clperf_version=__version__,
        data_hashes=dict(data_hashes or {}),
    )


def kernel_params(source: str, kernel: str) -> tuple[tuple[Param, ...], int]:
    """Parameters and dimensions used of ``kernel`` from the tolerant front end; ClperfError if absent."""
    found = [k for k in parse(source) if k.name == kernel]
    if not found:
        names = ", ".join(k.name for k in parse(source)) or "none"
        raise ClperfError(f"no kernel named {kernel!r} in the source (kernels: {names})")
    return found[0].params, found[0].dims_used


@dataclass(frozen=True)
class Signature:
    """A kernel's parameters for a launch: from the compiler when it could read them (``types``)."""

    params: tuple[Param, ...]
    dims_used: int
    types: tuple[ArgInfo, ...] | None = None
    why_untyped: str = ""  # clang's complaint when ``types`` is None

    @property
    def element_bytes(self) -> dict[str, int]:
        """Bytes per element of each pointer parameter whose type is known."""
        if self.types is not None:
            return {a.name: a.type.size for a in self.types if a.pointer}
        return {p.name: p.element_size for p in self.params if p.pointer and p.element_size}

    def to_json(self) -> list[dict[str, Any]] | None:
        return [a.to_json() for a in self.types] if self.types is not None else None


def kernel_signature(source: str, kernel: str, file: str = "", options: str = "") -> Signature:
    """``kernel``'s parameters with the compiler's types (one cached clang call per source and options).
    ClperfError when the front end finds no such kernel."""
    params, dims_used = kernel_params(source, kernel)
    try:
        found = kernel_args(source, Path(file) if file else None, options).get(kernel)
    except CompileError as e:
        return Signature(params, dims_used, None, str(e))
    if found is None:
        return Signature(params, dims_used, None, f"clang found no kernel named {kernel!r}")
    return Signature(tuple(a.param() for a in found), dims_used, found)


def data_root(file: str) -> Path | None:
    """Where a kernel's ``file:`` fills are found: its file's folder."""
    return Path(file).resolve().parent if file else None


def precheck(scenario: Scenario, params: Sequence[Param], device: Device,
             element_bytes: Mapping[str, int] | None = None) -> tuple[str, str] | None:
    """Limits that can be checked without running anything: (status, message) or None.
    ``element_bytes``: bytes per element of each buffer (default: from the parameters' type names)."""
    try:
        check_sizes(scenario.global_size, scenario.local_size)  # sweeps build scenarios past ``resolve``
    except ScenarioError as e:
        return ("invalid-scenario", str(e))
    if scenario.local_size is not None:
        group = 1
        for lo in scenario.local_size:
            group *= lo
        if group > device.max_work_group_size:
            return ("invalid-scenario", f"work-group of {group} work-items exceeds the device limit of "
                    f"{device.max_work_group_size} on {device.name}")
    sizes = element_bytes if element_bytes is not None else \
        {p.name: p.element_size for p in params if p.element_size}
    total = 0
    for p in params:
        if p.pointer and p.address_space != "local" and sizes.get(p.name):
            total += int(scenario.args.get(p.name, 0)) * sizes[p.name]
    if device.global_mem_bytes and total > device.global_mem_bytes:
        return ("out-of-memory", f"buffers need {total / 2**20:.1f} MiB; {device.name} has "
                f"{device.global_mem_bytes / 2**20:.1f} MiB")
    return None


def check_inputs(sig: Signature, scenario: Scenario, root: Path | None) -> None:
    """ScenarioError unless every buffer's data can be made: a known element type (clang's complaint
    when it could not read one), field fills of real fields, data files that fit their buffers."""
    if sig.types is None:
        for p in sig.params:
            try:
                element_type(p.type)
            except ScenarioError as e:
                raise ScenarioError(f"cannot generate inputs of type {p.type!r} for {p.name!r}: "
                                    f"{sig.why_untyped}") from e
    for a in sig.types or ():
        if a.type.kind == "opaque":
            raise ScenarioError(f"parameter {a.name!r} ({a.type.name}): clperf makes no images, samplers, "
                                "events or pipes, nor buffers of pointers or void")
    plans = plan_buffers(sig.params, scenario.args, scenario.fills, 64, sig.types)
    DataFiles(root).check(plans)


def _same_signature(a: Sequence[Param], b: Sequence[Param]) -> bool:
    def shape(ps: Sequence[Param]) -> list[tuple[str, bool, str]]:
        return [(p.type, p.pointer, p.address_space) for p in ps]

    return shape(a) == shape(b)


def benchmark(
    source: str,
    kernel: str,
    scenario: ScenarioSpec | Scenario,
    device: Device,
    *,
    file: str = "",
    build_options: Sequence[str] | str = (),
    policy: Policy | None = None,
    check: bool = False,
    reference: tuple[str, str] | None = None,
    timeout_s: float = 60,
    on_progress: Callable[[float, str], None] | None = None,
    cancel: threading.Event | None = None,
    seed: int = DEFAULT_SEED,
    rtol: float = 1e-5,
    worker_env: dict[str, str] | None = None,
    outputs: str | Path | None = None,
) -> Measurement:
    """Measure ``kernel`` of ``source`` on ``device``. Never raises for anything the kernel does.

    ``timeout_s`` bounds everything after the scenario is resolved (start, build, check, timing); a
    kernel still running then is killed and the result has status ``"timeout"`` (also when ``cancel`` is
    set, with error "cancelled"). ``outputs``: a path where every ``__global`` buffer after one run from
    the scenario's inputs is saved (``numpy.savez``), to check a kernel's results.
    """
    policy = policy or Policy.interactive()
    options = options_text(build_options)
    given = scenario if isinstance(scenario, Scenario) else Scenario((1,), None, {})

    def result(status: str, error: str | None, sc: Scenario) -> Measurement:
        return make_measurement(kernel=kernel, file=file, source=source, options=options, scenario=sc,
                                device=device, status=status, error=error)

    try:
        check_options(options, "this run", None)  # the runtime gets no option clang would refuse
        sig = kernel_signature(source, kernel, file, options)
    except ClperfError as e:
        return result("build-error", str(e), given)
    root = data_root(file)
    try:
        resolved = scenario if isinstance(scenario, Scenario) else \
            resolve(scenario, sig.params, sig.dims_used, data_root=root)
        for p in sig.params:
            if p.name not in resolved.args:
                raise ScenarioError(f"the scenario has no value for parameter {p.name!r}")
        check_inputs(sig, resolved, root)
    except ScenarioError as e:
        return result("invalid-scenario", str(e), given)
    if (problem := precheck(resolved, sig.params, device, sig.element_bytes)) is not None:
        return result(problem[0], problem[1], resolved)
    if reference is not None:
        try:
            ref = kernel_signature(reference[0], reference[1], file, options)
        except ClperfError as e:
            return result("build-error", f"reference: {e}", resolved)
        if not _same_signature(ref.params, sig.params):
            return result("invalid-scenario", f"reference kernel {reference[1]!r} has a different signature",
                          resolved)
    request = {
        "op": "measure", "source": source, "kernel": kernel, "options": options,
        "params": [p.__dict__ for p in sig.params], "types": sig.to_json(), "scenarios": [resolved.to_json()],
        "policy": policy.to_json(), "seed": seed, "check": check,
        "reference": list(reference) if reference else None, "progress": on_progress is not None,
        "deadline": None, "rtol": rtol, "data_root": str(root) if root else None,
        "outputs": str(outputs) if outputs is not None else None,
    }
    run = _Run(device, timeout_s, on_progress, cancel, worker_env)
    reply = run.measure(request)
    return make_measurement(kernel=kernel, file=file, source=source, options=options, scenario=resolved,
                            device=device, status=reply.get("status", "crash"), error=reply.get("error"),
                            times_ms=reply.get("times_ms", ()), checked=bool(reply.get("checked")),
                            data_hashes=reply.get("data_hashes"))


class _Run:
    """One request to a fresh worker, within a deadline: its result (or the error that ended it)."""

    def __init__(self, device: Device, timeout_s: float, on_progress: Callable[[float, str], None] | None,
                 cancel: threading.Event | None, env: dict[str, str] | None) -> None:
        self.device, self.timeout_s, self.on_progress, self.cancel = device, timeout_s, on_progress, cancel
        self.env = env

    def progress(self, fraction: float, message: str) -> None:
        if self.on_progress:
            self.on_progress(fraction, message)

    def measure(self, request: dict[str, Any]) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        worker = Worker(self.device, start_timeout_s=self.timeout_s, env=self.env)
        try:
            self.progress(0.0, "starting")
            worker.start()
            self.progress(0.05, "building")
            worker.send(request)
            while True:
                reply = worker.receive(max(0.0, deadline - time.monotonic()), self.cancel)
                if reply["type"] == "progress":
                    self.progress(0.1 + 0.9 * float(reply["fraction"]), reply.get("message", ""))
                elif reply["type"] == "result":
                    self.progress(1.0, "done")
                    return reply
                elif reply["type"] == "error":
                    return {"status": reply.get("status", "crash"), "error": reply.get("error")}
        except WorkerGone as e:
            if e.cancelled:
                return {"status": "timeout", "error": "cancelled"}
            if e.timed_out:
                return {"status": "timeout",
                        "error": f"still running after {self.timeout_s:g} s; the kernel was stopped"}
            return {"status": e.status, "error": str(e)}
        except ClperfError as e:  # the worker could not open the device
            return {"status": "crash", "error": str(e)}
        finally:
            worker.close()
