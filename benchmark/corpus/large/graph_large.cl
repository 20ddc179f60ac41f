// Family graph_large: one level of a breadth-first search and one rank-gathering step over large random
// graphs in CSR form (1-16 million nodes, 4-16 edges a node on average, skewed degrees), built by the
// scenario's graph fill so that row pointers, neighbour lists and the frontier agree. Work per node
// depends on whether it is on the frontier: most items of a mask sweep do nothing, and the few that do
// walk a neighbour list whose nodes lie anywhere in memory (scattered 4-byte gathers and stores).

// Mask sweep, expansion half: a frontier node leaves the frontier and offers its level to every
// unvisited neighbour, flagging it for the update half.
// clperf: --global nodes --local 256 --arg nodes=1<<21 --arg deg=8 --arg front=4096 --fill g=graph:nodes:deg:1:front --fill rowptr=g.rowptr --fill colidx=g.colidx --fill mask=g.mask --fill visited=g.mask --fill cost=g.levels --fill updating=zeros --arg updating=nodes
// clperf-sweep: nodes=1048576..16777216 deg=4..16 front=64..262144 local=64..512
__kernel void gx_mask_expand(__global const int *rowptr, __global const int *colidx, __global int *mask,
                             __global const int *visited, __global int *cost, __global int *updating,
                             int nodes, int deg, int front)
{
    int v = get_global_id(0);
    if (v >= nodes || !mask[v])
        return;
    mask[v] = 0;
    int next = cost[v] + 1;
    int stop = min(rowptr[v + 1], rowptr[v] + 64 * deg);  // a cap on one node's work
    for (int e = rowptr[v]; e < stop; ++e) {
        int u = colidx[e];
        if (!visited[u]) {
            cost[u] = next;
            updating[u] = 1;
        }
    }
}

// Mask sweep, update half: flagged nodes join the frontier and the visited set; one flag says whether
// another level is needed.
// clperf: --global nodes --local 256 --arg nodes=1<<22 --arg mask=nodes --arg visited=nodes --arg updating=nodes --arg again=1 --fill updating=range:0:2 --fill again=zeros
// clperf-sweep: nodes=1048576..67108864 local=64..1024
__kernel void gx_mask_update(__global int *mask, __global int *visited, __global int *updating,
                             __global int *again, int nodes)
{
    int v = get_global_id(0);
    if (v >= nodes || !updating[v])
        return;
    mask[v] = 1;
    visited[v] = 1;
    updating[v] = 0;
    *again = 1;
}

// Queue expansion: one work-item per frontier node; a neighbour is claimed with a compare-and-swap on its
// level and appended to the next queue with an atomic counter (the counter is not reset between repeated
// launches, so a slot past the queue's end is dropped).
// clperf: --global front --local 256 --arg nodes=1<<21 --arg deg=8 --arg front=4096 --fill g=graph:nodes:deg:1:front --fill rowptr=g.rowptr --fill colidx=g.colidx --fill queue=g.frontier --fill levels=g.levels --arg next=nodes --arg tail=1 --fill tail=zeros --arg level=0
// clperf-sweep: nodes=1048576..16777216 deg=4..16 front=1024..524288 local=64..512
__kernel void gx_queue_expand(__global const int *rowptr, __global const int *colidx,
                              __global const int *queue, __global int *levels, __global int *next,
                              __global int *tail, int front, int level, int nodes, int deg)
{
    int q = get_global_id(0);
    if (q >= front)
        return;
    int v = queue[q];
    int stop = min(rowptr[v + 1], rowptr[v] + 64 * deg);
    for (int e = rowptr[v]; e < stop; ++e) {
        int u = min(colidx[e], nodes - 1);
        if (levels[u] == -1 && atomic_cmpxchg(&levels[u], -1, level + 1) == -1) {
            int slot = atomic_inc(tail);
            if (slot < nodes)
                next[slot] = u;
        }
    }
}

// Bottom-up step: every unvisited node looks through its neighbours for one on the current level and
// stops at the first (a data-dependent exit).
// clperf: --global nodes --local 256 --arg nodes=1<<21 --arg deg=8 --arg front=65536 --fill g=graph:nodes:deg:1:front --fill rowptr=g.rowptr --fill colidx=g.colidx --fill levels=g.levels --arg parent=nodes --fill parent=zeros --arg level=0
// clperf-sweep: nodes=1048576..16777216 deg=4..16 front=1024..1048576 local=64..512
__kernel void gx_bottom_up(__global const int *rowptr, __global const int *colidx, __global int *levels,
                           __global int *parent, int nodes, int level, int deg, int front)
{
    int v = get_global_id(0);
    if (v >= nodes || levels[v] != -1)
        return;
    int stop = min(rowptr[v + 1], rowptr[v] + 64 * deg);
    for (int e = rowptr[v]; e < stop; ++e) {
        int u = colidx[e];
        if (levels[u] == level) {
            levels[v] = level + 1;
            parent[v] = u;
            break;
        }
    }
}

// Rank gathering (one pull step of a PageRank-style iteration): each node sums its neighbours' rank over
// their degree.
// clperf: --global nodes --local 256 --arg nodes=1<<21 --arg deg=8 --fill g=graph:nodes:deg:1 --fill rowptr=g.rowptr --fill colidx=g.colidx --arg rank=nodes --arg outdeg=nodes --arg out=nodes --fill outdeg=range:1:32
// clperf-sweep: nodes=1048576..8388608 deg=4..16 local=64..512
__kernel void gx_rank_pull(__global const int *rowptr, __global const int *colidx, __global const float *rank,
                           __global const int *outdeg, __global float *out, int nodes, int deg)
{
    int v = get_global_id(0);
    if (v >= nodes)
        return;
    float sum = 0.0f;
    int stop = min(rowptr[v + 1], rowptr[v] + 64 * deg);
    for (int e = rowptr[v]; e < stop; ++e) {
        int u = colidx[e];
        sum += rank[u] / (float)outdeg[u];
    }
    out[v] = 0.15f + 0.85f * sum;
}
