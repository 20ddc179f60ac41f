"""One dev-set launch looked at closely: its counting run (groups run, work-items, the longest group,
the trace) and its estimate by the roofline and the learned model, with and without the trace's caches,
against its measured time. For reading a launch the dev-set report gets wrong; the dev set is for
validation only, nothing here fits to it.

    .venv/bin/python bench/devset_launch.py [--devset ../shared/devset] [--budget 8] ID [ID ...]
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from clperf.api import Workspace, select_device
from clperf.benchmark.counting import Counts
from clperf.core.records import Device, Scenario
from clperf.predictor.analysis.pipeline import KernelReport
from clperf.predictor.model import profiles
from clperf.predictor.model import roofline as rl
from clperf.predictor.training import devset as D


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="+", help="spec ids, as in specs.json")
    ap.add_argument("--devset", type=Path, default=Path("../shared/devset"))
    ap.add_argument("--budget", type=float, default=8.0, help="seconds of each counting run")
    ap.add_argument("--device", default="h200")
    args = ap.parse_args()
    logging.basicConfig(format="  %(message)s")
    logging.getLogger("clperf.benchmark.counting").setLevel(logging.INFO)  # why a launch was not counted
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
        counts = ws.count(text, path, kernel, scenario, data=data, budget_s=args.budget,
                          store=D.devset_store())  # the evaluation's runs, where it made them
        print(f"{sid}: measured {measured:.4g} ms")
        if counts is None:
            print("  no counting run (the log above says why)")
        else:
            print(f"  counted {counts.groups_run} of {counts.groups_total} groups"
                  f" ({counts.unfinished_items} work-items unfinished),"
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
        terms(ws, kernel, scenario, device, counts)


def terms(ws: Workspace, kernel: KernelReport, scenario: Scenario, device: Device,
          counts: Counts | None) -> None:
    """The roofline's terms with the counting run's trace (its caches), in ms: which one binds."""
    t = ws.traffic(kernel, scenario, device, counts)
    bw, fl, _ = profiles.peaks(device)
    fpms = fl * 1e6  # flops per ms
    ops, loads = rl.chain_ms(t, device)
    l2 = "" if t.l2_bytes is None else (f", L1 lines {t.l1_wavefront_bytes / 1e6:.4g} MB, L1 misses"
                                        f" {t.l2_bytes / 1e6:.4g} MB in {t.l2_lines:.4g} lines")
    share = rl.stream_share(t, device, bw)
    print(f"  terms: dram {rl.dram_ms(t, device, bw):.4g} (loads {t.load_dram_share:.0%} of it at {share:.2f}"
          f" of the peak: {t.load_flight_bytes:.3g} B in flight a work-item,"
          f" {rl.resident_items(t, device):.0f} resident)"
          f"  cache {rl.cache_ms(t, device, bw):.4g}"
          f" (issued {t.issued_bytes / 1e6:.4g} MB, local {t.local_bytes / 1e6:.4g} MB{l2})"
          f"  compute {rl.compute_ops(t, device) / fpms:.4g}  ops chain {ops:.4g}  load chain {loads:.4g}"
          f"  atomics {rl.atomic_ms(t, device):.4g}  group starts {rl.dispatch_ms(t, device):.4g}")
    print(f"  work-items {t.work_items}, flops {t.flops:.4g}, int ops {t.int_ops:.4g},"
          f" loads {t.global_loads:.4g}, waited {t.waited_global_loads:.4g},"
          f" longest item {t.longest_item:.2f}x, barriers {t.barriers:.3g}")


if __name__ == "__main__":
    main()
