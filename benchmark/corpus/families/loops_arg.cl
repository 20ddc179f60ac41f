// Family loops_arg: loops whose trip counts come from kernel arguments or data: a plain argument bound,
// the same with `#pragma unroll 4`, nested argument-bound loops, a while loop, and a per-item trip
// count read from memory (load imbalance).

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n+t --arg t=32
// clperf-sweep: n=1024..1048576 t=1..256 local=16..1024
__kernel void la_window(__global float *out, __global const float *in, int t, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < t; ++k)
        acc += in[i + k];
    out[i] = acc;
}

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n+t --arg t=32
// clperf-sweep: n=1024..1048576 t=1..256 local=16..1024
__kernel void la_window_unroll4(__global float *out, __global const float *in, int t, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll 4
    for (int k = 0; k < t; ++k)
        acc += in[i + k];
    out[i] = acc;
}

// clperf: --global n --local 128 --arg n=65536 --arg out=n --arg in=n --arg a=8 --arg b=8
// clperf-sweep: n=1024..1048576 a=1..32 b=1..32 local=16..1024
__kernel void la_nested(__global float *out, __global const float *in, int a, int b, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i], acc = 0.0f;
    for (int p = 0; p < a; ++p)
        for (int q = 0; q < b; ++q)
            acc = fma(x, (float)(p - q), acc);
    out[i] = acc;
}

// Newton iterations for a square root until converged or iters run out.
// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n --arg iters=20
// clperf-sweep: n=1024..2097152 iters=1..64 local=16..1024
__kernel void la_while_newton(__global float *out, __global const float *in, int iters, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float a = in[i] * 100.0f + 1.0f, x = a;
    int k = 0;
    while (k < iters && fabs(x * x - a) > 1e-4f * a) {
        x = 0.5f * (x + a / x);
        ++k;
    }
    out[i] = x;
}

// Trip count per item from a buffer filled in [0, 64): imbalance inside work-groups.
// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n+64 --arg len=n --fill len=range:0:64
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void la_data_trip(__global float *out, __global const float *in, __global const int *len, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int m = clamp(len[i], 0, 64);
    float acc = 0.0f;
    for (int k = 0; k < m; ++k)
        acc += in[i + k];
    out[i] = acc;
}
