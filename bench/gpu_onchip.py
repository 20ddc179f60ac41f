"""The on-chip bandwidths of a GPU: ``__local`` reads by bank pattern and width, global reads that hit L1,
and global reads that miss L1 and hit L2, against DRAM. For the device profile's ``gpu_memory`` block
(``local_gbs``, ``l1_gbs``, ``l2_gbs``, ``l2_line_ns``, ``dram_line_ns``), which the roofline charges a
counting run's traffic at, level by level. Runs on the GPU machine with pyopencl (no clperf):

    python3 bench/gpu_onchip.py [PLATFORM_SUBSTRING [KIND ...]] > onchip.json     (beside bench/gpu_math.py)

KIND (``local``, ``l1``, ``l1_strided``, ``l1_sparse``, ``l2``, ``l2_sparse``; default all) picks what
is measured: ``l2`` also measures ``l2_strided`` and ``dram``.

Every launch fills the device (2,048 work-items per compute unit, groups of 256) and each work-item makes
``OUTER`` x ``INNER`` reads whose addresses move with the iteration (no load is hoisted), summed into one
value it writes once. Kinds:

* ``local``: a 40 KiB ``__local`` table; lane ``l`` of a warp reads word ``l * stride`` (+ a step that
  keeps its bank): stride 0 is a broadcast (every lane one word), 1 conflict-free, 2 and 32 two-way and
  32-way bank conflicts; ``width`` 4 reads a ``float4`` per lane (512 bytes per warp request; stride 0:
  one ``float4`` for the warp); ``run`` rows read consecutive words one float at a time (stride 0: every
  lane the same words; 4: each lane its own aligned four), which the compiler may merge into wider reads;
* ``l1``: each group (of 128 here) re-reads a private 7.5 KiB region of a global buffer, a warp request
  128 contiguous bytes (the SM's groups hold 120 KiB: L1 hits);
* ``l1_strided``: the same with lane ``l`` reading word ``l * stride`` of its group's region (stride 1,
  2, 4, 8, 16, 32 floats: 1 to 32 distinct lines per warp request, all L1 hits, and as many lanes on
  one of the 32 four-byte banks; odd strides 3, 9, 17, 33: 3 to 32 lines, every lane on a bank of its
  own), which tells whether L1 takes a clock per line or per bank conflict;
* ``l1_sparse``: each work-item re-reads ``count`` 32-byte sectors of its own (1, 2, 4), in turn, the
  work-items' sectors ``spacing`` words apart (8: four work-items' sectors share a line, 8 lines per warp
  request; 32: a line each, 32 per request), each load's address hanging on the last value: the SM's
  2,048 work-items hold 64-256 KiB of sectors, in as many bytes of lines (spacing 8) or four times as
  many (spacing 32: what L1 must keep if it allocates whole lines); the grid's work-items share 16,384
  such places, 2-8 MiB of lines, which stay in L2;
* ``l2``: the whole grid re-reads a buffer of ``L2_MIB`` MiB (under the L2, over the SMs' L1s together),
  each pass shifted so that no SM reads what it read before;
* ``l2_strided``: the same with lane ``l`` reading word ``l * stride`` (1 to 32 floats: 1 to 32 lines per
  warp request, 4 to 1 sectors of each line);
* ``l2_sparse``: the same with each lane reading the first word of a line of its own (32 lines per
  request, one sector each) over ``mib`` MiB of lines (16-1,024): a quarter of it in sectors, what L2
  keeps if it allocates sectors, not lines;
* ``dram``: the same over ``DRAM_MIB`` MiB.

Printed (JSON): the device and per kind ``ms`` (best of five launches), ``ns_per_warp_request`` (the launch
over its warp requests: what one more request costs a full launch) and ``gbs``, the bytes the lanes asked
for over the launch time.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl
from gpu_math import best_ms, open_device  # run as bench/gpu_onchip.py: bench/ is on the path

OUTER = 64
INNER = 128
L2_MIB = 32
DRAM_MIB = 2048
SOURCE = r"""
// lane l reads word l * stride + r * STEP of a 40 KiB table in its r-th read; STEP is a constant, so the
// compiler sees how the reads of one lane lie (32: one bank each, 1: consecutive words it may merge)
#define LOCAL_READ(NAME, STEP) \
__kernel void NAME(uint stride, __global float* out) { \
    __local float table[10240]; \
    uint lid = get_local_id(0); \
    for (uint i = lid; i < 10240u; i += get_local_size(0)) \
        table[i] = (float)(i & 7u); \
    barrier(CLK_LOCAL_MEM_FENCE); \
    uint lane = lid % 32u; \
    float acc = 0.0f; \
    for (uint o = 0; o < OUTER; ++o) { \
        __local const float* p = table + lane * stride + (o & 127u) * 32u; \
        _Pragma("unroll") \
        for (uint r = 0; r < INNER; ++r) \
            acc += p[r * STEP]; \
    } \
    out[get_global_id(0)] = acc; \
}
LOCAL_READ(local_read, 32u)
LOCAL_READ(local_run, 1u)
__kernel void local_read4(uint stride, __global float* out) {
    __local float4 table[2560];
    uint lid = get_local_id(0);
    for (uint i = lid; i < 2560u; i += get_local_size(0))
        table[i] = (float4)((float)(i & 7u));
    barrier(CLK_LOCAL_MEM_FENCE);
    uint lane = lid % 32u;
    float4 acc = (float4)(0.0f);
    for (uint o = 0; o < OUTER; ++o) {
        __local const float4* p = table + lane * stride + (o & 127u) * 8u;
        #pragma unroll
        for (uint r = 0; r < INNER; ++r)
            acc += p[r * 8u];
    }
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
__kernel void l1_read(__global const float* a, __global float* out) {
    // groups of 128: 15 rows of 512 bytes (7.5 KiB) per group, 16 groups per SM: 120 KiB, in L1
    __global const float* g = a + get_group_id(0) * 2048u + get_local_id(0);
    float acc = 0.0f;
    for (uint o = 0; o < OUTER * INNER / 8u; ++o) {
        __global const float* p = g + (o & 7u) * 128u;
        #pragma unroll
        for (uint r = 0; r < 8u; ++r)
            acc += p[r * 128u];
    }
    out[get_global_id(0)] = acc;
}
__kernel void l1_strided(__global const float* a, uint stride, __global float* out) {
    // lane l reads word l * stride of a private 8.5 KiB region per group (of 128): every read hits L1,
    // and a warp request touches 32 * stride * 4 / 128 distinct lines (at most 32)
    __global const float* g = a + get_group_id(0) * 2176u + ((get_local_id(0) * stride) & 2047u);
    float acc = 0.0f;
    for (uint o = 0; o < OUTER; ++o) {
        #pragma unroll
        for (uint r = 0; r < INNER; ++r)
            acc += g[r];
        g += (o & 1u) ? -1 : 1;
    }
    out[get_global_id(0)] = acc;
}
__kernel void l1_sparse(__global const uint* a, uint spacing, uint count, __global uint* out) {
    // the buffer holds zeros: v stays 0, and every load waits for the one before
    uint slot = get_global_id(0) % 16384u;
    uint v = 0u;
    for (uint o = 0; o < OUTER * INNER; ++o)
        v += a[((o % count) * 16384u + slot) * spacing + ((o + v) & 7u)];
    out[get_global_id(0)] = v;
}
__kernel void grid_sparse(__global const float* a, uint mask, uint shift, __global float* out) {
    uint items = get_global_size(0);
    float acc = 0.0f;
    for (uint o = 0; o < OUTER; ++o) {
        uint start = get_global_id(0) + o * shift;
        #pragma unroll 8
        for (uint r = 0; r < INNER; ++r)
            acc += a[((start + r * items) * 32u) & mask];
    }
    out[get_global_id(0)] = acc;
}
__kernel void grid_strided(__global const float* a, uint mask, uint shift, uint stride, uint logn,
                           __global float* out) {
    // lane l reads word l * stride; each wrap over the buffer moves one word on, so that a pass reaches
    // every sector
    uint items = get_global_size(0);
    float acc = 0.0f;
    for (uint o = 0; o < OUTER; ++o) {
        uint start = get_global_id(0) + o * shift;
        #pragma unroll 8
        for (uint r = 0; r < INNER; ++r) {
            uint p = (start + r * items) * stride;
            acc += a[(p + (p >> logn)) & mask];
        }
    }
    out[get_global_id(0)] = acc;
}
__kernel void grid_read(__global const float* a, uint mask, uint shift, __global float* out) {
    uint items = get_global_size(0);
    float acc = 0.0f;
    for (uint o = 0; o < OUTER; ++o) {
        uint start = get_global_id(0) + o * shift;
        #pragma unroll 8
        for (uint r = 0; r < INNER; ++r)
            acc += a[(start + r * items) & mask];
    }
    out[get_global_id(0)] = acc;
}
"""


def _row(ms: float, requests: int, bytes_asked: float) -> dict[str, float]:
    return {"ms": ms, "ns_per_warp_request": ms * 1e6 / requests, "gbs": bytes_asked / (ms * 1e-3) / 1e9}


def main() -> None:
    dev, ctx, queue = open_device(sys.argv[1] if len(sys.argv) > 1 else "")
    kinds = set(sys.argv[2:]) or {"local", "l1", "l1_strided", "l1_sparse", "l2", "l2_sparse"}
    prg = cl.Program(ctx, SOURCE).build(options=[f"-DOUTER={OUTER}u", f"-DINNER={INNER}u"])
    group = 256
    items = dev.max_compute_units * 2048
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, items * 4)
    result: dict[str, object] = {"device": dev.name, "driver": dev.driver_version, "compute_units":
                                 dev.max_compute_units, "clock_mhz": dev.max_clock_frequency,
                                 "work_items": items, "group": group, "reads_per_item": OUTER * INNER}
    if "local" in kinds:
        _local(prg, queue, items, group, out, result)
    if kinds & {"l1", "l1_strided", "l1_sparse"}:
        _l1(prg, ctx, queue, items, group, out, result, kinds)
    if kinds & {"l2", "l2_sparse"}:
        _l2(prg, ctx, queue, items, group, out, result, kinds)
    json.dump(result, sys.stdout, indent=1)
    print()


def _local(prg: cl.Program, queue: cl.CommandQueue, items: int, group: int, out: cl.Buffer,
           result: dict[str, object]) -> None:
    reads = items * OUTER * INNER
    requests = reads // 32
    local = cl.Kernel(prg, "local_read")
    rows = []
    for stride in (0, 1, 2, 32):
        ms = best_ms(lambda s=stride: local(queue, (items,), (group,), np.uint32(s), out))
        rows.append({"stride": stride, "width": 1, **_row(ms, requests, reads * 4.0)})
    local4 = cl.Kernel(prg, "local_read4")
    for stride in (0, 1):
        ms = best_ms(lambda s=stride: local4(queue, (items,), (group,), np.uint32(s), out))
        rows.append({"stride": stride, "width": 4, **_row(ms, requests, reads * 16.0)})
    run = cl.Kernel(prg, "local_run")  # scalar reads of consecutive words: does the compiler merge them?
    for stride in (0, 4):
        ms = best_ms(lambda s=stride: run(queue, (items,), (group,), np.uint32(s), out))
        rows.append({"stride": stride, "width": 1, "run": True, **_row(ms, requests, reads * 4.0)})
    result["local"] = rows


def _l1(prg: cl.Program, ctx: cl.Context, queue: cl.CommandQueue, items: int, group: int, out: cl.Buffer,
        result: dict[str, object], kinds: set[str]) -> None:
    reads = items * OUTER * INNER
    requests = reads // 32

    a = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                  hostbuf=np.ones(items // 128 * 2048, dtype=np.float32))
    if "l1" in kinds:
        l1 = cl.Kernel(prg, "l1_read")
        result["l1"] = _row(best_ms(lambda: l1(queue, (items,), (128,), a, out)), requests, reads * 4.0)
    if "l1_strided" in kinds:
        strided = cl.Kernel(prg, "l1_strided")
        b = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                      hostbuf=np.ones(items // 128 * 2176 + 8, dtype=np.float32))
        rows = []
        for stride in (1, 2, 4, 8, 16, 32, 3, 9, 17, 33):
            ms = best_ms(lambda s=stride: strided(queue, (items,), (128,), b, np.uint32(s), out))
            words = np.arange(32) * stride
            lines = len(np.unique(words // 32))
            ways = int(np.bincount(words % 32).max())  # lanes on one bank, each a word of its own
            rows.append({"stride": stride, "lines_per_request": lines, "bank_ways": ways,
                         **_row(ms, requests, reads * 4.0)})
        result["l1_strided"] = rows
    if "l1_sparse" not in kinds:
        return
    sparse = cl.Kernel(prg, "l1_sparse")
    zeros = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                      hostbuf=np.zeros(16384 * 32 * 4 + 8, dtype=np.uint32))
    rows = []
    for spacing, count in ((8, 1), (8, 2), (8, 4), (32, 1), (32, 2), (32, 4)):
        ms = best_ms(lambda s=spacing, c=count: sparse(queue, (items,), (group,), zeros, np.uint32(s),
                                                        np.uint32(c), out))
        rows.append({"spacing": spacing, "count": count, "lines_per_request": spacing,
                     "sm_sector_kib": 2 * 32 * count, "sm_line_kib": 2 * 4 * spacing * count,
                     **_row(ms, requests, reads * 4.0)})
    result["l1_sparse"] = rows
    zeros.release()


def _l2(prg: cl.Program, ctx: cl.Context, queue: cl.CommandQueue, items: int, group: int, out: cl.Buffer,
        result: dict[str, object], kinds: set[str]) -> None:
    reads = items * OUTER * INNER
    requests = reads // 32
    grid = cl.Kernel(prg, "grid_read")
    for kind, mib in (("l2", L2_MIB), ("dram", DRAM_MIB)) if "l2" in kinds else ():
        n = mib * 2**20 // 4  # a power of two: addresses wrap with a mask
        buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=np.ones(n, dtype=np.float32))
        shift = np.uint32((n // 7) | 1)  # each pass starts far from the last: no SM re-reads its lines
        ms = best_ms(lambda buf=buf, n=n, shift=shift: grid(queue, (items,), (group,), buf,
                                                            np.uint32(n - 1), shift, out))
        result[kind] = {"mib": mib, **_row(ms, requests, reads * 4.0)}
        if kind == "l2":
            rows = []
            lanes_apart = cl.Kernel(prg, "grid_strided")
            for stride in (1, 2, 4, 8, 16, 32):
                ms = best_ms(lambda buf=buf, n=n, shift=shift, s=stride, k=lanes_apart: k(
                    queue, (items,), (group,), buf, np.uint32(n - 1), shift, np.uint32(s),
                    np.uint32(n.bit_length() - 1), out))
                rows.append({"stride": stride, "lines_per_request": min(32, stride), "mib": mib,
                             **_row(ms, requests, reads * 4.0)})
            result["l2_strided"] = rows
        buf.release()
    if "l2_sparse" not in kinds:
        return
    sparse_grid = cl.Kernel(prg, "grid_sparse")
    rows = []
    for mib in (16, 32, 48, 64, 96, 128, 256, 1024):
        n = mib * 2**20 // 4
        buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, n * 4)
        cl.enqueue_fill_buffer(queue, buf, np.float32(1), 0, n * 4)
        shift = np.uint32((n // 7) | 1)
        ms = best_ms(lambda buf=buf, n=n, shift=shift: sparse_grid(queue, (items,), (group,), buf,
                                                                   np.uint32(n - 1), shift, out))
        rows.append({"mib": mib, "sector_mib": mib / 4, **_row(ms, requests, reads * 4.0)})
        buf.release()
    result["l2_sparse"] = rows


if __name__ == "__main__":
    main()
