// Family divergence: branches that split work-items of one group. By parity of the work-item id, by
// its position in a 32-lane block, by group, by data value, and a branch-free select() rewrite of the
// data-dependent one.

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void div_parity(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i];
    if (i & 1) {
        for (int k = 0; k < 16; ++k)
            x = sin(x) + 0.5f;
    } else {
        for (int k = 0; k < 16; ++k)
            x = sqrt(x + 1.0f) * 0.9f;
    }
    out[i] = x;
}

// Half of each 32-lane block works, the other half idles.
// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void div_half_block(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i];
    if ((get_local_id(0) & 31) < 16) {
        for (int k = 0; k < 32; ++k)
            x = fma(x, 1.0001f, 0.5f);
    }
    out[i] = x;
}

// Uniform branch: all items of a group take the same side (no divergence inside a group).
// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void div_by_group(__global float *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i];
    if (get_group_id(0) & 1) {
        for (int k = 0; k < 16; ++k)
            x = sin(x) + 0.5f;
    } else {
        for (int k = 0; k < 16; ++k)
            x = sqrt(x + 1.0f) * 0.9f;
    }
    out[i] = x;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n --arg cut=0.5
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void div_by_data(__global float *out, __global const float *in, float cut, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i];
    if (x > cut) {
        for (int k = 0; k < 16; ++k)
            x = sin(x) + 0.5f;
    } else {
        x = x * 2.0f;
    }
    out[i] = x;
}

// clperf: --global n --local 256 --arg n=1048576 --arg out=n --arg in=n --arg cut=0.5
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void div_select(__global float *out, __global const float *in, float cut, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = in[i], y = x;
    for (int k = 0; k < 16; ++k)
        y = sin(y) + 0.5f;
    out[i] = select(x * 2.0f, y, (int)(x > cut));
}

// A switch on the data: four different code paths.
// clperf: --global n --local 128 --arg n=1048576 --arg out=n --arg in=n
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void div_switch4(__global float *out, __global const int *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = (float)i;
    switch (in[i] & 3) {
    case 0: x = sqrt(x); break;
    case 1: x = exp(x * 1e-6f); break;
    case 2: x = sin(x) * cos(x); break;
    default: x = x * 0.5f; break;
    }
    out[i] = x;
}
