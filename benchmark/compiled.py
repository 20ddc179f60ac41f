"""What a CPU runtime's own compiler makes of a kernel: PoCL's machine code for one work-group.

PoCL turns a kernel into a work-group function, a loop over the work-items of each region between
barriers, and leaves SIMD to LLVM's loop vectoriser. Whether that loop became vector code decides a
CPU kernel's speed by up to the SIMD width, and it cannot be read from the kernel's own IR: the
vectoriser also refuses loops the analysis sees as loop-free (a guard whose loads it cannot
if-convert, a remainder loop it sees before unrolling it) and takes ones it would not be expected to.
So the rewrite speedup model (``predictor/rewrites/speedup_model.py``) asks PoCL: the kernel is built
and launched for one work-group of the scenario's local size in a worker with a private PoCL cache
(``POCL_CACHE_DIR``), the worker is stopped as soon as PoCL has written the work-group function's
shared object, and ``objdump`` reads the kernel's code from it. Nothing is timed.

Only PoCL keeps its binaries where they can be read, so other devices get None, as do kernels whose
code could not be produced (no local size, a build error, no objdump): the model then falls back to
its own reading of the IR.
"""

from __future__ import annotations

import hashlib
import logging
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

_cache: dict[str, CompiledCode | None] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class CompiledCode:
    """Counts over the instructions of the kernel's work-group code, as PoCL compiled it."""

    instructions: int
    vector_ops: int  # instructions on ymm/zmm registers
    masked_ops: int  # masked vector loads and stores

    @property
    def vectorized(self) -> bool:
        """Whether PoCL turned the work-item loop into SIMD code (a vector loop is tens of such ops)."""
        return self.vector_ops >= VECTORIZED_MIN_OPS


def is_pocl(device: Device) -> bool:
    return "portable computing language" in device.platform.lower() and device.type == "cpu"


def cpu_code(source: str, kernel: str, scenario: Scenario, device: Device, *, build_options: str = "",
             timeout_s: float = 60.0) -> CompiledCode | None:
    """PoCL's code for ``kernel`` at ``scenario``'s local size, or None (see the module's docstring).
    Cached per source, kernel, options and local size for the life of the process."""
    if not is_pocl(device) or not scenario.local_size or shutil.which("objdump") is None:
        return None
    key = hashlib.sha256("\0".join([source, kernel, build_options, device.key,
                                    repr(tuple(scenario.local_size))]).encode()).hexdigest()
    with _lock:
        if key in _cache:
            return _cache[key]
    code = _compile(source, kernel, scenario, device, build_options, timeout_s)
    with _lock:
        _cache[key] = code
    return code


def _compile(source: str, kernel: str, scenario: Scenario, device: Device, build_options: str,
             timeout_s: float) -> CompiledCode | None:
    local = tuple(scenario.local_size or ())
    one_group = replace(scenario, global_size=local)
    with tempfile.TemporaryDirectory(prefix="clperf-pocl-") as cache:
        done = threading.Event()
        found: list[Path] = []

        def watch() -> None:  # stop the worker once PoCL has written the work-group function
            last = -1
            while not done.is_set():
                sos = sorted(Path(cache).glob(f"**/{kernel}/*/{kernel}.so"))
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
                      timeout_s=timeout_s, cancel=done, worker_env={"POCL_CACHE_DIR": cache})
        if not found:  # the launch ended first: the object is complete now
            sos = sorted(Path(cache).glob(f"**/{kernel}/*/{kernel}.so"))
            found.extend(sos[:1])
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
    return parse(asm, kernel)


def parse(asm: str, kernel: str) -> CompiledCode | None:
    """Counts over the function ``_pocl_kernel_<kernel>`` of ``objdump -d`` output (PoCL's work-group
    function; its ``_workgroup`` wrappers only unpack arguments)."""
    lines = asm.splitlines()
    head = f"<_pocl_kernel_{kernel}>:"
    try:
        start = next(i for i, line in enumerate(lines) if line.endswith(head))
    except StopIteration:
        return None
    n = vec = masked = 0
    for line in lines[start + 1:]:
        if not line.strip():
            break
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        n += 1
        mnemonic = parts[1].split()[0] if parts[1].split() else ""
        operands = parts[2] if len(parts) > 2 else parts[1]
        if VECTOR_REGISTERS.search(operands):
            vec += 1
        if MASKED.match(mnemonic):
            masked += 1
    return CompiledCode(n, vec, masked)
