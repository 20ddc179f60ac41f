// Family image_box: box blur of a w x h image: 3x3 and 5x5 with clamped borders, a separable box in two
// passes (rows then columns), and an RGBA uchar4 image.

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..64
__kernel void box_3x3(__global float *out, __global const float *in, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            acc += in[clamp(y + dy, 0, h - 1) * w + clamp(x + dx, 0, w - 1)];
    out[y * w + x] = acc / 9.0f;
}

// clperf: --global w,h --local 16,8 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..128
__kernel void box_5x5(__global float *out, __global const float *in, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
            acc += in[clamp(y + dy, 0, h - 1) * w + clamp(x + dx, 0, w - 1)];
    out[y * w + x] = acc * 0.04f;
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg r=4 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 r=1..16 local=16..64
__kernel void box_rows(__global float *out, __global const float *in, int r, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dx = -r; dx <= r; ++dx)
        acc += in[y * w + clamp(x + dx, 0, w - 1)];
    out[y * w + x] = acc / (2 * r + 1);
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg r=4 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 r=1..16 local=16..64
__kernel void box_cols(__global float *out, __global const float *in, int r, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -r; dy <= r; ++dy)
        acc += in[clamp(y + dy, 0, h - 1) * w + x];
    out[y * w + x] = acc / (2 * r + 1);
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..64
__kernel void box_3x3_rgba(__global uchar4 *out, __global const uchar4 *in, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    uint4 acc = (uint4)(0);
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            acc += convert_uint4(in[clamp(y + dy, 0, h - 1) * w + clamp(x + dx, 0, w - 1)]);
    out[y * w + x] = convert_uchar4(acc / 9u);
}
