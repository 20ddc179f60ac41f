// Family iterative: per-item loops that stop on a data-dependent condition under an iteration cap, the
// loops whose count the analysis knows only as an upper bound: a Newton solve to a tight tolerance, the
// Collatz stopping time, bisection, sphere tracing (rays that miss run to the cap), a logistic-map orbit
// that only settles for some growth rates, and a binary search (about log2(n) halvings whatever the data).

// Newton iterations for the cube root, to a tolerance that float rarely reaches: most items run to maxit.
// clperf: --global n --local 256 --arg n=262144 --arg x=n --arg out=n --arg maxit=64 --fill x=range:1:1000
// clperf-sweep: n=1024..2097152 maxit=4..512 local=32..1024
__kernel void it_newton_cbrt(__global const float *x, __global float *out, int maxit, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float a = x[i], r = a * 0.5f + 1.0f;
    for (int k = 0; k < maxit; ++k) {
        float d = (r * r * r - a) / (3.0f * r * r);
        r -= d;
        if (fabs(d) < 1e-9f * r)
            break;
    }
    out[i] = r;
}

// Collatz stopping time of each start value, capped: integer work, counts differ item to item.
// clperf: --global n --local 128 --arg n=262144 --arg start=n --arg steps=n --arg maxit=512 --fill start=range:1:100000
// clperf-sweep: n=1024..2097152 maxit=16..2048 local=32..1024
__kernel void it_collatz(__global const uint *start, __global int *steps, int maxit, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint v = start[i];
    int s = 0;
    while (v != 1u && s < maxit) {
        v = (v & 1u) ? 3u * v + 1u : v >> 1;
        ++s;
    }
    steps[i] = s;
}

// Bisection for the real root of t^3 + p t + q on [-64, 64] until the bracket is below eps.
// clperf: --global n --local 256 --arg n=262144 --arg p=n --arg q=n --arg root=n --arg maxit=40 --fill p=range:1:50 --fill q=range:-500:500
// clperf-sweep: n=1024..2097152 maxit=8..64 local=32..1024
__kernel void it_bisect(__global const float *p, __global const float *q, __global float *root, int maxit, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float lo = -64.0f, hi = 64.0f, pp = p[i], qq = q[i];
    int k = 0;
    while (hi - lo > 1e-5f && k < maxit) {
        float mid = 0.5f * (lo + hi);
        float f = mid * mid * mid + pp * mid + qq;
        if (f > 0.0f)
            hi = mid;
        else
            lo = mid;
        ++k;
    }
    root[i] = 0.5f * (lo + hi);
}

// Sphere tracing one sphere from a pinhole camera: rays that hit stop early, rays that miss march to the
// cap or until they leave the scene. 2-D launch, one ray per pixel.
// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg depth=w*h --arg maxsteps=128
// clperf-sweep: w=64..2048 h=64..2048 maxsteps=8..512 local=8..32
__kernel void it_raymarch(__global float *depth, int maxsteps, int w, int h)
{
    int px = get_global_id(0), py = get_global_id(1);
    if (px >= w || py >= h)
        return;
    float3 dir = normalize((float3)((px - 0.5f * w) / h, (py - 0.5f * h) / h, 1.0f));
    float3 pos = (float3)(0.0f, 0.0f, -3.0f);
    float t = 0.0f;
    for (int s = 0; s < maxsteps; ++s) {
        float d = length(pos + t * dir - (float3)(0.3f, -0.2f, 0.0f)) - 0.8f;
        if (d < 1e-3f || t > 20.0f)
            break;
        t += 0.5f * d;
    }
    depth[py * w + px] = t;
}

// Logistic-map orbit until two iterates agree: growth rates below 3 settle, those above run to the cap.
// clperf: --global n --local 256 --arg n=262144 --arg r=n --arg orbit=n --arg maxit=256 --fill r=range:1:5
// clperf-sweep: n=1024..2097152 maxit=16..1024 local=32..1024
__kernel void it_logistic(__global const float *r, __global float *orbit, int maxit, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float g = 2.4f + 0.3f * r[i], x = 0.5f, prev = 0.0f;
    int k = 0;
    do {
        prev = x;
        x = g * x * (1.0f - x);
        ++k;
    } while (fabs(x - prev) > 1e-6f && k < maxit);
    orbit[i] = x + (float)k;
}

// Lower-bound binary search of each query in a table of m keys: log2(m) halvings for every query.
// clperf: --global n --local 256 --arg n=262144 --arg m=1048576 --arg keys=m --arg queries=n --arg pos=n --fill keys=range:0:1000000 --fill queries=range:0:1000000
// clperf-sweep: n=1024..2097152 m=1024..4194304 local=32..1024
__kernel void it_binsearch(__global const int *keys, __global const int *queries, __global int *pos, int m, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int q = queries[i], lo = 0, hi = m;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (keys[mid] < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    pos[i] = lo;
}
