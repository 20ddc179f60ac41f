"""``clperf evaluate --devset DIR``: the predictor judged on real public kernels it never trained on.

A dev set is a folder with ``specs.json`` (launches as their host programs make them: file, kernel, build
options, global and local sizes, every argument) and one or more ``truth*.jsonl`` files of times measured
on a device (``median_ms`` per spec id). Ids are ``<suite>-<benchmark>[-<variant>]/<kernel>/<size>``.

Every launch is predicted for the device the times were measured on, by the shipped model and by the
roofline: statically (the sizes and scalar values of the spec), and with ``counting`` also from a counting
run of the launch with its exact data (``model+counts``, ``roofline+counts``). The data are the dev set's
own: the harness that measured the times (the dev set's ``measure.py``) builds every buffer from the
spec's fill and seed, and it is asked for them here, so the counting run sees what the timed launch saw.
The report gives MAPE, median APE, the shares within ±25% and 2x and the mean absolute log ratio, for
all launches and for those of at least 200 µs, and the pairwise order of launches of one benchmark at one
size (variants of the same computation: which one is faster; pairs within 5% of each other are noise and
skipped).

A dev set is for validation only: nothing here trains or fits on it.
"""

from __future__ import annotations

import importlib.util
import json
import math
import statistics
import sys
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from clperf.api import Workspace, select_device
from clperf.benchmark.counting import Counts
from clperf.benchmark.counting.store import CountStore
from clperf.core import paths
from clperf.core.argtypes import kernel_args
from clperf.core.errors import ClperfError, InputError
from clperf.core.records import Device, Param, Scenario, type_size
from clperf.predictor.analysis.pipeline import analyze_text

LONG_MS = 0.2  # launches at least this long are reported on their own: the ones users most want faster
PAIR_NOISE = math.log(1.05)
DEFAULT_DIR = Path(__file__).resolve().parents[3] / "shared" / "devset"
_DTYPE_BYTES = {"float32": 4, "int32": 4, "uint32": 4, "float64": 8, "int64": 8, "uint64": 8, "int16": 2,
                "uint16": 2, "int8": 1, "uint8": 1}
HARNESS_SEED = 12345  # the dev set harness's --seed default, which its times were measured with


@dataclass(frozen=True)
class Launch:
    id: str
    benchmark: str  # ``<suite>-<benchmark>`` without the variant
    size: str
    measured_ms: float
    predicted_ms: dict[str, float]  # model name -> predicted time
    problem: str | None = None  # why a model could not predict it


def _benchmark(spec_id: str) -> tuple[str, str]:
    head, _, rest = spec_id.partition("/")
    size = rest.rsplit("/", 1)[-1]
    return "-".join(head.split("-")[:2]), size


def load_truth(folder: Path) -> dict[str, float]:
    """Median time per spec id over every ``truth*.jsonl`` run (the median of the runs' medians)."""
    runs: dict[str, list[float]] = {}
    files = sorted(folder.glob("truth*.jsonl"))
    if not files:
        raise InputError(f"no truth*.jsonl in {folder}: a dev set needs measured times")
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            t = row.get("median_ms")
            if row.get("status") == "ok" and isinstance(t, (int, float)) and math.isfinite(t) and t > 0:
                runs.setdefault(str(row["id"]), []).append(float(t))
    return {k: statistics.median(v) for k, v in runs.items()}


def scenario_of(spec: dict[str, Any], params: Sequence[Param] = (),
                element_bytes: Mapping[str, int] | None = None) -> Scenario:
    """The spec's launch as a clperf Scenario: scalar values, buffer and ``__local`` lengths in elements of
    the kernel's parameter types (``params``: a ``float4*`` buffer the spec counts in floats holds a
    quarter as many elements; ``element_bytes``: each pointer's element size as the compiler lays it
    out, which also sizes structs)."""
    sizes = dict(element_bytes or {})
    for p in params:
        if p.pointer and p.name not in sizes and type_size(p.type):
            sizes[p.name] = int(type_size(p.type) or 0)
    args: dict[str, int | float] = {}
    for a in spec["args"]:
        if a["kind"] == "scalar":
            args[a["name"]] = a["value"]
            continue
        count = int(a["count"])
        elem, per = sizes.get(a["name"]), _DTYPE_BYTES.get(a["dtype"])
        # rounded up: a host may allocate a float3 as its three floats
        args[a["name"]] = -(-count * per // elem) if elem and per and elem > per else count
    local = tuple(spec["local"]) if spec.get("local") else None
    return Scenario(tuple(spec["global"]), local, args)


def _element_bytes(text: str, path: Path, options: str, kernel: str) -> dict[str, int]:
    """Each pointer parameter's element size as the compiler lays it out (structs included)."""
    try:
        infos = kernel_args(text, path, options).get(kernel, ())
    except ClperfError:
        return {}
    return {a.name: a.type.size for a in infos if a.pointer}


def build_options(spec: dict[str, Any], root: Path) -> str:
    """The spec's build options with its folders (``$D`` the kernel's, ``$R`` the kernels') made absolute:
    a relative ``-I`` is read against the kernel's folder."""
    root = root.resolve()
    path = root / spec["file"]
    return str(spec.get("build_options", "")).replace("$D", str(path.parent)).replace("$R", str(root))


def harness(folder: Path) -> ModuleType:
    """The dev set's own measuring harness (``measure.py``), loaded as a module for its input recipe."""
    path = folder / "measure.py"
    spec = importlib.util.spec_from_file_location("clperf_devset_harness", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise InputError(f"no measure.py in {folder}: the dev set's inputs cannot be built")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def launch_data(measure: ModuleType, spec: dict[str, Any], seed: int = HARNESS_SEED) -> dict[str, np.ndarray]:
    """The buffers the harness uploads for ``spec`` before its timed launches: its seeded generator
    (``HARNESS_SEED`` is its ``--seed`` default) drawn in argument order, as the harness draws them."""
    s = (seed * 1000003 + zlib.crc32(spec["id"].encode())) & 0xFFFFFFFF
    rng = np.random.default_rng(s)
    shared = {"seed": s}  # structures several buffers view (a sparse matrix's row pointers and columns)
    return {a["name"]: measure.make_host(rng, a, measure.DTYPES[a["dtype"]], shared)
            for a in spec["args"] if a["kind"] == "buffer"}


@dataclass(frozen=True)
class Setup:
    """What every launch of a dev set is predicted with: the same for each spec, in a plain run and in
    each Ray task (``devset_cluster``)."""

    folder: Path
    device: Device
    models: tuple[str, ...] = ("auto", "roofline")
    counting: bool = False
    budget_s: float = 8.0
    previous: Path | None = None  # an earlier model's folder, predicted beside the shipped one


# the report's name of each model a Setup can hold
_NAMES = {"auto": "model", "roofline": "roofline", "previous": "previous model"}


def measured_specs(folder: Path) -> list[tuple[dict[str, Any], float]]:
    """The specs with a measured time, in ``specs.json`` order, each with its time."""
    specs = json.loads((folder / "specs.json").read_text(encoding="utf-8"))
    truth = load_truth(folder)
    return [(spec, truth[spec["id"]]) for spec in specs if spec["id"] in truth]


# The dev set's traces (up to 64 MB a launch) pass the 1 GiB the per-user counting cache keeps
# (store.TRACE_FOLDER_BYTES): kept apart, with room for all of them, an evaluation after a change to the
# estimates alone counts nothing again.
DEVSET_TRACE_BYTES = 4 << 30


def devset_store() -> CountStore:
    """Where the dev set's counting runs are cached: ``devset-counting`` in the state folder."""
    return CountStore(folder=paths.state_dir() / "devset-counting", max_bytes=DEVSET_TRACE_BYTES)


def predict_all(folder: Path, device_name: str = "h200", models: Sequence[str] = ("auto", "roofline"),
                progress: bool = True, counting: bool = False, budget_s: float = 8.0,
                previous: Path | None = None) -> list[Launch]:
    """Predict every spec with a measured time; a spec that cannot be predicted keeps its reason. With
    ``counting``, each launch is also counted with its data (``budget_s`` each) and predicted again; with
    ``previous``, that model's folder predicts each beside the shipped model."""
    todo = measured_specs(folder)
    setup = Setup(folder, select_device(device_name), with_previous(models, previous), counting, budget_s,
                  previous)
    measure = harness(folder) if counting else None
    reports: dict[tuple[str, str], Any] = {}
    store = devset_store() if counting else None
    out: list[Launch] = []
    for i, (spec, measured_ms) in enumerate(todo):
        out.append(predict_one(setup, spec, measured_ms, measure, reports, store))
        if progress and sys.stderr.isatty():
            print(f"\r{i + 1}/{len(todo)} {spec['id'][:60]:<60}", end="", file=sys.stderr, flush=True)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    return out


def with_previous(models: Sequence[str], previous: Path | None) -> tuple[str, ...]:
    """The models to predict with: ``models``, and the previous model where there is one."""
    return tuple(models) + (("previous",) if previous is not None and "previous" not in models else ())


def predict_one(setup: Setup, spec: dict[str, Any], measured_ms: float, measure: ModuleType | None,
                reports: dict[tuple[str, str], Any], store: CountStore | None = None) -> Launch:
    """One launch predicted by every model, statically and (with ``measure``, the dev set's harness) from
    its counting run; ``reports`` keeps each file's analysis for the next spec of it, ``store`` is where
    counting runs are cached (default: the per-user cache; ``predict_all`` gives ``devset_store``). A spec
    that cannot be predicted keeps why."""
    sid = spec["id"]
    bench, size = _benchmark(sid)
    root = setup.folder / "kernels"
    opts = build_options(spec, root)
    path = root / spec["file"]
    predicted: dict[str, float] = {}
    problem = None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        key = (spec["file"], opts)
        if key not in reports:
            reports[key] = analyze_text(text, path, opts)
        kernel = next((k for k in reports[key].kernels if k.name == spec["kernel"]), None)
        if kernel is None or not getattr(kernel, "analyzed", True):
            raise InputError(f"kernel {spec['kernel']} does not compile")
        scenario = scenario_of(spec, kernel.params, _element_bytes(text, path, opts, spec["kernel"]))
        ws = Workspace(build_options=opts)
        variants: dict[str, tuple[Counts | None, bool]] = {"": (None, False)}
        if measure is not None:
            counts = ws.count(text, path, kernel, scenario, data=launch_data(measure, spec),
                              budget_s=setup.budget_s, store=store)
            if counts is not None:  # its trip counts, then also its trace through the caches
                variants.update({"+counts": (counts, False), "+caches": (counts, True)})
        for suffix, (counts, caches) in variants.items():
            for m in setup.models:  # no counting of PoCL's own code: the dev set's device is a GPU
                est = ws.estimate(kernel, scenario, setup.device, text, use_cache=False,
                                  use_model=m != "roofline", calibrate=False, counts=counts, caches=caches,
                                  model=setup.previous if m == "previous" else None)
                predicted[_NAMES[m] + suffix] = est.time_ms
        if measure is not None:  # as `clperf predict` answers: from the trace where there is one
            for base in [_NAMES[m] for m in setup.models if _NAMES[m] in predicted]:
                predicted[f"{base}, as predict"] = predicted.get(f"{base}+caches", predicted[base])
    except (ClperfError, OSError, ValueError, KeyError) as e:
        problem = f"{type(e).__name__}: {e}"
    return Launch(sid, bench, size, measured_ms, predicted, problem)


def metrics(pairs: Iterable[tuple[float, float]]) -> dict[str, float | int | None]:
    """(predicted, measured) -> MAPE, median APE, within ±25% / 2x, mean |log ratio|."""
    p = [(a, b) for a, b in pairs if a > 0 and b > 0]
    if not p:
        return {"n": 0, "mape": None, "median_ape": None, "within_25": None, "within_2x": None,
                "mean_abs_log": None}
    ape = [abs(a - b) / b for a, b in p]
    logs = [abs(math.log(a / b)) for a, b in p]
    return {"n": len(p), "mape": statistics.fmean(ape), "median_ape": statistics.median(ape),
            "within_25": sum(e <= 0.25 for e in ape) / len(p),
            "within_2x": sum(x <= math.log(2) for x in logs) / len(p),
            "mean_abs_log": statistics.fmean(logs)}


def pairwise(launches: Sequence[Launch], model: str) -> dict[str, float | int | None]:
    """Share of launch pairs of one benchmark at one size whose order the model gets right."""
    right = total = 0
    for i, a in enumerate(launches):
        for b in launches[i + 1:]:
            if (a.benchmark, a.size) != (b.benchmark, b.size) or model not in a.predicted_ms \
                    or model not in b.predicted_ms:
                continue
            truth = math.log(a.measured_ms / b.measured_ms)
            if abs(truth) < PAIR_NOISE:
                continue
            total += 1
            right += (math.log(a.predicted_ms[model] / b.predicted_ms[model]) > 0) == (truth > 0)
    return {"pairs": total, "pairwise": right / total if total else None}


def summarise(launches: Sequence[Launch]) -> dict[str, Any]:
    models = sorted({m for x in launches for m in x.predicted_ms})
    out: dict[str, Any] = {"launches": len(launches), "unpredicted": [x.id for x in launches if x.problem],
                           "models": {}}
    for m in models:
        have = [x for x in launches if m in x.predicted_ms]
        out["models"][m] = {
            "all": metrics((x.predicted_ms[m], x.measured_ms) for x in have),
            "long": metrics((x.predicted_ms[m], x.measured_ms) for x in have if x.measured_ms >= LONG_MS),
            **pairwise(have, m),
        }
    return out


def fmt(v: float | int | None, pct: bool = True) -> str:
    if v is None:
        return "–"
    return f"{v * 100:.1f}%" if pct else f"{v:.2f}"


def render(summary: dict[str, Any], launches: Sequence[Launch], header: Sequence[str]) -> str:
    lines = ["# Dev-set evaluation: real public kernels", "", *header, "",
             "![predicted against measured, one panel per model](devset.png)", "",
             f"{summary['launches']} launches with measured times; "
             f"{len(summary['unpredicted'])} could not be predicted.", "",
             "| model | launches | MAPE | median APE | ±25% | 2x | mean abs log | "
             f"≥ {LONG_MS * 1e3:.0f} µs: n | median APE | 2x | pairwise (pairs) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m, r in summary["models"].items():
        a, lg = r["all"], r["long"]
        lines.append(f"| {m} | {a['n']} | {fmt(a['mape'])} | {fmt(a['median_ape'])} | "
                     f"{fmt(a['within_25'])} | {fmt(a['within_2x'])} | {fmt(a['mean_abs_log'], False)} | "
                     f"{lg['n']} | "
                     f"{fmt(lg['median_ape'])} | {fmt(lg['within_2x'])} | "
                     f"{fmt(r['pairwise'])} ({r['pairs']}) |")
    lines += ["", "## Every launch", "", "| id | measured | " + " | ".join(summary["models"]) + " |",
              "|---|---|" + "---|" * len(summary["models"])]
    for x in sorted(launches, key=lambda x: x.id):
        cells = [f"{x.predicted_ms[m]:.4g} ms ({x.predicted_ms[m] / x.measured_ms:.2f}x)"
                 if m in x.predicted_ms else "–" for m in summary["models"]]
        lines.append(f"| {x.id} | {x.measured_ms:.4g} ms | " + " | ".join(cells) + " |")
    if summary["unpredicted"]:
        lines += ["", "## Not predicted", ""]
        lines += [f"- {x.id}: {x.problem}" for x in launches if x.problem]
    return "\n".join(lines) + "\n"


def plot(launches: Sequence[Launch], path: Path) -> None:
    """Predicted against measured time of every launch, one panel per model (log-log, the 2x band)."""
    try:
        import matplotlib
    except ImportError as e:
        raise InputError("the dev-set plot needs matplotlib: pip install 'clperf[train]'") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = sorted({m for x in launches for m in x.predicted_ms})
    fig, axes = plt.subplots(1, len(models), figsize=(4 * len(models), 4), squeeze=False)
    for ax, m in zip(axes[0], models, strict=True):
        pts = [(x.measured_ms, x.predicted_ms[m]) for x in launches if m in x.predicted_ms]
        ax.loglog([a for a, _ in pts], [b for _, b in pts], ".", alpha=0.6)
        lo = min(min(a, b) for a, b in pts) / 2 if pts else 1e-3
        hi = max(max(a, b) for a, b in pts) * 2 if pts else 1.0
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.plot([lo, hi], [2 * lo, 2 * hi], "k:", lw=0.6)
        ax.plot([lo, hi], [lo / 2, hi / 2], "k:", lw=0.6)
        ax.set_title(f"{m} ({len(pts)})")
        ax.set_xlabel("measured ms")
        ax.set_ylabel("predicted ms")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

