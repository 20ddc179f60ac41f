"""What a CPU runtime's own compiler makes of a kernel: PoCL's machine code for one work-group, and what
LLVM's model of the CPU says one work-item of it costs.

PoCL turns a kernel into a work-group function, a loop over the work-items of each region between
barriers, and leaves SIMD to LLVM's loop vectoriser. Whether that loop became vector code, and what its
vector code costs (a guard becomes masked loads and stores, slow on AMD cores), decide a CPU kernel's
speed by up to the SIMD width, and neither can be read from the kernel's own IR: the vectoriser also
refuses loops the analysis sees as loop-free (a guard whose loads it cannot if-convert, a remainder loop
it meets before unrolling it) and takes ones it would not be expected to. So the rewrite speedup model
(``predictor/rewrites/speedup_model.py``) asks PoCL:

* the kernel is built and launched for one work-group of the scenario's local size in a worker with a
  private PoCL cache (``POCL_CACHE_DIR``, temporary files kept); the worker is stopped as soon as PoCL
  has written the work-group function's shared object; nothing is timed;
* ``objdump`` reads the kernel's code (``_pocl_kernel_<name>``) from it: instructions, vector (ymm/zmm)
  instructions, masked loads and stores;
* when the work-item loop is the kernel's only loop (``item_cycles``): ``llvm-mca`` (LLVM's scheduling
  model of the host CPU, ``-mcpu=native``) gives the cycles of one pass of that loop's body, divided by
  the work-items one pass runs: the vector loop's step, read from PoCL's vectorised IR
  (``parallel.bc``: ``%index.next = add %index, N``), or 1 for a scalar loop.

Only PoCL keeps its binaries where they can be read, so other devices get None, as do kernels whose code
could not be produced (no local size, a build error, no objdump): the model then falls back to its own
reading of the IR. Without llvm-mca or clang, ``item_cycles`` is None.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy

from clperf.records import Device, Scenario

log = logging.getLogger(__name__)

VECTOR_REGISTERS = re.compile(r"%[yz]mm\d")  # 256- and 512-bit registers: SIMD across work-items
MASKED = re.compile(r"^v?p?maskmov")  # AVX masked loads and stores (guards kept in vector code)
VECTORIZED_MIN_OPS = 16  # fewer are set-up code (a broadcast, a zeroed accumulator), not a vector loop
MCA_ITERATIONS = 200
PREFIXES = ("cs", "ds", "es", "fs", "gs", "ss", "data16")  # objdump's spelling of padding (long nops)
LINE = re.compile(r"\s*([0-9a-f]+):\t(\S+)\s*(.*)")
TARGET = re.compile(r"([0-9a-f]+) <")
# the work-items one pass of a loop runs: the vector loop's index and PoCL's scalar work-item counter
VECTOR_STEP = re.compile(r"%index\.next[\w.]* = add (?:nuw )?(?:nsw )?i64 %index, (\d+)")
SCALAR_STEP = re.compile(r"= add (?:nuw )?(?:nsw )?i64 %_local_id_x[\w.]*, (\d+)")

_cache: dict[str, CompiledCode | None] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class CompiledCode:
    """Counts over the instructions of the kernel's work-group code, as PoCL compiled it."""

    instructions: int
    vector_ops: int  # instructions on ymm/zmm registers
    masked_ops: int  # masked vector loads and stores
    item_cycles: float | None = None  # llvm-mca's cycles per work-item of the work-item loop, when known

    @property
    def vectorized(self) -> bool:
        """Whether PoCL turned the work-item loop into SIMD code (a vector loop is tens of such ops)."""
        return self.vector_ops >= VECTORIZED_MIN_OPS


def is_pocl(device: Device) -> bool:
    return "portable computing language" in device.platform.lower() and device.type == "cpu"


def cpu_code(source: str, kernel: str, scenario: Scenario, device: Device, *, build_options: str = "",
             own_loops: bool = True, timeout_s: float = 60.0) -> CompiledCode | None:
    """PoCL's code for ``kernel`` at ``scenario``'s local size, or None (see the module's docstring).
    ``own_loops``: whether the kernel keeps loops of its own (the analysis knows; without, the loop
    llvm-mca costs is the work-item loop). Cached per source, kernel, options, local size and
    ``own_loops`` for the life of the process."""
    if not is_pocl(device) or not scenario.local_size or shutil.which("objdump") is None:
        return None
    key = hashlib.sha256("\0".join([source, kernel, build_options, device.key,
                                    repr(tuple(scenario.local_size)), str(own_loops)]).encode()).hexdigest()
    with _lock:
        if key in _cache:
            return _cache[key]
    code = _compile(source, kernel, scenario, device, build_options, own_loops, timeout_s)
    with _lock:
        _cache[key] = code
    return code


def _compile(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str,
             own_loops: bool, timeout_s: float) -> CompiledCode | None:
    local = tuple(scenario.local_size or ())
    one_group = replace(scenario, global_size=local)
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
        m = benchmark(source, kernel, one_group, device, build_options=build_options,
                      policy=Policy(warmup=0, min_repetitions=1, max_repetitions=1, min_total_ms=0.0,
                                    stable_rel=None, batch=1),
                      timeout_s=timeout_s, cancel=done,
                      worker_env={"POCL_CACHE_DIR": cache, "POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES": "1"})
        if not found:  # the launch ended first: the object is complete now
            found.extend(sorted(Path(cache).glob(pattern))[:1])
        done.set()
        watcher.join(1.0)
        if not found:
            log.info("no PoCL code for %s: %s %s", kernel, m.status, m.error or "")
            return None
        try:
            asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(found[0])], capture_output=True,
                                 text=True, timeout=30, check=True).stdout
        except (OSError, subprocess.SubprocessError) as e:
            log.info("objdump failed on PoCL's code for %s: %s", kernel, e)
            return None
        ir = _ir_text(found[0].parent / "parallel.bc")
    code = parse(asm, kernel)
    if code is None or own_loops:
        return code
    fn = _function(ir, kernel)
    steps = [int(n) for n in (VECTOR_STEP if code.vectorized else SCALAR_STEP).findall(fn)]
    dims = sum(1 for n in local if n > 1) or 1
    return replace(code, item_cycles=item_cycles(asm, kernel, code.vectorized, max(steps) if steps else None,
                                                  dims, local[0], math.prod(local)))


def _ir_text(bitcode: Path) -> str:
    """PoCL's final work-group IR as text (any clang reads LLVM 15's bitcode), or ""."""
    clang = next((c for c in ("clang-15", "clang-19", "clang") if shutil.which(c)), None)
    if clang is None or not bitcode.exists():
        return ""
    try:
        return subprocess.run([clang, "-S", "-emit-llvm", "-x", "ir", str(bitcode), "-o", "-"],
                              capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        log.info("cannot read %s: %s", bitcode, e)
        return ""


def _function(ir: str, kernel: str) -> str:
    m = re.search(r"^define [^\n]*@_pocl_kernel_" + re.escape(kernel) + r"\(.*?^}", ir, re.S | re.M)
    return m.group(0) if m else ""


def _instructions(asm: str, kernel: str) -> list[tuple[int, str, str]] | None:
    """``(address, mnemonic, operands)`` of ``_pocl_kernel_<kernel>`` in ``objdump -d`` output (PoCL's
    work-group function; its ``_workgroup`` wrappers only unpack arguments), or None."""
    lines = asm.splitlines()
    head = f"<_pocl_kernel_{kernel}>:"
    try:
        start = next(i for i, line in enumerate(lines) if line.endswith(head))
    except StopIteration:
        return None
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        m = LINE.match(line)
        if m:
            out.append((int(m.group(1), 16), m.group(2), m.group(3).split("#")[0].strip()))
    return out


def parse(asm: str, kernel: str) -> CompiledCode | None:
    """Counts over the kernel's work-group function (see ``_instructions``)."""
    ins = _instructions(asm, kernel)
    if ins is None:
        return None
    vec = sum(1 for _a, _op, operands in ins if VECTOR_REGISTERS.search(operands))
    masked = sum(1 for _a, op, _operands in ins if MASKED.match(op))
    return CompiledCode(len(ins), vec, masked)


def loops(ins: list[tuple[int, str, str]]) -> list[tuple[int, int, int]]:
    """``(first address, last address, depth)`` of each loop: a jump back to an earlier address closes
    one (LLVM lays a loop out as one contiguous range); depth 0 is outermost."""
    ranges = []
    for addr, op, operands in ins:
        m = TARGET.match(operands) if op.startswith("j") else None
        if m and int(m.group(1), 16) <= addr:
            ranges.append((int(m.group(1), 16), addr))
    return [(a, b, sum(1 for c, d in ranges if (c, d) != (a, b) and c <= a and b <= d)) for a, b in ranges]


def item_cycles(asm: str, kernel: str, vectorized: bool, step: int | None, dims: int, row: int,
                group: int) -> float | None:
    """llvm-mca's cycles per work-item of the kernel's work-item loop: the vector loop (the loop with
    the most vector instructions) over ``step`` work-items when PoCL ``vectorized`` it (no step: the vector
    code covers a whole row of ``row`` work-items, and its loop is the next dimension's), else the scalar
    loop over dimension 0 (the deepest of the ``dims`` nested work-item loops, its longest copy) over
    ``step`` work-items (LLVM may unroll it: 1 when no step is known). Vector code without a loop (LLVM
    unrolled the whole work-item loop) runs once per work-group of ``group`` work-items."""
    ins = _instructions(asm, kernel)
    if not ins:
        return None
    found = loops(ins)

    def body(a: int, b: int) -> list[tuple[int, str, str]]:
        return [x for x in ins if a <= x[0] <= b]

    def vector_ops(r: tuple[int, int, int]) -> int:
        return sum(1 for x in body(r[0], r[1]) if VECTOR_REGISTERS.search(x[2]))

    if vectorized:
        if not found or not max(map(vector_ops, found)):  # unrolled whole: the code runs once per group
            return _per(mca(ins), group)
        if not step and dims < 2:
            return None
        a, b, _d = max(found, key=vector_ops)
        per = step or row
    else:
        candidates = [r for r in found if r[2] == dims - 1]
        if not candidates:
            return None
        a, b, _d = max(candidates, key=lambda r: len(body(r[0], r[1])))
        per = step or 1
    return _per(mca(body(a, b)), per)


def _per(cycles: float | None, items: int) -> float | None:
    return cycles / items if cycles is not None and items else None


def mca(body: list[tuple[int, str, str]]) -> float | None:
    """Cycles per pass of a loop body, as llvm-mca's model of the host CPU runs it in a loop (branches
    left out: llvm-mca does not follow them)."""
    tool = next((t for t in ("llvm-mca-19", "llvm-mca-15", "llvm-mca") if shutil.which(t)), None)
    if tool is None or not body:
        return None
    text = "\n".join(f"{op} {operands}" for _a, op, operands in body
                     if not op.startswith(("j", "nop")) and op not in PREFIXES)
    try:
        out = subprocess.run([tool, "-mcpu=native", f"-iterations={MCA_ITERATIONS}"], input=text,
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        log.info("llvm-mca failed: %s", e)
        return None
    m = re.search(r"Total Cycles:\s*(\d+)", out)
    return int(m.group(1)) / MCA_ITERATIONS if m else None
