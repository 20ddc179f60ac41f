// Family int_hash: integer-heavy hashing: FNV-1a over 16 bytes per item, a murmur-style finaliser,
// xorshift random number streams, and a CRC-like bitwise loop.

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void ih_fnv1a(__global uint *out, __global const uint4 *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint4 v = in[i];
    uint words[4] = {v.x, v.y, v.z, v.w};
    uint h = 2166136261u;
    for (int w = 0; w < 4; ++w)
        for (int b = 0; b < 4; ++b) {
            h ^= (words[w] >> (8 * b)) & 0xffu;
            h *= 16777619u;
        }
    out[i] = h;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void ih_murmur_fmix(__global uint *out, __global const uint *in, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        uint h = in[i] ^ (uint)i;
        h ^= h >> 16; h *= 0x85ebca6bu;
        h ^= h >> 13; h *= 0xc2b2ae35u;
        h ^= h >> 16;
        out[i] = h;
    }
}

// clperf: --global n --local 128 --arg n=262144 --arg out=n --arg steps=64
// clperf-sweep: n=1024..2097152 steps=1..256 local=16..1024
__kernel void ih_xorshift(__global uint *out, int steps, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint x = (uint)i * 2654435761u + 1u;
    uint acc = 0;
    for (int k = 0; k < steps; ++k) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        acc += x >> 24;
    }
    out[i] = acc;
}

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void ih_crc32_word(__global uint *out, __global const uint *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint crc = 0xffffffffu ^ in[i];
    for (int b = 0; b < 32; ++b)
        crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    out[i] = ~crc;
}

// 64-bit integer mixing (splitmix64).
// clperf: --global n --local 256 --arg n=524288 --arg out=n
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void ih_splitmix64(__global ulong *out, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        ulong z = (ulong)i * 0x9e3779b97f4a7c15ul;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ul;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebul;
        out[i] = z ^ (z >> 31);
    }
}
