"""Load latencies of an OpenCL GPU, per level of its memory hierarchy, for the device profile's
``gpu_memory`` block (``load_latency_ns``): the cost the roofline charges a load that its work-item's
next step waits for (``roofline.chain_ms``). Runs on the GPU machine with pyopencl (no clperf):

    python3 bench/gpu_latency.py [PLATFORM_SUBSTRING] > latency.json

Two kernels, one warp each, one work-group per compute unit, timed with profiling events:

* ``chase``: ``p = next[p]`` through a random cycle of 128-byte lines spread over a region of ``S`` bytes;
  each step waits for the previous load. Per region size, the time of one step (a region that fits the
  L1 gives the L1 hit latency, one that fits the L2 the L2's, a larger one DRAM's).
* ``search``: ``for (x = 0; x < n; x++) if (a[x] >= v) break;`` over a region of ``S`` bytes, every
  compute unit walking its own region: the loop's exit waits for each load (the next load's address does
  not), the shape of a linear search. Per region size, the time of one iteration.

Printed (JSON): the device, and per kernel the rows ``{"bytes": S, "ns": ..., "cycles": ...}`` (cycles at
the device's maximum clock), each the best of five launches less the launch floor of an empty kernel.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl

SOURCE = r"""
__kernel void chase(__global const uint* next, uint steps, __global uint* out) {
    uint p = get_group_id(0) * 32u;  /* each group starts at its own line of the cycle */
    for (uint s = 0; s < steps; ++s)
        p = next[p];
    if (p == 0xffffffffu) out[0] = p;
}
__kernel void search(__global const float* a, uint n, uint reps, float v, __global uint* out) {
    __global const float* mine = a + get_group_id(0) * (ulong)n;
    uint found = 0;
    for (uint r = 0; r < reps; ++r) {
        uint x = 0;
        for (; x < n; ++x)
            if (mine[x] >= v + (float)r)
                break;
        found += x;
    }
    if (found == 0xffffffffu) out[0] = found;
}
__kernel void empty(__global uint* out) {
    if (get_global_id(0) == 0xffffffffu) out[0] = 0;
}
"""

LINE_WORDS = 32  # 128-byte lines of 4-byte words


def _best_ms(queue: cl.CommandQueue, launch, repeat: int = 5) -> float:
    launch().wait()
    best = float("inf")
    for _ in range(repeat):
        ev = launch()
        ev.wait()
        best = min(best, (ev.profile.end - ev.profile.start) * 1e-6)
    return best


def chase_rows(ctx, queue, prg, units: int, clock_mhz: float, floor_ms: float) -> list[dict[str, float]]:
    rng = np.random.default_rng(1)
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4)
    rows = []
    for kib in (16, 64, 128, 192, 512, 2048, 8192, 32768, 262144, 1048576):
        lines = kib * 1024 // 128
        order = rng.permutation(lines).astype(np.uint32)
        nxt = np.zeros(lines * LINE_WORDS, np.uint32)
        nxt[order * LINE_WORDS] = np.roll(order, -1) * LINE_WORDS  # one cycle through every line
        buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=nxt)
        steps = 20000
        def launch(buf=buf, steps=steps):
            return prg["chase"](queue, (units * 32,), (32,), buf, np.uint32(steps), out)
        _best_ms(queue, launch, 1)  # warm the caches the region fits
        ms = _best_ms(queue, launch)
        ns = max(ms - floor_ms, 0.0) * 1e6 / steps
        rows.append({"bytes": kib * 1024, "ns": ns, "cycles": ns * clock_mhz * 1e-3})
        buf.release()
    return rows


def search_rows(ctx, queue, prg, units: int, clock_mhz: float, floor_ms: float) -> list[dict[str, float]]:
    rng = np.random.default_rng(2)
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4)
    rows = []
    for kib in (16, 64, 128, 192, 512, 2048, 8192, 65536):
        n = kib * 1024 // 4
        per_unit = n if kib <= 8192 else n // units  # the large regions split over the units
        a = rng.random(per_unit * units, dtype=np.float32)  # below 1: the search never breaks early
        buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
        reps = max(1, 200000 // per_unit)
        def launch(buf=buf, per_unit=per_unit, reps=reps):
            return prg["search"](queue, (units * 32,), (32,), buf, np.uint32(per_unit), np.uint32(reps),
                              np.float32(2.0), out)
        _best_ms(queue, launch, 1)
        ms = _best_ms(queue, launch)
        ns = max(ms - floor_ms, 0.0) * 1e6 / (per_unit * reps)
        rows.append({"bytes": per_unit * 4, "ns": ns, "cycles": ns * clock_mhz * 1e-3})
        buf.release()
    return rows


def main(argv: list[str]) -> int:
    want = argv[0].lower() if argv else ""
    devices = [d for p in cl.get_platforms() if want in p.name.lower()
               for d in p.get_devices(cl.device_type.GPU)]
    if not devices:
        print(f"no OpenCL GPU{' on a platform matching ' + repr(want) if want else ''}", file=sys.stderr)
        return 1
    dev = devices[0]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    program = cl.Program(ctx, SOURCE).build()
    prg = {name: cl.Kernel(program, name) for name in ("chase", "search", "empty")}
    units, clock = dev.max_compute_units, float(dev.max_clock_frequency)
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4)
    floor_ms = _best_ms(queue, lambda: prg["empty"](queue, (units * 32,), (32,), out), 20)
    result = {"device": dev.name, "driver": dev.driver_version, "compute_units": units, "clock_mhz": clock,
              "floor_ms": floor_ms,
              "chase": chase_rows(ctx, queue, prg, units, clock, floor_ms),
              "search": search_rows(ctx, queue, prg, units, clock, floor_ms)}
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
