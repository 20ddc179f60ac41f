// Family graph_paths: dense-graph path algorithms. A Floyd-Warshall relaxation step for intermediate
// vertex k (launched n times by the host), the same with row k staged in __local memory, and a
// Bellman-Ford-style edge relaxation over an edge list with atomic_min.

#define MAX_WG 1024

// clperf: --global n,n --local 16,16 --arg n=1024 --arg dist=n*n --arg k=17
// clperf-sweep: n=64..2048 k=1..32 local=16..64
__kernel void gp_floyd_step(__global float *dist, int k, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    int kk = k % n;
    float via = dist[i * n + kk] + dist[kk * n + j];
    if (via < dist[i * n + j])
        dist[i * n + j] = via;
}

// clperf: --global n,n --local 64,4 --arg n=1024 --arg dist=n*n --arg k=17
// clperf-sweep: n=64..2048 k=1..32 local=16..256
__kernel void gp_floyd_step_localrow(__global float *dist, int k, int n)
{
    __local float rowk[MAX_WG];
    int j = get_global_id(0), i = get_global_id(1);
    int kk = k % n;
    if (get_local_id(1) == 0)
        rowk[get_local_id(0)] = dist[kk * n + j];
    barrier(CLK_LOCAL_MEM_FENCE);
    float via = dist[i * n + kk] + rowk[get_local_id(0)];
    if (via < dist[i * n + j])
        dist[i * n + j] = via;
}

// clperf: --global m --local 256 --arg n=65536 --arg m=8*n --arg src=m --arg dst=m --arg wt=m --arg d=n --fill src=range:0:n --fill dst=range:0:n --fill wt=range:1:100
// clperf-sweep: n=1024..262144 local=16..1024
__kernel void gp_bellman_relax(__global const int *src, __global const int *dst, __global const int *wt,
                               __global int *d, int m, int n)
{
    int e = get_global_id(0);
    if (e >= m)
        return;
    int du = d[src[e]];
    if (du < 0x3fffffff)
        atomic_min(&d[dst[e]], du + wt[e]);
}
