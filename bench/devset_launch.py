"""One dev-set launch looked at closely: its counting run (groups run, work-items, the longest group,
the trace) and its estimate by the roofline and the learned model, with and without the trace's caches,
against its measured time. For reading a launch the dev-set report gets wrong; the dev set is for
validation only, nothing here fits to it.

    .venv/bin/python bench/devset_launch.py [--devset ../shared/devset] [--budget 8] ID [ID ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from clperf.api import Workspace, select_device
from clperf.predictor.training import devset as D


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="+", help="spec ids, as in specs.json")
    ap.add_argument("--devset", type=Path, default=Path("../shared/devset"))
    ap.add_argument("--budget", type=float, default=8.0, help="seconds of each counting run")
    ap.add_argument("--device", default="h200")
    args = ap.parse_args()
    measure = D.harness(args.devset)
    specs = {s["id"]: (s, m) for s, m in D.measured_specs(args.devset)}
    device = select_device(args.device)
    for sid in args.ids:
        spec, measured = specs[sid]
        root = args.devset / "kernels"
        opts = D.build_options(spec, root)
        path = root / spec["file"]
        text = path.read_text(encoding="utf-8", errors="replace")
        kernel = next(k for k in D.analyze_text(text, path, opts).kernels if k.name == spec["kernel"])
        scenario = D.scenario_of(spec, kernel.params, D._element_bytes(text, path, opts, spec["kernel"]))
        ws = Workspace(build_options=opts)
        data = D.launch_data(measure, spec)
        counts = ws.count(text, path, kernel, scenario, data=data, budget_s=args.budget)
        print(f"{sid}: measured {measured:.4g} ms")
        if counts is None:
            print("  no counting run (the log says why)")
        else:
            print(f"  counted {counts.groups_run} of {counts.groups_total} groups,"
                  f" {counts.items_run} work-items, longest group {counts.longest_group:.2f}x the mean,"
                  f" {counts.elapsed_s:.1f} s,"
                  f" trace {0 if counts.trace is None else len(counts.trace)} records"
                  f"{' (truncated)' if counts.trace_truncated else ''}")
        for caches in (False, True):
            for use_model in (False, True):
                est = ws.estimate(kernel, scenario, device, text, use_cache=False, use_model=use_model,
                                  calibrate=False, counts=counts, caches=caches)
                name = ("model" if use_model else "roofline") + ("+caches" if caches else "+counts")
                print(f"  {name:<16} {est.time_ms:.4g} ms ({est.time_ms / measured:.2f}x)")


if __name__ == "__main__":
    main()
