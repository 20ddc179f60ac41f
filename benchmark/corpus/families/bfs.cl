// Family bfs: level-synchronous breadth-first search steps on a CSR graph (row pointers clamped so any
// contents stay in bounds, neighbour ids in [0, n)). Top-down over all vertices (one thread per vertex),
// top-down over a frontier queue with an atomic-append next queue, bottom-up (unvisited vertices look for
// a parent), and a frontier-mask variant as in classic GPU BFS codes.

#define ROW_BOUNDS(rp, v, m, maxdeg, start, stop)                  \
    int start = clamp(rp[v], 0, (m) - (maxdeg));                    \
    int stop = clamp(rp[v + 1], start, start + (maxdeg));

// clperf: --global n --local 256 --arg n=262144 --arg m=8*n --arg maxdeg=16 --arg rowptr=n+1 --arg adj=m --arg level=n --arg cur=1 --fill rowptr=range:0:m --fill adj=range:0:n --fill level=range:0:4
// clperf-sweep: n=1024..524288 local=16..1024
__kernel void bfs_topdown_all(__global const int *rowptr, __global const int *adj, __global int *level,
                              int cur, int n, int m, int maxdeg)
{
    int v = get_global_id(0);
    if (v >= n || level[v] != cur)
        return;
    ROW_BOUNDS(rowptr, v, m, maxdeg, start, stop)
    for (int e = start; e < stop; ++e) {
        int u = adj[e];
        if (level[u] > cur + 1 || level[u] < 0)
            level[u] = cur + 1;
    }
}

// clperf: --global q --local 128 --arg n=262144 --arg q=n/8 --arg m=8*n --arg maxdeg=16 --arg rowptr=n+1 --arg adj=m --arg frontier=q --arg next=n --arg count=1 --arg visited=n --fill rowptr=range:0:m --fill adj=range:0:n --fill frontier=range:0:n --fill count=zeros --fill visited=zeros
// clperf-sweep: n=8192..524288 local=16..1024
__kernel void bfs_queue(__global const int *rowptr, __global const int *adj, __global const int *frontier,
                        __global int *next, __global int *count, __global int *visited, int q, int n, int m,
                        int maxdeg)
{
    int t = get_global_id(0);
    if (t >= q)
        return;
    int v = frontier[t];
    ROW_BOUNDS(rowptr, v, m, maxdeg, start, stop)
    for (int e = start; e < stop; ++e) {
        int u = adj[e];
        if (atomic_xchg(&visited[u], 1) == 0) {
            int slot = atomic_inc(count);
            if (slot < n)
                next[slot] = u;
        }
    }
}

// clperf: --global n --local 256 --arg n=262144 --arg m=8*n --arg maxdeg=16 --arg rowptr=n+1 --arg adj=m --arg level=n --arg cur=1 --fill rowptr=range:0:m --fill adj=range:0:n --fill level=range:0:4
// clperf-sweep: n=1024..524288 local=16..1024
__kernel void bfs_bottomup(__global const int *rowptr, __global const int *adj, __global int *level,
                           int cur, int n, int m, int maxdeg)
{
    int v = get_global_id(0);
    if (v >= n || level[v] <= cur)
        return;
    ROW_BOUNDS(rowptr, v, m, maxdeg, start, stop)
    for (int e = start; e < stop; ++e) {
        if (level[adj[e]] == cur) {
            level[v] = cur + 1;
            break;
        }
    }
}

// Frontier / updating / visited masks, two kernels per level in the original formulation (step 1 here).
// clperf: --global n --local 128 --arg n=262144 --arg m=8*n --arg maxdeg=16 --arg rowptr=n+1 --arg adj=m --arg mask=n --arg updating=n --arg visited=n --arg cost=n --fill rowptr=range:0:m --fill adj=range:0:n --fill mask=range:0:2 --fill visited=range:0:2
// clperf-sweep: n=1024..524288 local=16..1024
__kernel void bfs_mask_step(__global const int *rowptr, __global const int *adj, __global char *mask,
                            __global char *updating, __global const char *visited, __global int *cost,
                            int n, int m, int maxdeg)
{
    int v = get_global_id(0);
    if (v >= n || !mask[v])
        return;
    mask[v] = 0;
    ROW_BOUNDS(rowptr, v, m, maxdeg, start, stop)
    for (int e = start; e < stop; ++e) {
        int u = adj[e];
        if (!visited[u]) {
            cost[u] = cost[v] + 1;
            updating[u] = 1;
        }
    }
}
