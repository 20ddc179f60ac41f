"""The heavy path, run in a worker thread on open and save: compile, analyse, resolve scenarios, estimate.

Plain logic (no lsprotocol): it returns an ``Analysis`` record for one ``(uri, version)``. Every stage is
allowed to fail on its own — a file clang rejects still gets its diagnostics, a kernel whose scenario is
invalid still gets an estimate on the documented defaults, a device with no peaks still gets diagnostics —
and each failure becomes a message a person can act on instead of an exception in the server.

Opening or saving a file runs none of its kernels unless ``clperf.poclCode`` is on (estimates from PoCL's
counted code on the local PoCL device: each kernel runs once, in an isolated worker). That setting is the
user's to give: the VS Code extension declares it a machine setting, which a workspace cannot set.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clperf.api import Workspace
from clperf.api import warm_up as warm_up_llvm
from clperf.core import extents, frontend
from clperf.core.errors import ClperfError, DeviceError
from clperf.core.records import Device, Estimate, Measurement, Scenario
from clperf.core.rulepages import rule_page
from clperf.predictor.model.roofline import bytes_per_execution
from clperf.server import history
from clperf.server.settings import Settings
from clperf.server.views import Problem, Span

log = logging.getLogger("clperf.server")

MAX_ANALYZED_CHARS = 1_000_000  # clang on a multi-megabyte file would hold a worker for seconds


@dataclass(frozen=True)
class KernelResult:
    name: str
    report: Any | None  # clperf.predictor.analysis.pipeline.KernelReport
    scenario: Scenario | None
    scenario_problem: str | None  # why the written scenario could not be used (defaults were)
    estimate: Estimate | None
    estimate_problem: str | None  # why there is no estimate
    loop_shares: Mapping[int, float] = field(default_factory=dict)  # loop line -> share of its memory traffic
    traffic: Any | None = None  # clperf.predictor.model.roofline.Traffic: bytes and ops of the whole launch
    last_measured: Measurement | None = None  # newest stored run of exactly this source
    doubts: tuple[str, ...] = ()  # what makes the estimate doubtful (``estimate.doubts``)
    pending: bool = False  # no estimate yet: the device's peaks are being measured (then analysed again)


@dataclass(frozen=True)
class Analysis:
    uri: str
    version: int | None
    source_hash: str
    device: Device | None
    problems: tuple[Problem, ...]
    kernels: Mapping[str, KernelResult]
    elapsed_ms: float
    refine: bool = False  # an estimate waits for PoCL's code of its kernel: analyse again soon
    bench_device: Device | None = None  # the local device a benchmark runs on (None: this machine has none)


@dataclass(frozen=True)
class Job:
    uri: str
    version: int | None
    path: str
    text: str
    settings: Settings
    device: Device | None
    device_problem: str | None = None
    # why ``device`` (a local one) has no peaks, and whether they are being measured (``server/peaks.py``)
    peaks_problem: str | None = None
    peaks_pending: bool = False
    bench_device: Device | None = None
    root: str = ""  # the workspace folder holding the file: clperf.toml is looked up no higher
    # True once this version is superseded (edited, closed): checked between kernels, the rest is skipped
    cancelled: Callable[[], bool] = field(default=lambda: False, compare=False, repr=False)


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def rule_doc_url(rule: str, settings: Settings) -> str | None:
    """Where the rule's page lives: ``clperf.docsBaseUrl`` + ``<rule>.md``, else the installed page (the
    checkout's docs/rules, or the wheel's copy)."""
    if settings.docs_base_url:
        return settings.docs_base_url.rstrip("/") + f"/{rule}.md"
    page = rule_page(rule)
    return page.as_uri() if page is not None else None


def _severity(value: Any, default: str) -> str:
    text = str(getattr(value, "value", value) or default).lower()
    return {"info": "information", "note": "information"}.get(text, text) \
        if text in ("error", "warning", "information", "hint", "info", "note") else default


def _span(item: Any) -> Span:
    line = max(1, int(getattr(item, "line", 1) or 1))
    col = max(1, int(getattr(item, "column", 1) or 1))
    end_line = int(getattr(item, "end_line", None) or line)
    end_col = int(getattr(item, "end_column", None) or col + 1)
    if (end_line, end_col) < (line, col):
        end_line, end_col = line, col + 1
    return Span(line, col, end_line, end_col)


def compile_problems(report: Any) -> list[Problem]:
    out = []
    for d in getattr(report, "diagnostics", ()):
        out.append(Problem(_span(d), _severity(getattr(d, "severity", None), "error"),  # type: ignore[arg-type]
                           str(d.message), code=getattr(d, "code", None) or None,
                           source=str(getattr(d, "source", "clang"))))
    return out


def finding_problems(report: Any, settings: Settings, text: str = "") -> list[Problem]:
    """Each finding as a diagnostic over its whole expression (the access, the loop header: ``extents``)
    where the text is given, else over the character the debug info names."""
    findings = list(getattr(report, "findings", ()))
    spans = [_span(f) for f in findings]
    if text:
        spans = [Span(*e) for e in extents.extend(text, [(s.line, s.column) for s in spans])]
    out = []
    for f, span in zip(findings, spans, strict=True):
        data = {"rule": f.rule, "kernel": f.kernel, **dict(getattr(f, "data", None) or {})}
        out.append(Problem(span, _severity(getattr(f, "severity", None), "information"),  # type: ignore[arg-type]
                           str(f.message), code=f.rule, doc_url=rule_doc_url(f.rule, settings), data=data))
    return out


def workspace(settings: Settings, root: str | Path | None = "") -> Workspace:
    """The API's view of an editor workspace folder with these settings."""
    return Workspace(root=Path(root) if root else None, build_options=settings.build_options,
                     options_from="the clperf.buildOptions setting", scenario=settings.scenario_spec,
                     run_kernels=settings.pocl_code)


def scenario_for(kernel: frontend.Kernel, params: Sequence[Any], settings: Settings,
                 required_local: Sequence[int] | None = None, *, path: str = "",
                 root: str = "") -> tuple[Scenario, str | None]:
    """The kernel's scenario by the API's one rule (clperf.toml < settings < directive), with why a
    written layer was left out. ``required_local``: the kernel's reqd_work_group_size."""
    r = workspace(settings, root).resolve(kernel, params, path=Path(path) if path else None,
                                          required_local=required_local)
    return r.scenario, r.problem


def _estimate(ws: Workspace, report: Any, scenario: Scenario,
              job: Job) -> tuple[Estimate | None, Any, str | None]:
    """The estimate and the roofline's traffic (bytes moved, ops) for the hover's breakdown. On the local
    PoCL device with ``clperf.poclCode`` on, the estimate from PoCL's own code is used once it is there;
    it is not waited for (a second or two per kernel): ``Workspace.refining`` says when asking again will
    give it."""
    if job.device is None:
        return None, None, job.device_problem or "no target device"
    try:
        est = ws.estimate(report, scenario, job.device, job.text, deadline=time.monotonic())
        return est, ws.traffic(report, scenario, job.device), None
    except DeviceError as e:  # no peaks: the server's account of them says more than the model's
        return None, None, job.peaks_problem or str(e)
    except ClperfError as e:
        return None, None, str(e)


def analyze(job: Job) -> Analysis:
    """Everything the views need for one version of one document."""
    start = time.perf_counter()
    if len(job.text) > MAX_ANALYZED_CHARS:
        msg = (f"clperf does not analyse files over {MAX_ANALYZED_CHARS // 1000} k characters "
               f"(this one has {len(job.text) // 1000} k)")
        return Analysis(job.uri, job.version, source_hash(job.text), job.device,
                        (Problem(Span.at(1, 1, 1), "information", msg, code="file-too-large"),), {}, 0.0,
                        bench_device=job.bench_device)
    ws = workspace(job.settings, job.root)
    path = Path(job.path) if job.path else None
    report = ws.analyze(job.text, path)
    problems = compile_problems(report) + finding_problems(report, job.settings, job.text)
    parsed = {k.name: k for k in frontend.parse(job.text)}
    digest = source_hash(job.text)
    kernels: dict[str, KernelResult] = {}
    refine = False
    for kr in getattr(report, "kernels", ()):
        if job.cancelled():  # its result would be dropped: free the worker for the newer version
            break
        fk = parsed.get(kr.name)
        if fk is None:
            continue
        resolved = ws.resolve(fk, kr.params or fk.params, path=path, required_local=kr.required_local)
        scenario, scen_problem = resolved.scenario, resolved.problem
        if scen_problem:
            line = fk.directive_line or fk.header_line
            problems.append(Problem(Span.at(line, 1, 1), "warning",
                                    f"scenario of {kr.name}: {scen_problem}; estimating with the defaults",
                                    code="invalid-scenario"))
        if getattr(kr, "analyzed", True):
            est, traffic, est_problem = _estimate(ws, kr, scenario, job)
            refine = refine or (job.device is not None
                                and ws.refining(kr, scenario, job.device, job.text, est))
        else:
            est, traffic, est_problem = None, None, "the file does not compile"
        kernels[kr.name] = KernelResult(kr.name, kr, scenario, scen_problem, est, est_problem,
                                        loop_shares(kr, fk, scenario, job.device), traffic,
                                        history.last_measured(kr.name, digest),
                                        tuple(ws.doubts(kr, scenario, job.device))
                                        if est is not None and job.device is not None else (),
                                        pending=est is None and job.peaks_pending
                                        and est_problem == job.peaks_problem)
    elapsed = (time.perf_counter() - start) * 1e3
    return Analysis(job.uri, job.version, digest, job.device, tuple(problems), kernels, elapsed, refine,
                    job.bench_device)


def warm_up() -> None:
    """Load LLVM (llvmlite, ~0.5 s) before the first file needs it."""
    try:
        warm_up_llvm()
    except Exception:
        log.warning("cannot load LLVM", exc_info=True)


def failed(job: Job, error: BaseException) -> Analysis:
    """The analysis of a file the pipeline itself choked on: one diagnostic instead of silence."""
    msg = f"clperf could not analyse this file: {type(error).__name__}: {error}"
    return Analysis(job.uri, job.version, source_hash(job.text), job.device,
                    (Problem(Span.at(1, 1, 1), "warning", msg, code="internal-error"),), {}, 0.0,
                    bench_device=job.bench_device)


def loop_shares(report: Any, kernel: frontend.Kernel, scenario: Scenario,
                device: Device | None) -> dict[int, float]:
    """Share of the kernel's memory traffic issued inside each loop (by the roofline's traffic model).

    The estimate is dominated by traffic for memory-bound kernels, so this is the loop's share of the time
    there; without per-access counts there is nothing honest to show and the map stays empty.
    """
    if device is None or not hasattr(report, "access_counts_for"):
        return {}
    try:
        counts = list(report.access_counts_for(dict(scenario.args)))
    except (ClperfError, ArithmeticError, ValueError, TypeError):
        return {}
    per_access = [(a, float(n) * bytes_per_execution(a, scenario.args, device.type)) for a, n in counts
                  if getattr(a, "address_space", "global") in ("global", "constant")]
    total = sum(b for _, b in per_access)
    if total <= 0:
        return {}
    shares = {}
    for loop in kernel.loops:
        inside = sum(b for a, b in per_access if loop.line <= getattr(a, "line", 0) <= loop.end_line)
        shares[loop.line] = inside / total
    return shares
