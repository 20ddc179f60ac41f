// Family reduce_tree: work-group sum reductions in __local memory, one partial sum per work-group.
// The classic progression: interleaved addressing with a divergent modulo test, interleaved with
// strided indices (bank conflicts), sequential addressing, and first-add-during-load. All work for any
// power-of-two work-group size up to 1024.

#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg partial=n/16
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void redt_interleaved_mod(__global const float *in, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0), ls = get_local_size(0);
    s[lid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < ls; d *= 2) {
        if (lid % (2 * d) == 0)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg partial=n/16
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void redt_interleaved_strided(__global const float *in, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0), ls = get_local_size(0);
    s[lid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < ls; d *= 2) {
        int idx = 2 * d * lid;
        if (idx < ls)
            s[idx] += s[idx + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg partial=n/16
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void redt_sequential(__global const float *in, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0);
    s[lid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}

// Each work-item adds two elements one block apart while loading: half the work-items.
// clperf: --global n/2 --local 256 --arg n=1048576 --arg in=n --arg partial=n/32
// clperf-sweep: n=2048..4194304 local=16..1024
__kernel void redt_add_on_load(__global const float *in, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), ls = get_local_size(0);
    int i = get_group_id(0) * ls * 2 + lid;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + ls < n)
        v += in[i + ls];
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = ls / 2; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}

// The scratch array is a __local pointer parameter sized by the host (one float per work-item).
// clperf: --global n --local 128 --arg n=1048576 --arg in=n --arg partial=n/128 --arg scratch=128
// clperf-sweep: n=1024..4194304
__kernel void redt_local_param(__global const int *in, __global int *partial, __local int *scratch, int n)
{
    int lid = get_local_id(0), i = get_global_id(0);
    scratch[lid] = (i < n) ? (in[i] & 0xffff) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d)
            scratch[lid] += scratch[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
