"""Two ceilings of the GPU read off the project's own H200 measurements (``data/h200``,
``data/h200-large``; never a dev set):

* how fast it starts work-groups: for each work-group size, the most work-groups per nanosecond any launch
  of that size started (its groups over its measured time), the 99th percentile, and the launches at the
  top. A launch of many small groups that do little each cannot start them faster than the device
  dispatches them; the highest rate seen over thousands of kernels of every kind is that ceiling
  (``group_dispatch_ns`` of the device profile is its inverse per compute unit);
* how fast it streams 4-byte and 16-byte accesses from DRAM: the float triad over arrays far larger than
  the L2 and its float4 form, in TB/s by work-group size (what the roofline's DRAM share,
  ``roofline.stream_share``, must reproduce on the H200).

    .venv/bin/python bench/gpu_ceilings.py
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from clperf.core.records import Device
from clperf.predictor.training.datasets import read_records

DATA = [Path("data/h200"), Path("data/h200-large")]
STREAMS = {"sb_triad": 4, "sb_triad4": 16}  # benchmark/corpus/large/stream_big.cl: a = b + s * c, by width


def main() -> None:
    rates: dict[int, list[tuple[float, int, str, float]]] = defaultdict(list)
    streams: dict[tuple[str, int], list[float]] = defaultdict(list)
    units = 0
    for rec in read_records(DATA):
        scenario = rec["scenario"]
        local = scenario.get("local") or []
        if rec.get("status") != "ok" or not local or not all(local) or not rec.get("median_ms"):
            continue
        units = units or Device.from_json(rec["device"]).compute_units
        groups = math.prod(-(-g // lsz) for g, lsz in zip(scenario["global"], local, strict=False))
        rates[math.prod(local)].append((groups / (rec["median_ms"] * 1e6), groups, rec["kernel"],
                                        rec["median_ms"]))
        width = STREAMS.get(rec["kernel"]) if rec["file"].endswith("stream_big.cl") else None
        if width and 3 * scenario["args"]["a"] * width >= 1 << 30:  # far past the L2: DRAM streams them
            moved = 3 * scenario["args"]["a"] * width  # bytes of a, b and c
            streams[(rec["kernel"], local[0])].append(moved / (rec["median_ms"] * 1e9))
    print(f"{'items/group':>11} {'launches':>8} {'max groups/ns':>13} {'p99':>5}  top launches (groups, ms)")
    top, small = 0.0, 0
    for size in sorted(rates):
        seen = sorted(rates[size], reverse=True)
        r = np.array([s[0] for s in seen])
        shown = ", ".join(f"{k} ({g}, {ms:.3g})" for _, g, k, ms in seen[:3])
        print(f"{size:>11} {len(seen):>8} {r[0]:>13.2f} {np.percentile(r, 99):>5.2f}  {shown}")
        if 16 <= size <= 256:
            top, small = max(top, float(r[0])), small + len(seen)
    if top and units:
        print(f"ceiling over the {small} launches in groups of 16-256 work-items: {top:.2f} groups/ns over"
              f" {units} compute units,"
              f" one group per {units / top:.1f} ns on each")
    print("\nstreams over 1 GiB or more, TB/s (median of the launches) by work-group size")
    best = {}
    for kernel, width in STREAMS.items():
        row = {lsz: float(np.median(v)) for (k, lsz), v in sorted(streams.items()) if k == kernel}
        best[width] = max(row.values(), default=0.0)
        print(f"{kernel:>10} ({width:>2} B): " + "  ".join(f"{lsz}: {tb:.2f}" for lsz, tb in row.items()))
    if best.get(4) and best.get(16):
        print(f"4-byte over 16-byte accesses, each at its best group size: {best[4] / best[16]:.2f}")


if __name__ == "__main__":
    main()
