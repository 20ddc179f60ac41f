// Family monte_carlo: random-number-heavy kernels, each work-item running its own generator for many
// steps with almost no memory traffic: a xorshift generator with Box-Muller pairs counted into annuli,
// an integer counter-based mixer (multiplies and rotates only), and a random walk with an exit test.

#define BINS 10

inline uint xorshift32(uint x)
{
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

// Gaussian pairs by Box-Muller from uniform pairs in the unit disc; counts per annulus per work-item.
// clperf: --global n --local 128 --arg n=65536 --arg iters=256 --arg seeds=n --arg counts=n*10 --arg sums=n*2 --fill seeds=range:1:1000000
// clperf-sweep: n=16384..1048576 iters=64..4096 local=64..512
__kernel void mc_gauss_pairs(__global const uint *seeds, __global uint *counts, __global float *sums, int iters,
                             int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint s = seeds[i] | 1u;
    uint q[BINS];
    for (int b = 0; b < BINS; ++b)
        q[b] = 0;
    float sx = 0.0f, sy = 0.0f;
    for (int it = 0; it < iters; ++it) {
        s = xorshift32(s);
        float x = 2.0f * (s * 2.3283064e-10f) - 1.0f;
        s = xorshift32(s);
        float y = 2.0f * (s * 2.3283064e-10f) - 1.0f;
        float t = x * x + y * y;
        if (t <= 1.0f && t > 0.0f) {
            float f = sqrt(-2.0f * log(t) / t);
            float gx = x * f, gy = y * f;
            int b = min((int)fmax(fabs(gx), fabs(gy)), BINS - 1);
            q[b] += 1;
            sx += gx;
            sy += gy;
        }
    }
    for (int b = 0; b < BINS; ++b)
        counts[i * BINS + b] = q[b];
    sums[2 * i] = sx;
    sums[2 * i + 1] = sy;
}

// Counter-based: the k-th number of stream i is a mix of (i, k); integer multiplies, shifts and xors.
// clperf: --global n --local 256 --arg n=262144 --arg iters=256 --arg out=n
// clperf-sweep: n=65536..4194304 iters=64..4096 local=64..1024
__kernel void mc_counter_mix(__global uint *out, int iters, int n)
{
    uint i = get_global_id(0);
    if (i >= (uint)n)
        return;
    uint acc = 0;
    for (int k = 0; k < iters; ++k) {
        uint x = i * 0x9E3779B9u + (uint)k * 0x85EBCA6Bu;
        x ^= x >> 16;
        x *= 0x7FEB352Du;
        x ^= x >> 15;
        x *= 0x846CA68Bu;
        x ^= x >> 16;
        acc += x >> 8;
    }
    out[i] = acc;
}

// A random walk on the integer line that stops when it leaves [-limit, limit] or after `iters` steps: the
// trip count differs between work-items (divergence decided by the generator).
// clperf: --global n --local 128 --arg n=65536 --arg iters=1024 --arg limit=32 --arg seeds=n --arg steps=n --fill seeds=range:1:1000000
// clperf-sweep: n=16384..1048576 iters=256..8192 local=64..512
__kernel void mc_walk_exit(__global const uint *seeds, __global int *steps, int iters, int limit, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint s = seeds[i] | 1u;
    int pos = 0, k = 0;
    while (k < iters && pos > -limit && pos < limit) {
        s = xorshift32(s);
        pos += (s & 1u) ? 1 : -1;
        ++k;
    }
    steps[i] = k;
}
