// Family search_bins: histogramming by binary search, as in pair-counting and correlation codes. Each
// work-item computes a value per (point, other point) pair (a 3-float dot product), finds its bin by a
// data-dependent binary search over a small sorted table of edges (16-64 floats) held in __constant,
// __global or __local memory, and counts it with global atomics into its group's histogram or with
// __local atomics merged at the end. Small grids with long per-item loops: latency, divergence and
// atomic contention decide the time, not bandwidth.

#define MAX_BINS 64

// Bin of v among edges[0..nbins): the last edge <= v (bin 0 below edges[1]); always in [0, nbins).
#define BIN_SEARCH(edges, v, nbins, out)          \
    do {                                          \
        int lo_ = 0, hi_ = (nbins);               \
        while (hi_ > lo_ + 1) {                   \
            int mid_ = (lo_ + hi_) >> 1;          \
            if ((v) >= (edges)[mid_])             \
                lo_ = mid_;                       \
            else                                  \
                hi_ = mid_;                       \
        }                                         \
        (out) = lo_;                              \
    } while (0)

// Edges in __constant (divergent lanes read different entries); a global atomic_inc per pair into the
// histogram of the item's work-group.
// clperf: --global n --local 256 --arg n=32768 --arg m=2048 --arg nbins=32 --arg pts=3*n --arg others=3*m --arg edges=nbins --arg hist=nbins*((n+63)/64) --fill edges=sorted:0:3 --fill hist=zeros
// clperf-sweep: n=16384..131072 m=1024..8192 nbins=16..64 local=64..256
__kernel void sb_const_group_hist(__global const float *pts, __global const float *others,
                                  __constant float *edges, __global uint *hist, int nbins, int m, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int nb = clamp(nbins, 1, MAX_BINS);
    __global uint *h = hist + nb * get_group_id(0);
    float px = pts[3 * i], py = pts[3 * i + 1], pz = pts[3 * i + 2];
    for (int j = 0; j < m; ++j) {
        float v = px * others[3 * j] + py * others[3 * j + 1] + pz * others[3 * j + 2];
        int b;
        BIN_SEARCH(edges, v, nb, b);
        atomic_inc(&h[b]);
    }
}

// The same with the edges in __global memory (read through the caches).
// clperf: --global n --local 256 --arg n=32768 --arg m=2048 --arg nbins=32 --arg pts=3*n --arg others=3*m --arg edges=nbins --arg hist=nbins*((n+63)/64) --fill edges=sorted:0:3 --fill hist=zeros
// clperf-sweep: n=16384..131072 m=1024..8192 nbins=16..64 local=64..256
__kernel void sb_global_group_hist(__global const float *pts, __global const float *others,
                                   __global const float *edges, __global uint *hist, int nbins, int m, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int nb = clamp(nbins, 1, MAX_BINS);
    __global uint *h = hist + nb * get_group_id(0);
    float px = pts[3 * i], py = pts[3 * i + 1], pz = pts[3 * i + 2];
    for (int j = 0; j < m; ++j) {
        float v = px * others[3 * j] + py * others[3 * j + 1] + pz * others[3 * j + 2];
        int b;
        BIN_SEARCH(edges, v, nb, b);
        atomic_inc(&h[b]);
    }
}

// Edges in __constant, counts in a __local histogram (local atomics), added to the group's global
// histogram once at the end.
// clperf: --global n --local 256 --arg n=32768 --arg m=4096 --arg nbins=32 --arg pts=3*n --arg others=3*m --arg edges=nbins --arg hist=nbins*((n+63)/64) --fill edges=sorted:0:3 --fill hist=zeros
// clperf-sweep: n=16384..131072 m=1024..16384 nbins=16..64 local=64..256
__kernel void sb_const_local_hist(__global const float *pts, __global const float *others,
                                  __constant float *edges, __global uint *hist, int nbins, int m, int n)
{
    __local uint lh[MAX_BINS];
    int i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    int nb = clamp(nbins, 1, MAX_BINS);
    for (int b = lid; b < nb; b += ls)
        lh[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) {
        float px = pts[3 * i], py = pts[3 * i + 1], pz = pts[3 * i + 2];
        for (int j = 0; j < m; ++j) {
            float v = px * others[3 * j] + py * others[3 * j + 1] + pz * others[3 * j + 2];
            int b;
            BIN_SEARCH(edges, v, nb, b);
            atomic_inc(&lh[b]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < nb; b += ls)
        atomic_add(&hist[nb * get_group_id(0) + b], lh[b]);
}

// Edges copied from __global to __local first, counts in a __local histogram merged into one global
// histogram (every group adds to the same nbins counters).
// clperf: --global n --local 256 --arg n=32768 --arg m=4096 --arg nbins=32 --arg pts=3*n --arg others=3*m --arg edges=nbins --arg hist=nbins --fill edges=sorted:0:3 --fill hist=zeros
// clperf-sweep: n=16384..131072 m=1024..16384 nbins=16..64 local=64..256
__kernel void sb_local_edges_hist(__global const float *pts, __global const float *others,
                                  __global const float *edges, __global uint *hist, int nbins, int m, int n)
{
    __local float le[MAX_BINS];
    __local uint lh[MAX_BINS];
    int i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    int nb = clamp(nbins, 1, MAX_BINS);
    for (int b = lid; b < nb; b += ls) {
        le[b] = edges[b];
        lh[b] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) {
        float px = pts[3 * i], py = pts[3 * i + 1], pz = pts[3 * i + 2];
        for (int j = 0; j < m; ++j) {
            float v = px * others[3 * j] + py * others[3 * j + 1] + pz * others[3 * j + 2];
            int b;
            BIN_SEARCH(le, v, nb, b);
            atomic_inc(&lh[b]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < nb; b += ls)
        atomic_add(&hist[b], lh[b]);
}

// All-pairs counting: an outer loop over the item's block of 4 points and an inner loop over all m
// others; edges and counts in __local, merged into one global histogram.
// clperf: --global n --local 256 --arg n=32768 --arg m=2048 --arg nbins=32 --arg pts=12*n --arg others=3*m --arg edges=nbins --arg hist=nbins --fill edges=sorted:0:3 --fill hist=zeros
// clperf-sweep: n=16384..131072 m=1024..8192 nbins=16..64 local=64..256
__kernel void sb_pairs_block(__global const float *pts, __global const float *others,
                             __global const float *edges, __global uint *hist, int nbins, int m, int n)
{
    __local float le[MAX_BINS];
    __local uint lh[MAX_BINS];
    int i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    int nb = clamp(nbins, 1, MAX_BINS);
    for (int b = lid; b < nb; b += ls) {
        le[b] = edges[b];
        lh[b] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) {
        for (int p = 4 * i; p < 4 * i + 4; ++p) {
            float px = pts[3 * p], py = pts[3 * p + 1], pz = pts[3 * p + 2];
            for (int j = 0; j < m; ++j) {
                float v = px * others[3 * j] + py * others[3 * j + 1] + pz * others[3 * j + 2];
                int b;
                BIN_SEARCH(le, v, nb, b);
                atomic_inc(&lh[b]);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < nb; b += ls)
        atomic_add(&hist[b], lh[b]);
}
