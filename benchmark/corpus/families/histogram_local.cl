// Family histogram_local: privatised histograms. Each work-group counts into __local bins with local
// atomics, then merges into the global histogram with one atomic per bin; a variant writes per-group
// sub-histograms and a second kernel merges them; a third uses several sub-histograms per group to cut
// contention.

#define BINS 256

// clperf: --global n --local 256 --arg n=1048576 --arg data=n --arg hist=256
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void histl_local_atomics(__global const uint *data, __global uint *hist, int n)
{
    __local uint h[BINS];
    int lid = get_local_id(0), ls = get_local_size(0);
    for (int b = lid; b < BINS; b += ls)
        h[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&h[data[i] & (BINS - 1)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < BINS; b += ls)
        if (h[b])
            atomic_add(&hist[b], h[b]);
}

// Grid-stride over the data, per-group sub-histograms written out (no global atomics).
// clperf: --global 65536 --local 256 --arg n=1048576 --arg data=n --arg sub=4096*256
// clperf-sweep: n=65536..4194304 local=16..1024
__kernel void histl_subhist(__global const uint *data, __global uint *sub, int n)
{
    __local uint h[BINS];
    int lid = get_local_id(0), ls = get_local_size(0);
    for (int b = lid; b < BINS; b += ls)
        h[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&h[(data[i] >> 3) & (BINS - 1)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < BINS; b += ls)
        sub[get_group_id(0) * BINS + b] = h[b];
}

// clperf: --global 256 --local 64 --arg groups=1024 --arg sub=groups*256 --arg hist=256
// clperf-sweep: groups=16..4096 local=16..256
__kernel void histl_merge(__global const uint *sub, __global uint *hist, int groups)
{
    int b = get_global_id(0);
    uint acc = 0;
    for (int g = 0; g < groups; ++g)
        acc += sub[g * BINS + b];
    hist[b] = acc;
}

// Four copies of the bins per group, chosen by local id, to spread atomic contention.
// clperf: --global n --local 256 --arg n=1048576 --arg data=n --arg hist=256
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void histl_replicated4(__global const uint *data, __global uint *hist, int n)
{
    __local uint h[4 * BINS];
    int lid = get_local_id(0), ls = get_local_size(0);
    for (int b = lid; b < 4 * BINS; b += ls)
        h[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&h[(lid & 3) * BINS + (data[i] & (BINS - 1))]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < BINS; b += ls)
        atomic_add(&hist[b], h[b] + h[BINS + b] + h[2 * BINS + b] + h[3 * BINS + b]);
}
