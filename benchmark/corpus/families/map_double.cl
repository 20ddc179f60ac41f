// Family map_double: element-wise double-precision maps (add, triad, polynomial, sqrt).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// clperf: --global n --local 256 --arg n=1048576 --arg c=n --arg a=n --arg b=n
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void mapd_add(__global double *c, __global const double *a, __global const double *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg a=n --arg b=n --arg c=n --arg q=3.0
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void mapd_triad(__global double *a, __global const double *b, __global const double *c, double q, int n)
{
    int i = get_global_id(0);
    if (i < n)
        a[i] = fma(q, c[i], b[i]);
}

// clperf: --global n --local 128 --arg n=1048576 --arg y=n --arg x=n
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void mapd_poly(__global double *y, __global const double *x, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    double v = x[i], r = 1.0;
    for (int k = 0; k < 16; ++k)
        r = r * v + (double)(k + 1) * 0.125;
    y[i] = r;
}

// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg x=n
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void mapd_sqrt(__global double *y, __global const double *x, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = sqrt(x[i] + 1.0) / (1.0 + x[i] * x[i]);
}
