// Family transpose: out = in^T for n x n matrices. Naive with coalesced reads (strided writes), naive
// with coalesced writes (strided reads), a 16x16 __local tile without and with padding against bank
// conflicts, and a 32x32 tile moved by 32x8 work-groups (four rows per work-item).

// clperf: --global n,n --local 16,16 --arg n=1024 --arg out=n*n --arg in=n*n
// clperf-sweep: n=64..2048 local=16..64
__kernel void tr_naive_read_coalesced(__global float *out, __global const float *in, int n)
{
    int x = get_global_id(0), y = get_global_id(1);
    out[x * n + y] = in[y * n + x];
}

// clperf: --global n,n --local 16,16 --arg n=1024 --arg out=n*n --arg in=n*n
// clperf-sweep: n=64..2048 local=16..64
__kernel void tr_naive_write_coalesced(__global float *out, __global const float *in, int n)
{
    int x = get_global_id(0), y = get_global_id(1);
    out[y * n + x] = in[x * n + y];
}

// clperf: --global n,n --local 16,16 --arg n=1024 --arg out=n*n --arg in=n*n
// clperf-sweep: n=64..2048
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void tr_local16(__global float *out, __global const float *in, int n)
{
    __local float t[16][16];
    int lx = get_local_id(0), ly = get_local_id(1);
    int gx = get_group_id(0) * 16, gy = get_group_id(1) * 16;
    t[ly][lx] = in[(gy + ly) * n + gx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(gx + ly) * n + gy + lx] = t[lx][ly];
}

// clperf: --global n,n --local 16,16 --arg n=1024 --arg out=n*n --arg in=n*n
// clperf-sweep: n=64..2048
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void tr_local16_padded(__global float *out, __global const float *in, int n)
{
    __local float t[16][17];
    int lx = get_local_id(0), ly = get_local_id(1);
    int gx = get_group_id(0) * 16, gy = get_group_id(1) * 16;
    t[ly][lx] = in[(gy + ly) * n + gx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(gx + ly) * n + gy + lx] = t[lx][ly];
}

// clperf: --global n,n/4 --local 32,8 --arg n=1024 --arg out=n*n --arg in=n*n
// clperf-sweep: n=64..2048
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void tr_local32x8(__global float *out, __global const float *in, int n)
{
    __local float t[32][33];
    int lx = get_local_id(0), ly = get_local_id(1);
    int gx = get_group_id(0) * 32, gy = get_group_id(1) * 32;
    for (int j = 0; j < 32; j += 8)
        t[ly + j][lx] = in[(gy + ly + j) * n + gx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < 32; j += 8)
        out[(gx + ly + j) * n + gy + lx] = t[lx][ly + j];
}

// Rectangular transpose with a 1-D launch (rows x cols -> cols x rows).
// clperf: --global rows*cols --local 256 --arg rows=512 --arg cols=1024 --arg out=rows*cols --arg in=rows*cols
// clperf-sweep: rows=32..2048 cols=32..2048 local=16..1024
__kernel void tr_rect_flat(__global float *out, __global const float *in, int rows, int cols)
{
    int i = get_global_id(0);
    int r = i / cols, c = i % cols;
    out[c * rows + r] = in[i];
}
