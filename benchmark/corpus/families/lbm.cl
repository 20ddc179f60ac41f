// Family lbm: a D2Q9 lattice-Boltzmann step (stream + BGK collide) on a periodic w x h grid: nine
// distribution arrays in structure-of-arrays layout (coalesced), the array-of-structures layout, and a
// push-style variant that streams on write. Memory-heavy: 72 bytes read and written per cell.

__constant int CX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
__constant int CY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
__constant float WT[9] = {4.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 36, 1.0f / 36, 1.0f / 36,
                          1.0f / 36};

// clperf: --global w,h --local 32,4 --arg w=512 --arg h=512 --arg fin=9*w*h --arg fout=9*w*h --arg omega=1.2
// clperf-sweep: w=32..512 h=32..512 local=16..128
__kernel void lbm_soa_pull(__global const float *fin, __global float *fout, float omega, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int cells = w * h;
    float f[9], rho = 0.0f, ux = 0.0f, uy = 0.0f;
    for (int q = 0; q < 9; ++q) {
        int sx = (x - CX[q] + w) % w, sy = (y - CY[q] + h) % h;
        f[q] = fin[q * cells + sy * w + sx];
        rho += f[q];
        ux += CX[q] * f[q];
        uy += CY[q] * f[q];
    }
    ux /= rho;
    uy /= rho;
    float usq = 1.5f * (ux * ux + uy * uy);
    for (int q = 0; q < 9; ++q) {
        float cu = 3.0f * (CX[q] * ux + CY[q] * uy);
        float feq = WT[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
        fout[q * cells + y * w + x] = f[q] + omega * (feq - f[q]);
    }
}

// clperf: --global w,h --local 32,4 --arg w=512 --arg h=512 --arg fin=9*w*h --arg fout=9*w*h --arg omega=1.2
// clperf-sweep: w=32..512 h=32..512 local=16..128
__kernel void lbm_aos_pull(__global const float *fin, __global float *fout, float omega, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    float f[9], rho = 0.0f, ux = 0.0f, uy = 0.0f;
    for (int q = 0; q < 9; ++q) {
        int sx = (x - CX[q] + w) % w, sy = (y - CY[q] + h) % h;
        f[q] = fin[(sy * w + sx) * 9 + q];
        rho += f[q];
        ux += CX[q] * f[q];
        uy += CY[q] * f[q];
    }
    ux /= rho;
    uy /= rho;
    float usq = 1.5f * (ux * ux + uy * uy);
    for (int q = 0; q < 9; ++q) {
        float cu = 3.0f * (CX[q] * ux + CY[q] * uy);
        float feq = WT[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
        fout[(y * w + x) * 9 + q] = f[q] + omega * (feq - f[q]);
    }
}

// clperf: --global w*h --local 128 --arg w=512 --arg h=512 --arg fin=9*w*h --arg fout=9*w*h --arg omega=1.2
// clperf-sweep: w=32..512 h=32..512 local=16..1024
__kernel void lbm_soa_push_flat(__global const float *fin, __global float *fout, float omega, int w, int h)
{
    int c = get_global_id(0);
    int cells = w * h, x = c % w, y = c / w;
    float f[9], rho = 0.0f, ux = 0.0f, uy = 0.0f;
    for (int q = 0; q < 9; ++q) {
        f[q] = fin[q * cells + c];
        rho += f[q];
        ux += CX[q] * f[q];
        uy += CY[q] * f[q];
    }
    ux /= rho;
    uy /= rho;
    float usq = 1.5f * (ux * ux + uy * uy);
    for (int q = 0; q < 9; ++q) {
        float cu = 3.0f * (CX[q] * ux + CY[q] * uy);
        float feq = WT[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
        int dx = (x + CX[q] + w) % w, dy = (y + CY[q] + h) % h;
        fout[q * cells + dy * w + dx] = f[q] + omega * (feq - f[q]);
    }
}
