// Family pagerank: one PageRank iteration on a CSR graph (row pointers clamped, neighbour ids in
// range): pull (each vertex sums its in-neighbours' contributions), push with float atomics, and the
// contribution pre-division kernel.

#define ROW_BOUNDS(rp, v, m, maxdeg, start, stop)                  \
    int start = clamp(rp[v], 0, (m) - (maxdeg));                    \
    int stop = clamp(rp[v + 1], start, start + (maxdeg));

inline void atomic_addf(volatile __global float *p, float v)
{
    union { uint u; float f; } o, nv;
    do {
        o.f = *p;
        nv.f = o.f + v;
    } while (atomic_cmpxchg((volatile __global uint *)p, o.u, nv.u) != o.u);
}

// clperf: --global n --local 256 --arg n=262144 --arg contrib=n --arg rank=n --arg deg=n --fill deg=range:1:32
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void pr_contrib(__global float *contrib, __global const float *rank, __global const int *deg, int n)
{
    int v = get_global_id(0);
    if (v < n)
        contrib[v] = rank[v] / (float)max(deg[v], 1);
}

// clperf: --global n --local 128 --arg n=262144 --arg m=8*n --arg maxdeg=32 --arg rowptr=n+1 --arg adj=m --arg contrib=n --arg rank=n --fill rowptr=range:0:m --fill adj=range:0:n
// clperf-sweep: n=1024..524288 local=16..1024
__kernel void pr_pull(__global const int *rowptr, __global const int *adj, __global const float *contrib,
                      __global float *rank, int n, int m, int maxdeg)
{
    int v = get_global_id(0);
    if (v >= n)
        return;
    ROW_BOUNDS(rowptr, v, m, maxdeg, start, stop)
    float acc = 0.0f;
    for (int e = start; e < stop; ++e)
        acc += contrib[adj[e]];
    rank[v] = 0.15f / n + 0.85f * acc;
}

// clperf: --global n --local 128 --arg n=262144 --arg m=8*n --arg maxdeg=32 --arg rowptr=n+1 --arg adj=m --arg contrib=n --arg next=n --fill rowptr=range:0:m --fill adj=range:0:n
// clperf-sweep: n=1024..524288 local=16..1024
__kernel void pr_push_atomic(__global const int *rowptr, __global const int *adj, __global const float *contrib,
                             __global float *next, int n, int m, int maxdeg)
{
    int v = get_global_id(0);
    if (v >= n)
        return;
    ROW_BOUNDS(rowptr, v, m, maxdeg, start, stop)
    float c = 0.85f * contrib[v];
    for (int e = start; e < stop; ++e)
        atomic_addf(&next[adj[e]], c);
}
