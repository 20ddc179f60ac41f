"""The counting run: a kernel launch interpreted by Oclgrind with its scenario's data, its blocks counted.

``count`` runs the kernel as ``clperf bench`` would launch it (the same sizes, arguments and host
data) on Oclgrind, an OpenCL interpreter, with clperf's plugin (``clperf_count.cpp``) counting every
basic block per work-item and tracing the memory accesses of a few work-groups. An interpreter runs
the kernel's IR on simulated memory and gives it no way to reach the operating system; the run is
still isolated like a benchmark (``launch``: a child process with a memory limit and a timeout, only
Oclgrind's OpenCL loaded).

Sampling: a 1 ms launch on an H200 is 1e9-1e10 interpreted instructions, Oclgrind interprets ~1e7 a
second, so a run covers ``sample_groups`` work-groups spread over the grid and stops starting new ones
when ``budget_s`` (counted from the call, the child's start-up, the kernel's build and the writing of the
inputs included; the plugin's one-time build and the making of the inputs not) is spent. Block counts are then
means over the groups that ran; ``Counts.rel_error`` says how far the launch's total may be off.

Results are cached on disk (``store``) under everything they depend on: the source, kernel, build
options, scenario, the sha256 of each buffer's data, the sampling settings and the plugin's version.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from clperf import __version__
from clperf.benchmark.counting import launch, oclgrind, records
from clperf.benchmark.counting.inputs import KernelInputs
from clperf.benchmark.counting.records import Counts, Site
from clperf.benchmark.counting.store import CountStore, Failed
from clperf.benchmark.counting.summary import summarize
from clperf.benchmark.counting.trace import TRACE_DTYPE, sectors
from clperf.benchmark.runner import data_root, kernel_signature
from clperf.core import cache
from clperf.core.buildopts import check_options
from clperf.core.compile import compile_source, without_unroll_pragmas
from clperf.core.errors import ClperfError
from clperf.core.frontend import inline_helpers
from clperf.core.records import Scenario

__all__ = ["ANALYSIS_OPTIONS", "TRACE_DTYPE", "Counts", "Site", "count", "sectors"]

log = logging.getLogger(__name__)

# clperf's analysis compiles with these (clperf.core.compile); Oclgrind given the same names its blocks alike
ANALYSIS_OPTIONS = ("-O1", "-fno-unroll-loops")


Settings = tuple[float, int, int, int]  # budget_s, sample_groups, trace_groups, trace_cap


class _Job:
    """One kernel launch to count: checked options, the compiler's signature, its inputs."""

    def __init__(self, source: str, kernel: str, scenario: Scenario, build_options: str,
                 data: Mapping[str, np.ndarray] | None, path: Path | None) -> None:
        self.source, self.kernel, self.scenario, self.path = source, kernel, scenario, path
        self.text = without_unroll_pragmas(source)  # what both compilers build: the analysis's loops kept
        # Oclgrind's clang takes no inlining option: its helpers are marked to inline, as the analysis's are
        self.run_text = inline_helpers(self.text)
        self.options = check_options(build_options, "the counting run", path.parent if path else None)
        sig = kernel_signature(source, kernel, str(path) if path else "", shlex.join(self.options))
        self.inputs = KernelInputs(sig, scenario, data_root(str(path)) if path else None, data)
        self.identity = self.inputs.identity()

    def key(self, settings: Settings) -> str:
        return cache.key("counting", cache.source_hash(self.run_text), self.kernel, self.options,
                         self.scenario.to_json(), self.identity, settings, oclgrind.plugin_version(),
                         records.FORMAT, launch.STAGING, __version__)

    def request(self, settings: Settings) -> launch.Launch:
        # Oclgrind hands its options to clang's front end word by word: the include folder as two words
        folder = ["-I", str(self.path.parent)] if self.path is not None else []
        words = [w for w in self.options if w not in ("-x", "cl")]
        _, sample_groups, trace_groups, trace_cap = settings
        return launch.Launch(self.run_text, self.kernel, " ".join([*ANALYSIS_OPTIONS, *words, *folder]),
                             self.scenario.global_size, self.scenario.local_size, self.inputs.arguments(),
                             sample_groups, trace_groups, trace_cap)

    def clperf_ir(self) -> str | None:
        """The IR clperf's analysis reads (compiled once per process), whose block names counts take."""
        return compile_source(self.text, self.path, self.options).ir

    def counts(self, outcome: launch.Outcome, ir: str | None) -> Counts | Failed:
        if outcome.report is None:
            return Failed(outcome.failure or "no counts")
        r = outcome.report
        if not r.get("groups") and not r.get("partial_items") and not r.get("unfinished_items"):
            limit = "abandoned at the time limit" if r.get("aborted") else "did not finish"
            return Failed(f"no work-item ran within the budget (the first group {limit})")
        return summarize(outcome.report, outcome.trace, work_items=self.scenario.work_items, clperf_ir=ir,
                         source=self.source, elapsed_s=outcome.elapsed_s)


def count(source: str, kernel: str, scenario: Scenario, *, build_options: str = "",
          data: Mapping[str, np.ndarray] | None = None, budget_s: float = 8.0, sample_groups: int = 256,
          trace_groups: int = 4, trace_cap: int = 2_000_000, path: Path | None = None,
          store: CountStore | None = None) -> Counts | None:
    """Count ``kernel`` of ``source`` launched with ``scenario`` (resolved) within about ``budget_s``
    seconds. ``data``: buffer name -> array, replacing that buffer's fill; ``path``: the kernel's file
    (its folder holds ``file:`` fills and ``#include``d headers); ``build_options`` as the user gave them
    (held to clperf's allow-list). ``store``: where runs are cached (default: the per-user cache).

    Returns None, with the reason logged at info level, when there is no counting run to be had:
    Oclgrind or the plugin unavailable, a scenario whose inputs cannot be made, a kernel that does not
    build or crashes, or not one work-item that ran within the budget (when work-items ran and none
    finished, ``Counts.unfinished`` holds what they ran). A kernel that reads or
    writes out of bounds is counted, and ``Counts.errors`` holds Oclgrind's reports. The budget runs
    from the call (the plugin's one-time build and the making of the inputs aside)."""
    started = time.time()
    settings: Settings = (float(budget_s), int(sample_groups), int(trace_groups), int(trace_cap))
    try:
        job = _Job(source, kernel, scenario, build_options, data, path)
    except ClperfError as e:
        log.info("no counting run of %s: %s", kernel, e)
        return None
    key = job.key(settings)
    store = store or CountStore()
    hit = store.get(key)
    if hit is not None:
        if isinstance(hit, Failed):
            log.info("no counting run of %s: %s (cached)", kernel, hit.reason)
            return None
        return hit
    try:
        tc = oclgrind.toolchain()
        building = time.time()
        plugin = oclgrind.plugin(tc)
        started += time.time() - building
        ir = job.clperf_ir()  # before the run, inside its budget
        making = time.time()
        request = job.request(settings)  # the inputs made: as long as their size says, outside the budget
        started += time.time() - making
        outcome = launch.run(request, plugin, tc.icd, budget_s=budget_s, start=started, llvm_bin=tc.llvm_bin)
        result = job.counts(outcome, ir)
    except (oclgrind.Unavailable, OSError, ClperfError) as e:  # ClperfError: a data file changed since
        log.info("no counting run of %s: %s", kernel, e)
        return None
    except (ValueError, KeyError, TypeError) as e:  # a report the plugin did not finish writing
        log.info("no counting run of %s: unreadable counts (%s: %s)", kernel, type(e).__name__, e)
        return None
    if outcome.cacheable:
        store.put(key, result)
    if isinstance(result, Failed):
        log.info("no counting run of %s: %s", kernel, result.reason)
        return None
    if result.error_count:
        log.info("counting run of %s: Oclgrind reported %d errors, first: %s", kernel, result.error_count,
                 result.errors[0] if result.errors else "")
    return result
