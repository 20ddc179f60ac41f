// Family stencil1d: 1-D stencils. 3-point with a boundary test, radius-8 on a padded input, the same
// radius-8 stencil through a __local tile with halo (any power-of-two work-group size), and a 5-point
// stencil that clamps its indices instead of padding.

#define R 8
#define MAX_WG 1024

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void st1_3pt(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i > 0 && i < n - 1)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}

// The input is padded by R on both sides: out[i] reads in[i .. i + 2R].
// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+16
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void st1_r8_global(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = -R; k <= R; ++k)
        acc += in[i + R + k] * (1.0f / (2 * R + 1));
    out[i] = acc;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+16
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void st1_r8_local(__global float *out, __global const float *in, int n)
{
    __local float tile[MAX_WG + 2 * R];
    int lid = get_local_id(0), ls = get_local_size(0), i = get_global_id(0);
    tile[lid + R] = in[i + R];
    if (lid < R) {
        tile[lid] = in[i];
        tile[lid + ls + R] = in[min(i + ls + R, n + 2 * R - 1)];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc = 0.0f;
    for (int k = -R; k <= R; ++k)
        acc += tile[lid + R + k] * (1.0f / (2 * R + 1));
    if (i < n)
        out[i] = acc;
}

// clperf: --global n --local 128 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void st1_5pt_clamped(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float a = in[max(i - 2, 0)], b = in[max(i - 1, 0)], c = in[i];
    float d = in[min(i + 1, n - 1)], e = in[min(i + 2, n - 1)];
    out[i] = (-a + 4.0f * b + 10.0f * c + 4.0f * d - e) * (1.0f / 16.0f);
}

// Variable radius given at run time (a loop bound from an argument).
// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n+2*r --arg r=4
// clperf-sweep: n=1024..2097152 r=1..32 local=16..1024
__kernel void st1_radius_arg(__global float *out, __global const float *in, int r, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k <= 2 * r; ++k)
        acc += in[i + k];
    out[i] = acc / (2 * r + 1);
}
