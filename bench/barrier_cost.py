"""What one work-group barrier costs per work-item on a device (the ``barrier_item_ns`` of its profile), and
what one work-group costs besides its work-items' code.

A CPU runtime such as PoCL runs a kernel as loops over the work-items, one loop per region between
barriers, with the values that live across a barrier kept in per-work-item arrays; each barrier therefore
costs every work-item something, whatever the kernel does. Two kernels that differ only in one barrier
(one live value across it) are timed in alternating rounds, 1-D (256 per group) and 2-D (16x16); the script
prints the median extra time per work-item in each round and the median of all.

A CPU runtime also hands each work-group to one of its threads, which calls the kernel's work-group
function for it, at a cost whatever the group's size: one kernel (each work-item stores its index) is timed
with work-groups of 16 and of 1024 work-items in alternating rounds, the same work-items either way; the
extra time over the extra work-groups is the wall time one work-group adds (``group_ns``; the runtime's
threads share the groups). The rewrite speedup model does not use it (docs/design-decisions.md).

    .venv/bin/python bench/barrier_cost.py --device pocl [--items 1048576] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys

SOURCE = """
__kernel void plain(__global const float* in, __global float* out) {
    size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    float x = in[i];
    out[i] = x * 2.0f;
}
__kernel void one_barrier(__global const float* in, __global float* out) {
    size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    float x = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = x * 2.0f;
}
__kernel void store_index(__global int* out) {
    size_t i = get_global_id(0);
    out[i] = (int)i;
}
"""


def main(argv: list[str] | None = None) -> int:
    from clperf.benchmark.devices import select
    from clperf.benchmark.runner import benchmark
    from clperf.core.records import Scenario

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--items", type=int, default=1 << 20)
    ap.add_argument("--rounds", type=int, default=5)
    ns = ap.parse_args(argv)
    device = select(ns.device)
    n = ns.items
    side = int(n ** 0.5)
    shapes = {"1-D": Scenario((n,), (256,), {"in": n, "out": n}),
              "2-D": Scenario((side, side), (16, 16), {"in": side * side, "out": side * side})}
    every: list[float] = []
    print(f"{device.name} ({device.platform}), {n} work-items, {ns.rounds} rounds")
    for label, sc in shapes.items():
        per_item = []
        for _ in range(ns.rounds):
            a = benchmark(SOURCE, "plain", sc, device)
            b = benchmark(SOURCE, "one_barrier", sc, device)
            if a.status != "ok" or b.status != "ok" or not a.median_ms or not b.median_ms:
                print(f"{label}: {a.status} / {b.status}: {a.error or b.error}", file=sys.stderr)
                return 1
            per_item.append((b.median_ms - a.median_ms) * 1e6 / sc.work_items)
        every += per_item
        print(f"{label}: {' '.join(f'{x:.3f}' for x in per_item)} ns per work-item "
              f"(median {statistics.median(per_item):.3f})")
    print(f"barrier_item_ns = {statistics.median(every):.3f}")
    small, large = 16, 1024
    per_group = []
    for _ in range(ns.rounds):
        times = []
        for local in (small, large):
            r = benchmark(SOURCE, "store_index", Scenario((n,), (local,), {"out": n}), device)
            if r.status != "ok" or not r.median_ms:
                print(f"groups of {local}: {r.status}: {r.error}", file=sys.stderr)
                return 1
            times.append(r.median_ms)
        per_group.append((times[0] - times[1]) * 1e6 / (n // small - n // large))
        print(f"groups of {small} and {large}: {times[0]:.3f} ms and {times[1]:.3f} ms, "
              f"{per_group[-1]:.2f} ns per work-group")
    print(f"group_ns = {statistics.median(per_group):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
