// Family multipass: one pass of an algorithm that the host launches many times over the same large array,
// each pass with its own parameter: a merge pass of sorted runs (each output finds its place by binary
// search), a compare-exchange step of a bitonic network, a digit-count pass of a radix sort with
// per-group __local histograms, and one up-sweep level of a tree scan.

// Output element i of the merge of runs [2w*b, 2w*b + w) and [2w*b + w, 2w*(b + 1)): its rank in its own
// run plus its rank in the other run (binary search). Runs need not be sorted for the access pattern.
// clperf: --global n --local 256 --arg n=1<<20 --arg width=1024 --arg src=n --arg dst=n
// clperf-sweep: n=1048576..67108864 width=1..65536 local=64..512
__kernel void mp_merge_pass(__global const float *src, __global float *dst, int width, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int base = (i / (2 * width)) * 2 * width;
    int off = i - base;
    int mine = off < width ? base : base + width;
    int other = off < width ? base + width : base;
    int pos = off < width ? off : off - width;
    float v = src[i];
    int lo = 0, hi = width;
    while (lo < hi) {  // elements of the other run before v (ties: the left run first)
        int mid = (lo + hi) >> 1;
        float o = src[other + mid];
        if (off < width ? (o < v) : (o <= v))
            lo = mid + 1;
        else
            hi = mid;
    }
    (void)mine;
    dst[base + pos + lo] = v;
}

// Step (k, j) of a bitonic sorting network over the whole array: item i pairs with i ^ j.
// clperf: --global n --local 256 --arg n=1<<20 --arg k=1024 --arg j=512 --arg data=n
// clperf-sweep: n=1048576..134217728 j=1..8388608 local=64..1024
__kernel void mp_bitonic_step(__global float *data, int k, int j, int n)
{
    int i = get_global_id(0);
    int p = i ^ j;
    if (p > i && p < n) {
        float a = data[i], b = data[p];
        int up = (i & k) == 0;
        if ((a > b) == up) {
            data[i] = b;
            data[p] = a;
        }
    }
}

// Counts of one 4-bit digit per work-group in __local memory, written out digit-major for a later scan.
// clperf: --global n --local 256 --arg n=1<<20 --arg shift=0 --arg keys=n --arg counts=16*(n/256)
// clperf-sweep: n=1048576..67108864 shift=1..16
__kernel void mp_digit_counts(__global const uint *keys, __global uint *counts, int shift, int n)
{
    __local uint hist[16];
    int lid = get_local_id(0);
    if (lid < 16)
        hist[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&hist[(keys[i] >> shift) & 15u]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16)
        counts[lid * get_num_groups(0) + get_group_id(0)] = hist[lid];
}

// One up-sweep level of a work-efficient scan: item i adds the partial sum `stride` to its left.
// clperf: --global n/(2*stride) --local 256 --arg n=1<<20 --arg stride=1 --arg data=n
// clperf-sweep: n=2097152..134217728 stride=1..1024 local=64..256
__kernel void mp_upsweep_level(__global float *data, int stride, int n)
{
    int i = get_global_id(0);
    int right = (2 * i + 2) * stride - 1;
    if (right < n)
        data[right] += data[right - stride];
}
