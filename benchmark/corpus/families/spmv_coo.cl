// Family spmv_coo: coordinate-format SpMV, one nonzero per work-item, results combined with atomics:
// a float compare-and-swap add, and an integer fixed-point variant using atomic_add.

inline void atomic_addf(volatile __global float *p, float v)
{
    union { uint u; float f; } o, nv;
    do {
        o.f = *p;
        nv.f = o.f + v;
    } while (atomic_cmpxchg((volatile __global uint *)p, o.u, nv.u) != o.u);
}

// clperf: --global nnz --local 256 --arg n=65536 --arg nnz=8*n --arg rows=nnz --arg cols=nnz --arg vals=nnz --arg x=n --arg y=n --fill rows=range:0:n --fill cols=range:0:n
// clperf-sweep: n=1024..262144 local=16..1024
__kernel void coo_atomic_float(__global const int *rows, __global const int *cols, __global const float *vals,
                               __global const float *x, __global float *y, int nnz, int n)
{
    int j = get_global_id(0);
    if (j < nnz && rows[j] < n)
        atomic_addf(&y[rows[j]], vals[j] * x[cols[j]]);
}

// clperf: --global nnz --local 256 --arg n=65536 --arg nnz=8*n --arg rows=nnz --arg cols=nnz --arg vals=nnz --arg x=n --arg y=n --fill rows=range:0:n --fill cols=range:0:n
// clperf-sweep: n=1024..262144 local=16..1024
__kernel void coo_atomic_fixed(__global const int *rows, __global const int *cols, __global const float *vals,
                               __global const float *x, __global int *y, int nnz, int n)
{
    int j = get_global_id(0);
    if (j < nnz && rows[j] < n)
        atomic_add(&y[rows[j]], (int)(vals[j] * x[cols[j]] * 1024.0f));
}

// Sorted by row: each work-item handles a run of 8 nonzeros and flushes once per row change.
// clperf: --global nnz/8 --local 128 --arg n=65536 --arg nnz=8*n --arg rows=nnz --arg cols=nnz --arg vals=nnz --arg x=n --arg y=n --fill rows=range:0:n --fill cols=range:0:n
// clperf-sweep: n=1024..262144 local=16..1024
__kernel void coo_segmented8(__global const int *rows, __global const int *cols, __global const float *vals,
                             __global const float *x, __global float *y, int nnz, int n)
{
    int base = get_global_id(0) * 8;
    int cur = rows[base];
    float acc = 0.0f;
    for (int j = base; j < base + 8 && j < nnz; ++j) {
        int r = rows[j];
        if (r != cur) {
            atomic_addf(&y[cur], acc);
            acc = 0.0f;
            cur = r;
        }
        acc += vals[j] * x[cols[j]];
    }
    atomic_addf(&y[cur], acc);
}
