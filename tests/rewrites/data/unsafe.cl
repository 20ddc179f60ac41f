// Rewrites that must be refused (shown disabled with the reason).
// clperf: --global 256 --local 64 --arg a=258 --arg n=256
__kernel void inplace(__global float* a, int n) {
    int i = get_global_id(0);
    if (i > 0 && i < n - 1) {
        a[i] = a[i - 1] + a[i] + a[i + 1];
    }
}

// clperf: --global 256 --local 64 --arg v=256 --arg out=256 --arg lim=8
__kernel void early_break(__global const float* v, __global float* out, int lim) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < 8; k++) {
        if (v[i] * k > 3.0f) break;
        s += v[i];
    }
    out[i] = s;
}

// clperf: --global 256 --local 64 --arg v=256 --arg out=256
__kernel void moving_bound(__global const float* v, __global float* out) {
    int i = get_global_id(0);
    float s = 0.0f;
    int n = 8;
    for (int k = 0; k < n; k++) {
        s += v[i];
        if (s > 10.0f) n = 4;
    }
    out[i] = s;
}
