"""Time of the memory-hierarchy model (predictor/model/memory.py) on access traces of about 2e6 records,
the size a counting run's trace cap allows (target: well under a second for the launch-level functions).

    .venv/bin/python bench/memory_speed.py [--repeat 5]

Two synthetic traces of 4 traced work-groups of 256 work-items, 2048 accesses each: a naive matrix product
(coalesced, re-read within the group: few sectors per record) and a gather at random offsets of three
1 GiB buffers (one sector per record: the most work per record). Printed: the median and best wall and
processor time of ``memory_traffic``, ``warp_sectors`` and ``bank_conflicts`` (the trace as __local).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from clperf.predictor.model import memory, profiles

GROUPS = [0, 4095, 2531, 1012]


def _trace(group: np.ndarray, item: np.ndarray, site: np.ndarray, seq: np.ndarray, offset: np.ndarray,
           buffer: np.ndarray) -> np.ndarray:
    t = np.zeros(group.size, memory.TRACE)
    for name, col in (("group", group), ("item", item), ("site", site), ("seq", seq), ("offset", offset),
                      ("buffer", buffer), ("arg", buffer)):
        t[name] = col.ravel()
    t["size"], t["kind"], t["space"] = 4, memory.LOAD, memory.GLOBAL
    return t


def naive_matmul(n: int = 1024) -> np.ndarray:
    g, ty, tx, k = np.meshgrid(GROUPS, np.arange(16), np.arange(16), np.arange(n), indexing="ij")
    row, col = (g // (n // 16)) * 16 + ty, (g % (n // 16)) * 16 + tx
    lid = ty * 16 + tx
    k2 = np.concatenate([k, k])
    a = np.concatenate([4 * (row * n + k), 4 * (k * n + col)])
    return _trace(np.concatenate([g, g]), np.concatenate([lid, lid]), np.repeat([0, 1], g.size),
                  2 * k2 + np.repeat([0, 1], g.size).reshape(k2.shape), a, np.repeat([0, 1], g.size))


def random_gather() -> np.ndarray:
    rng = np.random.default_rng(0)
    g, lid, k = np.meshgrid(GROUPS, np.arange(256), np.arange(2048), indexing="ij")
    return _trace(g, lid, k % 3, k, 4 * rng.integers(0, 2**28, g.shape), k % 3)


def _time(fn, repeat: int) -> tuple[float, float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), min(walls), min(cpus)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ns = ap.parse_args()
    h200 = next(d for d in profiles.shipped() if d.name == "NVIDIA H200")
    mem = profiles.facts(h200).gpu_memory
    assert mem is not None
    for name, trace in (("naive matmul", naive_matmul()), ("random gather", random_gather())):
        local = trace.copy()
        local["space"] = memory.LOCAL
        runs = {"memory_traffic": lambda t=trace: memory.memory_traffic(t, len(GROUPS) * 1024, mem,
                                                                         groups_per_sm=8, sms=132),
                "warp_sectors": lambda t=trace: memory.warp_sectors(t),
                "bank_conflicts": lambda t=local: memory.bank_conflicts(t)}
        for fn_name, fn in runs.items():
            median, best, cpu = _time(fn, ns.repeat)
            print(f"{name:14s} {len(trace):,} records  {fn_name:15s} wall median {median:.2f} s, "
                  f"best {best:.2f} s; processor best {cpu:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
