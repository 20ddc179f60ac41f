"""A binary search over a small table, as histogram kernels bin their values: the time of one search by a
warp, by where the table is and how many distinct keys the warp's lanes search for, for the roofline's
chain bound (``roofline.chain_ms``). Runs on the GPU machine with pyopencl (no clperf):

    python3 bench/gpu_constant.py [PLATFORM_SUBSTRING [GROUP_WARPS]] > constant.json   (beside gpu_math.py)

Each work-item (kernel ``search_KIND``) makes ``ITERATIONS`` searches; a search reads a key from a small
``__global`` array (L1 resident) and halves ``[0, BINS)`` with
``if (key >= bins[mid]) hi = mid; else lo = mid;`` until one bin is left (log2(BINS) dependent steps). A
warp's 32 lanes search ``spread`` distinct keys (1: every lane the same, 32: each its own), so a step
reaches up to min(spread, 2^step) distinct entries of the table. Work-groups of ``GROUP_WARPS`` warps
(default 1; the histograms are then shared by them), ``warps`` of them per compute unit. Kinds:

* ``constant``: the table in ``__constant`` memory;
* ``global``: the same table in ``__global`` memory;
* ``constant_atomic``: ``constant`` and then ``atomic_inc`` of the bin found in a table of the work-group's
  own in ``__global`` memory (a histogram per group);
* ``constant_local_atomic``: the same histogram in ``__local`` memory.

Printed (JSON): the device, and per kind, spread and warps per compute unit ``ms`` (best of five launches)
and ``ns_per_search`` (the launch over the searches one warp makes).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl
from gpu_math import best_ms, open_device  # run as bench/gpu_constant.py: bench/ is on the path

BINS = 32
KEYS = 4096
ITERATIONS = 2048
SPREADS = (1, 2, 8, 32)
WARPS = (1, 4, 12, 32)

SOURCE = r"""
#define SEARCH(table)                                                   \
    uint lo = 0u, hi = BINS;                                            \
    while (hi > lo + 1u) {                                              \
        uint mid = (lo + hi) / 2u;                                      \
        if (key >= table[mid]) hi = mid; else lo = mid;                 \
    }

// the same search over a table in one address space or another
#define SEARCH_KERNEL(name, space)                                                                   \
__kernel void name(space const float* bins, __global const float* keys, int iterations, uint spread, \
                   __global uint* out) {                                                             \
    uint lane = get_global_id(0) % spread, acc = 0u;                                                 \
    for (int k = 0; k < iterations; ++k) {                                                           \
        float key = keys[(k * spread + lane) & (KEYS - 1)];                                          \
        SEARCH(bins)                                                                                 \
        acc += hi;                                                                                   \
    }                                                                                                \
    out[get_global_id(0)] = acc;                                                                     \
}
SEARCH_KERNEL(search_constant, __constant)
SEARCH_KERNEL(search_global, __global)
__kernel void search_constant_atomic(__constant float* bins, __global const float* keys,
                                     int iterations, uint spread, __global uint* hist) {
    uint lane = get_global_id(0) % spread;
    __global uint* mine = hist + get_group_id(0) * BINS;
    for (int k = 0; k < iterations; ++k) {
        float key = keys[(k * spread + lane) & (KEYS - 1)];
        SEARCH(bins)
        atomic_inc(&mine[hi - 1u]);
    }
}
__kernel void search_constant_local_atomic(__constant float* bins, __global const float* keys,
                                           int iterations, uint spread, __global uint* hist) {
    __local uint mine[BINS];
    uint lane = get_global_id(0) % spread;
    if (get_local_id(0) < BINS) mine[get_local_id(0)] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < iterations; ++k) {
        float key = keys[(k * spread + lane) & (KEYS - 1)];
        SEARCH(bins)
        atomic_inc(&mine[hi - 1u]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) < BINS) hist[get_group_id(0) * BINS + get_local_id(0)] = mine[get_local_id(0)];
}
"""


def search_inputs(ctx: cl.Context) -> tuple[cl.Buffer, cl.Buffer]:
    """The searched table (``BINS`` descending edges, as the search expects) and the ``KEYS`` keys, on the
    device: the same random draw every run."""
    rng = np.random.default_rng(7)
    bins = np.sort(rng.random(BINS, dtype=np.float32))[::-1].copy()
    keys = rng.random(KEYS, dtype=np.float32)
    ro = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    return cl.Buffer(ctx, ro, hostbuf=bins), cl.Buffer(ctx, ro, hostbuf=keys)


def main() -> None:
    dev, ctx, queue = open_device(sys.argv[1] if len(sys.argv) > 1 else "")
    group_warps = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    prg = cl.Program(ctx, SOURCE).build(options=f"-DBINS={BINS} -DKEYS={KEYS}")
    kinds = ("constant", "global", "constant_atomic", "constant_local_atomic")
    kernels = {k: cl.Kernel(prg, f"search_{k}") for k in kinds}
    units = dev.max_compute_units
    result: dict[str, object] = {"device": dev.name, "driver": dev.driver_version, "compute_units": units,
                                 "clock_mhz": dev.max_clock_frequency, "bins": BINS,
                                 "iterations": ITERATIONS, "group_warps": group_warps}
    bins_buf, keys_buf = search_inputs(ctx)
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, units * max(WARPS) * 32 * BINS * 4)
    rows = []
    for spread in SPREADS:
        for warps in WARPS if group_warps == 1 else (group_warps, 2 * group_warps, 4 * group_warps):
            items = units * 32 * warps
            for kind in kinds:
                kernel = kernels[kind]
                x = (bins_buf, keys_buf, np.int32(ITERATIONS), np.uint32(spread), out)
                ms = best_ms(lambda k=kernel, g=items, x=x: k(queue, (g,), (32 * group_warps,), *x))
                rows.append({"kind": kind, "spread": spread, "warps_per_cu": warps, "ms": ms,
                             "ns_per_search": ms * 1e6 / ITERATIONS})
    result["rows"] = rows
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
