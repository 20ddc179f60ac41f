"""How a work-group's own small table of global atomics serialises on its busiest word, by how many
groups run at once: ``bench/gpu_constant.py``'s histogram kernels (a binary search over a 32-entry table,
then ``atomic_inc`` of the bin found in a table of the group's own in ``__global`` memory, or in ``__local``
memory for the search's own time) launched with few to many groups. Runs on the GPU machine with pyopencl
(no clperf):

    python3 bench/gpu_hot_word.py [PLATFORM_SUBSTRING] > hot_word.json   (beside gpu_constant.py)
    python3 bench/gpu_hot_word.py --rows hot_word.json constant.json constant_group8.json


A warp's lanes search ``spread`` distinct keys, and every warp of a group the same ones (the lane's key is
its global id modulo ``spread``): with spread 1 all the group's work-items update one word an iteration.
If a word's updates are served one after another and groups' words do not slow each other, a group's
iteration takes the same time however many groups run; if the atomics share a device-wide rate, it grows
with the groups.

Printed (JSON): the device, and per kind, warps per group, groups and spread ``ms`` (best of five launches)
and ``ns_per_iteration`` (the launch over the iterations a work-item makes).

``--rows`` reads such files and ``bench/gpu_constant.py``'s (their spread-1 rows, every lane of a group on one
word an iteration) and prints the device profile's ``atomic_group_word_ns``: per work-groups resident per SM,
the time per update of that word (an iteration over the group's 32 x warps updates), the least over the
launches the atomics bind (at least 1.5 times the same launch with the table in ``__local`` memory: a
smaller group's iteration is its search's, not its word's); and ``atomic_group_line_share``: per spread
(distinct words of the table's one 128-byte line updated an iteration), the median over the launches where
it and spread 1 both bind of its time per update over spread 1's.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl

# run as bench/gpu_hot_word.py: bench/ is on the path
from gpu_constant import BINS, ITERATIONS, KEYS, SOURCE, search_inputs
from gpu_math import best_ms, open_device

GROUP_WARPS = (1, 2, 4, 8, 16)
GROUPS = (1, 33, 66, 132, 201, 264, 528)
SPREADS = (1, 8, 32)
KINDS = ("constant_atomic", "constant_local_atomic")


def _binding(paths: list[str]) -> dict[tuple[int, int, float], float]:
    """(spread, group warps, groups resident per SM) -> ns per update, of the launches the atomics bind."""
    found: dict[tuple[int, int, float], float] = {}
    for path in paths:
        with open(path) as f:
            d = json.load(f)
        sms = d["compute_units"]
        times: dict[tuple[str, int, int, int], float] = {}
        for r in d["rows"]:
            if "ms" in r:
                warps = r.get("group_warps", d.get("group_warps", 1))
                groups = r["groups"] if "groups" in r else r["warps_per_cu"] * sms // warps
                times[r["kind"], r["spread"], warps, groups] = r["ms"]
        for (kind, spread, warps, groups), ms in times.items():
            local = times.get(("constant_local_atomic", spread, warps, groups))
            if kind != "constant_atomic" or local is None or ms < 1.5 * local:
                continue
            key = (spread, warps, round(groups / sms, 3))
            ns = ms * 1e6 / d["iterations"] / (32 * warps)
            found[key] = min(found.get(key, ns), ns)
    return found


def profile_rows(paths: list[str]) -> list[tuple[float, float]]:
    """(groups resident per SM, ns per update of a group's busiest word) rows from measurement files."""
    best: dict[float, float] = {}
    for (spread, _, per_sm), ns in _binding(paths).items():
        if spread == 1:
            best[per_sm] = min(best.get(per_sm, ns), ns)
    return sorted((k, round(v, 2)) for k, v in best.items())


def share_rows(paths: list[str]) -> list[tuple[int, float]]:
    """(distinct words of the line, time per update over one word's) rows from measurement files."""
    found = _binding(paths)
    shares: dict[int, list[float]] = {1: [1.0]}
    for (spread, warps, per_sm), ns in found.items():
        one = found.get((1, warps, per_sm))
        if spread > 1 and one:
            shares.setdefault(spread, []).append(ns / one)
    return [(s, round(float(np.median(v)), 2)) for s, v in sorted(shares.items())]


def main() -> None:
    if sys.argv[1:2] == ["--rows"]:
        print(json.dumps({"atomic_group_word_ns": profile_rows(sys.argv[2:]),
                          "atomic_group_line_share": share_rows(sys.argv[2:])}))
        return
    dev, ctx, queue = open_device(sys.argv[1] if len(sys.argv) > 1 else "")
    prg = cl.Program(ctx, SOURCE).build(options=f"-DBINS={BINS} -DKEYS={KEYS}")
    kernels = {k: cl.Kernel(prg, f"search_{k}") for k in KINDS}
    result: dict[str, object] = {"device": dev.name, "driver": dev.driver_version,
                                 "compute_units": dev.max_compute_units, "clock_mhz": dev.max_clock_frequency,
                                 "bins": BINS, "iterations": ITERATIONS}
    bins_buf, keys_buf = search_inputs(ctx)
    hist = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, max(GROUPS) * BINS * 4)
    rows = []
    for warps in GROUP_WARPS:
        for groups in GROUPS:
            for spread in SPREADS:
                for kind in KINDS:
                    kernel, n = kernels[kind], 32 * warps
                    x = (bins_buf, keys_buf, np.int32(ITERATIONS), np.uint32(spread), hist)
                    try:
                        ms = best_ms(lambda k=kernel, g=groups * n, n=n, x=x: k(queue, (g,), (n,), *x))
                    except cl.Error as e:  # one size failing leaves the others
                        rows.append({"kind": kind, "group_warps": warps, "groups": groups, "spread": spread,
                                     "error": str(e)})
                        continue
                    rows.append({"kind": kind, "group_warps": warps, "groups": groups, "spread": spread,
                                 "ms": ms, "ns_per_iteration": ms * 1e6 / ITERATIONS})
    result["rows"] = rows
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
