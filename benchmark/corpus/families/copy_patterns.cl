// Family copy_patterns: pure data movement: a copy, a float4 copy, a copy with a misaligned offset, a
// reverse copy, an interleave of two arrays, and a de-interleave (array of structures to structure of
// arrays).

// clperf: --global n --local 256 --arg n=1048576 --arg dst=n --arg src=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void cp_copy(__global int *dst, __global const int *src, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = src[i];
}

// clperf: --global n --local 256 --arg n=262144 --arg dst=n --arg src=n
// clperf-sweep: n=256..1048576 local=16..1024
__kernel void cp_copy4(__global float4 *dst, __global const float4 *src, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = src[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg dst=n --arg src=n+off --arg off=3
// clperf-sweep: n=1024..2097152 off=1..64 local=16..1024
__kernel void cp_offset(__global float *dst, __global const float *src, int off, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = src[i + off];
}

// clperf: --global n --local 256 --arg n=1048576 --arg dst=n --arg src=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void cp_reverse(__global float *dst, __global const float *src, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[n - 1 - i] = src[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg dst=2*n --arg a=n --arg b=n
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void cp_interleave(__global float *dst, __global const float *a, __global const float *b, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        dst[2 * i] = a[i];
        dst[2 * i + 1] = b[i];
    }
}

// clperf: --global n --local 128 --arg n=1048576 --arg x=n --arg y=n --arg z=n --arg aos=3*n
// clperf-sweep: n=1024..1048576 local=16..1024
__kernel void cp_aos_to_soa(__global float *x, __global float *y, __global float *z, __global const float *aos, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        x[i] = aos[3 * i];
        y[i] = aos[3 * i + 1];
        z[i] = aos[3 * i + 2];
    }
}
