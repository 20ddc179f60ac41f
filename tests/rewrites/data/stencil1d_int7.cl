// 7-point integer stencil, radius 3, macro radius, interior only.
#define RAD 3
// clperf: --global 768 --local 64 --arg n=700 --arg src=700 --arg dst=700 --fill src=range:0:100
__kernel void sum7(__global const int* src, __global int* dst, int n) {
    int i = get_global_id(0);
    if (i >= RAD && i < n - RAD) {
        dst[i] = src[i - 3] + src[i - 2] + src[i - 1] + src[i] + src[i + 1] + src[i + 2] + src[i + 3];
    }
}
