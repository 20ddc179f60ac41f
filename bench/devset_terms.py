"""The roofline's terms for every dev-set launch, as ``clperf predict`` would see them (from the counting
run's trace where there is one, statically where not), one JSON line each: for reading how a launch's
bounds relate to its measured time. The dev set is for validation only: nothing here fits to it.

    .venv/bin/python bench/devset_terms.py [--devset ../shared/devset] [--shard I/N] --out FILE
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from clperf.api import Workspace, select_device
from clperf.predictor.model import profiles
from clperf.predictor.model import roofline as rl
from clperf.predictor.training import devset as D


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devset", type=Path, default=Path("../shared/devset"))
    ap.add_argument("--budget", type=float, default=8.0, help="seconds of each counting run")
    ap.add_argument("--device", default="h200")
    ap.add_argument("--shard", default="0/1", help="I/N: every N-th launch from the I-th")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    i, n = (int(x) for x in args.shard.split("/"))
    measure = D.harness(args.devset)
    device = select_device(args.device)
    bw, fl, _ = profiles.peaks(device)
    root = args.devset / "kernels"
    reports: dict[tuple[str, str], object] = {}
    with args.out.open("w") as out:
        for spec, measured in D.measured_specs(args.devset)[i::n]:
            opts = D.build_options(spec, root)
            path = root / spec["file"]
            text = path.read_text(encoding="utf-8", errors="replace")
            key = (spec["file"], opts)
            if key not in reports:
                reports[key] = D.analyze_text(text, path, opts)
            kernel = next((k for k in reports[key].kernels if k.name == spec["kernel"]), None)  # type: ignore[attr-defined]
            if kernel is None:
                continue
            scenario = D.scenario_of(spec, kernel.params, D._element_bytes(text, path, opts, spec["kernel"]))
            ws = Workspace(build_options=opts)
            counts = ws.count(text, path, kernel, scenario, data=D.launch_data(measure, spec),
                              budget_s=args.budget, store=D.devset_store())
            t = ws.traffic(kernel, scenario, device, counts)
            ops, loads = rl.chain_ms(t, device)
            roof = rl.roofline(t, device, bw, fl, profiles.facts(device).launch_overhead_ms)
            est = ws.estimate(kernel, scenario, device, text, use_cache=False, use_model=False,
                              calibrate=False, counts=counts, caches=True)
            out.write(json.dumps({
                "id": spec["id"], "measured_ms": measured, "roofline_ms": est.time_ms,
                "floor": roof.floor_ms, "dram": rl.dram_ms(t, device, bw),
                "cache": rl.cache_ms(t, device, bw),
                "atomics": rl.atomic_ms(t, device), "compute": roof.compute_ms, "ops_chain": ops,
                "load_chain": loads, "starts": roof.dispatch_ms,
                "dependent": t.path_cycles / t.op_cycles if t.op_cycles > 0 else 1.0,
                "traced": t.l2_bytes is not None}) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
