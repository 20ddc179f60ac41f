// Family scan_blelloch: the work-efficient (up-sweep / down-sweep) exclusive scan of 2 elements per
// work-item in __local memory, the same with padding against bank conflicts, and the kernel that adds
// each block's offset afterwards (the pieces a host program launches for a large scan).

#define MAX_BLOCK 2048
#define PAD(i) ((i) + ((i) >> 5))

// clperf: --global n/2 --local 256 --arg n=1048576 --arg out=n --arg in=n --arg sums=n/32
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void scanb_block(__global float *out, __global const float *in, __global float *sums, int n)
{
    __local float t[MAX_BLOCK];
    int lid = get_local_id(0), ls = get_local_size(0);
    int m = 2 * ls, base = get_group_id(0) * m;
    t[2 * lid] = (base + 2 * lid < n) ? in[base + 2 * lid] : 0.0f;
    t[2 * lid + 1] = (base + 2 * lid + 1 < n) ? in[base + 2 * lid + 1] : 0.0f;
    int offset = 1;
    for (int d = ls; d > 0; d >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            int ai = offset * (2 * lid + 1) - 1, bi = offset * (2 * lid + 2) - 1;
            t[bi] += t[ai];
        }
        offset <<= 1;
    }
    if (lid == 0) {
        sums[get_group_id(0)] = t[m - 1];
        t[m - 1] = 0.0f;
    }
    for (int d = 1; d < m; d <<= 1) {
        offset >>= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            int ai = offset * (2 * lid + 1) - 1, bi = offset * (2 * lid + 2) - 1;
            float x = t[ai];
            t[ai] = t[bi];
            t[bi] += x;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (base + 2 * lid < n) out[base + 2 * lid] = t[2 * lid];
    if (base + 2 * lid + 1 < n) out[base + 2 * lid + 1] = t[2 * lid + 1];
}

// clperf: --global n/2 --local 128 --arg n=1048576 --arg out=n --arg in=n --arg sums=n/32
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void scanb_block_padded(__global int *out, __global const int *in, __global int *sums, int n)
{
    __local int t[PAD(MAX_BLOCK) + 1];
    int lid = get_local_id(0), ls = get_local_size(0);
    int m = 2 * ls, base = get_group_id(0) * m;
    int a = lid, b = lid + ls;
    t[PAD(a)] = (base + a < n) ? (in[base + a] & 0xffff) : 0;
    t[PAD(b)] = (base + b < n) ? (in[base + b] & 0xffff) : 0;
    int offset = 1;
    for (int d = ls; d > 0; d >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            int ai = offset * (2 * lid + 1) - 1, bi = offset * (2 * lid + 2) - 1;
            t[PAD(bi)] += t[PAD(ai)];
        }
        offset <<= 1;
    }
    if (lid == 0) {
        sums[get_group_id(0)] = t[PAD(m - 1)];
        t[PAD(m - 1)] = 0;
    }
    for (int d = 1; d < m; d <<= 1) {
        offset >>= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            int ai = offset * (2 * lid + 1) - 1, bi = offset * (2 * lid + 2) - 1;
            int x = t[PAD(ai)];
            t[PAD(ai)] = t[PAD(bi)];
            t[PAD(bi)] += x;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (base + a < n) out[base + a] = t[PAD(a)];
    if (base + b < n) out[base + b] = t[PAD(b)];
}

// clperf: --global n --local 256 --arg n=1048576 --arg data=n --arg sums=n/512+1 --arg block=512
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void scanb_add_offsets(__global float *data, __global const float *sums, int block, int n)
{
    int i = get_global_id(0);
    if (i < n)
        data[i] += sums[i / block];
}

// Sequential scan of the block sums by one work-item (small arrays, as host code often does).
// clperf: --global 1 --local 1 --arg m=1024 --arg sums=m
// clperf-sweep: m=1024..65536
__kernel void scanb_sums_serial(__global float *sums, int m)
{
    float acc = 0.0f;
    for (int i = 0; i < m; ++i) {
        float v = sums[i];
        sums[i] = acc;
        acc += v;
    }
}
