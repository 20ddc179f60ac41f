"""Training examples: every usable record of the datasets, with its kernel's source found by hash, compiled
and analysed once per source, its features evaluated for the record's scenario and device, and the target
``log(measured / roofline)``. Examples are cached under ``state_dir()/features`` (numpy, no pickle), each
traced launch's counting run also on its own, reduced (JSON lines).

Traced examples: one launch of each kernel on a GPU clperf has cache facts of (``traced_choice``) is also
counted (``clperf.benchmark.counting``: Oclgrind runs it with the data the benchmark timed it with) and
enters a second time with what ``predict`` gives the model after a counting run: the counted trip counts and
the traffic through the device's caches from the run's trace (``Workspace.memory``). The model so learns the
correction of the roofline a trace gives, not only of the static one."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import logging
import os
import sys
import textwrap
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from clperf.api import Workspace
from clperf.benchmark.corpus import family_of
from clperf.benchmark.counting import Counts
from clperf.core import children, paths
from clperf.core.compile import INLINE_THRESHOLD, clang_command
from clperf.core.frontend import inline_helpers
from clperf.core.records import Device, Scenario
from clperf.predictor.analysis.pipeline import analyze_text
from clperf.predictor.model import features, profiles, tokenizer
from clperf.predictor.model import roofline as rl
from clperf.predictor.model.memory import MemoryTraffic
from clperf.predictor.training.datasets import Sources, expand_data, read_records, sha

log = logging.getLogger(__name__)

FEATURES_VERSION = "24"  # part of the cache key and of a model's meta: bump when the features change
TRACED_PER_KERNEL = 1  # launches of each kernel also given with a counting run's trace
COUNT_BUDGET_S = 4.0  # each counting run's budget (the counts are cached per launch and budget)


@dataclass
class Examples:
    """One row per measurement; kernels (code) listed once and referenced by index."""

    X: np.ndarray  # (N, F) raw features
    y: np.ndarray  # (N,) log(measured / roofline)
    cls: np.ndarray  # (N,) measured bandwidth-utilisation class
    roof_ms: np.ndarray  # (N,) roofline estimate
    meas_ms: np.ndarray  # (N,) measured median
    dram_bytes: np.ndarray  # (N,) effective bytes, for the utilisation of any predicted time
    peak_bw: np.ndarray  # (N,) GB/s the features used
    kernel: np.ndarray  # (N,) index into kernel_keys
    traced: np.ndarray  # (N,) bool: features from a counting run's counts and trace (else static)
    device: list[str]  # (N,) device name
    kernel_keys: list[str]  # "source_hash|build_options|kernel"
    kernel_names: list[str]
    kernel_family: list[str]
    kernel_generated: list[bool]
    kernel_text: list[str]  # tokenizer input (kernel_text)
    names: list[str]  # feature names
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> Device JSON (peaks used)
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.y)


def cache_path(data: Sequence[Path], traced: int = TRACED_PER_KERNEL) -> Path:
    """Keyed by the datasets' contents (not their paths or times), so a fresh clone, or another machine
    given the cached folder, finds the examples of the same data; and by the features', the roofline's and
    the kept counting runs' versions, so a change to any of them builds the examples again."""
    h = hashlib.sha256(f"{FEATURES_VERSION}|{rl.MODEL_VERSION}|{_counted_version()}|{traced}|{COUNT_BUDGET_S}"
                       .encode())
    for p in expand_data(data):
        h.update(p.read_bytes())
    return paths.state_dir() / "features" / f"examples-{h.hexdigest()[:16]}"


def build(data: Sequence[Path], *, sources: Sequence[Path] = (), progress: bool = False,
          use_cache: bool = True, traced: int = TRACED_PER_KERNEL) -> Examples:
    """Examples from datasets (cached on disk per dataset contents); ``traced``: launches per kernel also
    given with a counting run (0: static examples only). A traced launch's counting run is also kept on
    its own, reduced (``_CountedLaunches``), so examples of a dataset with a part added, or of new
    features, count only the launches never counted before: the counting runs are most of the time a
    build takes."""
    cache = cache_path(data, traced)
    if use_cache and (cache / "arrays.npz").exists():
        try:
            return _load_examples(cache)
        except (OSError, ValueError, KeyError) as e:
            log.warning("rebuilding the example cache %s: %s", cache, e)
    ex = _build(read_records(data), Sources(sources, data), progress, traced)
    if use_cache:
        try:
            _save_examples(ex, cache)
        except OSError as e:
            log.warning("cannot cache examples in %s: %s", cache, e)
    return ex


def encode_kernels(ex: Examples, tok: Any, max_len: int) -> list[list[int]]:
    """Each kernel's token ids (the code encoder's input), in ``kernel_keys`` order."""
    return [tokenizer.encode(tok, t, max_len) for t in ex.kernel_text]


class _Rows:
    """The columns of ``Examples`` as they are gathered, one measurement (and each new kernel) at a time."""

    def __init__(self) -> None:
        self.names = features.names()
        self.rows: list[list[float]] = []
        self.ys: list[float] = []
        self.cls: list[int] = []
        self.roof: list[float] = []
        self.meas: list[float] = []
        self.dram: list[float] = []
        self.bws: list[float] = []
        self.kidx: list[int] = []
        self.traced: list[bool] = []
        self.devs: list[str] = []
        self.keys: dict[str, int] = {}
        self.k_names: list[str] = []
        self.k_fam: list[str] = []
        self.k_gen: list[bool] = []
        self.k_text: list[str] = []
        self.devices: dict[str, dict[str, Any]] = {}
        self.skipped: dict[str, int] = defaultdict(int)

    def add_kernel(self, key: str, rec: dict[str, Any], code: str) -> int:
        if key not in self.keys:
            self.keys[key] = len(self.keys)
            self.k_names.append(rec["kernel"])
            fam = family_of(rec["kernel"])
            if fam == "unknown" and rec.get("file"):
                fam = family_of(str(rec["file"]))
            self.k_fam.append(fam)
            self.k_gen.append(fam.startswith("gen-"))
            self.k_text.append(code)
        return self.keys[key]

    def add_row(self, kernel: int, rec: dict[str, Any], device: Device, f: Any, t: Any, r: Any,
                traced: bool = False) -> None:
        self.add_values(kernel, rec, device, features.as_list(f, self.names), r.time_ms, t.effective_bytes,
                        traced)

    def add_values(self, kernel: int, rec: dict[str, Any], device: Device, row: list[float], roof_ms: float,
                   effective_bytes: float, traced: bool) -> None:
        bw = profiles.peaks(device)[0]
        m = float(rec["median_ms"])
        self.rows.append(row)
        self.ys.append(rl.log_ratio(m, roof_ms))
        self.cls.append(features.util_class(effective_bytes / (m * 1e-3) / (bw * 1e9)))
        self.roof.append(roof_ms)
        self.meas.append(m)
        self.dram.append(effective_bytes)
        self.bws.append(bw)
        self.kidx.append(kernel)
        self.traced.append(traced)
        self.devs.append(device.name)
        self.devices[device.name] = device.to_json()

    def examples(self) -> Examples:
        return Examples(
            X=np.asarray(self.rows, dtype=np.float32).reshape(len(self.rows), len(self.names)),
            y=np.asarray(self.ys, dtype=np.float32), cls=np.asarray(self.cls, dtype=np.int64),
            roof_ms=np.asarray(self.roof), meas_ms=np.asarray(self.meas), dram_bytes=np.asarray(self.dram),
            peak_bw=np.asarray(self.bws), kernel=np.asarray(self.kidx, dtype=np.int64),
            traced=np.asarray(self.traced, dtype=bool).reshape(len(self.rows)), device=self.devs,
            kernel_keys=list(self.keys), kernel_names=self.k_names, kernel_family=self.k_fam,
            kernel_generated=self.k_gen, kernel_text=self.k_text, names=self.names, devices=self.devices,
            skipped=dict(self.skipped))


def _build(records: list[dict[str, Any]], sources: Sources, progress: bool, traced: int = 0) -> Examples:
    out = _Rows()
    texts: dict[str, str] = {}
    t0 = time.monotonic()
    reports = _analyze_all(records, sources, progress)
    for i, rec in enumerate(records):
        if progress and i % 2000 == 0:
            print(f"\rexamples {i}/{len(records)} ({time.monotonic() - t0:.0f} s)", end="", file=sys.stderr)
        text = sources.find(rec)
        if text is None:
            out.skipped["source not found"] += 1
            continue
        opts = str(rec.get("build_options", ""))
        rk = (sha(text), opts)
        if rk not in reports:
            reports[rk] = _analyze_one((text, str(rec.get("file") or "kernel.cl"), opts))
        kernel = reports[rk].get(rec["kernel"])
        if kernel is None or not getattr(kernel, "analyzed", True):
            out.skipped["kernel not analysed"] += 1
            continue
        try:
            scenario = Scenario.from_json(rec["scenario"])
            device = Device.from_json(rec["device"])
            code = texts.get(rk[0] + "|" + rec["kernel"])
            if code is None:
                code = texts[rk[0] + "|" + rec["kernel"]] = tokenizer.kernel_text(text, rec["kernel"])
            f, t, r = features.compute(kernel, scenario, device, code)
        except Exception as e:  # noqa: BLE001 - one launch whose features fail is skipped, counted
            out.skipped[f"features failed: {type(e).__name__}"] += 1
            continue
        out.add_row(out.add_kernel(f"{rk[0][:16]}|{opts}|{rec['kernel']}", rec, code), rec, device, f, t, r)
    if traced:
        _add_traced(out, records, sources, traced, reports, progress)
    if progress:
        print(f"\rexamples {len(out.rows)} from {len(records)} records, {len(out.keys)} kernels "
              f"({time.monotonic() - t0:.0f} s); skipped: {dict(out.skipped) or 'none'}", file=sys.stderr)
    return out.examples()


def _analyze_one(job: tuple[str, str, str]) -> dict[str, Any]:
    text, where, opts = job
    try:
        return {k.name: k for k in analyze_text(text, Path(where), opts).kernels}
    except Exception as e:  # noqa: BLE001 - one kernel that fails analysis is skipped, counted
        log.debug("analysis failed for %s: %s", where, e)
        return {}


def _analyze_all(records: list[dict[str, Any]], sources: Sources, progress: bool
                 ) -> dict[tuple[str, str], dict[str, Any]]:
    """Every distinct (source, build options) analysed once, on all cores (clang and the IR walk take
    0.1-0.3 s per file; a dataset has thousands)."""
    jobs: dict[tuple[str, str], tuple[str, str, str]] = {}
    for rec in records:
        text = sources.find(rec)
        if text is None:
            continue
        opts = str(rec.get("build_options", ""))
        key = (sha(text), opts)
        if key not in jobs:
            jobs[key] = (text, str(rec.get("file") or "kernel.cl"), opts)
    keys = list(jobs)
    workers = max(1, os.cpu_count() or 1)
    if workers == 1 or len(keys) < 8:
        return {k: _analyze_one(jobs[k]) for k in keys}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    with ProcessPoolExecutor(workers, initializer=children.limit_self) as pool:  # they end with us
        for i, (k, rep) in enumerate(zip(keys, pool.map(_analyze_one, [jobs[k] for k in keys], chunksize=4),
                                         strict=True)):
            out[k] = rep
            if progress and i % 100 == 0:
                print(f"\ranalysed {i}/{len(keys)} sources", end="", file=sys.stderr)
    return out


def traced_choice(records: Sequence[dict[str, Any]], per_kernel: int) -> list[int]:
    """The records given again with a counting run: ``per_kernel`` launches of each kernel on each GPU
    whose profile has cache facts, picked by a hash of the launch (the same on every machine, and spread
    over the sizes a kernel was swept at)."""
    chosen: dict[tuple[str, str, str, str], list[tuple[str, int]]] = defaultdict(list)
    for i, rec in enumerate(records):
        device = rec.get("device") or {}
        if device.get("type") != "gpu" or profiles.facts(Device.from_json(device)).gpu_memory is None:
            continue
        key = (str(rec.get("source_hash", ""))[:16], str(rec.get("build_options", "")), str(rec["kernel"]),
               str(device.get("name")))
        h = hashlib.sha256(json.dumps([key, rec["scenario"]], sort_keys=True).encode()).hexdigest()
        chosen[key].append((h, i))
    return sorted(i for picks in chosen.values() for _, i in sorted(picks)[:per_kernel])


def _count_one(job: tuple[str, str, str, dict[str, Any], dict[str, Any]]) -> CountedLaunch | str:
    """One launch's counting run, reduced: its counts (the trace left out) and its traffic through the
    device's caches (``Workspace.memory``), or why there are none."""
    text, where, opts, scenario_json, device_json = job
    try:
        kernel = _analyze_one((text, where, opts)).get(scenario_json["kernel"])
        if kernel is None:
            return "kernel not analysed"
        scenario, device = Scenario.from_json(scenario_json["scenario"]), Device.from_json(device_json)
        ws = Workspace(build_options=opts)
        path = Path(where)
        counts = ws.count(text, path if path.is_file() else None, kernel, scenario, budget_s=COUNT_BUDGET_S)
        memory = ws.memory(kernel, scenario, device, counts)
        if counts is None or memory is None:
            return "no counting run" if counts is None else "no trace"
        return CountedLaunch(replace(counts, trace=None), memory)
    except Exception as e:  # noqa: BLE001 - one launch that cannot be counted is skipped, counted
        return f"counting failed: {type(e).__name__}"


def _traced_features(kernel: Any, rec: dict[str, Any], code: str, counted: CountedLaunch
                     ) -> tuple[list[float], float, float]:
    """A traced launch's features from its counting run: (features, roofline ms, effective bytes)."""
    scenario, device = Scenario.from_json(rec["scenario"]), Device.from_json(rec["device"])
    kernel = Workspace.counted(kernel, counted.counts)
    t = rl.with_memory(rl.traffic(kernel, scenario, device.type), counted.memory)
    f, t, r = features.compute(kernel, scenario, device, code, t)
    return features.as_list(f, features.names()), r.time_ms, t.effective_bytes


def _add_traced(out: _Rows, records: list[dict[str, Any]], sources: Sources, per_kernel: int,
                reports: dict[tuple[str, str], dict[str, Any]], progress: bool) -> None:
    """The traced examples (``traced_choice``) of the kernels ``out`` holds: each launch counted on all
    cores, or its counting run's reduction read back (``_CountedLaunches``), then its features."""
    jobs, picked = [], []
    for i in traced_choice(records, per_kernel):
        rec = records[i]
        text = sources.find(rec)
        opts = str(rec.get("build_options", ""))
        key = f"{sha(text)[:16]}|{opts}|{rec['kernel']}" if text is not None else ""
        if text is None or key not in out.keys:
            continue
        jobs.append((text, str(rec.get("file") or "kernel.cl"), opts,
                     {"kernel": rec["kernel"], "scenario": rec["scenario"]}, rec["device"]))
        picked.append((out.keys[key], rec, reports[(sha(text), opts)][rec["kernel"]]))
    t0 = time.monotonic()
    done = _CountedLaunches(paths.state_dir() / "features" / f"counted-{_counted_version()}.jsonl")
    results = {i: done.get(job) for i, job in enumerate(jobs)}
    missing = [i for i, res in results.items() if res is None]
    workers = max(1, min(os.cpu_count() or 1, len(missing)))
    with ProcessPoolExecutor(workers, initializer=children.limit_self) as pool:  # they end with us
        for n, (i, res) in enumerate(zip(missing, pool.map(_count_one, [jobs[i] for i in missing]),
                                         strict=True)):
            results[i] = res
            done.put(jobs[i], res)
            if progress and n % 50 == 0:
                print(f"\rcounted {n}/{len(missing)} launches ({time.monotonic() - t0:.0f} s; "
                      f"{len(jobs) - len(missing)} known)", end="", file=sys.stderr, flush=True)
    for (k, rec, kernel), got in zip(picked, (results[i] for i in range(len(jobs))), strict=True):
        if got is None or isinstance(got, str):
            out.skipped[f"traced: {got}"] += 1
            continue
        try:
            row, roof_ms, effective = _traced_features(kernel, rec, out.k_text[k], got)
        except Exception as e:  # noqa: BLE001 - one launch whose features fail is skipped, counted
            out.skipped[f"traced: features failed: {type(e).__name__}"] += 1
            continue
        out.add_values(k, rec, Device.from_json(rec["device"]), row, roof_ms, effective, True)
    if progress:
        print(file=sys.stderr)


@dataclass(frozen=True)
class CountedLaunch:
    """What a traced example keeps of its counting run: the counts without their trace, and the traffic
    the trace gave through the device's caches. The roofline and the features are computed from it on
    each build, so a change to them needs no counting run again."""

    counts: Counts
    memory: MemoryTraffic

    def to_json(self) -> dict[str, Any]:
        return {"counts": self.counts.to_json(), "memory": asdict(self.memory)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CountedLaunch:
        """ValueError/TypeError/KeyError for a value of another shape."""
        mem = dict(d["memory"])
        mem["notes"] = tuple(str(n) for n in mem.get("notes", ()))
        if not all(isinstance(v, (int, float)) for k, v in mem.items() if k != "notes"):
            raise ValueError("memory traffic of another shape")
        return cls(Counts.from_json(d["counts"], None), MemoryTraffic(**mem))


# The code a counting run's reduction depends on (besides the launch, the device's cache facts and the
# budget, which are in each line's key): counted again when it changes. The run and its reduction (paths
# from the package's root, the same in a checkout and an installed copy); and, of larger modules, the
# compiler's command line, whose IR names the blocks, and the functions that give Oclgrind its source and
# reduce the trace to traffic.
_COUNTED_SOURCES = ("benchmark/counting", "predictor/model/memory.py")
# where counting runs are kept decides what is counted again, not what a count holds
_NOT_COUNTED = ("benchmark/counting/store.py",)
_COUNTED_FUNCTIONS = (clang_command, inline_helpers, Workspace.memory, Workspace._lockstep_share)


def _counted_version() -> str:
    """The counting budget and the code of ``_COUNTED_SOURCES`` (but ``_NOT_COUNTED``) and
    ``_COUNTED_FUNCTIONS``, hashed: Python by its syntax tree without docstrings (an edited comment or
    docstring counts nothing again), the plugin's C++ whole."""
    h = hashlib.sha256(f"{COUNT_BUDGET_S}|{INLINE_THRESHOLD}".encode())
    for fn in _COUNTED_FUNCTIONS:
        h.update(fn.__qualname__.encode() + b"\0" + _code_of(textwrap.dedent(inspect.getsource(fn))).encode())
    root = Path(__file__).resolve().parents[2]
    for part in _COUNTED_SOURCES:
        where = root / part
        for p in sorted(where.rglob("*") if where.is_dir() else [where]):
            if p.relative_to(root).as_posix() in _NOT_COUNTED:
                continue
            if p.suffix == ".py" and p.is_file():
                code = _code_of(p.read_text(encoding="utf-8")).encode()
            elif p.suffix == ".cpp" and p.is_file():
                code = p.read_bytes()
            else:
                continue
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + code)
    return h.hexdigest()[:16]


def _code_of(source: str) -> str:
    """A Python module's syntax tree without its docstrings, as text, the same from Python 3.11 and 3.12
    (3.12's trees give every function and class an empty ``type_params``, which is left out)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).replace(", type_params=[]", "")


class _CountedLaunches:
    """Each traced launch's counting run, reduced (``CountedLaunch``), or why it has none, on disk: one
    JSON line per launch keyed by the launch (source, options, kernel, scenario, device) and the device's
    cache facts. A dataset with a part added counts only the new part's launches; a change to the
    features or the roofline counts none again. A line that does not parse, or holds something else, is
    a miss."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: dict[str, CountedLaunch | str] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        for line in lines:
            try:
                key, res = json.loads(line)
                if isinstance(key, str):
                    self.rows[key] = res if isinstance(res, str) else CountedLaunch.from_json(res)
            except (ValueError, TypeError, KeyError, AttributeError):
                continue

    @staticmethod
    def key(job: tuple[Any, ...]) -> str:
        device = Device.from_json(job[4])
        facts = repr(profiles.facts(device).gpu_memory)
        return hashlib.sha256(json.dumps([job, facts], sort_keys=True, default=str).encode()).hexdigest()

    def get(self, job: tuple[Any, ...]) -> CountedLaunch | str | None:
        return self.rows.get(self.key(job))

    def put(self, job: tuple[Any, ...], res: CountedLaunch | str) -> None:
        if isinstance(res, str) and res.startswith("counting failed"):
            return  # an exception here may not happen again: count it again next time
        key = self.key(job)
        self.rows[key] = res
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps([key, res if isinstance(res, str) else res.to_json()]) + "\n")
        except OSError as e:
            log.warning("cannot keep a traced launch's counting run in %s: %s", self.path, e)


_ARRAYS = ("X", "y", "cls", "roof_ms", "meas_ms", "dram_bytes", "peak_bw", "kernel", "traced")
_LISTS = ("device", "kernel_keys", "kernel_names", "kernel_family", "kernel_generated", "kernel_text",
          "names", "devices", "skipped")


def _save_examples(ex: Examples, d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(d / "arrays.npz", **{k: getattr(ex, k) for k in _ARRAYS})
    (d / "lists.json").write_text(json.dumps({k: getattr(ex, k) for k in _LISTS}))


def _load_examples(d: Path) -> Examples:
    with np.load(d / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in _ARRAYS}
    lists = json.loads((d / "lists.json").read_text())
    if lists["names"] != features.names():
        raise ValueError("feature names changed")
    return Examples(**arrays, **lists)
