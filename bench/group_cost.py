"""What one work-group costs a CPU runtime besides its work-items' code: the ``group_ns`` of its profile.

A CPU runtime such as PoCL hands each work-group to one of its threads, which calls the kernel's
work-group function for it; that hand-over and call cost the same whatever the group's size. One kernel
(each work-item stores its index) is timed with work-groups of 16 and of 1024 work-items in alternating
rounds, the same work-items either way; the extra time over the extra work-groups is the wall time one
work-group adds (the runtime's threads share the groups, so it is already per thread-pool, not per core).

    .venv/bin/python bench/group_cost.py --device pocl [--items 1048576] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys

SOURCE = """
__kernel void store_index(__global int* out) {
    size_t i = get_global_id(0);
    out[i] = (int)i;
}
"""


def main(argv: list[str] | None = None) -> int:
    from clperf.benchmark.devices import select
    from clperf.benchmark.runner import benchmark

    from clperf.records import Scenario

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--items", type=int, default=1 << 20)
    ap.add_argument("--rounds", type=int, default=5)
    ns = ap.parse_args(argv)
    device = select(ns.device)
    n = ns.items
    small, large = 16, 1024
    per_group = []
    print(f"{device.name} ({device.platform}), {n} work-items in groups of {small} and {large}, "
          f"{ns.rounds} rounds")
    for _ in range(ns.rounds):
        times = []
        for local in (small, large):
            r = benchmark(SOURCE, "store_index", Scenario((n,), (local,), {"out": n}), device)
            if r.status != "ok" or not r.median_ms:
                print(f"groups of {local}: {r.status}: {r.error}", file=sys.stderr)
                return 1
            times.append(r.median_ms)
        per_group.append((times[0] - times[1]) * 1e6 / (n // small - n // large))
        print(f"{times[0]:.3f} ms and {times[1]:.3f} ms: {per_group[-1]:.2f} ns per work-group")
    print(f"group_ns = {statistics.median(per_group):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
