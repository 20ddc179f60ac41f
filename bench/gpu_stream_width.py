"""How fast DRAM streams by what each work-item keeps in flight: the roofline's DRAM share
(``roofline.stream_share``). Runs on the GPU machine with pyopencl (no clperf):

    python3 bench/gpu_stream_width.py [PLATFORM_SUBSTRING] > stream_width.json     (beside bench/gpu_math.py)
    python3 bench/gpu_stream_width.py --many-stores [PLATFORM_SUBSTRING] > stream_stores.json

Every kernel has one work-item per element: it loads element ``gid`` of ``loads`` arrays of ``float``,
``float2`` or ``float4``, sums them and stores the sum to ``stores`` arrays (0 stores: it writes only where
the sum is negative, which it never is, so the loads stay). The arrays together span ``TOTAL_MIB``, far
past the L2, so DRAM serves every byte once. Work-groups of 256; ``pad`` bytes of ``__local`` memory a
group (never touched) leave fewer groups resident on a compute unit (with 46 KiB, 4 of them: 1,024
work-items where none leaves 2,048), so the bytes in flight change with the same code.
A ``loop`` row walks ``loads`` arrays eight times over in a loop of eight iterations (the same trips for
every work-item), as a work-item that handles several elements does. ``--many-stores``: 0, 1 or 4 loads
and 8, 16 or 32 stores a work-item instead.

Printed (JSON): the device and, per kernel, ``ms`` (best of five launches) and ``tbs``: the bytes the
arrays hold over that time, in TB/s.

    python3 bench/gpu_stream_width.py --fit data/h100/gpu_stream_width.json

fits those rows with the roofline's law (``roofline.stream_share``): the loads' bytes at
``x / (1 + x^3)^(1/3)`` of the peak, ``x`` the bytes an SM keeps in flight over the peak's bytes in DRAM's
round trip; the stores' at the peak; the work-groups' starts at ``GROUP_START_NS`` (the H200 profile's
``group_dispatch_ns``). It prints the round trip that fits best, its mean and median |log error|, and the
rows it misses by over 10%.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl
from gpu_math import best_ms, open_device  # run as bench/gpu_stream_width.py: bench/ is on the path

TOTAL_MIB = 1536
GROUP = 256
WIDTHS = {"float": 4, "float2": 8, "float4": 16}
LOADS = (1, 2, 3, 4, 6, 8)
STORES = (0, 1)
PADS = (0, 40 * 1024, 46 * 1024)
LOOP = 8
SHARED_PER_CU, RESERVED_PER_GROUP, MAX_RESIDENT = 228 * 1024, 1024, 2048  # GH100: per SM, per block
GROUP_START_NS = 79.4


def source(kind: str, loads: int, stores: int, loop: bool) -> tuple[str, str]:
    """The kernel's source and its name."""
    params = [f"__global const {kind}* restrict in{i}" for i in range(loads)]
    params += [f"__global {kind}* restrict out{i}" for i in range(max(stores, 1))]
    name = f"s_{kind}_{loads}_{stores}{'_loop' if loop else ''}"
    if loop:
        body = (f"    {kind} s = 0;\n    for (int k = 0; k < {LOOP}; ++k) {{\n"
                + "".join(f"        s += in{i}[g + k * n];\n" for i in range(loads)) + "    }\n")
    else:
        terms = " + ".join(f"in{i}[g]" for i in range(loads)) or f"({kind})(float)g"  # no loads: a fill
        body = f"    {kind} s = {terms};\n"
    if stores:
        write = "".join(f"    out{i}[g] = s * {i + 2}.0f;\n" for i in range(stores))
    else:
        lane = "s" if kind == "float" else "s.x"
        write = f"    if ({lane} < 0.0f) out0[g] = s;\n"
    return (f"__kernel void {name}({', '.join(params)}, int n, __local float* pad) {{\n"
            f"    int g = get_global_id(0);\n{body}{write}}}\n"), name


def main(want: str, many_stores: bool) -> None:
    dev, ctx, queue = open_device(want)
    result: dict[str, object] = {
        "device": dev.name, "driver": dev.driver_version, "compute_units": dev.max_compute_units,
        "clock_mhz": dev.max_clock_frequency, "local_mem_bytes": dev.local_mem_size, "group": GROUP,
        "total_mib": TOTAL_MIB}
    if many_stores:  # a work-item writing many arrays, as chemistry kernels write a rate per reaction
        cases = [(k, n, s, False) for k in ("float", "float4") for n in (0, 1, 4) for s in (8, 16, 32)]
    else:
        cases = [(k, n, s, False) for k in WIDTHS for n in LOADS for s in STORES]
        cases += [(k, n, 0, True) for k in WIDTHS for n in (1, 2, 4)]
        cases += [("float", 0, s, False) for s in (1, 2, 4)] + [("float4", 0, s, False) for s in (1, 2, 4)]
    built = [source(*c) for c in cases]  # every case loads or stores something
    prg = cl.Program(ctx, "".join(src for src, _ in built)).build()
    rows = []
    for (kind, loads, stores, loop), (_, name) in zip(cases, built, strict=True):
        width = WIDTHS[kind]
        arrays = loads + stores
        items = (TOTAL_MIB * 2**20 // (arrays * width)) // (LOOP if loop else 1) // GROUP * GROUP
        length = items * (LOOP if loop else 1)
        bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, length * width) for _ in range(loads)]
        outs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, length * width) for _ in range(max(stores, 1))]
        for b in bufs:
            cl.enqueue_fill_buffer(queue, b, np.float32(1.0), 0, length * width)
        knl = getattr(prg, name)
        moved = (loads + stores) * length * width
        for pad in PADS:
            args = (*bufs, *outs, np.int32(items), cl.LocalMemory(max(4, pad)))
            row = {"kernel": name, "width": width, "loads": loads, "stores": stores, "loop": loop,
                   "pad": pad, "items": items}
            try:
                ms = best_ms(lambda k=knl, g=items, a=args: k(queue, (g,), (GROUP,), *a))
                row.update(ms=ms, tbs=moved / (ms * 1e9))
            except cl.Error as e:  # a launch the device refuses: said in its row
                row["error"] = str(e)
            rows.append(row)
        for b in bufs + outs:
            b.release()
    result["rows"] = rows
    json.dump(result, sys.stdout, indent=1)
    print()


def _predicted_tbs(row: dict, latency_ns: float, peak_tbs: float, units: int) -> float:
    together = LOOP if row["loop"] else 1
    elements = row["items"] * together
    loads, stores = (row["loads"] * row["width"] * elements, row["stores"] * row["width"] * elements)
    groups = min(MAX_RESIDENT // GROUP, SHARED_PER_CU // (row["pad"] + RESERVED_PER_GROUP))
    in_flight = groups * GROUP * row["loads"] * row["width"] * together  # bytes per compute unit
    x = in_flight / (peak_tbs * 1e12 * latency_ns * 1e-9 / units)
    share = x / (1 + x ** 3) ** (1 / 3) if loads else 1.0
    seconds = max((loads / share + stores) / (peak_tbs * 1e12),
                  row["items"] / GROUP * GROUP_START_NS * 1e-9 / units)
    return (loads + stores) / seconds / 1e12


def fit(path: str) -> None:
    data = json.load(open(path))
    rows = [r for r in data["rows"] if "tbs" in r]
    peak = max(r["tbs"] for r in rows)
    units = int(data["compute_units"])

    def mean_error(ns: float) -> float:
        return float(np.mean([abs(np.log(_predicted_tbs(r, ns, peak, units) / r["tbs"])) for r in rows]))

    best = min((mean_error(ns), ns) for ns in np.arange(300.0, 1000.0, 1.0))
    errors = [np.log(_predicted_tbs(r, best[1], peak, units) / r["tbs"]) for r in rows]
    print(f"{data['device']}: peak {peak:.2f} TB/s, {len(rows)} launches; DRAM round trip {best[1]:.0f} ns:"
          f" mean |log error| {best[0]:.3f}, median {np.median(np.abs(errors)):.3f}")
    for r, e in zip(rows, errors, strict=True):
        if abs(e) > np.log(1.1):
            print(f"  {r['kernel']:<20} pad {r['pad'] // 1024:>2} KiB: measured {r['tbs']:.2f} TB/s,"
                  f" law {r['tbs'] * np.exp(e):.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--fit":
        fit(sys.argv[2])
    else:
        rest = [a for a in sys.argv[1:] if a != "--many-stores"]
        main(rest[0] if rest else "", "--many-stores" in sys.argv)
