// Sparse matrix-vector products y = A x over three layouts of one matrix: CSR, ELLPACK (column-major,
// zero-padded) and JDS (rows sorted by length, one jagged diagonal after the other). Each kernel checks
// the indices it is given and writes one element past the end of `y` when one is out of range, which
// the benchmark's guard zone reports as an out-of-bounds write.

// clperf: --global rows --arg rows=4096 --fill m=csr:rows:rows:16:1
// clperf: --fill rowptr=m.rowptr --fill colidx=m.colidx --fill vals=m.values
// clperf: --arg cols=m.cols --arg nnz=m.nnz --arg x=cols --arg y=rows
// clperf-sweep: rows=64..65536
__kernel void spmv_csr(__global const int* rowptr, __global const int* colidx, __global const float* vals,
                       __global const float* x, __global float* y, int rows, int cols, int nnz) {
    int r = get_global_id(0);
    if (r >= rows) return;
    int begin = rowptr[r], end = rowptr[r + 1];
    if (begin < 0 || end < begin || end > nnz) { y[rows] = 1.0f; return; }
    float sum = 0.0f;
    for (int j = begin; j < end; ++j) {
        int c = colidx[j];
        if (c < 0 || c >= cols) { y[rows] = 1.0f; return; }
        sum += vals[j] * x[c];
    }
    y[r] = sum;
}

__kernel void spmv_ell(__global const int* ell_cols, __global const float* ell_vals, __global const float* x,
                       __global float* y, int rows, int cols, int width) {
    int r = get_global_id(0);
    if (r >= rows) return;
    float sum = 0.0f;
    for (int k = 0; k < width; ++k) {
        int c = ell_cols[k * rows + r];
        if (c < 0 || c >= cols) { y[rows] = 1.0f; return; }
        sum += ell_vals[k * rows + r] * x[c];
    }
    y[r] = sum;
}

__kernel void spmv_jds(__global const int* perm, __global const int* jds_ptr, __global const int* rowlen,
                       __global const int* jds_cols, __global const float* jds_vals, __global const float* x,
                       __global float* y, int rows, int cols) {
    int i = get_global_id(0);
    if (i >= rows) return;
    int row = perm[i];
    if (row < 0 || row >= rows) { y[rows] = 1.0f; return; }
    float sum = 0.0f;
    for (int d = 0; d < rowlen[i]; ++d) {
        int at = jds_ptr[d] + i;
        int c = jds_cols[at];
        if (c < 0 || c >= cols) { y[rows] = 1.0f; return; }
        sum += jds_vals[at] * x[c];
    }
    y[row] = sum;
}
