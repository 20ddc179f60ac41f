// Reads a scalar buffer and a float4 buffer that the tests fill from .npy files.
__kernel void scale(__global const float* x, __global const float4* v, __global float* y, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = 2.0f * x[i] + v[i].x + v[i].w;
}
