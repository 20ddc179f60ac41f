// Family radix_pieces: the passes of an LSD radix sort (4-bit digits): per-group digit histograms in
// __local memory, an exclusive prefix sum over the (digit x group) histogram table, and the stable
// scatter of keys to their digit's offset.

#define RADIX 16
#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=1048576 --arg keys=n --arg hist=16*(n/16) --arg shift=4
// clperf-sweep: n=1024..4194304 shift=1..16 local=16..1024
__kernel void rdx_histogram(__global const uint *keys, __global uint *hist, int shift, int n)
{
    __local uint h[RADIX];
    int lid = get_local_id(0), i = get_global_id(0);
    int groups = get_num_groups(0);
    if (lid < RADIX)
        h[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n)
        atomic_inc(&h[(keys[i] >> (shift & 31)) & (RADIX - 1)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < RADIX)
        hist[lid * groups + get_group_id(0)] = h[lid];
}

// Exclusive scan of the digit-major table, one work-group of 256 (each item scans a contiguous chunk).
// clperf: --global 256 --local 256 --arg m=16384 --arg hist=m --arg out=m
// clperf-sweep: m=1024..1048576
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void rdx_scan_table(__global const uint *hist, __global uint *out, int m)
{
    __local uint s[256];
    int lid = get_local_id(0);
    int per = (m + 255) / 256, start = lid * per, stop = min(start + per, m);
    uint acc = 0;
    for (int i = start; i < stop; ++i)
        acc += hist[i];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < 256; d <<= 1) {
        uint add = (lid >= d) ? s[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint run = s[lid] - acc;
    for (int i = start; i < stop; ++i) {
        uint v = hist[i];
        out[i] = run;
        run += v;
    }
}

// Scatter: each group ranks its keys per digit in __local memory (stable, serial per digit) and writes
// them at offset[digit][group] + rank. Offsets are filled in range so that writes stay in bounds.
// clperf: --global n --local 128 --arg n=1048576 --arg keys=n --arg out=2*n --arg offsets=16*(n/16) --arg shift=4 --fill offsets=range:0:n
// clperf-sweep: n=1024..2097152 shift=1..16 local=16..1024
__kernel void rdx_scatter(__global const uint *keys, __global uint *out, __global const uint *offsets, int shift,
                          int n)
{
    __local uint dig[MAX_WG];
    int lid = get_local_id(0), i = get_global_id(0), groups = get_num_groups(0);
    uint key = (i < n) ? keys[i] : 0u;
    uint d = (key >> (shift & 31)) & (RADIX - 1);
    dig[lid] = d;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint rank = 0;
    for (int j = 0; j < lid; ++j)
        rank += dig[j] == d;
    if (i < n)
        out[offsets[d * groups + get_group_id(0)] + rank] = key;
}
