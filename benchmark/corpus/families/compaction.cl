// Family compaction: stream compaction (keep elements above a threshold). Flags + per-group scan in
// __local memory + scatter to the group's offset (as part of a scan-based pipeline), an atomic-append
// version (order not kept), and a per-group count kernel used to size the groups' offsets.

#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg flags=n --arg cut=0.5
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void cmp_flags(__global const float *in, __global int *flags, float cut, int n)
{
    int i = get_global_id(0);
    if (i < n)
        flags[i] = in[i] > cut;
}

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg counts=n/16 --arg cut=0.5
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void cmp_group_counts(__global const float *in, __global int *counts, float cut, int n)
{
    __local int c;
    if (get_local_id(0) == 0)
        c = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = get_global_id(0);
    if (i < n && in[i] > cut)
        atomic_inc(&c);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        counts[get_group_id(0)] = c;
}

// Group offsets come from a scan of cmp_group_counts (filled in range here so writes stay in bounds).
// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg out=2*n --arg offsets=n/16 --arg cut=0.5 --fill offsets=range:0:n
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void cmp_scan_scatter(__global const float *in, __global float *out, __global const int *offsets,
                               float cut, int n)
{
    __local int s[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0);
    int keep = (i < n && in[i] > cut) ? 1 : 0;
    s[lid] = keep;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < get_local_size(0); d <<= 1) {
        int add = (lid >= d) ? s[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (keep)
        out[offsets[get_group_id(0)] + s[lid] - 1] = in[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg in=n --arg out=n --arg count=1 --arg cut=0.5 --fill count=zeros
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void cmp_atomic_append(__global const float *in, __global float *out, __global int *count, float cut, int n)
{
    int i = get_global_id(0);
    if (i < n && in[i] > cut) {
        int slot = atomic_inc(count);
        if (slot < n)
            out[slot] = in[i];
    }
}
