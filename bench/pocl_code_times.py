"""How close the rewrite speedup model's times are on PoCL, with and without PoCL's own code, for kernels
of the corpus that the rewrite report does not use.

One measured record per corpus family (``benchmark/corpus/families``) and per 30 generated kernels, drawn
at random (``--seed``) from ``data/pocl`` among those that took 0.3-30 ms, is predicted twice by
``predictor/rewrites/speedup_model.roofline_for``: with the SIMD and barrier guesses of the device profile,
and with PoCL's own code counted in a run of the record's scenario and costed on the host's cores
(``predictor/model/cpu_code.py``, ``predictor/model/core_run.py``).
Both are compared with the kernel's median time
measured now, on this machine's PoCL (``--recorded``: the record's own median instead; many records of
``data/pocl`` were taken while the machine was busy, up to 5x slower than the same launch on the quiet
machine, see data/README.md; ``--reuse-times``: an earlier run's times, to compare a change of the model
against the same measurements). Prints one line per kernel and the summary; ``--out`` writes the report
as markdown and ``--times`` the measured times as JSON. About 8 s per kernel.

    .venv/bin/python bench/pocl_code_times.py --out reports/pocl_code_times.md \
        --times reports/pocl_code_times.json
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "pocl"


def records(seed: int, generated: int) -> list[tuple[dict[str, Any], str]]:
    from clperf.predictor.training import datasets
    sources = datasets.Sources(datasets=[DATA])
    by_file: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for r in datasets.read_records([DATA]):
        text = sources.find(r)
        if text is not None and 0.3 < float(r["median_ms"]) < 30:
            by_file.setdefault(r["file"], []).append((r, text))
    rng = random.Random(seed)
    families = sorted(f for f in by_file if "/families/" in f)
    others = sorted(f for f in by_file if "/families/" not in f)
    files = families + rng.sample(others, min(generated, len(others)))
    return [rng.choice(by_file[f]) for f in files]


def summary(ratios: list[float]) -> str:
    return (f"median predicted/measured {statistics.median(ratios):.2f}, median |log ratio| "
            f"{statistics.median(abs(math.log(x)) for x in ratios):.2f}, within 25%: "
            f"{100 * sum(0.8 < x < 1.25 for x in ratios) / len(ratios):.0f}%, within 2x: "
            f"{100 * sum(0.5 < x < 2 for x in ratios) / len(ratios):.0f}%")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--generated", type=int, default=30, help="generated kernels besides one per family")
    ap.add_argument("--out", type=Path, help="write the report (markdown) here")
    ap.add_argument("--times", type=Path, help="write the measured times (JSON: file:kernel -> ms) here")
    ap.add_argument("--recorded", action="store_true",
                    help="compare with the records' medians instead of measuring now")
    ap.add_argument("--reuse-times", type=Path, metavar="JSON",
                    help="compare with the times of an earlier run's --times on this machine (a change of "
                         "the model against the same measurements; kernels not in it are left out)")
    ns = ap.parse_args(argv)
    import json

    reused = json.loads(ns.reuse_times.read_text()) if ns.reuse_times else None

    from clperf.benchmark import pocl_code
    from clperf.benchmark.devices import select
    from clperf.benchmark.runner import benchmark
    from clperf.benchmark.timing import Policy
    from clperf.core.records import Scenario
    from clperf.predictor.analysis.pipeline import analyze_text
    from clperf.predictor.model import speedup as speedup_model

    device = select("Portable Computing Language")
    lines, guessed, counted = [], [], []
    times: dict[str, dict[str, float]] = {}
    for r, text in records(ns.seed, ns.generated):
        name, opts, sc = r["kernel"], r.get("build_options") or "", Scenario.from_json(r["scenario"])
        k = analyze_text(text, None, opts).kernel(name)
        if k is None or not k.analyzed:
            continue
        k = speedup_model.as_compiled(text, k, device, None, opts)
        code = pocl_code.cpu_code(text, name, sc, device, build_options=opts)
        if code is None:
            print(f"{name}: no counted code", file=sys.stderr)
            continue
        m = float(r["median_ms"])
        if reused is not None:
            if f"{r['file']}:{name}" not in reused:
                continue
            m = float(reused[f"{r['file']}:{name}"]["measured_ms"])
        elif not ns.recorded:
            now = benchmark(text, name, sc, device, build_options=opts, policy=Policy.named("interactive"),
                            timeout_s=120)
            if now.status != "ok" or not now.median_ms:
                print(f"{name}: not measured ({now.status})", file=sys.stderr)
                continue
            m = now.median_ms
            times[f"{r['file']}:{name}"] = {"measured_ms": m, "recorded_ms": float(r["median_ms"])}
        g = speedup_model.roofline_for(k, sc, device).time_ms
        c = speedup_model.roofline_for(k, sc, device, code).time_ms
        guessed.append(g / m)
        counted.append(c / m)
        lines.append(f"| {Path(r['file']).name} | {name} | {m:.3g} | {g:.3g} ({g / m:.2f}) "
                     f"| {c:.3g} ({c / m:.2f}) |")
        print(lines[-1], flush=True)
    args = " ".join(argv if argv is not None else sys.argv[1:])
    head = ["# PoCL times of corpus kernels: the speedup model with and without PoCL's counted code", "",
            f"Command: `python bench/pocl_code_times.py {args}`; device `{device.name}`; "
            + ("measured times from the records of `data/pocl`." if ns.recorded else
               f"measured times of an earlier run (`{ns.reuse_times}`)." if reused is not None else
               "times measured when the report was written (`interactive` policy); kernels and "
               "scenarios from `data/pocl`."), "",
            "| file | kernel | measured ms | guesses ms (ratio) | counted code ms (ratio) |",
            "|---|---|---:|---:|---:|"]
    tail = ["", f"- kernels: {len(counted)}",
            f"- with the profile's SIMD and barrier guesses: {summary(guessed)}",
            f"- with PoCL's counted code: {summary(counted)}"]
    print("\n".join(tail))
    if ns.out:
        ns.out.write_text("\n".join(head + lines + tail) + "\n")
    if ns.times:
        ns.times.write_text(json.dumps(times, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
