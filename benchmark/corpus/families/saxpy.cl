// Family saxpy: y = a*x + y in several styles (scalar, float4, grid-stride, two elements per work-item
// split far apart, double precision).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg x=n --arg a=2.0
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void saxpy_basic(__global float *y, __global const float *x, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// clperf: --global n --local 256 --arg n=262144 --arg y=n --arg x=n --arg a=2.0
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void saxpy_float4(__global float4 *y, __global const float4 *x, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// clperf: --global 8192 --local 128 --arg n=1048576 --arg y=n --arg x=n --arg a=2.0
// clperf-sweep: n=8192..4194304 local=16..1024
__kernel void saxpy_gridstride(__global float *y, __global const float *x, float a, int n)
{
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        y[i] = mad(a, x[i], y[i]);
}

// Each work-item updates elements i and i + n/2 (two coalesced streams per work-item).
// clperf: --global n/2 --local 256 --arg n=1048576 --arg y=n --arg x=n --arg a=2.0
// clperf-sweep: n=2048..4194304 local=16..1024
__kernel void saxpy_two_per_item(__global float *y, __global const float *x, float a, int n)
{
    int i = get_global_id(0);
    int h = n / 2;
    if (i < h) {
        y[i] = a * x[i] + y[i];
        y[i + h] = a * x[i + h] + y[i + h];
    }
}

// Each work-item updates 4 adjacent elements: a stride-4 access across work-items.
// clperf: --global n/4 --local 64 --arg n=1048576 --arg y=n --arg x=n --arg a=2.0
// clperf-sweep: n=4096..4194304 local=16..1024
__kernel void saxpy_chunked(__global float *y, __global const float *x, float a, int n)
{
    int base = get_global_id(0) * 4;
    for (int k = 0; k < 4; ++k)
        if (base + k < n)
            y[base + k] = a * x[base + k] + y[base + k];
}

// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg x=n --arg a=2.0
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void daxpy_basic(__global double *y, __global const double *x, double a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
