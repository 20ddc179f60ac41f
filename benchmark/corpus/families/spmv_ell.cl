// Family spmv_ell: ELLPACK SpMV with k entries per row. Column-major storage (entry j of every row
// contiguous: coalesced), row-major storage (uncoalesced), and a banded matrix whose columns are computed
// (no index array: the DIA-like regular case).

// clperf: --global n --local 128 --arg n=65536 --arg k=8 --arg cols=n*k --arg vals=n*k --arg x=n --arg y=n --fill cols=range:0:n
// clperf-sweep: n=1024..262144 k=4..16 local=16..1024
__kernel void ell_colmajor(__global const int *cols, __global const float *vals, __global const float *x,
                           __global float *y, int n, int k)
{
    int row = get_global_id(0);
    if (row >= n)
        return;
    float acc = 0.0f;
    for (int j = 0; j < k; ++j)
        acc += vals[j * n + row] * x[cols[j * n + row]];
    y[row] = acc;
}

// clperf: --global n --local 128 --arg n=65536 --arg k=8 --arg cols=n*k --arg vals=n*k --arg x=n --arg y=n --fill cols=range:0:n
// clperf-sweep: n=1024..262144 k=4..16 local=16..1024
__kernel void ell_rowmajor(__global const int *cols, __global const float *vals, __global const float *x,
                           __global float *y, int n, int k)
{
    int row = get_global_id(0);
    if (row >= n)
        return;
    float acc = 0.0f;
    for (int j = 0; j < k; ++j)
        acc += vals[row * k + j] * x[cols[row * k + j]];
    y[row] = acc;
}

// Diagonals at fixed offsets: column = row + offset, skipped outside the matrix.
// clperf: --global n --local 256 --arg n=65536 --arg vals=n*9 --arg x=n --arg y=n
// clperf-sweep: n=1024..262144 local=16..1024
__kernel void dia_9band(__global const float *vals, __global const float *x, __global float *y, int n)
{
    const int off[9] = {-64, -8, -2, -1, 0, 1, 2, 8, 64};
    int row = get_global_id(0);
    if (row >= n)
        return;
    float acc = 0.0f;
    for (int d = 0; d < 9; ++d) {
        int c = row + off[d];
        if (c >= 0 && c < n)
            acc += vals[d * n + row] * x[c];
    }
    y[row] = acc;
}
