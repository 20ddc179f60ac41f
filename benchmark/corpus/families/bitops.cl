// Family bitops: bit manipulation: popcount, count-leading-zeros, bit reversal, rotates, a bit-matrix
// population count over rows (a bitset intersection), and bit packing of a predicate.

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void bo_popcount(__global uint *out, __global const uint *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = popcount(in[i]) + clz(in[i] | 1u);
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void bo_reverse(__global uint *out, __global const uint *in, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        uint x = in[i];
        x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
        x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
        x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
        x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
        out[i] = (x >> 16) | (x << 16);
    }
}

// clperf: --global n --local 128 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void bo_rotate_mix(__global uint *out, __global const uint *in, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        uint x = in[i];
        for (int k = 1; k < 8; ++k)
            x ^= rotate(x, (uint)(k * 5));
        out[i] = x;
    }
}

// Pairwise intersections of bitset rows: popcount(a_row & b_row) over words.
// clperf: --global rows --local 64 --arg rows=16384 --arg words=32 --arg a=rows*words --arg b=words --arg out=rows
// clperf-sweep: rows=1024..131072 words=4..32 local=16..1024
__kernel void bo_bitset_and(__global const uint *a, __global const uint *b, __global int *out, int words, int rows)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    int c = 0;
    for (int w = 0; w < words; ++w)
        c += popcount(a[r * words + w] & b[w]);
    out[r] = c;
}

// Pack a predicate over 32 floats into one word per work-item.
// clperf: --global n/32 --local 64 --arg n=1048576 --arg bits=n/32 --arg in=n --arg cut=0.5
// clperf-sweep: n=32768..4194304 local=16..1024
__kernel void bo_pack_predicate(__global uint *bits, __global const float *in, float cut, int n)
{
    int w = get_global_id(0);
    uint word = 0;
    for (int b = 0; b < 32; ++b)
        word |= (uint)(in[w * 32 + b] > cut) << b;
    bits[w] = word;
}
