// Family image_gauss: Gaussian blur. Separable passes (horizontal then vertical, radius from the host,
// weights computed in the kernel or read from __constant memory), and a direct 5x5 2-D Gaussian.

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg r=3 --arg out=w*h --arg in=w*h --arg wts=2*r+1
// clperf-sweep: w=32..2048 h=32..2048 r=1..16 local=16..64
__kernel void gauss_h(__global float *out, __global const float *in, __constant float *wts, int r, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int k = -r; k <= r; ++k)
        acc += wts[k + r] * in[y * w + clamp(x + k, 0, w - 1)];
    out[y * w + x] = acc;
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg r=3 --arg out=w*h --arg in=w*h --arg wts=2*r+1
// clperf-sweep: w=32..2048 h=32..2048 r=1..16 local=16..64
__kernel void gauss_v(__global float *out, __global const float *in, __constant float *wts, int r, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int k = -r; k <= r; ++k)
        acc += wts[k + r] * in[clamp(y + k, 0, h - 1) * w + x];
    out[y * w + x] = acc;
}

// Weights computed with exp() on the fly: more arithmetic, no weight buffer.
// clperf: --global w,h --local 32,8 --arg w=1024 --arg h=1024 --arg sigma=2.0 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..128
__kernel void gauss_h_exp(__global float *out, __global const float *in, float sigma, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f, norm = 0.0f;
    for (int k = -6; k <= 6; ++k) {
        float wk = exp(-(k * k) / (2.0f * sigma * sigma));
        acc += wk * in[y * w + clamp(x + k, 0, w - 1)];
        norm += wk;
    }
    out[y * w + x] = acc / norm;
}

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg in=w*h
// clperf-sweep: w=32..2048 h=32..2048 local=16..64
__kernel void gauss_5x5(__global float *out, __global const float *in, int w, int h)
{
    const float g[5] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};
    int x = get_global_id(0), y = get_global_id(1);
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
            acc += g[dy + 2] * g[dx + 2] * in[clamp(y + dy, 0, h - 1) * w + clamp(x + dx, 0, w - 1)];
    out[y * w + x] = acc * (1.0f / 256.0f);
}
