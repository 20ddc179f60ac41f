"""What a vector pass of PoCL's work-item loop waits when a read has the low 12 bits of a write a few
passes before it (4K aliasing): the ``ALIAS_CYCLES`` of ``predictor/model/speedup.py``.

A core decides whether a read depends on an earlier write before it knows their whole addresses, from
their low 12 bits; a read that starts where a pending write to somewhere else started waits for it. PoCL
runs a loop-free kernel over a 2-D work-group as rows of vector passes (8 floats each), and OpenCL buffers
start on a page, so over an image whose rows are 4 KB apart the reads of the next row have the low 12
bits of the writes of the last: 1, 2, 4 or 8 passes before them in groups 8, 16, 32 or 64 work-items wide.
Each kernel below (written here; 1024x1024 work-items) is timed over rows of 1024 floats (4096 bytes) and
of 1040 (4160 bytes) in alternating rounds; the extra time, in core cycles (a chain of dependent adds gives
the clock) per pass of 8 work-items, is the wait:

* ``row``: one read and one write a work-item, the same place of two buffers: over rows 4 KB apart the
  read waits on the write of the row before, ``width / 8`` passes back;
* ``column3``: three reads down a column (rows y-1, y, y+1), the same passes as ``row``;
* ``cross5``: a 5-point cross (reads one float left and right too, which start elsewhere).

``speedup_model.aliased_reads`` says which passes of each kernel wait, how far back the write is and how
many reads wait on it, over either kind of row (rows 4160 bytes apart have some too: a read of row y-1
meets the write of ``out``'s row y-1 at the same place, and rows two apart are 4 KB and a line apart,
which a group 32 or 64 wide spans): the script prints each
measured wait next to what ``alias_cycles`` charges for it, and the table ``ALIAS_CYCLES`` (cycles by
distance, for one waiting read; ``sqrt(n)`` for n) that fits all twelve by least squares (3 passes, which
none of them meets: the geometric mean of 2 and 4).

    .venv/bin/python bench/alias_cost.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from pathlib import Path

KERNELS = {
    "row": "out[i] = in[i] * 2.0f;",
    "column3": "out[i] = in[i - w] + in[i] + in[i + w];",
    "cross5": "out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);",
}
WIDTHS = (8, 16, 32, 64)  # work-group widths: the write a read waits on is width / 8 passes back
SIDE = 1024


def source(body: str) -> str:
    return ("__kernel void k(__global const float* in, __global float* out, int w) {\n"
            "    int i = (get_global_id(1) + 1) * w + get_global_id(0);\n"
            f"    {body}\n}}\n")


def main(argv: list[str] | None = None) -> int:
    from clperf.benchmark.devices import select
    from clperf.benchmark.runner import benchmark
    from clperf.core.records import Scenario
    from clperf.predictor.analysis.pipeline import analyze_text
    from clperf.predictor.model import core_run
    from clperf.predictor.model import speedup as speedup_model

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--rounds", type=int, default=7)
    ns = ap.parse_args(argv)
    from cpu_core_facts import ns_per_pass  # this folder's

    cc = core_run.compiler()
    if cc is None:
        print("needs x86-64 and a C compiler (the core clock)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as d:
        ghz = 256 / ns_per_pass(cc, Path(d), "adds", ["add $1, %rax"] * 256, 2_000_000)
    device = select(ns.device)
    print(f"{device.name} ({device.platform}); core clock {1000 * ghz:.0f} MHz; {SIDE}x{SIDE} work-items, "
          f"{ns.rounds} rounds; core cycles a pass of 8 work-items, rows 4096 bytes apart minus 4160")
    rows: list[list[float]] = []  # per kernel and width: the model's waiting reads by distance
    waits: list[float] = []
    for name, body in KERNELS.items():
        text = source(body)
        kernel = analyze_text(text, None, "").kernel("k")
        for width in WIDTHS:
            local = (width, 256 // width)
            scenarios = [Scenario((SIDE, SIDE), local, {"in": w * (SIDE + 2), "out": w * (SIDE + 2), "w": w})
                         for w in (SIDE, SIDE + 16)]
            rounds = []
            for _ in range(ns.rounds):
                ms = []
                for sc in scenarios:
                    r = benchmark(text, "k", sc, device)
                    if r.status != "ok" or not r.median_ms:
                        print(f"{name} {local}: {r.status}: {r.error}", file=sys.stderr)
                        return 1
                    ms.append(r.median_ms)
                # wall time x the runtime's threads = core time; per pass of 8 work-items
                rounds.append((ms[0] - ms[1]) * 1e6 * ghz * device.compute_units * 8 / SIDE ** 2)
            waits.append(statistics.median(rounds))
            units = [0.0] * len(speedup_model.ALIAS_CYCLES)
            for sign, sc in zip((1, -1), scenarios, strict=True):
                for d, n in speedup_model.aliased_reads(kernel, sc):
                    units[d - 1] += sign * math.sqrt(n) * 8 / math.prod(local)  # per pass of 8
            rows.append(units)
            charged = [speedup_model.alias_cycles(kernel, sc) * 8 / SIDE ** 2 for sc in scenarios]
            print(f"{name:8s} groups {local[0]:2d}x{local[1]:<2d}: {waits[-1]:5.1f} measured, "
                  f"{charged[0] - charged[1]:5.1f} charged (rounds {min(rounds):.1f} to {max(rounds):.1f})")
    table = fit(rows, waits)
    print("ALIAS_CYCLES = (" + ", ".join(f"{x:.1f}" for x in table) + ")  # least squares, none negative")
    return 0


def fit(rows: list[list[float]], waits: list[float]) -> list[float]:
    """The table (cycles by distance) whose charges come nearest the measured waits by least squares,
    with no entry below 0 (an entry that would be is left at 0 and the rest fitted again); a distance the
    kernels never meet gets the geometric mean of its neighbours'."""
    import numpy as np

    a, b = np.array(rows), np.array(waits)
    free = [j for j in range(a.shape[1]) if a[:, j].any()]
    while True:
        x = np.zeros(a.shape[1])
        if free:
            x[free] = np.linalg.lstsq(a[:, free], b, rcond=None)[0]
        if (x >= 0).all():
            break
        free.remove(int(np.argmin(x)))
    for j in range(1, a.shape[1] - 1):  # a distance no kernel here meets (3 passes): between its neighbours
        if not a[:, j].any():
            x[j] = math.sqrt(x[j - 1] * x[j + 1])
    return [float(v) for v in x]


if __name__ == "__main__":
    sys.exit(main())
