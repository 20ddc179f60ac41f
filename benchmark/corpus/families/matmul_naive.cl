// Family matmul_naive: C = A * B for n x n row-major matrices, one output per work-item, with the three
// usual index mappings: column along dimension 0 (B reads coalesced), row along dimension 0 (uncoalesced),
// and a flattened 1-D launch; plus an ikj variant where each work-item owns a row of C.

// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..64
__kernel void mmn_colmajor_launch(__global const float *A, __global const float *B, __global float *C, int n)
{
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}

// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..64
__kernel void mmn_rowmajor_launch(__global const float *A, __global const float *B, __global float *C, int n)
{
    int row = get_global_id(0), col = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}

// clperf: --global n*n --local 256 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..1024
__kernel void mmn_flat(__global const float *A, __global const float *B, __global float *C, int n)
{
    int i = get_global_id(0);
    int row = i / n, col = i % n;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc = fma(A[row * n + k], B[k * n + col], acc);
    C[i] = acc;
}

// One row of C per work-item, accumulated in place (ikj order): many stores to global memory.
// clperf: --global n --local 64 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..512 local=16..512
__kernel void mmn_row_ikj(__global const float *A, __global const float *B, __global float *C, int n)
{
    int row = get_global_id(0);
    for (int j = 0; j < n; ++j)
        C[row * n + j] = 0.0f;
    for (int k = 0; k < n; ++k) {
        float a = A[row * n + k];
        for (int j = 0; j < n; ++j)
            C[row * n + j] += a * B[k * n + j];
    }
}

// Double precision, column along dimension 0.
// clperf: --global n,n --local 16,16 --arg n=256 --arg A=n*n --arg B=n*n --arg C=n*n
// clperf-sweep: n=64..1024 local=16..64
__kernel void mmn_double(__global const double *A, __global const double *B, __global double *C, int n)
{
    int col = get_global_id(0), row = get_global_id(1);
    double acc = 0.0;
    for (int k = 0; k < n; ++k)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}
