// Family dot: dot products reduced per work-group: scalar with a __local tree, float4 loads, a
// grid-stride accumulation, and a batch of many short dot products (one per work-item).

#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=1048576 --arg a=n --arg b=n --arg partial=n/16
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void dot_tree(__global const float *a, __global const float *b, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0);
    s[lid] = (i < n) ? a[i] * b[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}

// clperf: --global n --local 128 --arg n=262144 --arg a=n --arg b=n --arg partial=n/16
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void dot_float4(__global const float4 *a, __global const float4 *b, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0);
    s[lid] = (i < n) ? dot(a[i], b[i]) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}

// clperf: --global 8192 --local 256 --arg n=1048576 --arg a=n --arg b=n --arg partial=512
// clperf-sweep: n=8192..4194304 local=16..1024
__kernel void dot_gridstride(__global const float *a, __global const float *b, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0);
    float acc = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        acc = fma(a[i], b[i], acc);
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}

// clperf: --global m --local 64 --arg m=65536 --arg len=16 --arg a=m*len --arg b=m*len --arg out=m
// clperf-sweep: m=1024..65536 len=4..64 local=16..1024
__kernel void dot_batched(__global const float *a, __global const float *b, __global float *out, int len, int m)
{
    int j = get_global_id(0);
    if (j >= m)
        return;
    float acc = 0.0f;
    for (int k = 0; k < len; ++k)
        acc += a[j * len + k] * b[j * len + k];
    out[j] = acc;
}
