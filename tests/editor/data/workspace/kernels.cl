// Two small kernels for the editor end-to-end test: launches are small so a PoCL benchmark takes seconds.

// clperf: --global n --local 64 --arg n=65536 --arg x=n+8 --arg y=n
__kernel void fir8(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        acc += x[i + k] * (1.0f / (k + 1));
    y[i] = acc;
}

// clperf: --global n --local 64 --arg n=1024 --arg rows=256 --arg m=n*rows --arg sums=n
__kernel void column_sum(__global const float *m, __global float *sums, int n, int rows)
{
    int col = get_global_id(0);
    float acc = 0.0f;
    for (int r = 0; r < rows; r++)
        acc += m[col * rows + r];
    sums[col] = acc;
}
