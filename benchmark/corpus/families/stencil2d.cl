// Family stencil2d: 2-D five- and nine-point stencils on a w x h grid: global memory with a 2-D launch,
// a 1-D launch over the flattened grid, one work-item per column marching down the rows, and a 16x16
// __local tile with a one-cell halo.

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..64
__kernel void st2_5pt(__global float *out, __global const float *in, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    int c = y * w + x;
    out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - w] + in[c + w]);
}

// clperf: --global w,h --local 32,8 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..128
__kernel void st2_9pt(__global float *out, __global const float *in, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            acc += in[(y + dy) * w + (x + dx)] * ((dx == 0 && dy == 0) ? 0.5f : 0.0625f);
    out[y * w + x] = acc;
}

// x along dimension 1, y along dimension 0: neighbouring work-items touch addresses w floats apart.
// clperf: --global h,w --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..64
__kernel void st2_5pt_transposed_launch(__global float *out, __global const float *in, int w, int h)
{
    int y = get_global_id(0), x = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    int c = y * w + x;
    out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - w] + in[c + w]);
}

// clperf: --global w*h --local 256 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..1024
__kernel void st2_5pt_flat(__global float *out, __global const float *in, int w, int h)
{
    int i = get_global_id(0);
    int x = i % w, y = i / w;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}

// One work-item per column; the three rows in use stay in registers.
// clperf: --global w --local 64 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..1024
__kernel void st2_5pt_column_march(__global float *out, __global const float *in, int w, int h)
{
    int x = get_global_id(0);
    if (x < 1 || x >= w - 1)
        return;
    float up = in[x], mid = in[w + x];
    for (int y = 1; y < h - 1; ++y) {
        float down = in[(y + 1) * w + x];
        out[y * w + x] = 0.2f * (mid + up + down + in[y * w + x - 1] + in[y * w + x + 1]);
        up = mid;
        mid = down;
    }
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void st2_5pt_tiled(__global float *out, __global const float *in, int w, int h)
{
    __local float t[18][18];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_global_id(0), y = get_global_id(1);
    t[ly + 1][lx + 1] = in[y * w + x];
    if (lx == 0) t[ly + 1][0] = in[y * w + max(x - 1, 0)];
    if (lx == 15) t[ly + 1][17] = in[y * w + min(x + 1, w - 1)];
    if (ly == 0) t[0][lx + 1] = in[max(y - 1, 0) * w + x];
    if (ly == 15) t[17][lx + 1] = in[min(y + 1, h - 1) * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    out[y * w + x] = 0.2f * (t[ly + 1][lx + 1] + t[ly + 1][lx] + t[ly + 1][lx + 2] + t[ly][lx + 1] + t[ly + 2][lx + 1]);
}
