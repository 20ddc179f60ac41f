"""The counting run's wall time on a ~1 ms H200 launch, and its counts' error against exact ones
(target: <= 10 s on the 2-core development machine at the default 8 s budget).

    .venv/bin/python bench/counting_speed.py [--repeats 3] [--seeds 5] [--budget 8]

Timed (each from the call to the Counts, no cache, the plugin already built):
* a naive matrix product, n = 1024, one work-item per output (16x16 groups): 2.1 GFLOP, ~1 ms on the H200;
* a stream triad over 64 MiB arrays (16 M floats each), and over 1 GiB arrays (the inputs' staging).

Error of ``blocks`` x work-items against the truth, and the run's own ``rel_error``, over ``--seeds``
data sets: a uniform kernel (each work-item loops a random 0..39 times, 256 k work-items), and a
heavy-tailed one (CSR SpMV, 131 k rows whose lengths follow a Zipf law, 1..3000, 2048 groups), both
sampled (256 of their groups at most, within the budget). Medians are printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from clperf.benchmark.counting import Counts, count, oclgrind
from clperf.benchmark.counting.store import CountStore
from clperf.core.cache import JsonCache
from clperf.core.records import Scenario

MATMUL = """
__kernel void matmul(__global const float* a, __global const float* b, __global float* c, int n) {
    int row = get_global_id(1), col = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}
"""
TRIAD = """
__kernel void triad(__global const float* a, __global const float* b, __global float* c, float s) {
    int i = get_global_id(0);
    c[i] = a[i] + s * b[i];
}
"""
STEPS = """
__kernel void steps(__global const int* n, __global float* out) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < n[i]; ++k)
        s += k * 0.5f;
    out[i] = s;
}
"""
SPMV = """
__kernel void spmv(__global const int* rowptr, __global const int* colidx, __global const float* vals,
                   __global const float* x, __global float* y, int rows) {
    int r = get_global_id(0);
    if (r >= rows) return;
    float sum = 0.0f;
    for (int j = rowptr[r]; j < rowptr[r + 1]; ++j)
        sum += vals[j] * x[colidx[j]];
    y[r] = sum;
}
"""


def _store(folder: Path, tag: str) -> CountStore:
    return CountStore(JsonCache(folder / tag / "rows"), folder / tag / "traces")


def _timed(folder: Path, tag: str, *args: object, **kwargs: object) -> tuple[float, Counts]:
    start = time.perf_counter()
    c = count(*args, store=_store(folder, tag), **kwargs)  # type: ignore[arg-type]
    if c is None:
        raise SystemExit(f"{tag}: no counting run (see the log)")
    return time.perf_counter() - start, c


def speed(folder: Path, repeats: int, budget: float) -> None:
    n = 1024
    mm = Scenario((n, n), (16, 16), {"a": n * n, "b": n * n, "c": n * n, "n": n})
    m = 16 << 20
    tr = Scenario((m,), (256,), {"a": m, "b": m, "c": m, "s": 2.0})
    big = 256 << 20
    large = Scenario((big,), (256,), {"a": big, "b": big, "c": big, "s": 2.0})
    for name, src, kernel, sc, block, want in (("matmul n=1024", MATMUL, "matmul", mm, "for.body", n),
                                               ("triad 3 x 64 MiB", TRIAD, "triad", tr, "entry", 1),
                                               ("triad 3 x 1 GiB", TRIAD, "triad", large, "entry", 1)):
        walls, runs = [], []
        for r in range(repeats):
            wall, c = _timed(folder, f"{kernel}{r}", src, kernel, sc, budget_s=budget)
            walls.append(wall)
            runs.append(c)
            assert c.blocks[block] == want, c.blocks
        c = runs[-1]
        each = ", ".join(f"{w:.2f}" for w in walls)
        print(f"{name:18s} wall median {statistics.median(walls):5.2f} s (runs {each});"
              f" {c.groups_run}/{c.groups_total} groups, {block} {c.blocks[block]:g}/item (exact {want}),"
              f" rel_error {c.rel_error:.3g}, {0 if c.trace is None else len(c.trace)} trace records")


def _zipf_rows(rows: int, rng: np.random.Generator) -> np.ndarray:
    lengths = np.minimum(rng.zipf(1.6, rows), 3000).astype(np.int64)
    return np.r_[0, np.cumsum(lengths)].astype(np.int32)


def errors(folder: Path, seeds: int, budget: float) -> None:
    items = 256 * 1024
    uniform_err, uniform_se, tail_err, tail_se, tail_groups = [], [], [], [], []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        n = rng.integers(0, 40, items).astype(np.int32)
        sc = Scenario((items,), (64,), {"n": items, "out": items})
        _, c = _timed(folder, f"steps{seed}", STEPS, "steps", sc, data={"n": n}, budget_s=budget)
        uniform_err.append(abs(c.blocks["for.body"] * items / n.sum() - 1))
        uniform_se.append(c.rel_error)
        rows = 131072
        rowptr = _zipf_rows(rows, rng)
        nnz = int(rowptr[-1])
        sc = Scenario((rows,), (64,), {"rowptr": rows + 1, "colidx": nnz, "vals": nnz, "x": rows, "y": rows,
                                      "rows": rows})
        data = {"rowptr": rowptr, "colidx": rng.integers(0, rows, nnz).astype(np.int32)}
        _, c = _timed(folder, f"spmv{seed}", SPMV, "spmv", sc, data=data, budget_s=budget, trace_groups=0)
        tail_err.append(abs(c.blocks["for.body"] * rows / nnz - 1))
        tail_se.append(c.rel_error)
        tail_groups.append(c.groups_run)
    med = statistics.median
    print(f"uniform (steps 0..39, {items} items, 4096 groups): median |error| {med(uniform_err):.2%}, "
          f"median rel_error {med(uniform_se):.2%} over {seeds} data sets")
    print(f"heavy-tailed (Zipf CSR, 131072 rows, 2048 groups, median {med(tail_groups):g} sampled): median "
          f"|error| {med(tail_err):.2%} (max {max(tail_err):.2%}), median rel_error {med(tail_se):.2%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=float, default=8.0)
    ns = ap.parse_args()
    try:
        oclgrind.plugin(oclgrind.toolchain())  # built once, outside the timings
    except oclgrind.Unavailable as e:
        print(f"no counting run on this machine: {e}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="counting-bench-") as tmp:
        speed(Path(tmp), ns.repeats, ns.budget)
        errors(Path(tmp), ns.seeds, ns.budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
