"""The cache and occupancy facts of an NVIDIA GPU, read off the device and measured, for the device profile's
``gpu_memory`` block (``predictor/model/profiles/*.json``). Runs on the GPU machine with CuPy (no clperf):

    python3 bench/gpu_cache_facts.py > facts.json

Printed (JSON): the CUDA device properties the memory model uses (L2 size, shared memory per SM and per
block, registers, resident threads and blocks per SM); the L2 knee: read bandwidth of a buffer re-read
again and again by the whole grid, per buffer size (a buffer that fits stays in L2 and reads far above the
DRAM rate); the L1 knee: one block per SM re-reading a private region with ``ld.global.ca``, per region
size, with no shared memory in use (the carve-out the driver picks then decides what L1 holds).
"""

from __future__ import annotations

import json
import sys

import cupy as cp

KERNELS = r"""
extern "C" __global__ void reread(const float4* __restrict__ a, long n, int reps, float* out) {
    float acc = 0.f;
    long stride = (long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r)
        for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride) {
            float4 v = __ldcg(&a[i]);
            acc += v.x + v.y + v.z + v.w;
        }
    if (acc == 12345.f) out[0] = acc;  // keeps the loads; practically never true for random data
}
extern "C" __global__ void private_reread(const float4* __restrict__ a, long per_block, int reps,
                                          float* out) {
    float acc = 0.f;
    const float4* p = a + blockIdx.x * per_block;
    for (int r = 0; r < reps; ++r)
        for (long i = threadIdx.x; i < per_block; i += blockDim.x) {
            float4 v = __ldca(&p[i]);
            acc += v.x + v.y + v.z + v.w;
        }
    if (acc == 12345.f) out[0] = acc;
}
"""


def _time_ms(fn, repeat: int = 5) -> float:
    fn()
    cp.cuda.Device().synchronize()
    best = float("inf")
    for _ in range(repeat):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, end))
    return best


def properties() -> dict[str, object]:
    p = cp.cuda.runtime.getDeviceProperties(0)
    keys = ["name", "multiProcessorCount", "l2CacheSize", "persistingL2CacheMaxSize",
            "sharedMemPerMultiprocessor", "sharedMemPerBlock", "sharedMemPerBlockOptin",
            "reservedSharedMemPerBlock", "regsPerMultiprocessor", "regsPerBlock",
            "maxThreadsPerMultiProcessor", "maxBlocksPerMultiProcessor", "maxThreadsPerBlock", "warpSize",
            "major", "minor", "clockRate", "memoryClockRate", "memoryBusWidth"]
    out = {k: p.get(k) for k in keys}
    out["name"] = out["name"].decode() if isinstance(out["name"], bytes) else out["name"]
    return out


def l2_knee(mod: cp.RawModule, sms: int) -> list[dict[str, float]]:
    kernel = mod.get_function("reread")
    out = cp.zeros(1, cp.float32)
    rows = []
    for mb in (16, 32, 48, 56, 60, 64, 72, 80, 88, 96, 104, 112, 128, 160, 256, 1024):
        n = mb * 2**20 // 16
        a = cp.random.random(n * 4, dtype=cp.float32)  # random: no compression
        reps = max(2, int(2048 // mb))
        args = (a, cp.int64(n), cp.int32(reps), out)
        ms = _time_ms(lambda args=args: kernel((sms * 8,), (512,), args))
        rows.append({"mib": mb, "reps": reps, "gbs": mb * 2**20 * reps / ms / 1e6})
        del a, args
    return rows


def l1_knee(mod: cp.RawModule, sms: int) -> list[dict[str, float]]:
    kernel = mod.get_function("private_reread")
    out = cp.zeros(1, cp.float32)
    rows = []
    for kb in (16, 32, 64, 96, 128, 160, 192, 208, 224, 240, 256, 320, 512):
        per_block = kb * 1024 // 16
        a = cp.random.random(per_block * 4 * sms, dtype=cp.float32)
        reps = max(4, 16384 // kb)
        args = (a, cp.int64(per_block), cp.int32(reps), out)
        ms = _time_ms(lambda args=args: kernel((sms,), (1024,), args))
        rows.append({"kib": kb, "reps": reps, "gbs_per_sm": kb * 1024 * reps / ms / 1e6})
        del a, args
    return rows


def main() -> int:
    props = properties()
    mod = cp.RawModule(code=KERNELS, options=("-arch=sm_90",) if props["major"] == 9 else ())
    sms = int(props["multiProcessorCount"])
    result = {"properties": props, "l2_knee": l2_knee(mod, sms), "l1_knee": l1_knee(mod, sms)}
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
