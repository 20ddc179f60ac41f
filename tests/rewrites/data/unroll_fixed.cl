// A fixed 8-iteration inner loop (polynomial by Horner's rule).
// clperf: --global 1024 --local 64 --arg x=1024 --arg c=8 --arg y=1024
__kernel void horner8(__global const float* x, __constant float* c, __global float* y) {
    int i = get_global_id(0);
    float v = x[i];
    float acc = 0.0f;
    for (int k = 0; k < 8; k++) {
        acc = acc * v + c[k];
    }
    y[i] = acc;
}
