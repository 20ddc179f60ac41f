// Naive matrix multiply with a compile-time inner dimension: rows of A and columns of B are reused
// by every work-item of a work-group row / column.
#define K 32
// clperf: --global 48,40 --local 16,8 --arg M=37 --arg N=45 --arg A=1184 --arg B=1440 --arg C=1665
__kernel void matmul(__global const float* A, __global const float* B, __global float* C, int M, int N) {
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            acc += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = acc;
    }
}
