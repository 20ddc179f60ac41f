// Family double_math: double-precision compute: exp/log/sqrt chains, a Horner polynomial, a double4
// update, and a Kahan-compensated dot product per work-group.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void dm_explog(__global double *out, __global const double *in, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        double x = in[i] + 1.0;
        out[i] = log(x) * exp(-x) + sqrt(x) / (1.0 + x * x);
    }
}

// clperf: --global n --local 128 --arg n=262144 --arg out=n --arg in=n
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void dm_pow_chain(__global double *out, __global const double *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    double x = in[i];
    for (int k = 0; k < 8; ++k)
        x = pow(x + 0.5, 0.75) + sin(x);
    out[i] = x;
}

// clperf: --global n --local 256 --arg n=131072 --arg out=n --arg a=n --arg b=n
// clperf-sweep: n=128..524288 local=16..1024
__kernel void dm_double4_axpby(__global double4 *out, __global const double4 *a, __global const double4 *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = 1.5 * a[i] - 0.25 * b[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg a=n --arg b=n --arg partial=n/16
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void dm_kahan_dot(__global const double *a, __global const double *b, __global double *partial, int n)
{
    __local double s[MAX_WG];
    int lid = get_local_id(0);
    double sum = 0.0, c = 0.0;
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        double y = a[i] * b[i] - c;
        double t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    s[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = get_local_size(0) / 2; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}
