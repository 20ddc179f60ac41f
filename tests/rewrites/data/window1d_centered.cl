// Centred moving average, radius 4, with the bounds check inside the loop (no padding).
#define R 4
// clperf: --global 512 --local 64 --arg n=509 --arg x=509 --arg y=509
__kernel void moving_avg(__global const float* x, __global float* y, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float s = 0.0f;
    int c = 0;
    for (int k = -R; k <= R; k++) {
        int j = i + k;
        if (j >= 0 && j < n) {
            s += x[j];
            c += 1;
        }
    }
    y[i] = s / (float)c;
}
