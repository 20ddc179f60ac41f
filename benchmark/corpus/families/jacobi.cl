// Family jacobi: Jacobi iterations for the 2-D Poisson equation on an n x n grid (interior points
// updated from the right-hand side and four neighbours), double precision variant, a red-black
// Gauss-Seidel half-sweep, and a residual-norm kernel with a __local reduction.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define MAX_WG 1024

// clperf: --global n,n --local 16,16 --arg n=1024 --arg unew=n*n --arg u=n*n --arg f=n*n --arg h2=0.0001
// clperf-sweep: n=32..2048 local=16..64
__kernel void jac_step(__global float *unew, __global const float *u, __global const float *f, float h2, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1)
        return;
    int c = i * n + j;
    unew[c] = 0.25f * (u[c - 1] + u[c + 1] + u[c - n] + u[c + n] - h2 * f[c]);
}

// clperf: --global n,n --local 16,16 --arg n=512 --arg unew=n*n --arg u=n*n --arg f=n*n --arg h2=0.0001
// clperf-sweep: n=32..1024 local=16..64
__kernel void jac_step_double(__global double *unew, __global const double *u, __global const double *f, double h2,
                              int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1)
        return;
    int c = i * n + j;
    unew[c] = 0.25 * (u[c - 1] + u[c + 1] + u[c - n] + u[c + n] - h2 * f[c]);
}

// In-place red-black half sweep: half of the items do nothing (checkerboard).
// clperf: --global n,n --local 16,16 --arg n=1024 --arg u=n*n --arg f=n*n --arg h2=0.0001 --arg color=0
// clperf-sweep: n=32..2048 local=16..64
__kernel void jac_redblack(__global float *u, __global const float *f, float h2, int color, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1 || ((i + j) & 1) != (color & 1))
        return;
    int c = i * n + j;
    u[c] = 0.25f * (u[c - 1] + u[c + 1] + u[c - n] + u[c + n] - h2 * f[c]);
}

// clperf: --global n*n --local 256 --arg n=1024 --arg u=n*n --arg unew=n*n --arg partial=n*n/16
// clperf-sweep: n=32..2048 local=16..1024
__kernel void jac_diffnorm(__global const float *u, __global const float *unew, __global float *partial, int n)
{
    __local float s[MAX_WG];
    int lid = get_local_id(0), c = get_global_id(0);
    float d = unew[c] - u[c];
    s[lid] = d * d;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = get_local_size(0) / 2; k > 0; k >>= 1) {
        if (lid < k)
            s[lid] += s[lid + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = s[0];
}
