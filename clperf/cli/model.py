"""``clperf predict``, ``clperf train`` and ``clperf evaluate`` (registered from ``clperf.cli.predict``).

Thin: parse flags, call the predictor, print text or JSON. Errors are ``ClperfError``s that
``clperf.cli.main`` turns into one line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from clperf.api import Workspace, select_device
from clperf.cli import add_build_options, add_json_flag, add_scenario_flags, scenario_from_args
from clperf.core import units
from clperf.core.errors import InputError
from clperf.predictor.model.estimate import COUNTED_MODEL, model_dir
from clperf.predictor.model.speedup import own_code
from clperf.predictor.training import datasets, devset, devset_cluster
from clperf.predictor.training.config import TrainConfig


def register(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    p = sub.add_parser("predict", help="predict a kernel's run time on a device (no device needed)",
                       description="Predict the time of one kernel for a scenario on a local device or a "
                                   "shipped device profile (--device h200).")
    p.add_argument("file", type=Path, help="OpenCL C file")
    p.add_argument("--kernel", "-k", help="kernel name (default: the only kernel in the file)")
    p.add_argument("--device", "-d", help="substring of a device or platform name (local devices first, "
                                          "then shipped profiles: h200, pocl, intel)")
    p.add_argument("--model", choices=("auto", "roofline"), default="auto",
                   help="auto: the learned model where it covers the device, else the roofline")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the prediction cache")
    p.add_argument("--no-calibration", action="store_true", help="ignore the stored measurements")
    p.add_argument("--static", action="store_true",
                   help="no counting run, even where the static analysis cannot count a loop (it is then "
                        "counted once)")
    p.add_argument("--count-budget", type=float, default=8.0, metavar="SECONDS",
                   help="time for the counting run, which interprets the kernel on a sample of its "
                        "work-groups with the scenario's data (default 8)")
    add_scenario_flags(p)
    add_build_options(p)
    add_json_flag(p)
    p.set_defaults(run=_predict)

    t = sub.add_parser("train", help="train the learned predictor on measured datasets",
                       description="Train the performance model on JSON-lines datasets "
                                   "(clperf sweep output).")
    t.add_argument("--data", nargs="+", type=Path, required=True,
                   help="datasets (*.jsonl[.gz]) or folders of them")
    t.add_argument("--out", type=Path, default=Path("predictor/model/weights"), help="model folder to write")
    t.add_argument("--minutes", type=float, default=12.0, help="training time budget (default 12)")
    t.add_argument("--epochs", type=int, default=None, help="stop after this many epochs (default: by time)")
    t.add_argument("--test-share", type=float, default=0.2,
                   help="share of kernel families (and generated kernels) held out for evaluation")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--no-code", action="store_true",
                   help="train the network without the code encoder (numeric features only)")
    t.add_argument("--device-type", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where torch trains (auto: CUDA when available)")
    t.add_argument("--members", type=int, default=1,
                   help="train an ensemble of this many networks (seeds SEED, SEED+1, ...) and average "
                        "them; they train in parallel on half the cores, within the one time budget")
    t.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="train each member as a task on a Ray cluster (pip install 'clperf[cluster]'), one "
                        "GPU each with --device-type cuda, else one CPU: ADDRESS of its head (host:6379), "
                        "'auto' for the one `ray start` runs here, nothing for a new local one; write "
                        "--ray=ADDRESS or put it after the other flags")
    t.add_argument("--split-from", type=Path, default=None, metavar="MODEL",
                   help="hold out the same families and kernels as the model in this folder (kernels added "
                        "to the corpus since then train), so evaluations stay comparable")
    add_json_flag(t)
    t.set_defaults(run=_train)

    e = sub.add_parser("evaluate", help="evaluate the model and the baselines on held-out kernel families",
                       description="Metrics per device for the learned model and every baseline on the "
                                   "held-out split the model was trained with; writes a markdown report "
                                   "and a predicted-vs-measured plot.")
    e.add_argument("--data", nargs="+", type=Path,
                   help="datasets (*.jsonl[.gz]) or folders of them")
    e.add_argument("--devset", nargs="?", const="", default=None, metavar="DIR",
                   help="instead of --data: predict the real kernels of a dev set (specs.json, truth*.jsonl; "
                        "default ../shared/devset) and compare with their measured times")
    e.add_argument("--counting", action="store_true",
                   help="with --devset: also predict each launch from a counting run with its exact data")
    e.add_argument("--count-budget", type=float, default=8.0, metavar="SECONDS",
                   help="with --counting: time for each launch's counting run (default 8)")
    e.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="with --devset: predict each launch (with --counting its counting run too) as a CPU "
                        "task on a Ray cluster (pip install 'clperf[cluster]'): ADDRESS of its head "
                        "(host:6379), 'auto' for the one `ray start` runs here, nothing for a new local one; "
                        "write --ray=ADDRESS or put it after the other flags")
    e.add_argument("--device", "-d", default="h200",
                   help="with --devset: the device the dev set's times were measured on (default h200)")
    e.add_argument("--model", type=Path, default=None, help="model folder (default: the shipped model)")
    e.add_argument("--previous", type=Path, default=None, metavar="MODEL",
                   help="with --devset: an earlier model's folder, predicted beside the model")
    e.add_argument("--report", type=Path, default=Path("reports"), help="folder for evaluation.md + PNG")
    e.add_argument("--baseline-minutes", type=float, default=3.0,
                   help="training time of the features-only network baseline (default 3)")
    add_json_flag(e)
    e.set_defaults(run=_evaluate)


def _predict(ns: argparse.Namespace) -> int:
    # the command line may run kernels: PoCL's own code is counted on the local PoCL device
    ws = Workspace(build_options=ns.build_options, run_kernels=True)
    target = ws.target(ns.file, ns.kernel, scenario_from_args(ns))
    device = select_device(ns.device)
    counted = None
    if not ns.static and ws.needs_count(target.kernel, target.scenario):
        counted = ws.count(target.text, target.path, target.kernel, target.scenario, budget_s=ns.count_budget)
    est = ws.estimate(target.kernel, target.scenario, device, target.text, use_cache=not ns.no_cache,
                      use_model=ns.model == "auto", calibrate=not ns.no_calibration, counts=counted)
    kernel = ws.counted(target.kernel, counted)
    warnings = [*target.warnings, *ws.doubts(kernel, target.scenario, device)]
    if counted is not None and counted.unfinished_only:
        warnings.append(f"trip counts of inner loops from a counting run of {counted.unfinished_items} "
                        "work-items of its first work-groups, stopped at the budget before any finished: "
                        "the others from the static analysis")
    elif counted is not None and counted.groups_run == 0:
        warnings.append(f"trip counts from a counting run of {counted.items_run} work-items of its first "
                        "work-groups (none finished in the budget): a rough count")
    elif counted is not None and counted.groups_run < counted.groups_total:
        warnings.append(f"trip counts from a counting run of {counted.groups_run} of {counted.groups_total} "
                        f"work-groups (±{counted.rel_error:.1%})")
    elif counted is None and not ns.static and ws.needs_count(target.kernel, target.scenario):
        warnings.append("no counting run (Oclgrind is missing, or the kernel could not be counted in "
                        f"{ns.count_budget:g} s): trip counts from the static analysis")
    if ns.model == "auto" and own_code(device) and est.model_name != COUNTED_MODEL:
        warnings.append("PoCL's own code for this launch could not be counted (the build, the counting run "
                        "or the costing failed, or the run went past 60 s): the roofline answers")
    out: dict[str, Any] = {
        "kernel": target.kernel.name,
        "file": str(ns.file),
        "device": device.to_json(),
        "scenario": target.scenario.to_json(),
        "counted": None if counted is None else {"groups_run": counted.groups_run,
                                                 "groups_total": counted.groups_total,
                                                 "rel_error": counted.rel_error,
                                                 "elapsed_s": counted.elapsed_s},
        **est.to_json(),
        "warnings": warnings,
    }
    if ns.json:
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    lo, hi = est.interval_ms
    cal = (f"calibrated by {est.calibration_measurements} of your measurements" if est.calibrated
           else "from PoCL's own code, counted in one run of the scenario (not calibrated)"
           if est.model_name == COUNTED_MODEL else "not calibrated (no stored measurements of this device)")
    print(f"{target.kernel.name} on {device.name} ({device.source}):")
    print(f"  time        {_ms(est.time_ms)}   interval {_ms(lo)} .. {_ms(hi)}")
    print(f"  cycles      {est.cycles:,.0f} at {device.clock_mhz} MHz")
    print(f"  bound       {est.bound}, bandwidth utilisation {est.bandwidth_utilization:.0%}")
    print(f"  model       {est.model_name} {est.model_version}{' (cached)' if est.cached else ''}; {cal}")
    g = "x".join(map(str, target.scenario.global_size))
    loc = "x".join(map(str, target.scenario.local_size)) if target.scenario.local_size else "runtime"
    defaults = target.scenario.defaulted
    print(f"  scenario    global {g}, local {loc}"
          + (f"; defaults used for: {', '.join(defaults)}" if defaults else ""))
    for w in warnings:
        print(f"  warning     {w}")
    return 0


def _ms(t: float) -> str:
    return units.ms(t)


def _train(ns: argparse.Namespace) -> int:
    datasets.expand_data(ns.data)  # a clear error for a missing dataset or an empty folder
    if ns.members < 1:
        raise InputError(f"--members must be at least 1, not {ns.members}")
    cfg = TrainConfig(minutes=ns.minutes, epochs=ns.epochs, test_share=ns.test_share, seed=ns.seed,
                      device_type=ns.device_type, use_code=not ns.no_code, members=ns.members)
    from clperf.predictor.training import train  # torch: loaded only for the commands that train

    summary = train.train(ns.data, ns.out, cfg, split_from=ns.split_from, progress=not ns.json, ray=ns.ray)
    if ns.json:
        json.dump(summary, sys.stdout, indent=2)
        print()
    return 0


def _evaluate(ns: argparse.Namespace) -> int:
    if ns.devset is not None:
        return _evaluate_devset(ns)
    if not ns.data:
        raise InputError("clperf evaluate needs --data DATASET ... or --devset [DIR]")
    if ns.ray is not None:
        raise InputError("clperf evaluate --ray: only with --devset (the held-out split is evaluated here)")
    datasets.expand_data(ns.data)  # a clear error for a missing dataset or an empty folder
    from clperf.predictor.training import evaluate  # torch, as for train

    result = evaluate.run(ns.data, ns.model, ns.report, progress=not ns.json,
                          baseline_minutes=ns.baseline_minutes)
    if ns.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    return 0


def _evaluate_devset(ns: argparse.Namespace) -> int:
    import datetime
    import subprocess

    folder = Path(ns.devset) if ns.devset else devset.DEFAULT_DIR
    if not (folder / "specs.json").is_file():
        raise InputError(f"no dev set at {folder} (it needs specs.json and truth*.jsonl)")
    if ns.model is not None:
        import os

        os.environ["CLPERF_MODEL_DIR"] = str(ns.model)
    if ns.ray is not None:
        launches = devset_cluster.predict_all_on_ray(folder, ns.device, counting=ns.counting,
                                                     budget_s=ns.count_budget, address=ns.ray,
                                                     progress=not ns.json, previous=ns.previous)
    else:
        launches = devset.predict_all(folder, ns.device, progress=not ns.json, counting=ns.counting,
                                      budget_s=ns.count_budget, previous=ns.previous)
    summary = devset.summarise(launches)
    if ns.json:
        json.dump(summary, sys.stdout, indent=2)
        print()
        return 0
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, timeout=5, check=False).stdout.strip()
    except OSError:
        commit = ""
    command = f"clperf evaluate --devset {folder}" + (f" --counting --count-budget {ns.count_budget:g}"
                                                       if ns.counting else "") \
        + (f" --previous {ns.previous}" if ns.previous is not None else "")

    def version_of(folder: Path) -> str:
        try:
            return str(json.loads((folder / "meta.json").read_text(encoding="utf-8")).get("version"))
        except (OSError, ValueError, AttributeError):
            return "unknown"

    previous = f", previous model `{version_of(ns.previous)}`" if ns.previous is not None else ""
    header = [f"Written by `{command}` on "
              f"{datetime.date.today().isoformat()}, commit `{commit or 'unknown'}`, model "
              f"`{version_of(model_dir())}`{previous}; "
              f"predicted for `{ns.device}`: statically (sizes and scalars, not the data)"
              + (f" and from a counting run of each launch with its data ({ns.count_budget:g} s each)"
                 if ns.counting else "") + ", "
              "measured times from the dev set's `truth*.jsonl`."
              + (" `, as predict`: what `clperf predict` answers, from the counting run's trace where it "
                 "could be made and statically where not, over every launch." if ns.counting else "")]
    ns.report.mkdir(parents=True, exist_ok=True)
    path = ns.report / "devset.md"
    path.write_text(devset.render(summary, launches, header), encoding="utf-8")
    devset.plot(launches, ns.report / "devset.png")
    for m, r in summary["models"].items():
        a = r["all"]
        print(f"{m:>14}: median APE {devset.fmt(a['median_ape'])}, within 2x {devset.fmt(a['within_2x'])}, "
              f"MAPE {devset.fmt(a['mape'])}, pairwise {devset.fmt(r['pairwise'])}")
    print(f"wrote {path}")
    return 0
