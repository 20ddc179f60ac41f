"""What a warp's request of a global atomic costs when every work-group updates the same small table, read
off the project's own H200 measurements of ``benchmark/corpus/large/contended_atomics.cl``: the kernels
``ca_inc_hashed`` and ``ca_ticket_hashed`` make ``iters`` updates per work-item at hashed places of a table of
``nbins`` words (1-1024), so the whole grid shares it. Printed per table size: the launch time over its warp
requests (median, min and max over the sweep's sizes and work-group sizes), the table's 128-byte lines,
and the lanes of a request that reach one word (32 / nbins at most). For the device profile's
``gpu_memory`` block (``atomic_word_ns``, ``atomic_shared_ns``). Only ``data/h200`` and ``data/h200-large``
are read, never a dev set.

    .venv/bin/python bench/atomic_shared.py
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from clperf.predictor.training.datasets import read_records

DATA = [Path("data/h200"), Path("data/h200-large")]
KERNELS = ("ca_inc_hashed", "ca_ticket_hashed")
WARP, LINE, WORD = 32, 128, 4


def main() -> None:
    by_bins: dict[int, list[float]] = defaultdict(list)
    for r in read_records(DATA):
        if r.get("status") != "ok" or r.get("kernel") not in KERNELS:
            continue
        a = r["scenario"]["args"]
        requests = a["n"] * a["iters"] / WARP
        by_bins[int(a["nbins"])].append(float(r["median_ms"]) * 1e6 / requests)
    print(f"{'nbins':>6} {'lines':>6} {'lanes/word':>10} {'launches':>8} {'ns/request':>10} "
          f"{'min':>7} {'max':>7}")
    for nbins in sorted(by_bins):
        ns = np.array(by_bins[nbins])
        lines = math.ceil(nbins * WORD / LINE)
        print(f"{nbins:>6} {lines:>6} {max(1.0, WARP / nbins):>10.1f} {len(ns):>8} {np.median(ns):>10.2f} "
              f"{ns.min():>7.2f} {ns.max():>7.2f}")


if __name__ == "__main__":
    main()
