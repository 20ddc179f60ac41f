// Family rowcol_sums: row and column sums of a rows x cols row-major matrix: row per work-item
// (uncoalesced), column per work-item (coalesced), row per work-group with a __local tree.

// clperf: --global rows --local 64 --arg rows=2048 --arg cols=1024 --arg A=rows*cols --arg out=rows
// clperf-sweep: rows=256..4096 cols=64..1024 local=16..256
__kernel void rcs_rows_item(__global const float *A, __global float *out, int rows, int cols)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c)
        acc += A[r * cols + c];
    out[r] = acc;
}

// clperf: --global cols --local 64 --arg rows=2048 --arg cols=1024 --arg A=rows*cols --arg out=cols
// clperf-sweep: rows=256..4096 cols=64..1024 local=16..1024
__kernel void rcs_cols_item(__global const float *A, __global float *out, int rows, int cols)
{
    int c = get_global_id(0);
    if (c >= cols)
        return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r)
        acc += A[r * cols + c];
    out[c] = acc;
}

// clperf: --global rows*128 --local 128 --arg rows=2048 --arg cols=1024 --arg A=rows*cols --arg out=rows
// clperf-sweep: rows=256..4096 cols=64..1024
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void rcs_rows_group(__global const float *A, __global float *out, int rows, int cols)
{
    __local float s[128];
    int r = get_group_id(0), lid = get_local_id(0);
    float acc = 0.0f;
    for (int c = lid; c < cols; c += 128)
        acc += A[r * cols + c];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 64; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[r] = s[0];
}

// Column sums where each work-item covers a 32-row slab and adds atomically (fixed-point ints).
// clperf: --global cols,rows/32 --local 64,1 --arg rows=2048 --arg cols=1024 --arg A=rows*cols --arg out=cols
// clperf-sweep: rows=256..4096 cols=64..1024 local=16..1024
__kernel void rcs_cols_slab_atomic(__global const float *A, __global int *out, int rows, int cols)
{
    int c = get_global_id(0), slab = get_global_id(1);
    float acc = 0.0f;
    for (int r = slab * 32; r < min(rows, slab * 32 + 32); ++r)
        acc += A[r * cols + c];
    atomic_add(&out[c], (int)(acc * 16.0f));
}
