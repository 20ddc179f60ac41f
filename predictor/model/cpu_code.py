"""What PoCL makes of a kernel, and what that code costs on this CPU.

PoCL turns a kernel into a work-group function: a loop over the work-items of each region between
barriers, vectorised by LLVM where it can, loops unswitched, values live across a barrier kept in
per-work-item arrays. None of that can be read from the kernel's own IR, and it decides a CPU kernel's
speed by up to the SIMD width. So on the local PoCL device the rewrite speedup model
(``predictor/model/speedup.py``) costs PoCL's own code, in three steps:

1. **Build.** The kernel is launched at the scenario's sizes in an isolated worker with a private PoCL
   cache (``POCL_CACHE_DIR``); the worker stops once PoCL has written the work-group function next to
   its final IR (``parallel.bc``).
2. **Count.** A copy of that IR gets a counter in every basic block (``instrument``), is compiled by
   PoCL's LLVM (``llc-15``) into the object PoCL loads, and the scenario runs once on one PoCL thread:
   the counts give every trip count, guard and unswitched copy with the scenario's own sizes and data.
3. **Cost.** ``llc-15`` compiles the unmodified IR to assembly whose comments name each machine block's
   IR block and loop (``blocks``). K passes of each loop body, blocks repeated as the counts say, form one
   straight sequence, run on this machine's cores (``core_run``) or, where it cannot run there, costed by
   ``llvm-mca`` (``for_mca`` corrects the facts of the host CPU its model gets wrong, measured by
   ``bench/cpu_core_facts.py``). A pass costs at least its taken jumps (``TAKEN_CYCLES``), its atomics
   (``LOCKED_CYCLES``) and its divisions (``DIVIDE_CYCLES``); masked stores, gathers and scatters are
   added by their elements (``ELEMENT_CYCLES``). The launch's cycles are the sum over loops of
   passes / K x the cycles of K passes (``launch_cycles``).

Only PoCL keeps its binaries where they can be read, so other devices get None, as do kernels whose code
could not be built, counted or costed: the model then keeps its reading of the IR. About 2-3 s per
version, cached per process (``speedup_model.cpu_code`` keeps it on disk too, keyed with
``COST_VERSION``). Why each rule, with its measurements: docs/design-decisions.md.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy
from clperf.predictor.model import core_run

from clperf.core import children
from clperf.core.records import Device, Scenario

log = logging.getLogger(__name__)

# PoCL's own LLVM (Debian 12's PoCL 3.1 is built on LLVM 15): its llc builds the code PoCL builds; the
# three tools must be of one version (llvm-dis's text is read by llc)
LLVM = (("llc-15", "llvm-dis-15", "clang-15"), ("llc", "llvm-dis", "clang"))
MCA = ("llvm-mca-19", "llvm-mca-15", "llvm-mca")
CAP = 3000  # instructions of K loop passes handed to llvm-mca at once
MAX_PASSES = 8  # K: enough passes that a block run every other pass counts as half
TAKEN_CYCLES = 1.0  # core cycles per taken branch (bench/cpu_core_facts.py: 1.0 on Zen 3, 1.1 on Zen 4)
LOCKED_CYCLES = 8.0  # core cycles per atomic read-modify-write, uncontended (cpu_core_facts.py: 8.0)
INSERT_FROM_MEMORY = re.compile(r"^vpinsr[dq](\s+\$\d+,\s*[^,%]*\()")  # vpinsrd $k, 8(%rax), ...
# core cycles per integer division by operand size: the divider takes one at a time, each in about its
# latency (cpu_core_facts.py: 4.0 for 8 and 16 bits, 6.0 for 32, 7.1 for 64; llvm-mca: 10, 11, 13, 17)
DIVIDE_CYCLES = {"b": 4.0, "w": 4.0, "l": 6.0, "q": 7.0}
DIVISION = re.compile(r"^i?div([bwlq])\s+(\S+)$")  # idivl %ecx, divq 8(%rsp), ...
MASKED_STORE = re.compile(r"^v(?:p)?maskmov[a-z]*\s+%[xyz]mm\d+,\s*%[xyz]mm\d+,\s*[^%\s]*\(")  # to memory
# a gather or a scatter (AVX2's vpgatherdd, AVX-512's vpgatherqd ... {%k1}, vscatterqps): index size (d/q)
# and the index register, whose lanes are its elements; the core builds it from microcode, element by element
GATHER = re.compile(r"^v(?:p)?(gather|scatter)([dq])[a-z]*\s.*\(%?\w*,\s*%([xyz])mm\d+")
# core cycles per element a gather reads or a scatter writes (cpu_core_facts.py, Zen 4: 1.05-1.25, 1.5-1.9)
ELEMENT_CYCLES = {"gather": 1.15, "scatter": 1.9}
L1_FILL_CYCLES = 3.3  # core cycles per line the L1 data cache refills from L2 (cpu_core_facts.py: 3.3)
# what a costing depends on besides the kernel, its scenario and the device (for caches across processes):
# bump the first part when the counting or costing changes
COST_VERSION = (f"6:{core_run.VERSION if core_run.compiler() else 'mca'}:{TAKEN_CYCLES}:{LOCKED_CYCLES}"
                f":{sorted(DIVIDE_CYCLES.items())}"
                f":{sorted(ELEMENT_CYCLES.items())}:{INSERT_FROM_MEMORY.pattern}:{CAP}:{MAX_PASSES}")
BACKGROUND_RUNS = 4  # costings at once for callers with a wait budget: one code action's versions
ONCE = Policy(warmup=0, min_repetitions=1, max_repetitions=1, min_total_ms=0.0, stable_rel=None, batch=1)
LABEL = re.compile(r"^(\.LBB\d+_\d+|# %bb\.\d+):\s*(?:#\s*%(\S+))?")
IR_LABEL = re.compile(r'^([\w.$-]+|"[^"]+"|\d+):')
PHI = re.compile(r"^\s*%[\w.$-]+ = phi ")
LOCAL_DIR = re.compile(r"^(\d+)-(\d+)-(\d+)-goffs")  # PoCL's folder per local size: 256-1-1-goffs0...
ENTRY = "<entry>"

_cache: dict[str, CompiledCode | None] = {}
_running: dict[str, threading.Event] = {}  # keys being costed: a second caller waits for the first
_lock = threading.Lock()


@dataclass(frozen=True)
class CompiledCode:
    """The cost of one launch of the scenario in PoCL's code."""

    cycles: float  # core cycles of the launch, all work-groups, as costed (``pass_cycles``)
    work_items: int
    function: str = ""  # the work-group function that ran
    loops: tuple[str, ...] = field(default=())  # per loop: its IR header, passes, cycles per pass

    @property
    def item_cycles(self) -> float:
        return self.cycles / max(1, self.work_items)

    @property
    def costed_by(self) -> str:
        """What costed the passes: ``core-run`` (this machine's cores; llvm-mca for a pass they cannot
        run) or ``llvm-mca``."""
        return "core-run" if core_run.compiler() else "llvm-mca"


def cpu_code(source: str, kernel: str, scenario: Scenario, device: Device, *, build_options: str = "",
             timeout_s: float = 60.0, wait_s: float | None = None) -> CompiledCode | None:
    """PoCL's code for one launch of ``kernel`` at ``scenario``, costed (see the module's docstring), or
    None. Cached per source, kernel, options, device and scenario for the life of the process; a caller
    asking for a version being costed waits for that costing. ``wait_s``: wait at most that long (None:
    until the costing ends) and get None if it has not ended; it goes on in the background and is
    cached when it ends (the language server's code actions do not wait for a slow or hanging run). Such a
    caller starts no costing while ``BACKGROUND_RUNS`` are running: it gets None, and asks again later."""
    if not device.is_pocl or _llvm() is None or _tool(MCA) is None:
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
    if not device.is_pocl or _llvm() is None or _tool(MCA) is None:
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


def _tool(names: tuple[str, ...]) -> str | None:
    return next((n for n in names if shutil.which(n)), None)


def _llvm() -> tuple[str, str, str] | None:
    """``(llc, llvm-dis, clang)`` of PoCL's LLVM version, or None."""
    return next((t for t in LLVM if all(shutil.which(x) for x in t)), None)


def _run(*args: str, stdin: str | None = None) -> str:
    """An LLVM tool's stdout; raises CalledProcessError when it fails. Its own process group, ended with
    clperf, and clang's memory limit (``CLPERF_CLANG_MEMORY_MB``)."""
    proc = children.run(args, input=None if stdin is None else stdin.encode(), timeout_s=120,
                        memory_bytes=children.clang_memory_bytes())
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, list(args), proc.stdout,
                                            proc.stderr.decode("utf-8", "replace"))
    return proc.stdout.decode("utf-8", "replace")


def _cost(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str,
          timeout_s: float) -> CompiledCode | None:
    run = counted(source, kernel, scenario, device, build_options, timeout_s)
    if run is None:
        return None
    cycles, notes = 0.0, []
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
        ll = _run(dis, "-o", "-", str(folder / "parallel.bc"))
        cpu = re.search(r'"target-cpu"="([\w-]+)"', ll)  # the CPU PoCL compiles for (its kernel library's)
        mcpu = f"-mcpu={cpu.group(1) if cpu else 'generic'}"
        counts_file = folder / "counts.bin"
        text, names = instrument(ll, kernel, counts_file)
        (folder / "counted.ll").write_text(text)
        _run(llc, "-O1", mcpu, "-filetype=obj", "-relocation-model=pic",
             str(folder / "counted.ll"), "-o", str(folder / "counted.o"))
        _run(clang, "-shared", "-nostdlib", "-o", str(folder / f"{kernel}.so"),
             str(folder / "counted.o"))
        run = benchmark(source, kernel, scenario, device, build_options=build_options, policy=ONCE,
                        timeout_s=timeout_s,
                        worker_env={"POCL_CACHE_DIR": str(built.cache), "POCL_MAX_PTHREAD_COUNT": "1"})
        if not counts_file.exists():
            log.info("no block counts for %s: %s %s", kernel, run.status, run.error or "")
            return None
        raw = counts_file.read_bytes()
        values = struct.unpack(f"<{len(raw) // 8}q", raw)
        asm = _run(llc, "-O3", mcpu, str(folder / "parallel.bc"), "-o", "-")
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


# ---- step 2: count the blocks ------------------------------------------------------------------------


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


# ---- step 3: cost the code -----------------------------------------------------------------------------


@dataclass
class Block:
    """A machine block of ``llc``'s assembly: its IR block, instructions and loop."""

    label: str
    ir: str
    instructions: list[str] = field(default_factory=list)
    loop: str | None = None  # label of the header of the innermost loop holding it
    header: bool = False
    parents: list[tuple[str, int]] = field(default_factory=list)  # enclosing loops' headers, depths


def blocks(asm: str, function: str) -> list[Block]:
    """The machine blocks of ``function`` in ``llc``'s assembly, in layout order; the first is the
    function's entry (IR name ``<entry>`` when it has none)."""
    m = re.search(r"^" + re.escape(function) + r":.*?^\.Lfunc_end", asm, re.S | re.M)
    if not m:
        return []
    number = re.search(r"\.LBB(\d+)_", m.group(0))
    prefix = f".LBB{number.group(1) if number else 0}_"
    out = [Block(".entry", ENTRY)]
    for line in m.group(0).splitlines()[1:]:
        lm = LABEL.match(line)
        if lm:
            first = len(out) == 1 and not out[0].instructions
            name = lm.group(2) or (ENTRY if first else "")
            out.append(Block(lm.group(1).replace("# %bb.", prefix), name))
            continue
        b, t = out[-1], line.strip()
        if c := re.match(r"#\s*in Loop: Header=(BB\d+_\d+)", t):
            b.loop = ".L" + c.group(1)
        elif re.match(r"#\s*=>\s*This (?:Inner )?Loop Header", t):
            b.loop, b.header = b.label, True
        elif c := re.match(r"#\s*Parent Loop (BB\d+_\d+) Depth=(\d+)", t):
            b.parents.append((".L" + c.group(1), int(c.group(2))))
        elif t and not t.startswith(("#", ".")):
            b.instructions.append(t.split("#")[0].strip())
    return out if out[0].instructions else out[1:]


def launch_cycles(code: list[Block], counts: dict[str, int],
                  root: str = "work-group") -> tuple[float, list[str]]:
    """Cycles of the counted run: each loop (and the function itself, a loop over its ``root`` passes:
    work-groups, or calls of a library function) costed by llvm-mca for K passes of its body, blocks and
    inner loops repeated by their counts (``counts``: IR block -> runs; a machine block without an IR
    name runs as the last named block of its loop)."""
    runs: dict[str, int] = {}
    last: dict[str | None, int] = {}
    for b in code:
        if b.ir in counts:
            last[b.loop] = counts[b.ir]
        runs[b.label] = counts.get(b.ir, last.get(b.loop, 0))
    headers = [b.label for b in code if b.header]
    parent: dict[str | None, str | None] = {
        b.label: max(b.parents, key=lambda p: p[1])[0] if b.parents else None for b in code if b.header}
    owner = {b.label: b.loop if b.loop in parent else None for b in code}
    loops: list[str | None] = [None, *headers]
    passes = {h: runs[h] if h else runs[code[0].label] for h in loops}
    children = {h: [c for c in headers if parent[c] == h] for h in loops}
    position = {b.label: i for i, b in enumerate(code)}
    own = {h: [b for b in code if owner[b.label] == h] for h in loops}
    ir = {b.label: b.ir for b in code}
    notes: list[str] = []
    sizes: dict[str | None, float] = {}

    def size(h: str | None) -> float:  # instructions of one pass of h, inner loops included
        if h not in sizes:
            n = max(1, passes[h])
            sizes[h] = (sum(len(b.instructions) * runs[b.label] for b in own[h])
                        + sum(size(c) * passes[c] for c in children[h])) / n
        return sizes[h]

    taken = taken_branches(code, runs)
    ran: dict[str, int] = {}

    def run_of(b: Block) -> list[str]:
        """One run of block b, its jumps taken as often as the counts say, spread evenly over its runs:
        ``core_run.TAKEN`` per jump taken, ``core_run.NOT_TAKEN`` per jump that fell through."""
        i = ran[b.label] = ran.get(b.label, -1) + 1
        jumps = sum(x.startswith("j") for x in b.instructions)
        went = min(jumps, _share(taken[b.label] / runs[b.label], i)) if runs[b.label] else 0
        return ([x for x in b.instructions if not x.startswith("j")]
                + [core_run.TAKEN] * went + [core_run.NOT_TAKEN] * (jumps - went))

    def sequence(h: str | None, k: int, inner: bool = True) -> list[str]:
        """The instructions of k passes of h in layout order, blocks and inner loops by their counts."""
        n = max(1, passes[h])
        parts: list[tuple[int, Block | str]] = [(position[b.label], b) for b in own[h]]
        parts += [(position[c], c) for c in children[h]] if inner else []
        out: list[str] = []
        for i in range(k):
            for _p, x in sorted(parts, key=lambda q: q[0]):
                if isinstance(x, Block):
                    out += [y for _ in range(_share(runs[x.label] / n, i)) for y in run_of(x)]
                elif m := _share(passes[x] / n, i):
                    out += sequence(x, m)
        return out

    locked = {b.label: float(runs[b.label] * sum(map(is_locked, b.instructions))) for b in code}
    divides = {b.label: runs[b.label] * sum(map(divide_cycles, b.instructions)) for b in code}

    def per_pass(events: dict[str, float], h: str | None, whole: bool) -> float:
        def total(x: str | None) -> float:
            return (sum(events[b.label] for b in own[x])
                    + (sum(total(c) for c in children[x]) if whole else 0.0))
        return total(h) / max(1, passes[h])

    def cost(h: str | None) -> float:
        if not passes[h]:
            return 0.0
        name = ir.get(h, "") if h else root
        whole = size(h) <= CAP
        body = size(h) if whole else sum(len(b.instructions) * runs[b.label] for b in own[h]) / passes[h]
        k = max(1, min(MAX_PASSES, int(CAP // max(1.0, body))))
        per = max(pass_cycles(sequence(h, k, inner=whole)) / k, TAKEN_CYCLES * per_pass(taken, h, whole),
                  LOCKED_CYCLES * per_pass(locked, h, whole), per_pass(divides, h, whole))
        notes.append(f"{name}: {passes[h]} passes, {per:.3g} cycles each"
                     + ("" if whole else " without its inner loops"))
        return passes[h] * per + (0.0 if whole else sum(cost(c) for c in children[h]))

    return cost(None), notes


def pass_cycles(instructions: list[str]) -> float:
    """Cycles of a pass of ``instructions`` run over and over: their run on this machine's cores
    (``core_run``; gathers and scatters costed apart, as in ``mca``), or llvm-mca's (``mca``) where the run
    cannot be made (another architecture, no C compiler, an instruction that must not run here)."""
    core = core_run.cycles(instructions)
    total = None if core is None else core + sum(map(gather_cycles, instructions))
    return total if total else mca(instructions)


def is_locked(instruction: str) -> bool:
    """An atomic read-modify-write: a ``lock`` prefix, or ``xchg`` with memory (locked implicitly)."""
    return instruction.startswith("lock") or (instruction.startswith("xchg") and "(" in instruction)


@functools.cache
def l1_data_cache() -> tuple[int, int, int] | None:
    """``(sets, ways, line bytes)`` of this CPU's level-1 data cache (Linux sysfs, read once), or None."""
    def read(index: Path, name: str) -> str:
        return (index / name).read_text().strip()

    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if read(index, "level") == "1" and read(index, "type") == "Data":
                sets, ways, line = (int(read(index, f)) for f in
                                    ("number_of_sets", "ways_of_associativity", "coherency_line_size"))
                return sets, ways, line
        except (OSError, ValueError):
            return None
    return None


def conflict_misses(offsets: list[int], cache: tuple[int, int, int]) -> float:
    """L1 misses of one work-item's reads and writes at byte ``offsets`` (from one base, in order), when
    the work-item before it made the same pass (its neighbour touches the same lines: ``x + 4`` bytes), in
    a cache of ``cache`` = (sets, ways, line bytes) with LRU replacement. A column of a matrix with a
    power-of-two pitch maps all its lines to a few sets: more lines than ways in one set and every read
    misses, though the lines would all fit in the cache."""
    sets, ways, line = cache
    held: dict[int, list[int]] = {}
    misses = 0
    for rep in range(2):
        for offset in offsets:
            tag = offset // line
            way = held.setdefault(tag % sets, [])
            if tag in way:
                way.remove(tag)
            else:
                misses += rep
                if len(way) >= ways:
                    way.pop(0)
            way.append(tag)
    return float(misses)


def divide_cycles(instruction: str) -> float:
    """Core cycles the divider is busy with ``instruction``: ``DIVIDE_CYCLES`` for an integer division,
    else 0."""
    m = DIVISION.match(instruction)
    return DIVIDE_CYCLES[m.group(1)] if m else 0.0


def for_mca(instruction: str) -> list[str]:
    """``instruction`` as llvm-mca is given it, where its model of this CPU is measured wrong (see the
    module's docstring): an insert from memory as a blend from memory; an integer division as two
    multiplies, the quotient's (from the dividend and the divisor) and the remainder's (from the
    quotient), which keep its dependencies and about its latency while the divider's throughput is
    ``DIVIDE_CYCLES``' bound in ``launch_cycles``."""
    m = DIVISION.match(instruction)
    if m:
        size, source = m.groups()
        a, d = ("%rax", "%rdx") if size == "q" else ("%eax", "%edx")
        op = "imulq" if size == "q" else "imull"
        first = f"{op} {source}, {a}" if size in "lq" else f"{op} {a}, {a}"
        return [first, f"{op} {a}, {d}"]
    return [INSERT_FROM_MEMORY.sub(r"vpblendd\1", instruction)]


def taken_branches(code: list[Block], runs: dict[str, int]) -> dict[str, float]:
    """How often the jumps of each block are taken, from block runs alone: an unconditional jump is
    taken whenever its block runs; a conditional jump's edge is its target's runs when the target has no
    other predecessor, the block's runs less its fall-through's when that block has no other, and else
    the target's runs shared among its predecessors in proportion to their runs."""
    labels = [b.label for b in code]
    jumps: dict[str, list[tuple[str, str]]] = {}
    falls: dict[str, str | None] = {}
    preds: dict[str, list[str]] = {label: [] for label in labels}
    for i, b in enumerate(code):
        js = [(x.split()[0], x.split()[-1]) for x in b.instructions if x.split()[0].startswith("j")]
        ends = any(x.split()[0].startswith(("jmp", "ret")) for x in b.instructions)  # jmpq *%rax too
        fall = labels[i + 1] if not ends and i + 1 < len(labels) else None
        jumps[b.label], falls[b.label] = js, fall
        for target in [t for _op, t in js if t in preds] + ([fall] if fall else []):
            preds[target].append(b.label)
    out: dict[str, float] = {}
    for b in code:
        n = float(runs.get(b.label, 0))
        left, taken = n, 0.0
        fall = falls[b.label]
        for op, target in jumps[b.label]:
            if op.startswith("jmp"):
                taken += left
                break
            if target not in runs:
                continue
            if len(preds[target]) == 1:
                edge = float(runs[target])
            elif fall and len(preds[fall]) == 1 and len(jumps[b.label]) == 1:
                edge = n - runs.get(fall, 0)
            else:
                into = sum(runs.get(p, 0) for p in preds[target])
                edge = runs[target] * n / into if into else 0.0
            edge = max(0.0, min(left, edge))
            taken += edge
            left -= edge
        out[b.label] = taken
    return out


def _share(rate: float, i: int) -> int:
    """How many of ``rate`` runs per pass fall in pass ``i`` (spread evenly: 0.5 is every other pass)."""
    return math.floor((i + 1) * rate + 1e-9) - math.floor(i * rate + 1e-9)


_mca_cache: dict[str, float] = {}


def mca(instructions: list[str]) -> float:
    """llvm-mca's cycles per pass of ``instructions`` run over and over (jumps, calls, returns, stack
    pushes and pops left out: llvm-mca does not follow them; inserts from memory costed as blends, see
    the module's docstring), and at least the rest of the pass plus its microcoded instructions, which do
    not overlap it (the module's docstring): masked stores at llvm-mca's cycles for them alone, gathers and
    scatters at ``ELEMENT_CYCLES`` per element."""
    stores = [i for i in instructions if MASKED_STORE.match(i)]
    gathered = sum(map(gather_cycles, instructions))
    if not stores and not gathered:
        return _mca(instructions)
    rest = [i for i in instructions if not (MASKED_STORE.match(i) or GATHER.match(i))]
    return max(_mca(instructions), _mca(rest) + _mca(stores) + gathered)


def gather_cycles(instruction: str) -> float:
    """Core cycles of a gather or a scatter (``ELEMENT_CYCLES`` per element: 8 elements for a ``ymm``
    index of 32 bits or a ``zmm`` index of 64 bits), 0 for any other instruction."""
    m = GATHER.match(instruction)
    if not m:
        return 0.0
    kind, index, register = m.groups()
    return ELEMENT_CYCLES[kind] * {"x": 128, "y": 256, "z": 512}[register] / (32 if index == "d" else 64)


def _mca(instructions: list[str]) -> float:
    skip = ("j", "nop", "ret", "call", "push", "pop")
    text = "\n".join(x for i in instructions if not i.split()[0].startswith(skip) for x in for_mca(i))
    if not text:
        return 0.0
    if text not in _mca_cache:
        _mca_cache[text] = mca_text(text)
    return _mca_cache[text]


def mca_text(text: str) -> float:
    """llvm-mca's cycles per pass of the assembly ``text`` as it is (no instruction left out or
    rewritten), over enough passes to reach a steady state."""
    n = max(10, min(200, 20000 // max(1, text.count("\n") + 1)))
    out = _run(_tool(MCA) or "", "-mcpu=native", f"-iterations={n}", stdin=text)
    m = re.search(r"Total Cycles:\s*(\d+)", out)
    if not m:
        raise ValueError("llvm-mca printed no cycle count")
    return int(m.group(1)) / n
