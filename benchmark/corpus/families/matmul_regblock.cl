// Family matmul_regblock: register blocking. 32x32 __local tiles where each work-item computes 4 outputs
// of a column (32x8 work-groups), a 4x4 block per work-item straight from global memory with float4 loads
// (no __local), and a 2x2 block per work-item.

#define TS 32
#define WPT 4
#define RTS 8

// clperf: --global n,n/4 --local 32,8 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void mmr_tile32_wpt4(__global const float *A, __global const float *B, __global float *C, int n)
{
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_group_id(0) * TS + tx;
    int row0 = get_group_id(1) * TS + ty;
    float acc[WPT];
    for (int w = 0; w < WPT; ++w)
        acc[w] = 0.0f;
    for (int t = 0; t < n; t += TS) {
        for (int w = 0; w < WPT; ++w) {
            As[ty + w * RTS][tx] = A[(row0 + w * RTS) * n + t + tx];
            Bs[ty + w * RTS][tx] = B[(t + ty + w * RTS) * n + col];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; ++k) {
            float b = Bs[k][tx];
            for (int w = 0; w < WPT; ++w)
                acc[w] += As[ty + w * RTS][k] * b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int w = 0; w < WPT; ++w)
        C[(row0 + w * RTS) * n + col] = acc[w];
}

// clperf: --global n/4,n/4 --local 16,4 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..64
__kernel void mmr_block4x4_global(__global const float *A, __global const float *B, __global float *C, int n)
{
    int bx = get_global_id(0), by = get_global_id(1);
    int r = 4 * by;
    float4 c0 = (float4)(0.0f), c1 = c0, c2 = c0, c3 = c0;
    for (int k = 0; k < n; ++k) {
        float4 b = vload4(bx, B + k * n);
        c0 += A[(r + 0) * n + k] * b;
        c1 += A[(r + 1) * n + k] * b;
        c2 += A[(r + 2) * n + k] * b;
        c3 += A[(r + 3) * n + k] * b;
    }
    vstore4(c0, bx, C + (r + 0) * n);
    vstore4(c1, bx, C + (r + 1) * n);
    vstore4(c2, bx, C + (r + 2) * n);
    vstore4(c3, bx, C + (r + 3) * n);
}

// clperf: --global n/2,n/2 --local 16,8 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..128
__kernel void mmr_block2x2(__global const float *A, __global const float *B, __global float *C, int n)
{
    int c = 2 * get_global_id(0), r = 2 * get_global_id(1);
    float a00 = 0.0f, a01 = 0.0f, a10 = 0.0f, a11 = 0.0f;
    for (int k = 0; k < n; ++k) {
        float x0 = A[r * n + k], x1 = A[(r + 1) * n + k];
        float y0 = B[k * n + c], y1 = B[k * n + c + 1];
        a00 += x0 * y0; a01 += x0 * y1;
        a10 += x1 * y0; a11 += x1 * y1;
    }
    C[r * n + c] = a00; C[r * n + c + 1] = a01;
    C[(r + 1) * n + c] = a10; C[(r + 1) * n + c + 1] = a11;
}
