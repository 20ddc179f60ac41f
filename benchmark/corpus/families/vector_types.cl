// Family vector_types: wide and narrow vector types: float8 and float16 arithmetic, int4 integer maps,
// uchar4 pixels converted to float4, a float4 swizzle/shuffle, and float3 (stored as float4 slots).

// clperf: --global n --local 128 --arg n=131072 --arg out=n --arg a=n --arg b=n
// clperf-sweep: n=128..524288 local=16..1024
__kernel void vec_float8_fma(__global float8 *out, __global const float8 *a, __global const float8 *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = fma(a[i], b[i], (float8)(0.5f));
}

// clperf: --global n --local 64 --arg n=65536 --arg out=n --arg a=n
// clperf-sweep: n=64..262144 local=16..1024
__kernel void vec_float16_poly(__global float16 *out, __global const float16 *a, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float16 x = a[i];
        out[i] = ((x * 0.5f + 1.0f) * x - 2.0f) * x + 0.25f;
    }
}

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg a=n --arg b=n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void vec_int4_mix(__global int4 *out, __global const int4 *a, __global const int4 *b, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int4 x = a[i], y = b[i];
        out[i] = (x * 3 + y) ^ (x >> 2) | (y & 15);
    }
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void vec_uchar4_to_gray(__global float *out, __global const uchar4 *in, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float4 p = convert_float4(in[i]);
        out[i] = dot(p, (float4)(0.299f, 0.587f, 0.114f, 0.0f));
    }
}

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void vec_swizzle(__global float4 *out, __global const float4 *in, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float4 v = in[i];
        out[i] = v.wzyx * v.xxyy + shuffle(v, (uint4)(1, 0, 3, 2));
    }
}

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg a=n --arg b=n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void vec_float3_cross(__global float3 *out, __global const float3 *a, __global const float3 *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = cross(a[i], b[i]);
}

// vload8 / vstore8 of floats with an element offset.
// clperf: --global n --local 128 --arg n=131072 --arg out=8*n --arg in=8*n
// clperf-sweep: n=128..524288 local=16..1024
__kernel void vec_vload8(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float8 v = vload8(i, in);
        vstore8(sqrt(v + 1.0f), i, out);
    }
}
