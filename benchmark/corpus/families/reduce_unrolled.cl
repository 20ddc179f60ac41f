// Family reduce_unrolled: a fixed 256-wide work-group whose tree is completely unrolled, the last
// 64 -> 1 steps written out one by one (the "warp-unrolled last stage", kept correct with barriers on every
// step so it also holds on CPUs), a variant where one work-item finishes serially, and a variant with
// eight loads per work-item and a float4 accumulator.

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg partial=n/256
// clperf-sweep: n=1024..4194304
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void redu_unrolled256(__global const float *in, __global float *partial, int n)
{
    __local float s[256];
    int lid = get_local_id(0), i = get_global_id(0);
    s[lid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 128) s[lid] += s[lid + 128];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 64) s[lid] += s[lid + 64];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 32) s[lid] += s[lid + 32];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16) s[lid] += s[lid + 16];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 8) s[lid] += s[lid + 8];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 4) s[lid] += s[lid + 4];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 2) s[lid] += s[lid + 2];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        partial[get_group_id(0)] = s[0] + s[1];
}

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg partial=n/256
// clperf-sweep: n=1024..4194304
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void redu_serial_tail(__global const float *in, __global float *partial, int n)
{
    __local float s[256];
    int lid = get_local_id(0), i = get_global_id(0);
    s[lid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 128; d >= 64; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        float acc = 0.0f;
        for (int k = 0; k < 64; ++k)
            acc += s[k];
        partial[get_group_id(0)] = acc;
    }
}

// Eight elements per work-item (two float4 loads), then the unrolled tree.
// clperf: --global n/8 --local 128 --arg n=1048576 --arg in=n/4 --arg partial=n/1024
// clperf-sweep: n=8192..4194304
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void redu_float4_x8(__global const float4 *in, __global float *partial, int n)
{
    __local float s[128];
    int lid = get_local_id(0);
    int i = get_global_id(0);
    int quads = n / 4;
    float4 acc = (float4)(0.0f);
    if (2 * i < quads) acc += in[2 * i];
    if (2 * i + 1 < quads) acc += in[2 * i + 1];
    s[lid] = acc.x + acc.y + acc.z + acc.w;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int d = 64; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}
