"""A device's peaks, measured: the bandwidth of a copy kernel, the FLOP rate of an FMA kernel.

Measured once per device and driver by ``clperf devices`` (the worker's ``peaks`` request) and cached;
the predictor's roofline and the reports divide by them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyopencl as cl


def event_ms(ev: cl.Event) -> float:
    """A profiled event's duration in milliseconds (profiling events count nanoseconds)."""
    return round((ev.profile.end - ev.profile.start) * 1e-6, 6)


_FMA_LOOP = 256
_FMA_CHAINS = 8
_FMA_FLOPS_PER_ITEM = 2 * _FMA_LOOP * _FMA_CHAINS
_PEAK_SOURCE = f"""
__kernel void clperf_copy(__global const float4* restrict a, __global float4* restrict b) {{
    size_t i = get_global_id(0);
    b[i] = a[i];
}}
__kernel void clperf_fma(__global float* out, float b, float c) {{
    float x = (float)get_global_id(0) * 1e-7f;
    {" ".join(f"float a{j} = x + {j}.0f;" for j in range(_FMA_CHAINS))}
    for (int k = 0; k < {_FMA_LOOP}; ++k) {{
        {" ".join(f"a{j} = fma(a{j}, b, c);" for j in range(_FMA_CHAINS))}
    }}
    out[get_global_id(0)] = {" + ".join(f"a{j}" for j in range(_FMA_CHAINS))};
}}
"""


class Peaks:
    """Peak measurements on one context; ``program(source, options)`` builds (and keeps) a program."""

    def __init__(self, ctx: cl.Context, queue: cl.CommandQueue, device: cl.Device,
                 program: Callable[[str, str], cl.Program]) -> None:
        self.ctx, self.queue, self.device, self.program = ctx, queue, device, program

    def measure(self, passes: int = 3) -> dict[str, str | float | None]:
        """The best of ``passes`` measurements of each peak: a peak is what the device can do, and on a
        shared machine one pass can fall in a busy spell (PoCL's copy measured 8.4 GB/s during a test run
        and 33.6 GB/s idle on the same 2 cores), which would otherwise stay cached for good."""
        # a CPU's global memory cache is its last level; each of two buffers is an eighth of it. A GPU's
        # (NVIDIA's H200: 4 MiB, its L1s) is too small for a copy there to measure more than its launch
        cpu = bool(self.device.type & cl.device_type.CPU)
        cache = int(self.device.global_mem_cache_size) // 8 if cpu else 0
        return {"type": "peaks", "peak_bandwidth_gbs": max(self._peak_bandwidth() for _ in range(passes)),
                "peak_gflops": max(self._peak_flops() for _ in range(passes)),
                "cache_bandwidth_gbs": max(self._peak_bandwidth(cache) for _ in range(passes))
                if cache >= 1 << 16 else None}

    def _median_ms(self, kernel: cl.Kernel, gsize: tuple[int, ...], lsize: tuple[int, ...] | None,
                   reps: int = 10) -> float:
        cl.enqueue_nd_range_kernel(self.queue, kernel, gsize, lsize).wait()
        evs = [cl.enqueue_nd_range_kernel(self.queue, kernel, gsize, lsize) for _ in range(reps)]
        evs[-1].wait()
        return float(np.median([event_ms(e) for e in evs]))

    def _peak_bandwidth(self, nbytes: int = 0) -> float:
        """GB/s of a float4 copy between two buffers of ``nbytes`` (default: far larger than any cache),
        the best over launch shapes."""
        dev = self.device
        gpu = bool(dev.type & cl.device_type.GPU)
        nbytes = min(nbytes or (256 << 20 if gpu else 64 << 20), dev.max_mem_alloc_size // 2,
                     dev.global_mem_size // 8)
        n = nbytes // 16
        prg = self.program(_PEAK_SOURCE, "")
        k = cl.Kernel(prg, "clperf_copy")
        a = cl.Buffer(self.ctx, cl.mem_flags.READ_ONLY, n * 16)
        b = cl.Buffer(self.ctx, cl.mem_flags.WRITE_ONLY, n * 16)
        # the stub wants a buffer/array pattern; pyopencl accepts a numpy scalar at runtime
        cl.enqueue_fill_buffer(self.queue, a, np.float32(1), 0, n * 16).wait()  # type: ignore[arg-type]
        k.set_args(a, b)
        best = 0.0
        for lsize in (None, 64, 128, 256, 512, 1024):
            if lsize is not None and (lsize > dev.max_work_group_size or n % lsize):
                continue
            ms = self._median_ms(k, (n,), None if lsize is None else (lsize,))
            best = max(best, 2 * n * 16 / (ms * 1e6))
        a.release()
        b.release()
        return best

    def _peak_flops(self) -> float:
        dev = self.device
        gpu = bool(dev.type & cl.device_type.GPU)
        n = dev.max_compute_units * (8192 if gpu else 256)
        prg = self.program(_PEAK_SOURCE, "")
        k = cl.Kernel(prg, "clperf_fma")
        out = cl.Buffer(self.ctx, cl.mem_flags.WRITE_ONLY, n * 4)
        k.set_args(out, np.float32(0.999), np.float32(0.001))
        best = 0.0
        for lsize in (None, 128, 256):
            if lsize is not None and (lsize > dev.max_work_group_size or n % lsize):
                continue
            ms = self._median_ms(k, (n,), None if lsize is None else (lsize,))
            best = max(best, n * _FMA_FLOPS_PER_ITEM / (ms * 1e6))
        out.release()
        return best
