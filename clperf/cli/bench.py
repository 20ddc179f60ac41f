"""``clperf devices``, ``clperf bench`` and ``clperf sweep`` (registered by clperf.cli).

Thin: argument parsing, reading files, printing. The work is in ``devices``, ``runner`` and ``sweep``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from clperf.api import Workspace, discover, runnable_device
from clperf.benchmark.cluster import run_sweep_on_ray
from clperf.benchmark.progress import Progress
from clperf.benchmark.sweep import find_files, kernels_in_file, parse_shard, run_sweep, shard_of
from clperf.benchmark.timing import Policy
from clperf.cli import add_build_options, add_json_flag, add_scenario_flags, scenario_from_args
from clperf.core.buildopts import resolve_build_options
from clperf.core.errors import ClperfError, InputError
from clperf.core.frontend import parse
from clperf.core.records import Device, Measurement
from clperf.core.sourcefile import read_source

EXIT_FAILED = 1


def register(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    p = sub.add_parser("devices", help="list OpenCL devices with their measured peaks",
                       description="List OpenCL devices. Peak bandwidth (a copy kernel) and peak FLOP rate "
                                   "(an FMA kernel) are measured once per device and driver, then cached.")
    add_json_flag(p)
    p.add_argument("--no-measure", action="store_true", help="do not measure peaks that are not cached yet")
    p.add_argument("--remeasure", action="store_true", help="measure the peaks again")
    p.set_defaults(run=cmd_devices)

    p = sub.add_parser("bench", help="run a kernel for real and time it",
                       description="Run one kernel on an OpenCL device in an isolated process and time it "
                                   "with profiling events (warm-up, repetitions until stable, IQR outlier "
                                   "filter; every repetition is kept).")
    p.add_argument("file", help="the .cl file")
    p.add_argument("--kernel", "-k", help="kernel name (optional when the file has one kernel)")
    p.add_argument("--device", "-d", help="substring of the device or platform name (default: first GPU)")
    add_scenario_flags(p)
    add_build_options(p)
    add_json_flag(p)
    p.add_argument("--check", action="store_true", help="run twice from the same inputs and compare outputs")
    p.add_argument("--reference", metavar="FILE[:KERNEL]",
                   help="compare outputs with another kernel (same signature) run from the same inputs")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="seconds before the run is stopped")
    p.add_argument("--policy", default="interactive", choices=("interactive", "quick", "sweep"),
                   help="repetition policy (interactive: >= 10 repetitions, 100 ms, stable median)")
    p.add_argument("--no-store", action="store_true", help="do not record the result in the local store")
    p.set_defaults(run=cmd_bench)

    p = sub.add_parser("sweep", help="measure many launches of many kernels into a dataset",
                       description="Measure every kernel that has a // clperf: directive and a "
                                   "// clperf-sweep: spec at many sizes and work-group sizes; append one "
                                   "JSON-lines record per measurement; resume where a previous run stopped.")
    p.add_argument("paths", nargs="+", help=".cl files or folders (searched recursively)")
    p.add_argument("--device", "-d", help="substring of the device or platform name (default: first GPU)")
    p.add_argument("--out", "-o", required=True, help="dataset file (.jsonl or .jsonl.gz), appended to")
    p.add_argument("--max-variants", type=int, default=40, metavar="N", help="variants per kernel (40)")
    p.add_argument("--time-budget", type=float, metavar="S", help="stop cleanly before S seconds have passed")
    p.add_argument("--shard", metavar="K/N", help="only the K-th of N deterministic parts of the kernel list")
    p.add_argument("--policy", default="sweep", choices=("sweep", "interactive", "quick"),
                   help="repetition policy (sweep: >= 5 repetitions and 2 ms per variant, capped)")
    p.add_argument("--variant-timeout", type=float, default=20.0, metavar="S",
                   help="seconds one variant may run before it is stopped and recorded as a timeout")
    p.add_argument("--max-buffer-mb", type=float, default=16.0, metavar="MB",
                   help="drop variants with a buffer larger than this (16)")
    p.add_argument("--lookahead", type=int, default=6, metavar="N",
                   help="compile the next N kernels in the background while one is measured (6; 0: off)")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the sweep as tasks on a Ray cluster (pip install 'clperf[cluster]'): ADDRESS "
                        "of its head (host:6379), 'auto' for the one `ray start` runs here, nothing for a "
                        "new local one; write --ray=ADDRESS or put it after the paths")
    p.add_argument("--ray-tasks", type=int, metavar="N",
                   help="with --ray: shards (default 2 per GPU, or per CPU for a CPU device, of the cluster)")
    add_build_options(p)
    add_json_flag(p)
    p.set_defaults(run=cmd_sweep)


# --- devices ---------------------------------------------------------------------------------------------

def cmd_devices(ns: argparse.Namespace) -> int:

    devices = discover(measure=not ns.no_measure, remeasure=ns.remeasure)
    if ns.json:
        print(json.dumps([d.to_json() for d in devices], indent=1))
        return 0
    if not devices:
        print("no OpenCL devices found")
        return 0
    for d in devices:
        print(format_device(d))
    return 0


def format_device(d: Device) -> str:
    bw = f"{d.peak_bandwidth_gbs:.1f} GB/s" if d.peak_bandwidth_gbs else "not measured"
    fl = f"{d.peak_gflops:.0f} GFLOP/s" if d.peak_gflops else "not measured"
    return (f"{d.name}  [{d.type}]  {d.platform}, driver {d.driver}\n"
            f"  {d.compute_units} compute units at {d.clock_mhz} MHz, {d.local_mem_bytes // 1024} KiB "
            f"local memory, work-groups up to {d.max_work_group_size}, "
            f"{d.global_mem_bytes / 2**30:.1f} GiB global\n"
            f"  measured peaks: copy bandwidth {bw}, single-precision FMA {fl}"
            + (f", copy within its {d.cache_bytes >> 20} MiB cache {d.cache_bandwidth_gbs:.1f} GB/s"
               if d.cache_bandwidth_gbs and d.cache_bytes else ""))


# --- bench -----------------------------------------------------------------------------------------------

def pick_kernel(source: str, name: str | None, path: str) -> Any:

    kernels = parse(source)
    if not kernels:
        raise InputError(f"{path}: no kernel found")
    if name is None:
        if len(kernels) > 1:
            raise InputError(f"{path} has {len(kernels)} kernels; pick one with --kernel: "
                             + ", ".join(k.name for k in kernels))
        return kernels[0]
    for k in kernels:
        if k.name == name:
            return k
    raise InputError(f"{path}: no kernel named {name!r} (kernels: {', '.join(k.name for k in kernels)})")


def cmd_bench(ns: argparse.Namespace) -> int:
    path = Path(ns.file)
    ws = Workspace(build_options=ns.build_options)
    source = ws.read(path)
    k = pick_kernel(source, ns.kernel, ns.file)
    spec, _ = ws.spec(k, path=path, command_line=scenario_from_args(ns), strict=True)
    reference = None
    if ns.reference:
        ref_file, _, ref_kernel = ns.reference.partition(":")
        ref_source = ws.read(ref_file)
        reference = (ref_source, pick_kernel(ref_source, ref_kernel or None, ref_file).name)
    device = runnable_device(ns.device)
    progress = Progress(f"{k.name} on {device.name}") if sys.stderr.isatty() else None
    m = ws.benchmark(source, path, k.name, spec, device, policy=Policy.named(ns.policy), check=ns.check,
                     reference=reference, timeout_s=ns.timeout, strict_options=True,
                     on_progress=(lambda f, msg: progress.update(f, msg)) if progress else None)
    if progress:
        progress.done()
    not_stored = None if ns.no_store else ws.store(m)  # the measurement is still shown when not stored
    if ns.json:
        print(json.dumps(m.to_json(), indent=1))
    else:
        print(format_measurement(m))
    if not_stored:
        print(f"clperf: measurement not stored: {not_stored}", file=sys.stderr)
    return 0 if m.status == "ok" else EXIT_FAILED


def format_measurement(m: Measurement) -> str:
    d = m.device
    lines = [f"{m.kernel} on {d.name} ({d.platform}, driver {d.driver})"]
    sc = m.scenario
    launch = "x".join(map(str, sc.global_size))
    local = "x".join(map(str, sc.local_size)) if sc.local_size else "runtime's choice"
    args = " ".join(f"{k}={v}" for k, v in sc.args.items())
    lines.append(f"  scenario: global {launch}, local {local}; {args}")
    if sc.defaulted:
        lines.append(f"  defaults used for: {', '.join(sc.defaulted)} (see docs/benchmark.md)")
    if m.status != "ok":
        lines.append(f"  {m.status}: {m.error}")
        return "\n".join(lines)
    assert m.median_ms is not None and m.min_ms is not None and m.cv is not None
    lines.append(f"  median {m.median_ms:.4g} ms, min {m.min_ms:.4g} ms, CV {m.cv * 100:.2f}%  "
                 f"({m.repetitions} repetitions, {m.outliers_removed} outliers removed)")
    nbytes = buffer_bytes(m)
    if nbytes and m.median_ms > 0:
        gbs = nbytes / (m.median_ms * 1e6)
        line = f"  buffers {nbytes / 2**20:.2f} MiB: {gbs:.1f} GB/s if each is read or written once"
        if d.peak_bandwidth_gbs:
            line += (f" ({gbs / d.peak_bandwidth_gbs * 100:.0f}% of the measured peak "
                     f"{d.peak_bandwidth_gbs:.0f} GB/s)")
        lines.append(line)
    if m.checked:
        lines.append(f"  output check: {m.error or 'outputs match'}")
    return "\n".join(lines)


def buffer_bytes(m: Measurement) -> int:
    """Bytes of the ``__global`` buffers of a measurement (element sizes from the compiler's types)."""
    try:
        source = read_source(m.file).text if m.file else ""
        ws = Workspace(build_options=m.build_options)
        params = ws.compiler_params(source, Path(m.file), m.kernel)
    except ClperfError:
        return 0
    sizes = {p.name: p.element_size or 0 for p in params}
    return sum(int(m.scenario.args.get(p.name, 0)) * sizes[p.name] for p in params
               if p.pointer and p.address_space in ("global", "constant"))


# --- sweep -----------------------------------------------------------------------------------------------

def cmd_sweep(ns: argparse.Namespace) -> int:

    if ns.max_variants < 1:
        raise InputError("--max-variants must be at least 1")
    shard = parse_shard(ns.shard) if ns.shard else None
    kernels, skipped = [], []
    for f in find_files(ns.paths):
        source = read_source(f).text
        try:
            options = " ".join(resolve_build_options(f, source, ns.build_options))
        except ClperfError as e:
            skipped.append(f"{f}: {e}")
            continue
        found, why = kernels_in_file(f, options)
        kernels += found
        skipped += why
    if shard is not None:
        kernels = [k for k in kernels if shard_of(k, shard[1]) == shard[0]]
    device = runnable_device(ns.device)
    progress = Progress("sweep")
    state = {"kernel": 0, "variants": 0, "ok": 0, "failed": 0}

    def on_event(kind: str, info: dict[str, Any]) -> None:
        if kind == "kernel":
            state["kernel"] += 1
        elif kind == "result":
            state["variants"] += 1
            state["ok" if info["status"] == "ok" else "failed"] += 1
        elif kind == "skip":
            skipped.append(f"{info['kernel']}: {info['why']}")
        elapsed = max(1e-9, time.monotonic() - progress.start)
        progress.update(state["kernel"] / max(1, len(kernels)),
                        f"kernel {state['kernel']}/{len(kernels)}, {state['variants']} measured "
                        f"({state['failed']} failed), {state['variants'] / elapsed:.1f}/s",
                        force=kind == "skip" and not progress.tty)

    settings: dict[str, Any] = {
        "max_variants": ns.max_variants, "policy": Policy.named(ns.policy), "time_budget_s": ns.time_budget,
        "variant_timeout_s": ns.variant_timeout, "max_buffer_bytes": int(ns.max_buffer_mb * 2**20),
        "lookahead": max(0, ns.lookahead)}
    if ns.ray is not None:
        return _sweep_on_ray(ns, kernels, device, skipped, settings)
    summary = run_sweep(kernels, device, ns.out, on_event=on_event, **settings)
    progress.done()
    result = {
        "device": device.to_json(), "out": ns.out, "kernels": summary.kernels, "measured": summary.measured,
        "ok": summary.ok, "failed": summary.failed, "already_done": summary.resumed,
        "worker_restarts": summary.restarts, "seconds": round(summary.seconds, 2),
        "measurements_per_second": round(summary.rate, 2), "stopped_by_budget": summary.stopped_by_budget,
        "worker_seconds": {k: round(v, 2) for k, v in summary.phases.items()}, "skipped": skipped,
    }
    if ns.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"sweep on {device.name}: {summary.measured} measured ({summary.ok} ok, failed: "
              f"{summary.failed or 'none'}) over {summary.kernels} kernels in {summary.seconds:.1f} s "
              f"({summary.rate:.1f}/s); {summary.resumed} already in {ns.out}; "
              f"{summary.restarts} worker restarts"
              + ("; stopped by the time budget" if summary.stopped_by_budget else ""))
        if summary.phases:
            print("  worker time: " + ", ".join(f"{k} {v:.1f} s" for k, v in summary.phases.items())
                  + " (build: waiting for the compiler; setup: buffers; run: launching and timing)")
        for s in skipped[:20]:
            print(f"  skipped {s}")
        if len(skipped) > 20:
            print(f"  ... and {len(skipped) - 20} more skipped")
    return 0


def _sweep_on_ray(ns: argparse.Namespace, kernels: list[Any], device: Device, skipped: list[str],
                  settings: dict[str, Any]) -> int:
    """``clperf sweep --ray``: the same sweep as Ray tasks, with progress for the whole job."""
    if ns.ray_tasks is not None and ns.ray_tasks < 1:
        raise InputError("--ray-tasks must be at least 1")
    progress = Progress("sweep on Ray")
    state = {"tasks": 0, "done": 0, "failed_tasks": 0, "variants": 0, "failed": 0}

    def on_event(kind: str, info: dict[str, Any]) -> None:
        if kind == "task":
            state.update(tasks=info["tasks"], done=info["done"], failed_tasks=info["failed"])
        elif kind == "result":
            state["variants"] += 1
            state["failed"] += info["status"] != "ok"
        elif kind == "skip":
            skipped.append(f"{info['kernel']}: {info['why']}")
            return
        elapsed = max(1e-9, time.monotonic() - progress.start)
        tasks = f"task {state['done']}/{state['tasks']} done" if state["tasks"] else "tasks running"
        progress.update(state["done"] / max(1, state["tasks"]),
                        f"{tasks} ({state['failed_tasks']} failed), {state['variants']} measured "
                        f"({state['failed']} failed), {state['variants'] / elapsed:.1f}/s",
                        force=kind == "task" and not progress.tty)

    s = run_sweep_on_ray(kernels, device, ns.out, address=ns.ray or None, tasks=ns.ray_tasks,
                         on_event=on_event, **settings)
    progress.done()
    result = {
        "device": device.to_json(), "out": ns.out, "kernels": s.kernels, "measured": s.measured, "ok": s.ok,
        "failed": s.failed, "already_done": s.resumed, "tasks": s.tasks, "tasks_failed": s.tasks_failed,
        "duplicates_dropped": s.duplicates, "nodes": s.nodes, "worker_restarts": s.restarts,
        "seconds": round(s.seconds, 2), "measurements_per_second": round(s.rate, 2),
        "stopped_by_budget": s.stopped_by_budget,
        "worker_seconds": {k: round(v, 2) for k, v in s.phases.items()}, "skipped": skipped,
    }
    if ns.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"sweep on Ray ({len(s.nodes)} node(s)), {device.name}: {s.measured} measured ({s.ok} ok, failed: "
          f"{s.failed or 'none'}) over {s.kernels} kernels, {s.tasks} tasks ({s.tasks_failed} failed twice), "
          f"in {s.seconds:.1f} s ({s.rate:.1f}/s); {s.resumed} already in {ns.out}")
    for line in skipped[:20]:
        print(f"  skipped {line}")
    if len(skipped) > 20:
        print(f"  ... and {len(skipped) - 20} more skipped")
    return 0
