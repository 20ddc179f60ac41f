// A 2-D five-point stencil, a column sum with a strided walk, and a small fixed-size filter loop.
// Run `clperf analyze examples/stencil.cl` to see how each kernel touches memory.

// clperf: --global w,h --local 16,16 --arg w=2048 --arg h=2048 --arg in=w*h --arg out=w*h
__kernel void blur5(__global const float *in, __global float *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    out[y * w + x] = 0.2f * (in[y * w + x] + in[y * w + x - 1] + in[y * w + x + 1]
                             + in[(y - 1) * w + x] + in[(y + 1) * w + x]);
}

// clperf: --global n --local 256 --arg n=4096 --arg rows=1024 --arg m=n*rows --arg sums=n
__kernel void column_sum(__global const float *m, __global float *sums, int n, int rows)
{
    int col = get_global_id(0);
    float acc = 0.0f;
    for (int r = 0; r < rows; r++)
        acc += m[col * rows + r];
    sums[col] = acc;
}

// clperf: --global n --local 128 --arg n=1048576 --arg x=n+8 --arg y=n
__kernel void fir8(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        acc += x[i + k] * (1.0f / (k + 1));
    y[i] = acc;
}
