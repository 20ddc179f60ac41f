"""PoCL's own code for a kernel, built and counted in a run of the scenario (the CPU cost model's input).

1. **Build.** The kernel is launched at the scenario's sizes in an isolated worker with a private PoCL
   cache (``POCL_CACHE_DIR``); the worker stops once PoCL has written the work-group function next to
   its final IR (``parallel.bc``).
2. **Count.** A copy of that IR gets a counter in every basic block (``instrument``), is compiled by
   PoCL's LLVM (``llc-15``) into the object PoCL loads, and the scenario runs once on one PoCL thread:
   the counts give every trip count, guard and unswitched copy with the scenario's own sizes and data.
3. **Cost.** ``clperf.predictor.model.cpu_code`` costs the counted blocks (``cpu_code`` here runs the
   three steps, in the background for callers with a wait budget).

Only PoCL keeps its binaries where they can be read, so other devices get None, as do kernels whose code
could not be built, counted or costed: the model then keeps its reading of the IR. About 2-3 s per
version, cached per process (``clperf.api`` keeps it on disk too, keyed with ``COST_VERSION``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import shutil
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy
from clperf.core import cache as cache_mod
from clperf.core.records import Device, Scenario
from clperf.predictor.model.cpu_code import (
    COST_VERSION,
    ENTRY,
    MCA,
    CompiledCode,
    blocks,
    launch_cycles,
    run_tool,
    tool,
)
from clperf.predictor.model.speedup import own_code

log = logging.getLogger(__name__)

# PoCL's own LLVM (Debian 12's PoCL 3.1 is built on LLVM 15): its llc builds the code PoCL builds; the
# three tools must be of one version (llvm-dis's text is read by llc)
LLVM = (("llc-15", "llvm-dis-15", "clang-15"), ("llc", "llvm-dis", "clang"))


BACKGROUND_RUNS = 4  # costings at once for callers with a wait budget: one code action's versions


ONCE = Policy(warmup=0, min_repetitions=1, max_repetitions=1, min_total_ms=0.0, stable_rel=None, batch=1)


IR_LABEL = re.compile(r'^([\w.$-]+|"[^"]+"|\d+):')


PHI = re.compile(r"^\s*%[\w.$-]+ = phi ")


LOCAL_DIR = re.compile(r"^(\d+)-(\d+)-(\d+)-goffs")  # PoCL's folder per local size: 256-1-1-goffs0...




_cache: dict[str, CompiledCode | None] = {}


_running: dict[str, threading.Event] = {}  # keys being costed: a second caller waits for the first


_lock = threading.Lock()


def cpu_code(source: str, kernel: str, scenario: Scenario, device: Device, *, build_options: str = "",
             timeout_s: float = 60.0, wait_s: float | None = None) -> CompiledCode | None:
    """PoCL's code for one launch of ``kernel`` at ``scenario``, costed (see the module's docstring), or
    None. Cached per source, kernel, options, device and scenario for the life of the process; a caller
    asking for a version being costed waits for that costing. ``wait_s``: wait at most that long (None:
    until the costing ends) and get None if it has not ended; it goes on in the background and is
    cached when it ends (the language server's code actions do not wait for a slow or hanging run). Such a
    caller starts no costing while ``BACKGROUND_RUNS`` are running: it gets None, and asks again later."""
    if not device.is_pocl or _llvm() is None or tool(MCA) is None:
        return None
    key = _key(source, kernel, scenario, device, build_options)
    with _lock:
        if key in _cache:
            return _cache[key]
        running = _running.get(key)
        if running is None and wait_s is not None and len(_running) >= BACKGROUND_RUNS:
            return None  # an impatient caller (an editor, text changing) starts no backlog of runs
        if running is None:
            running = _running[key] = threading.Event()
            threading.Thread(target=_costing, name=f"clperf-pocl-{kernel}", daemon=True,
                             args=(key, source, kernel, scenario, device, build_options, timeout_s)).start()
    running.wait(wait_s)
    with _lock:
        return _cache.get(key)


def settled(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str = "") -> bool:
    """Whether ``cpu_code`` has its answer for this version (its code, or None for good), so that asking
    again gives nothing new; False while it is being costed or not asked for yet."""
    if not device.is_pocl or _llvm() is None or tool(MCA) is None:
        return True
    with _lock:
        return _key(source, kernel, scenario, device, build_options) in _cache


def _key(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str) -> str:
    return hashlib.sha256("\0".join([source, kernel, build_options, device.key,
                                     json.dumps(scenario.to_json(), sort_keys=True)]).encode()).hexdigest()


def _costing(key: str, source: str, kernel: str, scenario: Scenario, device: Device, build_options: str,
             timeout_s: float) -> None:
    code = None
    try:
        code = _cost(source, kernel, scenario, device, build_options, timeout_s)
    except Exception as e:  # noqa: BLE001 - a tool's or a runtime's failure leaves the model its guess
        log.info("no cost of PoCL's code for %s: %s", kernel, e)
    finally:
        with _lock:
            _cache[key] = code
            _running.pop(key).set()


def _llvm() -> tuple[str, str, str] | None:
    """``(llc, llvm-dis, clang)`` of PoCL's LLVM version, or None."""
    return next((t for t in LLVM if all(shutil.which(x) for x in t)), None)


def _cost(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str,
          timeout_s: float) -> CompiledCode | None:
    run = counted(source, kernel, scenario, device, build_options, timeout_s)
    if run is None:
        return None
    cycles, notes = 0.0, list[str]()
    for fn in sorted(run.counts, key=lambda f: f != run.function):  # the work-group function first, then
        code = blocks(run.asm, fn.strip('"'))                       # the library functions it calls
        if not code:
            continue
        c, n = launch_cycles(code, run.counts[fn], "work-group" if fn == run.function else "calls")
        cycles += c
        notes += n if fn == run.function else [f"{fn}: {line}" for line in n]
    return CompiledCode(cycles / run.launches, math.prod(scenario.global_size), run.function, tuple(notes))


class Counted(NamedTuple):
    function: str  # the work-group function PoCL ran
    counts: dict[str, dict[str, int]]  # function that ran -> IR block -> runs; ``<entry>``: its first block
    launches: float  # launches the counts add up (the entry's runs over the work-groups of one)
    asm: str  # llc's assembly of PoCL's IR, uninstrumented


def counted(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str = "",
            timeout_s: float = 60.0) -> Counted | None:
    """Steps 1 and 2 of the module's docstring: PoCL's build of the kernel, its blocks counted in one
    run of ``scenario`` on one PoCL thread, and llc's assembly of the build; None when any step fails."""
    with pocl_build(source, kernel, scenario, device, build_options, timeout_s) as built:
        if built is None:
            return None
        folder = built.folder
        m = LOCAL_DIR.match(folder.name)
        local = tuple(int(x) for x in m.groups()) if m else tuple(scenario.local_size or (1,))
        groups = math.prod(-(-g // lo) for g, lo in zip(scenario.global_size, local, strict=False))
        llc, dis, clang = _llvm() or LLVM[0]
        ll = run_tool(dis, "-o", "-", str(folder / "parallel.bc"))
        cpu = re.search(r'"target-cpu"="([\w-]+)"', ll)  # the CPU PoCL compiles for (its kernel library's)
        mcpu = f"-mcpu={cpu.group(1) if cpu else 'generic'}"
        counts_file = folder / "counts.bin"
        text, names = instrument(ll, kernel, counts_file)
        (folder / "counted.ll").write_text(text)
        run_tool(llc, "-O1", mcpu, "-filetype=obj", "-relocation-model=pic",
             str(folder / "counted.ll"), "-o", str(folder / "counted.o"))
        run_tool(clang, "-shared", "-nostdlib", "-o", str(folder / f"{kernel}.so"),
             str(folder / "counted.o"))
        run = benchmark(source, kernel, scenario, device, build_options=build_options, policy=ONCE,
                        timeout_s=timeout_s,
                        worker_env={"POCL_CACHE_DIR": str(built.cache), "POCL_MAX_PTHREAD_COUNT": "1"})
        if not counts_file.exists():
            log.info("no block counts for %s: %s %s", kernel, run.status, run.error or "")
            return None
        raw = counts_file.read_bytes()
        values = struct.unpack(f"<{len(raw) // 8}q", raw)
        asm = run_tool(llc, "-O3", mcpu, str(folder / "parallel.bc"), "-o", "-")
    per_function: dict[str, dict[str, int]] = {}
    for (fn, block), v in zip(names, values, strict=False):
        per_function.setdefault(fn, {}).setdefault(ENTRY, v)  # the first block of each function
        per_function[fn][block] = v
    wrappers = {f"_pocl_kernel_{kernel}{suffix}" for suffix in ("", "_workgroup", "_workgroup_fast")}
    group_functions = [f for f in per_function if f in wrappers]
    if not group_functions:
        return None
    fn = max(group_functions, key=lambda f: per_function[f][ENTRY])
    launches = per_function[fn][ENTRY] / max(1, groups)
    ran = {f: c for f, c in per_function.items() if c[ENTRY] > 0}
    return Counted(fn, ran, launches, asm) if launches > 0 else None


class Built(NamedTuple):
    folder: Path  # the work-group function's shared object (``<kernel>.so``) and final IR (``parallel.bc``)
    cache: Path  # the private PoCL cache it is in (``POCL_CACHE_DIR``)


@contextmanager
def pocl_build(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str = "",
               timeout_s: float = 60.0) -> Iterator[Built | None]:
    """PoCL's build of ``kernel`` for ``scenario`` (PoCL specialises on the local size and the grid's
    extent), in a private PoCL cache removed on exit; None when PoCL wrote no object (a build error, a
    crash, a timeout). The launch is stopped as soon as the object is complete."""
    pattern = f"**/{kernel}/*/{kernel}.so"
    with tempfile.TemporaryDirectory(prefix="clperf-pocl-") as cache:
        done = threading.Event()
        found: list[Path] = []

        def watch() -> None:  # stop the worker once PoCL has written the work-group function
            last = -1
            while not done.is_set():
                sos = sorted(Path(cache).glob(pattern))
                size = sos[0].stat().st_size if sos else -1
                if size > 0 and size == last:
                    found.append(sos[0])
                    done.set()
                    return
                last = size
                time.sleep(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        m = benchmark(source, kernel, scenario, device, build_options=build_options, policy=ONCE,
                      timeout_s=timeout_s, cancel=done,
                      worker_env={"POCL_CACHE_DIR": cache, "POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES": "1"})
        if not found:  # the launch ended first: the object is complete now
            found.extend(sorted(Path(cache).glob(pattern))[:1])
        done.set()
        watcher.join(1.0)
        if not found or not (found[0].parent / "parallel.bc").exists():
            log.info("no PoCL code for %s: %s %s", kernel, m.status, m.error or "")
            yield None
        else:
            yield Built(found[0].parent, Path(cache))


def instrument(ll: str, kernel: str, out: Path) -> tuple[str, list[tuple[str, str]]]:
    """``ll`` (LLVM 15 text of PoCL's ``parallel.bc``) with a counter added at the top of every block of
    every function it defines (the kernel's work-group functions, ``_pocl_kernel_<kernel>`` and its
    ``_workgroup`` wrappers, and the library functions they call), and a destructor that writes the
    counters (little-endian int64) to ``out`` when the object is unloaded. Returns the text and the
    ``(function, block)`` of each counter, a function's first block first (``<entry>`` when it has no
    name)."""
    head = re.compile(r'^define [^@]*@([\w.$-]+|"[^"]+")\(')
    lines: list[str] = []
    names: list[tuple[str, str]] = []
    fn: str | None = None
    pending: tuple[str, str] | None = None  # the block whose counter goes after its phi nodes
    for line in ll.splitlines():
        if fn is None:
            m = head.match(line)
            if m and line.rstrip().endswith("{"):
                fn, pending = m.group(1), (m.group(1), ENTRY)
            lines.append(line)
            continue
        if line.startswith("}"):
            fn = None
            lines.append(line)
            continue
        m = IR_LABEL.match(line)
        if m:
            pending = (fn, m.group(1))
            lines.append(line)
            continue
        if pending and line.strip() and not line.strip().startswith(";") and not PHI.match(line):
            i = len(names)
            names.append(pending)
            slot = f"getelementptr inbounds ([@N x i64], ptr @__clperf_counts, i64 0, i64 {i})"
            lines += [f"  %__clperf.{i} = load i64, ptr {slot}",
                      f"  %__clperf.{i}.1 = add i64 %__clperf.{i}, 1",
                      f"  store i64 %__clperf.{i}.1, ptr {slot}"]
            pending = None
        lines.append(line)
    n = max(1, len(names))
    path = "".join(c if c.isalnum() or c in "/._-" else f"\\{ord(c):02X}" for c in str(out))
    size = len(str(out).encode()) + 1
    lines += [
        f"@__clperf_counts = global [{n} x i64] zeroinitializer",
        f'@__clperf_path = private constant [{size} x i8] c"{path}\\00"',
        "@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] "
        "[{ i32, ptr, ptr } { i32 65535, ptr @__clperf_dump, ptr null }]",
        "declare i32 @open(ptr, i32, ...)", "declare i64 @write(i32, ptr, i64)", "declare i32 @close(i32)",
        "define internal void @__clperf_dump() {",
        # open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)
        "  %fd = call i32 (ptr, i32, ...) @open(ptr @__clperf_path, i32 577, i32 420)",
        f"  %w = call i64 @write(i32 %fd, ptr @__clperf_counts, i64 {8 * n})",
        "  %c = call i32 @close(i32 %fd)", "  ret void", "}"]
    return "\n".join(lines).replace("[@N x i64]", f"[{n} x i64]") + "\n", names


def cached(text: str, kernel: str, scenario: Scenario, device: Device, build_options: str = "",
             deadline: float | None = None, run: bool = True) -> Any:
    """``cpu_code`` kept on disk: PoCL's own code for one launch of ``kernel`` at ``scenario``, counted
    and costed, when ``device`` is the local PoCL device; else None, also when it is not ready by
    ``deadline`` (``time.monotonic()``; None: wait for it). Counting runs the kernel (native code
    the file's author wrote): with ``run`` False only a costing already in the prediction cache is used
    and nothing runs."""
    if not own_code(device):
        return None
    # costed once per machine, not once per process: the prediction cache keeps each costing (JSON)
    key = cache_mod.key("pocl-code", cache_mod.source_hash(text), kernel, build_options, device.key,
                        scenario.to_json(), COST_VERSION, tool(MCA))
    store = cache_mod.default()
    hit = store.get(key, _cached_code)  # a row of another shape is dropped: the code is costed again
    if hit is not None:
        return hit
    if not run:
        return None
    try:
        wait_s = None if deadline is None else max(0.0, deadline - time.monotonic())
        code = cpu_code(text, kernel, scenario, device, build_options=build_options, wait_s=wait_s)
    except Exception as e:  # noqa: BLE001 - a broken runtime must not stop the prediction
        log.info("no PoCL code for %s: %s", kernel, e)
        return None
    if code is not None:
        store.set(key, {"cycles": code.cycles, "work_items": code.work_items, "function": code.function,
                        "loops": list(code.loops)})
    return code


def _cached_code(d: Any) -> Any:
    """A costing from the prediction cache, checked: positive cycles and work-items, text names; else
    ValueError, TypeError or KeyError (the cache drops the row)."""
    if not isinstance(d, dict) or not isinstance(d["loops"], list) or not isinstance(d["function"], str):
        raise TypeError("not a costing object")
    items = d["work_items"]
    if isinstance(items, bool) or not isinstance(items, int) or items < 1:
        raise ValueError(f"work_items is not a positive integer: {items!r}"[:80])
    if not all(isinstance(x, str) for x in d["loops"]):
        raise TypeError("loops are not text")
    return CompiledCode(cache_mod.positive(d["cycles"], "cycles"), items, d["function"],
                                 tuple(d["loops"]))


class Counter:
    """PoCL's own code for the estimate (``estimate.CodeCounter``): ``cached``, and whether asking again
    can give more (``settled``)."""

    def __call__(self, source: str, kernel: str, scenario: Scenario, device: Device, build_options: str,
                 deadline: float | None) -> CompiledCode | None:
        return cached(source, kernel, scenario, device, build_options, deadline)

    def settled(self, source: str, kernel: str, scenario: Scenario, device: Device,
                build_options: str) -> bool:
        return settled(source, kernel, scenario, device, build_options)


COUNTER = Counter()
