// Family spmv_csr: sparse matrix-vector product y = A x in CSR. Row pointers are clamped so that any
// contents stay in bounds (start in [0, nnz - maxrow], at most maxrow entries per row); column indices are
// filled in [0, n). Scalar (one row per work-item), vector (one row per work-group of 32 with a __local
// reduction), a 2-D launch with 8 work-items per row, and double precision.

#define CSR_BOUNDS(rp, row, nnz, maxrow, start, stop)                       \
    int start = clamp(rp[row], 0, (nnz) - (maxrow));                        \
    int stop = clamp(rp[row + 1], start, start + (maxrow));

// clperf: --global n --local 128 --arg n=65536 --arg nnz=8*n --arg maxrow=16 --arg rowptr=n+1 --arg cols=nnz --arg vals=nnz --arg x=n --arg y=n --fill rowptr=range:0:nnz --fill cols=range:0:n
// clperf-sweep: n=1024..262144 local=16..1024
__kernel void csr_scalar(__global const int *rowptr, __global const int *cols, __global const float *vals,
                         __global const float *x, __global float *y, int n, int nnz, int maxrow)
{
    int row = get_global_id(0);
    if (row >= n)
        return;
    CSR_BOUNDS(rowptr, row, nnz, maxrow, start, stop)
    float acc = 0.0f;
    for (int j = start; j < stop; ++j)
        acc += vals[j] * x[cols[j]];
    y[row] = acc;
}

// clperf: --global n*32 --local 128 --arg n=65536 --arg nnz=8*n --arg maxrow=64 --arg rowptr=n+1 --arg cols=nnz --arg vals=nnz --arg x=n --arg y=n --fill rowptr=range:0:nnz --fill cols=range:0:n
// clperf-sweep: n=1024..131072
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void csr_vector32(__global const int *rowptr, __global const int *cols, __global const float *vals,
                  __global const float *x, __global float *y, int n, int nnz, int maxrow)
{
    __local float s[128];
    int lane = get_local_id(0) & 31;
    int row = get_global_id(0) / 32;
    float acc = 0.0f;
    if (row < n) {
        CSR_BOUNDS(rowptr, row, nnz, maxrow, start, stop)
        for (int j = start + lane; j < stop; j += 32)
            acc += vals[j] * x[cols[j]];
    }
    s[get_local_id(0)] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 16; d > 0; d >>= 1) {
        if (lane < d)
            s[get_local_id(0)] += s[get_local_id(0) + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && row < n)
        y[row] = s[get_local_id(0)];
}

// clperf: --global 8,n --local 8,16 --arg n=65536 --arg nnz=8*n --arg maxrow=32 --arg rowptr=n+1 --arg cols=nnz --arg vals=nnz --arg x=n --arg y=n --fill rowptr=range:0:nnz --fill cols=range:0:n
// clperf-sweep: n=1024..262144
__kernel __attribute__((reqd_work_group_size(8, 16, 1)))
void csr_2d_8lanes(__global const int *rowptr, __global const int *cols, __global const float *vals,
                   __global const float *x, __global float *y, int n, int nnz, int maxrow)
{
    __local float s[16][8];
    int lane = get_local_id(0), ly = get_local_id(1);
    int row = get_global_id(1);
    CSR_BOUNDS(rowptr, row, nnz, maxrow, start, stop)
    float acc = 0.0f;
    for (int j = start + lane; j < stop; j += 8)
        acc += vals[j] * x[cols[j]];
    s[ly][lane] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0) {
        float t = 0.0f;
        for (int k = 0; k < 8; ++k)
            t += s[ly][k];
        y[row] = t;
    }
}

// clperf: --global n --local 64 --arg n=65536 --arg nnz=8*n --arg maxrow=16 --arg rowptr=n+1 --arg cols=nnz --arg vals=nnz --arg x=n --arg y=n --fill rowptr=range:0:nnz --fill cols=range:0:n
// clperf-sweep: n=1024..131072 local=16..1024
__kernel void csr_scalar_double(__global const int *rowptr, __global const int *cols, __global const double *vals,
                                __global const double *x, __global double *y, int n, int nnz, int maxrow)
{
    int row = get_global_id(0);
    if (row >= n)
        return;
    CSR_BOUNDS(rowptr, row, nnz, maxrow, start, stop)
    double acc = 0.0;
    for (int j = start; j < stop; ++j)
        acc += vals[j] * x[cols[j]];
    y[row] = acc;
}
