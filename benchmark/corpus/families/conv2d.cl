// Family conv2d: 2-D convolution of a w x h image (padded by the filter radius) with 3x3, 5x5 and 7x7
// filters from __constant memory, a run-time filter size, and a 16x16 __local tile with halo (5x5).

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=(w+2)*(h+2) --arg f=9
// clperf-sweep: w=32..2048 h=32..1024 local=16..64
__kernel void conv2_3x3(__global float *out, __global const float *in, __constant float *f, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int pw = w + 2;
    float acc = 0.0f;
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx)
            acc += f[dy * 3 + dx] * in[(y + dy) * pw + x + dx];
    out[y * w + x] = acc;
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=(w+4)*(h+4) --arg f=25
// clperf-sweep: w=32..2048 h=32..1024 local=16..64
__kernel void conv2_5x5(__global float *out, __global const float *in, __constant float *f, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int pw = w + 4;
    float acc = 0.0f;
#pragma unroll
    for (int dy = 0; dy < 5; ++dy)
#pragma unroll
        for (int dx = 0; dx < 5; ++dx)
            acc += f[dy * 5 + dx] * in[(y + dy) * pw + x + dx];
    out[y * w + x] = acc;
}

// clperf: --global w,h --local 32,4 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=(w+6)*(h+6) --arg f=49
// clperf-sweep: w=32..2048 h=32..1024 local=16..128
__kernel void conv2_7x7(__global float *out, __global const float *in, __global const float *f, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int pw = w + 6;
    float acc = 0.0f;
    for (int dy = 0; dy < 7; ++dy)
        for (int dx = 0; dx < 7; ++dx)
            acc += f[dy * 7 + dx] * in[(y + dy) * pw + x + dx];
    out[y * w + x] = acc;
}

// clperf: --global w,h --local 16,16 --arg w=512 --arg h=512 --arg k=5 --arg out=w*h --arg in=(w+k)*(h+k) --arg f=k*k
// clperf-sweep: w=32..1024 h=32..1024 k=2..16 local=16..64
__kernel void conv2_ksize_arg(__global float *out, __global const float *in, __constant float *f, int k, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int pw = w + k;
    float acc = 0.0f;
    for (int dy = 0; dy < k; ++dy)
        for (int dx = 0; dx < k; ++dx)
            acc += f[dy * k + dx] * in[(y + dy) * pw + x + dx];
    out[y * w + x] = acc;
}

// 16x16 outputs per group; the 20x20 input window is loaded cooperatively into __local memory.
// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=(w+4)*(h+4) --arg f=25
// clperf-sweep: w=32..2048 h=32..1024
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void conv2_5x5_tiled(__global float *out, __global const float *in, __constant float *f, int w, int h)
{
    __local float t[20][20];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x0 = get_group_id(0) * 16, y0 = get_group_id(1) * 16;
    int pw = w + 4;
    for (int j = ly * 16 + lx; j < 400; j += 256)
        t[j / 20][j % 20] = in[(y0 + j / 20) * pw + x0 + j % 20];
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc = 0.0f;
    for (int dy = 0; dy < 5; ++dy)
        for (int dx = 0; dx < 5; ++dx)
            acc += f[dy * 5 + dx] * t[ly + dy][lx + dx];
    out[(y0 + ly) * w + x0 + lx] = acc;
}
