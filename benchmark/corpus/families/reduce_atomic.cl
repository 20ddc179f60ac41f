// Family reduce_atomic: reductions through atomics. Every work-item hits one global counter (naive),
// a float sum built from compare-and-swap, and the local-atomics-then-one-global-atomic variant.

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg sum=1
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void reda_global_int(__global const int *in, __global int *sum, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_add(sum, in[i] & 0xff);
}

inline void atomic_add_float(volatile __global float *addr, float v)
{
    union { unsigned int u; float f; } old, next;
    do {
        old.f = *addr;
        next.f = old.f + v;
    } while (atomic_cmpxchg((volatile __global unsigned int *)addr, old.u, next.u) != old.u);
}

// clperf: --global n --local 256 --arg n=65536 --arg in=n --arg sum=1024
// clperf-sweep: n=1024..262144 local=16..1024
__kernel void reda_global_float_cas(__global const float *in, __global float *sum, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_add_float(&sum[get_group_id(0) & 1023], in[i]);
}

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg sum=1
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void reda_local_then_global(__global const int *in, __global int *sum, int n)
{
    __local int acc;
    int i = get_global_id(0);
    if (get_local_id(0) == 0)
        acc = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n)
        atomic_add(&acc, in[i] & 0xff);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atomic_add(sum, acc);
}

// Each work-item sums a contiguous chunk privately, then one atomic per work-item.
// clperf: --global n/64 --local 64 --arg n=1048576 --arg in=n --arg sum=1
// clperf-sweep: n=65536..4194304 local=16..1024
__kernel void reda_chunk_then_atomic(__global const int *in, __global int *sum, int n)
{
    int base = get_global_id(0) * 64;
    int acc = 0;
    for (int k = 0; k < 64; ++k)
        if (base + k < n)
            acc += in[base + k] & 0xff;
    atomic_add(sum, acc);
}
