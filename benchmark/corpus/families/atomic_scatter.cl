// Family atomic_scatter: work-items add into shared targets picked by an index array. OpenCL 1.2 has no
// float atomic add, so the float kernels retry a compare-and-swap until no other work-item got in between:
// their cost grows with contention (fewer targets), which the sweep varies through the target count.

inline void cas_addf(volatile __global float *p, float v)
{
    union { uint u; float f; } o, nv;
    do {
        o.f = *p;
        nv.f = o.f + v;
    } while (atomic_cmpxchg((volatile __global uint *)p, o.u, nv.u) != o.u);
}

inline void cas_maxf(volatile __global float *p, float v)
{
    union { uint u; float f; } o, nv;
    do {
        o.f = *p;
        if (o.f >= v)
            return;
        nv.f = v;
    } while (atomic_cmpxchg((volatile __global uint *)p, o.u, nv.u) != o.u);
}

// One float added per item into one of `bins` targets.
// clperf: --global n --local 256 --arg n=1048576 --arg bins=4096 --arg idx=n --arg val=n --arg acc=bins --fill idx=range:0:bins
// clperf-sweep: n=4096..4194304 bins=16..1048576 local=32..1024
__kernel void as_cas_add(__global const int *idx, __global const float *val, __global float *acc, int bins, int n)
{
    int i = get_global_id(0);
    if (i < n)
        cas_addf(&acc[clamp(idx[i], 0, bins - 1)], val[i]);
}

// The same scatter with integer atomic_add: one hardware atomic, no retry.
// clperf: --global n --local 256 --arg n=1048576 --arg bins=4096 --arg idx=n --arg val=n --arg acc=bins --fill idx=range:0:bins --fill val=range:0:100
// clperf-sweep: n=4096..4194304 bins=16..1048576 local=32..1024
__kernel void as_int_add(__global const int *idx, __global const int *val, __global int *acc, int bins, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_add(&acc[clamp(idx[i], 0, bins - 1)], val[i]);
}

// Each item pushes `fan` contributions to targets read from its slice of an edge list.
// clperf: --global n --local 128 --arg n=262144 --arg fan=8 --arg targets=n --arg dst=n*fan --arg w=n --arg out=targets --fill dst=range:0:targets
// clperf-sweep: n=1024..131072 fan=1..32 targets=64..1048576 local=32..1024
__kernel void as_cas_push(__global const int *dst, __global const float *w, __global float *out, int fan,
                          int targets, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float c = 0.5f * w[i];
    for (int e = 0; e < fan; ++e)
        cas_addf(&out[clamp(dst[i * fan + e], 0, targets - 1)], c);
}

// Scatter-max of floats: the swap is skipped once the target already holds a larger value.
// clperf: --global n --local 256 --arg n=1048576 --arg bins=4096 --arg idx=n --arg val=n --arg best=bins --fill idx=range:0:bins
// clperf-sweep: n=4096..4194304 bins=16..1048576 local=32..1024
__kernel void as_cas_max(__global const int *idx, __global const float *val, __global float *best, int bins, int n)
{
    int i = get_global_id(0);
    if (i < n)
        cas_maxf(&best[clamp(idx[i], 0, bins - 1)], val[i]);
}
