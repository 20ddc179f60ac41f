// Family dense_long: dense linear algebra written the plain way, one work-item per output and a long
// inner loop over a matrix of up to 1 GiB: the row-per-item matrix-vector product (each work-item walks a
// row: neighbouring items are a row apart), the column walk (neighbours read neighbouring columns), and
// square and rectangular matrix products with k loops of 512-8192.

// clperf: --global n --local 128 --arg n=4096 --arg A=n*n --arg x=n --arg y=n
// clperf-sweep: n=2048..16384 local=32..512
__kernel void dl_matvec_rows(__global const float *A, __global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int j = 0; j < n; ++j)
        acc = fma(A[i * n + j], x[j], acc);
    y[i] = acc;
}

// clperf: --global n --local 128 --arg n=4096 --arg A=n*n --arg x=n --arg y=n
// clperf-sweep: n=2048..16384 local=32..512
__kernel void dl_matvec_cols(__global const float *A, __global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int j = 0; j < n; ++j)
        acc = fma(A[j * n + i], x[j], acc);
    y[i] = acc;
}

// C (m x n) = A (m x k) * B (k x n), column of C along dimension 0.
// clperf: --global n,m --local 16,16 --arg m=1024 --arg n=1024 --arg k=1024 --arg A=m*k --arg B=k*n --arg C=m*n
// clperf-sweep: m=512..4096 n=512..4096 k=256..4096
__kernel void dl_matmul_nn(__global const float *A, __global const float *B, __global float *C, int m, int n,
                           int k)
{
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
        acc = fma(A[row * k + p], B[p * n + col], acc);
    C[row * n + col] = acc;
}

// C = A * B^T: both operands walked along rows; items of a row of C share A's row.
// clperf: --global n,m --local 16,16 --arg m=1024 --arg n=1024 --arg k=1024 --arg A=m*k --arg B=n*k --arg C=m*n
// clperf-sweep: m=512..4096 n=512..4096 k=256..4096
__kernel void dl_matmul_nt(__global const float *A, __global const float *B, __global float *C, int m, int n,
                           int k)
{
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
        acc = fma(A[row * k + p], B[col * k + p], acc);
    C[row * n + col] = acc;
}

// The same product with the row of C along dimension 0: neighbouring items read A a row apart.
// clperf: --global m,n --local 16,16 --arg m=1024 --arg n=1024 --arg k=1024 --arg A=m*k --arg B=k*n --arg C=m*n
// clperf-sweep: m=512..4096 n=512..4096 k=256..2048
__kernel void dl_matmul_rowfirst(__global const float *A, __global const float *B, __global float *C, int m,
                                 int n, int k)
{
    int row = get_global_id(0), col = get_global_id(1);
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
        acc = fma(A[row * k + p], B[p * n + col], acc);
    C[row * n + col] = acc;
}

// Outer-product update of a big matrix: A += u v^T, one element per item (pure streaming of A).
// clperf: --global n,n --local 32,8 --arg n=4096 --arg A=n*n --arg u=n --arg v=n
// clperf-sweep: n=2048..16384
__kernel void dl_rank1(__global float *A, __global const float *u, __global const float *v, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    A[i * n + j] += u[i] * v[j];
}
