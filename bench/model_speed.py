"""Load time and inference time of the shipped learned model on the CPU (targets: load <= 2 s,
inference <= 30 ms per kernel and scenario).

    .venv/bin/python bench/model_speed.py [--model predictor/model/weights] [--kernels 10]

Load = importing torch and reading weights, tokenizer and normalisation in a fresh process (the language
server pays it once). Inference = features + tokenizing + the network for one kernel and scenario, after
the kernel was compiled and analysed (that part is the analysis' own benchmark); "first" includes
tokenizing the kernel's code, "repeat" a new scenario of a kernel already seen.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def _load_time(model: Path) -> float:
    code = ("import time; t=time.perf_counter(); from clperf.predictor.model import network; "
            f"network.Predictor.load(__import__('pathlib').Path({str(model)!r})); "
            "print(time.perf_counter()-t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path,
                    default=Path(__file__).resolve().parents[1] / "predictor" / "model" / "weights")
    ap.add_argument("--kernels", type=int, default=10)
    ns = ap.parse_args()
    if not (ns.model / "model.safetensors").exists():
        print(f"no model in {ns.model}: run clperf train first", file=sys.stderr)
        return 1

    loads = [_load_time(ns.model) for _ in range(3)]
    print(f"load (fresh process, torch import included): median {statistics.median(loads):.2f} s "
          f"(runs: {', '.join(f'{x:.2f}' for x in loads)})")

    from clperf.benchmark.corpus import hand_written
    from clperf.core.scenario import parse_flags, resolve
    from clperf.predictor.analysis.pipeline import analyze_text
    from clperf.predictor.model import estimate, network, profiles

    pred = network.Predictor.load(ns.model)
    meta = estimate.learned_meta() if ns.model == estimate.model_dir() else pred.meta
    names = list((meta or pred.meta).get("devices", {}))
    device = next((d for d in profiles.shipped() if d.name in names), profiles.shipped()[0])
    firsts, repeats = [], []
    for ck in hand_written()[: ns.kernels]:
        report = analyze_text(ck.source, ck.path)
        kernel = report.kernel(ck.name)
        if kernel is None:
            continue
        sc = resolve(parse_flags(ck.directive), list(kernel.params), kernel.dims)
        base, traffic = estimate.roofline_estimate(kernel, sc, device)
        t = time.perf_counter()
        pred.predict_one(kernel, sc, device, ck.source, base, traffic)
        firsts.append(time.perf_counter() - t)
        t = time.perf_counter()
        pred.predict_one(kernel, sc, device, ck.source, base, traffic)
        repeats.append(time.perf_counter() - t)
        print(f"  {ck.name:32s} first {firsts[-1] * 1e3:6.1f} ms   repeat {repeats[-1] * 1e3:6.1f} ms")
    print(f"inference on {device.name}: median first {statistics.median(firsts) * 1e3:.1f} ms, "
          f"repeat {statistics.median(repeats) * 1e3:.1f} ms, worst {max(firsts) * 1e3:.1f} ms "
          f"over {len(firsts)} kernels")
    size = sum(p.stat().st_size for p in ns.model.iterdir() if p.is_file())
    print(f"model folder: {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
