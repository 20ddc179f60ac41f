"""The GPU roofline's chain constants (``CHAIN_FACTOR``, ``LOAD_CHAIN_NS`` of ``predictor/model/roofline.py``)
read off the H200 training data, and how the roofline combines its bounds: for each pair on a grid, the
roofline's median and mean ``|log(measured / estimate)|`` and its share within 2x, on the hand-written
families, on their launches of 0.2 ms or more, and on the generated kernels, the estimate combining memory
and work (compute or chain) as the roofline does (``roofline.unhidden_share``). Loads a loop waits for
(``analysis/gating.py``) are charged the device's measured latencies (``roofline.waited_ns``), not the
grid's ``LOAD_CHAIN_NS``; then the chosen pair with those loads charged like the others instead, and with
their latency added to the operation chain (an iteration that waits for a load then computes on it), for
comparison; then the chosen pair with memory and work combined otherwise: the larger alone, the two
added, the larger plus the dependent share to other powers of the smaller; last, the bounds combined as
p-norms, p = 1 to 8.

A sample of kernels (``--kernels``, drawn with a fixed seed, plus every kernel of the large-launch corpus)
is analysed as ``clperf train`` analyses them and every measurement of them is estimated with each pair.
Only the project's own measurements are read (``data/h200``, ``data/h200-large``), never a dev set.

    .venv/bin/python bench/chain_fit.py [--kernels 500]
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

import numpy as np

from clperf.core.records import Device, Scenario
from clperf.predictor.model import profiles
from clperf.predictor.model import roofline as rl
from clperf.predictor.training.datasets import Sources, read_records, sha
from clperf.predictor.training.examples import _analyze_all

DATA = [Path("data/h200"), Path("data/h200-large")]
FACTORS = (0.0, 1.0, 2.0, 3.0, 4.0)
LOAD_NS = (0.0, 20.0, 40.0, 80.0)


def _rows(n_kernels: int) -> list[tuple[float, ...]]:
    """(measured, floor, memory-bound busy, compute-bound busy, serial chain, unwaited load chain per ns,
    waited load chain, every load's chain per ns, generated, dependent share of the operations) per
    record."""
    recs = read_records(DATA)
    sources = Sources((), DATA)
    keys = sorted({(r["file"], r["kernel"]) for r in recs})
    pick = set(random.Random(1).sample(keys, min(n_kernels, len(keys))))
    pick |= {k for k in keys if "large/" in k[0]}
    chosen = [r for r in recs if (r["file"], r["kernel"]) in pick]
    reports = _analyze_all(chosen, sources, False)
    out: list[tuple[float, ...]] = []
    for rec in chosen:
        text = sources.find(rec)
        opts = str(rec.get("build_options", ""))
        kernel = reports.get((sha(text), opts), {}).get(rec["kernel"]) if text else None
        if kernel is None:
            continue
        device = Device.from_json(rec["device"])
        t = rl.traffic(kernel, Scenario.from_json(rec["scenario"]), device.type)
        bw, fl, _ = profiles.peaks(device)
        r = rl.roofline(t, device, bw, fl, profiles.facts(device).launch_overhead_ms)  # its throughput terms
        waves = math.ceil(t.work_items / (device.compute_units * rl.RESIDENT_ITEMS["gpu"]))
        per_item = waves / max(1, t.work_items) * 1e-6
        out.append((float(rec["median_ms"]), r.floor_ms, r.memory_ms, r.compute_ms,
                    rl.serial_ms(t, device), max(0.0, t.global_loads - t.waited_global_loads) * per_item,
                    rl.waited_ns(t, device) * per_item, t.global_loads * per_item, "gen_" in rec["file"],
                    t.path_cycles / t.op_cycles if t.op_cycles > 0 else 1.0))
    return out


def _score(err: np.ndarray) -> str:
    return f"{np.median(err):.3f} {np.mean(err):.3f} {np.mean(err < math.log(2)):.0%}"


def _combined(memory: np.ndarray, work: np.ndarray, share: np.ndarray) -> np.ndarray:
    """The larger of memory and work, plus ``share`` of the smaller (``roofline.unhidden_share``)."""
    return np.maximum(memory, work) + share * np.minimum(memory, work)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=500)
    args = ap.parse_args()
    a = np.array(_rows(args.kernels))
    meas, floor, memory, compute, serial, loads, waited, all_loads, gen, dependent = a.T
    gen = gen.astype(bool)
    long = ~gen & (meas >= 0.2)
    share = np.clip(dependent, 0.0, 1.0) ** 2  # as the roofline combines its bounds

    def line(label: str, est: np.ndarray, note: str = "") -> None:
        err = np.abs(np.log(meas / (floor + est)))
        print(f"{label} | {_score(err[~gen])} | {_score(err[long])} | {_score(err[gen])}{note}")

    print(f"{len(meas)} measurements ({int((~gen).sum())} hand-written, {int(long.sum())} of them >= 0.2 ms)")
    print("factor load_ns | hand-written: median mean 2x | >= 0.2 ms | generated")
    for f in FACTORS:
        for ns in LOAD_NS:
            chain = np.maximum(f * serial, ns * loads + waited)
            line(f"{f:6.1f} {ns:7.0f}", _combined(memory, np.maximum(compute, chain), share))
    f, ns = rl.CHAIN_FACTOR, rl.LOAD_CHAIN_NS
    alike = np.maximum(f * serial, ns * all_loads)
    line(f"{f:6.1f} {ns:7.0f}", _combined(memory, np.maximum(compute, alike), share),
         "  (waited loads at LOAD_CHAIN_NS too)")
    added = waited + np.maximum(f * serial, ns * loads)
    line(f"{f:6.1f} {ns:7.0f}", _combined(memory, np.maximum(compute, added), share),
         "  (waited loads added to the operation chain)")
    print(f"{int((waited > 0).sum())} measurements have waited loads")
    ops_chain, load_chain = f * serial, ns * loads + waited
    work = np.maximum(compute, np.maximum(ops_chain, load_chain))
    print("the chosen pair, memory and work (compute or chain) combined otherwise:")
    line("  none of it (the larger alone)   ", np.maximum(memory, work))
    line("  all of it (the two added)       ", memory + work)
    for p in (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0):
        line(f"  dependent share ^ {p:<3}          ", _combined(memory, work, np.clip(dependent, 0, 1) ** p),
             "  (the roofline's)" if p == 2.0 else "")
    print("the chosen pair, the bounds as p-norms ((a^p + b^p)^(1/p); p = inf: the largest):")
    chain = np.maximum(ops_chain, load_chain)
    for p in (1.0, 1.5, 2.0, 3.0, 4.0, 8.0):
        variants = {
            "all three": (memory ** p + compute ** p + chain ** p) ** (1 / p),
            "max(memory-compute, chain)": np.maximum((memory ** p + compute ** p) ** (1 / p), chain),
            "ops chain apart": np.maximum((memory ** p + compute ** p + load_chain ** p) ** (1 / p),
                                          ops_chain),
        }
        for name, both in variants.items():
            line(f"  p {p:4.1f} {name:28s}", both)


if __name__ == "__main__":
    main()
