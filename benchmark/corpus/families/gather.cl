// Family gather: reads through index arrays. Random indices (filled uniformly in [0, m)), a strided
// permutation computed in the kernel (i * stride mod n), a blocked shuffle, and a double-indirect gather.

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg src=n --arg idx=n --fill idx=range:0:n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void gat_random(__global float *out, __global const float *src, __global const int *idx, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = src[idx[i]];
}

// Random indices into a small table that fits in caches.
// clperf: --global n --local 256 --arg n=1048576 --arg m=1024 --arg out=n --arg src=m --arg idx=n --fill idx=range:0:m
// clperf-sweep: n=1024..4194304 m=1024..1048576 local=16..1024
__kernel void gat_table(__global float *out, __global const float *src, __global const int *idx, int n, int m)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = src[idx[i] % m] * 2.0f;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg src=n --arg stride=33
// clperf-sweep: n=1024..4194304 stride=1..1024 local=16..1024
__kernel void gat_strided_perm(__global float *out, __global const float *src, int stride, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = src[(int)(((long)i * (stride | 1)) & (n - 1))];
}

// Indices within a window of 64 around i: the gathered addresses stay close (locality-friendly).
// clperf: --global n --local 128 --arg n=1048576 --arg out=n --arg src=n --arg idx=n --fill idx=range:0:64
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void gat_local_window(__global float *out, __global const float *src, __global const int *idx, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int j = (i & ~63) + idx[i];
        out[i] = src[min(j, n - 1)];
    }
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg src=n --arg idx1=n --arg idx2=n --fill idx1=range:0:n --fill idx2=range:0:n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void gat_double_indirect(__global float *out, __global const float *src, __global const int *idx1,
                                  __global const int *idx2, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = src[idx2[idx1[i]]];
}

// float4 elements gathered by index.
// clperf: --global n --local 64 --arg n=262144 --arg out=n --arg src=n --arg idx=n --fill idx=range:0:n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void gat_float4(__global float4 *out, __global const float4 *src, __global const int *idx, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = src[idx[i]];
}
