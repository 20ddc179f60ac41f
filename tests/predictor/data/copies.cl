// Two copies of the same amount of data: one coalesced, one strided by `s` elements.
// clperf: --global n --local 256 --arg n=4194304 --arg dst=n --arg src=n
__kernel void copy(__global float *dst, __global const float *src, int n)
{
    int i = get_global_id(0);
    dst[i] = src[i];
}

// clperf: --global n --local 256 --arg n=4194304 --arg s=32 --arg dst=n --arg src=n*s
__kernel void copy_strided(__global float *dst, __global const float *src, int n, int s)
{
    int i = get_global_id(0);
    dst[i] = src[i * s];
}
