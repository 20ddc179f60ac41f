// Family stream_big: streaming kernels over working sets far larger than a GPU's L2 (16 MiB to 1 GiB a
// buffer): copy, scale, triad and a dot product per work-group, scalar and float4, contiguous and with a
// stride, so a model sees DRAM-bound launches of 0.01-100 ms.

// clperf: --global n --local 256 --arg n=1<<22 --arg a=n --arg b=n --arg c=n --arg s=3
// clperf-sweep: n=4194304..268435456 local=64..1024
__kernel void sb_triad(__global float *a, __global const float *b, __global const float *c, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        a[i] = b[i] + s * c[i];
}

// clperf: --global n/4 --local 256 --arg n=1<<22 --arg a=n/4 --arg b=n/4 --arg c=n/4 --arg s=3
// clperf-sweep: n=4194304..268435456 local=64..1024
__kernel void sb_triad4(__global float4 *a, __global const float4 *b, __global const float4 *c, float s,
                        int n)
{
    int i = get_global_id(0);
    if (i < n / 4)
        a[i] = b[i] + s * c[i];
}

// Each work-item copies one element of every `stride`-th: the lines it touches are mostly wasted.
// clperf: --global n/stride --local 256 --arg n=1<<22 --arg stride=8 --arg src=n --arg dst=n/stride
// clperf-sweep: n=4194304..268435456 stride=2..32 local=64..1024
__kernel void sb_gather_stride(__global const float *src, __global float *dst, int stride, int n)
{
    int i = get_global_id(0);
    if (i < n / stride)
        dst[i] = src[i * stride];
}

// Grid-stride loop: a fixed grid of groups walks the whole array; one partial sum per group.
// clperf: --global 256*groups --local 256 --arg n=1<<22 --arg groups=528 --arg x=n --arg y=n --arg part=groups
// clperf-sweep: n=4194304..268435456 groups=128..2048
__kernel void sb_dot_gridstride(__global const float *x, __global const float *y, __global float *part, int n,
                                int groups)
{
    __local float sums[256];
    int lid = get_local_id(0);
    float acc = 0.0f;
    for (int i = get_global_id(0); i < n; i += 256 * groups)
        acc = fma(x[i], y[i], acc);
    sums[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = 128; w > 0; w >>= 1) {
        if (lid < w)
            sums[lid] += sums[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        part[get_group_id(0)] = sums[0];
}

// Reads 2 arrays, writes 2: an update of a particle state by a time step, structure of arrays.
// clperf: --global n --local 128 --arg n=1<<22 --arg px=n --arg vx=n --arg fx=n --arg dt=0.01
// clperf-sweep: n=4194304..134217728 local=64..1024
__kernel void sb_leapfrog(__global float *px, __global float *vx, __global const float *fx, float dt, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float v = vx[i] + dt * fx[i];
    vx[i] = v;
    px[i] += dt * v;
}
