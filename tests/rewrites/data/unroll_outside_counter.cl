// The counter is declared before the loop and used after it.
// clperf: --global 256 --local 64 --arg v=256 --arg out=256
__kernel void outside(__global const float* v, __global float* out) {
    int i = get_global_id(0);
    int k;
    float p = 1.0f;
    for (k = 0; k < 12; ++k)
        p = p * 0.5f + v[i] * (float)k;
    out[i] = p + (float)k;
}
