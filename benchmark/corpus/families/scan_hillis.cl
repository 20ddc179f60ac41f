// Family scan_hillis: Hillis-Steele inclusive scans. A per-work-group scan in double-buffered __local
// memory (any power-of-two work-group size), the same with one __local buffer and two barriers per step,
// and a one-step-per-launch global-memory version (the host launches it log2(n) times with d = 1, 2, 4...).

#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n --arg sums=n/16
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void scanhs_block_double(__global float *out, __global const float *in, __global float *sums, int n)
{
    __local float buf[2 * MAX_WG];
    int lid = get_local_id(0), ls = get_local_size(0), i = get_global_id(0);
    int pout = 0, pin = 1;
    buf[lid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < ls; d <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        float v = buf[pin * ls + lid];
        if (lid >= d)
            v += buf[pin * ls + lid - d];
        buf[pout * ls + lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n)
        out[i] = buf[pout * ls + lid];
    if (lid == ls - 1)
        sums[get_group_id(0)] = buf[pout * ls + lid];
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void scanhs_block_single(__global int *out, __global const int *in, int n)
{
    __local int buf[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0);
    buf[lid] = (i < n) ? (in[i] & 0xff) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < get_local_size(0); d <<= 1) {
        int add = (lid >= d) ? buf[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n)
        out[i] = buf[lid];
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n --arg d=64
// clperf-sweep: n=1024..4194304 d=1..65536 local=16..1024
__kernel void scanhs_global_step(__global float *out, __global const float *in, int d, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = (i >= d) ? in[i] + in[i - d] : in[i];
}
