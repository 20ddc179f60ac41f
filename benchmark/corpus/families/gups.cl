// Family gups: random-access read-modify-write updates on a large table (GUPS-like): xor updates with
// an LCG index stream (racy by design, as the benchmark allows), the atomic version, and updates from a
// precomputed index buffer.

// clperf: --global m --local 256 --arg n=1048576 --arg m=65536 --arg table=n --arg per=16
// clperf-sweep: n=1024..2097152 m=1024..262144 per=1..64 local=16..1024
__kernel void gups_lcg_xor(__global ulong *table, int per, int n, int m)
{
    if (get_global_id(0) >= m)
        return;
    ulong x = (ulong)get_global_id(0) * 6364136223846793005ul + 1442695040888963407ul;
    for (int k = 0; k < per; ++k) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        table[(x >> 20) & (ulong)(n - 1)] ^= x;
    }
}

// clperf: --global m --local 256 --arg n=1048576 --arg m=65536 --arg table=n --arg per=16
// clperf-sweep: n=1024..4194304 m=1024..262144 per=1..64 local=16..1024
__kernel void gups_lcg_atomic(__global uint *table, int per, int n, int m)
{
    if (get_global_id(0) >= m)
        return;
    uint x = (uint)get_global_id(0) * 747796405u + 2891336453u;
    for (int k = 0; k < per; ++k) {
        x = x * 747796405u + 2891336453u;
        atomic_xor(&table[(x >> 8) & (uint)(n - 1)], x);
    }
}

// clperf: --global m --local 128 --arg n=1048576 --arg m=262144 --arg table=n --arg idx=m --fill idx=range:0:n
// clperf-sweep: n=1024..4194304 m=1024..1048576 local=16..1024
__kernel void gups_indexed(__global float *table, __global const int *idx, int m, int n)
{
    int i = get_global_id(0);
    if (i < m && idx[i] < n) {
        int j = idx[i];
        table[j] = table[j] * 0.5f + 1.0f;
    }
}
