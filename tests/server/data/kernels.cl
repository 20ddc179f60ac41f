// Fixture for the language-server tests: one kernel per view (lines are referenced by the tests).

// clperf: --global n --local 64 --arg n=65536 --arg in=n*32 --arg out=n
__kernel void strided(__global const float *in, __global float *out, int n)
{
    int i = get_global_id(0);
    out[i] = in[i * 32];
}

// clperf: --global n --local 64 --arg n=65536 --arg x=n+8 --arg y=n
__kernel void fir8(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        acc += x[i + k] * (1.0f / (k + 1));
    y[i] = acc;
}

__kernel void scale(__global float *a, float s)
{
    int i = get_global_id(0);
    a[i] = a[i] * s;
}
