// Family sgemv: y = alpha * op(A) * x + beta * y on a rows x cols matrix, op = none or transpose, with
// scalar and float4 inner loops and a 2-D launch that splits each row across several work-items.

// clperf: --global rows --local 64 --arg rows=1024 --arg cols=1024 --arg A=rows*cols --arg x=cols --arg y=rows --arg alpha=1.5 --arg beta=0.5
// clperf-sweep: rows=256..4096 cols=256..1024 local=16..256
__kernel void sgemv_n(__global const float *A, __global const float *x, __global float *y,
                      float alpha, float beta, int rows, int cols)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c)
        acc += A[r * cols + c] * x[c];
    y[r] = alpha * acc + beta * y[r];
}

// y = alpha A^T x + beta y: work-item c walks down column c (coalesced across work-items).
// clperf: --global cols --local 64 --arg rows=1024 --arg cols=1024 --arg A=rows*cols --arg x=rows --arg y=cols --arg alpha=1.5 --arg beta=0.5
// clperf-sweep: rows=256..4096 cols=256..1024 local=16..256
__kernel void sgemv_t(__global const float *A, __global const float *x, __global float *y,
                      float alpha, float beta, int rows, int cols)
{
    int c = get_global_id(0);
    if (c >= cols)
        return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r)
        acc += A[r * cols + c] * x[r];
    y[c] = alpha * acc + beta * y[c];
}

// clperf: --global rows --local 64 --arg rows=1024 --arg cols=1024 --arg A=rows*cols/4 --arg x=cols/4 --arg y=rows --arg alpha=1.5 --arg beta=0.5
// clperf-sweep: rows=256..4096 cols=256..1024 local=16..256
__kernel void sgemv_n_float4(__global const float4 *A, __global const float4 *x, __global float *y,
                             float alpha, float beta, int rows, int cols)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    float4 acc = (float4)(0.0f);
    int q = cols / 4;
    for (int c = 0; c < q; ++c)
        acc += A[r * q + c] * x[c];
    y[r] = alpha * (acc.x + acc.y + acc.z + acc.w) + beta * y[r];
}

// Each row split over 16 work-items along dimension 0 (partial sums combined in __local).
// clperf: --global 16,rows --local 16,4 --arg rows=1024 --arg cols=1024 --arg A=rows*cols --arg x=cols --arg y=rows --arg alpha=1.5 --arg beta=0.5
// clperf-sweep: rows=256..4096 cols=256..1024
__kernel __attribute__((reqd_work_group_size(16, 4, 1)))
void sgemv_n_split16(__global const float *A, __global const float *x, __global float *y,
                     float alpha, float beta, int rows, int cols)
{
    __local float part[4][16];
    int lx = get_local_id(0), ly = get_local_id(1);
    int r = get_global_id(1);
    float acc = 0.0f;
    for (int c = lx; c < cols; c += 16)
        acc += A[r * cols + c] * x[c];
    part[ly][lx] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lx == 0) {
        float s = 0.0f;
        for (int k = 0; k < 16; ++k)
            s += part[ly][k];
        y[r] = alpha * s + beta * y[r];
    }
}
