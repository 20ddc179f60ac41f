// Family scatter: writes through index arrays. Random scatter (indices in [0, n)), a bit-reversal-like
// strided permutation, scatter-add with integer atomics, and a blocked scatter where runs of 16 items
// move together.

// clperf: --global n --local 256 --arg n=1048576 --arg dst=n --arg src=n --arg idx=n --fill idx=range:0:n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void sca_random(__global float *dst, __global const float *src, __global const int *idx, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[idx[i]] = src[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg dst=n --arg src=n --arg stride=64
// clperf-sweep: n=1024..4194304 stride=2..1024 local=16..1024
__kernel void sca_strided_perm(__global float *dst, __global const float *src, int stride, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int s = min(stride, n);
        int rows = n / s;
        dst[(i % rows) * s + i / rows] = src[i];
    }
}

// clperf: --global n --local 256 --arg n=1048576 --arg m=4096 --arg acc=m --arg val=n --arg idx=n --fill idx=range:0:m
// clperf-sweep: n=1024..4194304 m=1024..1048576 local=16..1024
__kernel void sca_atomic_add(__global int *acc, __global const int *val, __global const int *idx, int n, int m)
{
    int i = get_global_id(0);
    if (i < n && idx[i] < m)
        atomic_add(&acc[idx[i]], val[i]);
}

// clperf: --global n --local 128 --arg n=1048576 --arg dst=n --arg src=n --arg blk=n/16 --fill blk=range:0:n/16
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void sca_blocked16(__global float *dst, __global const float *src, __global const int *blk, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[blk[i / 16] * 16 + (i & 15)] = src[i];
}
