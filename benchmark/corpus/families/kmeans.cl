// Family kmeans: the assignment step of k-means: each point finds its nearest of k centroids in d
// dimensions. Point-major layout (uncoalesced), feature-major layout (coalesced), centroids staged in
// __local memory, and an update step that accumulates with atomics.

#define MAX_CD 2048

// clperf: --global n --local 128 --arg n=65536 --arg d=8 --arg k=16 --arg pts=n*d --arg cent=k*d --arg assign=n
// clperf-sweep: n=1024..262144 d=2..16 k=2..64 local=16..1024
__kernel void km_assign_pointmajor(__global const float *pts, __global const float *cent, __global int *assign,
                                   int d, int k, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float best = INFINITY;
    int arg = 0;
    for (int c = 0; c < k; ++c) {
        float dist = 0.0f;
        for (int f = 0; f < d; ++f) {
            float t = pts[i * d + f] - cent[c * d + f];
            dist += t * t;
        }
        if (dist < best) {
            best = dist;
            arg = c;
        }
    }
    assign[i] = arg;
}

// clperf: --global n --local 128 --arg n=65536 --arg d=8 --arg k=16 --arg pts=n*d --arg cent=k*d --arg assign=n
// clperf-sweep: n=1024..262144 d=2..16 k=2..64 local=16..1024
__kernel void km_assign_featuremajor(__global const float *pts, __global const float *cent, __global int *assign,
                                     int d, int k, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float best = INFINITY;
    int arg = 0;
    for (int c = 0; c < k; ++c) {
        float dist = 0.0f;
        for (int f = 0; f < d; ++f) {
            float t = pts[f * n + i] - cent[c * d + f];
            dist += t * t;
        }
        if (dist < best) {
            best = dist;
            arg = c;
        }
    }
    assign[i] = arg;
}

// clperf: --global n --local 128 --arg n=65536 --arg d=8 --arg k=16 --arg pts=n*d --arg cent=k*d --arg assign=n
// clperf-sweep: n=1024..262144 d=2..16 k=2..64 local=16..1024
__kernel void km_assign_localcent(__global const float *pts, __global const float *cent, __global int *assign,
                                  int d, int k, int n)
{
    __local float lc[MAX_CD];
    int i = get_global_id(0);
    for (int j = get_local_id(0); j < k * d; j += get_local_size(0))
        lc[j] = cent[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i >= n)
        return;
    float best = INFINITY;
    int arg = 0;
    for (int c = 0; c < k; ++c) {
        float dist = 0.0f;
        for (int f = 0; f < d; ++f) {
            float t = pts[f * n + i] - lc[c * d + f];
            dist += t * t;
        }
        if (dist < best) {
            best = dist;
            arg = c;
        }
    }
    assign[i] = arg;
}

// clperf: --global n --local 256 --arg n=65536 --arg d=8 --arg k=16 --arg pts=n*d --arg assign=n --arg sums=k*d --arg counts=k --fill assign=range:0:k
// clperf-sweep: n=1024..262144 d=2..16 k=2..64 local=16..1024
__kernel void km_update_atomic(__global const float *pts, __global const int *assign, __global int *sums,
                               __global int *counts, int d, int k, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int c = assign[i];
    atomic_inc(&counts[c]);
    for (int f = 0; f < d; ++f)
        atomic_add(&sums[c * d + f], (int)(pts[f * n + i] * 256.0f));
}
