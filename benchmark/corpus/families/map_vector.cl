// Family map_vector: the same maps written with float4/float2 vectors, and their scalar counterparts
// that read the same data one float at a time (the unoptimised variants).

// clperf: --global n --local 256 --arg n=262144 --arg c=n --arg a=n --arg b=n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void mapv_add4(__global float4 *c, __global const float4 *a, __global const float4 *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}

// Same sum as mapv_add4 but each work-item handles four consecutive floats with scalar loads.
// clperf: --global n --local 256 --arg n=262144 --arg c=4*n --arg a=4*n --arg b=4*n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void mapv_add4_scalar(__global float *c, __global const float *a, __global const float *b, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int k = 0; k < 4; ++k)
            c[4 * i + k] = a[4 * i + k] + b[4 * i + k];
    }
}

// clperf: --global n --local 256 --arg n=524288 --arg y=n --arg x=n --arg s=0.75
// clperf-sweep: n=512..2097152 local=16..1024
__kernel void mapv_scale2(__global float2 *y, __global const float2 *x, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = x[i] * s + (float2)(1.0f, -1.0f);
}

// vload4/vstore4 on a float array: vector accesses through scalar pointers.
// clperf: --global n --local 128 --arg n=262144 --arg y=4*n --arg x=4*n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void mapv_vload4(__global float *y, __global const float *x, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float4 v = vload4(i, x);
        vstore4(v * v + 0.5f, i, y);
    }
}

// float4 norm: a horizontal operation on each vector.
// clperf: --global n --local 256 --arg n=262144 --arg len=n --arg v=n
// clperf-sweep: n=1024..1048576 local=16..1024
__kernel void mapv_length4(__global float *len, __global const float4 *v, int n)
{
    int i = get_global_id(0);
    if (i < n)
        len[i] = length(v[i]);
}
