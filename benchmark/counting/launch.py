"""One counting run in a child process: Oclgrind's OpenCL, the counting plugin, a private folder.

The child (``child.py``) is a fresh Python process started through ``clperf.core.children``: its own
process group, killed with clperf, an address-space limit (``children.worker_memory_bytes``) and a
wall-clock timeout. It sees one OpenCL platform, Oclgrind, through a private ``OCL_ICD_VENDORS``
folder, so the user's PoCL, NVIDIA or other ICDs are never loaded; every ``OCLGRIND_*`` and
``PYOPENCL_*`` setting of the caller's environment is dropped, so none (an interactive debugger, a
log file elsewhere) reaches the run. Everything it writes goes to a temporary folder that is deleted
after the run: inputs, Oclgrind's log, pyopencl's build files, the plugin's counts and trace. The
inputs go to a folder of their own in memory where there is room (``_input_folder``), and Oclgrind
runs on copy-on-write mappings of them (``child.py``): only the pages the sampled groups touch are read.

Time: no work-group starts that would end after the deadline (``start + budget_s``, or ``RUN_SHARE`` of
the budget after the inputs are written where writing them took longer: gigabytes of them); a group still
running ``GRACE_S`` later is abandoned by the plugin, its finished work-items kept; the child is killed
``EXIT_MARGIN_S`` after that.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clperf.benchmark.counting.inputs import Argument
from clperf.benchmark.counting.trace import TRACE_DTYPE
from clperf.core import children

CHILD = Path(__file__).with_name("child.py")
RUN_SHARE = 0.25  # of the budget, left to run groups in after the inputs are written (``run``)
GRACE_S = 1.0  # after the deadline, for the groups running then to finish
EXIT_MARGIN_S = 10.0  # after the abandon time: Oclgrind's teardown, the child's exit
MAX_ERROR_LINES = 3  # of each Oclgrind report kept in Counts.errors
RAM_FOLDER = "/dev/shm"  # where the input arrays go when it has room (_input_folder)
RAM_SPARE_BYTES = 1 << 30  # left free there
INPUTS_PREFIX = "clperf-count-inputs-"  # then the pid of the clperf process that made the folder
# part of a run's cache key: how the child stages the inputs decides how much of the budget is left to run
# groups in (2: Oclgrind runs on the mapped input files, child.py), and what it builds
STAGING = 3


@dataclass(frozen=True)
class Launch:
    """What to run: the kernel, its arguments and sizes, and the plugin's sampling settings."""

    source: str
    kernel: str
    options: str  # Oclgrind's build options
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    arguments: Sequence[Argument]
    sample_groups: int
    trace_groups: int
    trace_cap: int


@dataclass(frozen=True)
class Outcome:
    """What came back: the plugin's report and trace, or why there is none (``failure``)."""

    report: dict[str, Any] | None
    trace: np.ndarray | None
    failure: str | None
    elapsed_s: float
    cacheable: bool = True  # a failure of the kernel (not of this machine) that a rerun would repeat


def _environment(folder: Path, plugin: Path, icd: Path, launch: Launch, deadline: float,
                 abandon: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OCLGRIND_", "OCL_ICD_", "PYOPENCL_", "CLPERF_COUNT_"))}
    vendors = folder / "icd"
    vendors.mkdir()
    (vendors / "oclgrind.icd").write_text(f"{icd}\n")
    env.update(
        OCL_ICD_VENDORS=str(vendors), OCLGRIND_PLUGINS=str(plugin), OCLGRIND_LOG=str(folder / "oclgrind.log"),
        OCLGRIND_MAX_ERRORS="16", OCLGRIND_NUM_THREADS=str(len(os.sched_getaffinity(0))),
        PYOPENCL_NO_CACHE="1", TMPDIR=str(folder),
        CLPERF_COUNT_OUT=str(folder / "count"), CLPERF_COUNT_SAMPLE=str(launch.sample_groups),
        CLPERF_COUNT_TRACE=str(launch.trace_groups), CLPERF_COUNT_TRACE_CAP=str(launch.trace_cap),
        CLPERF_COUNT_DEADLINE=repr(deadline), CLPERF_COUNT_ABORT=repr(abandon),
    )
    return env


def _input_folder(launch: Launch, folder: str) -> contextlib.AbstractContextManager[str]:
    """Where the input arrays go: a private folder in memory (``RAM_FOLDER``, a tmpfs) when it and the
    machine's memory have room for them and ``RAM_SPARE_BYTES`` more, else the run's own ``folder``.
    Written to disk, a few GB of inputs wait on the disk's write-back (seconds of the budget); in tmpfs
    the child maps the very pages written."""
    need = sum(a.buffer.nbytes for a in launch.arguments if a.buffer is not None) + RAM_SPARE_BYTES
    try:
        _sweep_inputs()
        st = os.statvfs(RAM_FOLDER)
        if st.f_bavail * st.f_frsize >= need and _available_memory() >= need:
            return tempfile.TemporaryDirectory(prefix=f"{INPUTS_PREFIX}{os.getpid()}-", dir=RAM_FOLDER)
    except OSError:  # no tmpfs there, or not writable
        pass
    return contextlib.nullcontext(folder)


def _available_memory() -> int:
    """The machine's available memory in bytes (``MemAvailable`` of /proc/meminfo), 0 where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _sweep_inputs() -> None:
    """Input folders in ``RAM_FOLDER`` whose clperf process is gone (killed before it could delete them:
    a tmpfs holds their memory until then), this user's own, deleted."""
    for entry in os.scandir(RAM_FOLDER):
        pid = entry.name[len(INPUTS_PREFIX):].split("-")[0]
        if not entry.name.startswith(INPUTS_PREFIX) or not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            shutil.rmtree(entry.path, ignore_errors=True)


def _spec(inputs: Path, launch: Launch, llvm_bin: Path | None) -> dict[str, Any]:
    args: list[dict[str, Any]] = []
    for i, a in enumerate(launch.arguments):
        if a.buffer is not None:
            np.save(inputs / f"arg{i}.npy", a.buffer, allow_pickle=False)
            args.append({"buffer": str(inputs / f"arg{i}.npy")})
        elif a.local_bytes is not None:
            args.append({"local": a.local_bytes})
        else:
            args.append({"scalar": (a.scalar or b"").hex()})
    return {"source": launch.source, "kernel": launch.kernel, "options": launch.options,
            "global": list(launch.global_size),
            "local": list(launch.local_size) if launch.local_size is not None else None, "args": args,
            "llvm_bin": str(llvm_bin) if llvm_bin is not None else None}


def run(launch: Launch, plugin: Path, icd: Path, *, budget_s: float, start: float | None = None,
        llvm_bin: Path | None = None) -> Outcome:
    """Run ``launch`` within ``budget_s`` seconds of ``start`` (``time.time()``, default now): the
    child's start-up, the build and the upload of the data count against it. ``llvm_bin``: the folder of
    Oclgrind's LLVM's ``llvm-dis`` and ``llvm-as``, for a kernel whose intrinsics Oclgrind lacks
    (``child.lower_intrinsics``)."""
    start = time.time() if start is None else start
    deadline = start + budget_s
    abandon = deadline + GRACE_S
    if time.time() >= deadline:  # the analysis' compile took it all: the machine's state, not the kernel's
        return Outcome(None, None, f"the {budget_s:g} s budget was spent before the kernel started",
                       time.time() - start, cacheable=False)
    with tempfile.TemporaryDirectory(prefix="clperf-count-") as tmp, \
            _input_folder(launch, tmp) as inputs:
        folder = Path(tmp)
        (folder / "spec.json").write_text(json.dumps(_spec(Path(inputs), launch, llvm_bin)))
        # however long the inputs took to write, a share of the budget is left to run groups in
        deadline = max(deadline, time.time() + RUN_SHARE * budget_s)
        abandon = deadline + GRACE_S
        env = _environment(folder, plugin, icd, launch, deadline, abandon)
        timeout = abandon + EXIT_MARGIN_S - time.time()
        try:
            proc = children.run([sys.executable, "-P", str(CHILD), str(folder)], timeout_s=timeout, env=env,
                                memory_bytes=children.worker_memory_bytes(), cwd=str(folder))
        except subprocess.TimeoutExpired:
            return Outcome(None, None, f"still running {time.time() - start:.0f} s after it was asked for "
                           f"({budget_s:g} s budget); stopped", time.time() - start)
        return _collect(folder, proc, time.time() - start)


def _collect(folder: Path, proc: subprocess.CompletedProcess[bytes], elapsed: float) -> Outcome:
    result_file, report_file = folder / "result.json", folder / "count.json"
    stderr = proc.stderr.decode("utf-8", "replace").strip()
    if not result_file.is_file():
        rc = proc.returncode
        why = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        tail = stderr.splitlines()[-1:] if stderr else []
        return Outcome(None, None, f"the counting run crashed ({why}){': ' + tail[0] if tail else ''}",
                       elapsed)
    result = json.loads(result_file.read_text())
    if result.get("status") != "ok":
        first = next((ln for ln in str(result.get("error", "")).splitlines() if "error" in ln.lower()), "")
        label = "does not build" if result.get("status") == "build-error" else "failed"
        why = _fatal(stderr) or first or str(result.get("error", ""))
        return Outcome(None, None, f"the kernel {label} on Oclgrind: {why}"[:500], elapsed)
    if not report_file.is_file():
        said = " | ".join(stderr.splitlines()[-3:])
        return Outcome(None, None, f"Oclgrind ran without the counting plugin ({said or 'no message'})",
                       elapsed, cacheable=False)
    report = json.loads(report_file.read_text())
    report["messages"] = [_short(m) for m in report.get("messages", [])]
    trace_file = folder / "count.trace"
    trace = np.fromfile(trace_file, dtype=TRACE_DTYPE) if trace_file.is_file() else None
    return Outcome(report, trace, None, elapsed)


def _fatal(stderr: str) -> str:
    """What Oclgrind said when it gave up (``OCLGRIND FATAL ERROR``, e.g. an LLVM intrinsic it cannot
    interpret), from the child's stderr; "" when it did not."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("OCLGRIND FATAL ERROR"):
            return lines[i + 1].strip()
    return ""


def _short(message: str) -> str:
    """An Oclgrind report in a few lines: what happened, and where (``At line N (column C)``)."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    keep = lines[:1] + [ln for ln in lines[1:] if ln.startswith(("At line", "Entity:"))]
    return "; ".join(keep[:MAX_ERROR_LINES])
