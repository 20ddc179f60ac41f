"""The one API every front end uses: the CLI, the language server and the dev-set evaluation.

A ``Workspace`` owns what decides the answer for a kernel file, so that no two front ends can disagree:

* the **text** (read safely: regular files only, size-limited) and its **build options**: the
  ``clperf.toml`` of the repository, the file's ``// clperf-build:`` directives and the front end's own
  (``--build-options``, the editor's ``clperf.buildOptions``), allow-listed;
* the **scenario**, by one rule: ``clperf.toml`` < the editor's settings < the kernel's directive < the
  command line, then the documented defaults for whatever is still missing (``resolve``);
* the **device**: local OpenCL devices first, then the shipped profiles (``select_device``);
* the **counting run**: the kernel interpreted (Oclgrind) on a sample of its work-groups with the
  scenario's data, whose block counts give every trip count the static analysis cannot (``count``);
* the **estimate**: the learned model, the roofline, or, on the local PoCL device and only where the user
  allowed running kernels (``run_kernels``), PoCL's own code counted in a run of the scenario;
* the **benchmark**: a real run in the isolated runner, stored for calibration.

Everything returned is a plain record (``clperf.core.records``, the analysis' reports); the front ends only
parse arguments or speak LSP, and format.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from clperf.benchmark import counting, devices, pocl_code, runner
from clperf.benchmark.counting import Counts
from clperf.benchmark.counting.store import CountStore
from clperf.benchmark.timing import Policy
from clperf.core import frontend, store
from clperf.core.buildopts import find_config, gather_build_options, read_config, resolve_build_options
from clperf.core.errors import InputError, ScenarioError
from clperf.core.records import Device, Estimate, Measurement, Param, Scenario, type_size
from clperf.core.scenario import ScenarioSpec, parse_flags, resolve
from clperf.core.sourcefile import read_source
from clperf.predictor import rewrites
from clperf.predictor.analysis.pipeline import FileReport, KernelReport, analyze_text
from clperf.predictor.model import estimate as estimates
from clperf.predictor.model import memory, profiles
from clperf.predictor.model.memory import GpuMemory, MemoryTraffic, Occupancy
from clperf.predictor.model.roofline import Traffic, count_args, traffic

__all__ = ["Policy", "Resolved", "Target", "Workspace", "choose_device", "discover", "local_devices",
           "measure_peaks", "runnable_device", "select_device", "shipped_profiles", "warm_up"]
PEAKS_TIMEOUT_S = 300.0  # a peak measurement stops after this


def warm_up() -> None:
    """Load LLVM (llvmlite, about 0.5 s) now, before the first file needs it."""
    import llvmlite.binding  # noqa: F401


def discover(measure: bool = True, remeasure: bool = False) -> list[Device]:
    """The OpenCL devices of this machine, with their measured peaks (measured now, once per device, unless
    ``measure`` is False; again with ``remeasure``). DeviceError when OpenCL cannot list its platforms."""
    return list(devices.discover(measure=measure, remeasure=remeasure))


def shipped_profiles() -> list[Device]:
    """The device profiles clperf ships (devices a user may estimate for without having them)."""
    return profiles.shipped()


def measure_peaks(device: Device, *, cancel: threading.Event | None = None) -> Device:
    """``device`` with its peak bandwidth and FLOP rate measured (runs small kernels on it, once) and cached
    for later runs. With ``cancel``: once it is set, the measuring worker is killed and DeviceError says
    the measurement was cancelled; nothing is cached then."""
    return devices.measure_peaks(device, PEAKS_TIMEOUT_S, cancel)


def runnable_device(text: str | None) -> Device:
    """The local device ``--device TEXT`` names (or the first one), to run kernels on: DeviceError when this
    machine has none, or none matches."""
    return devices.select(text)


def local_devices(measure: bool = True) -> list[Device]:
    """``discover``, or none (with a warning in the log) when OpenCL cannot be used here."""
    try:
        return discover(measure)
    except Exception as e:  # noqa: BLE001 - a broken OpenCL install must not stop estimates for profiles
        devices.log.warning("OpenCL device discovery failed: %s", e)
        return []


def choose_device(text: str | None, local: Sequence[Device]) -> Device:
    """``select_device`` among ``local``, devices discovered already (a front end that keeps its own
    list, measured peaks included), then the shipped profiles: no text picks the first local GPU, else
    the first local device, else a GPU profile. DeviceError names the known devices when none matches."""
    return profiles.select_device(text, local)


def select_device(text: str | None, *, discover: bool = True) -> Device:
    """The device ``--device TEXT`` names everywhere: a case-insensitive substring of a local device's or
    platform's name, then of a shipped profile's (``profiles.select_device``)."""
    return profiles.select_device(text, local_devices() if discover else ())


@dataclass(frozen=True)
class Resolved:
    """A kernel's scenario and what the resolver had to say about the way it was written."""

    scenario: Scenario
    problem: str | None = None  # why a written layer could not be used (the layers under it were)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    """One kernel of a file, compiled, analysed and with its scenario: what predict and bench work on."""

    path: Path | None
    text: str
    report: FileReport
    kernel: KernelReport
    parsed: frontend.Kernel | None  # the tolerant parse of the same kernel (directive, loops, lines)
    scenario: Scenario
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Workspace:
    """The settings one front end works with (a CLI invocation, an editor's workspace folder)."""

    root: Path | None = None  # the workspace folder: clperf.toml is looked up no higher
    build_options: str = ""  # the front end's own options, after clperf.toml and the file's directives
    options_from: str = "--build-options"  # where ``build_options`` came from, for messages
    scenario: ScenarioSpec = field(default_factory=ScenarioSpec)  # the editor's default scenario
    run_kernels: bool = False  # PoCL's own code may be counted by running the kernel (the user's choice)

    # ---- text and compile ------------------------------------------------------------------------------

    def read(self, path: str | Path) -> str:
        return read_source(path).text  # regular files only, size-limited; InputError says why not

    def analyze(self, text: str, path: Path | None = None, *, unroll_threshold: int = 0) -> FileReport:
        """Compile ``text`` (clang) and analyse every kernel in it (cached per text and options)."""
        return analyze_text(text, path, self.build_options, root=self.root, options_from=self.options_from,
                            unroll_threshold=unroll_threshold)

    def runtime_options(self, text: str, path: Path | None, *, strict: bool = False) -> str:
        """The build options the analysis compiled with, as an OpenCL runtime's ``clBuildProgram`` takes
        them: what a benchmark of ``text`` must build with. Refused options are left out, or with
        ``strict`` are an InputError (a command that stops on a bad option)."""
        if strict:
            return runner.options_text(resolve_build_options(path, text, self.build_options, root=self.root))
        gathered = gather_build_options(path, text, self.build_options, root=self.root,
                                        extra_source=self.options_from)
        return runner.options_text(gathered.options)

    # ---- the scenario ----------------------------------------------------------------------------------

    def toml_scenario(self, path: Path | None, kernel: str) -> ScenarioSpec:
        """``[kernels.NAME] scenario = "..."`` of the clperf.toml that applies to ``path`` (the one build
        options come from: looked up no higher than the repository, and only if it is the user's)."""
        config = find_config(path.parent, root=self.root) if path is not None else None
        if config is None:
            return ScenarioSpec()
        entry = read_config(config).get("kernels", {}).get(kernel, {})
        text = entry.get("scenario") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            return ScenarioSpec()
        try:
            return parse_flags(text)
        except ScenarioError as e:
            raise ScenarioError(f"{config}: [kernels.{kernel}] scenario: {e}") from e

    def spec(self, kernel: frontend.Kernel, *, path: Path | None = None,
             command_line: ScenarioSpec | None = None,
             strict: bool = False) -> tuple[ScenarioSpec, list[str]]:
        """The kernel's scenario as written, layer over layer: ``clperf.toml`` < the editor's settings <
        the directive < the command line; and why a layer was left out. With ``strict`` (a command line
        that gives no scenario of its own), a broken directive or toml entry is a ScenarioError instead."""
        cli = command_line or ScenarioSpec()
        layers: list[tuple[str, Callable[[], ScenarioSpec]]] = [
            ("the clperf.toml scenario", lambda: self.toml_scenario(path, kernel.name)),
            ("the clperf.scenario setting", lambda: self.scenario),
            (f"the // clperf: directive of {kernel.name} (line {kernel.directive_line})",
             lambda: parse_flags(kernel.directive) if kernel.directive else ScenarioSpec()),
        ]
        spec, problems = ScenarioSpec(), []
        for name, layer in layers:
            try:
                spec = spec.merged(layer())
            except ScenarioError as e:
                if strict and cli.is_empty():
                    raise ScenarioError(f"{name}: {e}") from e
                problems.append(f"{name} was ignored: {e}")
        return spec.merged(cli), problems

    def resolve(self, kernel: frontend.Kernel, params: Sequence[Param], *, path: Path | None = None,
                required_local: Sequence[int] | None = None,
                command_line: ScenarioSpec | None = None, strict: bool = False) -> Resolved:
        """The kernel's scenario (``spec``) with the documented defaults for whatever is still missing
        (``required_local``: the kernel's reqd_work_group_size). When the layers together cannot be
        resolved, the command line's alone are, and ``problem`` says why (with ``strict``: ScenarioError)."""
        spec, problems = self.spec(kernel, path=path, command_line=command_line, strict=strict)
        dims = kernel.dims_used
        root = path.parent if path is not None else None  # where file: fills are found
        try:
            scenario = resolve(spec, list(params), dims, required_local, data_root=root)
        except ScenarioError as e:
            if strict:
                raise
            problems.append(str(e))
            scenario = resolve(command_line or ScenarioSpec(), list(params), dims, required_local,
                               data_root=root)
        return Resolved(scenario, "; ".join(problems) or None, tuple(problems))

    def target(self, path: Path, kernel_name: str | None = None,
               command_line: ScenarioSpec | None = None) -> Target:
        """Read, compile and analyse ``path``; pick the kernel (the only one, or ``kernel_name``); resolve
        its scenario. InputError when the file has no such kernel or it does not compile."""
        text = self.read(path)
        report = self.analyze(text, path)
        names = [k.name for k in report.kernels]
        if not names:
            raise InputError(f"no kernel could be analysed in {path}{_first_error(report, path)}")
        if kernel_name is None:
            if len(names) > 1:
                raise InputError(f"{path} has {len(names)} kernels ({', '.join(names)}): "
                                 "choose one with --kernel")
            kernel_name = names[0]
        kernel = next((k for k in report.kernels if k.name == kernel_name), None)
        if kernel is None:
            raise InputError(f"no kernel {kernel_name!r} in {path} (kernels: {', '.join(names)})")
        if not kernel.analyzed:
            raise InputError(f"kernel {kernel_name!r} could not be compiled{_first_error(report, path)}")
        parsed = next((k for k in frontend.parse(text) if k.name == kernel_name), None)
        r = self.scenario_of(text, path, kernel, command_line, strict=True, parsed=parsed)
        return Target(path, text, report, kernel, parsed, r.scenario, r.warnings)

    def scenario_of(self, text: str, path: Path | None, kernel: KernelReport,
                    command_line: ScenarioSpec | None = None, *, strict: bool = False,
                    parsed: frontend.Kernel | None = None) -> Resolved:
        """``resolve`` for an analysed kernel of ``text`` (its directive found by the tolerant parse)."""
        parsed = parsed or next((k for k in frontend.parse(text) if k.name == kernel.name), None)
        if parsed is None:  # the parse missed what clang compiled (a macro-made kernel): no directive
            return Resolved(resolve(command_line or ScenarioSpec(), list(kernel.params), 1,
                                    kernel.required_local, data_root=path.parent if path else None))
        return self.resolve(parsed, kernel.params, path=path, required_local=kernel.required_local,
                            command_line=command_line, strict=strict)

    def compiler_params(self, text: str, path: Path | None, kernel: str) -> tuple[Param, ...]:
        """``kernel``'s parameters with the compiler's types (typedefs and structs resolved), as a
        benchmark allocates them; the front end's when clang cannot build the file."""
        return runner.kernel_signature(text, kernel, str(path) if path else "",
                                       self.runtime_options(text, path)).params

    # ---- the counting run -----------------------------------------------------------------------------

    def count(self, text: str, path: Path | None, kernel: KernelReport, scenario: Scenario, *,
              data: Mapping[str, np.ndarray] | None = None, budget_s: float = 8.0,
              store: CountStore | None = None) -> Counts | None:
        """A counting run of the launch (``clperf.benchmark.counting``): the kernel interpreted by Oclgrind
        on a sample of its work-groups with the scenario's data (or ``data``: buffer name -> array), for
        exact block counts; None (the reason in the log) when it cannot be made. It never reaches the OS
        (an interpreter in an isolated child), and is cached per kernel, scenario and data (in ``store``,
        by default the per-user cache)."""
        return counting.count(text, kernel.name, scenario, build_options=self.build_options, data=data,
                              budget_s=budget_s, path=path, store=store)

    @staticmethod
    def memory(kernel: KernelReport, scenario: Scenario, device: Device,
               counts: Counts | None) -> MemoryTraffic | None:
        """The launch's traffic through ``device``'s caches from the counting run's trace (``memory.py``:
        sectors per warp request, L1 and L2 reuse, occupancy), or None where there is no trace or the
        device's profile has no cache facts (a CPU, a GPU clperf has no profile of)."""
        mem = profiles.facts(device).gpu_memory
        if mem is None or counts is None or counts.trace is None or not len(counts.trace):
            return None
        group = math.prod(counts.local_size)
        local, occ = Workspace._occupancy(kernel, scenario, device, mem, group)
        trace = counts.trace
        groups = np.unique(trace["group"])
        # the work-items of each traced group whose accesses tell: all of a group that finished; of one
        # abandoned at the time limit, those it finished, in whole warps (the first work-items finish
        # first; a warp's requests coalesce as all its lanes do, so a part of one misstates them)
        whole = min(mem.warp_size, group)
        usable = np.array([group if counts.groups_run else
                           counts.abandoned.get(int(g), 0) // whole * whole for g in groups])
        at = usable[np.searchsorted(groups, trace["group"])]
        item = trace["item"]
        lanes = item < at
        counts_trace = trace[lanes | ((item == memory.NO_ITEM) & (at == group))]  # a whole group's copies
        # each group's share of a whole one: its usable work-items, times the part of their accesses
        # kept (a work-item keeps its first ones up to a cap, the plugin counts all it made)
        kept = np.bincount(np.searchsorted(groups, trace["group"][lanes]), minlength=len(groups))
        traced = 0.0
        for k, g in enumerate(groups):
            made = sum(counts.trace_made.get(int(g), ())[:usable[k]])
            traced += usable[k] / group * (min(1.0, kept[k] / made) if made else 1.0)
        if counts.groups_run:  # groups as busy as the sample's: its accesses per work-item over theirs
            traced *= counts.trace_weight
        if traced <= 0:
            lockstep = Workspace._lockstep_share(kernel, scenario, trace, group)
            if lockstep is None:
                return None
            first = trace["group"] == trace["group"][0]  # the group _lockstep_share read
            traced, counts_trace = lockstep, trace[first]
        sizes = {i: float(scenario.args.get(p.name, 0)) * (type_size(p.type) or 0)
                 for i, p in enumerate(kernel.params) if p.pointer and p.address_space != "local"}
        traffic = memory.memory_traffic(counts_trace, counts.groups_total, mem,
                                        groups_per_sm=max(1, occ.groups_per_sm), sms=device.compute_units,
                                        local_bytes_per_group=local, traced_groups=traced, buffer_bytes=sizes)
        return replace(traffic, longest_group=counts.longest_group)

    @staticmethod
    def partial_atomics(kernel: KernelReport, scenario: Scenario, device: Device, counts: Counts | None
                        ) -> float:
        """What a warp request of the global atomics costs by the trace of a counting run whose work-items
        make no whole warp of a group (``memory.partial_atomic_ns``; ``memory`` answers None for it): a
        long loop updating the group's own histogram contends as its first work-items show. 0 where there
        is no such trace, or it holds no global atomics."""
        mem = profiles.facts(device).gpu_memory
        if mem is None or counts is None or counts.trace is None or not len(counts.trace):
            return 0.0
        occ = Workspace._occupancy(kernel, scenario, device, mem, math.prod(counts.local_size))[1]
        sms = device.compute_units
        resident = min(counts.groups_total / max(1, sms), max(1, occ.groups_per_sm))
        return memory.partial_atomic_ns(counts.trace, mem, resident, sms)

    @staticmethod
    def _occupancy(kernel: KernelReport, scenario: Scenario, device: Device, mem: GpuMemory,
                   group: int) -> tuple[int, Occupancy]:
        """A group's ``__local`` bytes (its local pointer arguments' sizes) and the launch's occupancy."""
        local = sum(int(scenario.args.get(p.name, 0)) * (type_size(p.type) or 0) for p in kernel.params
                    if p.pointer and p.address_space == "local")
        return local, memory.occupancy(group, local, mem, max_group_items=device.max_work_group_size or 1024,
                                       max_local_per_group=device.local_mem_bytes)

    @staticmethod
    def _lockstep_share(kernel: KernelReport, scenario: Scenario, trace: np.ndarray, group: int
                        ) -> float | None:
        """The share of a whole work-group that the trace's first group holds where none of its work-items
        finished but all ran alike (a loop with a barrier in it keeps them in step: each has about as many
        accesses traced as the others), so that its warps' requests are whole: its accesses over the
        accesses the static analysis counts for a group, when it can count them all for this launch.
        None otherwise: one work-item ran far ahead of the rest, or a trip count is not known."""
        first = trace[trace["group"] == trace["group"][0]]
        _, per_item = np.unique(first["item"], return_counts=True)
        if len(per_item) < group or per_item.min() < 0.9 * per_item.max():
            return None
        if Workspace.needs_count(kernel, scenario):
            return None
        expected = sum(n for _, n in kernel.access_counts_for(count_args(scenario))) * group
        share = len(first) / expected if expected > 0 else 0.0
        return share if 0.0 < share < 1.0 else None

    @staticmethod
    def needs_count(kernel: KernelReport, scenario: Scenario) -> bool:
        """Whether a counting run can tell more than the static analysis: a loop left in the compiled
        kernel whose trip count it cannot work out for this launch (one that depends on data, on the
        work-item, or on a value it cannot follow)."""
        args = count_args(scenario)
        counted = {i for chain, _ in kernel.op_groups for i in chain} | {i for a in kernel.accesses
                                                                        for i in a.loops}
        return any(kernel.loops[i].trips_for(args) is None for i in counted if i < len(kernel.loops))

    @staticmethod
    def counted(kernel: KernelReport, counts: Counts | None) -> KernelReport:
        """``kernel`` with the counts the counting run measured: its blocks' executions, the loops' trip
        counts (unchanged without one)."""
        if counts is None:
            return kernel
        if counts.unfinished_only:  # not one work-item finished: inner loops' trips, branches' shares so far
            runs, lost = counts.unfinished, counts.unmatched
            return kernel.with_trips(kernel.inner_trips_from(runs, lost)).with_shares(runs, lost)
        return kernel.with_counts(counts.blocks, counts.unmatched)

    # ---- estimates -------------------------------------------------------------------------------------

    def estimate(self, kernel: KernelReport, scenario: Scenario, device: Device, text: str, *,
                 use_cache: bool = True, use_model: bool = True, calibrate: bool = True,
                 deadline: float | None = None, counts: Counts | None = None,
                 caches: bool = True, model: Path | None = None) -> Estimate:
        """``kernel``'s predicted time (``estimates.estimate``). With the counting run's ``counts``: its
        trip counts, and (``caches``) the traffic its trace gives through the device's caches. PoCL's own
        code is counted only when the user allowed running kernels, waited for until ``deadline``
        (``time.monotonic()``; None: until it is there). ``model``: a learned model's folder other than the
        shipped one. ScenarioError when ``device`` would refuse the launch."""
        estimates.check_launch(scenario, device, kernel.params)
        traffic_of, atomic_ns = self._traced(kernel, scenario, device, counts) if caches else (None, 0.0)
        counter = pocl_code.COUNTER if self.run_kernels else None
        return estimates.estimate(self.counted(kernel, counts), scenario, device, source=text,
                                  build_options=self.build_options, use_cache=use_cache, use_model=use_model,
                                  calibrate=calibrate, counter=counter, code_deadline=deadline,
                                  memory=traffic_of, atomic_ns=atomic_ns, model=model)

    def refining(self, kernel: KernelReport, scenario: Scenario, device: Device, text: str,
                 est: Estimate | None) -> bool:
        """Whether ``est`` stands in for the estimate from PoCL's own code, which is still being counted."""
        if est is None or not self.run_kernels or est.model_name == estimates.COUNTED_MODEL:
            return False
        return estimates.counting(kernel, scenario, device, text, pocl_code.COUNTER, self.build_options)

    def doubts(self, kernel: KernelReport, scenario: Scenario, device: Device) -> list[str]:
        """What makes an estimate of ``kernel`` doubtful (loops counted once, buffers over memory)."""
        return estimates.doubts(kernel, scenario, device)

    def traffic(self, kernel: KernelReport, scenario: Scenario, device: Device,
                counts: Counts | None = None) -> Traffic:
        """The roofline's bytes and operations of the whole launch (the hover's breakdown); with a
        counting run's ``counts``, as ``estimate`` reads them: its trip counts, and its trace through the
        device's caches (or, from a trace of part of a warp, the atomics' cost)."""
        if counts is None:
            return traffic(kernel, scenario, device.type)
        return estimates.roofline_estimate(self.counted(kernel, counts), scenario, device,
                                           *self._traced(kernel, scenario, device, counts))[1]

    def _traced(self, kernel: KernelReport, scenario: Scenario, device: Device, counts: Counts | None
                ) -> tuple[MemoryTraffic | None, float]:
        """What the counting run's trace gives the roofline: the traffic through the caches, or, where the
        trace holds only part of a warp of each group, the global atomics' cost of a warp request."""
        traced = self.memory(kernel, scenario, device, counts)
        return traced, 0.0 if traced is not None else self.partial_atomics(kernel, scenario, device, counts)

    # ---- fixes -----------------------------------------------------------------------------------------

    def fixes(self, text: str, report: FileReport, finding: Any, *, path: Path | None = None,
              device: Device | None = None, scenario: Scenario | None = None,
              deadline: float | None = None, predict: bool = True) -> list[rewrites.Rewrite]:
        """The rewrites for ``finding`` (``rewrites.available``), each titled with its predicted speedup on
        ``device``; both versions' own PoCL code is counted only where the user allowed running kernels
        (else only a counting already cached is used). ``predict`` False: no prediction at all."""
        return rewrites.available(text, report, finding, path=path, build_options=self.build_options,
                                  device=device, scenario=scenario, predict=predict,
                                  code_deadline=deadline, run_kernels=self.run_kernels)

    # ---- benchmarks ------------------------------------------------------------------------------------

    def benchmark(self, text: str, path: Path | None, kernel: str, scenario: Scenario | ScenarioSpec,
                  device: Device, *, policy: Policy | None = None, check: bool = False,
                  reference: tuple[str, str] | None = None, timeout_s: float = 60.0,
                  on_progress: Callable[[float, str], None] | None = None,
                  cancel: threading.Event | None = None, strict_options: bool = False) -> Measurement:
        """Run ``kernel`` for real on ``device`` in the isolated runner, built with the options the
        analysis compiled with (``strict_options``: a refused one is an InputError, not left out).
        Kernels run only when a user asks for this."""
        options = self.runtime_options(text, path, strict=strict_options)
        return runner.benchmark(text, kernel, scenario, device, file=str(path) if path else "",
                                build_options=options, policy=policy,
                                check=check, reference=reference, timeout_s=timeout_s,
                                on_progress=on_progress, cancel=cancel or threading.Event())

    @staticmethod
    def store(m: Measurement) -> str | None:
        """Keep a successful measurement for calibration; why not, when it could not be kept."""
        if m.status != "ok":
            return None
        try:
            store.record(m)
        except store.NotStored as e:  # a read-only or full state folder must not lose the result shown
            return str(e)
        return None

    def with_options(self, build_options: str, options_from: str | None = None) -> Workspace:
        return replace(self, build_options=build_options, options_from=options_from or self.options_from)


def _first_error(report: Any, path: Path) -> str:
    errors = [d for d in getattr(report, "diagnostics", ()) if d.severity == "error"]
    return f": {path}:{errors[0].line}:{errors[0].column}: {errors[0].message}" if errors else ""
