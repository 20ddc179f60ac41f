// A vertical-only 5-point stencil (radius 2 along y) on a non-square image, zero outside.
// clperf: --global 40,24 --local 8,4 --arg w=37 --arg h=23 --arg a=851 --arg b=851
__kernel void vblur(__global const float* a, __global float* b, int w, int h) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h) return;
    float s = a[y * w + x];
    if (y >= 2) s += a[(y - 2) * w + x];
    if (y >= 1) s += a[(y - 1) * w + x];
    if (y + 1 < h) s += a[(y + 1) * w + x];
    if (y + 2 < h) s += a[(y + 2) * w + x];
    b[y * w + x] = s / 5.0f;
}
