// Family map_float: element-wise float maps (copy, scale, add, triad, polynomial), one element per
// work-item, plus a grid-stride variant that launches fewer work-items than elements.

// clperf: --global n --local 256 --arg n=1048576 --arg dst=n --arg src=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapf_copy(__global float *dst, __global const float *src, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = src[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg dst=n --arg src=n --arg s=2.5
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapf_scale(__global float *dst, __global const float *src, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = s * src[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg c=n --arg a=n --arg b=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapf_add(__global float *c, __global const float *a, __global const float *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}

// clperf: --global n --local 128 --arg n=1048576 --arg a=n --arg b=n --arg c=n --arg q=3.0
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapf_triad(__global float *a, __global const float *b, __global const float *c, float q, int n)
{
    size_t i = get_global_id(0);
    if (i < (size_t)n)
        a[i] = b[i] + q * c[i];
}

// Horner polynomial of degree 8: more arithmetic per byte than the triad.
// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg x=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapf_poly8(__global float *y, __global const float *x, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float v = x[i];
    float r = 0.3f;
    r = r * v + 1.1f; r = r * v - 0.7f; r = r * v + 0.2f; r = r * v + 2.0f;
    r = r * v - 1.3f; r = r * v + 0.9f; r = r * v - 0.1f; r = r * v + 0.5f;
    y[i] = r;
}

// Grid-stride loop: a fixed number of work-items walks the whole array.
// clperf: --global 16384 --local 256 --arg n=1048576 --arg dst=n --arg src=n
// clperf-sweep: n=16384..4194304 local=16..1024
__kernel void mapf_gridstride(__global float *dst, __global const float *src, int n)
{
    int stride = get_global_size(0);
    for (int i = get_global_id(0); i < n; i += stride)
        dst[i] = src[i] * 0.5f + 1.0f;
}

// Transcendental map: sqrt/exp/sin per element.
// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg x=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapf_transcendental(__global float *y, __global const float *x, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float v = x[i];
        y[i] = sqrt(v + 1.0f) * exp(-v) + sin(v * 3.0f);
    }
}
