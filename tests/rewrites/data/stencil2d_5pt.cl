// Jacobi step: 5-point 2-D stencil, interior only, index through a local variable.
// clperf: --global 64,48 --local 16,8 --arg w=60 --arg h=45 --arg in=2700 --arg out=2700
__kernel void jacobi(__global const float* in, __global float* out, int w, int h) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    int idx = y * w + x;
    if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
        out[idx] = 0.2f * (in[idx] + in[idx - 1] + in[idx + 1] + in[idx - w] + in[idx + w]);
    }
}
