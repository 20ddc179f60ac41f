// Family softmax: row-wise softmax and layer normalisation of a rows x cols matrix (reductions followed
// by a map): one row per work-item, one row per work-group with __local max/sum reductions, and a
// layer-norm per work-group.

// clperf: --global rows --local 64 --arg rows=8192 --arg cols=256 --arg out=rows*cols --arg in=rows*cols
// clperf-sweep: rows=256..16384 cols=16..256 local=16..256
__kernel void sm_row_item(__global float *out, __global const float *in, int rows, int cols)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    const __global float *x = in + r * cols;
    float mx = -INFINITY;
    for (int c = 0; c < cols; ++c)
        mx = fmax(mx, x[c]);
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c)
        sum += exp(x[c] - mx);
    for (int c = 0; c < cols; ++c)
        out[r * cols + c] = exp(x[c] - mx) / sum;
}

// clperf: --global rows*128 --local 128 --arg rows=8192 --arg cols=256 --arg out=rows*cols --arg in=rows*cols
// clperf-sweep: rows=256..16384 cols=16..256
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void sm_row_group(__global float *out, __global const float *in, int rows, int cols)
{
    __local float s[128];
    int r = get_group_id(0), lid = get_local_id(0);
    const __global float *x = in + r * cols;
    float mx = -INFINITY;
    for (int c = lid; c < cols; c += 128)
        mx = fmax(mx, x[c]);
    s[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 64; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] = fmax(s[lid], s[lid + d]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    mx = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int c = lid; c < cols; c += 128)
        sum += exp(x[c] - mx);
    s[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 64; d > 0; d >>= 1) {
        if (lid < d)
            s[lid] += s[lid + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float inv = 1.0f / s[0];
    for (int c = lid; c < cols; c += 128)
        out[r * cols + c] = exp(x[c] - mx) * inv;
}

// clperf: --global rows*64 --local 64 --arg rows=8192 --arg cols=256 --arg out=rows*cols --arg in=rows*cols --arg gamma=cols --arg beta=cols
// clperf-sweep: rows=256..16384 cols=16..256
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void sm_layernorm(__global float *out, __global const float *in, __global const float *gamma,
                  __global const float *beta, int rows, int cols)
{
    __local float s1[64];
    __local float s2[64];
    int r = get_group_id(0), lid = get_local_id(0);
    float a = 0.0f, b = 0.0f;
    for (int c = lid; c < cols; c += 64) {
        float v = in[r * cols + c];
        a += v;
        b += v * v;
    }
    s1[lid] = a;
    s2[lid] = b;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 32; d > 0; d >>= 1) {
        if (lid < d) {
            s1[lid] += s1[lid + d];
            s2[lid] += s2[lid + d];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float mean = s1[0] / cols, var = s2[0] / cols - mean * mean;
    float inv = rsqrt(var + 1e-5f);
    for (int c = lid; c < cols; c += 64)
        out[r * cols + c] = (in[r * cols + c] - mean) * inv * gamma[c] + beta[c];
}
