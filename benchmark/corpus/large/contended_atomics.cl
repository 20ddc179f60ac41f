// Family contended_atomics: many work-items updating few addresses, as counters, tallies and scatter-adds
// do: each item makes 16-256 updates into 1..1024 bins chosen by a hash of (item, step) with global
// atomic_inc, atomic_add whose old value is used, or a float add by an atomic_cmpxchg loop, and a variant
// that counts in __local first and sends one global atomic per bin per group. The time is set by how
// many updates meet at one address, not by bytes moved.

inline uint hash2(uint i, uint k)
{
    uint h = i * 0x9E3779B1u + k * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return h;
}

// Fire-and-forget increments (the old value is not used).
// clperf: --global n --local 256 --arg n=262144 --arg iters=64 --arg nbins=32 --arg bins=nbins --arg marks=n --fill bins=zeros
// clperf-sweep: n=16384..1048576 iters=16..256 nbins=1..1024 local=64..1024
__kernel void ca_inc_hashed(__global uint *bins, __global uint *marks, int nbins, int iters, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint mask = (uint)max(nbins, 1) - 1u;
    uint last = 0;
    for (int k = 0; k < iters; ++k) {
        last = hash2(i, k) & mask;
        atomic_inc(&bins[last]);
    }
    marks[i] = last;
}

// Ticket counters: atomic_add returns the old value, which the item sums (each update waits for its reply).
// clperf: --global n --local 256 --arg n=262144 --arg iters=64 --arg nbins=32 --arg bins=nbins --arg vals=n --arg out=n --fill bins=zeros --fill vals=range:1:16
// clperf-sweep: n=16384..1048576 iters=16..256 nbins=1..1024 local=64..1024
__kernel void ca_ticket_hashed(__global int *bins, __global const int *vals, __global int *out, int nbins,
                               int iters, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint mask = (uint)max(nbins, 1) - 1u;
    int v = vals[i] & 15, acc = 0;
    for (int k = 0; k < iters; ++k)
        acc += atomic_add(&bins[hash2(i, k) & mask], v);
    out[i] = acc;
}

// Float sums by compare-and-swap: a lane retries until no other lane changed the bin in between.
// clperf: --global n --local 256 --arg n=16384 --arg iters=32 --arg nbins=32 --arg bins=nbins --arg vals=n --fill bins=zeros
// clperf-sweep: n=4096..65536 iters=16..64 nbins=1..1024 local=64..256
__kernel void ca_float_cas_hashed(__global float *bins, __global const float *vals, int nbins, int iters, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint mask = (uint)max(nbins, 1) - 1u;
    float v = vals[i];
    for (int k = 0; k < iters; ++k) {
        volatile __global uint *p = (volatile __global uint *)&bins[hash2(i, k) & mask];
        uint old, next;
        do {
            old = *p;
            next = as_uint(as_float(old) + v);
        } while (atomic_cmpxchg(p, old, next) != old);
    }
}

// The increments counted in a __local histogram first (local atomics), then one global atomic_add per
// non-empty bin per group.
// clperf: --global n --local 256 --arg n=262144 --arg iters=64 --arg nbins=32 --arg bins=nbins --arg marks=n --fill bins=zeros
// clperf-sweep: n=16384..1048576 iters=16..256 nbins=1..1024 local=64..1024
__kernel void ca_local_prereduce(__global uint *bins, __global uint *marks, int nbins, int iters, int n)
{
    __local uint lb[1024];
    int i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    int nb = clamp(nbins, 1, 1024);
    uint mask = (uint)nb - 1u;
    for (int b = lid; b < nb; b += ls)
        lb[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) {
        uint last = 0;
        for (int k = 0; k < iters; ++k) {
            last = hash2(i, k) & mask;
            atomic_inc(&lb[last]);
        }
        marks[i] = last;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < nb; b += ls)
        if (lb[b] != 0)
            atomic_add(&bins[b], lb[b]);
}
