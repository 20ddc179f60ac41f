"""Grid-stride loops run by few warps: the time of one iteration of a warp, by what the loop does with
what it loads, for the roofline's chain bound (``roofline.chain_ms``). Runs on the GPU machine with
pyopencl (no clperf):

    python3 bench/gpu_stream_loop.py [PLATFORM_SUBSTRING] > stream_loop.json     (beside bench/gpu_math.py)

Every kernel walks ``n`` 4-byte words with ``for (i = gid; i < n; i += global size)``, one warp per
work-group, ``warps`` work-groups per compute unit (1 to 32), over a buffer past the L2 (``DRAM_MIB``) and
one inside it (``L2_MIB``). Kinds:

* ``sum``: ``s += a[i]``, one value written at the end: the compiler may issue the loads of several
  iterations before it waits for the first;
* ``sum_signed``: the same with an ``int`` counter (no wrap: the compiler can count the trips);
* ``sum_fixed``: ``for (k = 0; k < iterations; k++) s += a[gid + k * global size]``, the same trips for
  every work-item;
* ``copy``: ``b[i] = a[i] * 3 + 1``: a store in every iteration, to a buffer that may alias ``a``, so the
  next iteration's load cannot be issued above it;
* ``copy_restrict``: the same with ``restrict`` pointers;
* ``update``: ``a[i] = a[i] * 3 + 1``, the loop reading and writing one buffer;
* ``narrow``: the same bytes as 8-byte quads of four ``ushort``: each iteration loads a quad's four
  elements one by one, zeroes them one by one and stores each, clamped, as a ``uchar`` to a second buffer
  (Parboil histo_final's clearing loops): every store request writes part of each sector it touches;
* ``narrow_vector``: the same as one ``ushort4`` load, one ``ushort4`` store and one ``uchar4`` store, whose
  requests write whole sectors.

Printed (JSON): the device, and per kind, buffer size and warps per compute unit ``ms`` (best of five
launches) and ``ns_per_iteration`` (the launch over the iterations one warp makes).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl
from gpu_math import best_ms, open_device  # run as bench/gpu_stream_loop.py: bench/ is on the path

DRAM_MIB, L2_MIB = 512, 16
WARPS = (1, 2, 4, 8, 16, 32)

SOURCE = r"""
__kernel void sum(__global const uint* a, uint n, __global uint* out) {
    uint s = 0u;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        s += a[i];
    out[get_global_id(0)] = s;
}
__kernel void sum_signed(__global const uint* a, int n, __global uint* out) {
    uint s = 0u;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        s += a[i];
    out[get_global_id(0)] = s;
}
__kernel void sum_fixed(__global const uint* a, int iterations, __global uint* out) {
    uint s = 0u;
    int g = get_global_id(0), stride = get_global_size(0);
    for (int k = 0; k < iterations; ++k)
        s += a[g + k * stride];
    out[get_global_id(0)] = s;
}
__kernel void copy(__global const uint* a, __global uint* b, uint n) {
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = a[i] * 3u + 1u;
}
__kernel void copy_restrict(__global const uint* restrict a, __global uint* restrict b, uint n) {
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = a[i] * 3u + 1u;
}
__kernel void update(__global uint* a, uint n) {
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        a[i] = a[i] * 3u + 1u;
}
__kernel void narrow(__global ushort* a, __global uchar* b, uint quads) {
    for (uint i = get_global_id(0); i < quads; i += get_global_size(0)) {
        ushort x = a[4 * i], y = a[4 * i + 1], z = a[4 * i + 2], w = a[4 * i + 3];
        a[4 * i] = 0; a[4 * i + 1] = 0; a[4 * i + 2] = 0; a[4 * i + 3] = 0;
        b[4 * i] = (uchar)min(x, (ushort)255); b[4 * i + 1] = (uchar)min(y, (ushort)255);
        b[4 * i + 2] = (uchar)min(z, (ushort)255); b[4 * i + 3] = (uchar)min(w, (ushort)255);
    }
}
__kernel void narrow_vector(__global ushort4* a, __global uchar4* b, uint quads) {
    for (uint i = get_global_id(0); i < quads; i += get_global_size(0)) {
        ushort4 v = a[i];
        a[i] = (ushort4)(0);
        b[i] = convert_uchar4(min(v, (ushort4)(255)));
    }
}
"""
KINDS = ("sum", "sum_signed", "sum_fixed", "copy", "copy_restrict", "update", "narrow", "narrow_vector")


def main() -> None:
    dev, ctx, queue = open_device(sys.argv[1] if len(sys.argv) > 1 else "")
    prg = cl.Program(ctx, SOURCE).build()
    kernels = {k: cl.Kernel(prg, k) for k in KINDS}
    units = dev.max_compute_units
    result: dict[str, object] = {"device": dev.name, "driver": dev.driver_version, "compute_units": units,
                                 "clock_mhz": dev.max_clock_frequency}
    rows = []
    for mib in (DRAM_MIB, L2_MIB):
        n = mib * 2**20 // 4
        a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 4)
        b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 4)
        cl.enqueue_fill_buffer(queue, a, np.uint32(1), 0, n * 4)
        out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, units * 32 * max(WARPS) * 4)
        for warps in WARPS:
            items = units * 32 * warps
            iterations = -(-n // items)
            count = np.uint32(n)
            quads = n // 2  # 8-byte quads of four ushort in a's bytes
            args = {"sum": (a, count, out), "sum_signed": (a, np.int32(n), out),
                    "sum_fixed": (a, np.int32(n // items), out), "copy": (a, b, count),
                    "copy_restrict": (a, b, count), "update": (a, count),
                    "narrow": (a, b, np.uint32(quads)), "narrow_vector": (a, b, np.uint32(quads))}
            for kind, x in args.items():
                kernel = kernels[kind]
                ms = best_ms(lambda k=kernel, g=items, x=x: k(queue, (g,), (32,), *x))
                trips = -(-quads // items) if kind.startswith("narrow") else iterations
                rows.append({"kind": kind, "mib": mib, "warps_per_cu": warps, "ms": ms,
                             "ns_per_iteration": ms * 1e6 / trips})
        a.release()
        b.release()
        out.release()
    result["rows"] = rows
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
