// Family reduce_minmax: min, max and argmax reductions per work-group, on float and int data.

#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg out=n/8
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void redm_minmax(__global const float *in, __global float2 *out, int n)
{
    __local float lo[MAX_WG];
    __local float hi[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0);
    float v = (i < n) ? in[i] : in[0];
    lo[lid] = v;
    hi[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d) {
            lo[lid] = fmin(lo[lid], lo[lid + d]);
            hi[lid] = fmax(hi[lid], hi[lid + d]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = (float2)(lo[0], hi[0]);
}

// clperf: --global n --local 128 --arg n=1048576 --arg in=n --arg best=n/16 --arg where=n/16
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void redm_argmax(__global const float *in, __global float *best, __global int *where, int n)
{
    __local float val[MAX_WG];
    __local int idx[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0);
    val[lid] = (i < n) ? in[i] : -INFINITY;
    idx[lid] = i;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d && val[lid + d] > val[lid]) {
            val[lid] = val[lid + d];
            idx[lid] = idx[lid + d];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        best[get_group_id(0)] = val[0];
        where[get_group_id(0)] = idx[0];
    }
}

// Global atomic min/max over integers: every work-item contends on two words.
// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg out=2
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void redm_atomic_minmax_int(__global const int *in, __global int *out, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        atomic_min(&out[0], in[i]);
        atomic_max(&out[1], in[i]);
    }
}
