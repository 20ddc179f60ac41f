// Family matmul_transposed: C = A * B^T, where both operands are read along rows: naive, float4
// (vload4 over k), and a 16x16 __local-tiled version.

// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..64
__kernel void mmT_naive(__global const float *A, __global const float *B, __global float *C, int n)
{
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[row * n + k] * B[col * n + k];
    C[row * n + col] = acc;
}

// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..64
__kernel void mmT_float4(__global const float *A, __global const float *B, __global float *C, int n)
{
    int col = get_global_id(0), row = get_global_id(1);
    float4 acc = (float4)(0.0f);
    for (int k = 0; k < n / 4; ++k)
        acc += vload4(k, A + row * n) * vload4(k, B + col * n);
    C[row * n + col] = acc.x + acc.y + acc.z + acc.w;
}

// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void mmT_tile16(__global const float *A, __global const float *B, __global float *C, int n)
{
    __local float As[16][17];
    __local float Bs[16][17];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    int bcol = get_group_id(0) * 16 + ty;
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[bcol * n + t + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; ++k)
            acc += As[ty][k] * Bs[tx][k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}
