// Family mandelbrot: escape-time fractal, compute-bound and divergent (neighbouring pixels iterate
// different counts). 2-D launch in float and double, a 1-D launch, and 4 pixels per work-item.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// clperf: --global w,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=w*h --arg maxit=256
// clperf-sweep: w=32..2048 h=32..2048 maxit=16..1024 local=16..64
__kernel void mb_float(__global int *out, int maxit, int w, int h)
{
    int px = get_global_id(0), py = get_global_id(1);
    float cx = -2.0f + 3.0f * px / w, cy = -1.5f + 3.0f * py / h;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (x * x + y * y < 4.0f && it < maxit) {
        float t = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = t;
        ++it;
    }
    out[py * w + px] = it;
}

// clperf: --global w,h --local 16,8 --arg w=512 --arg h=512 --arg out=w*h --arg maxit=256
// clperf-sweep: w=32..2048 h=32..1024 maxit=16..1024 local=16..128
__kernel void mb_double(__global int *out, int maxit, int w, int h)
{
    int px = get_global_id(0), py = get_global_id(1);
    double cx = -0.75 + 0.5 * px / w, cy = -0.25 + 0.5 * py / h;
    double x = 0.0, y = 0.0;
    int it = 0;
    while (x * x + y * y < 4.0 && it < maxit) {
        double t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        ++it;
    }
    out[py * w + px] = it;
}

// clperf: --global w*h --local 256 --arg w=1024 --arg h=1024 --arg out=w*h --arg maxit=256
// clperf-sweep: w=64..2048 h=64..2048 maxit=16..1024 local=16..1024
__kernel void mb_flat(__global uchar *out, int maxit, int w, int h)
{
    int i = get_global_id(0);
    int px = i % w, py = i / w;
    float cx = -2.0f + 3.0f * px / w, cy = -1.5f + 3.0f * py / h;
    float x = 0.0f, y = 0.0f;
    int it;
    for (it = 0; it < maxit; ++it) {
        float x2 = x * x, y2 = y * y;
        if (x2 + y2 >= 4.0f)
            break;
        y = 2.0f * x * y + cy;
        x = x2 - y2 + cx;
    }
    out[i] = (uchar)(it & 255);
}

// Four horizontally adjacent pixels per work-item, iterated together with float4.
// clperf: --global w/4,h --local 16,16 --arg w=1024 --arg h=1024 --arg out=(w/4)*h --arg maxit=256
// clperf-sweep: w=64..2048 h=32..2048 maxit=16..1024 local=16..64
__kernel void mb_float4(__global int4 *out, int maxit, int w, int h)
{
    int qx = get_global_id(0), py = get_global_id(1);
    float4 cx = -2.0f + 3.0f * (float4)(4 * qx, 4 * qx + 1, 4 * qx + 2, 4 * qx + 3) / w;
    float4 cy = (float4)(-1.5f + 3.0f * py / h);
    float4 x = (float4)(0.0f), y = (float4)(0.0f);
    int4 it = (int4)(0);
    for (int k = 0; k < maxit; ++k) {
        int4 live = (x * x + y * y) < 4.0f;
        if (!any(live))
            break;
        float4 t = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = t;
        it -= live;
    }
    out[py * (w / 4) + qx] = it;
}
