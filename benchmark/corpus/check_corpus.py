"""Check the corpus: every kernel compiles with clang and runs on PoCL at its smallest and largest sizes.

    python -m clperf.benchmark.corpus.check_corpus [--generated N [--every K]] [--oclgrind] [--only TEXT]

Each kernel runs in its own child process with a timeout, so a kernel that crashes or hangs is reported and
the check goes on. Inputs follow the kernel's scenario: its fills give the data a sweep gives (``range``,
``sorted``, a graph's row pointers), while integer buffers left ``random`` get arbitrary values (kernels
must mask or clamp anything they index with), float buffers random values in [0, 1). Prints one line per
failure and a summary; exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clperf.benchmark.corpus import CorpusKernel, family_of, generated, hand_written, kernels_in
from clperf.benchmark.corpus.launch import corners, front_kernel
from clperf.benchmark.inputs import BufferPlan, plan_buffers
from clperf.core import children
from clperf.core.compile import compile_source
from clperf.core.records import Param, Scenario, split_vector


@dataclass(frozen=True)
class CheckResult:
    kernel: str
    family: str
    stage: str  # "compile" | "scenario" | "run" | "ok"
    message: str
    seconds: float


def compile_error(source: str) -> str | None:
    """clang-19's errors and warnings about ``source`` (the project's compile step), or None when clean."""

    result = compile_source(source, None, [])
    # the analysis compile passes -fno-unroll-loops, so every `#pragma unroll` draws a pass-failed warning
    bad = [d for d in result.diagnostics if d.severity == "error"
           or (d.severity == "warning" and not d.code.startswith("Wpass-failed"))]
    if bad or not result.ok:
        return "; ".join(f"{d.line}:{d.column}: {d.message}" for d in bad) or "no IR"
    return None


# --- child process: run one kernel on PoCL ------------------------------------------------------------------

_DTYPES = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16", "int": "int32",
           "uint": "uint32", "long": "int64", "ulong": "uint64", "float": "float32", "double": "float64",
           "size_t": "uint64", "half": "float16"}


def _buffer_host(np: Any, p: Param, plan: BufferPlan, rng: Any) -> Any:
    base, width = split_vector(p.type)
    dtype = np.dtype(_DTYPES[base])
    count = plan.length * width
    if plan.fill.kind != "random" or plan.fields:
        return plan.make(seed=0)
    if dtype.kind == "f":
        return rng.random(count).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -(2**30)), min(info.max, 2**30)
    return rng.integers(lo, hi, size=count, endpoint=True).astype(dtype)


def run_child(request: dict[str, Any]) -> dict[str, Any]:
    import numpy as np
    import pyopencl as cl

    ck = CorpusKernel(request["family"], request["name"], request["source"], None, 0, "", None)  # type: ignore[arg-type]
    params = front_kernel(ck).params
    want = request.get("platform", "portable")
    platform = next(p for p in cl.get_platforms() if want in p.name.lower())
    ctx = cl.Context(platform.get_devices())
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, ck.source).build(options="-cl-std=CL1.2")
    kern = cl.Kernel(prg, ck.name)
    rng = np.random.default_rng(0)
    for sj in request["scenarios"]:
        sc = Scenario.from_json(sj)
        plans = {b.index: b for b in plan_buffers(params, sc.args, sc.fills)}
        keep = []
        for i, p in enumerate(params):
            v = sc.args[p.name]
            if p.pointer and p.address_space == "local":
                size = split_vector(p.type)
                local = cl.LocalMemory(int(v) * np.dtype(_DTYPES[size[0]]).itemsize * size[1])
                kern.set_arg(i, local)  # type: ignore[arg-type]  # pyopencl's stub omits LocalMemory
            elif p.pointer:
                host = _buffer_host(np, p, plans[i], rng)
                buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
                keep.append(buf)
                kern.set_arg(i, buf)
            else:
                kern.set_arg(i, np.dtype(_DTYPES.get(p.type, "int32")).type(v))
        cl.enqueue_nd_range_kernel(queue, kern, sc.global_size, sc.local_size).wait()
        queue.finish()
        for b in keep:
            b.release()
    return {"ok": True}


_OCLGRIND_BUG = re.compile(r"Invalid (read|write)|data race at local memory|Work-group divergence|"
                           r"barrier divergence", re.I)
_OCLGRIND_RACE = re.compile(r"data race at global memory", re.I)
_OCLGRIND_UNSUPPORTED = re.compile(r"Undefined external function|CLGRIND FATAL ERROR")


def _oclgrind_env() -> dict[str, str]:
    """Environment that makes pyopencl's ICD loader see Oclgrind (only in the child), with race checks."""
    lib = Path("/usr/lib/oclgrind/liboclgrind-rt-icd.so")
    if not lib.exists():
        raise SystemExit("Oclgrind is not installed (apt-get install oclgrind)")
    vendors = Path(tempfile.gettempdir()) / "clperf-oclgrind-vendors"
    vendors.mkdir(exist_ok=True)
    (vendors / "oclgrind.icd").write_text(f"{lib}\n")
    return {**os.environ, "OCL_ICD_VENDORS": str(vendors), "OCLGRIND_DATA_RACES": "1",
            "OCLGRIND_UNINITIALIZED": "0"}


def run_isolated(ck: CorpusKernel, scenarios: list[Scenario], timeout: float,
                 oclgrind: bool = False) -> str | None:
    """Run ``ck`` at each scenario in a child process; the failure message, or None.

    Under Oclgrind (an OpenCL simulator) every out-of-bounds access and data race is reported on stderr;
    any such report is a failure even when the kernel finishes.
    """
    req = {"family": ck.family, "name": ck.name, "source": ck.source,
           "scenarios": [s.to_json() for s in scenarios], "platform": "oclgrind" if oclgrind else "portable"}
    try:
        # its own process group, ended with this process; PoCL and Oclgrind are CPU runtimes, so the
        # CPU worker's memory limit holds
        ran = children.run([sys.executable, "-m", "clperf.benchmark.corpus.check_corpus", "--child"],
                           input=json.dumps(req).encode(), timeout_s=timeout,
                           env=_oclgrind_env() if oclgrind else None,
                           memory_bytes=children.worker_memory_bytes())
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout:.0f} s"
    proc = subprocess.CompletedProcess(ran.args, ran.returncode, ran.stdout.decode("utf-8", "replace"),
                                       ran.stderr.decode("utf-8", "replace"))
    if oclgrind and _OCLGRIND_UNSUPPORTED.search(proc.stderr):
        return "unsupported by oclgrind: " + _OCLGRIND_UNSUPPORTED.split(proc.stderr, 1)[-1].strip()[:200]
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {proc.stderr.strip()[-800:]}"
    if oclgrind and _OCLGRIND_BUG.search(proc.stderr):
        return "oclgrind: " + proc.stderr.strip()[:800]
    if oclgrind and _OCLGRIND_RACE.search(proc.stderr):
        return "race (global memory) " + proc.stderr.strip()[:300]
    return None


def check(ck: CorpusKernel, timeout: float, run: bool = True, oclgrind: bool = False) -> CheckResult:
    t0 = time.monotonic()
    err = compile_error(ck.source)
    if err:
        return CheckResult(ck.name, ck.family, "compile", err, time.monotonic() - t0)
    try:
        scenarios = corners(ck)
    except Exception as e:  # noqa: BLE001 - a boundary: one kernel's bad spec is reported
        return CheckResult(ck.name, ck.family, "scenario", str(e), time.monotonic() - t0)
    if oclgrind:  # a simulator: only the smallest sizes are affordable
        scenarios = [s for s in scenarios if s.work_items == min(x.work_items for x in scenarios)]
    if run:
        msg = run_isolated(ck, scenarios, timeout, oclgrind)
        if msg:
            # Races on global memory are by design in some kernels (atomics via compare-and-swap, random
            # scatters, GUPS, BFS level updates): memory-safe, reported apart from failures.
            stage = "race" if msg.startswith("race") else "unsupported" if msg.startswith("unsupported") \
                else "run"
            return CheckResult(ck.name, ck.family, stage, msg, time.monotonic() - t0)
    return CheckResult(ck.name, ck.family, "ok", "", time.monotonic() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m clperf.benchmark.corpus.check_corpus", description=__doc__)
    ap.add_argument("--generated", type=int, default=0, help="also check the first N generated kernels")
    ap.add_argument("--every", type=int, default=1, help="of the generated kernels, check every K-th")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per kernel (all its sizes)")
    ap.add_argument("--only", default="", help="check only kernels whose family or name contains TEXT")
    ap.add_argument("--no-run", action="store_true", help="compile and resolve scenarios only")
    ap.add_argument("--oclgrind", action="store_true",
                    help="run the smallest sizes under Oclgrind (reports out-of-bounds accesses and races)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.child:
        print(json.dumps(run_child(json.loads(sys.stdin.read()))))
        return 0
    items = hand_written()
    if ns.generated:
        for name, src in generated(ns.generated, ns.seed)[::max(ns.every, 1)]:
            items.extend(kernels_in(src, family_of(name)))
    if ns.only:
        items = [k for k in items if ns.only in k.family or ns.only in k.name]
    fams = {k.family for k in items}
    failures = 0
    notes: dict[str, list[str]] = {"race": [], "unsupported": []}
    slowest: list[CheckResult] = []
    for i, ck in enumerate(items, 1):
        r = check(ck, ns.timeout, run=not ns.no_run, oclgrind=ns.oclgrind)
        slowest.append(r)
        if r.stage in notes:
            notes[r.stage].append(r.kernel)
        elif r.stage != "ok":
            failures += 1
            print(f"FAIL [{r.stage}] {r.family}/{r.kernel}: {r.message}", flush=True)
        elif sys.stdout.isatty():
            print(f"\r{i}/{len(items)}", end="", flush=True)
    slowest.sort(key=lambda r: -r.seconds)
    print("\nslowest: " + ", ".join(f"{r.kernel} {r.seconds:.1f}s" for r in slowest[:5]))
    for stage, names in notes.items():
        if names:
            print(f"{stage} ({len(names)}, not failures): {', '.join(names)}")
    print(f"kernels: {len(items)}  families: {len(fams)}  failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
