"""Predicted against measured speedup of every test rewrite (unroll pragma, manual unroll, __local tiles).

For each kernel of ``tests/rewrites/data`` and each enabled rewrite clperf offers for it, the script
predicts the speedup (``estimate(original) / estimate(rewritten)``, same scenario and device), measures
original and rewritten on a real OpenCL device (the rewritten one checked against the original's outputs)
and prints predicted vs measured, ``|predicted - measured|``, the median relative error and the share of
cases where the prediction has the right direction (faster / slower; both within 3% of 1 counts as the
same "no change"). It writes ``reports/rewrite_speedups_<device>.md`` and ``.json``.

The prediction needs clang (the analysis), and on the local PoCL device PoCL itself, llc-15 and llvm-mca
(its own code is counted in a run of each version: ``predictor/model/cpu_code.py``);
the measurement needs only
pyopencl. On a machine without clang (the H200 box) split the two:

    # here (clang): rewrites + predictions for the H200 profile
    .venv/bin/python bench/rewrite_speedups.py --device h200 --size large --predict-only
    # there (pyopencl): measure, merge, write the report
    python bench/rewrite_speedups.py --device h200 --measure-only
    # both at once, on the local PoCL device
    .venv/bin/python bench/rewrite_speedups.py --device pocl
    # new predictions (a new model) against the measurements already in reports/, where the rewritten
    # source and the scenario are unchanged (checked against the old predictions file)
    .venv/bin/python bench/rewrite_speedups.py --device h200 --reuse-measurements

Sizes: ``--size small`` (2^20 work-items / 1024x1024, for CPUs: buffers fit a 32 MB last-level cache),
``medium`` (2^22 / 2048x2048: they do not) or ``large`` (2^24 / 4096x4096, GPUs).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "rewrites" / "data"
REPORTS = ROOT / "reports"
SKIP_FILES = {"unsafe.cl"}
NO_CHANGE = 0.03

# Launches big enough to time (S: 1-D work-items, T: 2-D side). Kernels not listed keep their directive.
BENCH = {
    "smooth3": "--global S --local 256 --arg n=S --arg in=S --arg out=S",
    "diff2": "--global S --local 256 --arg n=S --arg in=S+2 --arg out=S --fill in=range:-1000:1000",
    "blur5": "--global S --local 256 --arg n=S --arg in=S --arg out=S",
    "sum7": "--global S --local 256 --arg n=S --arg src=S --arg dst=S --fill src=range:0:100",
    "smooth_vec": "--global S/4 --local 256 --arg n=S/4 --arg in=S/4 --arg out=S/4",
    "jacobi": "--global T,T --local 16,16 --arg w=T --arg h=T --arg in=T*T --arg out=T*T",
    "box3": "--global T,T --local 16,16 --arg width=T --arg height=T --arg img=T*T --arg res=T*T "
            "--fill img=range:0:256",
    "vblur": "--global T,T --local 32,8 --arg w=T --arg h=T --arg a=T*T --arg b=T*T",
    "window8": "--global S --local 256 --arg n=S --arg in=S+7 --arg out=S",
    "moving_avg": "--global S --local 256 --arg n=S --arg x=S --arg y=S",
    "conv3": "--global T,T --local 16,16 --arg w=T --arg h=T --arg in=T*T --arg mask=9 --arg out=T*T",
    "conv5": "--global T,T --local 16,16 --arg width=T --arg height=T --arg src=T*T --arg k=25 --arg dst=T*T",
    "matmul": "--global T/2,T/2 --local 16,16 --arg M=T/2 --arg N=T/2 --arg A=T/2*32 --arg B=32*T/2 "
              "--arg C=T*T/4",
    "horner8": "--global S --local 256 --arg x=S --arg c=8 --arg y=S",
    "rowsum10": "--global S/4 --local 256 --arg a=S/4*10 --arg out=S/4 --fill a=range:-50:50",
    "outside": "--global S --local 256 --arg v=S --arg out=S",
    "nested": "--global S --local 256 --arg rows=6 --arg m=S*5+7680 --arg out=S --fill m=range:0:10",
}
SIZES = {"small": (1 << 20, 1024), "medium": (1 << 22, 2048), "large": (1 << 24, 4096)}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"


def bench_flags(kernel: str, size: str) -> str | None:
    flags = BENCH.get(kernel)
    if flags is None:
        return None
    s, t = SIZES[size]
    return re.sub(r"\bS\b", str(s), re.sub(r"\bT\b", str(t), flags)).replace("/", "//")


# ---- predict (needs clang) ---------------------------------------------------------------------------------


def _prediction_device(text: str):  # noqa: ANN202
    from clperf.predictor.model import profiles
    if text.strip().lower() == "pocl":
        text = "Portable Computing Language"
    return profiles.select_device(text)


def predict(device_text: str, size: str) -> dict[str, Any]:
    from clperf.core.scenario import parse_flags
    from clperf.predictor import rewrites
    from clperf.predictor.analysis.pipeline import analyze_text

    device = _prediction_device(device_text)
    cases = []
    for path in sorted(DATA.glob("*.cl")):
        if path.name in SKIP_FILES:
            continue
        text = path.read_text()
        report = analyze_text(text, path)
        for f in report.findings:
            if f.rule not in ("unroll-candidate", "local-cache-candidate"):
                continue
            k = report.kernel(f.kernel)
            flags = bench_flags(f.kernel, size)
            spec = parse_flags(flags) if flags else None
            scenario = rewrites.scenario_for(text, k, spec)
            for rw in rewrites.available(text, report, f, path=path, device=device, scenario=scenario):
                if not rw.enabled:
                    continue
                cases.append({
                    "id": f"{path.stem}:{f.kernel}:{rw.kind}:{f.data.get('param') or f.line}",
                    "file": path.name, "kernel": f.kernel, "rule": f.rule, "kind": rw.kind,
                    "title": rw.title, "original": text, "rewritten": rewrites.apply(text, rw),
                    "scenario": scenario.to_json(), "predicted": rw.predicted_speedup,
                    "prediction": rw.prediction,
                })
                print(f"predicted {cases[-1]['id']}: {rw.predicted_speedup}", file=sys.stderr)
    return {"device": device.name, "device_source": device.source, "size": size, "cases": cases}


# ---- measure (pyopencl only) -------------------------------------------------------------------------------


def measure(pred: dict[str, Any], device_text: str, policy_name: str, rounds: int) -> dict[str, Any]:
    """Time original and rewritten of each case in ``rounds`` alternating rounds (original, rewritten,
    original, ...): the measured speedup is the median of the rounds' ratios, so a slow spell of a shared
    machine (another job, a frequency change) falls on both versions of one round instead of on one."""
    from clperf.benchmark.devices import select
    from clperf.benchmark.runner import benchmark
    from clperf.benchmark.timing import Policy
    from clperf.core.records import Scenario

    device = select(device_text)
    policy = Policy.named(policy_name)
    for c in pred["cases"]:
        sc = Scenario.from_json(c["scenario"])
        t0 = time.time()
        r0: list[Any] = []
        r1: list[Any] = []
        for r in range(rounds):
            r0.append(benchmark(c["original"], c["kernel"], sc, device, policy=policy, timeout_s=300))
            r1.append(benchmark(c["rewritten"], c["kernel"], sc, device, policy=policy, timeout_s=300,
                                reference=(c["original"], c["kernel"]) if r == 0 else None))
            if not (r0[-1].status == r1[-1].status == "ok"):
                break
        m0, m1 = r0[0], r1[0]
        ok = all(a.status == "ok" and b.status == "ok" and a.median_ms and b.median_ms
                 for a, b in zip(r0, r1, strict=True))
        ratios = [a.median_ms / b.median_ms for a, b in zip(r0, r1, strict=True)] if ok else []
        c["ratios"] = ratios
        # the same rounds by their fastest repetitions: a shared machine's slow spells only add time
        c["ratios_min"] = [a.min_ms / b.min_ms for a, b in zip(r0, r1, strict=True)
                           if a.min_ms and b.min_ms] if ok else []
        c["measured_min"] = statistics.median(c["ratios_min"]) if c["ratios_min"] else None
        c["original_ms"] = statistics.median(a.median_ms for a in r0) if ok else m0.median_ms
        c["rewritten_ms"] = statistics.median(b.median_ms for b in r1) if ok else m1.median_ms
        c["original_cv"], c["rewritten_cv"] = m0.cv, m1.cv
        c["matches"] = bool(m1.checked and m1.status == "ok" and m1.error is None)
        c["error"] = m0.error or m1.error if not (m0.status == m1.status == "ok") or m1.error else None
        c["measured"] = statistics.median(ratios) if ratios else None
        print(f"measured {c['id']}: {c['measured']} (predicted {c['predicted']}; rounds "
              f"{' '.join(f'{x:.3f}' for x in ratios)}) "
              f"{'' if c['matches'] else 'MISMATCH ' + str(c['error'])} [{time.time() - t0:.0f}s]",
              file=sys.stderr)
    pred["measured_on"] = device.name
    pred["driver"] = device.driver
    pred["rounds"] = rounds
    return pred


MEASURED_FIELDS = ("original_ms", "rewritten_ms", "original_cv", "rewritten_cv", "matches", "error",
                   "measured", "ratios", "ratios_min", "measured_min")


def reuse(pred: dict[str, Any], old_pred: dict[str, Any], old_report: dict[str, Any]) -> dict[str, Any]:
    """Copy the measurements of ``old_report`` onto the cases of ``pred`` that are the same rewrite
    (identical original and rewritten source and scenario, per ``old_pred``); the others stay unmeasured."""
    same = {c["id"]: (c["original"], c["rewritten"], json.dumps(c["scenario"], sort_keys=True))
            for c in old_pred["cases"]}
    measured = {c["id"]: c for c in old_report["cases"]}
    reused = 0
    for c in pred["cases"]:
        key = (c["original"], c["rewritten"], json.dumps(c["scenario"], sort_keys=True))
        if same.get(c["id"]) == key and c["id"] in measured:
            c.update({f: measured[c["id"]].get(f) for f in MEASURED_FIELDS})
            reused += 1
    print(f"reused {reused} of {len(pred['cases'])} measurements", file=sys.stderr)
    pred["measured_on"], pred["driver"] = old_report.get("measured_on"), old_report.get("driver")
    pred["rounds"] = old_report.get("rounds", 1)
    pred["measured_at"] = old_report.get("measured_at", "an earlier run (see git history)")
    return pred


# ---- report ----------------------------------------------------------------------------------------------


def direction(x: float) -> int:
    return 0 if abs(x - 1.0) <= NO_CHANGE else (1 if x > 1 else -1)


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    rows = [c for c in result["cases"] if c.get("measured") and c.get("predicted")]
    errors = [abs(c["predicted"] - c["measured"]) / c["measured"] for c in rows]
    diffs = [abs(c["predicted"] - c["measured"]) for c in rows]
    right = [direction(c["predicted"]) == direction(c["measured"]) for c in rows]
    strict = [(c["predicted"] >= 1) == (c["measured"] >= 1) for c in rows]
    by_min = [c for c in rows if c.get("measured_min")]
    return {
        "cases": len(result["cases"]), "compared": len(rows),
        "outputs_match": sum(1 for c in result["cases"] if c.get("matches")),
        "median_relative_error": statistics.median(errors) if errors else None,
        "median_abs_difference": statistics.median(diffs) if diffs else None,
        "direction_accuracy": sum(right) / len(right) if right else None,
        "direction_accuracy_strict": sum(strict) / len(strict) if strict else None,
        # how much the rounds of one case disagree (largest / smallest ratio), by medians and by minima
        "round_spread": _median_spread(c.get("ratios") for c in rows),
        "round_spread_min": _median_spread(c.get("ratios_min") for c in rows),
        "median_relative_error_min": statistics.median(
            abs(c["predicted"] - c["measured_min"]) / c["measured_min"] for c in by_min) if by_min else None,
        "direction_accuracy_min": sum(direction(c["predicted"]) == direction(c["measured_min"])
                                      for c in by_min) / len(by_min) if by_min else None,
    }


def _median_spread(per_case: Any) -> float | None:
    spreads = [max(r) / min(r) for r in per_case if r and len(r) > 1 and min(r) > 0]
    return statistics.median(spreads) if spreads else None


def markdown(result: dict[str, Any], s: dict[str, Any], command: str) -> str:
    out = [f"# Rewrite speedups: predicted vs measured on {result.get('measured_on', result['device'])}", "",
           f"Command: `{command}`  ",
           f"Predictions for `{result['device']}` ({result['device_source']}); sizes `{result['size']}`; "
           f"driver `{result.get('driver', '?')}`. Measured speedup: median ratio of "
           f"{result.get('rounds', 1)} alternating round(s) of original and rewritten (range in brackets).",
           "",
           "| case | predicted | measured | abs diff | rel error | original ms | rewritten ms | outputs |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for c in result["cases"]:
        p, m = c.get("predicted"), c.get("measured")
        diff = f"{abs(p - m):.2f}" if p and m else "-"
        rel = f"{abs(p - m) / m:.0%}" if p and m else "-"
        out.append(f"| {c['id']} | {p:.2f}x | " if p else f"| {c['id']} | - | ")
        spread = f" [{min(c['ratios']):.2f}-{max(c['ratios']):.2f}]" if len(c.get("ratios") or ()) > 1 else ""
        out[-1] += (f"{m:.2f}x{spread} | {diff} | {rel} | {c['original_ms']:.4g} | {c['rewritten_ms']:.4g} | "
                    if m else "- | - | - | - | - | ")
        out[-1] += "match |" if c.get("matches") else f"**{c.get('error') or 'not run'}** |"
    med = s["median_relative_error"]
    acc = s["direction_accuracy"]
    out += ["", "## Summary", "",
            f"- cases: {s['cases']}, compared: {s['compared']}, outputs equal to the original: "
            f"{s['outputs_match']}",
            f"- median |predicted - measured| / measured: {med:.1%} (target <= 10%)" if med is not None
            else "- median error: n/a",
            f"- median |predicted - measured|: {s['median_abs_difference']:.3f}"
            if s["median_abs_difference"] is not None else "",
            f"- right direction (within {NO_CHANGE:.0%} of 1 = no change): {acc:.0%} (target >= 90%); "
            f"strict faster/slower: {s['direction_accuracy_strict']:.0%}" if acc is not None else ""]
    if s.get("median_relative_error_min") is not None and s.get("round_spread"):
        out += [f"- by the rounds' fastest repetitions instead of their medians: median error "
                f"{s['median_relative_error_min']:.1%}, right direction {s['direction_accuracy_min']:.0%}; "
                f"rounds of one case differ by a median factor of {s['round_spread_min']:.2f} (medians: "
                f"{s['round_spread']:.2f})"]
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", required=True, help="device text (pocl, h200, ...) for prediction and run")
    ap.add_argument("--size", choices=tuple(SIZES), default=None,
                    help="problem sizes (default: small for pocl, large otherwise)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--predict-only", action="store_true", help="write the predictions JSON and stop")
    mode.add_argument("--measure-only", action="store_true", help="measure the predictions JSON (no clang)")
    mode.add_argument("--reuse-measurements", action="store_true",
                      help="predict again and take the measurements from the committed report (no device)")
    ap.add_argument("--predictions", type=Path, help="predictions JSON (default reports/rewrite_predictions_"
                                                     "<device>.json)")
    ap.add_argument("--policy", default="interactive", help="timing policy: interactive | sweep | quick")
    ap.add_argument("--only", default="", help="measure only the cases whose id contains this text")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating original/rewritten rounds per case; the speedup is their median "
                         "ratio (default 3)")
    ap.add_argument("--out", type=Path, default=REPORTS, help="folder for the report (default reports/)")
    ns = ap.parse_args(argv)
    name = slug(ns.device)
    size = ns.size or ("small" if ns.device.lower() in ("pocl", "cpu") else "large")
    pred_path = ns.predictions or REPORTS / f"rewrite_predictions_{name}.json"
    ns.out.mkdir(parents=True, exist_ok=True)
    if ns.measure_only:
        pred = json.loads(pred_path.read_text())
    elif ns.reuse_measurements:
        old_pred = json.loads(pred_path.read_text())
        old_report = json.loads((ns.out / f"rewrite_speedups_{name}.json").read_text())
        pred = predict(ns.device, size)
        pred_path.write_text(json.dumps(pred, indent=1))
    else:
        pred = predict(ns.device, size)
        pred_path.write_text(json.dumps(pred, indent=1))
        print(f"wrote {pred_path}", file=sys.stderr)
        if ns.predict_only:
            return 0
    if ns.only:
        pred = {**pred, "cases": [c for c in pred["cases"] if ns.only in c["id"]]}
    if ns.reuse_measurements:
        result = reuse(pred, old_pred, old_report)
    else:
        result = measure(pred, ns.device, ns.policy, max(1, ns.rounds))
    s = summarize(result)
    result["summary"] = s
    command = "python bench/rewrite_speedups.py " + " ".join(argv if argv is not None else sys.argv[1:])
    md = markdown(result, s, command)
    (ns.out / f"rewrite_speedups_{name}.md").write_text(md)
    slim = {**result, "cases": [{k: v for k, v in c.items() if k not in ("original", "rewritten")}
                                for c in result["cases"]]}
    (ns.out / f"rewrite_speedups_{name}.json").write_text(json.dumps(slim, indent=1))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
