// Family fft: complex FFT pieces (float2 = re, im). A radix-2 Stockham stage in global memory (the host
// launches log2(n) stages with p = 1, 2, 4, ...), a radix-4 stage, and a 256-point FFT computed entirely
// in __local memory by a 128-item work-group (radix-2 butterflies with barriers).

inline float2 cmul(float2 a, float2 b)
{
    return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// clperf: --global n/2 --local 128 --arg n=1048576 --arg out=n --arg in=n --arg p=64
// clperf-sweep: n=1024..2097152 p=1..512 local=16..1024
__kernel void fft_radix2_stage(__global float2 *out, __global const float2 *in, int p, int n)
{
    int i = get_global_id(0);
    int hn = n / 2;
    if (i >= hn)
        return;
    int k = i & (p - 1);
    float2 a = in[i], b = in[i + hn];
    float ang = -M_PI_F * (float)k / (float)p;
    float2 w = (float2)(cos(ang), sin(ang));
    b = cmul(b, w);
    int j = (i - k) * 2 + k;
    out[j] = a + b;
    out[j + p] = a - b;
}

// clperf: --global n/4 --local 64 --arg n=1048576 --arg out=n --arg in=n --arg p=16
// clperf-sweep: n=1024..2097152 p=1..256 local=16..256
__kernel void fft_radix4_stage(__global float2 *out, __global const float2 *in, int p, int n)
{
    int i = get_global_id(0);
    int q = n / 4;
    if (i >= q)
        return;
    int k = i % p;
    float ang = -2.0f * M_PI_F * (float)k / (float)(4 * p);
    float2 x0 = in[i], x1 = cmul(in[i + q], (float2)(cos(ang), sin(ang)));
    float2 x2 = cmul(in[i + 2 * q], (float2)(cos(2 * ang), sin(2 * ang)));
    float2 x3 = cmul(in[i + 3 * q], (float2)(cos(3 * ang), sin(3 * ang)));
    float2 t0 = x0 + x2, t1 = x0 - x2, t2 = x1 + x3, t3 = x1 - x3;
    float2 t3j = (float2)(t3.y, -t3.x);
    int j = (i - k) * 4 + k;
    out[j] = t0 + t2;
    out[j + p] = t1 + t3j;
    out[j + 2 * p] = t0 - t2;
    out[j + 3 * p] = t1 - t3j;
}

// clperf: --global n/2 --local 128 --arg n=1048576 --arg data=n
// clperf-sweep: n=1024..2097152
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void fft_local256(__global float2 *data, int n)
{
    __local float2 s[256];
    int lid = get_local_id(0);
    int base = get_group_id(0) * 256;
    // bit-reversed load
    for (int e = lid; e < 256; e += 128) {
        uint r = e;
        r = ((r >> 1) & 0x55u) | ((r & 0x55u) << 1);
        r = ((r >> 2) & 0x33u) | ((r & 0x33u) << 2);
        r = ((r >> 4) & 0x0fu) | ((r & 0x0fu) << 4);
        s[r] = data[base + e];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int len = 2; len <= 256; len <<= 1) {
        int halfl = len >> 1;
        int k = lid & (halfl - 1);
        int j = (lid / halfl) * len + k;
        float ang = -2.0f * M_PI_F * (float)k / (float)len;
        float2 w = (float2)(cos(ang), sin(ang));
        float2 a = s[j], b = cmul(s[j + halfl], w);
        barrier(CLK_LOCAL_MEM_FENCE);
        s[j] = a + b;
        s[j + halfl] = a - b;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int e = lid; e < 256; e += 128)
        data[base + e] = s[e];
}

// Direct DFT of 64-point blocks (O(N^2) per block): a compute-heavy reference.
// clperf: --global n --local 64 --arg n=65536 --arg out=n --arg in=n
// clperf-sweep: n=1024..524288
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void fft_dft64(__global float2 *out, __global const float2 *in, int n)
{
    __local float2 s[64];
    int lid = get_local_id(0), base = get_group_id(0) * 64;
    s[lid] = in[base + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    float2 acc = (float2)(0.0f);
    for (int t = 0; t < 64; ++t) {
        float ang = -2.0f * M_PI_F * (float)((lid * t) & 63) / 64.0f;
        acc += cmul(s[t], (float2)(cos(ang), sin(ang)));
    }
    out[base + lid] = acc;
}
