"""Throughput of OpenCL's built-in math functions on a GPU, for the device profile's ``math_costs``:
what the roofline charges one call of each (``roofline.compute_ops``) in the flops of its peak rate.
Runs on the GPU machine with pyopencl (no clperf):

    python3 bench/gpu_math.py [PLATFORM_SUBSTRING] > math.json

One kernel per function, built with the default options (full precision, as kernels are usually built):
every work-item of a launch that fills the device sums ``f(v)`` over ``ITERS`` values ``v`` of a moderate
range (|v| < 100 for the trigonometric functions, where a GPU's reduction takes its fast path), in four
independent accumulators so that throughput, not latency, decides. A base kernel sums ``v`` itself. A
function's cost is (its time - the base's) per call, times the device's peak FP32 flop rate measured
here by an FMA kernel (two flops per FMA): a call that costs as much issue as one FMA costs 2.

Printed (JSON): the device, the measured peak, and per function ``{"ns_per_call", "flops"}`` for
``float`` and, where the device has it, ``double``; each time the best of five launches.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl

ITERS = 256
# name -> expression of v (float) computing one call; the double kernels use the same text
FUNCTIONS = {
    "base": "v",
    "fdiv": "1.5f / v",
    "sqrt": "sqrt(v)",
    "rsqrt": "rsqrt(v)",
    "exp": "exp(v * 0.01f)",
    "exp2": "exp2(v * 0.01f)",
    "log": "log(v)",
    "log2": "log2(v)",
    "pow": "pow(v, 1.3f)",
    "sin": "sin(v)",
    "cos": "cos(v)",
    "tan": "tan(v)",
    "atan": "atan(v)",
    "atan2": "atan2(v, 1.7f)",
    "acos": "acos(v * 0.009f)",
    "tanh": "tanh(v * 0.01f)",
    "erf": "erf(v * 0.01f)",
    "fmod": "fmod(v, 1.7f)",
    "native_divide": "native_divide(1.5f, v)",
    "native_sqrt": "native_sqrt(v)",
    "native_exp": "native_exp(v * 0.01f)",
    "native_log": "native_log(v)",
    "native_sin": "native_sin(v)",
    "native_cos": "native_cos(v)",
}
FP64 = ("base", "fdiv", "sqrt", "exp", "log", "pow", "sin", "cos")


def kernel(name: str, expr: str, real: str) -> str:
    if real == "double":
        expr = expr.replace("f)", ")").replace("f /", " /").replace("f,", ",")
    return f"""
__kernel void k_{name}(__global const {real}* x, __global {real}* out) {{
    size_t g = get_global_id(0);
    {real} a0 = 0, a1 = 0, a2 = 0, a3 = 0, b = x[g];
    for (int i = 0; i < {ITERS}; i += 4) {{
        {real} v;
        v = b + ({real})i * 0.37f;       a0 += {expr};
        v = b + ({real})(i + 1) * 0.37f; a1 += {expr};
        v = b + ({real})(i + 2) * 0.37f; a2 += {expr};
        v = b + ({real})(i + 3) * 0.37f; a3 += {expr};
    }}
    out[g] = a0 + a1 + a2 + a3;
}}
"""


FMA = """
__kernel void fma_peak(__global float* out, float m) {
    float a0 = get_global_id(0), a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
    float a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
    for (int i = 0; i < 1024; ++i) {
        a0 = fma(a0, m, 0.5f); a1 = fma(a1, m, 0.5f); a2 = fma(a2, m, 0.5f); a3 = fma(a3, m, 0.5f);
        a4 = fma(a4, m, 0.5f); a5 = fma(a5, m, 0.5f); a6 = fma(a6, m, 0.5f); a7 = fma(a7, m, 0.5f);
    }
    out[get_global_id(0)] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
"""


def best_ms(launch, repeat: int = 5) -> float:
    launch().wait()
    best = float("inf")
    for _ in range(repeat):
        ev = launch()
        ev.wait()
        best = min(best, (ev.profile.end - ev.profile.start) * 1e-6)
    return best


def open_device(want: str) -> tuple[cl.Device, cl.Context, cl.CommandQueue]:
    """The first GPU of a platform whose name contains ``want`` (else its first device, for trying a script
    on a CPU), its context and a profiling queue."""
    devices = [d for p in cl.get_platforms() if want.lower() in p.name.lower() for d in p.get_devices()]
    dev = next((d for d in devices if d.type & cl.device_type.GPU), devices[0])
    ctx = cl.Context([dev])
    return dev, ctx, cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)


def main() -> None:
    dev, ctx, queue = open_device(sys.argv[1] if len(sys.argv) > 1 else "")
    items = dev.max_compute_units * 2048 * 4
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, items * 8)

    fma = cl.Kernel(cl.Program(ctx, FMA).build(), "fma_peak")
    ms = best_ms(lambda: fma(queue, (items,), (256,), out, np.float32(0.999)))
    peak_flops = items * 1024 * 8 * 2 / (ms * 1e-3)

    result: dict[str, object] = {"device": dev.name, "driver": dev.driver_version,
                                 "clock_mhz": dev.max_clock_frequency, "work_items": items,
                                 "iterations": ITERS, "peak_fp32_flops": peak_flops}
    reals = ["float"] + (["double"] if "cl_khr_fp64" in dev.extensions else [])
    for real in reals:
        names = list(FUNCTIONS) if real == "float" else list(FP64)
        src = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if real == "double" else "")
        src += "".join(kernel(n, FUNCTIONS[n], real) for n in names)
        prg = cl.Program(ctx, src).build()
        rng = np.random.default_rng(2)
        host = rng.uniform(1.0, 2.0, items).astype(np.float32 if real == "float" else np.float64)
        x = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
        kernels = {n: cl.Kernel(prg, f"k_{n}") for n in names}
        times = {n: best_ms(lambda k=kernels[n], x=x: k(queue, (items,), (256,), x, out)) for n in names}
        rows = {}
        for n in names:
            if n == "base":
                continue
            ns = max(times[n] - times["base"], 0.0) * 1e6 / (items * ITERS)
            rows[n] = {"ns_per_call": ns, "flops": ns * 1e-9 * peak_flops, "ms": times[n]}
        result[real] = {"base_ms": times["base"], "functions": rows}
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
