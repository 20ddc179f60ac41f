// Family grid_large: walks over large 2-D and 3-D grids (64 MiB to 1 GiB): a 7-point stencil with one
// work-item per point, the same stencil marching along z in a 2-D launch (each item keeps its column's
// planes in registers), row sums with one work-item per row (neighbours a row apart) against column sums
// (neighbours side by side), and a naive out-of-place transpose.

// clperf: --global nx,nx,nz --local 32,4,1 --arg nx=256 --arg nz=256 --arg u=nx*nx*nz --arg v=nx*nx*nz
// clperf-sweep: nx=128..1024 nz=64..256
__kernel void gl_stencil7(__global const float *u, __global float *v, int nx, int nz)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int ny = nx;
    int i = (z * ny + y) * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        v[i] = u[i];
        return;
    }
    int sy = nx, sz = nx * ny;
    v[i] = 0.4f * u[i] + 0.1f * (u[i - 1] + u[i + 1] + u[i - sy] + u[i + sy] + u[i - sz] + u[i + sz]);
}

// clperf: --global nx,nx --local 32,8 --arg nx=256 --arg nz=256 --arg u=nx*nx*nz --arg v=nx*nx*nz
// clperf-sweep: nx=128..1024 nz=64..256
__kernel void gl_stencil7_zmarch(__global const float *u, __global float *v, int nx, int nz)
{
    int x = get_global_id(0), y = get_global_id(1);
    int ny = nx;
    int sz = nx * ny;
    int i = y * nx + x;
    bool edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    float below = u[i], here = u[i + sz];
    v[i] = below;
    for (int z = 1; z < nz - 1; ++z) {
        int c = i + z * sz;
        float above = u[c + sz];
        v[c] = edge ? here : 0.4f * here + 0.1f * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx] + below + above);
        below = here;
        here = above;
    }
    v[i + (nz - 1) * sz] = here;
}

// clperf: --global rows --local 128 --arg rows=8192 --arg cols=8192 --arg A=rows*cols --arg s=rows
// clperf-sweep: rows=2048..16384 cols=2048..16384 local=32..512
__kernel void gl_row_sums(__global const float *A, __global float *s, int rows, int cols)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c)
        acc += A[r * cols + c];
    s[r] = acc;
}

// clperf: --global cols --local 128 --arg rows=8192 --arg cols=8192 --arg A=rows*cols --arg s=cols
// clperf-sweep: rows=2048..16384 cols=2048..16384 local=32..512
__kernel void gl_col_sums(__global const float *A, __global float *s, int rows, int cols)
{
    int c = get_global_id(0);
    if (c >= cols)
        return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r)
        acc += A[r * cols + c];
    s[c] = acc;
}

// clperf: --global n,n --local 16,16 --arg n=4096 --arg src=n*n --arg dst=n*n
// clperf-sweep: n=2048..16384
__kernel void gl_transpose_naive(__global const float *src, __global float *dst, int n)
{
    int x = get_global_id(0), y = get_global_id(1);
    dst[x * n + y] = src[y * n + x];
}
