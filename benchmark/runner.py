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
"""

from __future__ import annotations

import hashlib
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from clperf.benchmark.isolation import Worker, WorkerGone
from clperf.benchmark.timing import Policy, summarize

from clperf import __version__
from clperf.core.buildopts import check_options
from clperf.core.errors import ClperfError, ScenarioError
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
                     checked: bool = False) -> Measurement:
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
    )


def kernel_params(source: str, kernel: str) -> tuple[tuple[Param, ...], int]:
    """Parameters and dimensions used of ``kernel`` from the tolerant front end; ClperfError if absent."""
    from clperf.core.frontend import parse

    found = [k for k in parse(source) if k.name == kernel]
    if not found:
        names = ", ".join(k.name for k in parse(source)) or "none"
        raise ClperfError(f"no kernel named {kernel!r} in the source (kernels: {names})")
    return found[0].params, found[0].dims_used


def precheck(scenario: Scenario, params: Sequence[Param], device: Device) -> tuple[str, str] | None:
    """Limits that can be checked without running anything: (status, message) or None."""
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
    total = 0
    for p in params:
        if p.pointer and p.address_space != "local" and p.element_size:
            total += int(scenario.args.get(p.name, 0)) * p.element_size
    if device.global_mem_bytes and total > device.global_mem_bytes:
        return ("out-of-memory", f"buffers need {total / 2**20:.1f} MiB; {device.name} has "
                f"{device.global_mem_bytes / 2**20:.1f} MiB")
    return None


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
) -> Measurement:
    """Measure ``kernel`` of ``source`` on ``device``. Never raises for anything the kernel does.

    ``timeout_s`` bounds everything after the scenario is resolved (start, build, check, timing); a
    kernel still running then is killed and the result has status ``"timeout"`` (also when ``cancel`` is
    set, with error "cancelled").
    """
    policy = policy or Policy.interactive()
    options = options_text(build_options)
    empty = Scenario((1,), None, {})

    def result(status: str, error: str | None, sc: Scenario, times: Sequence[float] = (),
               checked: bool = False) -> Measurement:
        return make_measurement(kernel=kernel, file=file, source=source, options=options, scenario=sc,
                                device=device, status=status, error=error, times_ms=times, checked=checked)

    try:
        check_options(options, "this run", None)  # the runtime gets no option clang would refuse
        params, dims_used = kernel_params(source, kernel)
    except ClperfError as e:
        return result("build-error", str(e), scenario if isinstance(scenario, Scenario) else empty)
    try:
        resolved = scenario if isinstance(scenario, Scenario) else resolve(scenario, params, dims_used)
        for p in params:
            if p.name not in resolved.args:
                raise ScenarioError(f"the scenario has no value for parameter {p.name!r}")
    except ScenarioError as e:
        return result("invalid-scenario", str(e), scenario if isinstance(scenario, Scenario) else empty)
    if (problem := precheck(resolved, params, device)) is not None:
        return result(problem[0], problem[1], resolved)
    if reference is not None:
        try:
            ref_params, _ = kernel_params(reference[0], reference[1])
        except ClperfError as e:
            return result("build-error", f"reference: {e}", resolved)
        if [(p.type, p.pointer, p.address_space) for p in ref_params] != \
                [(p.type, p.pointer, p.address_space) for p in params]:
            return result("invalid-scenario", f"reference kernel {reference[1]!r} has a different signature",
                          resolved)

    deadline = time.monotonic() + timeout_s
    worker = Worker(device, start_timeout_s=timeout_s, env=worker_env)
    try:
        if on_progress:
            on_progress(0.0, "starting")
        worker.start()
        if on_progress:
            on_progress(0.05, "building")
        worker.send({
            "op": "measure", "source": source, "kernel": kernel, "options": options,
            "params": [p.__dict__ for p in params], "scenarios": [resolved.to_json()],
            "policy": policy.to_json(), "seed": seed, "check": check,
            "reference": list(reference) if reference else None, "progress": on_progress is not None,
            "deadline": None, "rtol": rtol,
        })
        while True:
            reply = worker.receive(max(0.0, deadline - time.monotonic()), cancel)
            if reply["type"] == "progress":
                if on_progress:
                    on_progress(0.1 + 0.9 * float(reply["fraction"]), reply.get("message", ""))
            elif reply["type"] == "result":
                if on_progress:
                    on_progress(1.0, "done")
                return result(reply["status"], reply.get("error"), resolved, reply.get("times_ms", ()),
                              bool(reply.get("checked")))
            elif reply["type"] == "error":
                return result(reply.get("status", "crash"), reply.get("error"), resolved)
    except WorkerGone as e:
        if e.cancelled:
            return result("timeout", "cancelled", resolved)
        if e.timed_out:
            return result("timeout", f"still running after {timeout_s:g} s; the kernel was stopped", resolved)
        return result(e.status, str(e), resolved)
    except ClperfError as e:  # the worker could not open the device
        return result("crash", str(e), resolved)
    finally:
        worker.close()
