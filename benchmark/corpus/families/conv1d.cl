// Family conv1d: 1-D convolution of a padded signal with filters of several sizes: compile-time filter
// sizes (3, 7, 15, 31), a run-time filter length, the filter in __constant memory, and a __local-tiled
// variant that stages the signal window.

#define MAX_WG 1024
#define MAX_TAPS 64

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+2 --arg f=3
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void conv1_k3(__global float *out, __global const float *in, __global const float *f, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = f[0] * in[i] + f[1] * in[i + 1] + f[2] * in[i + 2];
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+6 --arg f=7
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void conv1_k7_unrolled(__global float *out, __global const float *in, __constant float *f, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 7; ++k)
        acc += f[k] * in[i + k];
    out[i] = acc;
}

// clperf: --global n --local 128 --arg n=1048576 --arg out=n --arg in=n+14 --arg f=15
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void conv1_k15_constant(__global float *out, __global const float *in, __constant float *f, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < 15; ++k)
        acc += f[k] * in[i + k];
    out[i] = acc;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+30 --arg f=31
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void conv1_k31_global(__global float *out, __global const float *in, __global const float *f, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < 31; ++k)
        acc += f[k] * in[i + k];
    out[i] = acc;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+taps --arg f=taps --arg taps=9
// clperf-sweep: n=1024..2097152 taps=2..64 local=16..1024
__kernel void conv1_taps_arg(__global float *out, __global const float *in, __constant float *f, int taps, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < taps; ++k)
        acc += f[k] * in[i + k];
    out[i] = acc;
}

// The window of in[] a work-group needs (its items plus taps - 1) staged in __local memory.
// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+taps --arg f=taps --arg taps=17
// clperf-sweep: n=1024..2097152 taps=2..64 local=16..1024
__kernel void conv1_local(__global float *out, __global const float *in, __constant float *f, int taps, int n)
{
    __local float win[MAX_WG + MAX_TAPS];
    int lid = get_local_id(0), ls = get_local_size(0), i = get_global_id(0);
    int base = get_group_id(0) * ls;
    for (int j = lid; j < ls + taps - 1; j += ls)
        win[j] = in[base + j];
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc = 0.0f;
    for (int k = 0; k < taps; ++k)
        acc += f[k] * win[lid + k];
    if (i < n)
        out[i] = acc;
}
