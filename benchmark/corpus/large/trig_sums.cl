// Family trig_sums: direct (non-uniform) Fourier sums, as in image reconstruction and spectral codes.
// Each work-item owns one output point and loops over all K samples, accumulating a complex term with a
// sine and a cosine of the phase 2*pi*(k . x). Every lane of a wave reads the same sample at each step (a
// broadcast), so the time is the trigonometric throughput and the loop's latency, not DRAM bandwidth.
// The samples sit in __global memory as separate arrays or as an array of float4s, in __constant memory,
// or are staged tile by tile through __local memory; the sums use the precise functions, the native
// ones, or doubles.

#define TWO_PI 6.28318530717958647692f
#define TILE 256

// Samples as five separate arrays (structure of arrays), precise sin and cos.
// clperf: --global n --local 256 --arg n=65536 --arg K=2048 --arg x=n --arg y=n --arg z=n --arg kx=K --arg ky=K --arg kz=K --arg pr=K --arg pi=K --arg outr=n --arg outi=n
// clperf-sweep: n=16384..524288 K=256..4096 local=64..512
__kernel void ts_soa_precise(__global const float *x, __global const float *y, __global const float *z,
                             __global const float *kx, __global const float *ky, __global const float *kz,
                             __global const float *pr, __global const float *pi,
                             __global float *outr, __global float *outi, int K, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float px = x[i], py = y[i], pz = z[i];
    float re = 0.0f, im = 0.0f;
    for (int k = 0; k < K; ++k) {
        float a = TWO_PI * (kx[k] * px + ky[k] * py + kz[k] * pz);
        float c = cos(a), s = sin(a);
        re += pr[k] * c - pi[k] * s;
        im += pi[k] * c + pr[k] * s;
    }
    outr[i] = re;
    outi[i] = im;
}

// Samples as one float4 each (kx, ky, kz, weight) and a real weight: one 16-byte broadcast per step.
// clperf: --global n --local 256 --arg n=65536 --arg K=2048 --arg pts=n --arg samples=K --arg outr=n --arg outi=n
// clperf-sweep: n=16384..524288 K=256..4096 local=64..512
__kernel void ts_aos_precise(__global const float4 *pts, __global const float4 *samples,
                             __global float *outr, __global float *outi, int K, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pts[i];
    float re = 0.0f, im = 0.0f;
    for (int k = 0; k < K; ++k) {
        float4 s = samples[k];
        float a = TWO_PI * (s.x * p.x + s.y * p.y + s.z * p.z);
        re += s.w * cos(a);
        im += s.w * sin(a);
    }
    outr[i] = re;
    outi[i] = im;
}

// The same with sincos, the samples in __constant memory (at most 4096 float4s: 64 KiB).
// clperf: --global n --local 256 --arg n=65536 --arg K=2048 --arg pts=n --arg samples=K --arg outr=n --arg outi=n
// clperf-sweep: n=16384..524288 K=256..4096 local=64..512
__kernel void ts_constant_sincos(__global const float4 *pts, __constant float4 *samples,
                                 __global float *outr, __global float *outi, int K, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pts[i];
    float re = 0.0f, im = 0.0f;
    int kk = min(K, 4096);
    for (int k = 0; k < kk; ++k) {
        float4 s = samples[k];
        float c;
        float sn = sincos(TWO_PI * (s.x * p.x + s.y * p.y + s.z * p.z), &c);
        re += s.w * c;
        im += s.w * sn;
    }
    outr[i] = re;
    outi[i] = im;
}

// Native (hardware-approximate) sine and cosine, samples in __global memory.
// clperf: --global n --local 256 --arg n=65536 --arg K=2048 --arg pts=n --arg samples=K --arg outr=n --arg outi=n
// clperf-sweep: n=16384..1048576 K=256..8192 local=64..512
__kernel void ts_aos_native(__global const float4 *pts, __global const float4 *samples,
                            __global float *outr, __global float *outi, int K, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pts[i];
    float re = 0.0f, im = 0.0f;
    for (int k = 0; k < K; ++k) {
        float4 s = samples[k];
        float a = TWO_PI * (s.x * p.x + s.y * p.y + s.z * p.z);
        re += s.w * native_cos(a);
        im += s.w * native_sin(a);
    }
    outr[i] = re;
    outi[i] = im;
}

// Samples staged through __local memory TILE at a time (a barrier before and after each tile), then read
// by every lane from there.
// clperf: --global n --local 256 --arg n=65536 --arg K=2048 --arg pts=n --arg samples=K --arg outr=n --arg outi=n
// clperf-sweep: n=16384..524288 K=256..4096 local=64..256
__kernel void ts_local_tiles(__global const float4 *pts, __global const float4 *samples,
                             __global float *outr, __global float *outi, int K, int n)
{
    __local float4 tile[TILE];
    int i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    float4 p = i < n ? pts[i] : (float4)(0.0f);
    float re = 0.0f, im = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        int count = min(TILE, K - t);
        for (int j = lid; j < count; j += ls)
            tile[j] = samples[t + j];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < count; ++j) {
            float4 s = tile[j];
            float a = TWO_PI * (s.x * p.x + s.y * p.y + s.z * p.z);
            re += s.w * cos(a);
            im += s.w * sin(a);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n) {
        outr[i] = re;
        outi[i] = im;
    }
}

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// Double precision throughout (the H200 runs doubles at half the float rate, and their sin/cos in
// software sequences).
// clperf: --global n --local 256 --arg n=65536 --arg K=1024 --arg pts=n --arg samples=K --arg outr=n --arg outi=n
// clperf-sweep: n=16384..262144 K=256..2048 local=64..256
__kernel void ts_aos_double(__global const double4 *pts, __global const double4 *samples,
                            __global double *outr, __global double *outi, int K, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    double4 p = pts[i];
    double re = 0.0, im = 0.0;
    for (int k = 0; k < K; ++k) {
        double4 s = samples[k];
        double a = 6.28318530717958647692 * (s.x * p.x + s.y * p.y + s.z * p.z);
        re += s.w * cos(a);
        im += s.w * sin(a);
    }
    outr[i] = re;
    outi[i] = im;
}

// The samples' weights from their complex amplitudes (one pass over K samples): a short streaming kernel
// a host runs before the sums.
// clperf: --global K --local 256 --arg K=1<<20 --arg pr=K --arg pi=K --arg mag=K
// clperf-sweep: K=65536..67108864 local=64..1024
__kernel void ts_magnitude(__global const float *pr, __global const float *pi, __global float *mag, int K)
{
    int k = get_global_id(0);
    if (k < K)
        mag[k] = pr[k] * pr[k] + pi[k] * pi[k];
}
