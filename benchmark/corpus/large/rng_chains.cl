// Family rng_chains: a small grid (1k-16k work-items, often less than one wave of the GPU) where each item
// runs one long dependent chain of 1k-64k steps and sums its outputs: a 46-bit linear congruential
// generator in double precision (the exact product split at 2^23, as classic scientific generators do),
// a 64-bit xorshift-multiply generator, and a float logistic map. The time is the chain's latency times
// its length; throughput and memory hardly matter.

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define T23 8388608.0
#define R23 (1.0 / 8388608.0)
#define T46 (T23 * T23)
#define R46 (R23 * R23)

// x <- a * x mod 2^46 for 0 < a, x < 2^46, exact in doubles: a = a1 2^23 + a2, x = x1 2^23 + x2, then
// a x mod 2^46 = ((a1 x2 + a2 x1) mod 2^23) 2^23 + a2 x2 (mod 2^46); every partial stays below 2^53.
inline double lcg46_next(double a1, double a2, double x)
{
    double x1 = floor(R23 * x);
    double x2 = x - T23 * x1;
    double t1 = a1 * x2 + a2 * x1;
    double t2 = floor(R23 * t1);
    double z = t1 - T23 * t2;
    double t3 = T23 * z + a2 * x2;
    double t4 = floor(R46 * t3);
    return t3 - T46 * t4;
}

// Pairs of uniforms from the 46-bit generator (multiplier 5^13); counts the pairs inside the unit circle
// and sums them.
// clperf: --global n --local 128 --arg n=4096 --arg iters=8192 --arg seeds=n --arg sums=n --arg hits=n --fill seeds=range:1:1000000
// clperf-sweep: n=1024..16384 iters=1024..65536 local=64..256
__kernel void rc_lcg46_split(__global const uint *seeds, __global double *sums, __global int *hits, int iters,
                             int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    const double a = 1220703125.0;
    double a1 = floor(R23 * a), a2 = a - T23 * a1;
    double x = 2.0 * (double)seeds[i] + 1.0;
    double s = 0.0;
    int in = 0;
    for (int k = 0; k < iters; ++k) {
        x = lcg46_next(a1, a2, x);
        double u = R46 * x;
        x = lcg46_next(a1, a2, x);
        double v = R46 * x;
        s += u + v;
        in += (u * u + v * v <= 1.0) ? 1 : 0;
    }
    sums[i] = s;
    hits[i] = in;
}

// xorshift64* per item: 64-bit shifts and a 64-bit multiply per step; the high 32 bits summed.
// clperf: --global n --local 128 --arg n=4096 --arg iters=8192 --arg seeds=n --arg out=n --fill seeds=range:1:1000000
// clperf-sweep: n=1024..16384 iters=1024..65536 local=64..256
__kernel void rc_xorshift64_chain(__global const uint *seeds, __global ulong *out, int iters, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    ulong x = ((ulong)seeds[i] << 32) ^ 0x9E3779B97F4A7C15ul;
    ulong acc = 0;
    for (int k = 0; k < iters; ++k) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        acc += (x * 0x2545F4914F6CDD1Dul) >> 32;
    }
    out[i] = acc;
}

// The logistic map x <- r x (1 - x) in float, four steps per iteration, r slightly different per item;
// the orbit sampled every fourth step is summed.
// clperf: --global n --local 128 --arg n=4096 --arg iters=8192 --arg x0=n --arg out=n
// clperf-sweep: n=1024..16384 iters=1024..65536 local=64..256
__kernel void rc_logistic_float(__global const float *x0, __global float *out, int iters, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float r = 3.7f + 0.29f * (float)(i & 1023) / 1024.0f;
    float x = 0.01f + 0.98f * clamp(x0[i], 0.0f, 1.0f);
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) {
        x = r * x * (1.0f - x);
        x = r * x * (1.0f - x);
        x = r * x * (1.0f - x);
        x = r * x * (1.0f - x);
        s += x;
    }
    out[i] = s;
}
