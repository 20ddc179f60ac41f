// Family loops_const: per-work-item loops with compile-time trip counts (4, 16, 64, 256) and
// `#pragma unroll` factors (none, 1, 4, full), each iteration reading a neighbour and doing a few flops.

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+4
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void lc_trip4_nounroll(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < 4; ++k)
        acc = acc * 0.5f + in[i + k];
    out[i] = acc;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+16
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void lc_trip16_full(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; ++k)
        acc = acc * 0.5f + in[i + k];
    out[i] = acc;
}

// clperf: --global n --local 128 --arg n=262144 --arg out=n --arg in=n+64
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void lc_trip64_unroll4(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll 4
    for (int k = 0; k < 64; ++k)
        acc = fma(acc, 0.99f, in[i + k]);
    out[i] = acc;
}

// Pure arithmetic loop (no loads inside): compute-bound with 256 iterations.
// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void lc_trip256_compute(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i], a = 1.0f, b = 0.0f;
    for (int k = 0; k < 256; ++k) {
        a = fma(a, x, 0.125f);
        b = fma(b, a, -0.25f);
    }
    out[i] = a + b;
}

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void lc_trip256_unroll8(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i], a = 1.0f, b = 0.0f;
#pragma unroll 8
    for (int k = 0; k < 256; ++k) {
        a = fma(a, x, 0.125f);
        b = fma(b, a, -0.25f);
    }
    out[i] = a + b;
}

// Nested constant loops 8 x 8 reading a 2-D neighbourhood from a row-major array of width 64.
// clperf: --global n --local 64 --arg n=262144 --arg out=n --arg in=n+8*64+8
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void lc_nested8x8(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 8; ++b)
            acc += in[i + a * 64 + b];
    out[i] = acc;
}
