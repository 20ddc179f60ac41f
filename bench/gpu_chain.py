"""How long a GPU work-item's chain of dependent operations takes, and how much independent chains in
one work-item (instruction-level parallelism) and more warps on an SM hide of it: what the roofline's
latency bound (``roofline.chain_ms``) charges a launch too small to fill the device. Runs on the GPU
machine with pyopencl (no clperf):

    python3 bench/gpu_chain.py [PLATFORM_SUBSTRING] > chain.json     (beside bench/gpu_math.py)

Each kernel runs ``ITERS`` iterations of a loop whose body updates ``ilp`` independent values, each by
one operation of a kind that needs the value the last iteration left (``x = fma(x, a, b)``,
``x = sin(x) + b``, ...), so a value's updates form a chain as long as the loop. Launched with ``warps``
warps for every compute unit: 1, 4, 16 and 64 warps an SM (64 is 2,048 work-items, a full SM), in
groups of one warp, or of four where there are more. Kinds: ``fadd``, ``fma``, ``imad`` (integer
multiply-add), ``idiv`` (integer division by a run-time value), ``fdiv``, ``sqrt``, ``exp``, ``sin``,
``pow`` and ``dfma`` (double FMA), and ``phase``: a body in the shape of a Fourier sum (a dot product of
three coordinates, its sine and cosine, two accumulations), where ``ilp`` is the points a work-item sums
at once.

Printed (JSON): the device, its clock, and rows ``{"kind", "ilp", "warps", "ms",
"cycles_per_iteration"}`` (the launch's time at the device's clock over ``ITERS``: a body's updates of
one warp, all chains together), the best of five launches. ``opcounts.LATENCY`` and ``opcounts.SERIAL``
are read off an H100's run (``data/h100/gpu_chain.json``): the one-chain rows at one warp an SM, less the
loop's own cycles (``fadd``'s row less 4), and how the time grows with independent chains.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pyopencl as cl
from gpu_math import best_ms, open_device  # run as bench/gpu_chain.py: bench/ is on the path

ITERS = 4096
ILPS = (1, 2, 4, 8)
WARPS = (1, 4, 16, 64)
# kind -> (the value's type, one update of the value X, its start from the work-item's id g)
KINDS = {
    "fadd": ("float", "X = X + a", "(float)g"),
    "fma": ("float", "X = fma(X, a, b)", "(float)g"),
    "imad": ("uint", "X = X * ua + ub", "(uint)g"),
    "idiv": ("uint", "X = ua / (X | 1u) + ub", "(uint)g + 1000000u"),
    "fdiv": ("float", "X = a / X + b", "1.0f + (float)g * 1e-6f"),
    "sqrt": ("float", "X = sqrt(X) + b", "1.0f + (float)g"),
    "exp": ("float", "X = exp(-X) + b", "(float)g * 1e-6f"),
    "sin": ("float", "X = sin(X) + b", "(float)g * 1e-6f"),
    "pow": ("float", "X = pow(X, a) + b", "1.0f + (float)g * 1e-6f"),
    "dfma": ("double", "X = fma(X, (double)a, (double)b)", "(double)g"),
}


def chain_kernel(kind: str, ilp: int) -> str:
    real, update, start = KINDS[kind]
    names = [f"x{j}" for j in range(ilp)]
    init = " ".join(f"{real} {n} = {start.replace('g', f'(g + {j})')};" for j, n in enumerate(names))
    body = " ".join(update.replace("X", n) + ";" for n in names)
    total = " + ".join(f"({real}){n}" for n in names)
    return f"""
__kernel void k_{kind}_{ilp}(__global {real}* out, float a, float b, uint ua, uint ub) {{
    size_t g = get_global_id(0);
    {init}
    for (int i = 0; i < {ITERS}; ++i) {{ {body} }}
    out[g] = {total};
}}
"""


def phase_kernel(ilp: int) -> str:
    """A Fourier sum's body: each of ``ilp`` points adds kv[i].w * (cos, sin) of its dot product with a
    k-vector read from a small table every work-item reads alike."""
    pts = range(ilp)
    init = " ".join(f"float px{j} = g * 1e-6f + {j}, py{j} = px{j} * 0.5f, pz{j} = px{j} * 0.25f, "
                    f"qr{j} = 0, qi{j} = 0;" for j in pts)
    body = " ".join(f"float e{j} = 6.2831853f * (k.x * px{j} + k.y * py{j} + k.z * pz{j}); "
                    f"qr{j} += k.w * cos(e{j}); qi{j} += k.w * sin(e{j});" for j in pts)
    total = " + ".join(f"qr{j} + qi{j}" for j in pts)
    return f"""
__kernel void k_phase_{ilp}(__global float* out, __constant float4* kv, float a, float b, uint ua,
                            uint ub) {{
    size_t g = get_global_id(0);
    {init}
    for (int i = 0; i < {ITERS}; ++i) {{ float4 k = kv[i & 255]; {body} }}
    out[g] = {total};
}}
"""


def main(want: str) -> None:
    dev, ctx, queue = open_device(want)
    sms = dev.max_compute_units
    fp64 = "cl_khr_fp64" in dev.extensions
    kinds = [k for k in KINDS if fp64 or KINDS[k][0] != "double"]
    src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if fp64 else ""
    src += "".join(chain_kernel(k, n) for k in kinds for n in ILPS)
    src += "".join(phase_kernel(n) for n in ILPS)
    prog = cl.Program(ctx, src).build()
    most = sms * max(WARPS) * 32
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, most * 8)
    kv = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                   hostbuf=np.random.default_rng(1).uniform(-1, 1, 256 * 4).astype(np.float32))
    scalars = (np.float32(0.999), np.float32(0.25), np.uint32(3), np.uint32(7))
    rows = []
    for kind in [*kinds, "phase"]:
        for ilp in ILPS:
            k = cl.Kernel(prog, f"k_{kind}_{ilp}")
            for warps in WARPS:
                items = sms * warps * 32
                args = (out, kv, *scalars) if kind == "phase" else (out, *scalars)
                group = 32 * min(warps, 4)  # an SM holds at most 32 groups
                ms = best_ms(lambda k=k, n=items, a=args, g=group: k(queue, (n,), (g,), *a))
                rows.append({"kind": kind, "ilp": ilp, "warps": warps, "ms": ms,
                             "cycles_per_iteration": ms * 1e-3 * dev.max_clock_frequency * 1e6 / ITERS})
    print(json.dumps({"device": dev.name, "driver": dev.driver_version, "clock_mhz": dev.max_clock_frequency,
                      "compute_units": sms, "iterations": ITERS, "rows": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
