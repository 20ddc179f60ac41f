// Family strided: reads and writes with a stride between neighbouring work-items: constant strides
// 2, 4, 8, 16, 32, 64 and 128 (one kernel each, the array being stride times larger than the launch),
// a symbolic stride from an argument, and strided writes.

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=2*n
// clperf-sweep: n=1024..2097152 local=16..1024
__kernel void strd_read2(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * 2] * 2.0f;
}

// clperf: --global n --local 256 --arg n=262144 --arg out=n --arg in=4*n
// clperf-sweep: n=1024..1048576 local=16..1024
__kernel void strd_read4(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * 4] * 2.0f;
}

// clperf: --global n --local 256 --arg n=131072 --arg out=n --arg in=8*n
// clperf-sweep: n=512..524288 local=16..512
__kernel void strd_read8(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * 8] * 2.0f;
}

// clperf: --global n --local 256 --arg n=65536 --arg out=n --arg in=16*n
// clperf-sweep: n=256..262144 local=16..256
__kernel void strd_read16(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * 16] * 2.0f;
}

// clperf: --global n --local 128 --arg n=32768 --arg out=n --arg in=32*n
// clperf-sweep: n=128..131072 local=16..128
__kernel void strd_read32(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * 32] * 2.0f;
}

// clperf: --global n --local 64 --arg n=16384 --arg out=n --arg in=64*n
// clperf-sweep: n=64..65536 local=16..64
__kernel void strd_read64(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * 64] * 2.0f;
}

// clperf: --global n --local 32 --arg n=8192 --arg out=n --arg in=128*n
// clperf-sweep: n=32..32768 local=16..32
__kernel void strd_read128(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * 128] * 2.0f;
}

// A stride given at run time; the array holds n * s elements.
// clperf: --global n --local 256 --arg n=16384 --arg s=64 --arg out=n --arg in=n*s
// clperf-sweep: n=1024..16384 s=1..256 local=16..1024
__kernel void strd_read_sym(__global float *out, __global const float *in, int s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i * s] + 1.0f;
}

// clperf: --global n --local 256 --arg n=16384 --arg s=64 --arg out=n*s --arg in=n
// clperf-sweep: n=1024..16384 s=1..256 local=16..1024
__kernel void strd_write_sym(__global float *out, __global const float *in, int s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i * s] = in[i] + 1.0f;
}

// Wrapping stride: every element read once (odd stride modulo a power-of-two n).
// clperf: --global n --local 256 --arg n=1048576 --arg s=33 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 s=1..1024 local=16..1024
__kernel void strd_wrap(__global float *out, __global const float *in, int s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[(int)(((uint)i * (uint)(s | 1)) & (uint)(n - 1))];
}
