// Sliding window sum of 8 elements (the input is padded by 7).
// clperf: --global 1024 --local 64 --arg n=1000 --arg in=1007 --arg out=1000
__kernel void window8(__global const float* in, __global float* out, int n) {
    int i = get_global_id(0);
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < 8; k++) {
            s += in[i + k];
        }
        out[i] = s;
    }
}
