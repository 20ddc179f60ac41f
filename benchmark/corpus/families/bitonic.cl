// Family bitonic: bitonic sorting network steps. One compare-exchange step over the whole array in global
// memory (the host launches it for every (k, j) pair), the same with one work-item per pair, and a
// complete sort of 2*local elements inside __local memory (fixed 256-wide groups).

// clperf: --global n --local 256 --arg n=1048576 --arg data=n --arg j=64 --arg k=128
// clperf-sweep: n=1024..4194304 j=1..512 local=16..1024
__kernel void bit_step_global(__global float *data, int j, int k, int n)
{
    int i = get_global_id(0);
    int ixj = i ^ j;
    if (ixj > i && ixj < n) {
        float a = data[i], b = data[ixj];
        bool up = (i & k) == 0;
        if ((a > b) == up) {
            data[i] = b;
            data[ixj] = a;
        }
    }
}

// One work-item per compare pair: n/2 items, no idle half.
// clperf: --global n/2 --local 256 --arg n=1048576 --arg data=n --arg j=64 --arg k=128
// clperf-sweep: n=2048..4194304 j=1..512 local=16..1024
__kernel void bit_step_pairs(__global uint *data, int j, int k, int n)
{
    int t = get_global_id(0);
    int lo = ((t / j) * 2 * j) + (t % j);
    int hi = lo + j;
    if (hi >= n)
        return;
    uint a = data[lo], b = data[hi];
    bool up = (lo & k) == 0;
    if ((a > b) == up) {
        data[lo] = b;
        data[hi] = a;
    }
}

// clperf: --global n/2 --local 256 --arg n=1048576 --arg data=n
// clperf-sweep: n=1024..4194304
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void bit_sort_local512(__global float *data, int n)
{
    __local float s[512];
    int lid = get_local_id(0);
    int base = get_group_id(0) * 512;
    s[lid] = data[base + lid];
    s[lid + 256] = data[base + lid + 256];
    for (int k = 2; k <= 512; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            int lo = 2 * lid - (lid & (j - 1));
            int hi = lo + j;
            float a = s[lo], b = s[hi];
            bool up = ((base + lo) & k) == 0;
            if ((a > b) == up) {
                s[lo] = b;
                s[hi] = a;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    data[base + lid] = s[lid];
    data[base + lid + 256] = s[lid + 256];
}
