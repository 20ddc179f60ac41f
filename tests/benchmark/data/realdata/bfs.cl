// One step of a breadth-first search over a graph in CSR form, from a frontier given as a mask (every
// frontier node at level 0, unvisited nodes at -1) or as a list of nodes. Neighbours not yet visited get
// the next level and join the next frontier. An index out of range writes past the end of `next`.

__kernel void bfs_mask(__global const int* rowptr, __global const int* colidx, __global const int* mask,
                       __global int* levels, __global int* next, int nodes, int edges, int level) {
    int v = get_global_id(0);
    if (v >= nodes || !mask[v]) return;
    int begin = rowptr[v], end = rowptr[v + 1];
    if (end > edges) { next[nodes] = 1; return; }
    for (int j = begin; j < end; ++j) {
        int u = colidx[j];
        if (u < 0 || u >= nodes) { next[nodes] = 1; return; }
        if (levels[u] == -1) {
            levels[u] = level + 1;
            next[u] = 1;
        }
    }
}

__kernel void bfs_queue(__global const int* rowptr, __global const int* colidx, __global const int* frontier,
                        __global int* reached, int nodes, int count) {
    int i = get_global_id(0);
    if (i >= count) return;
    int v = frontier[i];
    if (v < 0 || v >= nodes) { reached[nodes] = 1; return; }
    for (int j = rowptr[v]; j < rowptr[v + 1]; ++j) {
        int u = colidx[j];
        if (u < 0 || u >= nodes) { reached[nodes] = 1; return; }
        reached[u] = 1;
    }
}

// Edges as structs: in-degree of every node, counted with atomics.
struct edge {
    int src;
    int dst;
    float weight;
};

__kernel void in_degree(__global const struct edge* edges, __global int* degree, int nodes, int count) {
    int i = get_global_id(0);
    if (i >= count) return;
    struct edge e = edges[i];
    if (e.src < 0 || e.src >= nodes || e.dst < 0 || e.dst >= nodes) { degree[nodes] = 1; return; }
    atomic_inc(&degree[e.dst]);
}
