// Family stencil3d: 3-D seven-point and 27-point stencils on an n^3 grid: a 3-D launch, a flattened 1-D
// launch, a 2-D launch marching along z with the z-neighbours in registers, and a 16x16 __local tile in xy
// marching along z.

// clperf: --global n,n,n --local 16,4,4 --arg n=64 --arg out=n*n*n --arg in=n*n*n
// clperf-sweep: n=16..128 local=16..64
__kernel void st3_7pt(__global float *out, __global const float *in, int n)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1)
        return;
    int c = (z * n + y) * n + x, p = n * n;
    out[c] = 0.4f * in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - n] + in[c + n] + in[c - p] + in[c + p]);
}

// clperf: --global n,n,n --local 16,4,4 --arg n=64 --arg out=n*n*n --arg in=n*n*n
// clperf-sweep: n=16..128 local=16..64
__kernel void st3_27pt(__global float *out, __global const float *in, int n)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1)
        return;
    float acc = 0.0f;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
                acc += in[((z + dz) * n + (y + dy)) * n + (x + dx)];
    out[(z * n + y) * n + x] = acc * (1.0f / 27.0f);
}

// clperf: --global n*n*n --local 256 --arg n=64 --arg out=n*n*n --arg in=n*n*n
// clperf-sweep: n=16..128 local=16..1024
__kernel void st3_7pt_flat(__global float *out, __global const float *in, int n)
{
    int c = get_global_id(0);
    int x = c % n, y = (c / n) % n, z = c / (n * n);
    if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1)
        return;
    int p = n * n;
    out[c] = 0.4f * in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - n] + in[c + n] + in[c - p] + in[c + p]);
}

// clperf: --global n,n --local 16,16 --arg n=64 --arg out=n*n*n --arg in=n*n*n
// clperf-sweep: n=16..128 local=16..64
__kernel void st3_7pt_zmarch(__global float *out, __global const float *in, int n)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= n - 1 || y >= n - 1)
        return;
    int p = n * n, c = y * n + x;
    float below = in[c], here = in[c + p];
    for (int z = 1; z < n - 1; ++z) {
        int k = z * p + c;
        float above = in[k + p];
        out[k] = 0.4f * here + 0.1f * (in[k - 1] + in[k + 1] + in[k - n] + in[k + n] + below + above);
        below = here;
        here = above;
    }
}

// clperf: --global n,n --local 16,16 --arg n=64 --arg out=n*n*n --arg in=n*n*n
// clperf-sweep: n=16..128
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void st3_7pt_tiled_zmarch(__global float *out, __global const float *in, int n)
{
    __local float t[18][18];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_global_id(0), y = get_global_id(1);
    int p = n * n;
    bool inner = x >= 1 && y >= 1 && x < n - 1 && y < n - 1;
    float below = in[y * n + x], here = in[p + y * n + x];
    for (int z = 1; z < n - 1; ++z) {
        int base = z * p;
        barrier(CLK_LOCAL_MEM_FENCE);
        t[ly + 1][lx + 1] = here;
        if (lx == 0) t[ly + 1][0] = in[base + y * n + max(x - 1, 0)];
        if (lx == 15) t[ly + 1][17] = in[base + y * n + min(x + 1, n - 1)];
        if (ly == 0) t[0][lx + 1] = in[base + max(y - 1, 0) * n + x];
        if (ly == 15) t[17][lx + 1] = in[base + min(y + 1, n - 1) * n + x];
        barrier(CLK_LOCAL_MEM_FENCE);
        float above = in[base + p + y * n + x];
        if (inner)
            out[base + y * n + x] = 0.4f * here + 0.1f * (t[ly + 1][lx] + t[ly + 1][lx + 2] + t[ly][lx + 1]
                                                           + t[ly + 2][lx + 1] + below + above);
        below = here;
        here = above;
    }
}
