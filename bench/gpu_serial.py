"""What a warp pays when its 32 work-items reach different addresses where the hardware serves one address
at a time: ``__constant`` reads (the constant cache broadcasts one address per request) and atomics
(lanes updating the same address wait for each other). For the device profile's ``gpu_memory`` block
(``constant_ns``, ``atomic_ns``). Runs on the GPU machine with pyopencl (no clperf):

    python3 bench/gpu_serial.py [PLATFORM_SUBSTRING] > serial.json     (beside bench/gpu_math.py)

Every kernel runs a launch that fills the device; each work-item makes ``REPS`` accesses whose address
depends on its lane: lane ``l`` of a warp uses slot ``l % d`` of a small table, so a warp request reaches
``d`` distinct addresses (d = 1, 2, 4, 8, 16, 32). Kinds:

* ``constant``: a read of a 256-entry ``__constant float`` table (it fits the constant cache), the
  address moving with the iteration so no read is hoisted;
* ``global_atomic``: ``atomic_inc`` on a 256-entry global table, every warp of the device on the same
  table (the contention of a shared histogram);
* ``global_atomic_private``: the same on a table per work-group (a histogram per group);
* ``local_atomic``: ``atomic_inc`` on a ``__local`` table per group;
* ``global_atomic_private_occupancy``: ``global_atomic_private`` at 1-16 work-groups per compute unit
  instead of a full device (rows ``{"groups_per_cu", "distinct", "ns_per_warp_access"}``): what a
  histogram per group pays when few warps run on each SM (a grid of a few hundred groups);
* ``global_atomic_table``: ``atomic_inc`` at hashed places of a global table of 1 MiB to 1 GiB (in L2
  or past it), each lane at a place of its own (``spread``: a warp request reaches 32 lines) or the warp
  at 32 consecutive words (one line), rows ``{"bytes", "spread", "ns_per_warp_access"}``: what graph
  and histogram kernels pay for atomics on large arrays.

Printed (JSON): the device and per kind the rows ``{"distinct": d, "ns_per_warp_access": ...}``: the
launch's time over the warp requests it makes (device-wide throughput, so a value is what one more warp
request costs the launch), the best of five launches.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl
from gpu_math import best_ms, open_device  # run as bench/gpu_serial.py: bench/ is on the path

REPS = 256
SOURCE = r"""
__kernel void const_read(__constant float* table, uint d, __global float* out) {
    uint lane = get_local_id(0) % 32u;
    float acc = 0.0f;
    for (uint r = 0; r < REPS; ++r)
        acc += table[((lane % d) * 8u + r) & 255u];
    out[get_global_id(0)] = acc;
}
__kernel void global_atomic(__global uint* table, uint d) {
    uint lane = get_local_id(0) % 32u;
    for (uint r = 0; r < REPS; ++r)
        atomic_inc(&table[((lane % d) * 8u + r) & 255u]);
}
__kernel void global_atomic_private(__global uint* tables, uint d) {
    __global uint* table = tables + get_group_id(0) * 256u;
    uint lane = get_local_id(0) % 32u;
    for (uint r = 0; r < REPS; ++r)
        atomic_inc(&table[((lane % d) * 8u + r) & 255u]);
}
__kernel void local_atomic(uint d, __global uint* out) {
    __local uint table[256];
    uint lane = get_local_id(0) % 32u;
    for (uint i = get_local_id(0); i < 256u; i += get_local_size(0))
        table[i] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint r = 0; r < REPS; ++r)
        atomic_inc(&table[((lane % d) * 8u + r) & 255u]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) out[get_group_id(0)] = table[0];
}
__kernel void global_atomic_table(__global uint* table, uint mask, uint spread) {
    uint gid = get_global_id(0);
    uint lane = get_local_id(0) % 32u;
    uint who = spread ? gid : gid / 32u;
    for (uint r = 0; r < REPS; ++r) {
        uint h = who * 2654435761u + r * 40503u;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        atomic_inc(&table[(spread ? h : (h << 5) + lane) & mask]);
    }
}
"""


def main() -> None:
    dev, ctx, queue = open_device(sys.argv[1] if len(sys.argv) > 1 else "")
    prg = cl.Program(ctx, SOURCE).build(options=[f"-DREPS={REPS}u"])
    group = 256
    items = dev.max_compute_units * 2048
    groups = items // group
    warps = items // 32
    table = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                      hostbuf=np.arange(256, dtype=np.float32))
    counters = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, groups * 256 * 4)
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, items * 4)
    # result key -> (kernel, its arguments before d, after d)
    kinds = {
        "constant": ("const_read", (table,), (out,)),
        "global_atomic": ("global_atomic", (counters,), ()),
        "global_atomic_private": ("global_atomic_private", (counters,), ()),
        "local_atomic": ("local_atomic", (), (out,)),
    }
    result: dict[str, object] = {"device": dev.name, "driver": dev.driver_version, "work_items": items,
                                 "group": group, "reps": REPS}
    for kind, (name, before, after) in kinds.items():
        k = cl.Kernel(prg, name)
        rows = []
        for d in (1, 2, 4, 8, 16, 32):
            args = (*before, np.uint32(d), *after)
            ms = best_ms(lambda k=k, args=args: k(queue, (items,), (group,), *args))
            rows.append({"distinct": d, "ms": ms, "ns_per_warp_access": ms * 1e6 / (warps * REPS)})
        result[kind] = rows
    k = cl.Kernel(prg, "global_atomic_private")
    rows = []
    for per_cu in (1, 2, 4, 8):
        n = dev.max_compute_units * per_cu * group
        for d in (1, 4, 32):
            ms = best_ms(lambda k=k, n=n, d=d: k(queue, (n,), (group,), counters, np.uint32(d)))
            rows.append({"groups_per_cu": per_cu, "distinct": d, "ms": ms,
                         "ns_per_warp_access": ms * 1e6 / (n // 32 * REPS)})
    result["global_atomic_private_occupancy"] = rows
    k = cl.Kernel(prg, "global_atomic_table")
    rows = []
    for log2 in (18, 22, 26, 28):  # entries: 1 MiB, 16 MiB, 256 MiB, 1 GiB
        big = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 << log2)
        cl.enqueue_fill_buffer(queue, big, np.uint32(0), 0, 4 << log2)
        for spread in (0, 1):
            args = (big, np.uint32((1 << log2) - 1), np.uint32(spread))
            ms = best_ms(lambda args=args: k(queue, (items,), (group,), *args))
            rows.append({"bytes": 4 << log2, "spread": bool(spread), "ms": ms,
                         "ns_per_warp_access": ms * 1e6 / (warps * REPS)})
        big.release()
    result["global_atomic_table"] = rows
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
