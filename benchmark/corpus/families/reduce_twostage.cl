// Family reduce_twostage: a fixed grid of work-groups accumulates with a grid-stride loop and reduces in
// __local; a second single-work-group kernel reduces the partial sums (as a host program launches them).

#define MAX_WG 1024

// clperf: --global 16384 --local 256 --arg n=1048576 --arg in=n --arg partial=1024
// clperf-sweep: n=16384..4194304 local=16..1024
__kernel void red2_stage1(__global const float *in, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0);
    float acc = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        acc += in[i];
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

// Stage 1 with blocked (non-coalesced) chunks: each work-item reads a contiguous range.
// clperf: --global 16384 --local 256 --arg n=1048576 --arg in=n --arg partial=1024
// clperf-sweep: n=16384..4194304 local=16..1024
__kernel void red2_stage1_blocked(__global const float *in, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0);
    int per = (n + get_global_size(0) - 1) / get_global_size(0);
    int start = get_global_id(0) * per;
    int stop = min(start + per, n);
    float acc = 0.0f;
    for (int i = start; i < stop; ++i)
        acc += in[i];
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

// One work-group at the directive's size; a smaller local size gives up to 16 groups (one output each).
// clperf: --global 256 --local 256 --arg m=1024 --arg partial=m --arg out=16
// clperf-sweep: m=1024..1048576 local=16..1024
__kernel void red2_stage2(__global const float *partial, __global float *out, int m)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), ls = get_local_size(0);
    float acc = 0.0f;
    for (int i = lid; i < m; i += ls)
        acc += partial[i];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = ls / 2; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = s[0];
}
