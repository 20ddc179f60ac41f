// Family map_int: element-wise integer maps (add, multiply-shift, min/max clamp, mad24), with int and uint.

// clperf: --global n --local 256 --arg n=1048576 --arg c=n --arg a=n --arg b=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapi_add(__global int *c, __global const int *a, __global const int *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}

// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg x=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapi_mulshift(__global uint *y, __global const uint *x, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        uint v = x[i];
        y[i] = ((v * 2654435761u) >> 7) ^ (v << 3);
    }
}

// clperf: --global n --local 64 --arg n=1048576 --arg y=n --arg x=n --arg lo=-1000 --arg hi=1000
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapi_clamp(__global int *y, __global const int *x, int lo, int hi, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = min(max(x[i] / 3, lo), hi);
}

// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg a=n --arg b=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapi_mad24(__global int *y, __global const int *a, __global const int *b, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int x = a[i] & 0x7fff, z = b[i] & 0x7fff;
        y[i] = mad24(x, z, i & 0xff);
    }
}

// Integer division and modulo are expensive on most devices.
// clperf: --global n --local 256 --arg n=1048576 --arg y=n --arg x=n --arg d=7
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void mapi_divmod(__global int *y, __global const int *x, int d, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int v = x[i];
        y[i] = v / d + v % (d + 2);
    }
}
