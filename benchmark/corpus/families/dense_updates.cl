// Family dense_updates: dense linear-algebra updates: a rank-1 update A += x y^T (BLAS ger), the LU
// trailing-matrix update for pivot k (launched for each k by the host), a symmetric rank-k style
// C = A A^T block, and a triangular solve column step.

// clperf: --global n,n --local 16,16 --arg n=1024 --arg A=n*n --arg x=n --arg y=n --arg alpha=0.5
// clperf-sweep: n=64..2048 local=16..64
__kernel void du_ger(__global float *A, __global const float *x, __global const float *y, float alpha, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    A[i * n + j] += alpha * x[i] * y[j];
}

// clperf: --global n,n --local 16,16 --arg n=1024 --arg A=n*n --arg k=3
// clperf-sweep: n=64..2048 k=1..32 local=16..64
__kernel void du_lu_trailing(__global float *A, int k, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    if (i <= k || j <= k || k >= n)
        return;
    float piv = A[k * n + k];
    A[i * n + j] -= A[i * n + k] / (piv + 1.0f) * A[k * n + j];
}

// clperf: --global n,n --local 16,16 --arg n=256 --arg d=256 --arg A=n*d --arg C=n*n
// clperf-sweep: n=64..1024 d=16..256 local=16..64
__kernel void du_syrk(__global const float *A, __global float *C, int d, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    if (j > i)
        return;
    float acc = 0.0f;
    for (int k = 0; k < d; ++k)
        acc += A[i * d + k] * A[j * d + k];
    C[i * n + j] = acc;
}

// Forward substitution column step: x[i] -= L[i][k] * x[k] for i > k (the host loops over k).
// clperf: --global n --local 256 --arg n=4096 --arg L=n*n --arg x=n --arg k=5
// clperf-sweep: n=256..2048 k=1..128 local=16..1024
__kernel void du_trsv_column(__global const float *L, __global float *x, int k, int n)
{
    int i = get_global_id(0);
    if (i > k && i < n && k < n)
        x[i] -= L[i * n + k] * x[k] / (L[k * n + k] + 1.0f);
}
