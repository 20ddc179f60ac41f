// Family matvec: y = A x for an n x n matrix. One row per work-item on a row-major matrix (uncoalesced),
// the same on a column-major matrix (coalesced), one row per work-group with a __local reduction, and x
// staged through __local memory in chunks.

#define MAX_WG 1024

// clperf: --global n --local 64 --arg n=1024 --arg A=n*n --arg x=n --arg y=n
// clperf-sweep: n=256..2048 local=16..256
__kernel void mv_row_per_item(__global const float *A, __global const float *x, __global float *y, int n)
{
    int r = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[r * n + k] * x[k];
    y[r] = acc;
}

// clperf: --global n --local 64 --arg n=1024 --arg A=n*n --arg x=n --arg y=n
// clperf-sweep: n=256..2048 local=16..256
__kernel void mv_colmajor(__global const float *A, __global const float *x, __global float *y, int n)
{
    int r = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[k * n + r] * x[k];
    y[r] = acc;
}

// clperf: --global n*64 --local 64 --arg n=1024 --arg A=n*n --arg x=n --arg y=n
// clperf-sweep: n=256..2048
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void mv_row_per_group(__global const float *A, __global const float *x, __global float *y, int n)
{
    __local float s[64];
    int r = get_group_id(0), lid = get_local_id(0);
    float acc = 0.0f;
    for (int k = lid; k < n; k += 64)
        acc += A[r * n + k] * x[k];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 32; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        y[r] = s[0];
}

// clperf: --global n --local 128 --arg n=1024 --arg A=n*n --arg x=n --arg y=n
// clperf-sweep: n=256..2048 local=16..256
__kernel void mv_local_x(__global const float *A, __global const float *x, __global float *y, int n)
{
    __local float xs[MAX_WG];
    int r = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    float acc = 0.0f;
    for (int base = 0; base < n; base += ls) {
        xs[lid] = (base + lid < n) ? x[base + lid] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        int m = min(ls, n - base);
        for (int k = 0; k < m; ++k)
            acc += A[(base + k) * n + r] * xs[k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    y[r] = acc;
}
