// Family sequence_walk: counting the occurrences of many short patterns (episodes) in one long event
// sequence, as in temporal data mining and motif search. Each work-item owns one pattern of L symbols and
// walks the whole sequence with a small state machine: every lane of a wave reads the same event at each
// step (a broadcast) and branches on its own pattern, so the time is the walk's latency and divergence.
// Variants walk the symbols alone, the symbols and their time stamps (two buffers walked in step, with a
// window constraint), bytes instead of ints, or tiles of the sequence staged through __local memory.

#define MAX_L 8
#define TILE 1024

// One int symbol per event; a match advances the state, a completed pattern counts and restarts.
// clperf: --global n --local 128 --arg n=4096 --arg S=1<<18 --arg L=4 --arg seq=S --arg pats=8*n --arg counts=n --fill seq=range:0:16 --fill pats=range:0:16
// clperf-sweep: n=1024..16384 S=65536..1048576 L=2..8 local=32..256
__kernel void sw_symbols(__global const int *seq, __global const int *pats, __global uint *counts,
                         int S, int L, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int len = clamp(L, 1, MAX_L);
    int p[MAX_L];
    for (int j = 0; j < MAX_L; ++j)
        p[j] = pats[i * MAX_L + j];
    int state = 0;
    uint found = 0;
    for (int t = 0; t < S; ++t) {
        int e = seq[t];
        if (e == p[state]) {
            ++state;
            if (state == len) {
                ++found;
                state = 0;
            }
        }
    }
    counts[i] = found;
}

// Symbols and time stamps walked together: a partial match older than the window is dropped.
// clperf: --global n --local 128 --arg n=4096 --arg S=1<<18 --arg L=4 --arg window=64 --arg seq=S --arg times=S --arg pats=8*n --arg counts=n --fill seq=range:0:16 --fill times=sorted:0:S --fill pats=range:0:16
// clperf-sweep: n=1024..16384 S=65536..1048576 L=2..8 window=8..512 local=32..256
__kernel void sw_timed(__global const int *seq, __global const float *times, __global const int *pats,
                       __global uint *counts, int S, int L, int window, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int len = clamp(L, 1, MAX_L);
    int p[MAX_L];
    for (int j = 0; j < MAX_L; ++j)
        p[j] = pats[i * MAX_L + j];
    int state = 0;
    float start = 0.0f;
    uint found = 0;
    for (int t = 0; t < S; ++t) {
        int e = seq[t];
        float when = times[t];
        if (state > 0 && when - start > (float)window)
            state = 0;
        if (e == p[state]) {
            if (state == 0)
                start = when;
            ++state;
            if (state == len) {
                ++found;
                state = 0;
            }
        }
    }
    counts[i] = found;
}

// Byte symbols (a quarter of the bytes per event), the pattern packed in registers.
// clperf: --global n --local 128 --arg n=4096 --arg S=1<<20 --arg L=4 --arg seq=S --arg pats=8*n --arg counts=n --fill seq=range:0:26 --fill pats=range:0:26
// clperf-sweep: n=1024..16384 S=65536..4194304 L=2..8 local=32..256
__kernel void sw_bytes(__global const uchar *seq, __global const uchar *pats, __global uint *counts,
                       int S, int L, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int len = clamp(L, 1, MAX_L);
    uchar p[MAX_L];
    for (int j = 0; j < MAX_L; ++j)
        p[j] = pats[i * MAX_L + j];
    int state = 0;
    uint found = 0;
    for (int t = 0; t < S; ++t) {
        if (seq[t] == p[state]) {
            ++state;
            if (state == len) {
                ++found;
                state = 0;
            }
        }
    }
    counts[i] = found;
}

// The sequence staged through __local memory TILE events at a time (barriers around each tile); the
// patterns are read from there by every lane.
// clperf: --global n --local 128 --arg n=4096 --arg S=1<<18 --arg L=4 --arg seq=S --arg pats=8*n --arg counts=n --fill seq=range:0:16 --fill pats=range:0:16
// clperf-sweep: n=1024..16384 S=65536..1048576 L=2..8 local=64..256
__kernel void sw_local_tiles(__global const int *seq, __global const int *pats, __global uint *counts,
                             int S, int L, int n)
{
    __local int tile[TILE];
    int i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    int len = clamp(L, 1, MAX_L);
    int p[MAX_L];
    for (int j = 0; j < MAX_L; ++j)
        p[j] = i < n ? pats[i * MAX_L + j] : -1;
    int state = 0;
    uint found = 0;
    for (int t0 = 0; t0 < S; t0 += TILE) {
        int count = min(TILE, S - t0);
        for (int j = lid; j < count; j += ls)
            tile[j] = seq[t0 + j];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < count; ++j) {
            if (tile[j] == p[state]) {
                ++state;
                if (state == len) {
                    ++found;
                    state = 0;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n)
        counts[i] = found;
}

// Each work-item scans its own slice of the sequence for one shared pattern (neighbouring lanes read
// slices S/n apart: uncoalesced), counting matches with a local then a global atomic.
// clperf: --global n --local 256 --arg n=65536 --arg S=1<<22 --arg L=4 --arg seq=S --arg pat=8 --arg total=1 --fill seq=range:0:8 --fill pat=range:0:8 --fill total=zeros
// clperf-sweep: n=4096..262144 S=1048576..67108864 L=2..8 local=64..512
__kernel void sw_slices(__global const int *seq, __global const int *pat, __global uint *total,
                        int S, int L, int n)
{
    __local uint group_total;
    int i = get_global_id(0);
    if (get_local_id(0) == 0)
        group_total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int len = clamp(L, 1, MAX_L);
    int per = S / max(n, 1);
    uint found = 0;
    if (i < n) {
        int state = 0;
        for (int t = i * per; t < (i + 1) * per; ++t) {
            if (seq[t] == pat[state]) {
                ++state;
                if (state == len) {
                    ++found;
                    state = 0;
                }
            }
        }
    }
    if (found)
        atomic_add(&group_total, found);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atomic_add(total, group_total);
}
