// Family matmul_tiled: C = A * B with square __local tiles (16x16 and 8x8, fixed work-group sizes), and
// a 16x16 tiled version with an unrolled inner product.

// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void mmt_tile16(__global const float *A, __global const float *B, __global float *C, int n)
{
    __local float As[16][16];
    __local float Bs[16][16];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; ++k)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}

// clperf: --global n,n --local 8,8 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024
__kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void mmt_tile8(__global const float *A, __global const float *B, __global float *C, int n)
{
    __local float As[8][8];
    __local float Bs[8][8];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += 8) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 8; ++k)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}

// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void mmt_tile16_unrolled(__global const float *A, __global const float *B, __global float *C, int n)
{
    __local float As[16][17];
    __local float Bs[16][17];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int k = 0; k < 16; ++k)
            acc = mad(As[ty][k], Bs[k][tx], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}

// Tiled with the tile size given as a __local buffer from the host (sized for 16x16 tiles).
// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n --arg As=256 --arg Bs=256
// clperf-sweep: n=64..1024
__kernel void mmt_tile_localargs(__global const float *A, __global const float *B, __global float *C,
                                 __local float *As, __local float *Bs, int n)
{
    int ts = get_local_size(0);
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += ts) {
        As[ty * ts + tx] = A[row * n + t + tx];
        Bs[ty * ts + tx] = B[(t + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < ts; ++k)
            acc += As[ty * ts + k] * Bs[k * ts + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}
