// 10 iterations: unrolled by 8 by hand, the remainder loop runs the last 2.
// clperf: --global 512 --local 64 --arg a=5120 --arg out=512 --fill a=range:-50:50
__kernel void rowsum10(__global const int* a, __global int* out) {
    int i = get_global_id(0);
    int s = 0;
    for (int j = 0; j < 10; j++) {
        s += a[i * 10 + j] * (j + 1);
    }
    out[i] = s;
}
